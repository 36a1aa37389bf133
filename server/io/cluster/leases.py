"""Membership and leases: renewing this node's lease, learning which nodes live, the matchmaker's lease,
and catching up with the others when Redis answers again."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .base import ALL, CLOCK_SKEW, LEASE_SECONDS, NUMBERS, PREFIX, LinkBase, log


class Leases(LinkBase):
    """The beat: this node's lease, the live nodes, the matchmaker, and the catch-up after Redis was away."""

    async def _beat_and_recall(self) -> None:
        """A beat; and every 20 beats (10 s), the nodes the database knows (Redis forgets its members when
        restarted)."""
        self._beats_done += 1
        if not self.up:
            self._hold_remote_clocks()
        self._hold_unreached()
        late = time.monotonic() - self._renewed
        if late > LEASE_SECONDS:  # stalled, or Redis was away: other nodes may have adopted this one's rooms
            if self.up:
                log.warning("this node's lease went %.1f s without renewal: proving it still owns its rooms", late)
            self._renewed = time.monotonic()  # (once a lease's time while Redis stays away)
            await self._check_ownership()
            if self.server.deposed:
                return
        if self._beats_done % 20 == 0:
            await self._recall_members()
        await self._beat()

    async def _beat(self) -> None:
        """Renew this node's lease (and the matchmaker's, or take it), learn which nodes live, adopt dead ones."""
        assert self.redis is not None
        if not self._writer.open:
            await self._writer.connect(self.url)
        if len(self.view.numbers) < NUMBERS // 2:  # generated room names: a block of numbers nobody else uses
            end = await self.redis.incrby(f"{PREFIX}lakes", NUMBERS)
            self.view.numbers.extend(range(end - NUMBERS, end))
        ttl = int(LEASE_SECONDS * 1000)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(f"{PREFIX}node:{self.node}", str(time.time()), px=ttl)
            pipe.sadd(f"{PREFIX}members", self.node)
            pipe.set(f"{PREFIX}matchmaker", self.node, px=ttl, nx=True)
            pipe.get(f"{PREFIX}matchmaker")
            pipe.smembers(f"{PREFIX}members")
            _, _, _, matchmaker, members = await pipe.execute()
        self._renewed = time.monotonic()
        matchmaker = matchmaker.decode() if matchmaker else None
        if matchmaker == self.node:
            await self.redis.pexpire(f"{PREFIX}matchmaker", ttl)
        names = sorted(member.decode() for member in members)
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.exists(f"{PREFIX}node:{name}")
            leases = await pipe.execute()
        live = {name for name, lease in zip(names, leases, strict=True) if lease} | {self.node}
        self._live_now(live)
        if self.matchmaker == self.node and matchmaker not in (None, self.node):
            self._hand_over(matchmaker)  # the lease went elsewhere (Redis restarted): the waiting seeks go with it
        if matchmaker is not None and matchmaker != self.matchmaker:
            self._new_matchmaker(matchmaker)
        self.matchmaker = matchmaker
        self._mark_up()
        for dead in sorted(set(names) - live):
            if dead not in self._adopting:
                self._adopting.add(dead)
                asyncio.create_task(self._adopt(dead))

    def _live_now(self, live: set[str]) -> None:
        """The nodes whose leases are current are ``live``: a node that lapsed keeps its rooms listed (they answer
        cluster_unavailable until adopted) and its players' clocks held; its unanswered requests are answered."""
        for gone in self.live - live:
            log.warning("node %s stopped renewing its lease", gone)
            self._said_gone.add(gone)
            self._lapsed(gone, time.monotonic() - LEASE_SECONDS)  # about when it renewed it last
        for back in sorted(live - self.live):
            if back in self._said_gone:  # (its lease lapsed, or a Redis restart lost it): said once it is back
                self._said_gone.discard(back)
                log.warning("node %s renews its lease again", back)
            self._returned(back)
        for gone in sorted(set(self._gone_since) - live):
            self._hold_gone_clocks(gone)
        self.live = live
        for node in sorted(self._asked):
            self._answer_unreachable(node, time.time() - CLOCK_SKEW)

    async def _recall_members(self) -> None:
        """Put every node that has rooms or tournaments in the database among the members: one that died while
        Redis was away (which forgot the members) is adopted all the same."""
        assert self.redis is not None
        loop = asyncio.get_running_loop()
        nodes = await loop.run_in_executor(self.server.reads, self.server.storage.nodes)
        if nodes:
            await self.redis.sadd(f"{PREFIX}members", *nodes)

    async def _load_listings(self) -> None:
        assert self.redis is not None
        for key in await self.redis.keys(f"{PREFIX}listing:*"):
            payload = await self.redis.get(key)
            if payload:
                self._receive(payload)

    def _mark_up(self) -> None:
        """Redis answered: after it was away (or at the start), this node catches up with the others."""
        if not self.up:
            again = self._ever_up
            self.up = self._ever_up = True
            self._back(again)

    def _back(self, again: bool) -> None:
        """Redis answers (``again``: after it was lost): publish this node's listing and register, and re-attach
        the sessions of other nodes' rooms (their owners resend the full state: what was sent meanwhile was
        lost)."""
        if again:
            log.warning("the cluster's Redis is back")
            self._hold_remote_clocks()
            self._await_attachments()
            if self.redis is not None:  # its idle pooled connections died with it: a fresh pool
                self._tasks.append(asyncio.create_task(self.redis.connection_pool.disconnect(inuse_connections=False)))
        self._published = -1
        self._register_all()
        self._resync()

    def _listening(self) -> None:
        """Subscribed (again): catch up (once Redis answered after it was away, or now)."""
        if self.up:
            self._register_sessions()  # a takeover the register holds for this node, published before it listened
            self._resync()
        else:
            self._mark_up()

    def _resync(self) -> None:
        """The other nodes resend what this node missed (their hello handler), and this node's clients are attached
        again on the nodes they have business with (which resend the full state). Done whenever this node
        subscribes or Redis answers again: whichever of two nodes catches up last, the attachments reach a node
        that listens."""
        self._send(ALL, ["hello", sorted(self.forwarded)])
        for conn, nodes in sorted(self.forwarded.items()):
            session = self.hall.sessions.get(conn)
            if session is not None:
                for node in sorted(nodes):
                    self._attach(node, conn, session)

    def _on_hello(self, sender: str, item: list[Any], now: float) -> None:
        """``sender`` listens (again, after Redis was away): it hears this node's listing at the next publish, and
        this node's clients with business there are attached to it again (it resends them the full state)."""
        self._published = -1
        alive = set(item[1]) if len(item) > 1 else None  # its connections with business elsewhere
        for key in [key for key in self.stand_ins if key[0] == sender and alive is not None and key[1] not in alive]:
            stand_in = self.stand_ins.pop(key)  # its "gone" was lost (Redis away), or it started again
            del self.homes[stand_in]
            self.server.dispatch(self.hall.disconnect(stand_in, now))
        for conn, nodes in sorted(self.forwarded.items()):
            session = self.hall.sessions.get(conn)
            if sender in nodes and session is not None:
                self._attach(sender, conn, session)
                for node, request in list(self._watches.get(conn, {}).values()):
                    if node == sender:
                        self._send(sender, ["req", conn, session.name, session.coords,
                                            self.hall.addresses.get(conn, "?"), session.organiser, request])

    def _on_listing(self, sender: str, item: list[Any], now: float) -> None:
        """``sender``'s whole listing (``listing``), or the rooms of it that changed (``rooms``)."""
        if item[0] == "listing":
            changed = self.view.learn(sender, item[1], item[2])
        else:
            changed = self.view.update(sender, item[1], item[2])
        self.view.house_free[sender] = item[3]
        if not changed:  # the lobby's watchers hear of changes only
            return
        self.live.add(sender)
        self.server.dispatch(self.hall.lobby_changed_elsewhere(now))

    def _hand_over(self, matchmaker: str) -> None:
        """This node paired the seeks and another does now, this node living on: every seek waiting here is
        withdrawn and made again there, by the node of its player."""
        for waiting in list(self.hall.seeks.seeks.values()):
            for seek in list(waiting):
                game = seek.settings.game.id
                self.hall.seeks.drop(seek.name, game, keep_ladder=True)
                session = self.hall.by_name.get(seek.name)
                if session is None:
                    continue
                if session.conn < 0:
                    home = self.homes.get(session.conn)
                    if home is not None:
                        self._send(home[0], ["reseek", home[1], game, matchmaker])
                else:
                    self._reseek(session.conn, game, matchmaker)

    def _reseek(self, conn: int, game: str, matchmaker: str) -> None:
        """Make the seek of connection ``conn`` for ``game`` again at ``matchmaker``."""
        entry = self._seeks.get(conn, {}).get(game)
        session = self.hall.sessions.get(conn)
        if entry is None or session is None:
            return
        self._seeks[conn][game] = (matchmaker, entry[1])
        if matchmaker == self.node:
            self._local(conn, entry[1])
        else:
            self.forwarded.setdefault(conn, set()).add(matchmaker)
            self._send(matchmaker, ["req", conn, session.name, session.coords, self.hall.addresses.get(conn, "?"),
                                    session.organiser, entry[1]])

    def _on_reseek(self, sender: str, item: list[Any], now: float) -> None:
        self._reseek(item[1], item[2], item[3])

    def _new_matchmaker(self, matchmaker: str) -> None:
        """Another node pairs the seeks now: the seeks this node's clients made at one that died are made again."""
        for conn, seeks in sorted(self._seeks.items()):
            for game, (node, request) in sorted(seeks.items()):
                if node not in self.live and conn in self.hall.sessions:  # never twice at two live matchmakers
                    seeks[game] = (matchmaker, request)
                    session = self.hall.sessions[conn]
                    if matchmaker == self.node:
                        self._local(conn, request)
                    else:
                        self.forwarded.setdefault(conn, set()).add(matchmaker)
                        self._send(matchmaker, ["req", conn, session.name, session.coords,
                                                self.hall.addresses.get(conn, "?"), session.organiser, request])
