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
the bot resigns, saying what the agent returned). The agent runs in a process of its own, in a process group
of its own (:class:`KaggleAgentPlayer`): an agent that calls ``sys.exit`` or ``os._exit`` or raises
``KeyboardInterrupt`` loses its game only, and whatever it started is killed with it.
"""

from __future__ import annotations

import inspect
import json
import operator
import os
import select
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .engine import START_TIMEOUT
from .engine_process import end_group, start_in_group
from .player import NoMove, Player, Resign, Turn
from .text_files import read_text

ROWS, COLUMNS, IN_A_ROW = 6, 7, 4
DEFAULT_ACT_TIMEOUT = 2.0  # Kaggle's actTimeout
OVERAGE = 60.0  # Kaggle's remainingOverageTime at the start
GRACE = 1.0
"""Seconds past the end of its clock an agent is waited for before its process is replaced and the move lost."""
MAX_REPLY = 1 << 16
"""Bytes of one answer of the agent's process read at most (an answer is a short JSON line)."""
TRACEBACK_CHARS = 8000
"""Characters of an agent's traceback passed on (its end: a deep recursion's is longer than an answer may be)."""


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
    source = read_text(path, "the agent file")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # a submission may import its neighbour files, as on Kaggle
    namespace: dict[str, Any] = {"__name__": "__kaggle_agent__", "__file__": str(path)}
    try:
        exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - running the user's agent is the point
    except BaseException as exc:  # noqa: BLE001 - a file that exits or is interrupted as it loads is no agent
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
    """A Kaggle ConnectX agent file as a player. The agent runs in a process of its own (``python -m
    client.kaggle``), in a process group of its own: whatever it does, ``sys.exit``, ``os._exit``,
    ``KeyboardInterrupt`` or a loop without end, it loses its game only, and what it started is killed with
    it (:func:`client.engine_process.end_group`; the bot's watchdog kills it too if the bot ends). It thinks in the
    bot's thread: the agent is a process already."""

    def __init__(self, path: str | Path, name: str | None = None, *, start_timeout: float = START_TIMEOUT) -> None:
        self.path = str(path)
        self.name = name
        load_agent(path, name)  # a clear error now, in the bot's own process, if the file is no agent
        self.start_timeout = start_timeout
        self.warms_up = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._label = "agent"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_proc": None}

    # The agent's process ----------------------------------------------------------------------------------------

    def _start(self) -> None:
        self._stop_agent()
        argv = [sys.executable, "-P", "-m", "client.kaggle", self.path, *([self.name] if self.name else [])]
        self._proc = start_in_group(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        reply = self._reply(time.monotonic() + self.start_timeout)
        if reply is None or "ready" not in reply:
            detail = (reply or {}).get("error") or self._describe_end()
            self._stop_agent()
            raise Resign(f"the Kaggle agent could not start: {detail}")
        self._label = reply["ready"]

    def _stop_agent(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()
            end_group(proc)

    def _describe_end(self) -> str:
        assert self._proc is not None
        try:
            code = self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "it closed its output"
        return f"its process exited with code {code}" if code >= 0 else f"its process was killed by signal {-code}"

    def _reply(self, deadline: float | None) -> dict[str, Any] | None:
        """The agent process's next answer; None when it ended (or said something unreadable), ``TimeoutError``
        at ``deadline``."""
        assert self._proc is not None and self._proc.stdout is not None
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self._proc.stdout], [], [], wait)
        if not ready:
            raise TimeoutError
        line = self._proc.stdout.readline(MAX_REPLY)
        try:
            reply = json.loads(line)
        except ValueError:
            return None
        return reply if isinstance(reply, dict) else None

    def warm_up(self) -> str | None:
        """Start the agent's process and load the file (its imports run now, before the bot logs in)."""
        if self._proc is None:
            try:
                self._start()
            except Resign as exc:
                raise ValueError(str(exc)) from None
        return f"Kaggle agent {self._label} from {Path(self.path).name}"

    def close(self) -> None:
        """Stop the agent's process and whatever it started."""
        self._stop_agent()

    # Turns ---------------------------------------------------------------------------------------------------------

    def choose(self, turn: Turn) -> Any:
        """Ask the agent and check its column (0-based; Plyhall's columns are 1-based)."""
        if turn.game.id != "connect4":
            raise Resign(f"a Kaggle ConnectX agent plays connect4, not {turn.game.id}")
        if self._proc is None:
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        request = {"observation": observation(turn), "configuration": configuration(turn)}
        deadline = None if turn.time_left is None else time.monotonic() + turn.time_left + GRACE
        try:
            self._proc.stdin.write(json.dumps(request).encode() + b"\n")
            self._proc.stdin.flush()
            reply = self._reply(deadline)
        except TimeoutError:
            self._stop_agent()  # a fresh process for the next turn
            raise NoMove("the agent did not answer in time; its process was started again") from None
        except OSError:
            reply = None
        if reply is None:
            why = self._describe_end()
            self._stop_agent()
            raise Resign(f"the agent ended its process ({why}): it loses this game, as on Kaggle") from None
        if "exit" in reply:  # sys.exit or KeyboardInterrupt: the agent is done with; a fresh one plays on
            self._stop_agent()
            raise Resign(f"the agent {reply['exit']}: it loses this game, as on Kaggle")
        if "raised" in reply:
            raise Resign("the agent raised an exception (it would lose on Kaggle too):\n" + str(reply["raised"]))
        if "returned" in reply:
            raise Resign(f"the agent returned {reply['returned']}: a column is an integer 0-{COLUMNS - 1}")
        return self._checked(reply.get("column"), turn)

    @staticmethod
    def _checked(column: Any, turn: Turn) -> Any:
        free = [c for c in range(COLUMNS) if observation(turn).board[c] == 0]
        if not isinstance(column, int) or isinstance(column, bool) or column not in free:
            raise Resign(f"the agent returned column {column}: the free columns are "
                         f"{', '.join(map(str, free))} (0-based; Kaggle counts an invalid column as a loss)")
        return turn.game.parse_move(str(column + 1), turn.state)


# The agent's own process ----------------------------------------------------------------------------------------------

def _answer(agent: Any, request: dict[str, Any]) -> dict[str, Any]:
    """Call the agent on one request; what to tell the player (a column, or how the agent failed)."""
    args = (Struct(request["observation"]), Struct(request["configuration"]))[:_wants(agent)]
    try:
        column = agent(*args)
    except SystemExit as exc:
        return {"exit": f"called sys.exit({exc.code!r})"}
    except KeyboardInterrupt:
        return {"exit": "raised KeyboardInterrupt"}
    except BaseException:  # noqa: BLE001 - whatever the agent raises loses its game, never the bot
        return {"raised": traceback.format_exc()[-TRACEBACK_CHARS:]}  # the end says what was raised
    try:
        if isinstance(column, bool):
            raise TypeError  # Kaggle's schema takes no booleans
        return {"column": operator.index(column)}  # ints, numpy integers
    except TypeError:
        return {"returned": repr(column)[:200]}


def serve_agent(path: str, name: str | None) -> int:
    """The agent's process: load the file, then answer one JSON request a line (``observation``,
    ``configuration``) with one JSON answer a line. What the agent prints goes to stderr, so that its
    answers' channel is the process's own."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def say(obj: dict[str, Any]) -> None:
        answers.write(json.dumps(obj) + "\n")
        answers.flush()

    try:
        agent = load_agent(path, name)
    except ValueError as exc:
        say({"error": str(exc)})
        return 1
    say({"ready": getattr(agent, "__name__", "agent")})
    for line in sys.stdin:
        say(_answer(agent, json.loads(line)))
    return 0


if __name__ == "__main__":
    sys.exit(serve_agent(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
