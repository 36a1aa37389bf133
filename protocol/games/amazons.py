"""The Game of the Amazons: 10x10, four queens a side, arrows that wall off the board.

Seat 0 is black, with queens on a7 d10 g10 j7; seat 1 is white, with queens on
a4 d1 g1 j4. A turn moves one of your queens like a chess queen (any distance
along a rank, file or diagonal, never through or onto a queen or an arrow), then
shoots an arrow from the queen's new square the same way; the square the queen
left is free for the arrow. The arrow's square stays blocked for the rest of the
game. A player with no legal turn loses.

Black moves first by default, the COSC 322 course convention; the option
``first`` (0/1, or ``"black"``/``"white"``) lets white start, as in most Amazons
literature.

A move is written ``d1-d7/g7`` (queen, destination, arrow); its structured form
is ``{"queen": SQ, "to": SQ, "arrow": SQ}`` with each square in the client's
coordinate convention. Board cells: 0 empty, 1 black queen, 2 white queen,
3 arrow.

``from_picture`` reads a position back from what the state prints: ten rows of
``.`` (empty), ``B`` (black queen), ``W`` (white queen) and ``x`` (arrow),
rank 10 first, the cells separated by spaces or run together. Rank numbers,
the file letters and the status line (``"white (seat 1) to move"``) may be left
out; without a status line or ``to_move``, black moved first and the arrows
(one a turn) say who is next.
"""

from __future__ import annotations

import re
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

SIZE = 10
GRID = Grid(SIZE, SIZE)
SQUARES = SIZE * SIZE

EMPTY, BLACK, WHITE, ARROW = 0, 1, 2, 3
SYMBOLS = (".", "B", "W", "x")
COLOURS = ("black", "white")
CELL_NAMES = ("an empty square", "a black queen", "a white queen", "an arrow")
QUEENS_PER_SIDE = 4
START_QUEENS = (
    tuple(GRID.parse_name(s) for s in ("a7", "d10", "g10", "j7")),  # seat 0, black
    tuple(GRID.parse_name(s) for s in ("a4", "d1", "g1", "j4")),  # seat 1, white
)
NO_LEGAL_MOVE = "no legal move"

_DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))


def _build_tables() -> tuple[tuple[tuple[tuple[int, ...], ...], ...], list[tuple[int, ...] | None]]:
    """Rays from every square, and the path between every pair of aligned squares."""
    rays: list[tuple[tuple[int, ...], ...]] = []
    lines: list[tuple[int, ...] | None] = [None] * (SQUARES * SQUARES)
    for start in range(SQUARES):
        col, row = GRID.col_row(start)
        from_here = []
        for dc, dr in _DIRECTIONS:
            ray = []
            c, r = col + dc, row + dr
            while GRID.on_board(c, r):
                ray.append(GRID.index(c, r))
                lines[start * SQUARES + ray[-1]] = tuple(ray)
                c, r = c + dc, r + dr
            if ray:
                from_here.append(tuple(ray))
        rays.append(tuple(from_here))
    return tuple(rays), lines


RAYS, LINES = _build_tables()
"""``RAYS[sq]``: the squares along each direction from ``sq``, nearest first.
``LINES[a * 100 + b]``: the squares from ``a`` (excluded) to ``b`` (included)
when they share a line, else ``None``."""

NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(tuple(ray[0] for ray in rays) for rays in RAYS)
"""The up to eight squares next to each square."""


class AmazonsMove(NamedTuple):
    """One Amazons turn: the queen on ``queen`` moves to ``to`` and shoots at ``arrow``.

    Squares are indices ``row * 10 + col``, row 0 being rank 1.
    """

    queen: int
    to: int
    arrow: int

    def __str__(self) -> str:
        return f"{GRID.name(self.queen)}-{GRID.name(self.to)}/{GRID.name(self.arrow)}"

    def __repr__(self) -> str:
        return move_repr(self)


@dataclass(frozen=True)
class AmazonsState:
    """An Amazons position.

    ``board[row*10+col]`` is 0 (empty), 1 (black queen, seat 0), 2 (white queen,
    seat 1) or 3 (arrow). ``result`` is set once the player to move has no turn.
    """

    board: tuple[int, ...]
    to_move: int
    result: Outcome | None = field(default=None, compare=False)

    def __str__(self) -> str:
        lines = [GRID.render([SYMBOLS[v] for v in self.board])]
        if self.result is None:
            lines.append(f"{COLOURS[self.to_move]} (seat {self.to_move}) to move")
        else:
            lines.append(_describe(self.result))
        return "\n".join(lines)


def _describe(result: Outcome) -> str:
    if result.winner is None:  # pragma: no cover - Amazons has no draws
        return f"draw ({result.reason})"
    loser = 1 - result.winner
    return f"{COLOURS[result.winner]} (seat {result.winner}) won: {COLOURS[loser]} has {result.reason}"


def first_option(value: Any) -> int:
    """The ``first`` option: seat 0/1, or the colour ``"black"`` (seat 0) / ``"white"`` (seat 1)."""
    return first_seat_option(value, COLOURS)


def has_turn(board: tuple[int, ...] | list[int], stone: int) -> bool:
    """True when the side with queens ``stone`` (1 or 2) has at least one legal turn.

    A queen next to an empty square can step there and shoot back onto the
    square it left, so a turn exists exactly when some queen has an empty neighbour.
    """
    for square in range(SQUARES):
        if board[square] == stone:
            for n in NEIGHBOURS[square]:
                if board[n] == EMPTY:
                    return True
    return False


def _result_for(board: tuple[int, ...], to_move: int) -> Outcome | None:
    if has_turn(board, to_move + 1):
        return None
    return Outcome(1 - to_move, NO_LEGAL_MOVE)


_SEPARATORS = re.compile(r"[\s/\-]+")
_NOTATION_HELP = "write queen-destination/arrow, e.g. d1-d7/g7"


class Amazons(Game[AmazonsState, AmazonsMove]):
    """The rules of the Game of the Amazons."""

    id = "amazons"
    name = "Game of the Amazons"
    grid = GRID
    options_help = {"first": "seat that moves first: 0 or 'black' (default, COSC 322), 1 or 'white'"}
    first_colours = COLOURS
    _MOVE_TYPES = (AmazonsMove,)

    def _starting_position(self, first: int) -> AmazonsState:
        """Queens on their starting squares, no arrows."""
        board = [EMPTY] * SQUARES
        for seat, squares in enumerate(START_QUEENS):
            for square in squares:
                board[square] = seat + 1
        return AmazonsState(tuple(board), first)

    def to_move(self, state: AmazonsState) -> int:
        """Seat to play the next turn."""
        return state.to_move

    def legal_moves(self, state: AmazonsState) -> list[AmazonsMove]:
        """Every legal turn, by queen square, then queen destination, then arrow."""
        if state.result is not None:
            return []
        stone = state.to_move + 1
        board = list(state.board)
        moves: list[AmazonsMove] = []
        append = moves.append
        make = tuple.__new__
        for queen in [sq for sq in range(SQUARES) if board[sq] == stone]:
            board[queen] = EMPTY  # the square the queen leaves is open to its arrow
            for ray in RAYS[queen]:
                for to in ray:
                    if board[to]:
                        break
                    for arrow_ray in RAYS[to]:
                        for arrow in arrow_ray:
                            if board[arrow]:
                                break
                            append(make(AmazonsMove, (queen, to, arrow)))
            board[queen] = stone
        return moves

    def apply(self, state: AmazonsState, move: AmazonsMove) -> AmazonsState:
        """Play one turn; ``IllegalMove`` saying what is wrong with it."""
        if state.result is not None:
            raise IllegalMove("the game is over")
        queen, to, arrow = _unpack(move)
        board = state.board
        stone = state.to_move + 1
        name = GRID.name
        if board[queen] != stone:
            contents = "it is empty" if board[queen] == EMPTY else f"it holds {CELL_NAMES[board[queen]]}"
            raise IllegalMove(f"{name(queen)} is not one of your queens: {contents}", (queen,))
        _check_line(board, queen, to, "queen")
        _check_line(board, to, arrow, "arrow", vacated=queen)
        new = list(board)
        new[queen] = EMPTY
        new[to] = stone
        new[arrow] = ARROW
        new_board = tuple(new)
        to_move = 1 - state.to_move
        return AmazonsState(new_board, to_move, _result_for(new_board, to_move))

    def outcome(self, state: AmazonsState) -> Outcome | None:
        """The winner once the player to move has no legal turn, else ``None``."""
        return state.result

    def notation(self, move: AmazonsMove) -> str:
        """``queen-destination/arrow``, e.g. ``d1-d7/g7``."""
        return str(AmazonsMove(*move))

    def format_move(self, move: AmazonsMove, coords: str = "algebraic") -> dict[str, Any]:
        """``{"queen": SQ, "to": SQ, "arrow": SQ}`` with squares in ``coords``."""
        check_coords(coords)
        queen, to, arrow = move
        return {
            "queen": GRID.format(queen, coords),
            "to": GRID.format(to, coords),
            "arrow": GRID.format(arrow, coords),
        }

    def parse_move(self, obj: Any, state: AmazonsState, coords: str = "algebraic") -> AmazonsMove:
        """A turn from notation (``"d1-d7/g7"``, any case and spacing) or the structured form."""
        check_coords(coords)
        if self.is_move(obj):
            return obj
        if isinstance(obj, str):
            parts = [p for p in _SEPARATORS.split(obj.strip()) if p]
            if len(parts) != 3:
                raise IllegalMove(f"{shown(obj)} is not an Amazons move; {_NOTATION_HELP}")
            return AmazonsMove(*(GRID.parse_name(p) for p in parts))
        if isinstance(obj, dict):
            fields = ("queen", "to", "arrow")
            require_dict(obj, fields, "Game of the Amazons move")
            extra = sorted(str(k) for k in obj if k not in fields)
            if extra:
                raise IllegalMove(f"an Amazons move has only queen, to and arrow, not {', '.join(extra)}")
            return AmazonsMove(*(GRID.parse(obj[f], coords) for f in fields))
        raise IllegalMove(
            f"{shown(obj)} is not an Amazons move; {_NOTATION_HELP}, or send an object with queen, to and arrow"
        )

    def encode_state(self, state: AmazonsState, coords: str = "algebraic") -> dict[str, Any]:
        """``{"board": rows, "to_move": seat}``; cells 0 empty, 1 black, 2 white, 3 arrow."""
        return {"board": GRID.rows_for(state.board, coords), "to_move": state.to_move}

    def decode_state(self, obj: Any, coords: str = "algebraic") -> AmazonsState:
        """Rebuild a state from ``encode_state``; ``ValueError`` if it is not a position."""
        if not isinstance(obj, dict) or "board" not in obj or "to_move" not in obj:
            raise ValueError("an Amazons state is an object with board and to_move")
        board = GRID.cells_from(obj["board"], coords)
        if set(map(type, board)) != {int} or not set(board) <= {0, 1, 2, 3}:
            raise ValueError("Amazons cells are 0 (empty), 1 (black queen), 2 (white queen) or 3 (arrow)")
        for seat in (0, 1):
            count = board.count(seat + 1)
            if count != QUEENS_PER_SIDE:
                raise ValueError(f"{COLOURS[seat]} must have {QUEENS_PER_SIDE} queens, not {count}")
        to_move = obj["to_move"]
        if isinstance(to_move, bool) or to_move not in (0, 1):
            raise ValueError("to_move must be 0 or 1")
        return AmazonsState(board, to_move, _result_for(board, to_move))

    def from_picture(self, text: str, to_move: int | None = None) -> AmazonsState:
        """A position from a picture of its board, as the state prints it (see the module notes)."""
        board, status = GRID.read_picture(text, _read_cell, one_character_cells=True)
        if to_move is None:
            to_move = status_to_move(status)
        if to_move is None:
            to_move = board.count(ARROW) % 2
        return self.decode_state({"board": GRID.rows_for(board), "to_move": to_move})



def _read_cell(text: str) -> int:
    if text not in SYMBOLS:
        raise ValueError(f"{text!r} is not a cell; cells are . (empty), B (black queen), W (white queen) and x (arrow)")
    return SYMBOLS.index(text)


_LINE_REFUSALS = {
    "queen": (
        "the queen on {start} must move at least one square",
        "{start} to {end} is not a queen move",
        "the queen on {start} cannot reach {end}: {end} holds {cell}",
        "the queen on {start} cannot reach {end}: {square} is in the way",
    ),
    "arrow": (
        "the arrow must fly at least one square from {start}",
        "the arrow cannot fly from {start} to {end}: that is not a queen move",
        "the arrow cannot land on {end}: it holds {cell}",
        "the arrow cannot reach {end} from {start}: {square} is in the way",
    ),
}
"""Why a queen (or an arrow) cannot go from ``start`` to ``end``: the same square, no shared line, ``end`` taken,
a square in the way."""


def _check_line(board: tuple[int, ...], start: int, end: int, what: str, vacated: int = -1) -> None:
    """``IllegalMove`` unless the queen (``what="queen"``) or arrow (``"arrow"``) on ``start`` can go to ``end``
    like a chess queen, over empty squares; ``vacated``, the square the queen left, is empty for its arrow."""
    same, not_a_line, taken, in_the_way = _LINE_REFUSALS[what]
    names = {"start": GRID.name(start), "end": GRID.name(end)}
    if end == start:
        raise IllegalMove(same.format(**names), (start,))
    path = LINES[start * SQUARES + end]
    if path is None:
        raise IllegalMove(not_a_line.format(**names), (start, end))
    for square in path:
        if board[square] and square != vacated:
            if square == end:
                raise IllegalMove(taken.format(cell=CELL_NAMES[board[end]], **names), (start, end))
            raise IllegalMove(in_the_way.format(square=GRID.name(square), **names), (start, end, square))


def _unpack(move: Any) -> tuple[int, int, int]:
    """The three squares of a move value; ``IllegalMove`` if they are not squares."""
    if isinstance(move, tuple) and len(move) == 3:
        if all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < SQUARES for v in move):
            return move[0], move[1], move[2]
    raise IllegalMove(f"{shown(move)} is not an Amazons move; it needs three squares: queen, destination, arrow")


AMAZONS = Amazons()
"""The Game of the Amazons rules object, registered as ``"amazons"``."""
