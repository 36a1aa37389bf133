"""The values a move makes whose ``__init__`` is written out for the compiled core (``plyhall.compiled``): Connect
Four's position, a move's record and ``MovePlayed`` behave as the dataclasses they are, every field set, equal by
value, hashable where frozen, unchangeable where frozen, and copied and pickled whole, as Python and as compiled
(``tests/test_compiled.py`` runs this module against the build)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from protocol.games.base import Outcome
from protocol.games.connect4 import C4State
from server.storage.records import MovePlayed, MoveRecord

VALUES: list[Any] = [
    C4State(tuple(range(3)) * 14, 1, Outcome(0, "four in a row")),
    C4State(board=(0,) * 42, to_move=0),
    MoveRecord(3, 1, "4", 250, [12.5, None]),
    MovePlayed("g-1", MoveRecord(1, 0, "d", 0, [None, None])),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda value: type(value).__name__)
def test_every_field_is_set_and_the_value_survives_a_copy_and_pickle(value: Any) -> None:
    fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    assert dataclasses.replace(value) == value
    assert type(value)(**fields) == value
    for twin in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert type(twin) is type(value) and twin == value
        assert {name: getattr(twin, name) for name in fields} == fields


def test_the_frozen_ones_stay_frozen_and_hash_by_value() -> None:
    position = C4State((0,) * 42, 0)
    played = MovePlayed("g-1", MoveRecord(1, 0, "d", 0, [None, None]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        position.to_move = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        played.game_id = "g-2"  # type: ignore[misc]
    assert hash(position) == hash(C4State((0,) * 42, 0, Outcome(None, "not compared")))
    assert position.result is None and C4State((0,) * 42, 0) == position


def test_each_module_knows_whether_it_runs_compiled() -> None:
    """The frozen values store their fields natively only where their module is compiled (an extension module's
    file), and through ``object.__setattr__`` where it is Python: a mistake either way raises or slows every move."""
    from protocol.games import connect4
    from server.storage import records
    for module in (connect4, records):
        assert module.NATIVE is (not str(module.__file__).endswith(".py")), module.__file__
