"""The rules of Santorini (base game), pinned."""

from __future__ import annotations

import itertools
import random

import pytest

from protocol.games import GAMES, IllegalMove
from protocol.games.santorini import GRID, SANTORINI, Placement, SantoriniState, WorkerTurn

G = SANTORINI


def sq(name: str) -> int:
    return GRID.parse_name(name)


CORNERS = G.from_picture("""
    5  0B 0  0  0  0A
    4  0  0  0  0  0
    3  0  0  0  0  0
    2  0  0  0  0  0
    1  0A 0  0  0  0B
        a  b  c  d  e
""", to_move=0)
"""Nothing built yet, the workers in the corners: seat 0 (A) on a1 and e5, seat 1 (B) on a5 and e1."""


FACE_TO_FACE = G.from_picture("""
    5  0  0  0  0  0A
    4  0  0  0  0  0
    3  0  0  0B 0  0
    2  0  0A 0  0  0
    1  0  0  0  0  0B
        a  b  c  d  e
""", to_move=0)
"""Nothing built; seat 0's worker on b2 faces seat 1's on c3, the others in the corners."""


def rejected(state: SantoriniState, move: str | dict | Placement | WorkerTurn) -> str:
    with pytest.raises(IllegalMove) as info:
        G.apply(state, G.parse_move(move, state))
    return info.value.reason


def test_registered() -> None:
    assert GAMES["santorini"] is G
    assert G.name == "Santorini"


# Coordinates ------------------------------------------------------------------------


def test_squares_run_a1_to_e5_with_rank_1_at_the_bottom() -> None:
    assert sq("a1") == 0 and sq("e1") == 4 and sq("a2") == 5 and sq("e5") == 24
    move = WorkerTurn(sq("b2"), sq("c3"), sq("d4"))
    assert G.format_move(move) == {"worker": "b2", "to": "c3", "build": "d4"}
    assert G.format_move(move, "cosc322") == {"worker": [2, 2], "to": [3, 3], "build": [4, 4]}
    assert G.format_move(move, "matrix") == {"worker": [3, 1], "to": [2, 2], "build": [1, 3]}
    state = CORNERS
    for coords in ("algebraic", "cosc322", "matrix"):
        assert G.parse_move(G.format_move(move, coords), state, coords) == move
    assert G.format_move(Placement(sq("a1"), sq("e5")), "matrix") == {"place": [[4, 0], [0, 4]]}


def test_encode_state_rows_follow_the_convention() -> None:
    state = G.from_picture("""
        5  0  0  0  0  D
        4  0  0  0  0B 0B
        3  0  0  0A 0  0
        2  0  0  0  0  0
        1  0A 2  0  0  0
            a  b  c  d  e
    """, to_move=1)
    enc = G.encode_state(state)
    assert enc["to_move"] == 1
    assert enc["levels"][0] == [0, 2, 0, 0, 0]  # rank 1 first
    assert enc["levels"][4] == [0, 0, 0, 0, 4]
    assert enc["workers"][0] == [1, 0, 0, 0, 0]
    assert enc["workers"][3] == [0, 0, 0, 2, 2]
    matrix = G.encode_state(state, "matrix")
    assert matrix["levels"][0] == [0, 0, 0, 0, 4]  # top row (rank 5) first
    assert matrix["workers"][1] == [0, 0, 0, 2, 2]
    for coords in ("algebraic", "cosc322", "matrix"):
        back = G.decode_state(G.encode_state(state, coords), coords)
        assert back == state and back.workers == (sq("a1"), sq("c3"), sq("d4"), sq("e4"))


def test_decode_rejects_impossible_positions() -> None:
    good = G.encode_state(CORNERS)
    bad_level = {**good, "levels": [[5] * 5] * 5}
    three = {**good, "workers": [[1, 1, 1, 0, 2], [0] * 5, [0] * 5, [0] * 5, [2, 0, 0, 0, 0]]}
    on_dome = G.encode_state(CORNERS)
    on_dome["levels"] = [[4, 0, 0, 0, 0]] + [[0] * 5] * 4  # under seat 0's worker on a1
    early = G.encode_state(G.start("a1 b1"))
    early["to_move"] = 0  # seat 0 placed, seat 1 has not: it cannot be seat 0's turn
    built_early = G.encode_state(G.start())
    built_early["levels"] = [[1, 0, 0, 0, 0]] + [[0] * 5] * 4  # a building before any worker is placed
    for obj in (bad_level, three, on_dome, early, built_early, {"levels": []}, "nonsense"):
        with pytest.raises(ValueError):
            G.decode_state(obj)
    with pytest.raises(ValueError, match="nothing is built before both seats have placed their workers"):
        G.decode_state(built_early)


# Setup ------------------------------------------------------------------------------


def test_setup_first_seat_places_then_the_other_then_first_moves() -> None:
    state = G.initial_state()
    assert G.to_move(state) == 0
    assert len(G.legal_moves(state)) == 300  # 25 choose 2
    assert all(isinstance(m, Placement) for m in G.legal_moves(state))
    assert "place both workers" in rejected(state, "a1-a2/a3")
    state = G.apply(state, G.parse_move("e5 a1", state))
    assert state.workers == (0, 24, -1, -1) and G.to_move(state) == 1
    assert "place both workers" in rejected(state, "b2-c3/d4")
    assert "a1 is taken" in rejected(state, "a1 c3")
    assert len(G.legal_moves(state)) == 253  # 23 choose 2
    state = G.apply(state, G.parse_move("c3 b2", state))
    assert state.workers == (0, 24, sq("b2"), sq("c3"))
    assert G.to_move(state) == 0
    assert all(isinstance(m, WorkerTurn) for m in G.legal_moves(state))
    assert "already placed" in rejected(state, "b4 d4")


def test_option_first_makes_seat_1_place_and_move_first() -> None:
    state = G.initial_state(first=1)
    assert G.to_move(state) == 1
    state = G.play(state, "c3 a1")
    assert state.workers == (-1, -1, sq("a1"), sq("c3")) and G.to_move(state) == 0
    state = G.play(state, "e5 e1")
    assert state.workers == (sq("e1"), sq("e5"), sq("a1"), sq("c3"))
    assert G.to_move(state) == 1
    assert "not one of your workers" in rejected(state, "e1-e2/e3")
    state = G.play(state, "a1-a2/a3")
    assert G.to_move(state) == 0


def test_placement_notation_is_sorted_and_either_order_parses() -> None:
    state = G.initial_state()
    assert G.parse_move("e5 a1", state) == G.parse_move("a1 e5", state) == Placement(0, 24)
    assert G.notation(Placement(0, 24)) == "a1 e5"
    assert G.parse_move({"place": ["e5", "a1"]}, state) == Placement(0, 24)
    assert "two squares" in rejected(state, "c3 c3")


# Moving -----------------------------------------------------------------------------


def test_a_worker_climbs_one_level_and_steps_down_any_amount() -> None:
    state = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  1  0  0  0
        2  2  0  2  0  0
        1  0A 0  3  0  0B
            a  b  c  d  e
    """, to_move=0)
    G.apply(state, G.parse_move("a1-b1/a1", state))  # level
    up_one = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  0  1  0  0  0
        1  0A 0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    after = G.apply(up_one, G.parse_move("a1-b2/b3", up_one))
    assert after.workers[:2] == (sq("b2"), sq("e5"))
    assert rejected(state, "a1-a2/a3") == "a2 is two levels above a1: a worker climbs at most one level"
    high = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  0  3  0  0  0
        1  0A 0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    assert rejected(high, "a1-b2/c3") == "b2 is three levels above a1: a worker climbs at most one level"
    down = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  3A 0  0
        2  0  0  0  0  0
        1  0  0  0  0  0B
            a  b  c  d  e
    """, to_move=0)  # a worker on level 3 (decoded) steps down three
    after = G.apply(down, G.parse_move("c3-d3/c3", down))
    assert G.outcome(after) is None and after.levels[sq("c3")] == 4


def test_a_worker_moves_only_to_an_adjacent_free_square() -> None:
    state = FACE_TO_FACE
    assert rejected(state, "b2-d4/d5") == "d4 is not next to b2"
    assert rejected(state, "c3-c4/c5").startswith("c3 is not one of your workers")
    assert rejected(state, "d2-d3/d4").startswith("d2 is not one of your workers")
    assert "taken" in rejected(state, "b2-c3/c4")
    assert rejected(state, "e5-e5/e4") == "the worker on e5 must move to another square"


def test_domes_block_moves_and_builds() -> None:
    state = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  0  D  0  0  0
        1  0A D  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    assert rejected(state, "a1-b2/c3") == "b2 has a dome"
    assert rejected(state, "a1-a2/b1") == "you cannot build on b1: it has a dome"
    for move in G.legal_moves(state):
        assert state.levels[move.to] != 4 and state.levels[move.build] != 4


def test_a_build_raises_one_level_and_on_level_3_makes_a_dome() -> None:
    state = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  1  0  0  0  0
        2  0  3  0  0  0
        1  0A 0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    after = G.apply(state, G.parse_move("a1-a2/b2", state))
    assert after.levels[sq("b2")] == 4
    after = G.apply(state, G.parse_move("a1-a2/a3", state))
    assert after.levels[sq("a3")] == 2
    assert after.levels[sq("a1")] == 0 and sum(after.levels) == sum(state.levels) + 1


def test_build_rules() -> None:
    state = FACE_TO_FACE
    after = G.apply(state, G.parse_move("b2-b3/b2", state))  # the square just left is free
    assert after.levels[sq("b2")] == 1
    assert rejected(state, "b2-b3/c3") == "you cannot build on c3: a worker stands there"
    assert rejected(state, "b2-b3/b3") == "you cannot build on b3: your worker stands there"
    assert rejected(state, "b2-b3/b5") == "you cannot build on b5: it is not next to b3"
    assert "you must build" in rejected(state, "b2-b3")
    assert "you must build" in rejected(state, {"worker": "b2", "to": "b3", "build": None})


def test_counting_turns_by_hand() -> None:
    # a1 moves to a2 (5 builds), b1 (4: c1 is taken), b2 (7: c1 taken); e5 mirrors it.
    state = G.from_picture("""
        5  0  0  0B 0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  0  0  0  0  0
        1  0A 0  0B 0  0
            a  b  c  d  e
    """, to_move=0)
    assert len(G.legal_moves(state)) == 32


# Winning ----------------------------------------------------------------------------


def test_moving_up_onto_level_3_wins_at_once_without_a_build() -> None:
    state = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  0  3  0  0  0
        1  2A 0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    win = WorkerTurn(sq("a1"), sq("b2"), None)
    assert win in G.legal_moves(state)
    assert not any(m.worker == sq("a1") and m.to == sq("b2") and m.build is not None for m in G.legal_moves(state))
    assert G.notation(win) == "a1-b2"
    assert G.format_move(win) == {"worker": "a1", "to": "b2", "build": None}
    assert G.parse_move({"worker": "a1", "to": "b2"}, state) == win
    assert "wins at once" in rejected(state, "a1-b2/c3")
    after = G.apply(state, win)
    assert G.outcome(after).winner == 0
    assert "level 3" in G.outcome(after).reason
    assert after.levels == state.levels  # no build happened
    assert G.legal_moves(after) == []
    with pytest.raises(IllegalMove, match="over"):
        G.apply(after, WorkerTurn(sq("e1"), sq("e2"), sq("e3")))
    # the decoded final position knows who won
    assert G.outcome(G.decode_state(G.encode_state(after))).winner == 0
    assert "won" in str(after)


def test_seat_1_wins_too() -> None:
    state = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  0  0  0  3  0
        1  0A 0  0  0  2B
            a  b  c  d  e
    """, to_move=1)
    after = G.play(state, "e1-d2")
    assert G.outcome(after).winner == 1


def test_moving_across_level_3_or_up_to_2_or_building_to_3_does_not_win() -> None:
    across = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  3  0  0
        3  0  0  3A 0  0
        2  0  0  0  0  0
        1  0  0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    after = G.apply(across, G.parse_move("c3-c4/c3", across))
    assert G.outcome(after) is None
    assert "you must build" in rejected(across, "c3-c4")
    up_to_2 = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  0  2  0  0  0
        1  1A 0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    assert G.outcome(G.play(up_to_2, "a1-b2/c3")) is None
    build_3 = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  2  2  0  0  0
        1  0A 0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    after = G.play(build_3, "a1-b1/a2")
    assert after.levels[sq("a2")] == 3 and G.outcome(after) is None
    stepping_across_from_2 = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  2A 3  0  0  0
        1  0  0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    assert "wins at once" in rejected(stepping_across_from_2, "a2-b2/a2")


def test_a_player_with_no_legal_turn_loses() -> None:
    # seat 1's workers on a1 and a2 are walled in by domes; b3 is on level 3.
    state = G.from_picture("""
        5  0  0  0  0  0A
        4  0  0  0A 0  0
        3  D  3  0  0  0
        2  0B D  0  0  0
        1  0B D  0  0  0
            a  b  c  d  e
    """, to_move=0)
    assert G.outcome(state) is None
    after = G.play(state, "c4-c3/b3")  # the dome on b3 closes the box
    assert G.outcome(after).winner == 0
    assert G.outcome(after).reason == "no legal move"
    assert G.legal_moves(after) == []
    # too-high buildings box a worker in as well as domes do; one free worker is enough to play on
    high = G.from_picture("""
        5  0  0  0  0  0A
        4  0  0  0A 0  0
        3  2  2  0  0  0
        2  0B 2  0  0  0
        1  0B 2  0  0  0
            a  b  c  d  e
    """, to_move=1)
    assert G.outcome(high).winner == 0 and G.outcome(high).reason == "no legal move"
    assert G.legal_moves(high) == []
    one_free = G.from_picture("""
        5  0  0  0  0  0A
        4  0  0  0A 0  0
        3  0  0  0  0  0
        2  D  D  0  0  0
        1  0B D  0  0B 0
            a  b  c  d  e
    """, to_move=1)
    assert G.outcome(one_free) is None
    assert {m.worker for m in G.legal_moves(one_free)} == {sq("d1")}


# Text and structured forms ----------------------------------------------------------


def test_parsing() -> None:
    state = G.from_picture("""
        5  0B 0  0  0  0A
        4  0  0  0  0  0
        3  0  0  0  0  0
        2  0  0A 0  0  0
        1  0  0  0  0  0B
            a  b  c  d  e
    """, to_move=0)
    assert G.parse_move(" B2 - c3 / D4 ", state) == WorkerTurn(sq("b2"), sq("c3"), sq("d4"))
    assert G.parse_move("b2-c3", state) == WorkerTurn(sq("b2"), sq("c3"), None)
    assert G.parse_move({"worker": [2, 2], "to": [3, 3], "build": [4, 4]}, state, "cosc322") == WorkerTurn(
        sq("b2"), sq("c3"), sq("d4")
    )
    for junk in ["b2-c3/", "b2 c3 d4", "b2-f3/d4", "a1 e6", {"worker": "b2"}, {"place": ["a1"]}, 7]:
        with pytest.raises(IllegalMove):
            G.parse_move(junk, state)


def test_board_printout() -> None:
    state = G.from_picture("""
        5  0  0  0  0  0B
        4  0  0  0  0  0B
        3  0  0  2A 0  0
        2  0  0  0  0  0
        1  0A D  0  0  0
            a  b  c  d  e
    """, to_move=1)
    text = str(state)
    lines = text.splitlines()
    assert lines[0].startswith("5") and lines[0].split()[-1] == "0B"
    assert lines[4].split()[1:3] == ["0A", "D."]
    assert lines[2].split()[3] == "2A"
    assert lines[5].split() == ["a", "b", "c", "d", "e"]
    assert "seat 1" in lines[-1] and "to move" in lines[-1]
    assert "place" in str(G.initial_state())


# apply and legal_moves agree on every conceivable move ----------------------------------


def test_apply_accepts_exactly_the_legal_moves() -> None:
    rng = random.Random("santorini-exhaustive")
    squares = range(25)
    placements = [Placement(a, b) for a, b in itertools.combinations(squares, 2)]
    turns = [WorkerTurn(w, t, b) for w in squares for t in squares for b in [*squares, None]]
    checked = 0
    for _ in range(2):
        state = G.initial_state(first=rng.randrange(2))
        while G.outcome(state) is None:
            legal = set(G.legal_moves(state))
            if rng.random() < 0.25 or len(legal) < 8:
                candidates = placements + turns if -1 in state.workers else turns
                accepted = set()
                for move in candidates:
                    try:
                        G.apply(state, move)
                    except IllegalMove as err:
                        assert err.reason
                    else:
                        accepted.add(move)
                assert accepted == legal
                checked += 1
            state = G.apply(state, rng.choice(sorted(legal)))
    assert checked >= 5


def test_the_printout_has_a_legend_and_reads_back():
    state = SANTORINI.start("a1 e5", "b2 d4")
    text = str(state)
    assert "cells: the level (0-3, D a dome), then A or B for a worker" in text
    assert SANTORINI.from_picture(text) == state


def test_three_squares_without_dashes_are_explained():
    state = SANTORINI.start("a1 e5", "b2 d4")
    for attempt in (lambda: SANTORINI.apply(state, "a1 b1 c1"), lambda: SANTORINI.play(state, "a1 b1 c1")):
        with pytest.raises(IllegalMove, match=r"three squares .* worker-destination/build: 'a1-b1/c1'"):
            attempt()
    assert SANTORINI.apply(state, "a1-b1/c1") == SANTORINI.play(state, "a1-b1/c1")  # text works as a move
