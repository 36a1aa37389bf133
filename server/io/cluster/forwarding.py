"""Forwarding: a request of a client here about another node's business goes there, under a stand-in
connection, with a deadline; what the owner sends back comes to the client; requests never answered are
answered ``cluster_unavailable`` (and cannot be executed after)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any

from protocol import messages as m
from protocol.messages import ErrorCode, validate_request

from ...tournament.director import slug
from .base import (
    ANSWERS_KEPT,
    EVENT_KINDS,
    PREFIX,
    RELEASE,
    REQUEST_SECONDS,
    ROOM_KINDS,
    SEEK_KINDS,
    UNKNOWN,
    LinkBase,
    log,
)


class Forwarding(LinkBase):
    """Requests of this node's clients sent where they belong, and other nodes' clients served here."""

    def take(self, conn: int, msg: dict[str, Any]) -> bool:
        """Take ``msg`` of connection ``conn`` when it is another node's business or needs a look-up in the
        cluster first (False: the hall here answers it now). A connection's messages keep their order: while
        one waits for its look-up, the ones after it wait too."""
        waiting = self._waiting.get(conn)
        if waiting is not None:
            waiting.append(msg)
            return True
        return self._process(conn, msg)

    def _process(self, conn: int, msg: dict[str, Any]) -> bool:
        step = self._step(conn, msg)
        if step is not None:
            self._waiting[conn] = []
            asyncio.create_task(self._run(conn, step, msg))
            return True
        return self.forward(conn, msg)

    def _step(self, conn: int, msg: dict[str, Any]) -> Coroutine[Any, Any, None] | None:
        """The look-up ``msg`` needs before it can be answered or forwarded, if any."""
        kind = msg["type"]
        if kind == "login":
            return self.login(conn, msg)
        if conn not in self.hall.sessions:
            return None
        if kind == "create_room" and msg.get("name") is not None:
            return self._reserve(conn, msg)
        if kind in ROOM_KINDS and self.hall.registry.find(msg["room"]) is None and self.view.owner(msg["room"]) is None:
            return self._find(conn, msg)
        return None

    async def _run(self, conn: int, step: Coroutine[Any, Any, None], msg: dict[str, Any]) -> None:
        try:
            await step
        except Exception:
            log.exception("a cluster look-up failed")
            self._reply_error(conn, msg, ErrorCode.BAD_MESSAGE, "the server could not handle this message")
        finally:
            waiting = self._waiting.pop(conn, [])
            while waiting and conn in self.server.connections:
                msg = waiting.pop(0)
                if not self._process(conn, msg):
                    self._local(conn, msg)
                if conn in self._waiting:  # that one waits for a look-up of its own: the rest wait behind it
                    self._waiting[conn].extend(waiting)
                    break

    def forward(self, conn: int, msg: dict[str, Any]) -> bool:
        """Send ``msg`` of connection ``conn`` to the node it is for; False when this node answers it itself."""
        session = self.hall.sessions.get(conn)
        if session is None:
            return False
        target = self._target(msg)
        if target is None or target == self.node:
            if msg["type"] in SEEK_KINDS:  # kept too: handed to the next matchmaker should this node lose the lease
                self._remember(conn, msg, self.node)
            return False
        if not self.up or target not in self.live:
            self._unreachable(conn, msg, "the cluster's matchmaker" if target == UNKNOWN else f"node {target}")
            return True
        self.forwarded.setdefault(conn, set()).add(target)
        self._remember(conn, msg, target)
        deadline = time.time() + REQUEST_SECONDS  # the owner drops it after this (it may have been answered here)
        if msg.get("id") is not None:  # answered with an error should its node die before it answers
            self._asked.setdefault(target, {})[(conn, msg["id"])] = [msg, deadline, False]
        address = self.hall.addresses.get(conn, "?")
        self._send(target, ["req", conn, session.name, session.coords, address, session.organiser, msg, deadline])
        return True

    def _target(self, msg: dict[str, Any]) -> str | None:
        """The node ``msg`` is for (None: this one; UNKNOWN: the matchmaker, unknown while Redis is away)."""
        kind = msg["type"]
        if kind in ROOM_KINDS:
            return None if self.hall.registry.find(msg["room"]) is not None else self.view.owner(msg["room"])
        if kind in SEEK_KINDS:
            return self.matchmaker or (None if self.up else UNKNOWN)
        if kind == "create_room" and msg.get("opponent") is not None:
            return self._house_elsewhere()
        if kind in EVENT_KINDS:
            key = msg["tournament"]
            if key not in self.hall.tournaments and slug(key) not in self.hall.tournaments:
                return self.view.events.get(key) or self.view.events.get(slug(key))
        return None

    def _remember(self, conn: int, msg: dict[str, Any], target: str) -> None:
        """Standing requests (waiting seeks, watched tournaments) are made again where their business goes if
        ``target`` dies."""
        kind, request = msg["type"], {k: v for k, v in msg.items() if k != "id"}
        if kind in SEEK_KINDS:
            seeks = self._seeks.setdefault(conn, {})
            if kind == "seek":
                seeks[msg["game"]] = (target, request)
            else:
                seeks.pop(msg["game"], None)
        elif kind == "watch_tournament":
            watches = self._watches.setdefault(conn, {})
            if msg.get("on", True):
                watches[msg["tournament"]] = (target, request)
            else:
                watches.pop(msg["tournament"], None)

    def _house_elsewhere(self) -> str | None:
        """The node with the most free house bots when this node's are all playing (the cluster's house bots
        serve any node's players, within their total), else None."""
        house = self.hall.house
        if len(house.running) < house.limit:
            return None
        free = [(count, node) for node, count in self.view.house_free.items() if count > 0 and node in self.live]
        return max(free)[1] if free else None

    def _answer_unreachable(self, node: str, expired: float | None = None) -> None:
        """Answer ``cluster_unavailable`` to the requests ``node`` has not answered: those it never took (never
        acknowledged) whose deadline is before ``expired``, lost on the way (Redis away) or waiting for a node that
        stalled; all when None (``node`` was adopted). The owner drops a request it gets after its deadline, so
        none of them can be executed after its client was told it failed (nodes' clocks agreeing within
        CLOCK_SKEW); one it took is answered by it."""
        asked = self._asked.get(node, {})
        for key, (request, deadline, taken) in sorted(asked.items(), key=lambda item: str(item[0])):
            if expired is None or (deadline < expired and not taken):
                del asked[key]
                self._unreachable(key[0], request, f"node {node}")
        if not asked:
            self._asked.pop(node, None)

    def _attach(self, node: str, conn: int, session: Any) -> None:
        """Attach connection ``conn`` (``session``) to ``node`` (again): it resends the state of its seats there, and
        the answers of the requests of it that ``node`` took and whose answers never came (lost while Redis was
        away)."""
        self.forwarded.setdefault(conn, set()).add(node)
        pending = [(key[1], taken) for key, (_, _, taken) in self._asked.get(node, {}).items() if key[0] == conn]
        waiting = [request_id for request_id, taken in pending if taken]
        moving = len(pending) > len(waiting)  # a request of it on its way there, not taken yet (maybe lost)
        self._send(node, ["attach", conn, session.name, session.coords, self.hall.addresses.get(conn, "?"),
                          session.organiser, waiting, moving])

    def disconnected(self, conn: int) -> None:
        """A connection of this node closed: the nodes that hold a session of it are told."""
        login = self.logins.pop(conn, None)
        if login is not None:  # a login that never ended: what its look-up learned goes
            self.view.holders.pop(login[2], None)
            self.view.seats.pop(login[2], None)
        self._waiting.pop(conn, None)
        for asked in self._asked.values():
            for key in [key for key in asked if key[0] == conn]:
                del asked[key]
        self._watches.pop(conn, None)
        self._seeks.pop(conn, None)
        for node in sorted(self.forwarded.pop(conn, ())):
            self._send(node, ["gone", conn])
        session = self.hall.sessions.get(conn)
        if session is not None and self.hall.by_name.get(session.name) is session:
            self._command("eval", RELEASE, 1, f"{PREFIX}sessions", session.name, self.node)

    def deliver(self, stand_in: int, msg: dict[str, Any]) -> None:
        """A message for a client of another node."""
        home = self.homes.get(stand_in)
        if home is None:
            return
        if msg.get("id") is not None:  # an answer: kept, should it be lost on the way (Redis away)
            answers = self._answers.setdefault(stand_in, {})
            answers[msg["id"]] = msg
            if len(answers) > ANSWERS_KEPT:
                del answers[next(iter(answers))]
            if len(self._answers) > 2 * len(self.homes) + 64:  # the stand-ins gone meanwhile
                self._answers = {key: kept for key, kept in self._answers.items() if key in self.homes}
        self._send(home[0], ["msg", home[1], msg])

    def close(self, stand_in: int, reason: str) -> None:
        """The hall closes a stand-in (its name logged in again): the real connection on its node closes."""
        home = self.homes.pop(stand_in, None)
        if home is not None:
            self.stand_ins.pop(home, None)
            self._send(home[0], ["close", home[1], reason])

    def _stand_in(self, node: str, conn: int, name: str, coords: str, address: str, organiser: bool, now: float,
                  resume: bool = False) -> int:
        """The stand-in connection of ``node``'s connection ``conn`` here, attached to the hall (a session of
        ``name``) when new, or when ``resume`` asks to resume its seats again."""
        key = (node, conn)
        stand_in = self.stand_ins.get(key)
        session = self.hall.sessions.get(stand_in) if stand_in is not None else None
        if stand_in is not None and session is not None and session.name != name:
            # that node started again and numbers its connections anew: the old stand-in is gone
            del self.stand_ins[key], self.homes[stand_in]
            self.server.dispatch(self.hall.disconnect(stand_in, now))
            stand_in = None
        if stand_in is None:
            self._next_stand_in -= 1
            stand_in = self._next_stand_in
            self.stand_ins[key] = stand_in
            self.homes[stand_in] = key
        session = self.hall.sessions.get(stand_in)
        if session is None or resume:  # attached again (after Redis was down, say): the seats' state is sent anew
            self.server.dispatch(self.hall.attach(stand_in, name, coords, address, organiser, now, resume))
            self.server.checks.learn_claim(name, address)
        return stand_in

    def _on_msg(self, sender: str, item: list[Any], now: float) -> None:
        """A message for a client of this node, from the node that owns its room."""
        conn, msg = item[1], item[2]
        if "id" in msg:
            self._asked.get(sender, {}).pop((conn, msg["id"]), None)
        room = msg.get("room")
        if isinstance(room, str):
            self.view.route(room, sender)
        if msg["type"] == "game_start" and not msg.get("paused"):  # a seek of this game was answered
            seek = self._seeks.get(conn, {}).get(msg.get("game", ""))
            if seek is not None and not seek[1].get("ladder"):
                del self._seeks[conn][msg["game"]]
        connection = self.server.connections.get(conn)
        if connection is not None and not connection.push(msg):
            self.server.close_connection(connection, 1008, "too slow: too many unsent messages")

    def _on_request(self, sender: str, item: list[Any], now: float) -> None:
        """A request of a client of ``sender`` about something of this node's; dropped (answered
        ``cluster_unavailable``) once past its deadline: ``sender`` may have told its client it failed."""
        _, conn, name, coords, address, organiser, msg = item[:7]
        if len(item) > 7 and item[7] is not None and time.time() > item[7]:
            self.counts["stale"] += 1
            if isinstance(msg, dict) and msg.get("id") is not None:
                error = m.error(ErrorCode.CLUSTER_UNAVAILABLE, f"node {self.node} got this request too late to "
                                "answer it (it was not executed); try again")
                error["id"] = msg["id"]
                if isinstance(msg.get("room"), str):
                    error["room"] = msg["room"]
                self._send(sender, ["msg", conn, error])
            return
        if isinstance(msg, dict) and msg.get("id") is not None:  # taken: its answer comes from here, in time or not
            self._send(sender, ["ack", conn, msg["id"]])
        self._reached(name, now)
        stand_in = self._stand_in(sender, conn, name, coords, address, organiser, now)
        request = validate_request(msg)
        if isinstance(request, Exception):
            self.deliver(stand_in, request.to_message())
            return
        self.server.dispatch(self.hall.handle(stand_in, request, now))

    def _on_attach(self, sender: str, item: list[Any], now: float) -> None:
        """``sender`` attaches a client of its (again): its seats' state is sent anew, after the answers to its
        requests that this node took and ``sender`` says never came (``item[6]``, their ids). Its clock, if held
        for it to be reached, runs again, unless a request of it is still on its way (``item[7]``: it may have been
        lost while this node was not listening yet; its client tries again once it is answered)."""
        _, conn, name, coords, address, organiser = item[:6]
        stand_in = self.stand_ins.get((sender, conn))
        session = self.hall.sessions.get(stand_in) if stand_in is not None else None
        answers = self._answers.get(stand_in, {}) if session is not None and session.name == name else {}
        for request_id in item[6] if len(item) > 6 and isinstance(item[6], list) else ():
            answer = answers.get(request_id) if isinstance(request_id, (str, int, float)) else None
            if answer is not None:
                self.counts["answers_again"] += 1
                self._send(sender, ["msg", conn, answer])
        if not (len(item) > 7 and item[7]):
            self._reached(name, now)
        self._stand_in(sender, conn, name, coords, address, organiser, now, resume=True)

    def _on_gone(self, sender: str, item: list[Any], now: float) -> None:
        stand_in = self.stand_ins.pop((sender, item[1]), None)
        if stand_in is not None:
            del self.homes[stand_in]
            self.server.dispatch(self.hall.disconnect(stand_in, now))

    def _on_close(self, sender: str, item: list[Any], now: float) -> None:
        connection = self.server.connections.get(item[1])
        if connection is not None:
            self.server.close_connection(connection, 1000, item[2])

    def _on_ack(self, sender: str, item: list[Any], now: float) -> None:
        """``sender`` took a request of a client of this node: it answers it, however late."""
        asked = self._asked.get(sender, {}).get((item[1], item[2]))
        if asked is not None:
            asked[2] = True
