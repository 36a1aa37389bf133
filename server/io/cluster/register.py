"""The cluster's registers in Redis: room names (unique across the cluster, from creation to close), the
listing each node publishes, and the names held (sessions, tokens, seats and entries) for logins on any node."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

import msgpack

from protocol.messages import ErrorCode

from ...core.hall import ROOM_NAME
from ...core.identity import Holder
from ...core.rooms import normalised, room_key
from .base import (
    ALL,
    CLAIM_SESSIONS,
    CLAIMING_SECONDS,
    FIND_WAITS,
    FORGET,
    PREFIX,
    PRUNE,
    REGISTER_SESSIONS,
    RELEASE,
    LinkBase,
    channel,
)


class Register(LinkBase):
    """This node's rooms, listing and names in the cluster's registers, and logins decided against them."""

    async def _reserve(self, conn: int, msg: dict[str, Any]) -> None:
        """A room name is unique across the cluster: it is reserved in the register before the room opens."""
        name = normalised(msg["name"])
        if self.hall.registry.taken(name) or not ROOM_NAME.match(name):
            self._local(conn, msg)  # the hall says it exists, or what is wrong with the name: nothing for Redis
            return
        key = name.casefold()
        try:
            assert self.redis is not None
            for wait in FIND_WAITS:  # a room closed on another node a moment ago: its release, written before its
                await asyncio.sleep(wait)  # client heard of the close, may reach Redis just after this on a busy host
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.hsetnx(f"{PREFIX}rooms", key, self.node)
                    pipe.hget(f"{PREFIX}rooms", key)
                    _, owner = await pipe.execute()
                owner = owner.decode() if owner else self.node
                if owner == self.node or owner not in self.live or self.hall.registry.taken(name):
                    break
        except Exception as exc:
            self._down(exc)
            self._unreachable(conn, msg, "the cluster's register of rooms")
            return
        if self.hall.registry.taken(name):  # created here meanwhile: the hall says it exists
            self._local(conn, msg)
            return
        if owner != self.node and owner in self.live:
            self._reply_error(conn, msg, ErrorCode.ROOM_EXISTS, f"a room called {name} exists already")
            return
        if owner != self.node:  # left by a node that is gone (its rooms still listed, to be adopted): the hall
            self._command("hset", f"{PREFIX}rooms", key, self.node)  # decides against the listings
        else:  # granted by the register: a listing that still shows a room of this name is out of date
            self.view.claimed(name)
        self._registered.add(key)
        self._local(conn, msg)
        if not self.hall.registry.taken(name) and \
                self._command("eval", RELEASE, 1, f"{PREFIX}rooms", key, self.node):  # refused (an option, a
            self._registered.discard(key)  # quota): the name is free again

    async def _find(self, conn: int, msg: dict[str, Any]) -> None:
        """A room neither here nor in the listings yet (opened a moment ago elsewhere): ask the register."""
        try:
            assert self.redis is not None
            key = room_key(msg["room"])
            owner = None
            for wait in FIND_WAITS:  # the owner's register write, sent before its client heard of the room, may
                await asyncio.sleep(wait)  # reach Redis just after this look-up on a busy host: asked again
                owner = await self.redis.hget(f"{PREFIX}rooms", key)
                if owner is not None or self.hall.registry.find(msg["room"]) is not None or self.view.owner(
                        msg["room"]) is not None:
                    break
            owner = owner.decode() if owner else None
            if owner is not None and owner != self.node and owner not in self.live \
                    and await self.redis.exists(f"{PREFIX}node:{owner}"):
                self.live.add(owner)  # a node started a moment ago: its lease is there
        except Exception as exc:
            self._down(exc)
            owner = None
        if owner is not None and owner != self.node:  # a node that is not live: cluster_unavailable, not no_such_room
            self.view.route(msg["room"], owner)
        if not self.forward(conn, msg):
            self._local(conn, msg)

    def changed(self) -> None:
        """The hall's outbox was delivered: register rooms opened here (and release closed ones), and the
        seats taken and given up, at once."""
        if self.hall.held_changed:
            names, self.hall.held_changed = self.hall.held_changed, set()
            self._publish_held(names)
        if self.hall.listing_version == self._registered_version:
            return
        self._registered_version = self.hall.listing_version
        rooms = self.hall.rooms
        changes = set(self._room_changes)  # emptied in place: the registry keeps writing into this very set
        self._room_changes.clear()
        for name in sorted(changes):  # the rooms opened or closed since the register was written
            key = name.casefold()
            if name in rooms and key not in self._registered:
                if self._command("hset", f"{PREFIX}rooms", key, self.node):
                    self._registered.add(key)
            elif name not in rooms and key in self._registered:
                if self._command("eval", RELEASE, 1, f"{PREFIX}rooms", key, self.node):
                    self._registered.discard(key)

    def _register_all(self) -> None:
        """Redis answers (again): every room and session here in the register (a restarted Redis lost them), and
        every other name it holds as this node's released (a release dropped, or lost in a broken connection,
        while Redis was away). The seats and entries held here likewise."""
        self._room_changes.clear()
        self._registered_version = self.hall.listing_version
        rooms = sorted({name.casefold() for name in self.hall.rooms})
        sessions = self._sessions_here()
        tokens = [(name, self.hall.logins.identities.get(name)) for name in sessions]
        commands: list[list[Any]] = [["eval", PRUNE, 1, f"{PREFIX}rooms", self.node, *rooms],
                                     ["eval", PRUNE, 1, f"{PREFIX}sessions", self.node, *sessions],
                                     *self._sessions_back(sessions)]
        for key, values in ((f"{PREFIX}rooms", [(room, self.node) for room in rooms]),
                            (f"{PREFIX}tokens", [(name, digest) for name, digest in tokens if digest])):
            if values:
                commands.append(["hset", key, *(value for pair in values for value in pair)])
        if self._write(commands):
            self._registered = set(rooms)
            self.unregistered.clear()
        self.hall.held_changed.clear()
        names = set(self._held) | set(self.hall.seat_holders) | {
            name for director in self.hall.tournaments.values() for name in director.entrants}
        self._publish_held(names, whole=True)

    def _sessions_here(self) -> list[str]:
        """The names of this node's own sessions (not stand-ins for other nodes' clients), but those whose login is
        still being decided (registered when it is welcomed)."""
        deciding = {name for _, _, name in self.logins.values()}
        return sorted(session.name for conn, session in self.hall.sessions.items()
                      if conn >= 0 and self.hall.by_name.get(session.name) is session and session.name not in deciding)

    def _sessions_back(self, sessions: list[str]) -> list[list[Any]]:
        """The commands that put ``sessions`` back in the register: a login made here while Redis was away over any
        other node's entry (``CLAIM_SESSIONS``: it is the newest, and that node is told), the others not over a login
        another live node took while this one was cut off (``REGISTER_SESSIONS``: that login's takeover is published to
        this node again)."""
        claimed = [name for name in sessions if name in self.unregistered]
        kept = [name for name in sessions if name not in self.unregistered]
        commands: list[list[Any]] = []
        if claimed:
            commands.append(["eval", CLAIM_SESSIONS, 1, f"{PREFIX}sessions", self.node, *claimed])
        if kept:
            commands.append(["eval", REGISTER_SESSIONS, 1, f"{PREFIX}sessions", self.node, channel(self.node), *kept])
        return commands

    def _register_sessions(self) -> None:
        """:meth:`_sessions_back` alone, once this node listens again: a takeover published to it while it was not
        yet subscribed (Redis answered its other connections first) is heard only now."""
        commands = self._sessions_back(self._sessions_here())
        if commands and self._write(commands):
            self.unregistered.clear()

    async def _publish_if_changed(self) -> None:
        """Publish this node's listing when it changed (the loop runs it every PUBLISH_SECONDS)."""
        if self.up and self.hall.listing_version != self._published:
            await self._publish_listing()

    async def _publish_listing(self) -> None:
        """The whole listing (at the start, and for a node that says hello), else the rooms that changed."""
        assert self.redis is not None
        version, whole = self.hall.listing_version, self._published < 0
        house, registry = self.hall.house, self.hall.registry
        free = max(0, house.limit - len(house.running))
        changed = set(self._listing_changes)
        self._listing_changes.clear()
        if whole:
            item = ["listing", self.hall.local_listing(), self.hall.events.summaries(), free]
        else:
            rooms = {name: registry.rooms[name].listing() if name in registry.rooms else None for name in changed}
            item = ["rooms", rooms, self.hall.events.summaries(), free]
        payload = msgpack.packb([self.node, [item]], use_bin_type=True)
        async with self.redis.pipeline(transaction=False) as pipe:
            if whole:
                pipe.set(f"{PREFIX}listing:{self.node}", payload)
            pipe.publish(ALL, payload)
            await pipe.execute()
        self._published = version

    def _held_rooms(self, name: str) -> set[str]:
        """What holds ``name`` here: its seats, and its entries (``@`` and the tournament) in events going on."""
        held = set(self.hall.seat_holders.get(name, ()))
        director = self.hall.events.entrant(name)
        if director is not None:
            held.add("@" + director.id)
        return held

    def _publish_held(self, names: Iterable[str], whole: bool = False) -> None:
        """Put the seats and entries of ``names`` held here in the register (a login elsewhere finds them):
        those taken since it was written (``whole``: all of them), and those given up deleted."""
        for name in sorted(names):
            now = self._held_rooms(name)
            before = self._held.get(name, set())
            written = True
            for room in sorted(now if whole else now - before):
                written = self._command("hset", f"{PREFIX}held:{name}", room, self.node) and written
            for room in sorted(before - now):  # (unless another node holds it now)
                written = self._command("eval", RELEASE, 1, f"{PREFIX}held:{name}", room, self.node) and written
            if not written:  # kept for when Redis is back: what the register may hold
                self._held[name] = before | now
            elif now:
                self._held[name] = now
            else:
                self._held.pop(name, None)

    async def login(self, conn: int, msg: dict[str, Any]) -> None:
        """Look up who holds ``msg``'s name on other nodes, then let the hall decide the login as if they were
        here. Without Redis, only a name this node holds (or nobody here has heard of) can be decided: it is."""
        name = msg["name"]
        holder, seats, nodes, previous = Holder.NOBODY, [], [], None
        try:
            assert self.redis is not None
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hget(f"{PREFIX}sessions", name)
                pipe.hgetall(f"{PREFIX}held:{name}")
                pipe.hget(f"{PREFIX}tokens", name)
                if msg.get("secret") is not None:  # a login that may claim the name marks it while it is decided
                    pipe.set(f"{PREFIX}claiming:{name}", self.node, px=int(CLAIMING_SECONDS * 1000), nx=True)
                pipe.get(f"{PREFIX}claiming:{name}")
                session_node, held, digest, *_, claiming = await pipe.execute()
        except Exception as exc:
            self._down(exc)
            if self.hall.holder(name, conn) is Holder.NOBODY and conn in self.server.connections:
                self._unreachable(conn, msg, "the cluster's register of names")
                return
        else:
            self._mark_up()
            here = self.node.encode()
            session_node = session_node.decode() if session_node else None
            if session_node is not None and session_node != self.node and session_node in self.live:
                holder, previous = Holder.SESSION, session_node
            elsewhere = {room.decode(): node.decode() for room, node in held.items()
                         if node != here and node.decode() in self.live}
            if elsewhere and holder is Holder.NOBODY and digest:  # as here: only a name that has logged in is held
                seated = any(not room.startswith("@") for room in elsewhere)
                holder = Holder.SEAT if seated else Holder.ENTRY
            claiming = claiming.decode() if claiming else self.node
            if holder is Holder.NOBODY and claiming != self.node and claiming in self.live:
                holder = Holder.CLAIMING  # a login for the name is being decided on another node right now
            seats = sorted(room for room in elsewhere if not room.startswith("@"))
            nodes = sorted(set(elsewhere.values()))
            if digest and holder is not Holder.NOBODY:
                self.hall.logins.identities[name] = digest.decode()
        self.view.holders[name] = holder
        self.view.seats[name] = seats
        if conn not in self.server.connections:
            return
        self.logins[conn] = (previous, nodes, name)
        self.server.dispatch(self.hall.handle(conn, msg, time.monotonic()))

    def welcomed(self, conn: int, name: str) -> None:
        """Connection ``conn`` logged in as ``name`` here: register the session, take it over from another node,
        and attach its seats on the nodes that hold them."""
        previous, nodes, _ = self.logins.pop(conn, (None, [], name))
        self._reached(name, time.monotonic())  # its clock, if held for it to come back, runs again
        self.view.holders.pop(name, None)
        self.view.seats.pop(name, None)
        digest = self.hall.logins.identities.get(name)
        if self._command("hset", f"{PREFIX}sessions", name, self.node):
            self.unregistered.discard(name)
        else:  # Redis is away: the register is told when it is back, over whatever it holds of the name
            self.unregistered.add(name)
        self._command("eval", FORGET, 1, f"{PREFIX}claiming:{name}", self.node)
        if digest:
            self._command("hset", f"{PREFIX}tokens", name, digest)
        if previous is not None and previous != self.node:
            self._send(previous, ["takeover", name])
        session = self.hall.sessions.get(conn)
        if session is None:
            return
        for node in nodes:
            if node != self.node and node in self.live:
                self._attach(node, conn, session)

    def _taken_over(self, name: str) -> None:
        """A login on another node took over ``name``: its connection here goes (its seats stay, for the new one)."""
        session = self.hall.by_name.get(name)
        self.view.holders[name] = Holder.SESSION  # for whatever the closing decides about the name here
        if session is not None and session.conn >= 0:
            connection = self.server.connections.get(session.conn)
            if connection is not None:
                self.server.close_connection(connection, 1000, "logged in from another connection")

    def _on_takeover(self, sender: str, item: list[Any], now: float) -> None:
        self._taken_over(item[1])
