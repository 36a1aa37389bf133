"""Where a bot thinks: :class:`Thinker` runs a player's ``choose`` outside the event loop, in a worker
process (default) or a thread, so that the connection keeps answering pings during a long search."""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import pickle
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any

from .player import GameResult, NoMove, Player, Resign, Turn


def _make(player: Player | Callable[[], Player]) -> Player:
    return player() if callable(player) and not isinstance(player, Player) else player


GRACE = 2.0
"""Seconds past the end of its clock a player thinking in a process is waited for before it is given up on."""
ENDED = ("the bot's thinking process ended before it answered (its error, if any, is printed above); a script "
         'that calls run() must call it under `if __name__ == "__main__":`, since that process imports the script '
         "again (docs/BOTS.md)")
"""What a bot says when its thinking process is gone: most often a script without the ``__main__`` guard."""
ABANDONED = "its game ended while it thought; a fresh thinking process takes the next turn"
"""The NoMove of a search given up on because its game ended (:meth:`Thinker.abandon`)."""
WARM_UP = "warm-up"
"""What the thinking process is sent to warm its player up (instead of a Turn)."""


def _warm_up(player: Player) -> tuple[str | None, float]:
    started = time.perf_counter()
    what = player.warm_up() if hasattr(player, "warm_up") else None
    return what, time.perf_counter() - started


def _worker_main(channel: Any, player: Player | Callable[[], Player]) -> None:
    """The thinking process: one player, created once (so it may keep state between moves)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops this process
    made = _make(player)
    while True:
        try:
            turn = channel.recv()
        except (EOFError, OSError):
            return
        try:
            if isinstance(turn, str) and turn == WARM_UP:
                channel.send(("ready", _warm_up(made)))
            elif isinstance(turn, GameResult):
                made.game_over(turn)
                channel.send(("told", None))
            else:
                channel.send(("move", made.choose(turn)))
        except (Resign, NoMove) as exc:  # instructions, not failures: the parent raises them again
            channel.send(("raise", exc))
        except Exception:
            channel.send(("error", traceback.format_exc()))


class Thinker:
    """Runs a player's ``choose`` outside the event loop: in a worker process (default) or a thread.

    The process is a plain ``multiprocessing`` process on a pipe, so stopping the bot (Ctrl-C)
    ends it at once, even in the middle of a search, and leaves nothing behind."""

    def __init__(self, player: Player | Callable[[], Player], mode: str = "process") -> None:
        if mode not in ("process", "thread"):
            raise ValueError("think mode is 'process' or 'thread'")
        self.mode = mode
        self.player = player
        self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="plyhall-think")
        self._process: Any = None
        self._thinking = False  # a turn is being thought about in the process
        self._abandoned = False  # ... and its game ended: the process is being stopped, a fresh one follows
        if mode == "process":
            self._spawn()
        else:
            self.local = _make(player)

    def _spawn(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._channel, child = context.Pipe()
        self._process = context.Process(target=_worker_main, args=(child, self.player), daemon=True,
                                        name="plyhall-thinker")
        try:
            self._process.start()  # (which pickles the player, to send it)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise TypeError(f"the player cannot be sent to its thinking process ({exc}): make it a function or a "
                            "class defined at the top of a module, holding no lock, file or connection, or run it "
                            'with think="thread" (docs/BOTS.md)') from exc
        finally:
            child.close()

    def _renew(self) -> None:
        """A fresh thinking process for the one stopped because its game ended (:meth:`abandon`)."""
        self._abandoned = False
        self._stop_process()
        self._spawn()

    def _ask(self, turn: Turn | GameResult | str, timeout: float | None = None) -> Any:
        if self._abandoned:  # given up on as it answered: the process may be gone already
            self._renew()
        self._thinking = isinstance(turn, Turn)
        try:
            return self._answer(turn, timeout)
        finally:
            self._thinking = False

    def _answer(self, turn: Turn | GameResult | str, timeout: float | None) -> Any:
        try:
            self._channel.send(turn)
        except (BrokenPipeError, ConnectionResetError):
            if self._abandoned:
                self._renew()
                raise NoMove(ABANDONED) from None
            raise RuntimeError(ENDED) from None
        if timeout is not None and not self._channel.poll(timeout):
            # the player never answers in time (an agent stuck in a loop): its process is replaced, the move lost
            self._stop_process()
            self._spawn()
            raise NoMove(f"the player did not answer within {timeout:.1f} s; its process was started again")
        try:
            kind, value = self._channel.recv()
        except (EOFError, ConnectionResetError, OSError):
            if self._abandoned:  # stopped by abandon(): its game ended while it thought
                self._renew()
                raise NoMove(ABANDONED) from None
            raise RuntimeError(ENDED) from None
        if kind == "error":
            raise RuntimeError(f"the bot failed while thinking:\n{value}")
        if kind == "raise":
            raise value
        return value

    async def warm_up(self) -> tuple[str | None, float]:
        """Warm the player up where it thinks (:meth:`Player.warm_up`): what was warmed up, and how long it took."""
        loop = asyncio.get_running_loop()
        if self.mode == "process":
            return await loop.run_in_executor(self.pool, self._ask, WARM_UP)
        return await loop.run_in_executor(self.pool, _warm_up, self.local)

    async def choose(self, turn: Turn) -> Any:
        """The player's move for ``turn``. In a process, a player still thinking when its clock has run out (and
        :data:`GRACE` more seconds) is given up on: :class:`NoMove`, and a fresh process for the next turn."""
        loop = asyncio.get_running_loop()
        if self.mode == "process":
            timeout = None if turn.time_left is None else turn.time_left + GRACE
            return await loop.run_in_executor(self.pool, self._ask, turn, timeout)
        return await loop.run_in_executor(self.pool, self.local.choose, turn)

    def abandon(self) -> None:
        """The game being thought about ended (its clock ran out, the opponent resigned): stop thinking about it now,
        rather than when the clock and :data:`GRACE` are over, which is the next game's time in a series. In a
        process: it is stopped, and a fresh one takes the next turn (the turn being thought about ends in
        :class:`NoMove`). In a thread: a player with an ``abandon`` method (an engine) is told; a thread itself
        cannot be stopped."""
        if self.mode == "process":
            process = self._process
            if self._thinking and process is not None:
                self._abandoned = True
                process.terminate()
        elif hasattr(self.local, "abandon"):
            self.local.abandon()

    async def game_over(self, result: GameResult) -> None:
        """Tell the player how a game it played ended (:meth:`Player.game_over`)."""
        loop = asyncio.get_running_loop()
        if self.mode == "process":
            await loop.run_in_executor(self.pool, self._ask, result)
        else:
            if hasattr(self.local, "game_over"):
                await loop.run_in_executor(self.pool, self.local.game_over, result)

    def _stop_process(self) -> None:
        self._process.terminate()
        self._process.join(5)
        self._channel.close()
        self._process = None

    def close(self) -> None:
        """Stop the worker (at once, even mid-search); a player thinking in a thread is closed
        (:meth:`Player.close`: an engine process is stopped)."""
        if self.mode == "thread" and hasattr(self.local, "close"):
            self.local.close()
        if self._process is not None:
            self._stop_process()
        self.pool.shutdown(wait=False, cancel_futures=True)
