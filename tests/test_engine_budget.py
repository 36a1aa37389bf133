"""How long the compiled engines think, given a bot's time budget."""

from __future__ import annotations

import pytest

from bots.base import MIN_THINK_SECONDS, TimeBudget
from bots.engine.budget import MARGIN, thinking_seconds


def test_without_a_budget_the_default_applies() -> None:
    assert thinking_seconds(None, 1.0) == 1.0
    assert thinking_seconds(TimeBudget(), 2.5) == 2.5


def test_a_short_per_move_limit_keeps_a_quarter_back() -> None:
    assert thinking_seconds(TimeBudget(per_move=0.2), 1.0) == pytest.approx(0.15)
    assert thinking_seconds(TimeBudget(per_move=5.0), 1.0) == pytest.approx(5.0 - MARGIN)


def test_overshoot_comes_off_but_never_below_the_least_time() -> None:
    assert thinking_seconds(TimeBudget(per_move=0.2), 1.0, overshoot=0.05) == pytest.approx(0.10)
    assert thinking_seconds(TimeBudget(per_move=0.1), 1.0, overshoot=0.05) == pytest.approx(MIN_THINK_SECONDS)
    # the least time is never the whole of a tiny clock (it was 0.05 s of a 0.01 s one): its limit less the margin
    assert thinking_seconds(TimeBudget(per_move=0.01), 1.0, overshoot=0.05) == pytest.approx(0.0075)


def test_a_clock_is_shared_over_the_moves_to_go() -> None:
    seconds = thinking_seconds(TimeBudget(remaining=60.0), 1.0)
    assert MIN_THINK_SECONDS <= seconds <= 60.0 - MARGIN
