"""A node of a cluster: the Redis link that makes several ``plyhall serve`` processes one hall.

Every node runs its own :class:`~server.core.hall.Hall` and owns the rooms opened on it (it checks
their moves and clocks and stores them in the shared PostgreSQL database). This link carries the
rest through Redis (docs/SCALING.md has the whole design):

- **Forwarding.** A request of a client of this node about a room another node owns (``join``,
  ``move``, ``chat``...), a seek (all seeks go to the node holding the matchmaker lease, so two
  seeks meet wherever they were made) or a tournament run elsewhere is published on that node's
  channel with the client's name and address. There the client is a session under a stand-in
  connection id (negative, never a real one), the owner's hall answers as for its own clients,
  and what it sends to the stand-in comes back on this node's channel, batched per node.
- **Names.** ``sessions`` (name -> node), ``tokens`` (name -> digest of the latest resume token)
  and ``held:NAME`` (room -> node, for seats and tournament entries) let any node apply the
  login rule table to names held elsewhere; a login taking over a session on another node closes
  that connection there, and a login attaches the name's seats on every node that holds one.
- **The lobby.** Each node publishes its rooms and tournaments when they change (coalesced);
  every node lists them all and routes requests by them.
- **Leases.** A node renews ``node:NAME`` (expiring) while it lives, and the matchmaker lease
  while it holds it. When a node's lease lapses, another node adopts its rooms and tournaments
  from PostgreSQL; the node's advisory lock there (held by its process, dropped when it dies)
  keeps a node merely cut off from Redis from being robbed of its rooms.
- **Fencing.** Every adoption takes new epochs (fencing tokens) in PostgreSQL, and every write is
  refused there unless it carries its node's current epoch (``server.storage.postgres``). Every
  beat this node proves it still owns its rooms (its lock's connection answers and its epoch is
  current; a dropped lock is taken again, with a new epoch, if nobody took over meanwhile); a node
  that finds itself deposed (a refused write, an ``adopted`` naming it, its lock in other hands)
  stops serving at once (``PlyhallServer.depose``).
- **Redis down.** Rooms and clients of this node play on; requests that need another node get
  ``cluster_unavailable``; ``/healthz`` says degraded; when Redis is back every node republishes
  its listing and re-attaches its forwarded sessions (their owners resend the full state, and the
  answers they sent meanwhile to requests they took).
- **Clocks.** The time of an outage (Redis away, a node stalled, lapsed or adopted) is charged to
  nobody: a room's owner holds the clock of a player to move until that player can be reached again
  (``outages.py``).

The package, one module a responsibility (each a part of :class:`ClusterLink`):

- ``base.py``: the keys, timings and state of the link, and its writing to Redis;
- ``link.py``: the link's life cycle, the listener and its message handlers, the start-up check;
- ``leases.py``: membership and leases (the beat, the live nodes, the matchmaker, catching up);
- ``register.py``: the room register, the listing, the names held, logins;
- ``forwarding.py``: requests sent to the node they are for, stand-ins for other nodes' clients;
- ``adoption.py``: taking over a dead node's rooms;
- ``fencing.py``: proving ownership every beat, leaving once deposed;
- ``outages.py``: the time of an outage given back to the clocks.
"""

from .link import ClusterLink, preflight

__all__ = ["ClusterLink", "preflight"]
