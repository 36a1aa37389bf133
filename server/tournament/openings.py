"""Openings files: lists of opening lines to start tournament games from.

An opening is a sequence of moves in the game's own notation, played from the
initial position (``game.initial_state(**options)``) before the entrants take
over. Every opening is checked by playing it with the reference rules of
``protocol.games``; it must be legal and must not end the game. Both games of
a colour-swapped pair start from the same opening (see ``schedule``).

:func:`parse_openings` reads text (the caller reads the file: this package
does no I/O) in one of these formats, recognised automatically (``format="auto"``)
or named:

``moves``
    One opening per line, its moves separated by commas or by spaces; ``#``
    starts a comment, blank lines are skipped. With commas every field is one
    move (so a move may contain a space: Quarto ``c3 0101``, a Santorini
    placement ``c3 d3``). With spaces only, moves that are written with spaces
    are still found: at each point the longest run of up to three words that
    is a legal move is taken (``c3 d3 b2 d2 c3-c4/c5`` is two placements and a
    turn). Example lines: Connect Four ``4 4 3``, Amazons
    ``d10-d7/g7, g1-g4/d4`` (black moves first).
``connect4-test``
    The Connect Four solver test sets (``Test_L1_R1`` ...): ``MOVES SCORE`` per
    line, MOVES a string of column digits 1-7 from the empty board, SCORE the
    position's solved value (ignored here). Recognised when the game is
    ``connect4`` and every line has this form with at least one MOVES longer
    than one digit or a SCORE that is not a plain column number (``4 3`` alone
    reads as the two moves 4 and 3).
``santorini-placements``
    Santorini starting placements (``opening_positions.txt``): 25 cells, each a
    height digit and an occupant (``N`` none, ``G`` a worker of the seat that
    places first, ``B`` one of the other seat), then 4 digits not used here.
    **Cell order**: cell k is square index k of ``protocol.games``, row-major
    from ``a1``: cells 1-5 are a1..e1 (rank 1), cells 21-25 a5..e5. The file
    does not say which end its first row is; the vertical mirror image of a
    placement is an equivalent position (Santorini has no direction), so the
    choice changes the squares' names, not the games. The opening is the two
    placement moves (``G``'s pair, then ``B``'s). Positions with buildings
    (non-zero heights) are refused: a tournament game starts from the empty
    board.

``plies=K`` keeps only the first K moves of every opening (for the
Connect Four test sets: "the first K plies" of each position); ``unique=True``
(the default) drops an opening that repeats an earlier one, which truncation
often makes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protocol.games import Game, IllegalMove, OptionError, get_game

OPENING_FORMATS: dict[str, str] = {
    "auto": "recognise the format from the text",
    "moves": "one opening per line, moves separated by commas or spaces",
    "connect4-test": "Connect Four solver test set lines: MOVES SCORE",
    "santorini-placements": "Santorini placements: 25 cells (height digit + N/G/B) then 4 digits",
}
"""Openings-file format name -> description."""

_C4_TEST_LINE = re.compile(r"^([1-7]+)\s+([+-]?\d+)$")
_SANTORINI_LINE = re.compile(r"^((?:[0-9][A-Za-z]){25})([0-9]{4})$")
_LONGEST_MOVE_WORDS = 3


class OpeningsError(ValueError):
    """An openings file that cannot be used: names the source, the line and what is wrong."""

    def __init__(self, message: str, source: str = "<openings>", line: int | None = None) -> None:
        where = f"{source}, line {line}" if line is not None else source
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.reason = message


@dataclass(frozen=True)
class Opening:
    """An opening: its moves in the game's notation, and the line of the file it came from."""

    moves: tuple[str, ...]
    line: int

    def __len__(self) -> int:
        return len(self.moves)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"moves": list(self.moves), "line": self.line}

    def play(self, game: Game, **options: Any) -> Any:
        """The position after the opening, from ``game.initial_state(**options)``."""
        return game.start(*self.moves, **options)


def parse_openings(text: str, game_id: str, *, format: str = "auto", plies: int | None = None,
                   unique: bool = True, source: str = "<openings>",
                   options: dict[str, Any] | None = None) -> list[Opening]:
    """The openings in ``text`` for the game ``game_id``, each checked with the reference rules.

    ``format`` is one of ``OPENING_FORMATS`` (see the module docstring);
    ``plies`` keeps the first K moves of each opening; ``unique`` drops
    repeats; ``source`` names the text in error messages (the file name);
    ``options`` are the game options the games will be started with (e.g.
    ``{"first": 1}``). Raises ``OpeningsError`` naming the line and the
    problem, or ``KeyError`` for an unknown game.
    """
    game = get_game(game_id)
    if format not in OPENING_FORMATS:
        raise OpeningsError(f"unknown openings format {format!r}; formats: {', '.join(OPENING_FORMATS)}", source)
    if plies is not None and (isinstance(plies, bool) or not isinstance(plies, int) or plies < 1):
        raise OpeningsError(f"plies must be a whole number >= 1, not {plies!r}", source)
    options = dict(options or {})
    try:
        start = game.initial_state(**options)
    except OptionError as exc:
        raise OpeningsError(f"bad game options: {exc}", source) from None

    lines = [(number, _strip_comment(raw)) for number, raw in enumerate(text.splitlines(), start=1)]
    lines = [(number, line) for number, line in lines if line]
    if format == "auto":
        format = _recognise(game, lines)

    openings: list[Opening] = []
    seen: set[tuple[str, ...]] = set()
    for number, line in lines:
        if format == "connect4-test":
            moves = list(_match_line(game, format, line, number, source).group(1))
        elif format == "santorini-placements":
            moves = _santorini_moves(game, line, number, source)
        else:
            moves = None
        opening = _play_line(game, start, line, moves, plies, number, source)
        if unique and opening.moves in seen:
            continue
        seen.add(opening.moves)
        openings.append(opening)
    if not openings:
        raise OpeningsError("no openings found (every line is blank or a comment)", source)
    return openings


def _strip_comment(line: str) -> str:
    return line.split("#", 1)[0].strip()


def _recognise(game: Game, lines: Sequence[tuple[int, str]]) -> str:
    """The format of a file's lines (see the module docstring)."""
    if game.id == "santorini" and lines and _SANTORINI_LINE.match(lines[0][1]):
        return "santorini-placements"
    if game.id == "connect4" and lines:
        matches = [_C4_TEST_LINE.match(line) for _, line in lines]
        if all(matches) and any(len(m.group(1)) > 1 or not re.fullmatch(r"[1-7]", m.group(2))
                                for m in matches if m):
            return "connect4-test"
    return "moves"


_LINE_FORMATS: dict[str, tuple[str, re.Pattern[str], str]] = {
    "connect4-test": ("connect4", _C4_TEST_LINE,
                      "a test-set line: write MOVES SCORE, MOVES being column digits 1-7 (e.g. '4453 -2')"),
    "santorini-placements": ("santorini", _SANTORINI_LINE,
                             "a placement line: 25 cells of a height digit and N, G or B, then 4 digits"),
}


def _match_line(game: Game, format: str, line: str, number: int, source: str) -> re.Match[str]:
    """``line`` matched against a game-specific format; ``OpeningsError`` for another game or a bad line."""
    game_id, pattern, description = _LINE_FORMATS[format]
    if game.id != game_id:
        raise OpeningsError(f"the {format} format is for {get_game(game_id).name}, not {game.name}", source)
    m = pattern.match(line)
    if not m:
        raise OpeningsError(f"{_shown(line)} is not {description}", source, number)
    return m


def _santorini_moves(game: Game, line: str, number: int, source: str) -> list[str]:
    """The two placement moves of a placement line: the first-placing seat's ``G`` pair, then ``B``'s."""
    m = _match_line(game, "santorini-placements", line, number, source)
    cells = [m.group(1)[2 * k: 2 * k + 2] for k in range(25)]
    grid = game.grid
    bad = [f"{grid.name(k)} ({cell[1]!r})" for k, cell in enumerate(cells) if cell[1] not in "NGB"]
    if bad:
        raise OpeningsError(f"occupants are N (none), G or B, not {', '.join(bad)}", source, number)
    built = [f"{grid.name(k)} (height {cell[0]})" for k, cell in enumerate(cells) if cell[0] != "0"]
    if built:
        raise OpeningsError(f"the position has buildings on {', '.join(built)}; only placements on the empty "
                            "board can start a game", source, number)
    squares = {side: [grid.name(k) for k, cell in enumerate(cells) if cell[1] == side] for side in "GB"}
    for side, names in squares.items():
        if len(names) != 2:
            raise OpeningsError(f"{side} must have exactly 2 workers, not {len(names)}", source, number)
    return [" ".join(squares["G"]), " ".join(squares["B"])]


def _play_line(game: Game, start: Any, line: str, moves: list[str] | None, plies: int | None, number: int,
               source: str) -> Opening:
    """Play one opening from ``start``: the given ``moves``, or the moves read from ``line``."""
    state = start
    played: list[str] = []
    if moves is not None:
        for text in moves[:plies]:
            move, state = _apply_text(game, state, text, len(played) + 1, number, source)
            played.append(game.notation(move))
    else:
        if "," in line:
            groups = [field.strip() for field in line.split(",")]
            if "" in groups:
                raise OpeningsError(f"{_shown(line)} has an empty move between commas", source, number)
            for text in groups:
                if plies is not None and len(played) >= plies:
                    break
                move, state = _apply_text(game, state, text, len(played) + 1, number, source)
                played.append(game.notation(move))
        else:
            words = line.split()
            at = 0
            while at < len(words) and (plies is None or len(played) < plies):
                move, state, used = _apply_words(game, state, words, at, len(played) + 1, number, source)
                played.append(game.notation(move))
                at += used
    if game.outcome(state) is not None:
        raise OpeningsError(f"the opening ends the game ({game.outcome(state).reason}); an opening must leave the "
                            "game running", source, number)
    return Opening(tuple(played), number)


def _apply_text(game: Game, state: Any, text: str, ply: int, number: int, source: str) -> tuple[Any, Any]:
    try:
        move = game.parse_move(text, state)
        return move, game.apply(state, move)
    except IllegalMove as exc:
        raise OpeningsError(f"move {ply} {_shown(text)}: {exc.reason}", source, number) from None


def _apply_words(game: Game, state: Any, words: Sequence[str], at: int, ply: int, number: int,
                 source: str) -> tuple[Any, Any, int]:
    """The longest run of words from ``at`` (up to three) that is a legal move; ``OpeningsError`` if none is."""
    reason = None
    for used in range(min(_LONGEST_MOVE_WORDS, len(words) - at), 0, -1):
        text = " ".join(words[at: at + used])
        try:
            move = game.parse_move(text, state)
        except IllegalMove as exc:
            if used == 1 and reason is None:
                reason = f"move {ply} {_shown(text)}: {exc.reason}"
            continue
        try:
            return move, game.apply(state, move), used
        except IllegalMove as exc:
            reason = reason or f"move {ply} {_shown(text)}: {exc.reason}"
    raise OpeningsError(str(reason), source, number)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
