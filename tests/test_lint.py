"""The code stays `ruff check` clean (the project's lint settings are in pyproject.toml), and no function of
``protocol``, ``server`` or ``client`` is more complex than McCabe 12."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    out = subprocess.run([ruff, "check", "--no-cache", "protocol", "server", "client", "bots", "tests", "benchmarks",
                          "docs"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_no_function_of_protocol_server_or_client_is_more_complex_than_12():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    out = subprocess.run([ruff, "check", "--no-cache", "--select", "C901", "protocol", "server", "client"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "max-complexity = 12" in (ROOT / "pyproject.toml").read_text(), out.stdout
