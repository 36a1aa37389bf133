"""What the server's parts see of the running server: :class:`Host`, which ``PlyhallServer`` is.

The HTTP routes (``api.py``), the secret checks (``checks.py``) and a cluster node's Redis link
(``cluster/``) are built by ``server.py`` and read and call back into the server that built them.
They name it by this protocol, not by ``PlyhallServer``, so none of them imports ``server.py``
back: the server sits above its parts, and this module below all of them.
"""

from __future__ import annotations

import concurrent.futures
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from protocol.requests import ClientMessage

    from ..core.hall import Hall
    from ..core.outbox import HallOutbox
    from ..storage import Storage
    from ..storage.writer import Writer
    from .analysis import AnalysisQueue
    from .connections import Connection
    from .gc_policy import ServingGC
    from .metrics import Metrics
    from .supervisor import HouseBots


class NodeStatus(Protocol):
    """What /healthz and /metrics read of a cluster node's link (``cluster.ClusterLink``)."""

    up: bool  # the cluster's Redis answered the last command
    lock: str  # this node's database lock: held, or unverified while the database cannot say

    def status(self) -> dict[str, Any]:
        """The node's cluster state, as /healthz and /metrics show it."""
        ...


class Host(Protocol):
    """The running server, as its parts use it (``server.io.server.PlyhallServer`` is one)."""

    hall: Hall
    storage: Storage
    connections: dict[int, Connection]  # the open WebSocket connections, by id
    reads: concurrent.futures.ThreadPoolExecutor  # threads for the database's reads
    writer: Writer | None  # the group-commit writer (None before the start)
    metrics: Metrics
    analysis: AnalysisQueue
    house: HouseBots | None
    gc: ServingGC | None
    cluster: NodeStatus | None  # this node's cluster link (None: a single server)
    stopping: bool
    deposed: str | None  # why this node no longer owns its rooms (None: it does)
    started: float  # wall-clock time of the start
    games_recorded: int

    def dispatch(self, out: HallOutbox) -> None:
        """Send ``out`` once its writes are committed."""
        ...

    def handle(self, connection: Connection, msg: ClientMessage, now: float) -> None:
        """Let the hall answer a validated message of ``connection``."""
        ...

    def close_connection(self, connection: Connection, code: int, reason: str) -> None:
        """Close ``connection`` with a WebSocket close ``code`` and ``reason`` (once)."""
        ...

    def depose(self, reason: str) -> None:
        """Stop serving at once: another node owns this node's rooms now."""
        ...
