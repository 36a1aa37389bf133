"""Plyhall's folder in the user's cache directory, shared by what keeps files there (Connect Four's opening table,
the compiled core of ``plyhall compile``)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Plyhall's folder in the user's cache directory: ``$XDG_CACHE_HOME/plyhall``, else ``~/.cache/plyhall``."""
    root = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(root) if os.path.isabs(root) else Path.home() / ".cache") / "plyhall"
