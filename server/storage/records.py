"""What the server stores, and the durable writes that carry it to storage.

The room and hall state machines never write anything themselves: their outboxes list
*writes* (:class:`RoomSaved`, :class:`MovePlayed`, ...), and the I/O layer commits them
(in group commits) before it sends any message produced with them. So whatever a client
was told is already on disk when it hears it, and a restart restores exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import FunctionType
from typing import Any, Final


def _compiled() -> bool:
    """Whether this module runs compiled (``plyhall.compiled``): a compiled function is no Python function."""
    return not isinstance(_compiled, FunctionType)


NATIVE: Final = _compiled()
"""This module runs compiled: :class:`MovePlayed`'s ``__init__`` sets its fields as the native attributes they are
(see ``protocol.games.connect4.NATIVE``)."""


@dataclass(slots=True)
class MoveRecord:
    """One accepted move as stored: who, what, how long it took, clocks after it."""

    seq: int
    seat: int
    notation: str
    think_ms: int
    clocks_after: list[float | None]

    def __init__(self, seq: int, seat: int, notation: str, think_ms: int, clocks_after: list[float | None]) -> None:
        """The dataclass's own ``__init__``, written out: compiled (``plyhall.compiled``), a move makes one without
        the interpreter's frame that the generated one runs in."""
        self.seq = seq
        self.seat = seat
        self.notation = notation
        self.think_ms = think_ms
        self.clocks_after = clocks_after

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied through :meth:`__init__` (a compiled class is made only so)."""
        return MoveRecord, (self.seq, self.seat, self.notation, self.think_ms, self.clocks_after)

    def to_json(self) -> dict[str, Any]:
        """JSON form, as in ``/api/games/ID``."""
        return {"seq": self.seq, "seat": self.seat, "move": self.notation, "think_ms": self.think_ms,
                "clocks_after": self.clocks_after}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> MoveRecord:
        """Inverse of :meth:`to_json`."""
        return cls(obj["seq"], obj["seat"], obj["move"], obj["think_ms"], list(obj["clocks_after"]))


@dataclass
class GameRecord:
    """A game as stored: running (status ``running``) or ended (``finished``, ``forfeit``, ``aborted``)."""

    id: str
    room: str
    game: str
    options: dict[str, Any]
    time_control: dict[str, Any]
    players: list[str]
    moves: list[MoveRecord]
    winner: int | None
    reason: str
    status: str
    started_at: float
    ended_at: float | None
    tournament: str | None = None
    tournament_game: int | None = None  # the game's number in its tournament's schedule
    rated: bool = False  # a rated result (``protocol.ratings``): storing it updates both players' ratings with it
    unrated: str | None = None  # why an ended game is not rated (None: it is, or it has not ended; docs/RATINGS.md)
    rating_weight: float = 1.0  # the most a rated game counts (less when one address's daily rating points run out)
    ratings: list[dict[str, Any]] | None = None  # what storing a rated result made of each seat's rating (set by
    # storage in the result's transaction, not stored with the game: game_over carries it; see RatingSQL._rate)

    def to_json(self) -> dict[str, Any]:
        """JSON form used by the HTTP API and ``plyhall export``."""
        return {
            "id": self.id,
            "room": self.room,
            "game": self.game,
            "options": self.options,
            "time_control": self.time_control,
            "players": self.players,
            "winner": self.winner,
            "winner_name": None if self.winner is None else self.players[self.winner],
            "reason": self.reason,
            "status": self.status,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "tournament": self.tournament,
            "tournament_game": self.tournament_game,
            "rated": self.rated,
            "unrated": self.unrated,
            "rating_weight": self.rating_weight,
            "moves": [m.to_json() for m in self.moves],
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> GameRecord:
        """Inverse of :meth:`to_json`."""
        return cls(obj["id"], obj["room"], obj["game"], obj["options"], obj["time_control"], list(obj["players"]),
                   [MoveRecord.from_json(m) for m in obj["moves"]], obj["winner"], obj["reason"], obj["status"],
                   obj["started_at"], obj["ended_at"], obj.get("tournament"), obj.get("tournament_game"),
                   bool(obj.get("rated", False)), obj.get("unrated"), float(obj.get("rating_weight", 1.0)))


# Durable writes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RoomSaved:
    """A room's settings, seats and series progress (insert or replace)."""

    snapshot: dict[str, Any]


@dataclass(frozen=True)
class RoomRemoved:
    """A room is gone (all its games played and everybody left, or abandoned)."""

    name: str


@dataclass(frozen=True)
class GameStarted:
    """A game began: its header, stored with status ``running``."""

    record: GameRecord


@dataclass(frozen=True, slots=True)
class MovePlayed:
    """A move was accepted in a running game."""

    game_id: str
    move: MoveRecord

    def __init__(self, game_id: str, move: MoveRecord) -> None:
        """The dataclass's own ``__init__``, written out (see :class:`MoveRecord`'s)."""
        if NATIVE:
            self.game_id = game_id  # type: ignore[misc]
            self.move = move  # type: ignore[misc]
            return
        setter = object.__setattr__  # frozen: as the generated one sets its fields
        setter(self, "game_id", game_id)
        setter(self, "move", move)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied through :meth:`__init__` (a compiled class is made only so)."""
        return MovePlayed, (self.game_id, self.move)


@dataclass(frozen=True)
class GameEnded:
    """A game ended: its final header (every move is stored already, or is in ``record.moves``). A rated
    result (``record.rated``, which the hall sets before the write leaves it) updates both players' ratings
    in the same transaction."""

    record: GameRecord


@dataclass(frozen=True)
class ClaimSaved:
    """A name was claimed with a secret (its salted hash), from an address (names claimed from one address do
    not rate each other: ``server.core.rated``)."""

    name: str
    salt: str
    digest: str
    address: str | None = None


@dataclass(frozen=True)
class IdentitySaved:
    """A resume token's hash for a name that holds a seat (so the seat survives a restart)."""

    name: str
    digest: str


@dataclass(frozen=True)
class IdentityForgotten:
    """Nobody holds the name any more: its resume token proves nothing from now on (and its row goes)."""

    name: str


@dataclass(frozen=True)
class TournamentSaved:
    """A tournament's definition and status (insert or replace)."""

    snapshot: dict[str, Any]


@dataclass(frozen=True)
class AnalysisSaved:
    """A finished game's analysis (``bots.analysis``' JSON), made by an analysis worker (insert or replace)."""

    game_id: str
    analysis: dict[str, Any]


Write = (RoomSaved | RoomRemoved | GameStarted | MovePlayed | GameEnded | ClaimSaved | IdentitySaved | IdentityForgotten
         | TournamentSaved | AnalysisSaved)
"""Anything the state machines ask storage to commit."""

_WRITES: dict[str, type] = {kind.__name__: kind for kind in (RoomSaved, RoomRemoved, GameStarted, MovePlayed,
                                                              GameEnded, ClaimSaved, IdentitySaved, IdentityForgotten,
                                                              TournamentSaved, AnalysisSaved)}


def write_to_json(write: Write) -> dict[str, Any]:
    """A write as plain JSON values (for the spill file a server that cannot reach its database leaves)."""
    if isinstance(write, (GameStarted, GameEnded)):
        return {"write": type(write).__name__, "record": write.record.to_json()}
    if isinstance(write, MovePlayed):
        return {"write": "MovePlayed", "game_id": write.game_id, "move": write.move.to_json()}
    return {"write": type(write).__name__, **{name: getattr(write, name) for name in write.__dataclass_fields__}}


def write_from_json(obj: dict[str, Any]) -> Write:
    """Inverse of :func:`write_to_json`; ``ValueError`` for anything else."""
    fields = dict(obj)
    kind = _WRITES.get(fields.pop("write", None))  # type: ignore[arg-type]
    if kind is None:
        raise ValueError(f"not a stored write: {str(obj)[:80]}")
    if kind in (GameStarted, GameEnded):
        return kind(GameRecord.from_json(fields["record"]))
    if kind is MovePlayed:
        return MovePlayed(fields["game_id"], MoveRecord.from_json(fields["move"]))
    return kind(**fields)


@dataclass
class Restored:
    """What a restarted server reads back: open rooms, running games, names and tournaments."""

    rooms: list[dict[str, Any]] = field(default_factory=list)
    running: dict[str, GameRecord] = field(default_factory=dict)  # game id -> header with its moves
    claims: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (salt, digest)
    claimed_from: dict[str, str] = field(default_factory=dict)  # name -> the address its claim came from
    registered: list[str] = field(default_factory=list)  # names the organiser registered (plyhall names add)
    identities: dict[str, str] = field(default_factory=dict)  # name -> resume token digest
    tournaments: list[dict[str, Any]] = field(default_factory=list)
    tournament_games: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # tournament id -> its games
