"""The reference rules of Magnetic Cave."""

from __future__ import annotations

import random

import pytest

from protocol.games import GAMES, IllegalMove, OptionError, Outcome
from protocol.games.magnetic_cave import GRID, MAGNETIC_CAVE, Brick, CaveState

sq = GRID.parse_name


def names(moves: list[Brick]) -> list[str]:
    return [MAGNETIC_CAVE.notation(m) for m in moves]


def reason(state: CaveState, text: str) -> str:
    with pytest.raises(IllegalMove) as info:
        MAGNETIC_CAVE.apply(state, MAGNETIC_CAVE.parse_move(text, state))
    return info.value.reason


def test_registered() -> None:
    assert GAMES["magnetic-cave"] is MAGNETIC_CAVE
    assert MAGNETIC_CAVE.name == "Magnetic Cave"
    assert (MAGNETIC_CAVE.grid.width, MAGNETIC_CAVE.grid.height) == (8, 8)


def test_16_moves_at_the_start_on_the_side_walls() -> None:
    state = MAGNETIC_CAVE.initial_state()
    assert MAGNETIC_CAVE.to_move(state) == 0
    moves = MAGNETIC_CAVE.legal_moves(state)
    assert len(moves) == 16
    assert sorted(names(moves)) == sorted([f"a{r}" for r in range(1, 9)] + [f"h{r}" for r in range(1, 9)])


def test_first_option() -> None:
    assert MAGNETIC_CAVE.initial_state(first=1).to_move == 1
    assert MAGNETIC_CAVE.initial_state(first="white").to_move == 1
    assert MAGNETIC_CAVE.initial_state(first="Black").to_move == 0
    for bad in (2, "red", True):
        with pytest.raises(OptionError, match="first"):
            MAGNETIC_CAVE.initial_state(first=bad)


def test_bricks_stick_to_a_wall_or_a_brick_beside_them() -> None:
    state = MAGNETIC_CAVE.start("a4", "b4")
    moves = names(MAGNETIC_CAVE.legal_moves(state))
    assert "c4" in moves and "h4" in moves
    assert "d4" not in moves and "b4" not in moves and "a4" not in moves
    assert len(moves) == 16  # a4 and b4 replaced by c4 in rank 4
    assert reason(state, "d4") == (
        "d4 is not against a wall or beside a brick: "
        "bricks stick to the side walls or to a brick on their left or right"
    )
    # a brick above or below does not hold a brick up
    assert reason(state, "b5") == (
        "b5 is not against a wall or beside a brick: "
        "bricks stick to the side walls or to a brick on their left or right"
    )
    assert reason(state, "a4") == "a4 is taken"
    assert reason(state, "b4") == "b4 is taken"
    state = MAGNETIC_CAVE.play(state, "h4", "c4")
    assert {"d4", "g4"} <= set(names(MAGNETIC_CAVE.legal_moves(state)))


def test_a_row_with_one_gap_offers_it_once_and_a_full_row_offers_nothing() -> None:
    gap = MAGNETIC_CAVE.from_picture(
        """
        ........
        ........
        ........
        ........
        BWBW.BWB
        ........
        ........
        ........
        """,
        to_move=1,
    )
    moves = names(MAGNETIC_CAVE.legal_moves(gap))
    assert moves.count("e4") == 1
    assert [m for m in moves if m.endswith("4")] == ["e4"]
    full = MAGNETIC_CAVE.play(gap, "e4")
    moves = names(MAGNETIC_CAVE.legal_moves(full))
    assert len(moves) == 14 and not [m for m in moves if m.endswith("4")]
    assert reason(full, "a4") == "a4 is taken"
    assert reason(full, "h4") == "h4 is taken"


WINS = {
    "horizontal": ("a1 h8 b1 h7 c1 h6 d1 h5", "e1"),
    "vertical": ("a1 h1 a2 h2 a3 h3 a4 h4", "a5"),
    # up-right diagonal a1-e5; the bricks on its left hold it up
    "diagonal": ("a1 a2 b2 a3 b3 a4 c3 a5 b4 b5 c4 c5 d4 d5", "e5"),
    # down-right diagonal a5-e1, the same position mirrored top to bottom
    "anti-diagonal": ("a5 a4 b4 a3 b3 a2 c3 a1 b2 b1 c2 c1 d2 d1", "e1"),
}


@pytest.mark.parametrize("direction", sorted(WINS))
def test_five_in_a_row_wins(direction: str) -> None:
    opening, winning = WINS[direction]
    moves = opening.split()
    state = MAGNETIC_CAVE.start(*moves)
    assert MAGNETIC_CAVE.outcome(state) is None
    state = MAGNETIC_CAVE.play(state, winning)
    assert MAGNETIC_CAVE.outcome(state) == Outcome(0, "five in a row")
    assert MAGNETIC_CAVE.legal_moves(state) == []
    assert reason(state, "h1") == "the game is over"
    assert "black (seat 0) won: five in a row" in str(state)
    # the encoding of a won game decodes to the same result
    assert MAGNETIC_CAVE.decode_state(MAGNETIC_CAVE.encode_state(state)).result == state.result


def test_white_wins_too_and_four_is_not_enough() -> None:
    state = MAGNETIC_CAVE.start("h8", "a1", "h7", "a2", "h6", "a3", "g8", "a4", first=0)
    assert MAGNETIC_CAVE.outcome(state) is None
    state = MAGNETIC_CAVE.play(state, "f8", "a5")
    assert MAGNETIC_CAVE.outcome(state) == Outcome(1, "five in a row")


def test_six_in_a_row_also_wins() -> None:
    state = MAGNETIC_CAVE.from_picture(
        """
        ........
        ........
        ........
        ........
        ........
        ........
        WWWW....
        BBB.BBWW
        """,
        to_move=0,
    )
    # d1 is open (a brick on its left); it joins three and two into six
    assert MAGNETIC_CAVE.outcome(MAGNETIC_CAVE.play(state, "d1")) == Outcome(0, "five in a row")


# Colour (col // 2 + row) % 2: runs of at most two in every direction.
def _no_five_colour(col: int, row: int) -> int:
    return 1 + (col // 2 + row) % 2


def test_full_board_without_five_is_a_draw() -> None:
    cells = [_no_five_colour(*GRID.col_row(s)) for s in range(64)]
    assert cells[sq("h8")] == 1
    cells[sq("h8")] = 0
    state = MAGNETIC_CAVE.decode_state({"board": GRID.rows_for(tuple(cells)), "to_move": 0})
    assert MAGNETIC_CAVE.outcome(state) is None
    assert names(MAGNETIC_CAVE.legal_moves(state)) == ["h8"]
    state = MAGNETIC_CAVE.play(state, "h8")
    assert MAGNETIC_CAVE.outcome(state) == Outcome(None, "the board is full")
    assert MAGNETIC_CAVE.legal_moves(state) == []
    assert "draw (the board is full)" in str(state)


def test_a_five_on_the_last_square_wins_rather_than_draws() -> None:
    cells = [_no_five_colour(*GRID.col_row(s)) for s in range(64)]
    # make h4..h8 black save h8, and balance the counts elsewhere
    for name in ("h4", "h5", "h6", "h7"):
        cells[sq(name)] = 1
    cells[sq("h8")] = 0
    blacks, whites = cells.count(1), cells.count(2)
    for s in range(64):  # turn black bricks of rank 1 white until black is one behind
        if blacks <= whites - 1:
            break
        if cells[s] == 1 and s < 8:
            cells[s], blacks, whites = 2, blacks - 1, whites + 1
    state = MAGNETIC_CAVE.decode_state({"board": GRID.rows_for(tuple(cells)), "to_move": 0})
    assert MAGNETIC_CAVE.outcome(state) is None
    state = MAGNETIC_CAVE.play(state, "h8")
    assert MAGNETIC_CAVE.outcome(state) == Outcome(0, "five in a row")


@pytest.mark.parametrize(
    "name, index, cosc322, matrix",
    [
        ("a1", 0, [1, 1], [7, 0]),
        ("h8", 63, [8, 8], [0, 7]),
        ("d5", 35, [5, 4], [3, 3]),
        ("h1", 7, [1, 8], [7, 7]),
        ("a8", 56, [8, 1], [0, 0]),
    ],
)
def test_coordinate_conventions(name: str, index: int, cosc322: list[int], matrix: list[int]) -> None:
    state = MAGNETIC_CAVE.initial_state()
    brick = Brick(index)
    assert MAGNETIC_CAVE.notation(brick) == str(brick) == name
    assert MAGNETIC_CAVE.parse_move(name, state) == brick
    assert MAGNETIC_CAVE.parse_move(name.upper(), state) == brick
    assert MAGNETIC_CAVE.format_move(brick) == {"square": name}
    assert MAGNETIC_CAVE.format_move(brick, "cosc322") == {"square": cosc322}
    assert MAGNETIC_CAVE.format_move(brick, "matrix") == {"square": matrix}
    assert MAGNETIC_CAVE.parse_move({"square": cosc322}, state, "cosc322") == brick
    assert MAGNETIC_CAVE.parse_move({"square": matrix}, state, "matrix") == brick
    assert MAGNETIC_CAVE.parse_move(cosc322, state, "cosc322") == brick
    assert MAGNETIC_CAVE.parse_move({"square": name}, state, "matrix") == brick  # names work everywhere


def test_board_encoding_follows_each_convention() -> None:
    state = MAGNETIC_CAVE.start("a1", "h8")
    algebraic = MAGNETIC_CAVE.encode_state(state)["board"]
    matrix = MAGNETIC_CAVE.encode_state(state, "matrix")["board"]
    cosc322 = MAGNETIC_CAVE.encode_state(state, "cosc322")["board"]
    assert algebraic[0][0] == 1 and algebraic[7][7] == 2  # rank 1 first
    assert cosc322[1 - 1][1 - 1] == 1 and cosc322[8 - 1][8 - 1] == 2
    assert matrix[7][0] == 1 and matrix[0][7] == 2  # top row first
    for coords in ("algebraic", "cosc322", "matrix"):
        assert MAGNETIC_CAVE.decode_state(MAGNETIC_CAVE.encode_state(state, coords), coords) == state


@pytest.mark.parametrize(
    "junk, coords",
    [("i1", "algebraic"), ("a9", "algebraic"), ([9, 1], "cosc322"), ([8, 0], "matrix"), ([0, 0], "cosc322")],
)
def test_squares_off_the_board_are_rejected(junk: object, coords: str) -> None:
    with pytest.raises(IllegalMove):
        MAGNETIC_CAVE.parse_move(junk, MAGNETIC_CAVE.initial_state(), coords)


def test_structured_form_must_be_just_a_square() -> None:
    state = MAGNETIC_CAVE.initial_state()
    with pytest.raises(IllegalMove, match="square"):
        MAGNETIC_CAVE.parse_move({"column": 1}, state)
    with pytest.raises(IllegalMove, match="nothing else"):
        MAGNETIC_CAVE.parse_move({"square": "a1", "colour": "black"}, state)


@pytest.mark.parametrize("bad", [64, -1, True, "a1", None])
def test_apply_rejects_values_that_are_not_squares(bad: object) -> None:
    with pytest.raises(IllegalMove, match="not a square"):
        MAGNETIC_CAVE.apply(MAGNETIC_CAVE.initial_state(), bad)  # type: ignore[arg-type]


def test_decode_rejects_non_positions() -> None:
    with pytest.raises(ValueError, match="neither wall"):
        MAGNETIC_CAVE.from_picture("""
            ........
            ........
            ........
            ........
            ..B.....
            ........
            ........
            W.......
        """, to_move=0)
    with pytest.raises(ValueError, match="neither wall"):
        MAGNETIC_CAVE.from_picture("""
            ........
            ........
            ........
            ........
            B.W.....
            ........
            ........
            W.......
        """, to_move=1)
    with pytest.raises(ValueError, match="seat 0 cannot be to move"):
        MAGNETIC_CAVE.from_picture("""
            ........
            ........
            ........
            ........
            B.......
            ........
            ........
            ........
        """, to_move=0)
    with pytest.raises(ValueError, match="alternate"):
        MAGNETIC_CAVE.from_picture("""
            ........
            ........
            ........
            ........
            BB......
            ........
            ........
            ........
        """, to_move=1)
    with pytest.raises(ValueError, match="both sides"):
        MAGNETIC_CAVE.from_picture("""
            BBBBB...
            WWWWW...
            ........
            ........
            ........
            ........
            ........
            ........
        """, to_move=0)
    good = MAGNETIC_CAVE.encode_state(MAGNETIC_CAVE.initial_state())
    with pytest.raises(ValueError, match="cells"):
        MAGNETIC_CAVE.decode_state({**good, "board": [[3] * 8] + good["board"][1:]})
    with pytest.raises(ValueError, match="to_move"):
        MAGNETIC_CAVE.decode_state({**good, "to_move": "0"})
    with pytest.raises(ValueError):
        MAGNETIC_CAVE.decode_state([])


def test_board_printout() -> None:
    lines = str(MAGNETIC_CAVE.start("a1", "h8", "b1")).splitlines()
    assert lines[0] == "8  . . . . . . . W"
    assert lines[7] == "1  B B . . . . . ."
    assert lines[8].split() == list("abcdefgh")
    assert lines[9] == "white (seat 1) to move"


def test_legal_moves_match_the_rule_everywhere() -> None:
    """In random positions a square is listed exactly when ``apply`` accepts it."""
    rng = random.Random("cave-rule")
    for _ in range(30):
        state = MAGNETIC_CAVE.initial_state(first=rng.randrange(2))
        for _ in range(rng.randrange(0, 40)):
            if MAGNETIC_CAVE.outcome(state):
                break
            state = MAGNETIC_CAVE.apply(state, rng.choice(MAGNETIC_CAVE.legal_moves(state)))
        if MAGNETIC_CAVE.outcome(state):
            continue
        accepted = []
        for square in range(64):
            try:
                MAGNETIC_CAVE.apply(state, Brick(square))
            except IllegalMove:
                continue
            accepted.append(Brick(square))
        assert accepted == MAGNETIC_CAVE.legal_moves(state)
