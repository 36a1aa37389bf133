"""A node's link to the cluster: its life cycle, the listener of its Redis channels, and the check that it
can start at all."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import msgpack

from .. import resp
from .adoption import Adoption
from .base import ALL, BEAT_SECONDS, FORGET, PREFIX, PUBLISH_SECONDS, channel, log
from .fencing import Fencing
from .forwarding import Forwarding
from .leases import Leases
from .outages import Outages
from .register import Register


def preflight(url: str, host: str, port: int, reuse_port: bool) -> str | None:
    """What keeps a node from starting, checked before it joins the cluster (a node that joined and then failed
    would be taken for dead and adopted): the Redis client missing, the cluster's Redis not answering, the port
    taken. None when it can start."""
    try:
        import redis
    except ImportError:
        return "a cluster node needs the Redis client: pip install 'plyhall[cluster]'"
    client = redis.Redis.from_url(url, socket_connect_timeout=3.0, socket_timeout=3.0)
    try:
        client.ping()
    except Exception as exc:
        return f"cannot reach the cluster's Redis: {exc}"
    finally:
        client.close()
    if port == 0:
        return None
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


class ClusterLink(Leases, Outages, Register, Forwarding, Adoption, Fencing):
    """This node's link to the others (see the package docstring); ``server`` is the node's server."""

    async def start(self) -> None:
        """Connect to Redis (``plyhall serve`` checked it answers, see :func:`preflight`; a Redis down now is waited
        for in the background: the node serves meanwhile)."""
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        # A pooled connection that died with a Redis that came back is not a lost Redis: a command that fails on
        # one is tried once more on a fresh connection, an idle one is checked (PING) before use, and the pool is
        # emptied when Redis is back (``_back``).
        self.redis = Redis.from_url(self.url, socket_timeout=2.0, socket_connect_timeout=2.0, health_check_interval=5,
                                    retry=Retry(NoBackoff(), 1),
                                    retry_on_error=[RedisConnectionError, RedisTimeoutError])
        try:
            await self._beat()
            await self._load_listings()
        except Exception as exc:  # the loops below keep trying
            self._down(exc)
        loops = (self._listen(), self._repeat(BEAT_SECONDS, self._beat_and_recall),
                 self._repeat(PUBLISH_SECONDS, self._publish_if_changed), self._watch_ownership(),
                 self._watch_stalls())
        self._tasks = [asyncio.create_task(loop) for loop in loops]

    async def stop(self) -> None:
        """Leave the cluster: stop listening and let the lease lapse (the rooms stay this node's in the database,
        for another node to adopt unless this one is back first). Takes a few seconds at most, whatever Redis does."""
        if self._outgoing:  # what the last clients' goodbyes queued goes out before the connection closes
            self._flush()
        self.leaving = True
        for task in self._tasks:
            task.cancel()
        self._writer.close()
        self.proof.close()
        if self._tasks:  # a Redis client caught mid-command may hold on to a cancellation: never wait for it long
            await asyncio.wait(self._tasks, timeout=2.0)
        if self.redis is not None:
            try:
                if self.up and not self.server.deposed:  # the others take over at once, not when the leases lapse
                    async with asyncio.timeout(1.0):
                        await self.redis.delete(f"{PREFIX}node:{self.node}")
                    async with asyncio.timeout(1.0):
                        await self.redis.eval(FORGET, 1, f"{PREFIX}matchmaker", self.node)
                async with asyncio.timeout(1.0):
                    await self.redis.aclose()
            except Exception:
                pass

    def status(self) -> dict[str, Any]:
        """For /healthz and /metrics: this node, whether Redis answers, the live nodes and the matchmaker, its
        database lock (``held``, ``unverified``, ``deposed``), its epoch and how often the lock was taken again."""
        return {"node": self.node, "redis": "up" if self.up else "down", "nodes": sorted(self.live),
                "matchmaker": self.matchmaker, "remote_sessions": len(self.homes),
                "lock": "deposed" if self.server.deposed else self.lock, "epoch": self.server.storage.epoch,
                "lock_retaken": self.proof.retaken}

    async def _listen(self) -> None:
        while True:
            try:
                async for payload in resp.subscribed(self.url, [channel(self.node), ALL]):
                    if payload is not None:
                        self._receive(payload)
                        continue
                    if not self._writer.open:
                        await self._writer.connect(self.url)
                    self._listening()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._down(exc)
                await asyncio.sleep(0.5)

    def _receive(self, payload: bytes) -> None:
        self.awake()
        try:
            sender, items = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        except Exception:
            log.exception("an undecodable cluster message")
            return
        if sender == self.node:
            return
        self.counts["received"] += 1
        if sender not in self.live and not (len(items) == 1 and items[0][:1] == ["deposed"]):  # (it says it left)
            if sender in self._said_gone:  # said to have stopped renewing its lease (a Redis restart lost it)
                self._said_gone.discard(sender)
                log.warning("node %s renews its lease again", sender)
            self._returned(sender)
        self.live.add(sender)  # it speaks: it lives (a node that just started may not have renewed a lease we saw)
        for item in items:
            try:
                self._handle(sender, item)
            except Exception:  # one bad item must not cost the others, nor the listener
                log.exception("could not handle cluster message %s from %s", item[0] if item else "?", sender)

    def _handle(self, sender: str, item: list[Any]) -> None:
        handler = self._handlers.get(item[0])
        if handler is None:
            log.warning("unknown cluster message %r from %s", item[0], sender)
            return
        handler(self, sender, item, time.monotonic())

    _handlers = {"msg": Forwarding._on_msg, "req": Forwarding._on_request, "attach": Forwarding._on_attach,
                 "gone": Forwarding._on_gone, "close": Forwarding._on_close, "listing": Leases._on_listing,
                 "rooms": Leases._on_listing, "hello": Leases._on_hello, "takeover": Register._on_takeover,
                 "adopted": Adoption._on_adopted, "reseek": Leases._on_reseek, "deposed": Adoption._on_deposed,
                 "ack": Forwarding._on_ack}
