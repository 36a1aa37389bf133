"""The hall's ladder desk: ladder seeks, the end of a ladder game, and its players back on the ladder.

The rules of the ladder (who meets whom, and when) are :class:`~server.core.ladder.Ladder`'s, kept beside the plain
seeks by the seek desk. This desk decides what the hall does with them: whether a ``seek`` with ``ladder: true`` is
taken (a refusal is answered in the outbox it is given), who leaves a ladder room when its game ends (anchors
first), and, once the result is stored, whose rung waits again, whose goes (a player not back in time), and
whether to pair now. The hall opens the rooms of the pairs and routes their outboxes; the desk never calls back
into it.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from protocol import messages as m
from protocol.messages import ErrorCode

from ..storage.records import GameRecord
from .house import HouseDesk
from .ladder_pass import Rung
from .outbox import HallOutbox
from .refusals import Refusal
from .room import Room
from .seeks import SeekDesk


class LadderDesk:
    """Between the hall and the ladder of each game: the seek desk's ladder (``seeks.ladder``) and the house desk's
    anchors (``house``)."""

    def __init__(self, seeks: SeekDesk, house: HouseDesk) -> None:
        self.seeks = seeks
        self.ladder = seeks.ladder
        self.house = house

    def seek(self, out: HallOutbox, conn: int, name: str, msg: Mapping[str, Any], claimed: bool, address: str,
             limit: int, now: float) -> Rung | None:
        """``name`` (``claimed``: logged in with a secret) seeks a place on the ladder of ``msg["game"]`` from
        ``address`` on connection ``conn``: its rung, or None when it is refused (why, in ``out``; ``limit``: the
        names one address may have on the ladder)."""
        problem = self.ladder.refusal(name, msg, claimed)
        if problem is not None:
            out.error(conn, ErrorCode.BAD_OPTION, problem)
            return None
        problem = self.ladder.address_refusal(name, address, limit)
        if problem is not None:
            out.refuse(conn, Refusal.LADDER_PER_ADDRESS, ErrorCode.BUSY, problem)
            return None
        return self.seeks.ladder_seek(name, msg["game"], now, address)

    def tell_waiting(self, out: HallOutbox, conn: int, rung: Rung) -> None:
        """Tell connection ``conn`` that ``rung`` waits on the ladder (the ``seeking`` message, with its rating)."""
        out.send(conn, m.seeking(self.ladder.seek_json(rung.game), ladder=self.ladder.describe(rung)))

    def leaving(self, room: Room, records: list[GameRecord]) -> list[str]:
        """``room``, a ladder room, ended the games of ``records``: its players wait on the ladder again once the
        results are stored (:meth:`stored`). Returns who leaves the room now (the room goes), in order: an anchor
        first, since a house bot left alone in a room between games would be stopped."""
        for record in records:
            self.ladder.ended(record.id, record.game, record.players)
        seated = [name for name in room.seats if name is not None]
        return sorted(seated, key=lambda name: name not in self.house.anchors)

    def stored(self, ended: list[GameRecord], crashed: Container[str], now: float,
               connected: Container[str]) -> tuple[list[Rung], bool]:
        """The results of ``ended`` are stored (``crashed``: house bots whose process ended mid-game): the rungs of
        their players that wait again from ``now`` (one whose player is not ``connected`` goes), and whether the
        ladder may pair now (a ladder bot that played another game, one resumed after a restart, is free too)."""
        back = [rung for record in ended for rung in self.ladder.stored(record.id, now)]
        for rung in back:
            if rung.name in self.house.anchors and rung.name not in crashed:
                self.house.anchor_played(rung.name)
            if rung.name not in connected:  # it did not come back before its game ended: off the ladder
                self.ladder.leave(rung.name, rung.game)
        rungs = self.ladder.rungs
        return back, bool(back) or any((record.game, name) in rungs for record in ended for name in record.players)
