"""The compiled Connect Four engine against the reference rules, the public test sets, and play."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bots.base import TimeBudget
from bots.engine.connect4.evaluation import generate_moves, search
from bots.engine.connect4.master import Connect4Master
from bots.engine.connect4.position import (
    BOARD,
    CELLS,
    column_mask,
    drop,
    from_moves,
    from_state,
    game_result,
    has_four,
    key,
    legal_columns,
    non_losing_moves,
    play,
    playable,
    to_drop,
    undo,
    winning_squares,
)
from bots.engine.connect4.solver import (
    SolverTables,
    claimeven,
    claimeven_reply,
    new_solver_tables,
    odd_threat_reply,
    odd_threat_wins,
    solve,
    solve_column,
)
from bots.engine.search import DRAW, LOSS, MATE_BOUND, NO_MOVE, RUNNING, Searcher
from protocol.games import GAMES
from protocol.games.connect4 import C4State, Drop
from tests.engine_helpers import random_game_states

GAME = GAMES["connect4"]
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "connect4"


def bitboards(state: C4State) -> tuple[np.uint64, np.uint64, int]:
    position, mask, stones = from_state(state)
    return np.uint64(position), np.uint64(mask), stones


# --- Rules agree with the reference -------------------------------------------------------------


def test_moves_and_outcomes_agree_with_reference_rules() -> None:
    positions = random_game_states(GAME, 400, seed=1)
    assert len(positions) > 5000
    for state in positions:
        position, mask, stones = bitboards(state)
        assert stones == sum(1 for cell in state.board if cell)
        outcome = GAME.outcome(state)
        opponent_won = bool(has_four(position ^ mask))
        assert opponent_won == (outcome is not None and outcome.winner is not None)
        assert not has_four(position)  # the side to move never has four already
        board = np.array([position, mask, stones], np.uint64)
        if outcome is None:
            expected_result = RUNNING
        else:
            expected_result = DRAW if outcome.is_draw else LOSS
        assert game_result(board) == expected_result
        if outcome is not None:
            continue
        columns = legal_columns(int(mask))
        assert [Drop(c) for c in columns] == GAME.legal_moves(state)
        for column in columns:
            after = GAME.apply(state, to_drop(column))
            child = drop(position, mask, column)
            assert (int(child[0]), int(child[1]), stones + 1) == from_state(after)
            # a winning square of the mover is exactly a column that wins at once
            wins_here = bool(winning_squares(position, mask) & playable(mask)
                             & column_mask(column))
            assert wins_here == (GAME.outcome(after) is not None and GAME.outcome(after).winner is not None)


def test_search_hooks_play_and_undo_restore_the_position() -> None:
    moves = np.zeros(7, np.int32)
    for state in random_game_states(GAME, 60, seed=2):
        if GAME.outcome(state) is not None:
            continue
        board = np.array(from_state(state), np.uint64)
        before = board.copy()
        n = generate_moves(board, moves)
        legal = {move.column for move in GAME.legal_moves(state)}
        assert 0 < n and set(moves[:n]) <= legal
        for column in moves[:n]:
            play(board, column)
            assert tuple(int(v) for v in board) == from_state(GAME.apply(state, Drop(int(column))))
            undo(board, column)
            assert np.array_equal(board, before)
        assert key(board) == before[0] + before[1]


def test_from_moves_matches_the_reference() -> None:
    state = GAME.start(*"4453")
    assert from_moves("4453") == from_state(state)
    with pytest.raises(ValueError, match="full"):
        from_moves("1111111")
    with pytest.raises(ValueError, match="not a column"):
        from_moves("48")


# --- The solver is exact ------------------------------------------------------------------------


def sample(name: str, count: int) -> list[tuple[str, int]]:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"test set {path} is absent (the shared data directory holds the public sets)")
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    step = max(1, len(lines) // count)
    return [(moves, int(score)) for moves, score in lines[::step][:count]]


@pytest.fixture(scope="module")
def solver_tables() -> SolverTables:
    return new_solver_tables()


@pytest.mark.parametrize("set_name", ["Test_L3_R1", "Test_L2_R1"])
def test_solver_scores_match_the_published_sets(set_name: str, solver_tables: SolverTables) -> None:
    for moves, expected in sample(set_name, 40):
        position, mask, stones = from_moves(moves)
        score, solved = solve(np.uint64(position), np.uint64(mask), stones, solver_tables, np.inf)
        assert solved and score == expected, moves


def test_a_small_table_solves_the_same_and_a_bad_size_is_refused() -> None:
    """The table holds whole keys, so a table far too small for the search (many positions overwritten) still
    gives exact scores, only slower; its size must be a power of two (slots come from the hash's top bits)."""
    small = new_solver_tables(size=1 << 10)
    for moves, expected in sample("Test_L2_R1", 10):
        position, mask, stones = from_moves(moves)
        assert solve(np.uint64(position), np.uint64(mask), stones, small, np.inf) == (expected, True), moves
    for size in (0, 3, 1000):
        with pytest.raises(ValueError, match=f"power of two, not {size}"):
            new_solver_tables(size=size)


@pytest.mark.parametrize("set_name", ["Test_L3_R1", "Test_L2_R2"])
def test_claimeven_bounds_agree_with_the_published_scores(set_name: str) -> None:
    """Where the second player's claimeven leaves the first player to move no four, the first cannot win; where it
    also completes a four of the second player's, the first loses; a move of the second player after which that
    holds for the first bounds the second's score from below. Checked on every position of the sets, and the
    rules must decide some (else they would prune nothing). So must the first player's odd threat in a
    column of an odd number of empty squares (a win), with the second player to move or after a move of the
    first's."""
    bounded = lost = replied = odd_wins = 0
    for moves, expected in sample(set_name, 1000):
        position, mask, stones = (np.uint64(value) for value in from_moves(moves))
        safe = non_losing_moves(position, mask)
        if stones % 2:  # the second player to move: a bound from the claimeven its moves leave the first
            bound = claimeven_reply(position, mask, safe)
            assert bound <= expected, f"{moves}: claimeven after a move gives at least {bound}, the set {expected}"
            replied += bound > -CELLS
            if odd_threat_wins(position, mask):
                odd_wins += 1
                assert expected < 0, f"{moves}: the first player's odd threat wins, the set says {expected}"
            continue
        if safe and odd_threat_reply(position, mask, safe):
            odd_wins += 1
            assert expected > 0, f"{moves}: a move makes an odd threat that wins, the set says {expected}"
        most, sure = claimeven(position, mask)
        assert int(most) & int(sure) == 0 and int(most) | int(sure) == int(BOARD), moves  # every square, once
        if not has_four(most):
            bounded += 1
            assert expected <= 0, f"{moves}: claimeven says the first player cannot win, the set says {expected}"
            if has_four(sure):
                lost += 1
                assert expected < 0, f"{moves}: claimeven says the first player loses, the set says {expected}"
    assert bounded > 0 and replied > 0 and odd_wins > 0 and (lost > 0 or set_name != "Test_L3_R1"), (
        bounded, lost, replied, odd_wins)


def test_solver_best_column_keeps_the_score(solver_tables: SolverTables) -> None:
    for moves, expected in sample("Test_L2_R1", 12):
        position, mask, stones = from_moves(moves)
        column, score, solved = solve_column(
            np.uint64(position), np.uint64(mask), stones, solver_tables, np.inf
        )
        assert solved and score == expected
        state = GAME.start(*moves)
        after = GAME.apply(state, to_drop(column))
        if GAME.outcome(after) is not None:
            assert GAME.outcome(after).winner == state.to_move and score == (43 - stones) // 2
            continue
        child = from_state(after)
        reply, solved = solve(np.uint64(child[0]), np.uint64(child[1]), child[2], solver_tables, np.inf)
        assert solved and reply == -expected, moves


def test_solver_gives_up_at_the_deadline(solver_tables: SolverTables) -> None:
    column, _, solved = solve_column(np.uint64(0), np.uint64(0), 0, solver_tables, 0.0)
    assert not solved


# --- The shared search, compiled for Connect Four -------------------------------------------------


def test_search_finds_a_forced_win_and_stops_on_time() -> None:
    searcher = Searcher(search, max_moves=7, move_space=7, table_bits=16)
    # X holds b1 c1: d1 makes two open ends (a1 and e1), a win at X's next stone whatever O does.
    state = GAME.start(*"2233")
    board = np.array(from_state(state), np.uint64)
    result = searcher.think(board, math.inf, max_depth=7)
    assert result.move == 3 and result.score > MATE_BOUND
    assert np.array_equal(board, np.array(from_state(state), np.uint64))  # restored

    late = searcher.think(np.array(from_state(GAME.initial_state()), np.uint64), 0.0)
    assert late.move != NO_MOVE and 0 <= late.move < 7


# --- The master bot -----------------------------------------------------------------------------


NODE_LIMIT = 500_000  # per search: the moves checked here must not depend on how loaded the machine is


@pytest.fixture
def master() -> Connect4Master:
    return Connect4Master("connect4", "master", seed=1, node_limit=NODE_LIMIT)


WARM_UP_CHECK = """
from bots.base import TimeBudget
from bots.engine.connect4 import master, solver
from bots.engine.search import clock
from protocol.games import GAMES

master.warm_up()
jitted = (solver.solve_column, solver.held_floor, solver.solve, solver.solver_negamax, solver.holding_column)
before = [list(function.signatures) for function in jitted]
# the clock's object-mode block (numba lifts it into a function of its own, compiled at its first call)
print(sorted(len(lifted.overloads) for result in clock.overloads.values() for lifted in result.lifted))
game = GAMES["connect4"]
state = game.initial_state()
for char in "77652136665472176617":  # 20 stones: held, weak and exact steps all run
    state = game.apply(state, game.parse_move(char, state))
bot = master.Connect4Master("connect4", "master", seed=1)
bot.new_game()
bot.choose(state, TimeBudget(per_move=30))
assert bot.stats().get("solved"), bot.stats()
print([list(function.signatures)[len(old):] for function, old in zip(jitted, before)])
"""


def test_warm_up_readies_every_signature_of_masters_solve() -> None:
    """A fresh master's first solve from 12 stones on must not load or compile anything: once it did, the clock's
    object-mode block (compiled at the clock's first reading, 4,096 nodes into the first deep solve: about 60 ms
    of a 0.1 s move) and the solver's specialization for the weak and exact steps (which pass their bounds; the
    warm-up did not: a few ms). Run in a fresh process, where nothing else has called the solver."""
    done = subprocess.run([sys.executable, "-c", WARM_UP_CHECK], capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    clock_ready, added = done.stdout.strip().splitlines()[-2:]
    assert clock_ready == "[1]", done.stdout  # one signature, its block compiled
    assert added == "[[], [], [], [], []]", done.stdout  # no signature added by master's move


def test_master_takes_a_win_in_one(master: Connect4Master) -> None:
    state = GAME.start(*"445566")  # X holds d1 e1 f1: c1 or g1 wins
    move = master.choose(state)
    after = GAME.apply(state, move)
    assert GAME.outcome(after) is not None and GAME.outcome(after).winner == state.to_move


def test_master_blocks_a_loss_in_one(master: Connect4Master) -> None:
    state = GAME.start(*"171727")  # X: a1 a2 b1, O: g1 g2 g3; X must block g4
    move = master.choose(state)
    assert move == Drop(6)


def test_master_opens_in_the_centre_and_solves_the_endgame(master: Connect4Master) -> None:
    assert master.choose(GAME.initial_state(first=1)) == Drop(3)
    moves, score = sample("Test_L3_R1", 1)[0]
    state = GAME.start(*moves)
    move = master.choose(state)
    assert master.stats()["solved"] and master.stats()["score"] == score
    assert move in GAME.legal_moves(state)


def exact_value_of_move(moves: str, column: int, solver_tables: SolverTables) -> int:
    """The exact score, for the side to move after ``moves``, of dropping in ``column`` (0-based)."""
    state = GAME.start(*moves)
    after = GAME.apply(state, Drop(column))
    if GAME.outcome(after) is not None:  # a win at once: the winner's stones so far decide the score
        return (CELLS + 1 - len(moves)) // 2
    position, mask, stones = from_moves(moves + str(column + 1))
    score, solved = solve(np.uint64(position), np.uint64(mask), stones, solver_tables, np.inf)
    assert solved
    return -score


def test_master_wins_fastest_where_slower_wins_exist(master: Connect4Master, solver_tables: SolverTables) -> None:
    """In won positions where the weak solve's column wins too, but later, master plays a fastest win."""
    checked = 0
    for moves, score in sample("Test_L2_R1", 100):
        if score <= 0:
            continue
        position, mask, stones = from_moves(moves)
        weak, _, solved = solve_column(np.uint64(position), np.uint64(mask), stones, solver_tables, np.inf, True)
        if not solved or exact_value_of_move(moves, weak, solver_tables) == score:
            continue  # the weak solve's column is a fastest win already: nothing to tell apart
        move = master.choose(GAME.start(*moves))
        assert exact_value_of_move(moves, move.column, solver_tables) == score, moves
        checked += 1
    assert checked >= 3


def test_master_answers_a_tiny_budget_with_a_legal_move() -> None:
    master = Connect4Master("connect4", "master", seed=1)
    state = GAME.start(*"4")
    move = master.choose(state, TimeBudget(per_move=0.05 + 0.2, remaining=10.0))
    assert move in GAME.legal_moves(state)
    move = master.choose(GAME.initial_state(), TimeBudget(remaining=0.01))
    assert move in GAME.legal_moves(GAME.initial_state())


def test_master_survives_pickling() -> None:
    bot = Connect4Master("connect4", "master", seed=3, node_limit=NODE_LIMIT)
    copy = pickle.loads(pickle.dumps(bot))
    state = GAME.start(*sample("Test_L2_R1", 1)[0][0])  # past the openings: the solver searches
    assert copy.choose(state, TimeBudget(per_move=0.3)) in GAME.legal_moves(state)
    assert copy.stats()["nodes"] > 0
    assert copy.node_limit == NODE_LIMIT


def test_weak_solver_column_keeps_the_result(solver_tables: SolverTables) -> None:
    """``weak``: a won or drawn position is solved and its column keeps that result
    (a lost one may come back unsolved, which sends the bot to its search)."""
    for moves, expected in sample("Test_L2_R1", 12):
        position, mask, stones = from_moves(moves)
        column, score, solved = solve_column(
            np.uint64(position), np.uint64(mask), stones, solver_tables, np.inf, True
        )
        if expected < 0:
            assert not solved or score < 0, moves
            continue
        assert solved and np.sign(score) == np.sign(expected), moves
        after = GAME.apply(GAME.start(*moves), to_drop(column))
        if GAME.outcome(after) is not None:
            continue  # an immediate win
        child = from_state(after)
        reply, solved = solve(np.uint64(child[0]), np.uint64(child[1]), child[2], solver_tables, np.inf)
        assert solved and np.sign(reply) == -np.sign(expected), moves
