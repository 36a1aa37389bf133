"""The hall's secret checks and name look-ups, run off the event loop.

Checking a secret costs PBKDF2 (milliseconds of CPU): checks run on two threads (PBKDF2 releases the
interpreter lock), taking the waiting addresses in turn (``FairQueue``), so one address's flood of
logins never holds up another's. A name unknown on a database other servers share is looked up there,
on the server's reading threads. The answers go back to the hall, and what it returns is dispatched.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from typing import TYPE_CHECKING

from protocol.messages import ErrorCode

from ..core.identity import Claim, ClaimLookup, FairQueue, SecretCheck
from ..core.outbox import HallOutbox, tag_reply

if TYPE_CHECKING:
    from .host import Host

log = logging.getLogger("plyhall.server")

HASH_WORKERS = 2  # threads checking secrets (PBKDF2 releases the interpreter lock)


class Checks:
    """Runs the checks and look-ups of one server's hall."""

    def __init__(self, server: Host) -> None:
        self.server = server
        self._hashing = concurrent.futures.ThreadPoolExecutor(HASH_WORKERS, thread_name_prefix="plyhall-hash")
        self._waiting: FairQueue[SecretCheck] = FairQueue()  # secret checks waiting for a hashing thread
        self._running = 0

    def check(self, check: SecretCheck) -> None:
        """Queue a secret check; it runs when a hashing thread is free and its address's turn has come."""
        self._waiting.push(check.address, check)
        self._next()

    def close(self) -> None:
        """Stop: checks that wait are dropped (the server is stopping; their logins are not answered)."""
        self._hashing.shutdown(wait=False, cancel_futures=True)

    def _next(self) -> None:
        server = self.server
        while self._running < HASH_WORKERS and not server.stopping:
            check = self._waiting.pop()
            if check is None:
                return
            if check.conn not in server.connections:  # gone while it waited: no hashing for nobody
                server.dispatch(server.hall.secret_checked(check, None, time.monotonic()))
                continue
            self._running += 1
            future = asyncio.get_running_loop().run_in_executor(self._hashing, check.run)
            future.add_done_callback(lambda result, check=check: self._checked(check, result))

    def _checked(self, check: SecretCheck, result: asyncio.Future) -> None:
        self._running -= 1
        server = self.server
        if server.stopping or result.cancelled():
            return
        try:
            answer = result.result()
        except Exception:
            log.exception("checking a secret failed")
            answer = False
        server.dispatch(server.hall.secret_checked(check, answer, time.monotonic()))
        self._next()

    def look_up(self, lookup: ClaimLookup) -> None:
        """Look a name's claim up in the database (shared, or given names by ``plyhall names add`` while the server
        runs), then hand the answer to the hall."""
        server = self.server
        future = asyncio.get_running_loop().run_in_executor(server.reads, server.storage.name_claim,
                                                            lookup.login["name"])

        def done(result: asyncio.Future) -> None:
            if server.stopping or result.cancelled():
                return
            try:
                found = result.result()
            except Exception as exc:  # the database is down: the login is refused, not the server
                log.warning("looking up the name %s failed: %s", lookup.login["name"], exc)
                server.hall.logins.looked_up(lookup.conn)
                out = HallOutbox()
                out.error(lookup.conn, ErrorCode.BUSY, "the database is not answering; try again in a moment",
                          retry_after=5)
                tag_reply(out, lookup.conn, lookup.login.get("id"))
                server.dispatch(out)
                return
            claim, registered = (None, False) if found is None else (found[:2], found[2])
            server.dispatch(server.hall.claim_looked_up(lookup, claim, time.monotonic(), registered))

        future.add_done_callback(done)

    def learn_claim(self, name: str, address: str) -> None:
        """A player of another node of the cluster, attached here under ``name`` (from ``address``), whose claim this
        node never saw: look it up in the shared database, so that its games here are rated as a claimed name's and
        its address links it as a login's would (a game of two nodes' players was stored unrated, "not a claimed
        name")."""
        server = self.server
        if name in server.hall.logins.claims:
            return
        future = asyncio.get_running_loop().run_in_executor(server.reads, server.storage.name_claim, name)

        def done(result: asyncio.Future) -> None:
            if server.stopping or result.cancelled():
                return
            try:
                found = result.result()
            except Exception as exc:  # the database is down: the name's games here are judged without its claim
                log.warning("looking up the name %s of another node failed: %s", name, exc)
                return
            if found is not None:  # its games here are a claimed name's, and its address links it (RatedPlay)
                server.hall.logins.learn_claim(name, Claim(found[0], found[1]))
                if found[2]:
                    server.hall.rated.registered.add(name)
                server.hall.rated.seen(name, address)

        future.add_done_callback(done)
