"""Engines in any language: ``plyhall bot --engine CMD`` plays with a program that reads positions on its
standard input and prints moves on its standard output.

docs/ENGINE-PROTOCOL.md is the reference for engine authors. In short, the driver starts the program
once, says ``plyhall 1``, and waits for ``ready`` (the engine names itself, may choose a coordinate
convention and ask for the legal moves); then, for each turn, it sends a ``position`` block (the board's
picture, the state in the engine's coordinates, the moves from the start, the clock) ending in ``go``,
and reads ``info`` lines until ``move …``. A move that breaks the rules is answered with
``illegal REASON`` and a new ``go``; after each game the engine is told ``result …``.

:class:`EnginePlayer` is a :class:`~client.player.Player`, so the SDK's play loop does everything else
(login, seeking, rooms, tournaments, reconnection). It thinks in a thread: the engine is a process of
its own already. An engine that crashes is restarted once in a game, and the game is resigned if it
crashes again; an engine that does not answer before its clock runs out loses on time like any player
(it is restarted for the next game); an engine that will not start stops the bot with a clear error.

The driver is bounded whatever the engine writes (docs/ENGINE-PROTOCOL.md, "Limits"): a stdout line over
:data:`~client.engine_process.MAX_LINE` resigns the game and is never held whole, stderr and ``info`` lines are
cut and rate-limited, the deadline holds during any flood, and an engine that exits is a crash even while a child
keeps its pipe open. The engine's process, in a process group of its own that is killed whole however the bot
ends, is :class:`~client.engine_process.EngineProcess`; this module is the protocol spoken with it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol.games import GAMES, IllegalMove, get_game
from protocol.games.base import check_coords

from .engine_process import (
    EngineAbandoned,
    EngineCrashed,
    EngineError,
    EngineLineTooLong,
    EngineProcess,
    EngineTimeout,
    split_command,
)
from .player import GameResult, NoMove, Player, Resign, StopPlaying, Turn

PROTOCOL_VERSION = 1
START_TIMEOUT = 60.0
"""Seconds an engine has to say ``ready`` after it is started (loading a book, compiling, warming up)."""
GRACE = 2.0
"""Seconds past the end of its clock the driver waits for a move before it treats the engine as hung."""
MAX_ILLEGAL = 3
"""Illegal moves in a row in one turn after which the game is resigned."""
MAX_CRASHED_GAMES = 3
"""Games in a row resigned because the engine crashed twice, after which the bot stops with an error."""


def _game_key(record: str | None, room: str) -> str:
    """Which game a turn or a result is of: its record id (a room plays game after game; a server that starts again
    on another database plays a new game in a room of the same name), else its room."""
    return record if record is not None else f"room:{room}"


class EngineBroken(EngineError, StopPlaying):
    """The engine crashed in game after game: its game is resigned, then the bot stops with this error."""


@dataclass
class Identity:
    """What an engine said about itself in the handshake."""

    name: str = "engine"
    author: str | None = None
    coords: str = "algebraic"
    legal: bool = False  # it asked for the legal moves with every position
    games: list[str] = field(default_factory=list)  # the games it says it plays (empty: not said)


def _handshake_line(identity: Identity, line: str, say: Callable[[str], None]) -> bool:
    """Read one handshake line into ``identity``; True at ``ready``."""
    word, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    if word == "ready":
        return True
    if word == "id":
        key, _, value = rest.partition(" ")
        if key == "name" and value.strip():
            identity.name = value.strip()
        elif key == "author":
            identity.author = value.strip()
        elif key == "games":
            identity.games = value.split()
        else:
            say(f"engine: ignoring unknown id line {line!r}")
    elif word == "coords":
        try:
            identity.coords = check_coords(rest)
        except ValueError as exc:
            raise EngineError(f"the engine asked for coords {rest!r}: {exc}") from None
    elif word == "option" and rest == "legal":
        identity.legal = True
    elif word == "info":
        say(f"engine info: {rest}")
    elif line.strip():
        say(f"engine: ignoring {line.strip()!r} before 'ready'")
    return False


def handshake(process: EngineProcess, timeout: float) -> Identity:
    """Say ``plyhall 1`` and read the engine's answer up to ``ready``."""
    identity = Identity()
    deadline = time.monotonic() + timeout
    try:
        process.send(f"plyhall {PROTOCOL_VERSION}")  # an engine gone already is a crash before 'ready' too
        while not _handshake_line(identity, process.read(deadline), process.relay):
            pass
    except EngineTimeout:
        raise EngineError(f"the engine did not say 'ready' within {timeout:g} s of starting "
                          "(docs/ENGINE-PROTOCOL.md: answer 'plyhall 1' with 'ready')") from None
    except EngineCrashed:
        raise EngineError(process.describe_exit(" before it said 'ready'")) from None
    return identity


def _milliseconds(seconds: float | None) -> int:
    return -1 if seconds is None else max(0, round(seconds * 1000))


class EnginePlayer(Player):
    """A player whose moves come from an engine program speaking the stdio engine protocol."""

    def __init__(self, command: str | Sequence[str], game_id: str | None = None, *,
                 say: Callable[[str], None] | None = None, start_timeout: float = START_TIMEOUT,
                 grace: float = GRACE) -> None:
        self.argv = split_command(command)
        if game_id is not None:
            get_game(game_id)
        self.game_id = game_id
        self.say = say or (lambda text: None)
        self.start_timeout = start_timeout
        self.grace = grace
        self.identity = Identity()
        self.warms_up = "the engine"
        self._process: EngineProcess | None = None
        self._told: str | None = None  # the game (record, else room) the running engine was told of by newgame
        self._crash_game: str | None = None  # the game whose crashes _crashes counts
        self._crashes = 0  # crashes in the current game
        self._crashed_games = 0  # games in a row resigned because the engine crashed twice
        self._closed = False  # the bot is stopping: no engine is started again
        self._given_up = threading.Event()  # the game thought about ended: the move is no longer waited for

    # Life of the engine process -------------------------------------------------------------------------

    def _start(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None
        if self._closed:
            raise EngineError("the bot is stopping: the engine is not started again")
        self._process = EngineProcess(self.argv, self.say)
        self._told = None  # a fresh engine knows no game
        try:
            self.identity = handshake(self._process, self.start_timeout)
            games = self.identity.games
            unknown = [game for game in games if game not in GAMES]
            if unknown:
                raise EngineError(f"the engine {self.identity.name}'s 'id games' line names {' '.join(unknown)}, "
                                  f"which {'is no game' if len(unknown) == 1 else 'are no games'} here: the games "
                                  f"are {' '.join(GAMES)}")
            if games and self.game_id is not None and self.game_id not in games:
                raise EngineError(f"the engine {self.identity.name} plays only {' '.join(games)} (its 'id games' "
                                  f"line), not {self.game_id}: start the bot for one of those games")
        except EngineError:  # a failed start stops the engine here: no process is left running unasked
            self.close()
            raise

    def warm_up(self) -> str | None:
        """Start the engine and wait for its ``ready``: it is warm before the bot logs in."""
        if self._process is None:
            self._start()
        return f"engine {self.identity.name}"

    def close(self) -> None:
        """Stop the engine (and whatever it started), for good: a turn still waiting for it ends without
        starting it again."""
        self._closed = True
        self._stop_engine()

    def abandon(self) -> None:
        """The game the engine is thinking about ended (:meth:`client.thinker.Thinker.abandon`): its move is no
        longer waited for, and a fresh engine takes the next turn, at once rather than at the end of the clock and
        the grace, the next game's time in a series."""
        self._given_up.set()

    def _stop_engine(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None

    # Turns ------------------------------------------------------------------------------------------------

    def choose(self, turn: Turn) -> Any:
        """The engine's move for ``turn``, checked against the rules (an illegal one is sent back to it)."""
        if self._process is None:
            self._start()
        game = _game_key(turn.record, turn.room)
        if self._crash_game != game:
            self._crash_game, self._crashes = game, 0
        self._given_up.clear()  # (set after the last turn was answered: nothing to give up now)
        while True:
            try:
                move = self._play_turn(turn)
                self._crashed_games = 0
                return move
            except EngineCrashed as exc:
                self._crashes += 1
                self.say(f"engine crashed: {exc}; restarting it")
                if self._crashes >= 2:
                    self._crashed_games += 1
                    if self._crashed_games >= MAX_CRASHED_GAMES:  # broken, not unlucky: it would resign for ever
                        raise EngineBroken(f"the engine crashed twice in each of {self._crashed_games} games in a "
                                           "row; the bot stops (mend the engine, then start the bot again)") from None
                    self._start()
                    raise Resign("the engine crashed twice in this game") from None
                self._start()
            except EngineAbandoned:
                self.say("the engine's game ended while it thought; it is started again for the next turn")
                if self._process is not None:  # mid-search, it would not read a quit: stopped at once
                    self._process.stop(wait=0.2)
                    self._process = None
                self._start()
                raise NoMove("its game ended while the engine thought") from None
            except EngineTimeout:
                self.say("the engine did not answer before its clock ran out; it loses on time, and is restarted "
                         "(an engine that answered in time may have left its move in its output buffer: flush after "
                         "each line)")
                self._start()
                raise NoMove("the engine did not answer in time") from None
            except EngineLineTooLong as exc:
                self.say(f"{exc}; its game is resigned, and it is restarted")
                self._start()
                raise Resign(str(exc)) from None

    def _play_turn(self, turn: Turn) -> Any:
        process = self._process
        assert process is not None
        game = _game_key(turn.record, turn.room)
        if self._told != game:  # a new game, or an engine started again (after a crash: it knows no game)
            names = " ".join(turn.players)
            process.send(f"newgame {turn.game.id} {turn.seat} {names}")
            self._told = game
        deadline = None if turn.time_left is None else time.monotonic() + turn.time_left + self.grace
        for stale in process.drain():  # an answer to an earlier turn must not be taken for this one's
            process.relay(f"engine: ignoring {stale.strip()!r}, written before this turn's 'go'")
        process.send(*self.position(turn), "go")
        for attempt in range(1, MAX_ILLEGAL + 1):
            text = self._await_move(process, deadline)
            try:
                return self._parse(text, turn)
            except IllegalMove as exc:  # in the engine's own squares
                reason = " ".join(turn.game.grid.named_in(exc.reason, exc.squares, self.identity.coords).split())
                self.say(f"the engine's move {text!r} is illegal: {reason}")
                if attempt == MAX_ILLEGAL:  # told why, and asked nothing more: the game is resigned
                    process.send(f"illegal {reason}")
                else:
                    process.send(f"illegal {reason}", "go")
        raise Resign(f"the engine sent {MAX_ILLEGAL} illegal moves in a row")

    def _await_move(self, process: EngineProcess, deadline: float | None) -> str:
        while True:
            line = process.read(deadline, self._given_up)
            word, _, rest = line.strip().partition(" ")
            if word == "move":
                return rest.strip()
            if word == "resign":
                raise Resign("the engine resigned")
            if word == "info":
                process.relay(f"engine info: {rest.strip()}")
            elif line.strip():
                process.relay(f"engine: ignoring {line.strip()!r} (expected 'move …' or 'info …')")

    def _parse(self, text: str, turn: Turn) -> Any:
        """The engine's move text as a move of the reference rules (``IllegalMove`` saying what is wrong)."""
        game, coords = turn.game, self.identity.coords
        if not text:
            raise IllegalMove("'move' needs a move after it")
        obj: Any = text
        if text[0] in "{[":
            try:
                obj = json.loads(text)
            except ValueError as exc:
                raise IllegalMove(f"not valid JSON ({exc})") from None
        try:
            move = game.parse_move(obj, turn.state, coords)
            game.apply(turn.state, move)
        except IllegalMove:
            raise
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise IllegalMove(f"not a move of {game.name}: {exc}") from None
        return move

    def move_text(self, game: Any, move: Any) -> str:
        """A move as the engine reads it: notation in ``algebraic``, the structured form as compact JSON in
        the other conventions."""
        if self.identity.coords == "algebraic":
            return game.notation(move)
        return json.dumps(game.format_move(move, self.identity.coords), separators=(",", ":"))

    def position(self, turn: Turn) -> list[str]:
        """The ``position`` block for ``turn`` (without its closing ``go``)."""
        game, state, coords = turn.game, turn.state, self.identity.coords
        picture = game.render(state).splitlines()
        history = list(turn.moves)  # notation: the same in every convention, as the wire's 'notation'
        lines = ["position", f"game {game.id}", f"coords {coords}", f"picture {len(picture)}", *picture,
                 "state " + json.dumps(game.encode_state(state, coords), separators=(",", ":")),
                 f"moves {len(history)}", *history]
        if self.identity.legal:
            legal = [self.move_text(game, move) for move in game.legal_moves(state)]
            lines += [f"legal {len(legal)}", *legal]
        lines.append(f"time {_milliseconds(turn.time_left)} {_milliseconds(turn.per_move)} "
                     f"{_milliseconds(turn.increment)}")
        return lines

    def game_over(self, result: GameResult) -> None:
        """Tell the engine the result (``result win|loss|draw|aborted REASON``)."""
        if self._process is None or self._told != _game_key(result.record, result.room):
            return  # a game this engine was never told of (it was started again since): no result for it
        if not result.played:
            word = "aborted"
        else:
            word = {1.0: "win", 0.5: "draw", 0.0: "loss"}[result.score]
        try:
            self._process.send(f"result {word} {' '.join(result.reason.split())}")
        except EngineCrashed as exc:
            self.say(f"engine crashed: {exc}; it is restarted for the next game")
            self._stop_engine()
        self._told = None
        self._crashes = 0
