"""The contract every game follows, and the pieces all games share.

A game object is stateless: it turns immutable states into new states. The
reference rules are plain Python meant to be read; engines keep their own fast
representations and are tested against these. The module is long because it holds
the whole contract (every method a game answers, with its default) beside the grid.

Squares are held internally as an index ``row * width + col`` with row 0 at the
*bottom* (rank 1) and column 0 on the left (file ``a``). They are translated at
the edge into one of three coordinate conventions:

``algebraic``  ``"a1"`` ... rank 1 at the bottom, as people write squares;
``cosc322``    ``[row, col]`` 1-based, row 1 at the bottom (COSC 322 Amazons server);
``matrix``     ``[row, col]`` 0-based, row 0 at the top (most student arrays).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

COORDS: tuple[str, ...] = ("algebraic", "cosc322", "matrix")
"""The coordinate conventions a client may choose."""

FILES = "abcdefghijklmnopqrstuvwxyz"
LEGEND = "cells:"
"""A board printout's key to its cells starts with this; pictures read back skip it."""


ECHO_LIMIT = 40
"""How many characters of what a client sent an error message repeats."""


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis ends a cut one)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


_JSON_WORDS = {None: "null", True: "true", False: "false"}


def shown(value: Any, limit: int = ECHO_LIMIT) -> str:
    """``repr(value)`` cut to ``limit`` characters: how errors quote what a client sent (a hostile client
    may send a whole message of text; an error repeats only its start). ``null``, ``true`` and ``false`` are
    written as a client wrote them, not as Python's ``None``, ``True`` and ``False``."""
    if value is None or isinstance(value, bool):
        return _JSON_WORDS[value]
    return clip(repr(value), limit)


def shown_move(value: Any) -> str:
    """A move as a client sent it, for an error: a structured move's fields as ``queen [7, 1], to [7, 2], arrow
    [1, 4]`` (a Python dict's repr is no notation anybody writes), anything else as :func:`shown` quotes it."""
    if isinstance(value, dict) and 0 < len(value) <= 4 and all(isinstance(k, str) for k in value):
        parts = []
        for key, field in value.items():
            if isinstance(field, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in field):
                parts.append(f"{key} [{', '.join(map(str, field))}]")
            else:
                parts.append(f"{key} {shown(field, 16)}")
        return clip(", ".join(parts), 2 * ECHO_LIMIT)
    return shown(value)


class IllegalMove(ValueError):
    """A move the rules do not allow, or text that is not a move at all.

    ``reason`` is a sentence a person understands ("column 4 is full").
    """

    def __init__(self, reason: str, squares: tuple[int, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.squares = squares
        """The squares ``reason`` names by their algebraic names, for :meth:`Grid.named_in` (a rule's reason: a
        reason that teaches the notation, "write b2-c3/SQUARE", gives none)."""


class OptionError(ValueError):
    """A game option that is unknown or has a bad value."""


@dataclass(frozen=True)
class Outcome:
    """How a game ended: the winning seat (``None`` for a draw) and why."""

    winner: int | None
    reason: str

    @property
    def is_draw(self) -> bool:
        """True when nobody won."""
        return self.winner is None

    def to_json(self) -> dict[str, Any]:
        """A JSON-compatible form: ``{"winner": 0|1|None, "reason": str}``."""
        return {"winner": self.winner, "reason": self.reason}


def move_repr(move: Any) -> str:
    """How a move value prints at a prompt: its class and notation, ``<Drop 4>``, ``<AmazonsMove d1-d7/g7>``.

    A move holding something that is no square or piece (``apply`` refuses it)
    prints its fields instead, so that printing never fails.
    """
    try:
        text = str(move)
    except (TypeError, ValueError, IndexError):
        text = " ".join(f"{name}={value!r}" for name, value in zip(move._fields, move, strict=True))
    return f"<{type(move).__name__} {text}>"


def check_coords(coords: str) -> str:
    """Return ``coords`` if it names a convention, else raise ``ValueError``."""
    if coords not in COORDS:
        raise ValueError(f"unknown coordinate convention {coords!r}; accepted: {', '.join(COORDS)}")
    return coords


@dataclass(frozen=True)
class Grid:
    """A rectangular board's geometry and its square notation in every convention."""

    width: int
    height: int

    @property
    def size(self) -> int:
        """Number of squares."""
        return self.width * self.height

    def index(self, col: int, row: int) -> int:
        """Square index of 0-based ``col`` and ``row`` (row 0 at the bottom)."""
        return row * self.width + col

    def col_row(self, square: int) -> tuple[int, int]:
        """``(col, row)`` of a square index, row 0 at the bottom."""
        return square % self.width, square // self.width

    def on_board(self, col: int, row: int) -> bool:
        """True when ``(col, row)`` lies on the board."""
        return 0 <= col < self.width and 0 <= row < self.height

    def name(self, square: int) -> str:
        """Algebraic name of a square, e.g. ``"d10"``."""
        col, row = self.col_row(square)
        return f"{FILES[col]}{row + 1}"

    def last_name(self) -> str:
        """Name of the top-right square, for messages ("a1 to h8")."""
        return self.name(self.size - 1)

    _NAME = re.compile(r"^([a-z])([0-9]{1,2})$")

    def parse_name(self, text: str) -> int:
        """Square index of an algebraic name; ``IllegalMove`` if it is not a square."""
        m = self._NAME.match(text.strip().lower())
        if m:
            col = FILES.index(m.group(1))
            row = int(m.group(2)) - 1
            if self.on_board(col, row):
                return self.index(col, row)
        raise IllegalMove(f"{shown(text)} is not a square; squares run from a1 to {self.last_name()}")

    def format(self, square: int, coords: str = "algebraic") -> str | list[int]:
        """A square in the given convention."""
        col, row = self.col_row(square)
        if coords == "algebraic":
            return self.name(square)
        if coords == "cosc322":
            return [row + 1, col + 1]
        if coords == "matrix":
            return [self.height - 1 - row, col]
        check_coords(coords)
        raise AssertionError("unreachable")

    def parse(self, obj: Any, coords: str = "algebraic") -> int:
        """Square index of ``obj`` written in ``coords``; ``IllegalMove`` on anything else.

        An algebraic name is accepted whatever the convention, since it cannot be
        mistaken for a pair of numbers. Every refusal names the accepted range.
        """
        check_coords(coords)
        if isinstance(obj, str):
            return self.parse_name(obj)
        if (
            isinstance(obj, (list, tuple))
            and len(obj) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in obj)
        ):
            r, c = obj
            if coords == "cosc322":
                col, row = c - 1, r - 1
            elif coords == "matrix":
                col, row = c, self.height - 1 - r
            else:
                raise IllegalMove(f"{shown(list(obj))}: in algebraic coordinates {self.squares_help(coords)}")
            if self.on_board(col, row):
                return self.index(col, row)
            raise IllegalMove(f"{shown(list(obj))} is off the board; {self.squares_help(coords)}")
        raise self._not_a_square(obj, coords)

    def named_in(self, text: str, squares: tuple[int, ...], coords: str) -> str:
        """``text`` with the algebraic names of ``squares`` written in ``coords`` (``[7, 2]`` in cosc322): how a
        rule's reason reaches a player of another convention."""
        if coords == "algebraic":
            return text
        for square in squares:
            written = self.format(square, coords)
            shown_as = f"[{written[0]}, {written[1]}]" if isinstance(written, list) else str(written)
            text = re.sub(rf"\b{self.name(square)}\b", shown_as, text)
        return text

    def squares_help(self, coords: str) -> str:
        """The squares a convention accepts, for messages: ``"squares are [1..10, 1..10] ..."``."""
        names = f"names a1 to {self.last_name()}"
        if coords == "cosc322":
            return f"squares are [row, col] in [1..{self.height}, 1..{self.width}] (row 1 at the bottom), or {names}"
        if coords == "matrix":
            return (f"squares are [row, col] in [0..{self.height - 1}, 0..{self.width - 1}] (row 0 at the top), "
                    f"or {names}")
        return f"squares are {names}"

    def _not_a_square(self, obj: Any, coords: str) -> IllegalMove:
        return IllegalMove(f"{shown(obj)} is not a square; {self.squares_help(coords)}")

    def rows_for(self, cells: tuple[Any, ...], coords: str = "algebraic") -> list[list[Any]]:
        """Board cells as a list of rows in the convention's own row order.

        ``matrix`` lists the top row first (``rows[r][c]`` matches ``[r, c]``);
        ``algebraic`` and ``cosc322`` list rank 1 first (``rows[r-1][c-1]`` matches
        cosc322 ``[r, c]``).
        """
        check_coords(coords)
        rows = [list(cells[r * self.width : (r + 1) * self.width]) for r in range(self.height)]
        if coords == "matrix":
            rows.reverse()
        return rows

    def cells_from(self, rows: Any, coords: str = "algebraic") -> tuple[Any, ...]:
        """Inverse of :meth:`rows_for`; ``ValueError`` when the shape is wrong."""
        check_coords(coords)
        if not isinstance(rows, list) or len(rows) != self.height:
            raise ValueError(f"board must be a list of {self.height} rows")
        for row in rows:
            if not isinstance(row, list) or len(row) != self.width:
                raise ValueError(f"each board row must be a list of {self.width} cells")
        ordered = list(reversed(rows)) if coords == "matrix" else rows
        return tuple(cell for row in ordered for cell in row)

    def render(self, cell_text: list[str], cell_width: int = 1) -> str:
        """A terminal picture: rank labels on the left, file letters below, top rank first."""
        label_width = len(str(self.height))
        width = self.width
        lines = []
        for row in range(self.height - 1, -1, -1):
            cells = " ".join(text.rjust(cell_width) for text in cell_text[row * width : (row + 1) * width])
            lines.append(f"{str(row + 1).rjust(label_width)}  {cells}")
        files = " ".join(FILES[c].rjust(cell_width) for c in range(width))
        lines.append(f"{' ' * label_width}  {files}")
        return "\n".join(lines)

    def read_picture(
        self, text: str, read_cell: Callable[[str], Any], column_names: Sequence[str] | None = None,
        one_character_cells: bool = False,
    ) -> tuple[tuple[Any, ...], str | None]:
        """The cells (by square index) and the status line of a board picture, as :meth:`render` draws it.

        Rows come top rank first, cells separated by spaces (or run together,
        when ``one_character_cells``); a row may start with its rank number.
        The line of column names (``column_names``, file letters by default)
        may follow, then one status line, returned as it is (``None`` when
        there is none). Blank lines are skipped. ``read_cell`` turns a cell's
        text into its value or raises ``ValueError``; every error names the
        row and column.
        """
        names = list(column_names) if column_names is not None else list(FILES[: self.width])
        rows: list[list[str]] = []
        status = None
        for line in text.splitlines():
            if line.strip().lower().startswith(LEGEND):
                continue  # a printout's key to its cells
            label, tokens = _split_row(line, self.width, one_character_cells)
            if not tokens:
                continue
            if len(rows) < self.height:
                rank = str(self.height - len(rows))
                if label is not None and label != rank:
                    raise ValueError(f"row {label} stands where row {rank} should: rows come top first, "
                                     f"all {self.height} of them: {line.strip()!r}")
                if len(tokens) != self.width:
                    raise ValueError(f"row {rank} has {len(tokens)} cells, not {self.width}: {line.strip()!r}")
                rows.append(tokens)
            elif line.split() == names and status is None:
                continue
            elif len(tokens) == self.width and _reads(tokens, read_cell):
                raise ValueError(f"the picture has more than {self.height} rows of cells: {line.strip()!r}")
            elif status is None:
                status = line.strip()
            else:
                raise ValueError(f"one status line may follow the board, not {line.strip()!r} as well")
        if len(rows) < self.height:
            raise ValueError(f"the picture has {len(rows)} rows of cells; the board has {self.height}")
        return self._read_cells(rows, read_cell, names), status

    def _read_cells(self, rows: list[list[str]], read_cell: Callable[[str], Any], names: list[str]) -> tuple[Any, ...]:
        """The cells by square index of a picture's rows of cell texts (top rank first)."""
        cells: list[Any] = [None] * self.size
        for top, tokens in enumerate(rows):
            row = self.height - 1 - top
            for col, token in enumerate(tokens):
                try:
                    cells[self.index(col, row)] = read_cell(token)
                except ValueError as err:
                    raise ValueError(f"row {row + 1}, column {names[col]}: {err}") from None
        return tuple(cells)


def _split_row(line: str, width: int, one_character_cells: bool) -> tuple[str | None, list[str]]:
    """A picture line as ``(rank number or None, cell texts)``, if it is a row of cells."""
    tokens = line.split()
    if one_character_cells and 1 <= len(tokens) <= 2 and len(tokens[-1]) == width:
        tokens = tokens[:-1] + list(tokens[-1])  # cells run together
    if len(tokens) == width + 1 and tokens[0].isdecimal() and len(tokens[0]) <= 2:
        return tokens[0], tokens[1:]
    return None, tokens


def _reads(tokens: list[str], read_cell: Callable[[str], Any]) -> bool:
    try:
        for token in tokens:
            read_cell(token)
    except ValueError:
        return False
    return True


_STATUS_SEAT = re.compile(r"\bseat ([01])\)? (won|to )")


def status_to_move(status: str | None) -> int | None:
    """The seat to move by a picture's status line, as a state prints it; ``None`` when it does not say.

    ``"X (seat 1) to move"`` and ``"seat 1 to place 0101"`` mean seat 1;
    ``"... (seat 0) won: ..."`` means seat 1 (the loser moves next); a draw
    or no status line says nothing. Any other line is a ``ValueError``.
    """
    if status is None or status.startswith("draw"):
        return None
    found = _STATUS_SEAT.search(status)
    if found is None:
        raise ValueError(f"the line after the board, {status!r}, does not say who is to move "
                         "(as in '(seat 1) to move'); leave it out or pass to_move")
    seat = int(found.group(1))
    return 1 - seat if found.group(2) == "won" else seat


S = TypeVar("S", bound=Hashable)
M = TypeVar("M", bound=Hashable)


class Game(Generic[S, M]):
    """The interface all five games implement (see docs/PROTOCOL.md and DESIGN.md).

    Moves have two written forms: a compact *notation* people type
    (``notation``/``parse_move`` with a string) and a *structured* JSON form in a
    coordinate convention (``format_move``/``parse_move`` with a dict). Move
    values print as their notation (``<Drop 4>``); :meth:`is_move` tells them
    from the written forms.

    A position can be written as a picture, as ``print(state)`` shows it, and
    read back with :meth:`from_picture`::

        >>> state = GAMES["connect4"].from_picture('''
        ...     . . . . . . .
        ...     . . . . . . .
        ...     . . . . . . .
        ...     . . . . . . .
        ...     . . . O . . .
        ...     . . X X . . .
        ... ''')
    """

    id: ClassVar[str]
    name: ClassVar[str]
    grid: ClassVar[Grid]
    options_help: ClassVar[dict[str, str]] = {"first": "seat (0 or 1) that moves first; default 0"}
    """Every option the game takes, with what it means. Every game takes ``first`` (each words it for its pieces)."""
    first_colours: ClassVar[tuple[str, str] | None] = None
    """The sides' colours, seat 0's first, in games whose sides have them: ``first`` also takes these names."""
    _MOVE_TYPES: ClassVar[tuple[type, ...]] = ()
    """The classes of the game's move values (what :meth:`is_move` accepts)."""

    def initial_state(self, **options: Any) -> S:
        """The starting position; options are documented in ``options_help``.

        Every game takes ``first``, the seat that moves first (0 or 1, or a
        colour in :attr:`first_colours`; default 0). Unknown options and bad
        values raise ``OptionError``; the game builds the position in
        :meth:`_starting_position` from ``first`` and its own options.
        """
        self.check_options(options)
        first = first_seat_option(options.pop("first", 0), self.first_colours)
        return self._starting_position(first, **options)

    def _starting_position(self, first: int, **options: Any) -> S:
        """The starting position with seat ``first`` to move; ``options`` are the game's own, known by name."""
        raise NotImplementedError

    def to_move(self, state: S) -> int:
        """Seat (0 or 1) whose turn it is."""
        raise NotImplementedError

    def legal_moves(self, state: S) -> list[M]:
        """Every legal move, empty once the game is over."""
        raise NotImplementedError

    def apply(self, state: S, move: M) -> S:
        """The state after ``move``; raises ``IllegalMove`` with the reason."""
        raise NotImplementedError

    def outcome(self, state: S) -> Outcome | None:
        """The result once the game is over, else ``None``."""
        raise NotImplementedError

    def notation(self, move: M) -> str:
        """The move in the game's compact text notation."""
        raise NotImplementedError

    def format_move(self, move: M, coords: str = "algebraic") -> dict[str, Any]:
        """The move's structured JSON form in a coordinate convention."""
        raise NotImplementedError

    def parse_move(self, obj: Any, state: S, coords: str = "algebraic") -> M:
        """A move from notation text or a structured form; ``IllegalMove`` if it is neither.

        Parsing checks form only (squares exist, fields present); whether the
        move is legal in ``state`` is ``apply``'s job.
        """
        raise NotImplementedError

    def checked_move(self, obj: Any, state: S, coords: str = "algebraic") -> tuple[M, S]:
        """The move ``obj`` (as :meth:`parse_move` reads it in ``coords``) and the state after it (as :meth:`apply`
        makes it): a server's one call a move. ``IllegalMove`` as either raises it. A game may answer its common
        form faster here; what it answers must be what the two calls give."""
        move = self.parse_move(obj, state, coords)
        return move, self.apply(state, move)

    def after_move(self, move: M, state: S) -> tuple[Outcome | None, int | None, str]:
        """What a server asks once ``move`` made ``state``, in one call: :meth:`outcome`, the seat to move next (None
        when the game is over) and the move's :meth:`notation`. A game may answer faster; the same three values."""
        outcome = self.outcome(state)
        return outcome, None if outcome is not None else self.to_move(state), self.notation(move)

    def encode_state(self, state: S, coords: str = "algebraic") -> dict[str, Any]:
        """A JSON-compatible form of the state, the board in ``coords`` row order."""
        raise NotImplementedError

    def decode_state(self, obj: Any, coords: str = "algebraic") -> S:
        """Inverse of ``encode_state``; ``ValueError`` on malformed input."""
        raise NotImplementedError

    def render(self, state: S) -> str:
        """A board picture for a terminal."""
        return str(state)

    def from_picture(self, text: str, **options: Any) -> S:
        """A position from a picture of its board: what ``print(state)`` shows, or a simpler variant.

        The rows come top rank first, cells separated by spaces; the rank
        numbers before the rows, the line of file letters (column numbers in
        Connect Four) below them, and a last line saying who is to move
        (``"X (seat 1) to move"``) may be left out. Each game's module lists
        its cells and options. ``to_move=`` (seat 0 or 1) overrides the
        status line; without either, the side to move is worked out from the
        moves made so far (stones, bricks, arrows, builds or pieces), seat 0
        having moved first. The position is checked as :meth:`decode_state`
        checks one; a ``ValueError`` names the bad row, cell or count.
        """
        raise NotImplementedError

    # Shared helpers -----------------------------------------------------------------

    def is_move(self, obj: Any) -> bool:
        """True when ``obj`` is already a move value of this game, not notation text or a structured form.

        It says nothing about legality, which is ``apply``'s to decide.
        """
        return isinstance(obj, self._MOVE_TYPES)

    def play(self, state: S, *moves: Any) -> S:
        """Apply several moves given in notation or as move values; handy at a prompt."""
        for move in moves:
            if not self.is_move(move):
                move = self.parse_move(move, state)
            state = self.apply(state, move)
        return state

    def start(self, *moves: Any, **options: Any) -> S:
        """The initial state with ``moves`` played, e.g. ``GAMES['connect4'].start(4, 4, 3)``."""
        return self.play(self.initial_state(**options), *moves)

    def check_options(self, options: dict[str, Any]) -> None:
        """Raise ``OptionError`` for any option this game does not know."""
        for key in options:
            if key not in self.options_help:
                known = ", ".join(sorted(self.options_help)) or "none"
                raise OptionError(f"{self.id} has no option {key!r}; options: {known}")

    def __repr__(self) -> str:
        return f"<game {self.id}>"


def first_seat_option(value: Any, colours: tuple[str, str] | None = None) -> int:
    """Validate the common ``first`` option: the seat (0 or 1) that moves first.

    Games whose sides have colours (``("black", "white")``) also accept the colour name.
    """
    if colours is not None and isinstance(value, str):
        colour = value.strip().lower()
        if colour in colours:
            return colours.index(colour)
        raise OptionError(
            f"option 'first' must be 0 or 1, or {colours[0]!r} or {colours[1]!r}, not {shown(value)}"
        )
    if type(value) is not int or value not in (0, 1):  # (1.0 is no seat: PROTOCOL.md §2's integers are integers)
        accepted = "0 or 1" + (f", or {colours[0]!r} or {colours[1]!r}" if colours else "")
        raise OptionError(f"option 'first' must be {accepted} (the seat that moves first), not {shown(value)}")
    return int(value)


def require_dict(obj: Any, fields: tuple[str, ...], what: str) -> dict[str, Any]:
    """Check that a structured move is a dict with ``fields``; ``IllegalMove`` otherwise."""
    if not isinstance(obj, dict):
        raise IllegalMove(f"a {what} is notation text or an object with {', '.join(fields)}")
    missing = [f for f in fields if f not in obj]
    if missing:
        raise IllegalMove(f"a {what} needs field(s) {', '.join(missing)}")
    return obj
