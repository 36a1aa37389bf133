"""Proving that this process still owns its node of a shared database (docs/SCALING.md, "Fencing"): its lock's
connection answers and its epoch is current, and after that connection dropped (a database restart, a terminated
backend) the lock is taken again if nobody took it meanwhile. A cluster node proves it every beat
(``server.io.cluster.fencing``); a lone server on PostgreSQL every :data:`LONE_EVERY` seconds, so that a second server
started on the same database while the lock was down refuses to start, as it does while the first one runs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import TYPE_CHECKING

from ..storage import Deposed, StorageError

if TYPE_CHECKING:
    from .host import Host

log = logging.getLogger("plyhall.server")

LONE_EVERY = 2.0
"""Seconds between two proofs of a server on a shared database that is no cluster node."""


class OwnershipProof:
    """Runs :meth:`Storage.check_ownership` off the event loop and keeps what it showed: ``lock`` is ``held``, or
    ``unverified`` while the database cannot say; ``retaken`` counts the times the lock was taken again."""

    def __init__(self, server: Host) -> None:
        self.server = server
        self.lock = "held"
        self.retaken = 0
        self._checking: asyncio.Future[str] | None = None  # the check running now
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="plyhall-fence")

    async def check(self) -> bool | None:
        """One proof, on a thread of its own (a database that hangs holds up nothing else); a check running
        already is waited for rather than doubled. True: this process owns its node; False: it is deposed (and
        stops); None: the database cannot say now."""
        if self._checking is None:
            self._checking = asyncio.get_running_loop().run_in_executor(
                self._thread, self.server.storage.check_ownership)
            # its outcome is read below; should the waiting task be cancelled first (the node deposed), it is read here
            self._checking.add_done_callback(lambda done: done.cancelled() or done.exception())
        checking = self._checking
        try:
            result = await asyncio.shield(checking)
        except Deposed as exc:
            self.server.depose(str(exc))
            return False
        except (StorageError, Exception) as exc:  # the database cannot say now: tried again at the next beat
            if self.lock == "held":
                log.error("cannot prove this node still holds its database lock (%s): its writes wait until it can",
                          exc)
            self.lock = "unverified"
            return None
        finally:
            if self._checking is checking:
                self._checking = None
        if result == "retaken":
            self.retaken += 1
            log.warning("this node's database lock had been lost (its connection dropped); taken again, before any "
                        "other server took it (epoch %s)", self.server.storage.epoch)
        elif self.lock != "held":
            log.warning("this node's database lock is proven held again")
        self.lock = "held"
        return True

    async def every(self, seconds: float) -> None:
        """Prove it every ``seconds``, until cancelled or deposed."""
        while not self.server.deposed:
            await asyncio.sleep(seconds)
            await self.check()

    def close(self) -> None:
        """No more checks."""
        self._thread.shutdown(wait=False)
