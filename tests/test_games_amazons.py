"""The reference rules of the Game of the Amazons."""

from __future__ import annotations

import random

import pytest

from protocol.games import GAMES, IllegalMove, OptionError, Outcome
from protocol.games.amazons import AMAZONS, GRID, AmazonsMove, AmazonsState

sq = GRID.parse_name


def move(text: str) -> AmazonsMove:
    return AMAZONS.parse_move(text, AMAZONS.initial_state())


def reason(state: AmazonsState, text: str) -> str:
    with pytest.raises(IllegalMove) as info:
        AMAZONS.apply(state, AMAZONS.parse_move(text, state))
    return info.value.reason


def test_registered() -> None:
    assert GAMES["amazons"] is AMAZONS
    assert AMAZONS.name == "Game of the Amazons"
    assert (AMAZONS.grid.width, AMAZONS.grid.height) == (10, 10)


def test_initial_position() -> None:
    state = AMAZONS.initial_state()
    assert state == AMAZONS.from_picture("""
        10  . . . B . . B . . .
         9  . . . . . . . . . .
         8  . . . . . . . . . .
         7  B . . . . . . . . B
         6  . . . . . . . . . .
         5  . . . . . . . . . .
         4  W . . . . . . . . W
         3  . . . . . . . . . .
         2  . . . . . . . . . .
         1  . . . W . . W . . .
            a b c d e f g h i j
    """, to_move=0)
    assert AMAZONS.to_move(state) == 0
    assert AMAZONS.outcome(state) is None
    rows = AMAZONS.encode_state(state)["board"]
    assert rows[6][0] == rows[9][3] == rows[9][6] == rows[6][9] == 1  # a7 d10 g10 j7
    assert rows[3][0] == rows[0][3] == rows[0][6] == rows[3][9] == 2  # a4 d1 g1 j4
    assert sum(map(sum, rows)) == 4 * 1 + 4 * 2


@pytest.mark.parametrize("first", [0, 1, "black", "WHITE"])
def test_2176_turns_at_the_start(first: int | str) -> None:
    state = AMAZONS.initial_state(first=first)
    moves = AMAZONS.legal_moves(state)
    assert len(moves) == 2176
    assert len(set(moves)) == 2176
    stone = state.to_move + 1
    assert all(state.board[m.queen] == stone for m in moves)


def test_first_option() -> None:
    assert AMAZONS.initial_state(first=1).to_move == 1
    assert AMAZONS.initial_state(first="white").to_move == 1
    assert AMAZONS.initial_state(first=" Black ").to_move == 0
    for bad in ("green", 2, True, None):
        with pytest.raises(OptionError, match="first"):
            AMAZONS.initial_state(first=bad)


def test_a_turn_moves_the_queen_and_shoots() -> None:
    state = AMAZONS.start("d1-d7/g7", first=1)
    assert state.board[sq("d1")] == 0
    assert state.board[sq("d7")] == 2
    assert state.board[sq("g7")] == 3
    assert state.to_move == 0
    assert AMAZONS.notation(AmazonsMove(sq("d1"), sq("d7"), sq("g7"))) == "d1-d7/g7"


def test_notation_is_tolerant() -> None:
    expected = AmazonsMove(sq("d1"), sq("d7"), sq("g7"))
    state = AMAZONS.initial_state()
    for text in ["d1-d7/g7", "D1-D7/G7", "  d1 - d7 / g7 ", "d1 d7 g7", "d1-d7-g7"]:
        assert AMAZONS.parse_move(text, state) == expected
    assert str(expected) == "d1-d7/g7"
    assert AMAZONS.parse_move("a10-j1/b2", state) == AmazonsMove(90, 9, 11)


@pytest.mark.parametrize("junk", ["d1-d7", "d1-d7/g7/h8", "d1-d7/k7", "d0-d7/g7", "queen", 17, [1, 2, 3]])
def test_notation_junk_is_rejected(junk: object) -> None:
    with pytest.raises(IllegalMove):
        AMAZONS.parse_move(junk, AMAZONS.initial_state())


@pytest.mark.parametrize(
    "name, cosc322, matrix",
    [("a1", [1, 1], [9, 0]), ("j10", [10, 10], [0, 9]), ("d1", [1, 4], [9, 3]), ("a7", [7, 1], [3, 0])],
)
def test_coordinate_conventions(name: str, cosc322: list[int], matrix: list[int]) -> None:
    square = sq(name)
    assert GRID.format(square, "algebraic") == name
    assert GRID.format(square, "cosc322") == cosc322
    assert GRID.format(square, "matrix") == matrix
    assert GRID.parse(cosc322, "cosc322") == GRID.parse(matrix, "matrix") == square


def test_structured_form_in_every_convention() -> None:
    state = AMAZONS.initial_state()
    m = move("d10-d4/a1")
    assert AMAZONS.format_move(m) == {"queen": "d10", "to": "d4", "arrow": "a1"}
    assert AMAZONS.format_move(m, "cosc322") == {"queen": [10, 4], "to": [4, 4], "arrow": [1, 1]}
    assert AMAZONS.format_move(m, "matrix") == {"queen": [0, 3], "to": [6, 3], "arrow": [9, 0]}
    for coords in ("algebraic", "cosc322", "matrix"):
        assert AMAZONS.parse_move(AMAZONS.format_move(m, coords), state, coords) == m
    with pytest.raises(IllegalMove, match="arrow"):
        AMAZONS.parse_move({"queen": "d10", "to": "d4"}, state)
    with pytest.raises(IllegalMove, match="spin"):
        AMAZONS.parse_move({"queen": "d10", "to": "d4", "arrow": "a1", "spin": 1}, state)
    with pytest.raises(IllegalMove, match="off the board"):
        AMAZONS.parse_move({"queen": [11, 4], "to": [4, 4], "arrow": [1, 1]}, state, "cosc322")


def test_encode_decode_in_every_convention() -> None:
    state = AMAZONS.start("d10-d4/a1", "a4-b4/b10")
    for coords in ("algebraic", "cosc322", "matrix"):
        assert AMAZONS.decode_state(AMAZONS.encode_state(state, coords), coords) == state
    matrix = AMAZONS.encode_state(state, "matrix")["board"]
    assert matrix[9][0] == 3 and matrix[0][1] == 3 and matrix[6][3] == 1 and matrix[6][1] == 2


WHITE_ON_E5 = AMAZONS.from_picture("""
    10  . . . B . . B . . .
     9  . . . . . . . . . .
     8  . . . . . . . . . .
     7  B . . . . . . . . B
     6  . . . . . . . . . .
     5  . . . . W . . . . .
     4  W . . . . . . . . .
     3  . . . . . . . . . .
     2  . . . . . . . . . .
     1  . . . W . . W . . .
        a b c d e f g h i j
""", to_move=1)
"""The start, but for white's queen from j4 on e5; white to move."""


def test_queens_block_queens_and_arrows() -> None:
    state = AMAZONS.initial_state(first=1)  # white to move
    assert reason(state, "a4-a8/a9") == "the queen on a4 cannot reach a8: a7 is in the way"
    assert reason(state, "a4-a7/a8") == "the queen on a4 cannot reach a7: a7 holds a black queen"
    assert reason(state, "a4-j4/j5") == "the queen on a4 cannot reach j4: j4 holds a white queen"
    assert reason(state, "d1-d5/d10") == "the arrow cannot land on d10: it holds a black queen"
    state = WHITE_ON_E5
    # from d5 the arrow flies towards j5 and meets the queen on e5
    assert reason(state, "d1-d5/f5") == "the arrow cannot reach f5 from d5: e5 is in the way"
    assert reason(state, "d1-d5/e5") == "the arrow cannot land on e5: it holds a white queen"


def test_arrows_block_queens_and_arrows() -> None:
    state = AMAZONS.from_picture("""
        10  . . . B . . B . . .
         9  . . . . . . . . . .
         8  . . . . . . . . . .
         7  B . x . . . . . . B
         6  . . . . . . . . . .
         5  . . . . . . . . . .
         4  W . . x . . . . . W
         3  . . . . . . . . . .
         2  . . . . . . . . . .
         1  . . . W . . W . . .
            a b c d e f g h i j
    """, to_move=1)
    assert reason(state, "d1-d7/d8") == "the queen on d1 cannot reach d7: d4 is in the way"
    assert reason(state, "d1-d4/d5") == "the queen on d1 cannot reach d4: d4 holds an arrow"
    assert reason(state, "d1-d3/d6") == "the arrow cannot reach d6 from d3: d4 is in the way"
    assert reason(state, "g1-g7/c7") == "the arrow cannot land on c7: it holds an arrow"
    assert reason(state, "g1-g7/b7") == "the arrow cannot reach b7 from g7: c7 is in the way"
    legal = set(AMAZONS.legal_moves(state))
    assert move("d1-d3/d2") in legal
    assert move("d1-d3/d4") not in legal
    assert move("g1-g7/d7") in legal and move("g1-g7/c7") not in legal


def test_arrow_may_use_the_vacated_square() -> None:
    state = WHITE_ON_E5
    onto = move("e5-e7/e5")  # lands where the queen stood
    through = move("e5-e7/e2")  # flies over the square the queen left
    legal = set(AMAZONS.legal_moves(state))
    assert onto in legal and through in legal
    after = AMAZONS.apply(state, through)
    assert after.board[sq("e5")] == 0 and after.board[sq("e7")] == 2 and after.board[sq("e2")] == 3
    after = AMAZONS.apply(state, onto)
    assert after.board[sq("e5")] == 3 and after.board[sq("e7")] == 2


def test_reasons_for_shapes_that_are_not_queen_moves() -> None:
    state = AMAZONS.initial_state(first=1)
    assert reason(state, "d1-e3/e4") == "d1 to e3 is not a queen move"
    assert reason(state, "d1-d1/d2") == "the queen on d1 must move at least one square"
    assert reason(state, "d1-d7/d7") == "the arrow must fly at least one square from d7"
    assert reason(state, "d1-d7/e9") == "the arrow cannot fly from d7 to e9: that is not a queen move"


def test_only_your_own_queens_move() -> None:
    state = AMAZONS.initial_state()  # black to move
    assert reason(state, "a4-a5/a6") == "a4 is not one of your queens: it holds a white queen"
    assert reason(state, "e5-e6/e7") == "e5 is not one of your queens: it is empty"
    state = AMAZONS.initial_state(first="white")
    assert reason(state, "a7-a8/a9") == "a7 is not one of your queens: it holds a black queen"
    state = AMAZONS.from_picture("""
        10  . . . B . . B . . .
         9  . . . . . . . . . .
         8  . . . . . . . . . .
         7  B . . . . . . . . B
         6  . . . . . . . . . .
         5  . . . . x . . . . .
         4  W . . . . . . . . W
         3  . . . . . . . . . .
         2  . . . . . . . . . .
         1  . . . W . . W . . .
            a b c d e f g h i j
    """, to_move=0)
    assert reason(state, "e5-e6/e7") == "e5 is not one of your queens: it holds an arrow"


@pytest.mark.parametrize("bad", [(1, 2), (0, 3, 100), (0, 3, -1), ("a", "b", "c"), (True, 3, 4), 5, None])
def test_apply_rejects_values_that_are_not_moves(bad: object) -> None:
    with pytest.raises(IllegalMove, match="not an Amazons move"):
        AMAZONS.apply(AMAZONS.initial_state(), bad)  # type: ignore[arg-type]


def test_shooting_the_last_exit_wins() -> None:
    # The white queens sit in the a1 corner, walled in except for c1.
    state = AMAZONS.from_picture("""
        10  B . . . . . . . . B
         9  . . . . . . . . . .
         8  . . . . . . . . . .
         7  . . . . . B . . . .
         6  . . . . . . . . . .
         5  . . . . . . . . . .
         4  . . . . . . . . . .
         3  x x x . . . . . . .
         2  W W x . . . . . . .
         1  W W . . . . . . . B
            a b c d e f g h i j
    """, to_move=0)
    assert AMAZONS.outcome(state) is None
    assert {m.queen for m in AMAZONS.legal_moves(AMAZONS.from_picture(str(state), to_move=1))} == {
        sq("b1"),
        sq("b2"),
    }
    state = AMAZONS.play(state, "j1-d1/c1")
    assert AMAZONS.outcome(state) == Outcome(0, "no legal move")
    assert AMAZONS.legal_moves(state) == []
    with pytest.raises(IllegalMove, match="the game is over"):
        AMAZONS.apply(state, AmazonsMove(sq("b1"), sq("c1"), sq("b1")))
    assert "black (seat 0) won" in str(state)


def test_player_to_move_without_a_turn_loses() -> None:
    # c1 too is shot: white's queens in the corner have no empty neighbour
    state = AMAZONS.from_picture("""
        10  B . . . . . . . . B
         9  . . . . . . . . . .
         8  . . . . . . . . . .
         7  . . . . . B . . . .
         6  . . . . . . . . . .
         5  . . . . . . . . . .
         4  . . . . . . . . . .
         3  x x x . . . . . . .
         2  W W x . . . . . . .
         1  W W x . . . . . . B
            a b c d e f g h i j
    """, to_move=1)
    assert AMAZONS.outcome(state) == Outcome(0, "no legal move")
    assert AMAZONS.legal_moves(state) == []
    # the same board with black to move is still running
    assert AMAZONS.outcome(AMAZONS.from_picture(str(state), to_move=0)) is None
    # and black loses when its own queens are the trapped ones
    state = AMAZONS.from_picture("""
        10  W . . . . . . . . W
         9  . . . . . . . . . .
         8  . . . . . . . . . .
         7  . . . . . W . . . .
         6  . . . . . . . . . .
         5  . . . . . . . . . .
         4  . . . . . . . . . .
         3  x x x . . . . . . .
         2  B B x . . . . . . .
         1  B B x . . . . . . W
            a b c d e f g h i j
    """, to_move=0)
    assert AMAZONS.outcome(state) == Outcome(1, "no legal move")
    assert "white (seat 1) won" in str(state)


def test_a_single_empty_neighbour_is_enough() -> None:
    state = AMAZONS.from_picture("""
        10  B . . . . . . . . B
         9  . . . . . . . . . .
         8  . . . . . . . . . .
         7  . . . . . B . . . .
         6  . . . . . . . . . .
         5  . . . . . . . . . .
         4  . . . . . . . . . .
         3  x x x . . . . . . .
         2  W W x x . . . . . .
         1  W W . x . . . . . B
            a b c d e f g h i j
    """, to_move=1)
    assert AMAZONS.legal_moves(state) == [
        AmazonsMove(sq("b1"), sq("c1"), sq("b1")),
        AmazonsMove(sq("b2"), sq("c1"), sq("b2")),
    ]


def test_decode_rejects_non_positions() -> None:
    good = AMAZONS.encode_state(AMAZONS.initial_state())
    with pytest.raises(ValueError, match="queens"):
        AMAZONS.decode_state({**good, "board": [[0] * 10 for _ in range(10)]})
    with pytest.raises(ValueError, match="cells"):
        AMAZONS.decode_state({**good, "board": [[4] * 10] + good["board"][1:]})
    with pytest.raises(ValueError, match="cells"):
        AMAZONS.decode_state({**good, "board": [[True] + [0] * 9] + good["board"][1:]})
    with pytest.raises(ValueError, match="to_move"):
        AMAZONS.decode_state({**good, "to_move": 2})
    with pytest.raises(ValueError):
        AMAZONS.decode_state({"board": good["board"]})
    with pytest.raises(ValueError):
        AMAZONS.decode_state({**good, "board": good["board"][:9]})


def test_board_printout() -> None:
    text = str(AMAZONS.start("d10-d4/a1"))
    lines = text.splitlines()
    assert lines[0].startswith("10  . . . . . . B . . .")
    assert lines[6] == " 4  W . . B . . . . . W"
    assert lines[9] == " 1  x . . W . . W . . ."
    assert lines[10].split() == list("abcdefghij")
    assert lines[11] == "white (seat 1) to move"


def test_apply_agrees_with_legal_moves_on_every_triple() -> None:
    """Brute force: every (queen, to, arrow) for the side to move is legal exactly when listed."""
    rng = random.Random("amazons-brute")
    for _ in range(4):
        state = AMAZONS.initial_state(first=rng.randrange(2))
        for _ in range(rng.randrange(10, 40)):
            state = AMAZONS.apply(state, rng.choice(AMAZONS.legal_moves(state)))
            if AMAZONS.outcome(state):
                break
        legal = set(AMAZONS.legal_moves(state))
        stone = state.to_move + 1
        accepted = set()
        for queen in (s for s in range(100) if state.board[s] == stone):
            for to in range(100):
                for arrow in range(100):
                    candidate = AmazonsMove(queen, to, arrow)
                    try:
                        AMAZONS.apply(state, candidate)
                    except IllegalMove:
                        continue
                    accepted.add(candidate)
        assert accepted == legal
