"""``plyhall play``: a person plays one of our bots in the terminal.

    plyhall play --game connect4 --level minimax-4 --seat 1

The board is printed before each of your moves; type a move in the game's
notation (``4`` in Connect Four, ``d1-d7/g7`` in the Amazons, ``c3 0101`` in
Quarto, ...). At the prompt, ``moves`` lists the legal moves (``moves d1``
only those starting with ``d1``), ``help`` explains the commands and ``quit``
leaves the game. A move the rules refuse is asked for again, with the reason.

Everything goes through :func:`play_in_terminal`, whose input and output are plain
callables, so tests (or a pipe) can drive a whole game.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

MOVES_SHOWN = 200
"""At most this many legal moves are listed at once (the Amazons have 2,176 at the start)."""

QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("help", "?", "h")


def _lines_of(names: list[str], width: int) -> str:
    """``names`` two spaces apart, in lines of at most ``width`` characters, never breaking one (a Santorini
    placement, ``a1 b1``, has a space of its own)."""
    lines: list[str] = []
    line = ""
    for name in names:
        if line and len(line) + 2 + len(name) > width:
            lines.append(line)
            line = ""
        line = f"{line}  {name}" if line else name
    return "\n".join([*lines, line])


def _list_moves(game: Any, state: Any, prefix: str) -> str:
    """The legal moves in notation, those starting with ``prefix`` when it is given."""
    names = [game.notation(move) for move in game.legal_moves(state)]
    if prefix:
        names = [name for name in names if name.lower().startswith(prefix.lower())]
        if not names:
            return f"no legal move starts with {prefix!r}"
    shown = _lines_of(names[:MOVES_SHOWN], 100)
    if len(names) > MOVES_SHOWN:
        narrower = _longer_prefix(names[MOVES_SHOWN], prefix)  # a start the first move left out has (not the first
        # move's: "moves a1" when every move from a1 was shown already)
        shown += (
            f"\n... and {len(names) - MOVES_SHOWN} more; "
            f"type 'moves {narrower}' to list only the moves starting with {narrower}"
        )
    return f"{len(names)} legal move{'' if len(names) == 1 else 's'}:\n{shown}"


def _longer_prefix(name: str, prefix: str) -> str:
    """The start of ``name`` up to its next separator after ``prefix``: "a7" -> "a7-b7"."""
    for i in range(len(prefix) + 1, len(name)):
        if name[i] in "-/ ":
            return name[:i]
    return name


def _quarto_notes(state: Any) -> str:
    """What a Quarto turn asks for now, and what a piece's digits mean."""
    from protocol.games.quarto import PIECE_DIGITS, describe_piece, turn_words

    held = "" if state.in_hand is None else f"; your piece is {describe_piece(state.in_hand)}"
    return f"Now: {turn_words(state)}{held}.\n{PIECE_DIGITS[0].upper()}{PIECE_DIGITS[1:]}.\n"


def _quarto_pieces(state: Any) -> str:
    """The pieces nobody has placed yet, in hand or not (a person cannot see them on the board)."""
    from protocol.games.quarto import PIECES, piece_text

    left = [piece_text(code) for code in range(PIECES) if code not in state.board and code != state.in_hand]
    return f"pieces left to give: {' '.join(left) if left else 'none'}"


NOTES: dict[str, Callable[[Any], str]] = {"quarto": _quarto_notes}
"""A game's lines of help about the position (what this turn asks for, what its notation's parts mean), by id."""
BOARD_NOTES: dict[str, Callable[[Any], str]] = {"quarto": _quarto_pieces}
"""A line under a game's board, by id: what the picture leaves out."""


def _help(game: Any, state: Any) -> str:
    moves = game.legal_moves(state)
    example = game.notation(moves[len(moves) // 2])  # any legal move here; the first is often a corner case
    notes = NOTES[game.id](state) if game.id in NOTES else ""
    return (
        f"Type a move in {game.name} notation, for example {example!r}.\n"
        f"{notes}"
        "  moves          list the legal moves\n"
        "  moves PREFIX   list the legal moves starting with PREFIX\n"
        "  help           this text\n"
        "  quit           leave the game"
    )


def check_play_options(game_id: str, level: str, seat: int) -> None:
    """Raise ``ValueError`` naming what is accepted when the game, level or seat is wrong."""
    from bots import check_game, parse_level

    check_game(game_id)
    parse_level(level)
    if seat not in (0, 1) or isinstance(seat, bool):
        raise ValueError(f"seat must be 0 (move first) or 1 (move second), not {seat!r}")


def play_in_terminal(
    game_id: str,
    level: str = "minimax-2",
    seat: int = 0,
    seed: int | None = None,
    *,
    read: Callable[[str], str] = input,
    write: Callable[[str], Any] = print,
) -> Any:
    """Play one game between a person (through ``read``/``write``) and a bot.

    The person sits in ``seat`` (seat 0 moves first). ``read(prompt)`` returns
    one line of input, raising ``EOFError`` when there is no more (which
    quits); ``write(text)`` shows text. Returns the game's ``Outcome``, or
    ``None`` when the person quit. Raises ``ValueError`` for an unknown game,
    level or seat.
    """
    from bots import make_bot
    from protocol.games import GAMES, IllegalMove

    check_play_options(game_id, level, seat)
    bot = make_bot(game_id, level, seed)
    bot.new_game()
    game = GAMES[game_id]
    state = game.initial_state()
    order = "first" if seat == 0 else "second"
    write(f"{game.name}: you are seat {seat} and move {order}; the bot plays {bot.level}.")
    write("Type a move, 'moves' to list the legal moves, 'help' for more, 'quit' to leave.")
    while game.outcome(state) is None:
        if game.to_move(state) != seat:
            move = bot.choose(state)
            state = game.apply(state, move)
            write(f"{bot.level} plays {game.notation(move)}")
            continue
        write("")
        write(game.render(state) + (f"\n{BOARD_NOTES[game.id](state)}" if game.id in BOARD_NOTES else ""))
        while True:
            try:
                text = read(f"your move (seat {seat}): ").strip()
            except EOFError:
                text = "quit"
            command, _, rest = text.partition(" ")
            if not text:
                continue
            if text.lower() in QUIT_WORDS:
                write("You left the game.")
                return None
            if text.lower() in HELP_WORDS:
                write(_help(game, state))
                continue
            if command.lower() == "moves":
                write(_list_moves(game, state, rest.strip()))
                continue
            try:
                state = game.apply(state, game.parse_move(text, state))
            except IllegalMove as exc:
                write(f"Not a legal move: {exc.reason.rstrip('.')}. Try again ('moves' lists the legal moves).")
                continue
            break
    outcome = game.outcome(state)
    write("")
    write(game.render(state))
    if outcome.winner is None:
        write(f"Draw: {outcome.reason}.")
    elif outcome.winner == seat:
        write(f"You won: {outcome.reason}.")
    else:
        write(f"You lost, {bot.level} won: {outcome.reason}.")
    return outcome


def run(args: argparse.Namespace) -> int:
    """Carry out ``plyhall play``."""
    try:
        check_play_options(args.game, args.level, args.seat)
    except ValueError as exc:
        print(f"plyhall play: error: {exc}", file=sys.stderr)
        return 2
    read = input if sys.stdin.isatty() else _read_and_echo
    play_in_terminal(args.game, args.level, args.seat, args.seed, read=read)
    return 0


def _read_and_echo(prompt: str) -> str:
    """``input`` for piped moves: show each line read, as a terminal would have."""
    line = input(prompt)
    print(line)
    return line
