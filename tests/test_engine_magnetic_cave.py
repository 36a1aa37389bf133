"""The compiled Magnetic Cave engine against the reference rules, and the ``master`` bot."""

from __future__ import annotations

import pickle
import random
from collections.abc import Iterator

import numpy as np
import pytest

from bots import TimeBudget
from bots.engine.magnetic_cave.evaluation import (
    DIRECTION_QUARTERS,
    FOUR_CHAIN,
    LATE_FROM,
    LATE_RAMP,
    LINE_POINTS,
    WINS_BY_FOURS,
    evaluate,
    evaluate_phase,
    four_makers,
    generate_moves,
    line_points,
    search,
    wins_by_fours,
    zugzwang,
)
from bots.engine.magnetic_cave.master import MagneticCaveMaster
from bots.engine.magnetic_cave.position import (
    MAX_MOVES,
    MOVE_SPACE,
    from_state,
    game_result,
    key,
    legal_moves,
    open_squares,
    play,
    plies_left,
    threat_squares,
    undo,
)
from bots.engine.search import DRAW, LOSS, MATE_BOUND, RUNNING, Searcher
from protocol.games.magnetic_cave import GRID, MAGNETIC_CAVE, Brick, CaveState
from tests.engine_helpers import engine_moves, random_game_states

G = MAGNETIC_CAVE


def wins_at_once(state: CaveState) -> list[Brick]:
    """The bricks that give the side to move five at once."""
    wins = []
    for move in G.legal_moves(state):
        outcome = G.outcome(G.apply(state, move))
        if outcome is not None and outcome.winner == state.to_move:
            wins.append(move)
    return wins


# --- Move generation and play against the reference -----------------------------------------------


def test_moves_outcomes_and_keys_agree_with_the_reference() -> None:
    states = random_game_states(G, 60, "cave-engine")
    assert len(states) > 2000
    for state in states:
        position = from_state(state)
        legal = G.legal_moves(state)
        assert sorted(engine_moves(position, legal_moves, MAX_MOVES)) == sorted(m.square for m in legal)
        for move in legal:
            before, before_key = position.copy(), key(position)
            play(position, move.square)
            after = G.apply(state, move)
            outcome = G.outcome(after)
            if outcome is None:
                assert game_result(position) == RUNNING
            else:
                assert game_result(position) == (DRAW if outcome.winner is None else LOSS)
            assert np.array_equal(position[:3], from_state(after)[:3])
            assert key(position) == key(from_state(after))
            undo(position, move.square)
            assert np.array_equal(position, before) and key(position) == before_key


def test_search_moves_win_block_or_keep_the_opponent_from_winning() -> None:
    for state in random_game_states(G, 30, "cave-engine-pruning"):
        if G.outcome(state) is not None:
            continue
        searched = engine_moves(from_state(state), generate_moves, MAX_MOVES)
        wins = [m.square for m in wins_at_once(state)]
        if wins:
            assert len(searched) == 1 and searched[0] in wins
            continue
        threats = [m.square for m in wins_at_once(CaveState(state.board, 1 - state.to_move))]
        if threats:
            assert len(searched) == 1 and searched[0] in threats
            continue
        legal = [m.square for m in G.legal_moves(state)]
        safe = [s for s in legal if not wins_at_once(G.apply(state, Brick(s)))]
        assert sorted(searched) == sorted(safe or legal)


def test_threat_squares_and_fives_agree_with_the_reference() -> None:
    for state in random_game_states(G, 20, "cave-engine-threats"):
        if G.outcome(state) is not None:
            continue
        position = from_state(state)
        mine, theirs = int(position[0]), int(position[1])
        empty = ~(mine | theirs) & (2**64 - 1)
        threats = int(threat_squares(np.uint64(mine), np.uint64(empty)))
        own = state.to_move + 1
        for square in range(64):
            if state.board[square] == 0:
                board = state.board[:square] + (own,) + state.board[square + 1 :]
                makes_five = any(all(board[s] == own for s in w) for w in _windows_through(square))
                assert bool(threats >> square & 1) == makes_five


def _windows_through(square: int) -> tuple[tuple[int, ...], ...]:
    from protocol.games.magnetic_cave import WINDOWS_THROUGH

    return WINDOWS_THROUGH[square]


# --- The master bot -------------------------------------------------------------------------------


NODE_LIMIT = 300_000  # per search: the moves checked here must not depend on how loaded the machine is


@pytest.fixture
def master() -> MagneticCaveMaster:
    return MagneticCaveMaster(seed=1, node_limit=NODE_LIMIT)


@pytest.fixture(scope="module")
def timed_master() -> MagneticCaveMaster:
    return MagneticCaveMaster(seed=1)


def test_master_takes_a_win_in_one(master: MagneticCaveMaster) -> None:
    state = G.from_picture("""
        8  . . . . . . . .
        7  . . . . . . . .
        6  . . . . . . . .
        5  . . . . . . . .
        4  . . . . . . . .
        3  W . . . . . . .
        2  W W W . . . . .
        1  B B B B . . . .
           a b c d e f g h
    """, to_move=0)
    assert master.choose(state) == Brick(GRID.parse_name("e1"))


def test_master_blocks_a_four(master: MagneticCaveMaster) -> None:
    # White threatens a6 (a2-a5 and a6); a1 is taken, so one block saves black.
    state = G.from_picture("""
        8  . . . . . . . .
        7  . . . . . . . B
        6  . . . . . . . .
        5  W . . . . . . .
        4  W . . . . . . B
        3  W . . . . . . .
        2  W . . . . . . B
        1  B . . . . . . .
           a b c d e f g h
    """, to_move=0)
    assert master.choose(state) == Brick(GRID.parse_name("a6"))


def test_master_stops_an_open_four_before_it_is_made(master: MagneticCaveMaster) -> None:
    # White's a3-a5 would become an open four (both ends open on the wall) at a2 or a6.
    state = G.from_picture("""
        8  . . . . . . . B
        7  . . . . . . . .
        6  . . . . . . . .
        5  W . . . . . . .
        4  W . . . . . . B
        3  W . . . . . . .
        2  . . . . . . . .
        1  . . . . . . . B
           a b c d e f g h
    """, to_move=0)
    move = master.choose(state)
    assert move in (Brick(GRID.parse_name("a2")), Brick(GRID.parse_name("a6")))


def test_master_with_a_tiny_budget_still_answers_legally(timed_master: MagneticCaveMaster) -> None:
    budget = TimeBudget(per_move=0.01)
    for state in random_game_states(G, 1, "cave-master-tiny")[:30]:
        if G.outcome(state) is None:
            assert timed_master.choose(state, budget) in G.legal_moves(state)


def test_master_without_a_budget_uses_the_three_second_rule() -> None:
    assert MagneticCaveMaster.DEFAULT_SECONDS == 3.0


def test_master_survives_pickling() -> None:
    bot = pickle.loads(pickle.dumps(MagneticCaveMaster(seed=2)))
    state = G.initial_state()
    assert bot.choose(state, TimeBudget(per_move=0.1)) in G.legal_moves(state)


# --- Threat detection against brute force ---------------------------------------------------------


def _sides(state: CaveState) -> tuple[int, int]:
    position = from_state(state)
    return int(position[0]), int(position[1])


def _bits(squares: list[int]) -> int:
    return sum(1 << s for s in squares)


def test_a_four_along_a_row_always_has_its_fifth_square_open() -> None:
    """Why lines along the rows count nothing (``DIRECTION_QUARTERS``): by the reference rules, the empty
    square of a four along a row is always one a brick may go on, so it is a win at hand or a forced block,
    never a lasting threat square; along columns and diagonals it often is not."""
    from protocol.games.magnetic_cave import WINDOWS

    fours = {1: 0, 8: 0}  # along a row, along a column
    closed = {1: 0, 8: 0}
    for state in random_game_states(G, 40, "cave-engine-rows", finished=False):
        legal = {brick.square for brick in G.legal_moves(state)}
        for window in WINDOWS:
            cells = [state.board[s] for s in window]
            step = abs(window[1] - window[0])
            if step in fours and cells.count(0) == 1 and len(set(cells)) == 2:
                fours[step] += 1
                closed[step] += window[cells.index(0)] not in legal
    assert fours[1] > 100 and closed[1] == 0
    assert closed[8] > 0


DIRECTION_STEPS = (1, 8, 9, 7)
"""The square-index step along a row, a column, and the two diagonals: the order of ``DIRECTION_QUARTERS``."""


def test_line_points_and_four_makers_agree_with_brute_force() -> None:
    from protocol.games.magnetic_cave import WINDOWS

    for state in random_game_states(G, 12, "cave-engine-lines"):
        mine, theirs = _sides(state)
        points, their_points, makers, their_makers = line_points(np.uint64(mine), np.uint64(theirs))
        by_direction = {step: [0, 0] for step in DIRECTION_STEPS}
        expected_makers, expected_their_makers = 0, 0
        for window in WINDOWS:
            ours = sum(mine >> s & 1 for s in window)
            others = sum(theirs >> s & 1 for s in window)
            counts = by_direction[abs(window[1] - window[0])]
            if others == 0 and ours < 4:
                counts[0] += LINE_POINTS[ours]
            if ours == 0 and others < 4:  # an empty line counts for both sides
                counts[1] += LINE_POINTS[others]
            if ours == 3 and others == 0:
                expected_makers |= _bits([s for s in window if not mine >> s & 1])
            if others == 3 and ours == 0:
                expected_their_makers |= _bits([s for s in window if not theirs >> s & 1])
        expected = [0, 0]
        for step, quarters in zip(DIRECTION_STEPS, DIRECTION_QUARTERS, strict=True):
            for side in (0, 1):
                expected[side] += by_direction[step][side] * quarters // 4
        assert [points, their_points] == expected
        assert int(makers) == expected_makers == int(four_makers(np.uint64(mine), np.uint64(theirs)))
        assert int(their_makers) == expected_their_makers


def _filling_game(pool: int, mine: int, theirs: int) -> int:
    """The zugzwang model played out move by move: +1, 0 or -1 for the side to move.

    ``pool`` safe squares; ``mine`` and ``theirs`` threat squares, each with an
    empty square on both sides. A move takes a pool square, or plays beside one
    of the mover's threat squares: the opponent must block it, and the square on
    its far side joins the pool, the same side moving again. With no pool square
    and no threat square of its own, the mover must play beside an opposing one
    and loses; with nothing left at all the board is full, a draw.
    """
    if pool == 0 and mine == 0:
        return -1 if theirs else 0
    outcomes = []
    if pool:
        outcomes.append(-_filling_game(pool - 1, theirs, mine))
    if mine:
        outcomes.append(_filling_game(pool + 1, mine - 1, theirs))
    return max(outcomes)


def test_the_zugzwang_rule_solves_the_filling_model() -> None:
    for mine in range(5):
        for theirs in range(5):
            for pool in range(12):
                assert zugzwang(mine - theirs, pool) == _filling_game(pool, mine, theirs), (pool, mine, theirs)


def test_the_middle_game_evaluation_is_one_judge_for_both_sides() -> None:
    """Whichever side is to move, the evaluation scores a position the same for the side it plays for.

    It builds more than it blocks (``OWN_LINES``), so it is not symmetric
    between the two sides, but negamax needs it zero-sum.
    """
    checked = 0
    for state in random_game_states(G, 8, "cave-engine-judge"):
        if G.outcome(state) is not None:
            continue
        position = from_state(state)
        occupied = position[0] | position[1]
        if open_squares(occupied) & (threat_squares(position[0], ~occupied)
                                            | threat_squares(position[1], ~occupied)):
            continue  # a win at hand or a block: decisive values, not the judge's balance
        other = position.copy()
        other[0], other[1] = position[1], position[0]
        other[2] += np.uint64(1)  # the other side to move: same bricks, the count's parity flipped
        value = evaluate_phase(position, 0)
        if abs(value) >= WINS_BY_FOURS or abs(evaluate_phase(other, 0)) >= WINS_BY_FOURS:
            continue
        assert evaluate_phase(other, 0) == -value
        mine, theirs = line_points(position[0], position[1])[:2]
        if mine != theirs:
            flipped = position.copy()
            flipped[3] ^= np.uint64(1)  # played for the other side instead
            assert evaluate_phase(flipped, 0) != value
        checked += 1
    assert checked > 100


def test_the_evaluation_changes_from_middle_game_to_endgame_with_the_brick_count() -> None:
    for state in random_game_states(G, 6, "cave-engine-phase"):
        if G.outcome(state) is not None:
            continue
        position = from_state(state)
        bricks = int(position[2])
        middle, late = evaluate_phase(position, 0), evaluate_phase(position, LATE_RAMP)
        if bricks <= LATE_FROM:
            assert evaluate(position) == middle
        elif bricks >= LATE_FROM + LATE_RAMP:
            assert evaluate(position) == late
        else:
            assert min(middle, late) <= evaluate(position) <= max(middle, late)


def _forced_win(state: CaveState, plies: int) -> bool:
    """The side to move wins within ``plies`` (odd) plies whatever the opponent does (reference rules)."""
    me = state.to_move
    for move in G.legal_moves(state):
        after = G.apply(state, move)
        outcome = G.outcome(after)
        if outcome is not None:
            if outcome.winner == me:
                return True
            continue
        if plies >= 3 and all(
            (G.outcome(reply) is not None and G.outcome(reply).winner == me)
            or (G.outcome(reply) is None and _forced_win(reply, plies - 2))
            for reply in (G.apply(after, r) for r in G.legal_moves(after))
        ):
            return True
    return False


def _wins_by_fours(state: CaveState, depth: int) -> bool | None:
    """``wins_by_fours`` for the side to move, ``None`` when the opponent has an open win."""
    mine, theirs = (np.uint64(side) for side in _sides(state))
    empty = ~(mine | theirs)
    free = open_squares(mine | theirs)
    my_threats = np.uint64(threat_squares(mine, empty))
    their_threats = np.uint64(threat_squares(theirs, empty))
    if their_threats & np.uint64(free):
        return None
    makers = np.uint64(four_makers(mine, theirs))
    return wins_by_fours(mine, theirs, my_threats, their_threats, makers, np.int64(depth))


def test_a_chain_of_one_four_is_a_forced_win_by_the_reference_rules() -> None:
    found = 0
    for state in random_game_states(G, 25, "cave-engine-fours"):
        if G.outcome(state) is None and _wins_by_fours(state, 1) and not _wins_by_fours(state, 0):
            found += 1
            assert _forced_win(state, 3)
    assert found > 8


def test_longer_chains_of_fours_are_wins_the_search_confirms() -> None:
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits=16)
    found = 0
    for state in random_game_states(G, 25, "cave-engine-chains"):
        if G.outcome(state) is not None:
            continue
        for depth in range(2, int(FOUR_CHAIN) + 1):
            if _wins_by_fours(state, depth) and not _wins_by_fours(state, depth - 1):
                found += 1
                searcher.clear()
                result = searcher.think(from_state(state), float("inf"), max_depth=2 * depth + 1)
                assert result.score > MATE_BOUND, str(state)
                break
    assert found > 5


# --- Drawn endgames ---------------------------------------------------------------------------------


def exact(master: MagneticCaveMaster, position: np.ndarray) -> int | None:
    """The exact value of ``position`` for the side to move (a full-depth search)."""
    plies = plies_left(position)
    result = master._searcher.think(position, float("inf"), max_depth=plies)
    if result.depth >= plies or abs(result.score) > MATE_BOUND:
        return result.score
    return None


def random_running_states(seed: str, bricks: int) -> Iterator[CaveState]:
    """Positions of random games once ``bricks`` bricks are down (games over by then are left out), endlessly."""
    rng = random.Random(seed)
    while True:
        state = G.initial_state()
        while G.outcome(state) is None and sum(1 for cell in state.board if cell) < bricks:
            state = G.apply(state, rng.choice(G.legal_moves(state)))
        if G.outcome(state) is None:
            yield state


def test_the_drawing_trap_keeps_the_draw(timed_master: MagneticCaveMaster) -> None:
    master = timed_master  # no node limit: its searches here are exact
    searcher = master._searcher
    checked = 0
    for state in random_running_states("cave-draw-traps", 46):
        position = from_state(state)
        searcher.clear()
        if exact(master, position) != 0:
            continue
        result = searcher.think(position, float("inf"), max_depth=plies_left(position))
        move, traps = master._drawing_trap(position, result.move, float("inf"))
        assert np.array_equal(position, from_state(state))
        assert Brick(move) in G.legal_moves(state) and traps >= 0
        after = from_state(G.apply(state, Brick(move)))
        assert game_result(after) != RUNNING or exact(master, after) == 0
        checked += 1
        if checked == 3:
            break


def test_master_keeps_a_won_endgame_its_search_cannot_see_to_the_end() -> None:
    """Near the end, master first asks a null-window search to the full board whether the game is won,
    which answers within budgets where iterative deepening does not reach the end: master reports the win
    as proven, and its brick keeps it. (Without that search, master's heuristic brick kept these wins too,
    but unproven: in its games it let such wins go, see docs/ENGINES.md.)"""
    master = MagneticCaveMaster(seed=1, node_limit=NODE_LIMIT)
    exact_searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits=20)
    for state in random_running_states("cave-settled-wins", 42):
        position = from_state(state)
        plies = plies_left(position)
        exact_searcher.clear()
        if exact_searcher.window(position, plies, -1, 1, float("inf")) <= 0:
            continue  # not a win for the side to move
        limited = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits=20, node_limit=NODE_LIMIT)
        if limited.window(position, plies, -1, 1, float("inf")) is None:
            continue  # too deep for the budget either way
        limited.clear()
        result = limited.think(position, float("inf"), max_depth=plies)
        if result.depth >= plies or abs(result.score) > MATE_BOUND:
            continue  # iterative deepening solves this one within the budget: not the case looked for
        master.new_game()
        after = G.apply(state, master.choose(state))
        assert master.stats()["score"] > MATE_BOUND, str(state)
        if G.outcome(after) is None:
            exact_searcher.clear()
            child = from_state(after)
            assert exact_searcher.window(child, plies_left(child), -1, 1, float("inf")) < 0, str(state)
        break  # one such position (they take a while to find)
