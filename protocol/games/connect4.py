"""Connect Four: 7 columns by 6 rows, stones fall to the lowest empty square.

Four in a row in any direction wins; a full board with no four is a draw.
A move is a column, ``1``-``7`` left to right in notation (the format of the
public solver test sets); structured form ``{"column": N}``, 1-based in the
``algebraic`` and ``cosc322`` conventions, 0-based in ``matrix``.

Seat 0's stones print as ``X``, seat 1's as ``O``. The option ``first`` (0 or 1)
names the seat that drops the first stone.

``from_picture`` reads a position back from what the state prints: six rows of
``.``, ``X`` and ``O``, top row first, the cells separated by spaces or run
together (``"..XX..."``). Row numbers, the line of column numbers and the
status line (``"O (seat 1) to move"``) may be left out; without a status line
or ``to_move``, seat 0 moved first and the stone count says who is next.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import FunctionType
from typing import Any, Final, NamedTuple

from .base import Game, Grid, IllegalMove, Outcome, check_coords, move_repr, shown, status_to_move

# Final: compiled (plyhall.compiled), these are constants or C statics, not look-ups in the module's dictionary
WIDTH: Final = 7
HEIGHT: Final = 6
GRID = Grid(WIDTH, HEIGHT)
SYMBOLS = (".", "X", "O")
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))
COLUMN_NAMES = tuple(str(column + 1) for column in range(WIDTH))


def _compiled() -> bool:
    """Whether this module runs compiled (``plyhall.compiled``): a compiled function is no Python function."""
    return not isinstance(_compiled, FunctionType)


NATIVE: Final = _compiled()
"""This module runs compiled: :class:`C4State`'s fields are native attributes, which its ``__init__`` sets as such
(the frozen dataclass's ``__setattr__`` guards them from any other code); interpreted, they are set through
``object.__setattr__``, as the generated ``__init__`` sets them. Asked of this module itself, not of the build: a module
imported before ``plyhall.compiled.use`` stays interpreted."""


class Drop(NamedTuple):
    """A Connect Four move: drop a stone in ``column`` (0-based)."""

    column: int

    def __str__(self) -> str:
        return str(self.column + 1)

    def __repr__(self) -> str:
        return move_repr(self)


@dataclass(frozen=True, slots=True)
class C4State:
    """A Connect Four position. ``board[row*7+col]`` is 0 (empty), 1 (seat 0) or 2 (seat 1)."""

    board: tuple[int, ...]
    to_move: int
    result: Outcome | None = field(default=None, compare=False)

    def __init__(self, board: tuple[int, ...], to_move: int, result: Outcome | None = None) -> None:
        """The dataclass's own ``__init__``, written out: compiled (``plyhall.compiled``), a move makes one without
        the interpreter's frame that the generated one runs in."""
        if NATIVE:  # three native stores, where object.__setattr__ is three generic calls (2,800 instructions a move)
            self.board = board  # type: ignore[misc]
            self.to_move = to_move  # type: ignore[misc]
            self.result = result  # type: ignore[misc]
            return
        setter = object.__setattr__  # frozen: as the generated one sets its fields
        setter(self, "board", board)
        setter(self, "to_move", to_move)
        setter(self, "result", result)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied through :meth:`__init__` (a compiled class is made only so)."""
        return C4State, (self.board, self.to_move, self.result)

    def __str__(self) -> str:
        picture = GRID.render([SYMBOLS[v] for v in self.board])
        lines = picture.splitlines()[:-1]  # columns are numbered, not lettered
        lines.append(" " * 3 + " ".join(COLUMN_NAMES))
        if self.result is None:
            lines.append(f"{SYMBOLS[self.to_move + 1]} (seat {self.to_move}) to move")
        else:
            lines.append(_describe(self.result))
        return "\n".join(lines)


def _describe(result: Outcome) -> str:
    if result.winner is None:
        return f"draw ({result.reason})"
    return f"{SYMBOLS[result.winner + 1]} (seat {result.winner}) won: {result.reason}"


class ConnectFour(Game[C4State, Drop]):
    """The rules of Connect Four."""

    id = "connect4"
    name = "Connect Four"
    grid = GRID
    options_help = {"first": "seat (0 or 1) that drops the first stone; default 0"}
    _MOVE_TYPES = (Drop,)

    def _starting_position(self, first: int) -> C4State:  # type: ignore[override]  # no options of its own
        """The empty board."""
        return C4State(board=(0,) * (WIDTH * HEIGHT), to_move=first)

    def to_move(self, state: C4State) -> int:
        """Seat to drop the next stone."""
        return state.to_move

    def legal_moves(self, state: C4State) -> list[Drop]:
        """Every column that is not full, left to right."""
        if state.result is not None:
            return []
        top = (HEIGHT - 1) * WIDTH
        return [Drop(c) for c in range(WIDTH) if state.board[top + c] == 0]

    def apply(self, state: C4State, move: Any) -> C4State:
        """Drop a stone (``move``: a :class:`Drop`, or a column's number, 0-based); ``IllegalMove`` when the game is
        over, the column is full, or ``move`` is neither."""
        if state.result is not None:
            raise IllegalMove("the game is over")
        column = move.column if isinstance(move, Drop) else move
        if not isinstance(column, int) or not 0 <= column < WIDTH:
            raise IllegalMove(f"{shown(move)} is not a column; columns are 1 to {WIDTH}")
        after = _dropped(state, column)
        if after is None:
            raise IllegalMove(f"column {column + 1} is full")
        return after

    def checked_move(self, obj: Any, state: C4State, coords: str = "algebraic") -> tuple[Drop, C4State]:
        """:meth:`parse_move` then :meth:`apply`, the common cases (the notation ``"1"`` to ``"7"``, or
        ``{"column": N}``, into a column with room, in a running game) answered straight, without the general checks;
        anything else as those two answer it."""
        low = _LOWEST_COLUMN.get(coords)
        if state.result is None and low is not None:
            kind = type(obj)
            column = None
            if kind is str:
                column = _NOTATION_COLUMN.get(obj)
            elif kind is dict and len(obj) == 1:
                number = obj.get("column")
                if type(number) is int and 0 <= number - low < WIDTH:
                    column = number - low
            if column is not None:
                after = _dropped(state, column)
                if after is not None:
                    return DROPS[column], after
        return super().checked_move(obj, state, coords)

    def after_move(self, move: Drop, state: C4State) -> tuple[Outcome | None, int | None, str]:
        """:meth:`Game.after_move` read straight off the state and the move."""
        result = state.result
        return result, None if result is not None else state.to_move, str(move.column + 1)

    def outcome(self, state: C4State) -> Outcome | None:
        """Winner and reason, or ``None`` while the game runs."""
        return state.result

    def notation(self, move: Drop) -> str:
        """The column number, 1-7."""
        return str(move.column + 1)

    def format_move(self, move: Drop, coords: str = "algebraic") -> dict[str, Any]:
        """``{"column": N}``, 0-based in ``matrix``, 1-based otherwise."""
        low = _LOWEST_COLUMN.get(coords)
        if low is None:
            check_coords(coords)  # which refuses it
            raise AssertionError(f"no first column for {coords}")
        return {"column": move.column + low}

    def parse_move(self, obj: Any, state: C4State, coords: str = "algebraic") -> Drop:
        """A column from text (``"4"``), a number, or ``{"column": N}`` in ``coords``."""
        check_coords(coords)
        if self.is_move(obj):
            return obj
        if isinstance(obj, str):
            text = obj.strip()
            # ASCII digits only, as the notation says: int() would also read '٤' or '４'; and a short
            # text, since int() refuses more than 4300 digits (a ValueError instead of IllegalMove)
            if text.isascii() and text.isdecimal() and len(text) <= 10 and 1 <= int(text) <= WIDTH:
                return Drop(int(text) - 1)
            hint = (f" (text is notation, counted from 1; in matrix coordinates send the bare number 0 to "
                    f"{WIDTH - 1})" if coords == "matrix" else "")
            raise IllegalMove(f"{shown(obj)} is not a column; type a number from 1 to {WIDTH}{hint}")
        if isinstance(obj, dict):
            if set(obj) != {"column"}:
                raise IllegalMove('a Connect Four move is {"column": N}')
            obj = obj["column"]
        if isinstance(obj, int) and not isinstance(obj, bool):
            low = 0 if coords == "matrix" else 1
            if low <= obj < low + WIDTH:
                return Drop(obj - low)
            raise IllegalMove(f"column {obj} does not exist; {coords} columns are {low} to {low + WIDTH - 1}")
        raise IllegalMove(f"{shown(obj)} is not a Connect Four move; send a column number")

    def encode_state(self, state: C4State, coords: str = "algebraic") -> dict[str, Any]:
        """``{"board": rows, "to_move": seat, "cells": "0 empty, 1 seat 0, 2 seat 1"}``."""
        return {"board": GRID.rows_for(state.board, coords), "to_move": state.to_move}

    def decode_state(self, obj: Any, coords: str = "algebraic") -> C4State:
        """Rebuild a state from ``encode_state``; ``ValueError`` if it is not a position."""
        if not isinstance(obj, dict) or "board" not in obj or "to_move" not in obj:
            raise ValueError("a Connect Four state is an object with board and to_move")
        board = GRID.cells_from(obj["board"], coords)
        if any(v not in (0, 1, 2) or isinstance(v, bool) for v in board):
            raise ValueError("Connect Four cells are 0 (empty), 1 (seat 0) or 2 (seat 1)")
        to_move = obj["to_move"]
        if to_move not in (0, 1) or isinstance(to_move, bool):
            raise ValueError("to_move must be 0 or 1")
        for col in range(WIDTH):
            column = [board[r * WIDTH + col] for r in range(HEIGHT)]
            if 0 in column and any(column[column.index(0) :]):
                raise ValueError(f"column {col + 1} has a stone floating above an empty square")
        counts = board.count(1), board.count(2)
        if abs(counts[0] - counts[1]) > 1 or (counts[0] != counts[1] and counts[1 - to_move] != counts[to_move] + 1):
            # the players take turns: equal counts (either may be to move, by who began), or one stone more for the
            # seat that just moved
            raise ValueError(f"with {counts[0]} stones of seat 0 and {counts[1]} of seat 1, seat {to_move} cannot be "
                             "to move")
        return C4State(board, to_move, _scan_result(board))

    def from_picture(self, text: str, to_move: int | None = None) -> C4State:  # type: ignore[override]
        """A position from a picture of its board, as the state prints it (see the module notes)."""
        board, status = GRID.read_picture(text, _read_stone, COLUMN_NAMES, one_character_cells=True)
        if to_move is None:
            to_move = status_to_move(status)
        if to_move is None:
            to_move = sum(1 for stone in board if stone) % 2
        return self.decode_state({"board": GRID.rows_for(board), "to_move": to_move})



DROPS: Final = tuple(Drop(column) for column in range(WIDTH))
"""Every move, made once (a move is a value: the fast path hands out these)."""
_LOWEST_COLUMN: Final = {"algebraic": 1, "cosc322": 1, "matrix": 0}  # the first column's number in each convention
_NOTATION_COLUMN: Final = {name: column for column, name in enumerate(COLUMN_NAMES)}  # "1" -> 0 ... "7" -> 6


def _dropped(state: C4State, column: int) -> C4State | None:
    """The state after the side to move drops a stone in ``column`` (0-based, a column of the board) of a running
    game, or None when that column is full."""
    board = state.board
    cells = board[column::WIDTH]  # the column, bottom first: its lowest empty square is the stone's
    if 0 not in cells:
        return None
    row = cells.index(0)
    square = row * WIDTH + column
    stone = state.to_move + 1
    new_board = board[:square] + (stone,) + board[square + 1 :]
    result = None
    if _four_through(new_board, column, row, stone):
        result = Outcome(state.to_move, "four in a row")
    elif 0 not in new_board:
        result = Outcome(None, "the board is full")
    return C4State(new_board, 1 - state.to_move, result)


def _read_stone(text: str) -> int:
    if text not in SYMBOLS:
        raise ValueError(f"{text!r} is not a cell; cells are . (empty), X (seat 0) and O (seat 1)")
    return SYMBOLS.index(text)


def _rays(square: int) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """For each direction, the squares (at most three) one way from ``square`` and the other way, nearest first."""
    col, row = square % WIDTH, square // WIDTH
    lines = []
    for dc, dr in DIRECTIONS:
        both = []
        for sign in (1, -1):
            ray: list[int] = []
            c, r = col + sign * dc, row + sign * dr
            while 0 <= c < WIDTH and 0 <= r < HEIGHT and len(ray) < 3:
                ray.append(r * WIDTH + c)
                c, r = c + sign * dc, r + sign * dr
            both.append(tuple(ray))
        lines.append((both[0], both[1]))
    return tuple(lines)


RAYS: Final = tuple(_rays(square) for square in range(WIDTH * HEIGHT))
"""Per square, the neighbours along each line through it: a win check reads them instead of walking the grid."""


def _four_through(board: tuple[int, ...], col: int, row: int, stone: int) -> bool:
    """True when the stone at (``col``, ``row``) is part of four or more of ``stone`` in a row."""
    for ahead, behind in RAYS[row * WIDTH + col]:
        count = 1
        for square in ahead:
            if board[square] != stone:
                break
            count += 1
        for square in behind:
            if board[square] != stone:
                break
            count += 1
        if count >= 4:
            return True
    return False


def _scan_result(board: tuple[int, ...]) -> Outcome | None:
    winners = set()
    for square, stone in enumerate(board):
        if stone and _four_through(board, square % WIDTH, square // WIDTH, stone):
            winners.add(stone - 1)
    if len(winners) > 1:
        raise ValueError("both sides have four in a row")
    if winners:
        return Outcome(winners.pop(), "four in a row")
    if 0 not in board:
        return Outcome(None, "the board is full")
    return None


CONNECT4 = ConnectFour()
