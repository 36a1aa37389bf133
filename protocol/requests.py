"""What a client may send, one ``TypedDict`` a request type: the fields, their types, and which are required.

``protocol.messages`` builds its validation schemas from these classes (the docstring of each is its
documentation), so the server's handlers take a request whose shape the type checker knows, from
:func:`protocol.messages.validate` to the handler. Every request carries ``type`` and may carry an
``id`` that its reply echoes. A ``float`` field takes any number; ``Any`` takes any JSON value.

(No ``from __future__ import annotations`` here: ``NotRequired`` must be seen as such when the classes
are made.)
"""

from typing import Any, NotRequired, TypedDict


class Request(TypedDict):
    """What every request has: its type, and perhaps an id for its reply."""

    type: str
    id: NotRequired[str | int]


class Login(Request):
    """Log in under a name, claiming it with a secret the first time; resume proves the identity of an earlier
    login (the token its welcome gave)."""

    name: str
    secret: NotRequired[str]
    coords: NotRequired[str]
    client: NotRequired[str]
    resume: NotRequired[str]
    organiser: NotRequired[str]


class ListRooms(Request):
    """Ask for the room listing."""

    game: NotRequired[str]


class WatchLobby(Request):
    """Receive a `rooms` push whenever the listing changes."""

    on: NotRequired[bool]


class CreateRoom(Request):
    """Create a room (rated: its games are rated, false by default)."""

    game: str
    name: NotRequired[str]
    options: NotRequired[dict[str, Any]]
    time_control: NotRequired[dict[str, Any]]
    illegal_move: NotRequired[str]
    grace: NotRequired[float]
    games: NotRequired[int]
    opponent: NotRequired[str]
    rated: NotRequired[bool]


class Join(Request):
    """Take a seat (a given one or any free one) or watch as a spectator; game, when given, must be the room's
    game."""

    room: str
    seat: NotRequired[int]
    role: NotRequired[str]
    game: NotRequired[str]


class Seek(Request):
    """Ask to be paired for a game: the server pairs you with a waiting seek that matches, or records yours (rated:
    the game is rated, true by default; ladder: play rated games on the server's ladder for as long as you are
    connected, paired by rating)."""

    game: str
    options: NotRequired[dict[str, Any]]
    time_control: NotRequired[dict[str, Any]]
    games: NotRequired[int]
    rated: NotRequired[bool]
    ladder: NotRequired[bool]


class CancelSeek(Request):
    """Withdraw your seek for a game."""

    game: str


class RoomRequest(Request):
    """A request about one room."""

    room: str


class Leave(RoomRequest):
    """Leave a room (a seated player in a running game forfeits)."""


class Move(RoomRequest):
    """Play a move: notation text or the structured form in your coordinates (``game_no``: in that game only, not
    the room's next one)."""

    move: Any
    game_no: NotRequired[int]


class LegalMoves(RoomRequest):
    """Ask for the legal moves of the seat to move."""


class State(RoomRequest):
    """Ask for the full current state of a room."""


class Resign(RoomRequest):
    """Resign the running game (``game_no``: only if it is that game, not the next one of the room)."""

    game_no: NotRequired[int]


class OfferDraw(RoomRequest):
    """Offer a draw, or accept the opponent's standing offer (``game_no``: in that game only)."""

    game_no: NotRequired[int]


class Chat(RoomRequest):
    """Say something in a room."""

    text: str


class Ping(Request):
    """Ask for a pong (application-level liveness check)."""


class ListTournaments(Request):
    """Ask for the tournaments of this server."""


class WatchTournament(Request):
    """Get a tournament's standings now and a push whenever they change (on: false stops)."""

    tournament: str
    on: NotRequired[bool]


class TournamentCreate(Request):
    """Define a tournament (organiser only): game, format, entrants (players, and local house bot levels), games
    per pairing, cycles or rounds, the games' settings, concurrency, openings, an SPRT; start it at once with
    start."""

    game: str
    format: str
    name: NotRequired[str]
    players: NotRequired[list[Any]]
    local: NotRequired[list[Any]]
    games_per_pairing: NotRequired[int]
    cycles: NotRequired[int]
    rounds: NotRequired[int]
    options: NotRequired[dict[str, Any]]
    time_control: NotRequired[dict[str, Any]]
    illegal_move: NotRequired[str]
    grace: NotRequired[float]
    concurrency: NotRequired[int]
    openings: NotRequired[dict[str, Any]]
    sprt: NotRequired[dict[str, Any]]
    start: NotRequired[bool]


class TournamentControl(Request):
    """Start, pause, resume or cancel a tournament (organiser only)."""

    tournament: str
    action: str


REQUESTS: dict[str, tuple[type[Request], tuple[str, ...]]] = {
    "login": (Login, ("welcome",)),
    "list_rooms": (ListRooms, ("rooms",)),
    "watch_lobby": (WatchLobby, ("rooms",)),
    "create_room": (CreateRoom, ("room",)),
    "join": (Join, ("joined",)),
    "seek": (Seek, ("seeking", "joined")),
    "cancel_seek": (CancelSeek, ("seek_cancelled",)),
    "leave": (Leave, ("left",)),
    "move": (Move, ("moved",)),
    "legal_moves": (LegalMoves, ("legal_moves",)),
    "state": (State, ("game_start", "room_state")),
    "resign": (Resign, ("game_over",)),
    "offer_draw": (OfferDraw, ("draw_offered", "game_over")),
    "chat": (Chat, ("chat",)),
    "ping": (Ping, ("pong",)),
    "list_tournaments": (ListTournaments, ("tournaments",)),
    "watch_tournament": (WatchTournament, ("tournament",)),
    "tournament_create": (TournamentCreate, ("tournament",)),
    "tournament_control": (TournamentControl, ("tournament",)),
}
"""Each request type: its class, and the server messages that answer it (the first of them, or the first
``error``, sent to the requester carries the request's ``id``)."""

ClientMessage = (Login | ListRooms | WatchLobby | CreateRoom | Join | Seek | CancelSeek | Leave | Move | LegalMoves
                 | State | Resign | OfferDraw | Chat | Ping | ListTournaments | WatchTournament | TournamentCreate
                 | TournamentControl)
"""Any validated request."""
