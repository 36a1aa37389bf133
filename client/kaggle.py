"""Kaggle ConnectX agents as they are: ``plyhall bot --game connect4 --kaggle agent.py``.

A Kaggle submission is a Python file; Kaggle runs it and takes the **last callable** it defines as the
agent (or, here, the one named with ``--agent``). The agent is called with ``observation`` and
``configuration`` (fewer if it takes fewer parameters), each a dict that also allows attribute access
(``obs.board`` and ``obs["board"]``), and returns a 0-based column:

* ``observation``: ``board`` (42 integers, row-major, the **top** row first; 0 empty, 1 and 2 the
  players' marks), ``mark`` (the agent's mark: 1 or 2), ``step`` (moves played so far),
  ``remainingOverageTime`` (seconds left on the agent's clock in a game clock; 0 when each move has its own
  time, which is ``actTimeout``; 60 when the game is untimed);
* ``configuration``: ``columns`` 7, ``rows`` 6, ``inarow`` 4, ``actTimeout`` and ``timeout`` (the seconds
  a move allows: the room's time per move, or 2 as Kaggle's default), ``agentTimeout`` 60,
  ``episodeSteps`` 1000.

Mark 1 is whichever seat moved first (rooms alternate it from game to game), as on Kaggle, where mark 1 always
moves first. An agent that
raises, or returns something that is not a free column, loses the game as it would on Kaggle (here:
the bot resigns, saying what the agent returned).
"""

from __future__ import annotations

import inspect
import operator
import sys
import traceback
from pathlib import Path
from typing import Any

from .player import Player, Resign, Turn

ROWS, COLUMNS, IN_A_ROW = 6, 7, 4
DEFAULT_ACT_TIMEOUT = 2.0  # Kaggle's actTimeout
OVERAGE = 60.0  # Kaggle's remainingOverageTime at the start


class Struct(dict):
    """A dict whose keys are attributes too, as Kaggle hands ``observation`` and ``configuration``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


def load_agent(path: str | Path, name: str | None = None) -> Any:
    """The agent of a Kaggle submission file: the callable ``name``, or the last callable the file defines
    (as Kaggle picks it). ``ValueError`` when the file cannot be read or has no such callable."""
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read the agent file {str(path)!r}: {exc.strerror or exc}") from None
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # a submission may import its neighbour files, as on Kaggle
    namespace: dict[str, Any] = {"__name__": "__kaggle_agent__", "__file__": str(path)}
    try:
        exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - running the user's agent is the point
    except Exception as exc:
        detail = traceback.format_exception_only(exc)[-1].strip()
        raise ValueError(f"the agent file {str(path)!r} failed to load: {detail}") from None
    if name is not None:
        agent = namespace.get(name)
        if not callable(agent):
            found = [key for key, value in namespace.items() if callable(value) and not key.startswith("__")]
            raise ValueError(f"the agent file {str(path)!r} defines no function {name!r}; "
                             f"its callables: {', '.join(found) or 'none'}")
        return agent
    callables = [value for key, value in namespace.items() if callable(value) and not key.startswith("__")]
    if not callables:
        raise ValueError(f"the agent file {str(path)!r} defines no function (Kaggle takes the last one defined)")
    return callables[-1]


def _wants(agent: Any) -> int:
    """How many of (observation, configuration) the agent takes."""
    try:
        parameters = list(inspect.signature(agent).parameters.values())
    except (TypeError, ValueError):
        return 2
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return 2
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return min(2, len(positional))


def observation(turn: Turn) -> Struct:
    """What Kaggle gives a ConnectX agent as ``observation`` for this turn. On Kaggle mark 1 always moves first:
    so here too, whichever seat moved first (rooms alternate it), its stones are 1 and the other's 2."""
    rows = turn.game.encode_state(turn.state, "matrix")["board"]  # the top row first, 1 and 2 by seat
    first_seat = turn.seat if len(turn.moves) % 2 == 0 else 1 - turn.seat
    marks = {0: 0, 1: 1, 2: 2} if first_seat == 0 else {0: 0, 1: 2, 2: 1}
    board = [marks[int(cell)] for row in rows for cell in row]
    if turn.per_move is not None:
        left = 0.0  # each move has its own time (actTimeout): there is no overage to draw on
    else:
        left = OVERAGE if turn.time_left is None else turn.time_left
    mark = 1 if turn.seat == first_seat else 2
    return Struct(board=board, mark=mark, step=len(turn.moves), remainingOverageTime=left)


def configuration(turn: Turn) -> Struct:
    """What Kaggle gives a ConnectX agent as ``configuration``."""
    act = turn.per_move if turn.per_move is not None else DEFAULT_ACT_TIMEOUT
    return Struct(columns=COLUMNS, rows=ROWS, inarow=IN_A_ROW, actTimeout=act, timeout=act,
                  agentTimeout=OVERAGE, episodeSteps=1000)


class KaggleAgentPlayer(Player):
    """A Kaggle ConnectX agent file as a player (loaded in the thinking process)."""

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        self.path = str(path)
        self.name = name
        load_agent(path, name)  # a clear error now, in the bot's own process, if the file is no agent
        self._agent: Any = None
        self.warms_up = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_agent": None}

    def warm_up(self) -> str | None:
        """Load the agent file (its imports run now, before the bot logs in)."""
        if self._agent is None:
            self._agent = load_agent(self.path, self.name)
        return f"Kaggle agent {getattr(self._agent, '__name__', 'agent')} from {Path(self.path).name}"

    def choose(self, turn: Turn) -> Any:
        """Call the agent and check its column (0-based; Plyhall's columns are 1-based)."""
        if turn.game.id != "connect4":
            raise Resign(f"a Kaggle ConnectX agent plays connect4, not {turn.game.id}")
        if self._agent is None:
            self._agent = load_agent(self.path, self.name)
        args = (observation(turn), configuration(turn))[:_wants(self._agent)]
        try:
            column = self._agent(*args)
        except Exception:
            raise Resign("the agent raised an exception (it would lose on Kaggle too):\n"
                         + traceback.format_exc()) from None
        return self._checked(column, turn)

    @staticmethod
    def _checked(column: Any, turn: Turn) -> Any:
        try:
            if isinstance(column, bool):
                raise TypeError  # Kaggle's schema takes no booleans
            index = operator.index(column)  # ints, numpy integers
        except TypeError:
            raise Resign(f"the agent returned {column!r}: a column is an integer 0-{COLUMNS - 1}") from None
        free = [c for c in range(COLUMNS) if observation(turn).board[c] == 0]
        if index not in free:
            raise Resign(f"the agent returned column {index}: the free columns are "
                         f"{', '.join(map(str, free))} (0-based; Kaggle counts an invalid column as a loss)")
        return turn.game.parse_move(str(index + 1), turn.state)
