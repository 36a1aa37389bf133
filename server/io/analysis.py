"""The analysis queue: finished games analysed by the master engines in worker processes, off the event loop.

The server never imports the engines: a worker is a process of its own (``python -m client.runner.analyse``,
at a lower priority than the server), fed one game a line and answering with progress and the analysis
(see that module). At most ``workers`` games are analysed at once; the others wait in order, each game once.
A finished analysis is stored with the game (an ``AnalysisSaved`` write through the server's writer) and
served at ``/api/games/ID/analysis``; until then that route answers 202 with the job's progress.

The queue is shared fairly: each requester (an address; :data:`FINISHED` for the games ``--analyse-finished``
queues by itself) has its own line of waiting games, at most ``per_requester`` long, and the workers take one
game from each address in turn (round robin), so a newcomer's game is next but one however many games another
address has asked for. The games of :data:`FINISHED` are background work: a worker takes one only when no address
has a game waiting. A waiting game that an address asks for again goes to the front of that address's line (out
of whichever line it waited in): the replay page asks again for the game it shows while it waits, so the game
being watched goes first, ahead of the background work and of that address's earlier requests, yet still one game
per address in turn. A request past a requester's share, or past :data:`MAX_QUEUED` games in all, is refused with
the seconds after which to try again (the route answers 429 with ``Retry-After``). Games shorter than
:data:`MIN_AUTO_PLIES` plies are not queued by ``--analyse-finished`` (a resignation at move 0 teaches nothing);
anybody may still ask for one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import math
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("plyhall.analysis")

WORKER = [sys.executable, "-P", "-m", "client.runner.analyse"]  # -P: a bots/ folder where the server runs is not ours
"""The command of an analysis worker."""
MAX_QUEUED = 200
"""Games waiting for analysis at most; a request past it is refused (try again later)."""
PER_REQUESTER = 10
"""Games one requester (an address) may have waiting at once, by default (``plyhall serve --analysis-per-address``)."""
FINISHED = "finished games"
"""The requester of the games ``--analyse-finished`` queues: one share like anybody's, its line ``FINISHED_QUEUED``
long."""
FINISHED_QUEUED = 100
MIN_AUTO_PLIES = 8
"""Plies a game needs (four moves each) before ``--analyse-finished`` queues it."""
JOB_GUESS = 60.0
"""Seconds one game's analysis is taken to last until the queue has timed one (for ``Retry-After``)."""
JOB_SECONDS, PER_MOVE = 120.0, 30.0
"""How long one game's analysis may take (seconds, plus so much a move) before its worker is stopped as stuck."""


class QueueFull(Exception):
    """The analysis queue holds :data:`MAX_QUEUED` games already, or the requester its share: ``retry_after``
    seconds is when to ask again."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class Job:
    """One game waiting for or under analysis."""

    game_id: str
    requester: str = "?"  # whose line it waits in (an address, or FINISHED)
    state: str = "queued"  # queued, running, failed, or done (stored, or being stored)
    done: int = 0
    total: int = 0
    error: str | None = None
    analysis: dict[str, Any] | None = None  # once done: served from here until the store has it
    waiters: list[asyncio.Future] = field(default_factory=list)

    def to_json(self, ahead: int = 0) -> dict[str, Any]:
        """The job as ``/api/games/ID/analysis`` shows it while there is no analysis yet."""
        view: dict[str, Any] = {"status": self.state, "done": self.done, "total": self.total}
        if self.state == "queued":
            view["ahead"] = ahead
        if self.error:
            view["error"] = self.error
        return view


class Worker:
    """One worker process and the pipe to it (started on first use, started again after it dies)."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.proc: asyncio.subprocess.Process | None = None

    async def analyse(self, request: dict[str, Any], progress: Callable[[int, int], None]) -> dict[str, Any]:
        """Send one request and wait for its analysis (``RuntimeError`` with the worker's reason on failure)."""
        if self.proc is None or self.proc.returncode is not None:
            self.proc = await asyncio.create_subprocess_exec(
                *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, limit=64 * 1024 * 1024)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        await self.proc.stdin.drain()
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                code = await self.proc.wait()
                raise RuntimeError(f"the analysis worker ended (exit code {code})")
            answer = json.loads(line)
            if answer.get("id") != request["id"]:
                continue
            if "progress" in answer:
                progress(*answer["progress"])
            elif "analysis" in answer:
                return answer["analysis"]
            else:
                raise RuntimeError(answer.get("error") or "the analysis worker failed")

    async def close(self) -> None:
        """End the worker process."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self.proc = None


class AnalysisQueue:
    """Games waiting for analysis and the workers analysing them.

    ``read(game_id)`` reads a game's record (moves and options; called on the ``reads`` executor) and
    ``save(game_id, analysis)`` stores an analysis; both are the server's, so that this module knows neither the
    database nor the hall.
    """

    def __init__(self, read: Callable[[str], dict[str, Any] | None], reads: concurrent.futures.Executor,
                 save: Callable[[str, dict[str, Any]], None], workers: int = 1,
                 nodes: int | None = None, command: list[str] | None = None,
                 per_requester: int = PER_REQUESTER) -> None:
        if workers < 1:
            raise ValueError("analysis workers must be at least 1")
        if per_requester < 1:
            raise ValueError("games waiting per requester must be at least 1")
        self.read = read
        self.reads = reads
        self.save = save
        self.nodes = nodes
        self.per_requester = per_requester
        self.jobs: OrderedDict[str, Job] = OrderedDict()
        self.lines: OrderedDict[str, deque[Job]] = OrderedDict()  # requester -> its waiting jobs; served in turn
        self.seconds_per_job = JOB_GUESS  # how long one analysis takes, on average of late ones
        self.workers = [Worker(command or WORKER) for _ in range(workers)]
        self._wakeup = asyncio.Event()
        self._tasks: list[asyncio.Task] = []

    def start(self) -> None:
        """Start serving the queue (one task per worker)."""
        self._tasks = [asyncio.create_task(self._serve(worker)) for worker in self.workers]

    async def stop(self) -> None:
        """Stop every worker at once (a game under analysis is left for another time)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*(worker.close() for worker in self.workers))

    def request(self, game_id: str, requester: str = "?") -> Job:
        """Queue ``game_id`` in the line of ``requester`` (once; a failed job is tried again): its job. A game waiting
        already, asked for again by an address, moves to the front of that address's line (see :meth:`_promote`).
        ``QueueFull`` past the requester's share or the queue's bound."""
        job = self.jobs.get(game_id)
        if job is not None and job.state not in ("failed", "done"):
            if job.state == "queued" and requester != FINISHED:
                self._promote(job, requester)
            return job
        line = self.lines.get(requester, ())
        share = self._share(requester)
        if len(line) >= share:
            raise QueueFull(f"{len(line)} games you asked for wait for analysis already, your share of the queue "
                            f"({share}); ask again once one is done", self._retry_after(len(self.lines)))
        waiting = self.waiting()
        if waiting >= MAX_QUEUED:
            raise QueueFull(f"{waiting} games wait for analysis already, the queue's limit; ask again later",
                            self._retry_after(1))
        job = Job(game_id, requester)
        self.jobs[game_id] = job
        self.jobs.move_to_end(game_id)
        self.lines.setdefault(requester, deque()).append(job)
        self._wakeup.set()
        return job

    def _share(self, requester: str) -> int:
        return FINISHED_QUEUED if requester == FINISHED else self.per_requester

    def _promote(self, job: Job, requester: str) -> None:
        """``requester`` asks for the waiting ``job``: it moves to the front of that requester's line (out of the line
        it waited in), unless that line is full already, when it stays where it is."""
        line = self.lines.get(job.requester)
        if job.requester != requester and len(self.lines.get(requester, ())) >= self._share(requester):
            return
        if line is not None:
            line.remove(job)
            if not line:
                del self.lines[job.requester]
        job.requester = requester
        self.lines.setdefault(requester, deque()).appendleft(job)

    def waiting(self) -> int:
        """Games waiting for a worker."""
        return sum(len(line) for line in self.lines.values())

    def _retry_after(self, games: int) -> int:
        """Whole seconds until ``games`` more analyses are likely done."""
        return max(1, math.ceil(self.seconds_per_job * games / len(self.workers)))

    def request_played(self, records: Iterable[Any]) -> None:
        """Queue the games of ``records`` (ended games' records) that were played to a result over at least
        ``MIN_AUTO_PLIES`` plies (``plyhall serve --analyse-finished``), in the line of :data:`FINISHED`."""
        for record in records:
            if record.status == "finished" and len(record.moves) >= MIN_AUTO_PLIES:
                try:
                    self.request(record.id, FINISHED)
                except QueueFull as exc:
                    log.warning("game %s not analysed: %s", record.id, exc)

    def status(self, game_id: str) -> dict[str, Any] | None:
        """A queued, running or failed job's view, or None when the queue does not know the game."""
        job = self.jobs.get(game_id)
        if job is None:
            return None
        return job.to_json(self._ahead(job) if job.state == "queued" else 0)

    def _ahead(self, job: Job) -> int:
        """Games the workers take before ``job``: in turn from each address's line, the background line's
        (:data:`FINISHED`) only when no address has a game waiting."""
        place = self.lines[job.requester].index(job)
        people = [requester for requester in self.lines if requester != FINISHED]
        if job.requester == FINISHED:
            return place + sum(len(self.lines[requester]) for requester in people)
        mine = people.index(job.requester)
        return place + sum(min(len(self.lines[other]), place + (turn < mine))
                           for turn, other in enumerate(people) if turn != mine)

    async def wait(self, game_id: str) -> None:
        """Wait until ``game_id``'s job is done (stored) or failed."""
        job = self.jobs.get(game_id)
        if job is None:
            return
        future = asyncio.get_running_loop().create_future()
        job.waiters.append(future)
        await future

    def done(self, game_id: str) -> dict[str, Any] | None:
        """The analysis of a job done lately (it may not be committed to the database yet), or None."""
        job = self.jobs.get(game_id)
        return job.analysis if job is not None and job.state == "done" else None

    def _forget_done(self, keep: int = 100) -> None:
        done = [gid for gid, job in self.jobs.items() if job.state == "done"]
        for gid in done[:-keep]:
            del self.jobs[gid]

    def _next(self) -> Job | None:
        """The first waiting game of the address whose turn it is (that address's turn then goes to the back); a
        game of the background line (:data:`FINISHED`) only when no address has one waiting."""
        for requester in [r for r in self.lines if r != FINISHED] + [FINISHED] * (FINISHED in self.lines):
            line = self.lines.pop(requester)
            if not line:
                continue
            job = line.popleft()
            if line:
                self.lines[requester] = line
            return job
        return None

    async def _serve(self, worker: Worker) -> None:
        while True:
            job = self._next()
            if job is None:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            job.state = "running"
            began = time.monotonic()
            try:
                await self._run(worker, job)
                self.seconds_per_job += (time.monotonic() - began - self.seconds_per_job) / 4
            except Exception:  # a bug or a database error: said, the job failed, and the queue goes on
                log.exception("analysis of game %s failed", job.game_id)
                job.state, job.error = "failed", "the server could not analyse it (see its log)"
                await worker.close()
                self._wake_waiters(job)

    async def _run(self, worker: Worker, job: Job) -> None:
        def progress(done: int, total: int) -> None:
            job.done, job.total = done, total

        try:
            record = await asyncio.get_running_loop().run_in_executor(self.reads, self.read, job.game_id)
            if record is None or record.get("status") == "running":
                raise RuntimeError("no finished game with that id")
            if not record["moves"]:
                raise RuntimeError("the game has no moves to analyse")
            request = {"id": job.game_id, "game": record["game"], "options": record.get("options") or {},
                       "moves": [m["move"] for m in record["moves"]], "nodes": self.nodes}
            moves = len(request["moves"])
            job.done, job.total = 0, moves + 1  # every position, the first included, until the worker says more
            async with asyncio.timeout(JOB_SECONDS + PER_MOVE * moves):
                analysis = await worker.analyse(request, progress)
        except TimeoutError:
            job.state, job.error = "failed", "the analysis took too long (its worker was stopped)"
            log.warning("analysis of game %s took too long: its worker is stopped", job.game_id)
            await worker.close()
        except (RuntimeError, OSError, ValueError) as exc:
            job.state, job.error = "failed", str(exc)
            log.warning("analysis of game %s failed: %s", job.game_id, exc)
            await worker.close()
        else:
            self.save(job.game_id, analysis)
            job.state, job.analysis = "done", analysis
            self._forget_done()
        self._wake_waiters(job)

    @staticmethod
    def _wake_waiters(job: Job) -> None:
        for future in job.waiters:
            if not future.done():
                future.set_result(None)
