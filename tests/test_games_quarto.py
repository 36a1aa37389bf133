"""The rules of Quarto, pinned."""

from __future__ import annotations

import random

import pytest

from protocol.games import GAMES, IllegalMove
from protocol.games.quarto import (
    EMPTY,
    GRID,
    LINES,
    QUARTO,
    VALUE_WORDS,
    QuartoMove,
    QuartoState,
    shared_attributes,
)

G = QUARTO

# A full board on which no rank, file or diagonal shares an attribute (found by a
# random search, checked below): DRAWN[r] is rank r + 1, files a-d.
DRAWN = [
    ["1100", "1000", "0010", "0111"],
    ["0101", "0000", "1010", "0100"],
    ["1011", "1110", "1001", "0011"],
    ["0001", "1101", "0110", "1111"],
]

ALL_LINES = (
    [[f"{f}{r}" for f in "abcd"] for r in "1234"]
    + [[f"{f}{r}" for r in "1234"] for f in "abcd"]
    + [["a1", "b2", "c3", "d4"], ["a4", "b3", "c2", "d1"]]
)


def sq(name: str) -> int:
    return GRID.parse_name(name)


def p(text: str) -> int:
    return int(text, 2)


def rejected(state: QuartoState, move: str | dict | QuartoMove) -> str:
    with pytest.raises(IllegalMove) as info:
        G.apply(state, G.parse_move(move, state))
    return info.value.reason


def place_in_order(squares: list[str], pieces: list[int], first: int = 0) -> QuartoState:
    """Hand over and place ``pieces`` on ``squares`` in order, ending the game if it ends."""
    state = G.apply(G.initial_state(first=first), QuartoMove(None, pieces[0]))
    for i, name in enumerate(squares):
        nxt = pieces[i + 1] if i + 1 < len(pieces) else None
        state = G.apply(state, QuartoMove(sq(name), nxt))
    return state


def test_registered_and_lines() -> None:
    assert GAMES["quarto"] is G
    assert G.name == "Quarto"
    assert sorted(sorted(squares) for _, squares in LINES) == sorted(sorted(sq(n) for n in line) for line in ALL_LINES)


# The opening and the hand-over --------------------------------------------------------


def test_the_opening_turn_only_chooses_a_piece() -> None:
    state = G.initial_state()
    assert G.to_move(state) == 0 and state.in_hand is None
    assert G.legal_moves(state) == [QuartoMove(None, c) for c in range(16)]
    assert G.parse_move("0101", state) == QuartoMove(None, 5)
    assert G.notation(QuartoMove(None, 5)) == "0101"
    assert "only chooses a piece" in rejected(state, "c3 0101")
    assert "only chooses a piece" in rejected(state, "c3")
    assert rejected(state, QuartoMove(None, None)) == "you must choose a piece for your opponent"
    state = G.apply(state, QuartoMove(None, 5))
    assert state.in_hand == 5 and G.to_move(state) == 1 and state.board == (-1,) * 16


def test_option_first() -> None:
    state = G.initial_state(first=1)
    assert G.to_move(state) == 1
    state = G.play(state, "0000", "a1 1111")
    assert G.to_move(state) == 1 and state.in_hand == 15


def test_hand_over_rules_while_the_game_goes_on() -> None:
    state = G.start("0101", "c3 0011")
    assert state.board[sq("c3")] == 5 and state.in_hand == 3 and G.to_move(state) == 0
    assert len(G.legal_moves(state)) == 15 * 14
    assert rejected(state, "a1 0011") == "the piece you were given is 0011, it cannot be handed back"
    assert rejected(state, "a1 0101") == "piece 0101 is already on the board"
    assert rejected(state, "a1") == "you must choose a piece for your opponent"
    assert rejected(state, "c3 1111") == "c3 is taken"
    assert "you must place the piece you were given (0011)" in rejected(state, "1111")
    after = G.play(state, "a1 1111")
    assert after.board[sq("a1")] == 3 and after.in_hand == 15
    second = G.start("0101")
    assert len(G.legal_moves(second)) == 16 * 15


# Winning ----------------------------------------------------------------------------


def pieces_sharing_only(digit: int, value: int) -> list[int]:
    """Four pieces whose digit ``digit`` (0 = leftmost) is ``value`` and that share nothing else."""
    others = ["000", "111", "011", "100"]
    texts = [o[:digit] + str(value) + o[digit:] for o in others]
    return [p(t) for t in texts]


@pytest.mark.parametrize("line", ALL_LINES, ids=["-".join(line) for line in ALL_LINES])
def test_every_line_wins_by_every_attribute_with_ones_and_zeros(line: list[str]) -> None:
    for digit in range(4):
        for value in (0, 1):
            pieces = pieces_sharing_only(digit, value)
            assert shared_attributes(pieces) == [(digit, value)]
            order = line[digit:] + line[:digit]  # vary which square completes the line
            before = place_in_order(order[:3], pieces)
            assert G.outcome(before) is None and G.to_move(before) == 0
            last = sq(order[3])
            assert QuartoMove(last, None) in G.legal_moves(before)
            assert not any(m.square == last and m.piece is not None for m in G.legal_moves(before))
            assert "wins" in rejected(before, QuartoMove(last, p("1111") if value == 0 else 0))
            after = G.apply(before, QuartoMove(last, None))
            outcome = G.outcome(after)
            assert outcome is not None and outcome.winner == 0  # seat 0 placed the fourth piece
            assert outcome.reason.endswith(f": all {VALUE_WORDS[digit][value]}")  # what the line shares, in words
            assert G.legal_moves(after) == []
            assert after.in_hand is None
            decoded = G.decode_state(G.encode_state(after))
            assert decoded.result == outcome


def test_the_player_who_places_the_fourth_piece_wins() -> None:
    pieces = pieces_sharing_only(0, 1)
    state = place_in_order(["a1", "b1", "c1", "d1"], pieces)
    # seat 0 opens; seat 1 places a1, seat 0 b1, seat 1 c1, seat 0 d1.
    assert G.outcome(state).winner == 0
    state = place_in_order(["a1", "b1", "c1", "d1"], pieces, first=1)
    assert G.outcome(state).winner == 1
    assert "won" in str(state)


def test_a_line_with_no_common_attribute_does_not_win() -> None:
    pieces = [p("0000"), p("1111"), p("0011"), p("1100")]
    assert shared_attributes(pieces) == []
    for line in ALL_LINES:
        state = place_in_order(line, [*pieces, p("0101")])
        assert G.outcome(state) is None and state.in_hand == p("0101")
        with pytest.raises(IllegalMove, match="choose a piece"):
            place_in_order(line, pieces)
    # three sharing pieces in a line plus a fourth elsewhere do not win either
    state = place_in_order(["a1", "b1", "c1", "d2"], [*pieces_sharing_only(2, 1), p("0101")])
    assert G.outcome(state) is None


def test_full_board_draw_and_no_hand_over_after_the_last_placement() -> None:
    board = [p(DRAWN[r][c]) for r in range(4) for c in range(4)]
    assert sorted(board) == list(range(16))
    for _, squares in LINES:
        assert shared_attributes([board[s] for s in squares]) == []
    names = [GRID.name(s) for s in range(16)]
    state = place_in_order(names[:15], board)
    assert G.outcome(state) is None and state.in_hand == board[15]
    assert G.legal_moves(state) == [QuartoMove(15, None)]
    assert "fills the board" in rejected(state, QuartoMove(15, 0))
    state = G.apply(state, G.parse_move("d4", state))
    assert G.outcome(state).winner is None
    assert "full" in G.outcome(state).reason
    assert G.legal_moves(state) == []
    assert G.decode_state(G.encode_state(state)).result == G.outcome(state)
    # at the 15th placement only one piece is left to hand over
    before = place_in_order(names[:14], board)
    assert QuartoMove(14, board[15]) in G.legal_moves(before)
    assert {m.piece for m in G.legal_moves(before)} <= {board[15], None}


def test_a_win_on_the_last_square_is_a_win_not_a_draw() -> None:
    board = [p(DRAWN[r][c]) for r in range(4) for c in range(4)]
    d4 = sq("d4")
    through_d4 = {name for name, squares in LINES if d4 in squares}
    # swap d4's piece with another so that the only winning lines run through d4
    for other in range(15):
        swapped = board[:]
        swapped[other], swapped[d4] = swapped[d4], swapped[other]
        wins = {name for name, squares in LINES if shared_attributes([swapped[s] for s in squares])}
        if wins and wins <= through_d4:
            break
    else:
        pytest.fail("no suitable swap")
    state = place_in_order([GRID.name(s) for s in range(16)], swapped)
    assert G.outcome(state).winner == 0  # seat 0 placed the 16th piece
    assert "sharing" in G.outcome(state).reason


# Forms ------------------------------------------------------------------------------


def test_notation_and_structured_forms() -> None:
    state = G.start("0101")
    move = QuartoMove(sq("c3"), p("0011"))
    assert G.notation(move) == "c3 0011"
    assert G.notation(QuartoMove(sq("c3"), None)) == "c3"
    assert G.format_move(move) == {"square": "c3", "piece": "0011"}
    assert G.format_move(move, "cosc322") == {"square": [3, 3], "piece": "0011"}
    assert G.format_move(move, "matrix") == {"square": [1, 2], "piece": "0011"}
    assert G.format_move(QuartoMove(None, 5)) == {"square": None, "piece": "0101"}
    assert G.parse_move({"square": "c3", "piece": 3}, state) == move
    assert G.parse_move({"square": [1, 2], "piece": "0011"}, state, "matrix") == move
    assert G.parse_move({"piece": "0101"}, state) == QuartoMove(None, 5)
    assert G.parse_move({"square": "c3"}, state) == QuartoMove(sq("c3"), None)
    assert G.parse_move(" C3   0011 ", state) == move
    for junk in [
        "0102",
        "c3 01",
        "e1 0000",
        "c3 0011 0101",
        {"square": None, "piece": None},
        {"piece": 16},
        {"piece": True},
        {"square": "c3", "colour": 1},
    ]:
        with pytest.raises(IllegalMove):
            G.parse_move(junk, state)


def refused(state: QuartoState, text: str) -> str:
    with pytest.raises(IllegalMove) as info:
        G.parse_move(text, state)
    return info.value.reason


def test_text_that_is_not_a_move_is_refused_with_what_this_point_of_the_turn_asks_for() -> None:
    """A walk-through typed 'zz' while choosing a piece and was told squares run from a1 to d4; 'b1-0001' while
    placing was 'not a square', without the form 'b1 0001'."""
    opening = G.initial_state()
    asked = "choose a piece for your opponent: four binary digits (colour, shape, height, hollow), like 0110"
    for text in ("zz", "b1-0001", "0120", "c3 01", "e1 0000", "1 2 3"):
        assert refused(opening, text) == f"{text!r} is not a piece; {asked}"
    assert G.parse_move("0110", opening) == QuartoMove(None, p("0110"))  # the example is a move here
    placing = G.start("0011", "a1 0101")
    assert refused(placing, "b1-0001") == ("'b1-0001' is not a move: write the square, a space, then the piece: "
                                           "'b1 0001'")
    assert refused(placing, "B1/0001").endswith("then the piece: 'b1 0001'")
    form = ("place 0101 on an empty square, then choose a piece for your opponent: the square, a space and the "
            "piece's four binary digits, like '")
    for text, start in (("zz", "'zz' is neither a square nor a piece; "), ("e1 0000", "'e1' is not a square (a1 to "
                        "d4); "), ("c3 01", "'01' is not a piece; "), ("c3 0011 0101", "'c3 0011 0101' is not a "
                        "Quarto move; ")):
        reason = refused(placing, text)
        assert reason.startswith(start + form) and reason.endswith("' (just the square when the placement wins)")
        example = reason[len(start + form):].split("'")[0]
        assert G.parse_move(example, placing) in G.legal_moves(placing) and " " in example, reason
    board = [p(DRAWN[r][c]) for r in range(4) for c in range(4)]
    last = place_in_order([GRID.name(s) for s in range(15)], board)
    assert G.legal_moves(last) == [QuartoMove(15, None)]
    assert refused(last, "zz") == "'zz' is neither a square nor a piece; place 1111 on the last empty square: write " \
                                  "just d4"


def test_the_example_a_refusal_gives_is_a_legal_move_in_every_position() -> None:
    """Wherever a piece is placed (two squares or more empty), a refusal's example parses to a legal move of that
    position, also when some placements win (the example's square then must not: a winning placement hands nothing)."""
    rng = random.Random("quarto-examples")
    checked = 0
    for _ in range(200):
        state = G.initial_state()
        while G.outcome(state) is None:
            legal = G.legal_moves(state)
            if state.in_hand is not None and state.board.count(EMPTY) > 1:
                reason = refused(state, "zz")
                example = reason.split("like '")[1].split("'")[0]
                assert G.parse_move(example, state) in legal, (reason, state)
                checked += 1
            state = G.apply(state, rng.choice(legal))
    assert checked > 1000


def test_every_legal_move_is_read_back_in_any_of_its_spellings() -> None:
    rng = random.Random("quarto-spellings")
    for _ in range(10):
        state = G.initial_state()
        while G.outcome(state) is None:
            legal = G.legal_moves(state)
            for move in rng.sample(legal, min(len(legal), 20)):
                text = G.notation(move)
                for spelling in (text, text.upper(), f"  {text}  ", text.replace(" ", ","), text.replace(" ", ", ")):
                    assert G.parse_move(spelling, state) == move, spelling
            state = G.apply(state, rng.choice(legal))


def test_state_encoding() -> None:
    state = G.start("0101", "a1 0011", "d3 1111")
    enc = G.encode_state(state)
    assert enc == {
        "board": [["0101", None, None, None], [None] * 4, [None, None, None, "0011"], [None] * 4],
        "in_hand": "1111",
        "to_move": 1,
    }
    matrix = G.encode_state(state, "matrix")
    assert matrix["board"][3][0] == "0101" and matrix["board"][1][3] == "0011"
    for coords in ("algebraic", "cosc322", "matrix"):
        assert G.decode_state(G.encode_state(state, coords), coords) == state
    assert G.decode_state(G.encode_state(G.initial_state())) == G.initial_state()


def test_decode_rejects_impossible_positions() -> None:
    good = G.encode_state(G.start("0101", "a1 0011"))
    twice = {**good, "board": [["0101", "0101", None, None]] + [[None] * 4] * 3}
    in_hand_on_board = {**good, "in_hand": "0101"}
    nothing_in_hand = {**good, "in_hand": None}
    bad_piece = {**good, "in_hand": "2"}
    won = G.encode_state(place_in_order(["a1", "b1", "c1", "d1"], pieces_sharing_only(0, 1)))
    won["in_hand"] = "0000"
    for obj in (twice, in_hand_on_board, nothing_in_hand, bad_piece, won, {"board": []}, None):
        with pytest.raises(ValueError):
            G.decode_state(obj)


def test_board_printout() -> None:
    text = str(G.start("0101", "a1 0011"))
    lines = text.splitlines()
    assert lines[0].startswith("4") and "...." in lines[0]
    assert lines[3].split()[:2] == ["1", "0101"]
    assert lines[4].split() == ["a", "b", "c", "d"]
    assert "0011" in lines[-1] and "seat 0" in lines[-1]
    assert "choose" in str(G.initial_state())


# apply and legal_moves agree on every conceivable move ----------------------------------


def test_apply_accepts_exactly_the_legal_moves() -> None:
    rng = random.Random("quarto-exhaustive")
    candidates = [QuartoMove(s, c) for s in [*range(16), None] for c in [*range(16), None]]
    for _ in range(40):
        state = G.initial_state(first=rng.randrange(2))
        while True:
            legal = set(G.legal_moves(state))
            accepted = set()
            for move in candidates:
                try:
                    G.apply(state, move)
                except IllegalMove as err:
                    assert err.reason
                else:
                    accepted.add(move)
            assert accepted == legal
            if G.outcome(state) is not None:
                break
            state = G.apply(state, rng.choice(sorted(legal, key=str)))
