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
        """Time-ordered ids (the millisecond in 11 hex digits, then 4 random ones), random tokens (32 hex
        digits), and the real time. Games started close together get ids close together, so their moves
        land in the same few pages of the database's index: a commit writes far fewer pages."""
        return cls(_time_ordered_id, time.time, lambda: secrets.token_hex(16))

    @classmethod
    def fixed(cls, wall_clock: float = 1_700_000_000.0, first: int = 1) -> Env:
        """Counting ids (``g000001``, ... from ``first``) and tokens, and a wall clock that stands still: for
        tests (a restarted server in a test counts on from where the first one stopped)."""
        ids = itertools.count(first)
        tokens = itertools.count(first)
        return cls(lambda: f"g{next(ids):06d}", lambda: wall_clock, lambda: f"t{next(tokens):031d}")


def _time_ordered_id() -> str:
    return f"{int(time.time() * 1000):011x}{secrets.token_hex(2)}"
