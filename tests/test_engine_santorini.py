"""The compiled Santorini engine against the reference rules, and the master bot's play."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

from bots.base import TimeBudget
from bots.engine.santorini.evaluation import (
    CENTRE,
    CENTRE_POINTS,
    HEIGHT_POINTS,
    LEVEL_TWO_POINTS,
    MOBILITY_POINTS,
    STEP_UP_POINTS,
    TEMPO_POINTS,
    THREAT_POINTS,
    TRAPPED_POINTS,
    evaluate,
    extend,
    game_result,
    generate_moves,
    legal,
    may_pass,
    order_hint,
    order_hints,
    pass_turn,
    past_setup,
    search,
)
from bots.engine.santorini.master import SantoriniMaster
from bots.engine.santorini.position import (
    MAX_MOVES,
    MOVE_SPACE,
    from_reference,
    from_state,
    key,
    legal_moves,
    play,
    rules_result,
    to_reference,
    undo,
)
from bots.engine.search import LOSS, LOSS_AFTER_REPLY, MATE, MATE_BOUND, RUNNING, WIN, WIN_NEXT, Searcher, make_search
from protocol.games.santorini import NEIGHBOURS, NO_WORKER, SANTORINI, SantoriniState, WorkerTurn
from tests.engine_helpers import engine_moves, random_game_states

GAME = SANTORINI


def set_up_states(count: int, seed: int) -> list[SantoriniState]:
    """Random positions with any levels (domes and level-3 workers included; none during setup), decoded by the
    rules."""
    rng = random.Random(seed)
    states = []
    while len(states) < count:
        levels = [rng.choice((0, 0, 1, 1, 2, 2, 3, 3, 4)) for _ in range(25)]
        free = [square for square in range(25) if levels[square] != 4]
        if len(free) < 4:
            continue
        squares = rng.sample(free, 4)
        placed = rng.random() < 0.9
        if not placed:  # nothing is built during setup
            levels = [0] * 25
        workers = [1 if i < 2 else 2 for i in range(4)] if placed else [1, 1]
        cells = [0] * 25
        for square, seat in zip(squares, workers, strict=False):
            cells[square] = seat
        to_move = rng.randrange(2) if placed else 1
        obj = {"levels": [levels[r * 5 : r * 5 + 5] for r in range(5)],  # rank 1 first
               "workers": [cells[r * 5 : r * 5 + 5] for r in range(5)], "to_move": to_move}
        states.append(GAME.decode_state(obj))
    return states


PLAYED = random_game_states(GAME, 40, seed=11, finished=False)
SET_UP = set_up_states(1500, seed=12)


def canonical(array: np.ndarray) -> tuple:
    """Levels, each seat's workers as a sorted pair, and the seat to move."""
    return (
        tuple(int(v) for v in array[:25]),
        tuple(sorted(int(v) for v in array[25:27])),
        tuple(sorted(int(v) for v in array[27:29])),
        int(array[29]),
    )


def reference_canonical(state: SantoriniState) -> tuple:
    return state.levels, tuple(sorted(state.workers[:2])), tuple(sorted(state.workers[2:])), state.to_move



def can_win_at_once(state: SantoriniState) -> bool:
    return any(isinstance(m, WorkerTurn) and m.build is None for m in GAME.legal_moves(state))


def test_enough_positions_of_every_kind() -> None:
    assert len(PLAYED) >= 2000
    assert sum(NO_WORKER in s.workers for s in PLAYED + SET_UP) >= 100  # setup moves
    assert sum(can_win_at_once(s) for s in SET_UP if s.result is None) >= 100
    assert sum(s.result is not None for s in SET_UP) >= 20


@pytest.mark.parametrize("states", [PLAYED, SET_UP], ids=["played", "set-up"])
def test_moves_and_outcomes_match_the_reference(states: list[SantoriniState]) -> None:
    rng = random.Random(5)
    for state in states:
        array = from_state(state)
        if state.result is not None:
            assert rules_result(array) == LOSS, state
            continue
        assert rules_result(array) == RUNNING, state
        codes = engine_moves(array, legal_moves, MAX_MOVES)
        moves = [to_reference(array, code) for code in codes]
        reference = GAME.legal_moves(state)
        assert len(moves) == len(reference) and set(moves) == set(reference), state
        before, position = array.copy(), key(array)
        for code in rng.sample(codes, min(len(codes), 12)):
            move = to_reference(array, code)
            assert from_reference(array, move) == code
            after = GAME.apply(state, move)
            play(array, code)
            assert canonical(array) == reference_canonical(after), (state, move)
            assert (rules_result(array) == LOSS) == (after.result is not None), (state, move)
            undo(array, code)
            assert np.array_equal(array, before) and key(array) == position


def test_key_is_the_same_whatever_the_order_of_a_seats_workers() -> None:
    for state in SET_UP[:300]:
        array = from_state(state)
        swapped = array.copy()
        swapped[25], swapped[26] = array[26], array[25]
        assert key(swapped) == key(array)
        flipped = array.copy()
        flipped[29] = 1 - array[29]
        assert key(flipped) != key(array)


def test_keys_of_different_positions_differ() -> None:
    keys = {}
    for state in PLAYED + SET_UP:
        keys.setdefault(key(from_state(state)), set()).add(reference_canonical(state))
    assert all(len(positions) == 1 for positions in keys.values())


@pytest.mark.parametrize("states", [PLAYED, SET_UP], ids=["played", "set-up"])
def test_search_verdicts_are_exact(states: list[SantoriniState]) -> None:
    """``game_result`` says WIN_NEXT exactly when the side to move can climb onto level 3, and LOSS_AFTER_REPLY
    (beyond the rules) only when every move lets the opponent climb at once."""
    losses = 0
    for state in states:
        if state.result is not None or NO_WORKER in state.workers:
            continue
        verdict = game_result(from_state(state))
        assert (verdict == WIN_NEXT) == can_win_at_once(state), state
        assert verdict != WIN  # the climb is a ply away: its score counts it
        if verdict == LOSS_AFTER_REPLY:
            losses += 1
            for move in GAME.legal_moves(state):
                after = GAME.apply(state, move)
                assert after.result is None and can_win_at_once(after), (state, move)
    assert losses > 0 or states is PLAYED


@pytest.mark.parametrize("states", [PLAYED, SET_UP], ids=["played", "set-up"])
def test_searched_moves_drop_only_moves_that_lose_at_once(states: list[SantoriniState]) -> None:
    for state in states:
        if state.result is not None:
            continue
        array = from_state(state)
        legal = engine_moves(array, legal_moves, MAX_MOVES)
        searched = engine_moves(array, generate_moves, MAX_MOVES)
        assert searched and set(searched) <= set(legal), state
        if can_win_at_once(state):
            assert all(to_reference(array, code).build is None for code in searched)
            continue
        for code in set(legal) - set(searched):
            after = GAME.apply(state, to_reference(array, code))
            assert can_win_at_once(after), (state, to_reference(array, code))


@pytest.mark.parametrize("states", [PLAYED, SET_UP], ids=["played", "set-up"])
def test_order_hints_at_once_are_the_hints_move_by_move(states: list[SantoriniState]) -> None:
    hints = np.zeros(MAX_MOVES, np.int64)
    for state in states:
        if state.result is not None:
            continue
        array = from_state(state)
        moves = np.zeros(MAX_MOVES, np.int64)
        n = generate_moves(array, moves)
        order_hints(array, moves, n, hints)
        assert list(hints[:n]) == [order_hint(array, move) for move in moves[:n]], state


@pytest.mark.parametrize("states", [PLAYED, SET_UP], ids=["played", "set-up"])
def test_legal_says_which_move_codes_are_legal(states: list[SantoriniState]) -> None:
    """The search tries killers from other positions before generating a node's moves: ``legal`` must
    accept exactly the codes ``legal_moves`` lists, out of every code there is."""
    for state in states:
        if state.result is not None:
            continue
        array = from_state(state)
        codes = set(engine_moves(array, legal_moves, MAX_MOVES))
        assert {code for code in range(MOVE_SPACE) if legal(array, code)} == codes, state


def test_trying_killers_before_generating_changes_no_value() -> None:
    """The search with the ``legal`` hook (table move and killers before the node's moves) finds the same
    values as without it (both without the prunings whose choices depend on the order moves are tried in)."""
    plain = make_search("santorini_plain", generate_moves=generate_moves, play=play, undo=undo, key=key,
                        evaluate=evaluate, game_result=game_result, order_hint=order_hint, order_hints=order_hints,
                        extend=extend)
    compared = 0
    for state in PLAYED[::40]:
        if state.result is not None:
            continue
        staged = Searcher(NO_PASS_SEARCH, MAX_MOVES, MOVE_SPACE, 16).think(from_state(state), float("inf"), 4)
        generated = Searcher(plain, MAX_MOVES, MOVE_SPACE, table_bits=16).think(from_state(state), float("inf"), 4)
        assert staged.score == generated.score, state
        compared += 1
    assert compared >= 40


def reference_evaluation(state: SantoriniState) -> int:
    """The evaluation's terms counted square by square over the reference position (see its constants)."""
    levels, workers = state.levels, state.workers
    if NO_WORKER in workers:
        return CENTRE_POINTS * sum(int(CENTRE[w]) * (1 if i // 2 == state.to_move else -1)
                                   for i, w in enumerate(workers) if w != NO_WORKER)

    def side(seat: int) -> int:
        value = 0
        for square in workers[2 * seat : 2 * seat + 2]:
            height = levels[square]
            steps = [to for to in NEIGHBOURS[square]
                     if to not in workers and levels[to] != 4 and levels[to] <= height + 1]
            value += int(HEIGHT_POINTS[height]) + CENTRE_POINTS * int(CENTRE[square]) + MOBILITY_POINTS * len(steps)
            value += sum(int(STEP_UP_POINTS[height]) for to in steps if levels[to] == height + 1)
            if height == 2:
                value += LEVEL_TWO_POINTS * sum(levels[to] == 2 for to in steps)
            if not steps:
                value -= TRAPPED_POINTS
        return value

    opponent = 1 - state.to_move
    threatened = any(levels[w] == 2 and any(levels[to] == 3 and to not in workers for to in NEIGHBOURS[w])
                     for w in workers[2 * opponent : 2 * opponent + 2])
    return side(state.to_move) - side(opponent) + TEMPO_POINTS - (THREAT_POINTS if threatened else 0)


@pytest.mark.parametrize("states", [PLAYED, SET_UP], ids=["played", "set-up"])
def test_the_evaluation_counts_what_its_weights_say(states: list[SantoriniState]) -> None:
    """The compiled evaluation (sets of squares as bit masks) against the same terms counted one square at a time."""
    for state in states:
        if state.result is None:
            assert evaluate(from_state(state)) == reference_evaluation(state), state


# --- The master bot -------------------------------------------------------------------------------


NODE_LIMIT = 300_000  # per search: the moves checked here must not depend on how loaded the machine is


@pytest.fixture
def master() -> SantoriniMaster:
    return SantoriniMaster(seed=1, node_limit=NODE_LIMIT)


@pytest.fixture(scope="module")
def timed_master() -> SantoriniMaster:
    return SantoriniMaster(seed=1)


def test_master_takes_a_win_in_one(master: SantoriniMaster) -> None:
    state = GAME.from_picture("""
        0 0 0 0 0B
        0 1 2 1 0
        0 2A 3 1 0
        0 1 2 3 0B
        0A 0 0 0 0
    """, to_move=0)
    move = master.choose(state)
    after = GAME.apply(state, move)
    assert after.result is not None and after.result.winner == 0
    assert SantoriniMaster(seed=4, node_limit=NODE_LIMIT).think(state).score == MATE - 1  # a win in 1: the climb


def test_master_blocks_a_win_next_turn(master: SantoriniMaster) -> None:
    # B on c3 (level 2) threatens to climb onto d3 (level 3); A cannot win and must dome d3.
    state = GAME.from_picture("""
        0 0 0 0 0
        0 1 0 0A 0
        0 1 2B 3 0
        0 0 0 1 0A
        0B 0 0 0 0
    """, to_move=0)
    assert not can_win_at_once(state)
    move = master.choose(state)
    after = GAME.apply(state, move)
    assert move.build == 13  # d3
    assert not can_win_at_once(after)


WIN_IN_THREE = {
    # A's workers can only climb step by step (c1, then c2 or b2, then d2 once built up to 2, from
    # where e2 built up to 3 wins); B's workers are walled in by domes and cannot stop it.
    "walled-in": GAME.from_picture("""
        0B 0B D 0 0A
        0 0 D 0 0
        D D D 0 0
        0 1 1 1 2
        0 0 0A 0 0
    """, to_move=0),
    # From a random game: B on e5 and b5 is near enough to dome single threats.
    "contested": GAME.from_picture("""
        0 0B 1 0 1B
        0 0 2 2 0
        0 2 0 0A 1
        1A 1 1 0 0
        0 0 1 2 1
    """, to_move=0),
}


@pytest.mark.parametrize("name", sorted(WIN_IN_THREE))
def test_master_finds_and_plays_a_forced_win_in_three(name: str) -> None:
    state = WIN_IN_THREE[name]
    attacker = SantoriniMaster(seed=2, node_limit=NODE_LIMIT)
    found = attacker.think(state, max_depth=8)
    # a win in 3 turns: the climb is the fifth ply (found at ply 4, the climb at hand, or at ply 3, the defender
    # helpless): scored as the fifth either way, so that "win in 5" is what happens
    assert found.score == MATE - 5, found
    defender = SantoriniMaster(seed=3, node_limit=NODE_LIMIT)
    turns = 0
    while state.result is None:
        if state.to_move == 0:
            turns += 1
        bot = attacker if state.to_move == 0 else defender
        state = GAME.apply(state, bot.choose(state))
    assert state.result.winner == 0 and turns <= 3, (state, turns)


def test_master_places_its_workers_and_answers_a_placement(master: SantoriniMaster) -> None:
    state = GAME.initial_state()
    first = master.choose(state)
    assert first in GAME.legal_moves(state)
    assert all(square not in (0, 4, 20, 24) for square in first)  # never a corner
    state = GAME.apply(state, first)
    second = master.choose(state)
    assert second in GAME.legal_moves(state)


@pytest.mark.parametrize("index", range(0, 2000, 97))
def test_master_answers_legally_with_a_tiny_budget(timed_master: SantoriniMaster, index: int) -> None:
    state = PLAYED[index]
    move = timed_master.choose(state, TimeBudget(per_move=0.001))
    assert move in GAME.legal_moves(state)


def test_master_scores_a_lost_position_as_lost() -> None:
    # B threatens two level-3 squares at once: A cannot dome both.
    state = GAME.from_picture("""
        0 0 0 0 0
        0 3 0 0 0A
        0 2B 3 0 0
        0 0 0 0 0
        0B 0A 0 0 0
    """, to_move=0)
    found = SantoriniMaster(seed=4, node_limit=NODE_LIMIT).think(state)
    assert found.score == -(MATE - 2)  # a loss in 2: A's move, then B's climb


def test_master_survives_pickling(timed_master: SantoriniMaster) -> None:
    copy = pickle.loads(pickle.dumps(timed_master))
    state = PLAYED[500]
    assert copy.choose(state, TimeBudget(per_move=0.05)) in GAME.legal_moves(state)


PLAIN_SEARCH = make_search(
    "santorini-plain", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint,
)
"""The master's search without its forcing-move extension (``extend``), for comparison."""


def test_forcing_moves_are_extended_and_the_wins_they_find_are_real() -> None:
    # After a move that leaves the opponent facing a climb onto level 3, its few replies are searched
    # without using up depth, so a shallow search proves wins a plain one of the same depth misses;
    # every one of them is a win the plain search also proves, at the same distance, given the depth.
    extended, plain = Searcher(search, MAX_MOVES, MOVE_SPACE, 18), Searcher(PLAIN_SEARCH, MAX_MOVES, MOVE_SPACE, 18)
    earlier = 0
    for state in [s for s in PLAYED if s.workers[0] != NO_WORKER and s.workers[2] != NO_WORKER][::3]:
        position = from_state(state)
        if game_result(position) != RUNNING:
            continue
        found = extended.think(position.copy(), np.inf, max_depth=2)
        if found.score <= MATE_BOUND:
            continue
        plies = MATE - found.score
        if plain.think(position.copy(), np.inf, max_depth=2).score <= MATE_BOUND:
            earlier += 1
        assert plain.think(position.copy(), np.inf, max_depth=plies).score == found.score, str(state)
    assert earlier > 0


NO_PASS_SEARCH = make_search(
    "santorini-no-pass", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint, order_hints=order_hints, extend=extend, legal=legal,
)
"""The master's search without null-move pruning (``may_pass``) or late move reductions and pruning, for
comparison."""
NO_REDUCE_SEARCH = make_search(
    "santorini-no-reduce", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint, order_hints=order_hints, extend=extend, legal=legal,
    may_pass=may_pass, pass_turn=pass_turn,
)
"""The master's search without late move reductions or pruning (``reduce_late``, ``prune_late``), for comparison."""
NO_PRUNE_SEARCH = make_search(
    "santorini-no-prune", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint, order_hints=order_hints, extend=extend, legal=legal,
    may_pass=may_pass, pass_turn=pass_turn, reduce_late=past_setup,
)
"""The master's search without late move pruning (``prune_late``), for comparison."""


def depth_five_searches(pruned: object, plain: object) -> tuple[list[tuple[np.ndarray, int]], int, int]:
    """Positions of the random games after setup (still running by the search's verdict), each searched to
    depth 5 from an empty table by the compiled searches ``pruned`` and ``plain``: ``pruned``'s score by
    position, and the nodes each search took in all."""
    first, second = Searcher(pruned, MAX_MOVES, MOVE_SPACE, 18), Searcher(plain, MAX_MOVES, MOVE_SPACE, 18)
    scores, nodes_first, nodes_second = [], 0, 0
    positions = [from_state(s) for s in PLAYED if NO_WORKER not in s.workers and s.result is None][::12]
    for position in [p for p in positions if game_result(p) == RUNNING]:
        first.clear()
        second.clear()
        found = first.think(position.copy(), np.inf, max_depth=5)
        nodes_first += found.nodes
        nodes_second += second.think(position.copy(), np.inf, max_depth=5).nodes
        scores.append((position, found.score))
    return scores, nodes_first, nodes_second


def proven_by_the_full_search(position: np.ndarray, score: int) -> bool:
    """True when the search without null moves or late move reductions and pruning proves the forced result
    ``score`` (a win or loss that many plies ahead), at that depth."""
    proof = Searcher(NO_PASS_SEARCH, MAX_MOVES, MOVE_SPACE, 18).think(position.copy(), np.inf, MATE - abs(score))
    return proof.score == score


def test_a_pass_is_allowed_after_setup_and_never_against_a_threat() -> None:
    allowed = 0
    for state in PLAYED:
        if state.result is not None:
            continue
        position = from_state(state)
        placed = NO_WORKER not in state.workers
        threatened = extend(position) if placed else False
        assert may_pass(position) == (placed and not threatened), str(state)
        allowed += may_pass(position)
        before, before_key = position.copy(), key(position)
        pass_turn(position)
        assert key(position) != before_key
        pass_turn(position)
        assert np.array_equal(position, before) and key(position) == before_key
    assert allowed > 100


@pytest.mark.parametrize(("pruned", "plain", "most"), [
    ("NO_REDUCE_SEARCH", "NO_PASS_SEARCH", 0.8),  # null moves, against the search without them
    ("NO_PRUNE_SEARCH", "NO_REDUCE_SEARCH", 0.9),  # late move reductions on top of null moves
    ("search", "NO_PRUNE_SEARCH", 0.8),  # the master's: late move pruning on top of both
], ids=["null moves", "late move reductions", "late move pruning"])
def test_prunings_reach_a_depth_in_fewer_nodes_and_prove_only_what_the_full_search_proves(
    pruned: str, plain: str, most: float
) -> None:
    # Null moves cut the nodes where passing would still leave the side to move ahead; late moves searched
    # a ply shallower first are searched again only when they look better; near the horizon the latest are
    # left out. Each way the master reaches a depth with fewer nodes, so deeper in its time, and a win or loss
    # it proves is one the search without any of these prunings proves too, at the same distance.
    searches = {"search": search, "NO_PRUNE_SEARCH": NO_PRUNE_SEARCH, "NO_REDUCE_SEARCH": NO_REDUCE_SEARCH,
                "NO_PASS_SEARCH": NO_PASS_SEARCH}
    scores, nodes_pruned, nodes_plain = depth_five_searches(searches[pruned], searches[plain])
    proven = [(position, score) for position, score in scores if abs(score) > MATE_BOUND]
    assert proven
    assert all(proven_by_the_full_search(position, score) for position, score in proven)
    assert nodes_pruned < most * nodes_plain, (nodes_pruned, nodes_plain)
