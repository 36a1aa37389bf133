"""What the state machines take from the outside world: fresh ids and the wall-clock time.

The hall and its rooms never call ``secrets`` or ``time`` themselves; the I/O layer passes
an :class:`Env` (``Env.system()``), and tests pass one whose ids and times are predictable
(``Env.fixed()``). The *monotonic* time that drives clocks is passed to every call as ``now``.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Env:
    """Sources of ids and wall-clock time (seconds since the epoch, for records)."""

    new_id: Callable[[], str]
    wall_clock: Callable[[], float]
    new_token: Callable[[], str]

    @classmethod
    def system(cls) -> Env:
        """Random ids (12 hex digits) and tokens (32), and the real time."""
        return cls(lambda: secrets.token_hex(6), time.time, lambda: secrets.token_hex(16))

    @classmethod
    def fixed(cls, wall_clock: float = 1_700_000_000.0, first: int = 1) -> Env:
        """Counting ids (``g000001``, ... from ``first``) and tokens, and a wall clock that stands still: for
        tests (a restarted server in a test counts on from where the first one stopped)."""
        ids = itertools.count(first)
        tokens = itertools.count(first)
        return cls(lambda: f"g{next(ids):06d}", lambda: wall_clock, lambda: f"t{next(tokens):031d}")
