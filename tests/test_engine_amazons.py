"""The compiled Amazons engine against the reference rules, and the master bot's play."""

from __future__ import annotations

import pickle
import random
from functools import cache

import numpy as np
import pytest

from bots.base import TimeBudget
from bots.engine.amazons.endgame import endgame_move, game_result, race
from bots.engine.amazons.evaluation import child_value, generate_moves, quick_score
from bots.engine.amazons.master import AmazonsMaster
from bots.engine.amazons.position import (
    MAX_MOVES,
    NEIGHBOUR,
    PLY,
    QUEENS,
    TO_MOVE,
    from_reference,
    from_state,
    key,
    legal_moves,
    play,
    rules_result,
    set_widths,
    to_reference,
    undo,
)
from bots.engine.search import LOSS, RUNNING, WIN
from protocol.games.amazons import AMAZONS, AmazonsState
from tests.engine_helpers import engine_moves, random_game_states

GAME = AMAZONS


def set_up_states(count: int, seed: int) -> list[AmazonsState]:
    """Random boards: queens anywhere, arrows on a random share of the other squares."""
    rng = random.Random(seed)
    states = []
    for _ in range(count):
        squares = rng.sample(range(100), 8)
        density = rng.uniform(0.85, 0.97) if rng.random() < 0.3 else rng.random() * 0.8
        board = [3 if rng.random() < density else 0 for _ in range(100)]
        for i, square in enumerate(squares):
            board[square] = 1 + i // 4
        states.append(GAME.decode_state({"board": [board[r * 10 : r * 10 + 10] for r in range(10)],
                                         "to_move": rng.randrange(2)}))
    return states


PLAYED = random_game_states(GAME, 4, seed=21, finished=False)
SET_UP = set_up_states(300, seed=22)



def test_enough_positions() -> None:
    assert len(PLAYED) + len(SET_UP) >= 500
    assert sum(s.result is not None for s in SET_UP) >= 5


@pytest.mark.parametrize("states", [PLAYED, SET_UP], ids=["played", "set-up"])
def test_moves_and_outcomes_match_the_reference(states: list[AmazonsState]) -> None:
    rng = random.Random(6)
    for state in states:
        array = from_state(state)
        if state.result is not None:
            assert rules_result(array) == LOSS and engine_moves(array, legal_moves, MAX_MOVES) == []
            continue
        assert rules_result(array) == RUNNING
        codes = engine_moves(array, legal_moves, MAX_MOVES)
        reference = GAME.legal_moves(state)
        assert len(codes) == len(reference)
        assert {to_reference(code) for code in codes} == set(reference)
        before, position = array.copy(), key(array)
        for code in rng.sample(codes, min(len(codes), 8)):
            move = to_reference(code)
            assert from_reference(move) == code
            after = GAME.apply(state, move)
            play(array, code)
            assert tuple(array[:100]) == after.board and array[TO_MOVE] == after.to_move
            for seat in (0, 1):
                queens = {int(q) for q in array[QUEENS + 4 * seat : QUEENS + 4 * seat + 4]}
                assert queens == {sq for sq in range(100) if after.board[sq] == seat + 1}
            assert (rules_result(array) == LOSS) == (after.result is not None)
            undo(array, code)
            assert np.array_equal(array, before) and key(array) == position


def test_keys_tell_positions_and_sides_apart() -> None:
    keys = {}
    for state in PLAYED + SET_UP:
        keys.setdefault(key(from_state(state)), set()).add((state.board, state.to_move))
    assert all(len(positions) == 1 for positions in keys.values())


@pytest.mark.parametrize("width", [1, 7, 30])
def test_below_the_root_the_search_keeps_the_best_moves_by_the_quick_score(width: int) -> None:
    for state in PLAYED[::9] + SET_UP[::7]:
        if state.result is not None:
            continue
        array = from_state(state)
        set_widths(array, 0, (width,))
        everything = engine_moves(array, legal_moves, MAX_MOVES)
        array[PLY] = 1  # as below the root
        kept = engine_moves(array, generate_moves, MAX_MOVES)
        scores = sorted((quick_score(array, code) for code in everything), reverse=True)
        assert len(kept) == min(width, len(everything)) and set(kept) <= set(everything)
        assert [quick_score(array, code) for code in kept] == scores[: len(kept)]


def test_a_narrowed_root_keeps_the_moves_with_the_best_evaluation() -> None:
    state = PLAYED[30]
    array = from_state(state)
    set_widths(array, 5, (4,))
    kept = engine_moves(array, generate_moves, MAX_MOVES)
    values = sorted((child_value(array, code) for code in engine_moves(array, legal_moves, MAX_MOVES)), reverse=True)
    assert sorted((child_value(array, code) for code in kept), reverse=True) == values[:5]


# --- Separated endgames -------------------------------------------------------------------------


def small_endgames(count: int, seed: int) -> list[AmazonsState]:
    """Separated positions with a dozen empty squares or fewer: arrows everywhere else."""
    rng = random.Random(seed)
    states: list[AmazonsState] = []
    while len(states) < count:
        board = [3] * 100
        squares = rng.sample(range(100), 8)
        for i, square in enumerate(squares):
            board[square] = 1 + i // 4
        for queen in squares[:: rng.choice((2, 3, 4))]:  # a few queens get room to move
            here = queen
            for _ in range(rng.randrange(1, 6)):
                here = rng.choice(NEIGHBOUR[here][NEIGHBOUR[here] >= 0])
                if board[here] == 3:
                    board[here] = 0
        if board.count(0) > 12:
            continue
        state = GAME.decode_state({"board": [board[r * 10 : r * 10 + 10] for r in range(10)],
                                   "to_move": rng.randrange(2)})
        if state.result is None and race(from_state(state))[0]:
            states.append(state)
    return states


@cache
def mover_wins(state: AmazonsState) -> bool:
    """Exact: the side to move wins (plain exhaustive search on the reference rules)."""
    if state.result is not None:
        return False
    return any(not mover_wins(GAME.apply(state, move)) for move in GAME.legal_moves(state))


ENDGAMES = small_endgames(150, seed=23)


def test_separated_endgame_verdicts_are_exact() -> None:
    decided = 0
    for state in ENDGAMES:
        array = from_state(state)
        separated, my_low, my_high, their_low, their_high = race(array)
        assert separated and my_low <= my_high and their_low <= their_high
        verdict = game_result(array)
        if verdict != RUNNING:
            decided += 1
            assert (verdict == WIN) == mover_wins(state), state
        move = endgame_move(array)
        if move >= 0:
            assert verdict == WIN
            after = GAME.apply(state, to_reference(move))
            assert not mover_wins(after), state  # the walk's first step keeps the win
    assert decided >= 50


NODE_LIMIT = 20_000  # per search: the moves checked here must not depend on how loaded the machine is


def test_master_plays_separated_endgames_perfectly_when_they_are_won() -> None:
    master = AmazonsMaster(seed=1, node_limit=NODE_LIMIT)
    checked = 0
    for state in ENDGAMES[:60]:
        if not mover_wins(state):
            continue
        checked += 1
        move = master.choose(state)
        assert not mover_wins(GAME.apply(state, move)), state
    assert checked >= 10


KEEP_THE_BIG_ROOM = GAME.from_picture("""
    10  B B B x x x x W W W
     9  x x x x x x x x x x
     8  x x x x x x x x x x
     7  x x x x x x x x x x
     6  x x x . . x x x x x
     5  . . B . . . . . . .
     4  x x x x x x x x x x
     3  x x x x x x x x x x
     2  . . W . . . x x x x
     1  x x x x x x x x x x
        a b c d e f g h i j
""", to_move=0)
"""Black on c5, with a5 b5 to its left and d5-j5 to its right (d6 e6 are part of that big room);
white on c2 with five squares."""


def test_master_keeps_the_bigger_room() -> None:
    """Black's queen on c5 stands between two squares to its left and nine to its right; white has
    five. Walling itself in on the left (arrow back on c5) loses the race; anything keeping the
    right-hand room wins it. The turn counts do not settle it at first (the filling walk would step
    left), so the search has to."""
    state = KEEP_THE_BIG_ROOM
    array = from_state(state)
    assert game_result(array) == RUNNING and endgame_move(array) < 0
    master = AmazonsMaster(seed=2, node_limit=NODE_LIMIT)
    move = master.choose(state)
    after = GAME.apply(state, move)
    separated, _, _, _, black_room = race(from_state(after))
    assert separated and black_room >= 8, move
    opponent = AmazonsMaster(seed=3, node_limit=NODE_LIMIT)
    while after.result is None:
        bot = master if after.to_move == 0 else opponent
        after = GAME.apply(after, bot.choose(after))
    assert after.result.winner == 0


# --- The master bot -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def timed_master() -> AmazonsMaster:
    return AmazonsMaster(seed=1)


def test_master_takes_a_win_in_one() -> None:
    # White's queens have one free neighbour between them (i8): black shoots an arrow onto it.
    state = GAME.from_picture("""
        10  x W x x x x x x x x
         9  x x x x x x x W x .
         8  . . . . . . x x . .
         7  . . . . . . . . . .
         6  B . . . . . . . . .
         5  . . . . . . . . . B
         4  . . . . . . . . . .
         3  . . . . B . . . . .
         2  x x x x . . . . . .
         1  W x W x . . . B . .
            a b c d e f g h i j
    """, to_move=0)
    move = AmazonsMaster(seed=1, node_limit=NODE_LIMIT).choose(state)
    after = GAME.apply(state, move)
    assert after.result is not None and after.result.winner == 0


@pytest.mark.parametrize("index", [0, 1, 40, 80, 120])
def test_master_answers_legally_with_a_tiny_budget(timed_master: AmazonsMaster, index: int) -> None:
    state = PLAYED[min(index, len(PLAYED) - 1)]
    move = timed_master.choose(state, TimeBudget(per_move=0.001))
    assert move in GAME.legal_moves(state)


def test_master_survives_pickling(timed_master: AmazonsMaster) -> None:
    copy = pickle.loads(pickle.dumps(timed_master))
    state = PLAYED[10]
    assert copy.choose(state, TimeBudget(per_move=0.05)) in GAME.legal_moves(state)
