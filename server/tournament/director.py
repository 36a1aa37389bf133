"""The tournament director: a plain object that, fed results and the time, says which games to open.

A :class:`Director` holds one event: its settings, its status (:class:`TournamentStatus`:
``created``, ``running``, ``paused``, ``finished``, ``cancelled``), the games that ended, by
schedule number (:class:`EndedGame`), and which games are open (in which room). The hall asks it
for the games due (:meth:`Director.due`), opens a room for each, seats the entrants and reports
back (:meth:`opened`, :meth:`ended`). Everything it knows is in :meth:`snapshot` plus the stored
games of the event, so a restarted server rebuilds it exactly (:meth:`restore`): no finished game
is lost or played twice.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from protocol.messages import GameStatus
from protocol.statistics import SPRT_MODELS, MatchStats, SprtModel, SprtResult, pentanomial, sprt, sprt_pairs

from .openings import OpeningsError, parse_openings
from .results import ScoredGame
from .schedule import FORMATS, Schedule, ScheduledGame, ScheduleError, TournamentSpec, make_schedule
from .standings import Standings, compute_standings
from .tally import pair_stats
from .tiebreaks import default_tiebreak


class TournamentStatus(StrEnum):
    """Where an event is: defined, playing, paused, over, or called off (on the wire and in storage as they are)."""

    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class ScheduledGameStatus(StrEnum):
    """Where a scheduled game is: not opened yet, in a room, or ended (played to the end, or forfeited)."""

    PENDING = "pending"
    PLAYING = "playing"
    FINISHED = "finished"
    FORFEIT = "forfeit"


STATUSES = tuple(status.value for status in TournamentStatus)
"""Every status of an event, as text."""
OVER = (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)
"""The statuses of an event that has ended: no game of it is opened again."""
ENDED = (GameStatus.FINISHED, GameStatus.FORFEIT)
"""The statuses of a stored game that has a result (an aborted game has none: it is played again)."""
MAX_NAME = 28  # room names are "<tournament> <round>.<board>", at most 40 characters
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.\-]{0,27}$")
NAME_HELP = "1 to 28 letters, digits, spaces and _ . - (starting with a letter or digit)"
MAX_CONCURRENCY = 1000
CONTROLS: dict[str, tuple[tuple[TournamentStatus, ...], TournamentStatus]] = {
    "start": ((TournamentStatus.CREATED,), TournamentStatus.RUNNING),
    "pause": ((TournamentStatus.RUNNING,), TournamentStatus.PAUSED),
    "resume": ((TournamentStatus.PAUSED,), TournamentStatus.RUNNING),
    "cancel": ((TournamentStatus.CREATED, TournamentStatus.RUNNING, TournamentStatus.PAUSED),
               TournamentStatus.CANCELLED),
}
"""What the organiser may do to an event: action -> (the statuses it is possible in, the status after it)."""


class TournamentError(ValueError):
    """A tournament definition or request is not acceptable; the message says what is."""


def slug(name: str) -> str:
    """The id of a tournament called ``name``: lower case, words joined by dashes."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "tournament"


@dataclass(frozen=True)
class Sprt:
    """The sequential test a gauntlet may stop on (the first entrant's results against the field).

    ``model`` (:class:`~protocol.statistics.SprtModel`): ``normalized`` (default) or ``logistic`` Elo, tested on
    the colour-swapped game pairs (fishtest's pentanomial GSPRT), or ``bayeselo``, cutechess-cli's legacy test
    on single games.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = SprtModel.NORMALIZED.value

    @classmethod
    def parse(cls, obj: Any) -> Sprt:
        """From ``{"elo0": 0, "elo1": 20, "alpha": 0.05, "beta": 0.05, "model": "normalized"}`` (but elo0, elo1)."""
        accepted = ('sprt is {"elo0": E, "elo1": E, "alpha": P, "beta": P, "model": M} with elo0 < elo1, '
                    f"0 < alpha, beta < 0.5 and M one of {', '.join(SPRT_MODELS)} (default normalized)")
        if not isinstance(obj, dict) or not {"elo0", "elo1"} <= set(obj) or set(obj) - {"elo0", "elo1", "alpha",
                                                                                           "beta", "model"}:
            raise TournamentError(accepted)
        model = obj.get("model", SprtModel.NORMALIZED.value)
        numbers = [obj[k] for k in obj if k != "model"]
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in numbers) or model not in SPRT_MODELS:
            raise TournamentError(accepted)
        test = cls(float(obj["elo0"]), float(obj["elo1"]), float(obj.get("alpha", 0.05)), float(obj.get("beta", 0.05)),
                   str(model))
        if not test.elo0 < test.elo1 or not 0 < test.alpha < 0.5 or not 0 < test.beta < 0.5:
            raise TournamentError(accepted)
        return test

    def to_json(self) -> dict[str, Any]:
        """The form :meth:`parse` reads."""
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta, "model": self.model}


@dataclass
class TournamentSettings:
    """What an organiser defined: the event, its games' settings and its entrants."""

    id: str
    name: str
    game: str
    spec: TournamentSpec
    room: dict[str, Any]  # create_room settings of every game: options, time_control, illegal_move, grace
    concurrency: int = 4
    openings: list[list[str]] = field(default_factory=list)  # each opening: moves in notation
    local: dict[str, str] = field(default_factory=dict)  # house bot entrant -> its level
    sprt: Sprt | None = None
    created_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (stored, and shown in the API)."""
        return {"id": self.id, "name": self.name, "game": self.game, "spec": self.spec.to_json(), "room": self.room,
                "concurrency": self.concurrency, "openings": self.openings, "local": self.local,
                "sprt": self.sprt.to_json() if self.sprt else None, "created_at": self.created_at}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TournamentSettings:
        """Inverse of :meth:`to_json`."""
        return cls(obj["id"], obj["name"], obj["game"], TournamentSpec.from_json(obj["spec"]), obj["room"],
                   obj["concurrency"], obj["openings"], obj["local"],
                   Sprt.parse(obj["sprt"]) if obj.get("sprt") else None, obj["created_at"])


def parse_opening_list(game: str, obj: Any) -> list[list[str]]:
    """Openings as a request gives them: ``{"text": FILE CONTENTS, "plies": K}``; TournamentError if bad."""
    if obj is None:
        return []
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str) or set(obj) - {"text", "plies", "source"}:
        raise TournamentError('openings is {"text": "the openings file", "plies": K (optional)}')
    plies = obj.get("plies")
    if plies is not None and (isinstance(plies, bool) or not isinstance(plies, int) or plies < 1):
        raise TournamentError("openings.plies must be a whole number of plies, at least 1")
    try:
        openings = parse_openings(obj["text"], game, plies=plies, source=str(obj.get("source", "the openings")))
    except OpeningsError as exc:
        raise TournamentError(str(exc)) from None
    if not openings:
        raise TournamentError("the openings file holds no opening")
    return [list(o.moves) for o in openings]


@dataclass
class EndedGame:
    """A game of the event that has a result: what the mathematics reads, and where it is recorded."""

    result: ScoredGame
    record: str  # the stored game's id
    status: GameStatus  # finished or forfeit
    reason: str = ""  # how it ended, as its record says (for a forfeit: who did not play, and why)


class Director:
    """One tournament: settings, status, results and open games."""

    def __init__(self, settings: TournamentSettings, status: str = TournamentStatus.CREATED) -> None:
        self.settings = settings
        self.status = TournamentStatus(status)
        self.ended_games: dict[int, EndedGame] = {}  # schedule number -> its result
        self.open: dict[int, str] = {}  # schedule number -> room of a game being played (or waiting for players)
        self.started: dict[int, float] = {}  # schedule number -> when its room opened (monotonic), for the ETA
        self.stopped_early = ""  # why the event ended before its last game (an SPRT decision)
        self._schedule: Schedule | None = None

    # Queries ----------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """The tournament's id."""
        return self.settings.id

    @property
    def entrants(self) -> tuple[str, ...]:
        """Every entrant, in seed order."""
        return self.settings.spec.entrants

    @property
    def schedule(self) -> Schedule:
        """The games known so far (a Swiss round is paired once the one before has its results)."""
        if self._schedule is None:
            self._schedule = make_schedule(self.settings.spec, self.results())
        return self._schedule

    def results(self) -> list[ScoredGame]:
        """Every result so far, in schedule order."""
        return [self.ended_games[n].result for n in sorted(self.ended_games)]

    def game(self, number: int) -> ScheduledGame:
        """Scheduled game ``number``."""
        return self.schedule.games[number - 1]

    def has_games_for(self, name: str) -> bool:
        """True while ``name`` has games of this event still to play."""
        if self.status in OVER or name not in self.entrants:
            return False
        if not self.schedule.complete:
            return True
        return any(name in (g.white, g.black) for g in self.schedule.games if g.number not in self.ended_games)

    def due(self) -> list[ScheduledGame]:
        """The games to open now: in order, while fewer than ``concurrency`` are open, an entrant in one at a time."""
        if self.status != TournamentStatus.RUNNING:
            return []
        busy = {name for number in self.open for name in (self.game(number).white, self.game(number).black)}
        due = []
        for game in self.schedule.games:
            if len(self.open) + len(due) >= self.settings.concurrency:
                break
            if game.number in self.ended_games or game.number in self.open or {game.white, game.black} & busy:
                continue
            due.append(game)
            busy |= {game.white, game.black}
        return due

    def opening(self, game: ScheduledGame) -> list[str]:
        """The opening moves game ``game`` starts from (none without openings)."""
        return [] if game.opening is None else self.settings.openings[game.opening]

    # Events ------------------------------------------------------------------------------

    def control(self, action: str) -> None:
        """``start``, ``pause``, ``resume`` or ``cancel``; TournamentError when not possible now."""
        if action not in CONTROLS:
            raise TournamentError(f"unknown action {action!r}; actions: {', '.join(CONTROLS)}")
        allowed, after = CONTROLS[action]
        if self.status not in allowed:
            raise TournamentError(f"{self.settings.name} is {self.status}: it cannot {action}")
        self.status = after

    def opened(self, number: int, room: str, now: float) -> None:
        """Game ``number`` has a room now."""
        self.open[number] = room
        self.started[number] = now

    def rooms_lost(self, still_open: Container[str]) -> None:
        """After a restart: games whose room is not ``still_open`` any more are played again."""
        for number, room in list(self.open.items()):
            if room not in still_open:
                del self.open[number]
                self.started.pop(number, None)

    def room_closed(self, room: str) -> int | None:
        """The hall closed ``room``: if it held a game of this event that has no result (nobody came back to a
        game lost in a restart), that game is played again in a new room; its number, or None."""
        for number, name in list(self.open.items()):
            if name == room and number not in self.ended_games:
                del self.open[number]
                self.started.pop(number, None)
                return number
        return None

    def close_rooms(self) -> list[str]:
        """The event is called off: the rooms of its open games (for the hall to dissolve), which it forgets."""
        rooms = sorted(self.open.values())
        self.open.clear()
        return rooms

    def ended(self, number: int, winner: int | None, status: str, record: str, duration: float | None,
              reason: str = "") -> bool:
        """Game ``number`` ended (``reason``: how, as its record says); True when that ends the event. An aborted
        game has no result: it is played again."""
        self.open.pop(number, None)
        self.started.pop(number, None)
        if status not in ENDED or number in self.ended_games:
            return False
        status = GameStatus(status)
        forfeit = status == GameStatus.FORFEIT
        game = self.game(number)
        if winner is None:
            result = "0-0" if forfeit else "1/2-1/2"
        else:
            result = "1-0" if winner == 0 else "0-1"
        self.ended_games[number] = EndedGame(ScoredGame(game.white, game.black, result, game.round, forfeit,
                                                        duration), record, status, reason)
        if self._schedule is not None and not self._schedule.complete and all(  # a Swiss round done: its rounds
                g.number in self.ended_games for g in self._schedule.games if g.round == game.round):  # kept, the next
            self._schedule = make_schedule(self.settings.spec, self.results(), self._schedule.pairings)  # paired
        return self._check_end()

    def _check_end(self) -> bool:
        if self.status in OVER:
            return False
        test = self.sprt()
        if test is not None and test["status"] != "continue":
            self.stopped_early = f"SPRT accepted {test['status']} after {test['games']} games"
            self.status = TournamentStatus.FINISHED
            return True
        schedule = self.schedule
        if schedule.complete and len(self.ended_games) == len(schedule.games):  # each ended game is one of them
            self.status = TournamentStatus.FINISHED
            return True
        return False

    def _sprt_state(self) -> tuple[SprtResult, int, int, int] | None:
        test = self.settings.sprt
        if test is None:
            return None
        first = self.entrants[0]
        wins = draws = losses = 0
        pairs: dict[tuple[int, int, int], list[float]] = {}  # a colour-swapped pair of games -> first's points
        for number, ended in self.ended_games.items():
            result = ended.result
            if result.is_played and first in result.players:
                points = result.score(first)
                wins += points == 1.0
                draws += points == 0.5
                losses += points == 0.0
                game = self.game(number)
                pairs.setdefault((game.round, game.board, (game.game - 1) // 2), []).append(points)
        if test.model == SprtModel.BAYESELO:
            state = sprt(wins, draws, losses, elo0=test.elo0, elo1=test.elo1, alpha=test.alpha, beta=test.beta)
        else:  # only whole pairs count: a pair whose other game is unplayed, forfeited or a single odd game does not
            counts = pentanomial(sum(pair) for pair in pairs.values() if len(pair) == 2)
            state = sprt_pairs(counts, elo0=test.elo0, elo1=test.elo1, alpha=test.alpha, beta=test.beta,
                               model=test.model)
        return state, wins, draws, losses

    def sprt(self) -> dict[str, Any] | None:
        """The SPRT of the first entrant against the field, when the event has one."""
        found = self._sprt_state()
        if found is None:
            return None
        state, wins, draws, losses = found
        assert self.settings.sprt is not None
        return {**self.settings.sprt.to_json(), "llr": state.llr, "lower_bound": state.lower_bound,
                "upper_bound": state.upper_bound, "status": str(state.status.value),
                "games": wins + draws + losses, "wins": wins, "draws": draws, "losses": losses,
                "pentanomial": list(state.pentanomial) if state.pentanomial is not None else None,
                "waiting": state.waiting or None, "line": state.describe()}

    # Storage ------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """What storage keeps besides the event's games: settings, status, open rooms."""
        return {"id": self.id, "name": self.settings.name, "status": self.status.value,
                "settings": self.settings.to_json(), "open": {str(n): room for n, room in self.open.items()},
                "stopped_early": self.stopped_early, "created_at": self.settings.created_at}

    @classmethod
    def restore(cls, snapshot: dict[str, Any], games: list[dict[str, Any]]) -> Director:
        """Rebuild from :meth:`snapshot` and the event's stored game summaries (``tournament_game`` numbers)."""
        director = cls(TournamentSettings.from_json(snapshot["settings"]), snapshot["status"])
        director.stopped_early = snapshot.get("stopped_early", "")
        for summary in sorted(games, key=lambda g: (g.get("tournament_game") or 0, g["started_at"])):
            number = summary.get("tournament_game")
            if number is None or summary["status"] not in ENDED:
                continue
            duration = None if summary["ended_at"] is None else summary["ended_at"] - summary["started_at"]
            director.ended(number, summary["winner"], summary["status"], summary["id"], duration,
                           summary.get("reason") or "")
        director.status = TournamentStatus(snapshot["status"])  # ended() may have concluded what the snapshot says
        director.open = {int(n): room for n, room in snapshot.get("open", {}).items() if int(n) not in
                         director.ended_games}
        return director

    # Views --------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """The short form: for listings."""
        total = self.schedule.total_games if not self.stopped_early else len(self.ended_games)
        done = len(self.ended_games)
        forfeits = sum(not e.result.is_bye and not e.result.is_played for e in self.ended_games.values())
        return {"id": self.id, "name": self.settings.name, "game": self.settings.game,
                "format": self.settings.spec.format, "status": self.status.value, "entrants": list(self.entrants),
                "progress": {"done": done, "total": total, "fraction": done / total if total else 1.0,
                             "forfeits": forfeits}}

    def standings(self, now: float) -> Standings:
        """The standings now: points, W-D-L, Elo, tie-break, crosstable and progress."""
        total = len(self.ended_games) if self.stopped_early else self.schedule.total_games
        return compute_standings(
            self.results() + self.schedule.bye_results(), self.entrants,
            tiebreak=default_tiebreak(self.settings.spec.format), total_games=total,
            concurrency=self.settings.concurrency, running_elapsed=[now - t for t in self.started.values()],
            estimate=self.status == TournamentStatus.RUNNING,  # a paused or cancelled event has no end in sight
            by_share=self.settings.spec.format == "gauntlet")

    def pairings(self) -> list[tuple[str, str, MatchStats]]:
        """Every pair of entrants that has played, with cutechess-cli's figures for the first of the two."""
        return pair_stats(self.results(), self.entrants)

    def forfeits(self) -> list[str]:
        """One line a forfeited game, in order: ``game 3 (round 2) bob 1-0 ann: seat 1 (ann) did not come``."""
        lines = []
        for number in sorted(self.ended_games):
            ended = self.ended_games[number]
            if ended.status == GameStatus.FORFEIT:
                result = ended.result
                lines.append(f"game {number} (round {result.round}) {result.white} {result.result} {result.black}: "
                             f"{ended.reason or 'forfeit'}")
        return lines

    def first_place(self, standings: Standings) -> str:
        """Who came first, as a sentence (a gauntlet: its challenger's score against the field)."""
        gauntlet = self.settings.spec.format == "gauntlet" and self.entrants
        return standings.challenger(self.entrants[0]) if gauntlet else standings.first_place()

    def to_text(self, now: float) -> str:
        """The report ``plyhall tournament results`` prints: standings, crosstable, pairings, forfeits, SPRT."""
        standings = self.standings(now)
        head = f"{self.settings.name}: {self.settings.game} {self.settings.spec.format}, {self.status}"
        head += f" ({self.stopped_early})" if self.stopped_early else ""
        head += f": {self.first_place(standings)}" if self.status == TournamentStatus.FINISHED else ""
        parts = [head, standings.to_text(),
                 standings.crosstable_text()]
        parts += [stats.describe(first, second) for first, second, stats in self.pairings()]
        forfeits = self.forfeits()
        if forfeits:
            parts.append("Forfeits:\n" + "\n".join(f"  {line}" for line in forfeits))
        found = self._sprt_state()
        if found is not None:
            parts.append(found[0].describe())
        return "\n\n".join(parts) + "\n"

    def to_json(self, now: float, rooms: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
        """Everything about the event: standings, crosstable, schedule, pairings, SPRT, progress."""
        standings = self.standings(now)
        body = standings.to_json()
        schedule = []
        for game in self.schedule.games:
            ended = self.ended_games.get(game.number)
            if ended is not None:
                status = ScheduledGameStatus(ended.status)
            else:
                status = ScheduledGameStatus.PLAYING if game.number in self.open else ScheduledGameStatus.PENDING
            schedule.append({"number": game.number, "round": game.round, "board": game.board, "white": game.white,
                             "black": game.black, "opening": game.opening, "status": status.value,
                             "room": self.open.get(game.number), "record": ended.record if ended else None,
                             "result": ended.result.result if ended else None,
                             "reason": ended.reason if ended else None})
        pairings = [{"first": first, "second": second, **stats.to_json(), "text": stats.describe(first, second)}
                    for first, second, stats in self.pairings()]
        return {**self.summary(), "progress": body["progress"], "settings": self.settings.to_json(),
                "standings": body, "schedule": schedule, "pairings": pairings, "sprt": self.sprt(),
                "stopped_early": self.stopped_early or None,
                "first_place": self.first_place(standings) if self.status == TournamentStatus.FINISHED else None,
                "running": [rooms[n] for n in sorted(rooms or {})]}


def define(obj: dict[str, Any], entrants: list[str], local: dict[str, str], now: float) -> TournamentSettings:
    """Settings from a ``tournament_create`` request (already schema-checked); TournamentError naming the problem."""
    from protocol.games import GAMES

    name = " ".join(str(obj.get("name") or "").split()) or f"{obj['game']} {obj['format']}"
    if not NAME.fullmatch(name):
        raise TournamentError(f"{name[:40]!r} is not a valid tournament name: use {NAME_HELP}")
    if obj["game"] not in GAMES:
        raise TournamentError(f"unknown game {obj['game'][:40]!r}; games: {', '.join(GAMES)}")
    if obj["format"] not in FORMATS:
        raise TournamentError(f"unknown format {obj['format'][:40]!r}; formats: {', '.join(FORMATS)}")
    concurrency = obj.get("concurrency", 4)
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise TournamentError(f"concurrency must be 1 to {MAX_CONCURRENCY} games at once")
    openings = parse_opening_list(obj["game"], obj.get("openings"))
    try:
        spec = TournamentSpec(obj["format"], tuple(entrants), obj.get("games_per_pairing", 2), obj.get("cycles", 1),
                              obj.get("rounds"), len(openings))
        spec.check_size()
    except ScheduleError as exc:
        raise TournamentError(str(exc)) from None
    test = None
    if obj.get("sprt") is not None:
        if spec.format != "gauntlet":
            raise TournamentError("an SPRT stops a gauntlet: use --format gauntlet (the first entrant is tested "
                                  "against the others)")
        test = Sprt.parse(obj["sprt"])
        if test.model != SprtModel.BAYESELO and (per := spec.games_per_pairing) % 2:
            raise TournamentError(f"an SPRT with the {test.model} model counts colour-swapped pairs of games, and "
                                  f"{per} game{'' if per == 1 else 's'} a pairing leave a game without its pair: use "
                                  "an even --games-per-pairing (2, the default, or 4, ...), or model=bayeselo")
        tested = local.get(entrants[0], "") if entrants else ""
        fixed = sorted({level for e in entrants[1:] if (level := local.get(e, "")).startswith("minimax-")})
        if not openings and tested.startswith("minimax-") and fixed:
            raise TournamentError(f"an SPRT of {tested} against {', '.join(fixed)} needs --openings: fixed-depth "
                                  "levels without an opening book replay the same few games, and the test would "
                                  "measure those games, not the bots")
    room = {"options": obj.get("options", {}), "time_control": obj.get("time_control"),
            "illegal_move": obj.get("illegal_move", "lose"), "grace": obj.get("grace", 60.0)}
    return TournamentSettings(slug(name), name, obj["game"], spec, room, concurrency, openings, local, test, now)
