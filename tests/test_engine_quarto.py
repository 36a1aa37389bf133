"""The compiled Quarto engine against the reference rules, and the ``master`` bot."""

from __future__ import annotations

import itertools
import pickle
import random
from functools import cache

import numpy as np
import pytest

from bots import TimeBudget
from bots.engine.quarto.evaluation import generate_moves, search, solve
from bots.engine.quarto.master import QuartoMaster
from bots.engine.quarto.position import (
    MAX_MOVES,
    MOVE_SPACE,
    NO_PIECE,
    SAFE,
    canonical_key,
    completes_line,
    encode,
    from_state,
    game_result,
    key,
    legal_moves,
    play,
    plies_left,
    to_quarto_move,
    undo,
)
from bots.engine.quarto.solver import SolverTables, new_solver_tables, to_search_score
from bots.engine.quarto.solver import solve as solver_solve
from bots.engine.search import DRAW, LOSS, MATE, MATE_BOUND, RUNNING, Searcher
from bots.engine.traps import SHALLOW, trap_chance
from bots.evaluate.quarto import completes_line as reference_completes_line
from bots.evaluate.quarto import winning_squares
from protocol.games.quarto import EMPTY, GRID, QUARTO, QuartoMove, QuartoState
from tests.engine_helpers import engine_moves, random_game_states

G = QUARTO
POSITION_FIELDS = slice(0, SAFE)
"""The position proper, without the scratch that move generation writes."""


def encoded(moves: list[QuartoMove]) -> set[int]:
    return {encode(m.square, m.piece) for m in moves}


def quiet_position(rng: random.Random, empties: int) -> QuartoState:
    """A running position with ``empties`` empty squares, reached without handing over a winning piece."""
    while True:
        state = G.apply(G.initial_state(), QuartoMove(None, rng.randrange(16)))
        while state is not None and sum(v == EMPTY for v in state.board) > empties:
            moves = G.legal_moves(state)
            rng.shuffle(moves)
            state = next((after for after in map(lambda m: G.apply(state, m), moves)  # noqa: B023
                          if G.outcome(after) is None and not winning_squares(after.board, after.in_hand)), None)
        if state is not None:
            return state


def child_score(child: int) -> int:
    """A child's negamax score seen from its parent, one ply further from the end."""
    if child > MATE_BOUND:
        return -child + 1
    if child < -MATE_BOUND:
        return -child - 1
    return -child


@cache
def brute_force(state: QuartoState) -> int:
    """Exact negamax value over the reference rules: ``MATE - p`` for a win in ``p`` plies."""
    outcome = G.outcome(state)
    if outcome is not None:
        return 0 if outcome.winner is None else -MATE
    return max(child_score(brute_force(G.apply(state, move))) for move in G.legal_moves(state))


# --- Move generation and play against the reference -----------------------------------------------


def test_moves_outcomes_and_keys_agree_with_the_reference() -> None:
    rng = random.Random("quarto-engine-play")
    states = random_game_states(G, 300, "quarto-engine")
    assert len(states) > 2000
    for state in states:
        if G.outcome(state) is not None:
            continue
        position = from_state(state)
        legal = G.legal_moves(state)
        assert set(engine_moves(position, legal_moves, MAX_MOVES)) == encoded(legal)
        for move in rng.sample(legal, min(4, len(legal))):
            before = position.copy()
            before_key = key(position)
            code = encode(move.square, move.piece)
            play(position, code)
            after = G.apply(state, move)
            outcome = G.outcome(after)
            if outcome is None:
                assert game_result(position) == RUNNING
                expected = from_state(after)
                assert np.array_equal(position[POSITION_FIELDS], expected[POSITION_FIELDS])
                assert key(position) == key(expected)
            elif outcome.winner is None:
                assert game_result(position) == DRAW
            else:
                assert game_result(position) == LOSS
            assert to_quarto_move(code) == move
            undo(position, code)
            assert np.array_equal(position[POSITION_FIELDS], before[POSITION_FIELDS])
            assert key(position) == before_key


def test_search_moves_win_at_once_or_hand_over_only_safe_pieces() -> None:
    for state in random_game_states(G, 60, "quarto-engine-pruning"):
        if G.outcome(state) is not None or state.in_hand is None:
            continue
        position = from_state(state)
        searched = engine_moves(position, generate_moves, MAX_MOVES)
        legal = encoded(G.legal_moves(state))
        assert set(searched) <= legal
        wins = winning_squares(state.board, state.in_hand)
        if wins:
            assert len(searched) == 1 and searched[0] // 17 in wins and searched[0] % 17 == NO_PIECE
            continue
        safe = set()
        for code in legal:
            after = G.apply(state, to_quarto_move(code))
            if G.outcome(after) is not None or not winning_squares(after.board, after.in_hand):
                safe.add(code)
        if safe:
            assert set(searched) == safe
        else:
            assert len(searched) == 1


def relabel(state: QuartoState, flip: int, order: tuple[int, ...]) -> QuartoState:
    """The same position with every piece's attributes complemented by ``flip`` and permuted."""

    def piece(code: int) -> int:
        code ^= flip
        return sum(((code >> bit) & 1) << order[bit] for bit in range(4))

    board = tuple(EMPTY if v == EMPTY else piece(v) for v in state.board)
    return QuartoState(board, None if state.in_hand is None else piece(state.in_hand), state.to_move)


def test_the_key_ignores_attribute_relabelling_only() -> None:
    rng = random.Random("quarto-keys")
    states = [s for s in random_game_states(G, 60, "quarto-engine-keys") if G.outcome(s) is None]
    keys = {}
    for state in states:
        canonical = canonical_key(from_state(state))
        order = tuple(rng.sample(range(4), 4))
        assert canonical_key(from_state(relabel(state, rng.randrange(16), order))) == canonical
        keys.setdefault(canonical, set()).add((state.board, state.in_hand))
    relabellings = [(flip, order) for flip in range(16) for order in itertools.permutations(range(4))]
    shared = 0
    for group in keys.values():
        first, *others = [QuartoState(board, hand, 0) for board, hand in group]
        for other in others:
            shared += 1
            assert any(relabel(first, flip, order) == other for flip, order in relabellings)
    assert shared > 0  # early positions do repeat up to relabelling


# --- Exact values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("empties", [3, 4, 5, 6])
def test_solved_values_match_brute_force_over_the_reference(empties: int) -> None:
    rng = random.Random(f"quarto-endgames-{empties}")
    for _ in range(12 if empties < 6 else 4):
        state = quiet_position(rng, empties)
        expected = brute_force(state)
        assert solve(from_state(state), table_bits=16) == expected, str(state)
    brute_force.cache_clear()


def test_solved_values_are_wins_draws_and_losses() -> None:
    rng = random.Random("quarto-endgames-kinds")
    kinds = set()
    for _ in range(40):
        state = quiet_position(rng, 5)
        value = solve(from_state(state), table_bits=16)
        kinds.add((value > MATE_BOUND) - (value < -MATE_BOUND))
    assert kinds == {-1, 0, 1}


# --- The master bot -------------------------------------------------------------------------------


NODE_LIMIT = 300_000  # per search: the moves checked here must not depend on how loaded the machine is


def test_master_takes_a_win_in_one() -> None:
    # rank 1 and the piece in hand all have digits 1 and 2 = 0
    state = G.from_picture("""
        4  .... .... .... ....
        3  .... .... .... ....
        2  .... .... .... ....
        1  0000 0001 0011 ....
              a    b    c    d
    """, to_move=0, in_hand="0110")
    bot = QuartoMaster(seed=1, node_limit=NODE_LIMIT)
    move = bot.choose(state)
    assert move == QuartoMove(GRID.index(3, 0), None)
    assert G.outcome(G.apply(state, move)).winner == 0


def test_master_never_hands_over_a_winning_piece_when_a_safe_one_exists() -> None:
    rng = random.Random("quarto-master-safe")
    bot = QuartoMaster(seed=2, node_limit=NODE_LIMIT)
    for _ in range(10):
        state = quiet_position(rng, rng.randrange(5, 12))
        move = bot.choose(state)
        after = G.apply(state, move)
        if G.outcome(after) is not None:
            continue
        assert not winning_squares(after.board, after.in_hand), f"{state}\n{move}"


def test_master_with_a_tiny_budget_still_answers_legally() -> None:
    bot = QuartoMaster(seed=3)
    budget = TimeBudget(per_move=0.01)
    for state in random_game_states(G, 3, "quarto-master-tiny")[:40]:
        if G.outcome(state) is None:
            assert bot.choose(state, budget) in G.legal_moves(state)


def test_master_survives_pickling() -> None:
    bot = pickle.loads(pickle.dumps(QuartoMaster(seed=4)))
    state = G.apply(G.initial_state(), QuartoMove(None, 3))
    assert bot.choose(state, TimeBudget(per_move=0.1)) in G.legal_moves(state)


def test_completes_line_helper_agrees() -> None:
    # The reference helper and the engine agree on which placements win.
    for state in random_game_states(G, 40, "quarto-engine-wins"):
        if G.outcome(state) is not None or state.in_hand is None:
            continue
        position = from_state(state)
        for square in range(16):
            if state.board[square] == EMPTY:
                assert completes_line(position, square, state.in_hand) == reference_completes_line(
                    state.board, square, state.in_hand
                )


# --- Null-window searches and traps ----------------------------------------------------------------


def test_window_searches_tell_wins_draws_losses_and_quick_wins() -> None:
    rng = random.Random("quarto-windows")
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, 16)
    seen = set()
    for _ in range(50):
        state = quiet_position(rng, rng.choice([4, 5]))
        expected = brute_force(state)
        position = from_state(state)
        plies = plies_left(position)
        value = searcher.window(position, plies, -1, 1, np.inf)
        sign = (value > 0) - (value < 0)
        assert sign == (expected > 0) - (expected < 0), str(state)
        quick = searcher.window(position, 3, MATE - 4, MATE - 3, np.inf)  # from a warm table, too
        assert (quick >= MATE - 3) == (expected >= MATE - 3), str(state)
        seen.add((sign, quick >= MATE - 3))
    assert {(-1, False), (0, False), (1, False), (1, True)} <= seen
    brute_force.cache_clear()


def solved(state: QuartoState) -> int:
    """The exact value of ``state`` (the engine's solver, checked against brute force above)."""
    if G.outcome(state) is not None:
        return brute_force(state)
    return solve(from_state(state), table_bits=16)


def reference_trap(state: QuartoState, move: QuartoMove) -> float | None:
    """The master's trap score of ``move``, its replies listed by the reference rules (``None``: one beats it)."""
    after = G.apply(state, move)
    if G.outcome(after) is not None:
        return 0.0
    if winning_squares(after.board, after.in_hand):
        return None
    replies = [r for r in G.legal_moves(after) if r.piece is None or not winning_squares(
        G.apply(after, r).board, r.piece)]
    if not replies:  # every hand-over loses at once: the engine searches one of them
        return trap_chance(1, 0, 1)
    deep = quick = 0
    for reply in replies:
        value = solved(G.apply(after, reply))  # ours again
        if value < -MATE_BOUND:
            return None
        if value > MATE_BOUND:
            quick += value >= MATE - SHALLOW
            deep += value < MATE - SHALLOW
    return trap_chance(len(replies), deep, quick)


def test_trap_chance_is_the_share_of_deep_losses_among_replies_that_do_not_lose_quickly() -> None:
    assert trap_chance(10, 0, 0) == 0.0
    assert trap_chance(10, 5, 0) == pytest.approx(0.5)
    assert trap_chance(10, 2, 8) > trap_chance(10, 5, 0)  # the 2 are all a careful opponent has
    assert trap_chance(10, 3, 2) > trap_chance(10, 3, 1)


def test_master_keeps_a_draw_and_sets_the_trap_with_the_most_losing_replies() -> None:
    rng = random.Random("quarto-traps")
    bot = QuartoMaster(seed=5, node_limit=10**9)  # every search finishes: the traps are exact
    spreads = []
    while len(spreads) < 3:
        state = quiet_position(rng, 7)
        if solved(state) != DRAW:
            continue
        bot.new_game()
        move = bot.choose(state)
        traps = {m: reference_trap(state, m) for m in G.legal_moves(state)}
        drawing = {m: t for m, t in traps.items() if t is not None and child_score(solved(G.apply(state, m))) == 0}
        best = max(drawing.values())
        assert child_score(solved(G.apply(state, move))) == DRAW, f"{state}\n{move}"
        assert bot.stats()["trap"] == pytest.approx(best), f"{state}\n{move}"
        assert drawing[move] == pytest.approx(best)
        spreads.append(best - min(drawing.values()))
    assert max(spreads) > 0.1  # the choice mattered


# --- The exact solver ------------------------------------------------------------------------------


def solver_value(state: QuartoState, tables: SolverTables | None = None) -> tuple[int, QuartoMove]:
    """The exact solver's value of ``state`` as the search scores it, and its move."""
    position = from_state(state)
    tables = new_solver_tables(size=1 << 16) if tables is None else tables
    score, move, solved = solver_solve(position, tables)
    assert solved
    return to_search_score(score, sum(v == EMPTY for v in state.board)), to_quarto_move(move)


@pytest.mark.parametrize("empties", [3, 4, 5, 6])
def test_exact_solver_matches_brute_force_over_the_reference(empties: int) -> None:
    rng = random.Random(f"quarto-solver-{empties}")
    for _ in range(12 if empties < 6 else 4):
        state = quiet_position(rng, empties)
        assert solver_value(state)[0] == brute_force(state), str(state)
    brute_force.cache_clear()


def test_exact_solver_agrees_with_the_search_and_its_moves_keep_the_value() -> None:
    rng = random.Random("quarto-solver-search")
    tables = new_solver_tables(size=1 << 18)  # shared across positions, as the master shares it
    kinds = set()
    for empties in (7, 8, 9, 9, 10, 10):
        state = quiet_position(rng, empties)
        value, move = solver_value(state, tables)
        assert value == solve(from_state(state), table_bits=18), str(state)
        assert move in G.legal_moves(state)
        after = G.apply(state, move)
        outcome = G.outcome(after)
        if outcome is not None:
            assert value == (MATE - 1 if outcome.winner is not None else DRAW)
        else:
            assert child_score(solver_value(after)[0]) == value, f"{state}\n{move}"
        kinds.add((value > MATE_BOUND) - (value < -MATE_BOUND))
    assert len(kinds) >= 2


def test_exact_solver_values_ignore_attribute_relabelling() -> None:
    rng = random.Random("quarto-solver-relabel")
    tables = new_solver_tables(size=1 << 16)
    for _ in range(8):
        state = quiet_position(rng, 8)
        value = solver_value(state)[0]
        twin = relabel(state, rng.randrange(16), tuple(rng.sample(range(4), 4)))
        assert solver_value(twin, tables)[0] == value  # from a table holding earlier twins' entries too
        assert solver_value(state, tables)[0] == value


def test_exact_solver_stops_at_its_node_limit_and_deadline() -> None:
    state = quiet_position(random.Random("quarto-solver-limit"), 12)
    position = from_state(state)
    assert solver_solve(position, new_solver_tables(node_limit=5_000, size=1 << 16))[2] is False
    assert solver_solve(position, new_solver_tables(size=1 << 16), 0.0)[2] is False  # the deadline has passed


def test_master_keeps_drawn_endgames_drawn_to_the_last_square() -> None:
    # The solver's draws go to the trap scoring, whose replies may fill the board.
    rng = random.Random("quarto-last-squares")
    bot = QuartoMaster(seed=6, node_limit=NODE_LIMIT)
    played = 0
    while played < 12:
        state = quiet_position(rng, rng.choice([2, 3, 4]))
        if solver_value(state)[0] != DRAW:
            continue
        move = bot.choose(state)
        after = G.apply(state, move)
        outcome = G.outcome(after)
        assert (outcome.winner is None) if outcome else child_score(solver_value(after)[0]) == DRAW, str(state)
        played += 1
