"""The hall's rated-game desk: which game that ended is a rated result, and where the ratings it made go.

A game is rated when its room rates its games, it ended by play or on time after both players really played
(``protocol.ratings``), both players may be rated (claimed names, or ladder anchors) and they are different
people (:class:`~server.core.rated.RatedPlay`). The hall asks the desk when a room's games end, before the results
are stored (:meth:`RatedGames.judge`), and again once storage has stored them with the ratings it made
(:meth:`RatedGames.learned`): they go into the ladder's pairing, into the record of who moved whose rating, and
into the games' ``game_over`` messages. The desk never calls back into the hall.
"""

from __future__ import annotations

from collections.abc import Container

from protocol.messages import GameStatus
from protocol.ratings import HOUSE_PREFIX, anchor_level, rateable_name, too_short

from ..storage.records import GameRecord, GameStarted
from . import words
from .ladder import Ladder
from .outbox import HallOutbox
from .rated import RatedPlay
from .room_state import Outbox

UNRATED_ROOM = "an unrated room"
"""Why a game of a room that does not rate its games is not rated."""


def house_stopped(name: str) -> str:
    """The reason of a game a house bot lost because its process ended (it is never rated)."""
    return f"{name} stopped"


class RatedGames:
    """The rules that rate a game, over the people's rated play (``rated``) and the ladder's ratings (``ladder``)."""

    def __init__(self, rated: RatedPlay, ladder: Ladder) -> None:
        self.rated = rated
        self.ladder = ladder
        ladder.unrated = self.pair_unrated

    def judge(self, rated_room: bool, result: Outbox, claims: Container[str], now: float) -> None:
        """Mark each game that ended in a room's outbox ``result`` (``rated_room``: a room that rates its games)
        rated or not, with why not (``claims``: the claimed names); note where the players of the games it started
        play from."""
        for record in result.ended:  # the GameEnded writes hold these very records: rated before they are stored
            record.unrated = self.unrated(rated_room, record, claims, now)
            record.rated = record.unrated is None
        if rated_room:
            for write in result.writes:
                if isinstance(write, GameStarted) and write.record.tournament is None:
                    self.rated.started(write.record.id, write.record.players)

    def unrated(self, rated_room: bool, record: GameRecord, claims: Container[str], now: float) -> str | None:
        """Why ``record``, a game that just ended in a room (``rated_room``: one that rates its games), is not a rated
        result, or None when it is (and then counted as one: its weight set, the players' rated play told)."""
        names = record.players
        if not rated_room:
            return UNRATED_ROOM
        where = self.rated.where(record.id, names)
        if record.tournament is not None:
            return "a tournament game (tournaments rate their own entrants)"
        if record.status != GameStatus.FINISHED or record.reason in (house_stopped(name) for name in names):
            return f"{record.status}: {record.reason}"  # a house bot's process ended mid-game: nobody's result
        if names[0] == names[1]:
            return "one name on both seats"
        for name in names:
            if not rateable_name(name, record.game, name in claims):
                return f"{name} is not a claimed name" if not name.startswith(HOUSE_PREFIX) else \
                    f"{name} is a house bot but not a ladder anchor"
        short = too_short(record.game, len(record.moves))
        if short is not None:
            return short
        anchors = [anchor_level(name, record.game) is not None for name in names]
        for seat, name in enumerate(names):
            if anchors[seat] and record.winner == 1 - seat and record.reason == words.ran_out_of_time(names, seat):
                return (f"{name} ran out of time: an anchor's rating is at stake only under a clock it has the time "
                        "to play its level in")
        known = [self.ladder.rating(record.game, name) for name in names]  # the stored ratings, as the ladder's
        reason = self.rated.reason(names, anchors, now, known, where)
        if reason is None:
            record.rating_weight = self.rated.weight(names, anchors, now, known, where)
            self.rated.rated(names, anchors, now, record.id, known, record.rating_weight, where)
        return reason

    def pair_unrated(self, game: str, names: tuple[str, str], now: float) -> str | None:
        """Why a game of ``game`` between two ladder ``names`` would not be rated if it ended now, or None: the
        ladder never pairs names whose game could not be rated (one person's names, an address's day used up)."""
        anchors = [anchor_level(name, game) is not None for name in names]
        return self.rated.reason(names, anchors, now, [self.ladder.rating(game, name) for name in names])

    def learned(self, out: HallOutbox, now: float) -> set[str]:
        """``out``'s results are stored, with the ratings storage made of the rated ones: they go into the ladder's
        pairing, the players' rated play and the results' ``game_over`` messages. Returns the house bots whose
        process ended mid-game (such a game is no game played: an anchor's restarts stay capped)."""
        crashed = set()
        for record in out.ended:
            crashed.update(name for name in record.players if record.reason == house_stopped(name))
            if record.ratings is not None:
                self.ladder.learn(record.game, record.players, record.ratings)
            if record.rated:
                self.rated.moved(record.id, None if record.ratings is None else [r["change"] for r in record.ratings])
            tell_rating(out, record)
        return crashed


def tell_rating(out: HallOutbox, record: GameRecord) -> None:
    """Put in ``record``'s ``game_over`` messages the ratings it made, or why a rated room's game was not rated."""
    for _, msg in out.messages:
        if msg["type"] == "game_over" and msg["record"] == record.id:
            if record.ratings is not None:
                msg["ratings"] = record.ratings
            elif record.unrated not in (None, UNRATED_ROOM):
                msg["unrated"] = record.unrated
