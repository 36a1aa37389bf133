"""Magnetic Cave: 8x8, bricks stick to the side walls or to each other; five in a row wins.

A brick may go only on an empty square in the first or last column (``a`` or
``h``), or on an empty square directly left or right of any brick of either
colour; so in each row only the outermost empty squares are open. Five (or more)
of your bricks in a row horizontally, vertically or diagonally wins; a full
board with no five is a draw.

Seat 0 is black and moves first by default; the option ``first`` (0/1, or
``"black"``/``"white"``) names the seat that places the first brick. A move is a
square, ``d4`` in notation, ``{"square": SQ}`` in structured form. Board cells:
0 empty, 1 black brick (seat 0), 2 white brick (seat 1).

``from_picture`` reads a position back from what the state prints: eight rows
of ``.``, ``B`` (black) and ``W`` (white), rank 8 first, the cells separated by
spaces or run together (``"BWBW.BWB"``). Rank numbers, the file letters and
the status line (``"white (seat 1) to move"``) may be left out; without a
status line or ``to_move``, black moved first and the brick count says who is
next.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .base import (
    Game,
    Grid,
    IllegalMove,
    Outcome,
    check_coords,
    first_seat_option,
    move_repr,
    require_dict,
    shown,
    status_to_move,
)

SIZE = 8
GRID = Grid(SIZE, SIZE)
SQUARES = SIZE * SIZE
SYMBOLS = (".", "B", "W")
COLOURS = ("black", "white")
FIVE = 5
FIVE_IN_A_ROW = "five in a row"
BOARD_FULL = "the board is full"


def _build_windows() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[tuple[int, ...], ...], ...]]:
    """Every run of five squares in a line, and for each square the runs through it."""
    windows = []
    for start in range(SQUARES):
        col, row = GRID.col_row(start)
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            if GRID.on_board(col + dc * (FIVE - 1), row + dr * (FIVE - 1)):
                windows.append(tuple(GRID.index(col + dc * k, row + dr * k) for k in range(FIVE)))
    through = tuple(tuple(w for w in windows if square in w) for square in range(SQUARES))
    return tuple(windows), through


WINDOWS, WINDOWS_THROUGH = _build_windows()
"""``WINDOWS``: all lines of five squares; ``WINDOWS_THROUGH[sq]``: those containing ``sq``."""


class Brick(NamedTuple):
    """A Magnetic Cave move: place a brick on ``square`` (index ``row * 8 + col``, row 0 = rank 1)."""

    square: int

    def __str__(self) -> str:
        return GRID.name(self.square)

    def __repr__(self) -> str:
        return move_repr(self)


@dataclass(frozen=True)
class CaveState:
    """A Magnetic Cave position. ``board[row*8+col]`` is 0 (empty), 1 (seat 0) or 2 (seat 1)."""

    board: tuple[int, ...]
    to_move: int
    result: Outcome | None = field(default=None, compare=False)

    def __str__(self) -> str:
        lines = [GRID.render([SYMBOLS[v] for v in self.board])]
        if self.result is None:
            lines.append(f"{COLOURS[self.to_move]} (seat {self.to_move}) to move")
        elif self.result.winner is None:
            lines.append(f"draw ({self.result.reason})")
        else:
            lines.append(f"{COLOURS[self.result.winner]} (seat {self.result.winner}) won: {self.result.reason}")
        return "\n".join(lines)


def first_option(value: Any) -> int:
    """The ``first`` option: seat 0/1, or the colour ``"black"`` (seat 0) / ``"white"`` (seat 1)."""
    return first_seat_option(value, COLOURS)


def is_open(board: tuple[int, ...], square: int) -> bool:
    """True when a brick may go on ``square``: it is empty, and against a side wall or a brick."""
    if board[square]:
        return False
    col = square % SIZE
    return col == 0 or col == SIZE - 1 or bool(board[square - 1]) or bool(board[square + 1])


def _read_brick(text: str) -> int:
    if text not in SYMBOLS:
        raise ValueError(f"{text!r} is not a cell; cells are . (empty), B (black) and W (white)")
    return SYMBOLS.index(text)


def _five_through(board: tuple[int, ...], square: int, stone: int) -> bool:
    for window in WINDOWS_THROUGH[square]:
        if all(board[s] == stone for s in window):
            return True
    return False


def _scan_result(board: tuple[int, ...]) -> Outcome | None:
    winners = set()
    for a, b, c, d, e in WINDOWS:
        stone = board[a]
        if stone and board[b] == stone and board[c] == stone and board[d] == stone and board[e] == stone:
            winners.add(stone - 1)
    if len(winners) > 1:
        raise ValueError("both sides have five in a row")
    if winners:
        return Outcome(winners.pop(), FIVE_IN_A_ROW)
    if 0 not in board:
        return Outcome(None, BOARD_FULL)
    return None


class MagneticCave(Game[CaveState, Brick]):
    """The rules of Magnetic Cave."""

    id = "magnetic-cave"
    name = "Magnetic Cave"
    grid = GRID
    options_help = {"first": "seat that places the first brick: 0 or 'black' (default), 1 or 'white'"}
    first_colours = COLOURS
    _MOVE_TYPES = (Brick,)

    def _starting_position(self, first: int) -> CaveState:
        """The empty cave."""
        return CaveState((0,) * SQUARES, first)

    def to_move(self, state: CaveState) -> int:
        """Seat to place the next brick."""
        return state.to_move

    def legal_moves(self, state: CaveState) -> list[Brick]:
        """Every open square, from a1 row by row to h8.

        Bricks only ever grow inwards from the walls, so the open squares of a row
        are its leftmost and rightmost empty squares (the same set ``is_open`` gives).
        """
        if state.result is not None:
            return []
        board = state.board
        moves = []
        for start in range(0, SQUARES, SIZE):
            row = board[start : start + SIZE]
            if 0 in row:
                left = row.index(0)
                right = SIZE - 1 - row[::-1].index(0)
                moves.append(Brick(start + left))
                if right != left:
                    moves.append(Brick(start + right))
        return moves

    def apply(self, state: CaveState, move: Brick) -> CaveState:
        """Place a brick; ``IllegalMove`` when the square is taken or not open."""
        if state.result is not None:
            raise IllegalMove("the game is over")
        square = move.square if isinstance(move, Brick) else move
        if isinstance(square, bool) or not isinstance(square, int) or not 0 <= square < SQUARES:
            raise IllegalMove(f"{shown(move)} is not a square; squares run from a1 to {GRID.last_name()}")
        board = state.board
        name = GRID.name(square)
        if board[square]:
            raise IllegalMove(f"{name} is taken", (square,))
        if not is_open(board, square):
            raise IllegalMove(
                f"{name} is not against a wall or beside a brick: "
                "bricks stick to the side walls or to a brick on their left or right", (square,)
            )
        stone = state.to_move + 1
        new_board = board[:square] + (stone,) + board[square + 1 :]
        result = None
        if _five_through(new_board, square, stone):
            result = Outcome(state.to_move, FIVE_IN_A_ROW)
        elif 0 not in new_board:
            result = Outcome(None, BOARD_FULL)
        return CaveState(new_board, 1 - state.to_move, result)

    def outcome(self, state: CaveState) -> Outcome | None:
        """Winner and reason, or ``None`` while the game runs."""
        return state.result

    def notation(self, move: Brick) -> str:
        """The square's name, e.g. ``d4``."""
        return GRID.name(move.square)

    def format_move(self, move: Brick, coords: str = "algebraic") -> dict[str, Any]:
        """``{"square": SQ}`` with the square in ``coords``."""
        check_coords(coords)
        return {"square": GRID.format(move.square, coords)}

    def parse_move(self, obj: Any, state: CaveState, coords: str = "algebraic") -> Brick:
        """A brick from a square name (``"d4"``), a ``[row, col]`` pair, or ``{"square": SQ}``."""
        check_coords(coords)
        if self.is_move(obj):
            return obj
        if isinstance(obj, dict):
            require_dict(obj, ("square",), "Magnetic Cave move")
            if len(obj) != 1:
                raise IllegalMove('a Magnetic Cave move is {"square": SQ} and nothing else')
            obj = obj["square"]
        return Brick(GRID.parse(obj, coords))

    def encode_state(self, state: CaveState, coords: str = "algebraic") -> dict[str, Any]:
        """``{"board": rows, "to_move": seat}``; cells 0 empty, 1 seat 0, 2 seat 1."""
        return {"board": GRID.rows_for(state.board, coords), "to_move": state.to_move}

    def decode_state(self, obj: Any, coords: str = "algebraic") -> CaveState:
        """Rebuild a state from ``encode_state``; ``ValueError`` if it is not a position.

        Besides the cells, checks that every row's bricks hang from the walls (no
        brick with an empty square on each side) and that the brick counts fit
        the side to move.
        """
        if not isinstance(obj, dict) or "board" not in obj or "to_move" not in obj:
            raise ValueError("a Magnetic Cave state is an object with board and to_move")
        board = GRID.cells_from(obj["board"], coords)
        if set(map(type, board)) != {int} or not set(board) <= {0, 1, 2}:
            raise ValueError("Magnetic Cave cells are 0 (empty), 1 (seat 0) or 2 (seat 1)")
        to_move = obj["to_move"]
        if isinstance(to_move, bool) or to_move not in (0, 1):
            raise ValueError("to_move must be 0 or 1")
        packed = bytes(board)
        for start in range(0, SQUARES, SIZE):
            # with the bricks hanging from both walls stripped, only empty squares may remain
            if any(packed[start : start + SIZE].strip(b"\x01\x02")):
                raise ValueError(f"row {start // SIZE + 1} has a brick that hangs from neither wall")
        blacks, whites = board.count(1), board.count(2)
        if blacks == whites + 1 and to_move != 1 or whites == blacks + 1 and to_move != 0:
            raise ValueError(f"with {blacks} black and {whites} white bricks, seat {to_move} cannot be to move")
        if abs(blacks - whites) > 1:
            raise ValueError(f"{blacks} black and {whites} white bricks cannot come from alternate turns")
        return CaveState(board, to_move, _scan_result(board))

    def from_picture(self, text: str, to_move: int | None = None) -> CaveState:
        """A position from a picture of its board, as the state prints it (see the module notes)."""
        board, status = GRID.read_picture(text, _read_brick, one_character_cells=True)
        if to_move is None:
            to_move = status_to_move(status)
        if to_move is None:
            to_move = sum(1 for brick in board if brick) % 2
        return self.decode_state({"board": GRID.rows_for(board), "to_move": to_move})



MAGNETIC_CAVE = MagneticCave()
"""The Magnetic Cave rules object, registered as ``"magnetic-cave"``."""
