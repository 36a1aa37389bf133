"""Coordinate translation at the edge: every square of every game in every convention, both ways.

``algebraic``: "a1" ... rank 1 at the bottom; ``cosc322``: [row, col] 1-based, row 1 at the
bottom; ``matrix``: [row, col] 0-based, row 0 at the top.
"""

from __future__ import annotations

import random

import pytest

from protocol.games import COORDS, GAMES, Grid, IllegalMove

GRIDS = {game_id: game.grid for game_id, game in GAMES.items()}


def test_the_three_conventions():
    assert COORDS == ("algebraic", "cosc322", "matrix")


@pytest.mark.parametrize("coords", COORDS)
@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_square_round_trips(game_id, coords):
    grid = GRIDS[game_id]
    written = set()
    for square in range(grid.size):
        form = grid.format(square, coords)
        assert grid.parse(form, coords) == square
        assert grid.parse(grid.name(square), coords) == square  # a name is understood in any convention
        if coords != "algebraic":
            assert grid.parse(tuple(form), coords) == square
        written.add(str(form))
    assert len(written) == grid.size  # no two squares share a form


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_conventions_agree_square_by_square(game_id):
    grid = GRIDS[game_id]
    for square in range(grid.size):
        col, row = grid.col_row(square)  # row 0 is rank 1, at the bottom
        name = grid.format(square, "algebraic")
        assert name == "abcdefghij"[col] + str(row + 1)
        r, c = grid.format(square, "cosc322")
        assert (r, c) == (row + 1, col + 1)
        mr, mc = grid.format(square, "matrix")
        assert (mr, mc) == (grid.height - r, c - 1)


@pytest.mark.parametrize(
    ("size", "name", "cosc322", "matrix"),
    [
        ((10, 10), "a1", [1, 1], [9, 0]),
        ((10, 10), "j10", [10, 10], [0, 9]),
        ((10, 10), "a10", [10, 1], [0, 0]),
        ((10, 10), "j1", [1, 10], [9, 9]),
        ((10, 10), "b1", [1, 2], [9, 1]),  # [row, col]: the column is second
        ((10, 10), "a2", [2, 1], [8, 0]),
        ((10, 10), "d10", [10, 4], [0, 3]),
        ((8, 8), "a1", [1, 1], [7, 0]),
        ((8, 8), "h8", [8, 8], [0, 7]),
        ((8, 8), "d5", [5, 4], [3, 3]),
        ((7, 6), "a1", [1, 1], [5, 0]),  # Connect Four: 7 wide, 6 high
        ((7, 6), "g6", [6, 7], [0, 6]),
        ((7, 6), "g1", [1, 7], [5, 6]),
        ((5, 5), "c3", [3, 3], [2, 2]),
        ((5, 5), "e1", [1, 5], [4, 4]),
        ((4, 4), "d4", [4, 4], [0, 3]),
        ((4, 4), "a4", [4, 1], [0, 0]),
    ],
)
def test_known_anchors(size, name, cosc322, matrix):
    grid = Grid(*size)
    square = grid.parse(name)
    assert grid.format(square, "cosc322") == cosc322
    assert grid.format(square, "matrix") == matrix
    assert grid.parse(cosc322, "cosc322") == grid.parse(matrix, "matrix") == square


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_off_board_pairs_are_refused_naming_the_range(game_id):
    grid = GRIDS[game_id]
    h, w = grid.height, grid.width
    cases = {
        "cosc322": ([[0, 1], [1, 0], [h + 1, 1], [1, w + 1], [-1, -1], [0, 0]], f"[1..{h}, 1..{w}]"),
        "matrix": ([[-1, 0], [0, -1], [h, 0], [0, w], [h, w], [2**40, 0]], f"[0..{h - 1}, 0..{w - 1}]"),
    }
    for coords, (pairs, accepted) in cases.items():
        for pair in pairs:
            with pytest.raises(IllegalMove) as info:
                grid.parse(pair, coords)
            assert accepted in info.value.reason and "off the board" in info.value.reason
            assert str(pair) in info.value.reason


@pytest.mark.parametrize("coords", COORDS)
@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_malformed_squares_are_refused_naming_the_range(game_id, coords):
    grid = GRIDS[game_id]
    last = grid.last_name()
    off_file = "abcdefghijk"[grid.width] + "1"
    off_rank = f"a{grid.height + 1}"
    bad = ["", "a", "1a", "a0", off_file, off_rank, "a-1", "aa1", "a100", "🎲", [1], [1, 2, 3], [], [True, 1],
           [1.0, 1.0], ["a", "1"], None, 5, 1.5, {"row": 1, "col": 1}, True]
    if coords == "algebraic":
        bad += [[1, 1], [0, 0]]  # pairs are not algebraic squares
    for obj in bad:
        with pytest.raises(IllegalMove) as info:
            grid.parse(obj, coords)
        reason = info.value.reason
        assert f"a1 to {last}" in reason, (obj, reason)
        if coords == "cosc322" and not isinstance(obj, str):
            assert f"[1..{grid.height}, 1..{grid.width}]" in reason, (obj, reason)
        if coords == "matrix" and not isinstance(obj, str):
            assert f"[0..{grid.height - 1}, 0..{grid.width - 1}]" in reason, (obj, reason)


def test_unknown_convention_is_refused():
    grid = Grid(8, 8)
    for call in (lambda: grid.format(0, "xy"), lambda: grid.parse("a1", "xy"), lambda: grid.rows_for((0,) * 64, "xy")):
        with pytest.raises(ValueError, match="algebraic, cosc322, matrix"):
            call()


def test_names_ignore_case_and_spaces():
    grid = Grid(10, 10)
    assert grid.parse(" J10 ") == grid.parse("j10") == 99


# Boards: rows in each convention's own order ------------------------------------------------------


@pytest.mark.parametrize("coords", COORDS)
@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_rows_follow_the_convention(game_id, coords):
    grid = GRIDS[game_id]
    cells = tuple(range(grid.size))  # each cell holds its own square index
    rows = grid.rows_for(cells, coords)
    assert len(rows) == grid.height and all(len(row) == grid.width for row in rows)
    for square in range(grid.size):
        if coords == "matrix":  # rows[r][c] is the square [r, c]: row 0 at the top
            r, c = grid.format(square, "matrix")
            assert rows[r][c] == square
        elif coords == "cosc322":  # rows[r-1][c-1] is the square [r, c]: row 1 (rank 1) first
            r, c = grid.format(square, "cosc322")
            assert rows[r - 1][c - 1] == square
        else:  # rows[rank-1][file] is the named square: rank 1 first
            col, row = grid.col_row(square)
            assert rows[row][col] == square
    assert grid.cells_from(rows, coords) == cells


@pytest.mark.parametrize("coords", COORDS)
def test_matrix_lists_the_top_row_first(coords):
    grid = Grid(10, 10)
    rows = grid.rows_for(tuple(grid.name(sq) for sq in range(grid.size)), coords)
    top, bottom = (0, 9) if coords == "matrix" else (9, 0)
    assert rows[top] == [f"{f}10" for f in "abcdefghij"]
    assert rows[bottom] == [f"{f}1" for f in "abcdefghij"]


@pytest.mark.parametrize("coords", COORDS)
def test_bad_board_shapes_are_refused(coords):
    grid = Grid(7, 6)
    good = grid.rows_for((0,) * 42, coords)
    for bad in (None, [], good[:-1], good + [good[0]], [row[:-1] for row in good], [tuple(r) for r in good], "rows"):
        with pytest.raises(ValueError, match="board|row"):
            grid.cells_from(bad, coords)


def _random_states(game_id: str, count: int, seed: str) -> list:
    game = GAMES[game_id]
    rng = random.Random(seed)
    states = []
    for _ in range(count):
        state = game.initial_state()
        for _ply in range(rng.randrange(12)):
            moves = game.legal_moves(state)
            if not moves:
                break
            state = game.apply(state, rng.choice(moves))
        states.append(state)
    return states


@pytest.mark.parametrize("coords", COORDS)
@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_moves_and_states_round_trip(game_id, coords):
    game = GAMES[game_id]
    for state in _random_states(game_id, 6, seed=f"{game_id}-{coords}"):
        assert game.decode_state(game.encode_state(state, coords), coords) == state
        for move in game.legal_moves(state)[:300]:
            form = game.format_move(move, coords)
            assert game.parse_move(form, state, coords) == move
            assert game.parse_move(game.notation(move), state, coords) == move


def test_encoded_boards_put_pieces_where_each_convention_says():
    amazons = GAMES["amazons"].initial_state()
    black_d10 = {  # seat 0's queen on d10 is cell 1 in each board
        "algebraic": lambda b: b[9][3],
        "cosc322": lambda b: b[9][3],
        "matrix": lambda b: b[0][3],
    }
    for coords, cell in black_d10.items():
        board = GAMES["amazons"].encode_state(amazons, coords)["board"]
        assert cell(board) == 1
    c4 = GAMES["connect4"].start("1", "1")  # seat 0 on a1, seat 1 on a2
    assert GAMES["connect4"].encode_state(c4, "cosc322")["board"][0][0] == 1
    assert GAMES["connect4"].encode_state(c4, "cosc322")["board"][1][0] == 2
    assert GAMES["connect4"].encode_state(c4, "matrix")["board"][5][0] == 1
    assert GAMES["connect4"].encode_state(c4, "matrix")["board"][4][0] == 2
    cave = GAMES["magnetic-cave"].start("h8")
    assert GAMES["magnetic-cave"].encode_state(cave, "matrix")["board"][0][7] == 1
    assert GAMES["magnetic-cave"].encode_state(cave, "algebraic")["board"][7][7] == 1
    santorini = GAMES["santorini"].start("a1 e5", "b1 c1", "a1-a2/a3")
    encoded = GAMES["santorini"].encode_state(santorini, "matrix")
    assert encoded["workers"][3][0] == 1 and encoded["workers"][0][4] == 1 and encoded["levels"][2][0] == 1
    quarto = GAMES["quarto"].start("0101", "a4 1111")
    assert GAMES["quarto"].encode_state(quarto, "matrix")["board"][0][0] == "0101"
    assert GAMES["quarto"].encode_state(quarto, "cosc322")["board"][3][0] == "0101"


@pytest.mark.parametrize("coords", COORDS)
def test_connect4_columns_per_convention(coords):
    game = GAMES["connect4"]
    state = game.initial_state()
    low = 0 if coords == "matrix" else 1
    for col in range(7):
        assert game.format_move(game.parse_move({"column": col + low}, state, coords), coords) == {"column": col + low}
    for bad in (low - 1, low + 7, {"column": low + 7}):
        with pytest.raises(IllegalMove) as info:
            game.parse_move(bad, state, coords)
        assert f"{low} to {low + 6}" in info.value.reason
    assert game.parse_move("7", state, coords).column == 6  # notation is always 1-7
