"""Connect Four's rules, pinned down."""

from __future__ import annotations

import random

import pytest

from protocol.games import GAMES, IllegalMove, Outcome
from protocol.games.connect4 import C4State, Drop

C4 = GAMES["connect4"]


def perft(state: C4State, depth: int) -> int:
    """Move paths of ``depth`` plies; a path stops where the game ends."""
    if C4.outcome(state) is not None:
        return 1
    moves = C4.legal_moves(state)
    if depth == 1:
        return len(moves)
    return sum(perft(C4.apply(state, move), depth - 1) for move in moves)


@pytest.mark.parametrize(("depth", "paths"), [(1, 7), (2, 49), (3, 343), (4, 2401), (5, 16807), (6, 117649),
                                              (7, 823536)])
def test_move_path_counts_from_the_empty_board(depth, paths):
    assert perft(C4.initial_state(), depth) == paths


def test_stones_fall_and_a_full_column_is_refused():
    state = C4.start(*["4"] * 6)
    assert state.board[5 * 7 + 3] == 2 and state.board[3] == 1
    with pytest.raises(IllegalMove, match="column 4 is full"):
        C4.apply(state, Drop(3))
    assert Drop(3) not in C4.legal_moves(state)


@pytest.mark.parametrize(("moves", "direction"), [
    ("1 1 2 2 3 3 4", "horizontal"),
    ("1 2 1 2 1 2 1", "vertical"),
    ("1 2 2 3 3 4 3 4 4 7 4", "diagonal up"),
    ("7 6 6 5 5 4 5 4 4 1 4", "diagonal down"),
])
def test_four_in_a_row_wins_in_every_direction(moves, direction):
    plies = moves.split()
    state = C4.start(*plies[:-1])
    assert C4.outcome(state) is None, direction
    state = C4.apply(state, C4.parse_move(plies[-1], state))
    result = C4.outcome(state)
    assert result is not None and result.winner == 0 and result.reason == "four in a row"
    assert C4.legal_moves(state) == []
    with pytest.raises(IllegalMove, match="over"):
        C4.apply(state, Drop(0))


def four_in_a_row(board: tuple[int, ...]) -> set[int]:
    """The seats with four in a row on ``board``, by looking at every window of four squares (the rules as written,
    not as the game checks them)."""
    seats = set()
    for row in range(6):
        for col in range(7):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                cells = [(col + i * dc, row + i * dr) for i in range(4)]
                if all(0 <= c < 7 and 0 <= r < 6 for c, r in cells):
                    stones = {board[r * 7 + c] for c, r in cells}
                    if len(stones) == 1 and 0 not in stones:
                        seats.add(stones.pop() - 1)
    return seats


def test_every_move_of_random_games_ends_the_game_exactly_when_four_are_in_a_row():
    rng = random.Random(44)
    wins = 0
    for _ in range(400):
        state = C4.initial_state()
        while C4.outcome(state) is None:
            column = rng.choice(C4.legal_moves(state)).column
            mover = state.to_move
            drop, state = C4.checked_move(str(column + 1), state)
            assert drop.column == column
            lined_up = four_in_a_row(state.board)
            result = C4.outcome(state)
            assert lined_up <= {mover}, state.board  # four in a row ended the game before
            if lined_up:
                assert result == Outcome(mover, "four in a row"), state.board
                wins += 1
            else:
                assert result is None or result == Outcome(None, "the board is full"), (state.board, result)
        assert C4.decode_state(C4.encode_state(state)) == state  # the scan of a whole board finds the same end
    assert wins > 300


def test_full_board_without_four_is_a_draw():
    # columns filled in an order that never lines up four: pairs of columns in blocks
    order = [1, 2, 1, 2, 2, 1, 2, 1, 1, 2, 1, 2, 3, 4, 3, 4, 4, 3, 4, 3, 3, 4, 3, 4,
             5, 6, 5, 6, 6, 5, 6, 5, 5, 6, 5, 6, 7, 7, 7, 7, 7, 7]
    state = C4.start(*[str(c) for c in order])
    result = C4.outcome(state)
    assert result is not None and result.winner is None and result.reason == "the board is full"


def test_first_option_and_notation_in_every_convention():
    state = C4.initial_state(first=1)
    assert C4.to_move(state) == 1
    move = Drop(0)
    assert C4.notation(move) == "1" and str(move) == "1"
    assert C4.format_move(move, "algebraic") == {"column": 1}
    assert C4.format_move(move, "cosc322") == {"column": 1}
    assert C4.format_move(move, "matrix") == {"column": 0}
    assert C4.parse_move({"column": 0}, state, "matrix") == move
    assert C4.parse_move(7, state, "cosc322") == Drop(6)
    for bad in ["0", "8", "four", {"column": 8}, {"col": 1}, [1, 1]]:
        with pytest.raises(IllegalMove):
            C4.parse_move(bad, state, "cosc322")
    with pytest.raises(IllegalMove, match="0 to 6"):
        C4.parse_move(7, state, "matrix")
    with pytest.raises(IllegalMove, match="in matrix coordinates send the bare number 0 to 6"):
        C4.parse_move("0", state, "matrix")  # text is notation, counted from 1: the client meant the number 0


def test_board_printout_and_encoding():
    state = C4.start("4", "4", "3")
    text = str(state)
    assert text.splitlines()[-2].split() == ["1", "2", "3", "4", "5", "6", "7"]
    assert ". . X X . . ." in text and "O (seat 1) to move" in text
    encoded = C4.encode_state(state, "matrix")
    assert encoded["board"][5][2:4] == [1, 1] and encoded["board"][4][3] == 2
    assert C4.decode_state(encoded, "matrix") == state
    floating = C4.encode_state(C4.initial_state(), "algebraic")
    floating["board"][2][0] = 1
    with pytest.raises(ValueError, match="floating"):
        C4.decode_state(floating, "algebraic")
    # no game of turns gives six stones against none, or seat 0 to move after its own stone (either may be to move
    # with equal counts: it depends on who began)
    uneven = C4.encode_state(C4.initial_state(), "algebraic")
    uneven["board"][0] = [1, 1, 1, 0, 1, 1, 1]
    with pytest.raises(ValueError, match="with 6 stones of seat 0 and 0 of seat 1, seat 1 cannot be to move"):
        C4.decode_state({**uneven, "to_move": 1}, "algebraic")
    one = C4.encode_state(C4.start("4"), "algebraic")
    assert C4.decode_state(one, "algebraic").to_move == 1
    with pytest.raises(ValueError, match="seat 0 cannot be to move"):
        C4.decode_state({**one, "to_move": 0}, "algebraic")
    two = C4.encode_state(C4.start("4", "4"), "algebraic")
    for to_move in (0, 1):
        assert C4.decode_state({**two, "to_move": to_move}).to_move == to_move
