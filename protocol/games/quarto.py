"""Quarto: 4 by 4 squares (``a1`` to ``d4``) and 16 distinct pieces.

A piece is a 4-bit code 0-15, written as four binary digits, ``format(code,
"04b")``: ``"0101"`` is piece 5. Each digit is one attribute, in order colour,
shape, height, hollow (digit 1 is the highest bit, 8).

Turns
    The first turn (by the seat named by option ``first``, default 0) only
    chooses a piece for the opponent: notation ``"0101"``, structured
    ``{"square": null, "piece": "0101"}``. Every later turn places the piece you
    were given on an empty square and then chooses one of the remaining pieces
    for the opponent: ``"c3 0101"`` / ``{"square": "c3", "piece": "0101"}``.
    When the placement wins or fills the board the game is over and no piece is
    handed over: ``"c3"`` / ``{"square": "c3", "piece": null}``.

Hand-over rules (``apply`` rejects, with a reason, any move breaking them, and
``legal_moves`` lists exactly the moves it accepts)
    * the handed piece must not be on the board and must not be the one you
      were just given (it was placed this turn);
    * while the game goes on you must hand a piece;
    * after a winning or board-filling placement you must *not* hand one.

Winning
    Four pieces in a rank, a file or either long diagonal sharing at least one
    attribute value (all 1s or all 0s in some digit) win for the player who
    placed the last piece. A full board with no such line is a draw.

On the printed board each square shows its piece code, ``....`` when empty.
``from_picture`` reads such a board back, rank 4 first (``.`` also stands for
an empty square), with the piece in hand from the status line (``"seat 0 to
place 0011"``) or ``in_hand=`` (``"0011"`` or 3). Rank numbers, the file
letters and the status line may be left out; without a status line or
``to_move``, seat 0 made the opening hand-over and the pieces placed say who
is next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .base import Game, Grid, IllegalMove, Outcome, check_coords, move_repr, shown, status_to_move

SIZE = 4
GRID = Grid(SIZE, SIZE)
SQUARES = SIZE * SIZE
PIECES = 16
EMPTY = -1
ATTRIBUTES = ("colour", "shape", "height", "hollow")
"""Attribute names of the code's digits, left to right (bits 8, 4, 2, 1)."""


def _lines() -> tuple[tuple[str, tuple[int, ...]], ...]:
    lines = []
    for row in range(SIZE):
        lines.append((f"rank {row + 1}", tuple(GRID.index(c, row) for c in range(SIZE))))
    for col in range(SIZE):
        lines.append((f"file {'abcd'[col]}", tuple(GRID.index(col, r) for r in range(SIZE))))
    lines.append(("diagonal a1-d4", tuple(GRID.index(i, i) for i in range(SIZE))))
    lines.append(("diagonal a4-d1", tuple(GRID.index(i, SIZE - 1 - i) for i in range(SIZE))))
    return tuple(lines)


LINES: tuple[tuple[str, tuple[int, ...]], ...] = _lines()
"""The ten winning lines as ``(name, squares)``: 4 ranks, 4 files, 2 diagonals."""

LINES_THROUGH: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i, (_, squares) in enumerate(LINES) if sq in squares) for sq in range(SQUARES)
)
"""``LINES_THROUGH[sq]``: indexes into ``LINES`` of the lines containing ``sq``."""


def piece_text(code: int) -> str:
    """A piece's four binary digits, e.g. ``piece_text(5) == "0101"``."""
    return format(code, "04b")


def shared_attributes(codes: tuple[int, ...] | list[int]) -> list[tuple[int, int]]:
    """``(digit index 0-3, value)`` for every attribute all ``codes`` share, left digit first."""
    ones = 15
    zeros = 15
    for code in codes:
        ones &= code
        zeros &= ~code
    shared = []
    for digit in range(4):
        bit = 8 >> digit
        if ones & bit:
            shared.append((digit, 1))
        elif zeros & bit:
            shared.append((digit, 0))
    return shared


def _line_wins(board: tuple[int, ...], squares: tuple[int, ...]) -> bool:
    a, b, c, d = (board[sq] for sq in squares)
    if a < 0 or b < 0 or c < 0 or d < 0:
        return False
    return bool((a & b & c & d) | (~(a | b | c | d) & 15))


def _win_through(board: tuple[int, ...], square: int) -> int | None:
    """Index of a winning line through ``square``, or ``None``."""
    for i in LINES_THROUGH[square]:
        if _line_wins(board, LINES[i][1]):
            return i
    return None


VALUE_WORDS = (("light", "dark"), ("square", "round"), ("short", "tall"), ("solid", "hollow"))
"""Each digit's value in words, 0 then 1 (colour, shape, height, hollow), as people say a piece."""


def describe_piece(code: int) -> str:
    """A piece in words, its digits after it: ``"dark round short hollow (1101)"``."""
    words = " ".join(VALUE_WORDS[d][(code >> (3 - d)) & 1] for d in range(4))
    return f"{words} ({piece_text(code)})"


def _win_reason(board: tuple[int, ...], line: int) -> str:
    name, squares = LINES[line]
    shared = shared_attributes([board[sq] for sq in squares])
    what = " and ".join(f"all {VALUE_WORDS[d][v]}" for d, v in shared)
    return f"four sharing an attribute on {name}: {what}"


class QuartoMove(NamedTuple):
    """A Quarto move: place the piece in hand on ``square``, then hand ``piece`` over.

    ``square`` is ``None`` on the opening turn; ``piece`` is ``None`` when the
    placement ends the game.
    """

    square: int | None
    piece: int | None

    def __str__(self) -> str:
        parts = []
        if self.square is not None:
            parts.append(GRID.name(self.square))
        if self.piece is not None:
            parts.append(piece_text(self.piece))
        return " ".join(parts) or "-"

    def __repr__(self) -> str:
        return move_repr(self)


@dataclass(frozen=True)
class QuartoState:
    """A Quarto position.

    ``board[sq]`` is ``-1`` (empty) or a piece code; ``in_hand`` is the piece the
    player to move must place, ``None`` before the opening hand-over and once the
    game is over.
    """

    board: tuple[int, ...]
    in_hand: int | None
    to_move: int
    result: Outcome | None = field(default=None, compare=False)

    def __str__(self) -> str:
        cells = ["...." if v == EMPTY else piece_text(v) for v in self.board]
        lines = GRID.render(cells, cell_width=4).splitlines()
        if self.result is not None:
            if self.result.winner is None:
                lines.append(f"draw ({self.result.reason})")
            else:
                lines.append(f"seat {self.result.winner} won: {self.result.reason}")
        elif self.in_hand is None:
            lines.append(f"seat {self.to_move} to choose a piece for seat {1 - self.to_move}")
        else:
            lines.append(f"seat {self.to_move} to place {piece_text(self.in_hand)}")
        return "\n".join(lines)


class Quarto(Game[QuartoState, QuartoMove]):
    """The rules of Quarto."""

    id = "quarto"
    name = "Quarto"
    grid = GRID
    options_help = {"first": "seat (0 or 1) that chooses the first piece for the other; default 0"}
    _MOVE_TYPES = (QuartoMove,)

    def _starting_position(self, first: int) -> QuartoState:
        """The empty board, no piece handed over yet."""
        return QuartoState((EMPTY,) * SQUARES, None, first)

    def to_move(self, state: QuartoState) -> int:
        """Seat to move: to choose a piece (opening) or to place the piece in hand."""
        return state.to_move

    def legal_moves(self, state: QuartoState) -> list[QuartoMove]:
        """Every move ``apply`` accepts; empty once the game is over."""
        if state.result is not None:
            return []
        board = state.board
        if state.in_hand is None:
            return [QuartoMove(None, p) for p in range(PIECES)]
        remaining = _remaining(state)
        moves = []
        for sq in range(SQUARES):
            if board[sq] != EMPTY:
                continue
            placed = board[:sq] + (state.in_hand,) + board[sq + 1 :]
            if not remaining or _win_through(placed, sq) is not None:
                moves.append(QuartoMove(sq, None))
            else:
                moves.extend(QuartoMove(sq, p) for p in remaining)
        return moves

    def apply(self, state: QuartoState, move: QuartoMove) -> QuartoState:
        """Place and hand over; ``IllegalMove`` with the reason otherwise."""
        if state.result is not None:
            raise IllegalMove("the game is over")
        if not isinstance(move, QuartoMove):
            raise IllegalMove(f"{shown(move)} is not a Quarto move; write 'c3 0101' (square, then a piece)")
        square, piece = move
        if piece is not None and (isinstance(piece, bool) or not isinstance(piece, int) or not 0 <= piece < PIECES):
            raise IllegalMove(f"{shown(piece)} is not a piece; pieces are four binary digits, 0000 to 1111")
        if state.in_hand is None:
            if square is not None:
                raise IllegalMove(
                    "there is no piece to place yet: the first turn only chooses a piece for your opponent"
                )
            if piece is None:
                raise IllegalMove("you must choose a piece for your opponent")
            return QuartoState(state.board, piece, 1 - state.to_move)
        return self._place(state, square, piece)

    def _place(self, state: QuartoState, square: Any, piece: int | None) -> QuartoState:
        """A turn after the opening hand-over: place the piece in hand on ``square``, hand ``piece`` over."""
        seat = state.to_move
        board = state.board
        given = piece_text(state.in_hand)
        if square is None:
            raise IllegalMove(f"you must place the piece you were given ({given}) on an empty square")
        if isinstance(square, bool) or not isinstance(square, int) or not 0 <= square < SQUARES:
            raise IllegalMove(f"{shown(square)} is not a square; squares run from a1 to d4")
        name = GRID.name(square)
        if board[square] != EMPTY:
            raise IllegalMove(f"{name} is taken", (square,))
        placed = board[:square] + (state.in_hand,) + board[square + 1 :]
        line = _win_through(placed, square)
        if line is not None or EMPTY not in placed:
            if piece is not None:
                why = "wins" if line is not None else "fills the board"
                raise IllegalMove(f"placing {given} on {name} {why}, so no piece is handed over: write just {name}",
                                  (square,))
            if line is not None:
                result = Outcome(seat, _win_reason(placed, line))
            else:
                result = Outcome(None, "the board is full with no four sharing an attribute")
            return QuartoState(placed, None, 1 - seat, result)
        if piece is None:
            raise IllegalMove("you must choose a piece for your opponent")
        if piece == state.in_hand:
            raise IllegalMove(f"the piece you were given is {given}, it cannot be handed back")
        if piece in board:
            raise IllegalMove(f"piece {piece_text(piece)} is already on the board")
        return QuartoState(placed, piece, 1 - seat)

    def outcome(self, state: QuartoState) -> Outcome | None:
        """Winner and reason, or ``None`` while the game runs."""
        return state.result

    def notation(self, move: QuartoMove) -> str:
        """``"0101"`` (opening), ``"c3 0101"``, or ``"c3"`` when the placement ends the game."""
        return str(move)

    def format_move(self, move: QuartoMove, coords: str = "algebraic") -> dict[str, Any]:
        """``{"square": SQ or None, "piece": "0101" or None}``."""
        check_coords(coords)
        return {
            "square": None if move.square is None else GRID.format(move.square, coords),
            "piece": None if move.piece is None else piece_text(move.piece),
        }

    _PIECE = re.compile(r"^[01]{4}$")

    def parse_move(self, obj: Any, state: QuartoState, coords: str = "algebraic") -> QuartoMove:
        """A move from notation (``"0101"``, ``"c3 0101"``, ``"c3"``) or its structured form.

        In the structured form ``piece`` may also be an integer 0-15; a missing
        key counts as ``null``. Text that is not a move is refused with what this
        point of the turn asks for (:func:`turn_words`).
        """
        check_coords(coords)
        if self.is_move(obj):
            return obj
        if isinstance(obj, str):
            return self._parse_text(obj, state)
        if isinstance(obj, dict) and obj and set(obj) <= {"square", "piece"}:
            square = obj.get("square")
            piece = obj.get("piece")
            if square is None and piece is None:
                raise IllegalMove(f"a Quarto move needs a square, a piece, or both; {turn_words(state)}")
            return QuartoMove(
                None if square is None else GRID.parse(square, coords),
                None if piece is None else self._parse_piece(piece),
            )
        raise IllegalMove(f'{shown(obj)} is not a Quarto move; send notation text or '
                          '{"square": SQUARE, "piece": "0101"}')

    def _parse_text(self, text: str, state: QuartoState) -> QuartoMove:
        """A move in notation; IllegalMove saying what was wrong and what this point of the turn asks for."""
        parts = text.replace(",", " ").split()
        if len(parts) == 1 and self._PIECE.match(parts[0]):
            return QuartoMove(None, int(parts[0], 2))
        square = _square(parts[0]) if len(parts) in (1, 2) else None
        piece = int(parts[1], 2) if len(parts) == 2 and self._PIECE.match(parts[1]) else None
        if square is not None and (len(parts) == 1 or piece is not None):
            return QuartoMove(square, piece)  # a move's form, legal or not (apply judges): no words made for it
        expected = turn_words(state)
        if state.in_hand is None and state.result is None:
            raise IllegalMove(f"{shown(text)} is not a piece; {expected}")  # a piece is asked for, nothing else
        joined = _JOINED.match(parts[0]) if len(parts) == 1 else None
        if joined:  # 'b1-0001', 'b10001': the square and the piece go apart, a space between them
            raise IllegalMove(f"{shown(text)} is not a move: write the square, a space, then the piece: "
                              f"'{joined.group(1).lower()} {joined.group(2)}'")
        if len(parts) not in (1, 2):
            raise IllegalMove(f"{shown(text)} is not a Quarto move; {expected}")
        if square is None:
            what = "neither a square nor a piece" if len(parts) == 1 else f"not a square (a1 to {GRID.last_name()})"
            raise IllegalMove(f"{shown(parts[0])} is {what}; {expected}")
        raise IllegalMove(f"{shown(parts[1])} is not a piece; {expected}")

    def _parse_piece(self, obj: Any) -> int:
        if isinstance(obj, str) and self._PIECE.match(obj.strip()):
            return int(obj.strip(), 2)
        if isinstance(obj, int) and not isinstance(obj, bool) and 0 <= obj < PIECES:
            return obj
        raise IllegalMove(f"{shown(obj)} is not a piece; pieces are four binary digits, 0000 to 1111")

    def encode_state(self, state: QuartoState, coords: str = "algebraic") -> dict[str, Any]:
        """``{"board": rows, "in_hand": "0101" or None, "to_move": seat}``; empty cells are None."""
        cells = tuple(None if v == EMPTY else piece_text(v) for v in state.board)
        return {
            "board": GRID.rows_for(cells, coords),
            "in_hand": None if state.in_hand is None else piece_text(state.in_hand),
            "to_move": state.to_move,
        }

    def decode_state(self, obj: Any, coords: str = "algebraic") -> QuartoState:
        """Rebuild a state from ``encode_state``; ``ValueError`` if it is not a position.

        A winning line means the seat that is not to move won (it placed last).
        """
        if not isinstance(obj, dict) or not {"board", "in_hand", "to_move"} <= set(obj):
            raise ValueError("a Quarto state is an object with board, in_hand and to_move")
        board = tuple(_decode_piece(v) for v in GRID.cells_from(obj["board"], coords))
        in_hand = _decode_piece(obj["in_hand"])
        in_hand = None if in_hand == EMPTY else in_hand
        to_move = obj["to_move"]
        if isinstance(to_move, bool) or to_move not in (0, 1):
            raise ValueError("to_move must be 0 or 1")
        on_board = [v for v in board if v != EMPTY]
        if len(set(on_board)) != len(on_board):
            raise ValueError("a piece appears twice on the board")
        if in_hand is not None and in_hand in on_board:
            raise ValueError(f"piece {piece_text(in_hand)} is both in hand and on the board")
        result = None
        for i, (_, squares) in enumerate(LINES):
            if _line_wins(board, squares):
                result = Outcome(1 - to_move, _win_reason(board, i))
                break
        else:
            if len(on_board) == SQUARES:
                result = Outcome(None, "the board is full with no four sharing an attribute")
        if result is not None and in_hand is not None:
            raise ValueError("the game is over, so no piece can be in hand")
        if result is None and on_board and in_hand is None:
            raise ValueError("a game in progress with pieces on the board needs a piece in hand")
        return QuartoState(board, in_hand, to_move, result)

    def from_picture(self, text: str, to_move: int | None = None, in_hand: str | int | None = None) -> QuartoState:
        """A position from a picture of its board, as the state prints it (see the module notes)."""
        board, status = GRID.read_picture(text, _read_piece)
        if in_hand is None and status is not None:
            found = _IN_HAND.search(status)
            in_hand = None if found is None else found.group(1)
        hand = None if in_hand is None else self._parse_piece(in_hand)
        if to_move is None:
            to_move = status_to_move(status)
        if to_move is None:
            placed = sum(1 for piece in board if piece != EMPTY)
            to_move = 0 if placed == 0 and hand is None else (placed + 1) % 2
        cells = tuple(None if piece == EMPTY else piece_text(piece) for piece in board)
        return self.decode_state({"board": GRID.rows_for(cells), "in_hand": None if hand is None else piece_text(hand),
                                  "to_move": to_move})



_IN_HAND = re.compile(r"to place ([01]{4})")
_JOINED = re.compile(r"^([a-d][1-4])[^a-z0-9\s]?([01]{4})$", re.IGNORECASE)
"""A square and a piece written as one word (``b1-0001``, ``b10001``): the form is ``b1 0001``."""

PIECE_DIGITS = "a piece is four binary digits, one an attribute, left to right: " + ", ".join(
    f"{attribute} (0 {zero}, 1 {one})" for attribute, (zero, one) in zip(ATTRIBUTES, VALUE_WORDS, strict=True))
"""What a piece's four digits mean, in a sentence for people."""


def _square(text: str) -> int | None:
    try:
        return GRID.parse_name(text)
    except IllegalMove:
        return None


def turn_words(state: QuartoState) -> str:
    """What the player to move writes now, with an example valid in ``state``: a piece for the opponent (the
    opening), a square then a piece (``b1 0110``), or just the square (the last placement)."""
    if state.result is not None:
        return "the game is over"
    if state.in_hand is None:
        return f"choose a piece for your opponent: four binary digits ({', '.join(ATTRIBUTES)}), like 0110"
    given = piece_text(state.in_hand)
    empty = [square for square in range(SQUARES) if state.board[square] == EMPTY]
    if len(empty) == 1:
        return f"place {given} on the last empty square: write just {GRID.name(empty[0])}"
    example = _example(state, empty)
    return (f"place {given} on an empty square, then choose a piece for your opponent: the square, a space and the "
            f"piece's four binary digits, like '{example}' (just the square when the placement wins)")


def _remaining(state: QuartoState) -> list[int]:
    """The pieces neither on the board nor in hand: those the player to move may hand over."""
    used = set(state.board)
    used.add(state.in_hand)  # type: ignore[arg-type]
    return [piece for piece in range(PIECES) if piece not in used]


def _example(state: QuartoState, empty: list[int]) -> str:
    """A legal move's notation in ``state`` (a piece in hand, two squares or more empty), found without listing
    every move (errors are worded often: an openings file's parser tries runs of words that are not moves): the
    middle empty square whose placement does not win, and the middle piece left; just a square when every placement
    wins."""
    remaining = _remaining(state)
    middle = len(empty) // 2
    for square in empty[middle:] + empty[:middle]:
        placed = state.board[:square] + (state.in_hand,) + state.board[square + 1 :]  # type: ignore[operator]
        if remaining and _win_through(placed, square) is None:
            return QUARTO.notation(QuartoMove(square, remaining[len(remaining) // 2]))
    return QUARTO.notation(QuartoMove(empty[middle], None))


def _read_piece(text: str) -> int:
    if text in (".", "...."):
        return EMPTY
    if re.fullmatch(r"[01]{4}", text):
        return int(text, 2)
    raise ValueError(f"{text!r} is not a square; write a piece as four binary digits (0101), or .... for none")


def _decode_piece(value: Any) -> int:
    if value is None:
        return EMPTY
    if isinstance(value, str) and re.fullmatch(r"[01]{4}", value):
        return int(value, 2)
    raise ValueError(f"{shown(value)} is not a piece; pieces are four binary digits, or null for none")


QUARTO = Quarto()
"""The Quarto rules object registered as ``"quarto"``."""
