"""The error codes of the wire protocol: what a client branches on, each with the sentence the docs give for it.

``protocol.messages`` builds the ``error`` messages that carry them (and re-exports both names).
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """The ``code`` of an ``error``: what a client branches on (the message beside it is for people)."""

    BAD_MESSAGE = "bad_message"
    BAD_ENCODING = "bad_encoding"
    TOO_LARGE = "too_large"
    UNKNOWN_TYPE = "unknown_type"
    NOT_LOGGED_IN = "not_logged_in"
    ALREADY_LOGGED_IN = "already_logged_in"
    BAD_NAME = "bad_name"
    WRONG_SECRET = "wrong_secret"
    NAME_IN_USE = "name_in_use"
    BAD_OPTION = "bad_option"
    NO_SUCH_ROOM = "no_such_room"
    ROOM_EXISTS = "room_exists"
    ROOM_FULL = "room_full"
    SEAT_TAKEN = "seat_taken"
    NOT_IN_ROOM = "not_in_room"
    NOT_A_PLAYER = "not_a_player"
    GAME_NOT_RUNNING = "game_not_running"
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_MOVE = "illegal_move"
    RATE_LIMITED = "rate_limited"
    TOO_MANY_ROOMS = "too_many_rooms"
    SERVER_SHUTDOWN = "server_shutdown"
    WRONG_GAME = "wrong_game"
    THROTTLED = "throttled"
    RESUME_REQUIRED = "resume_required"
    BUSY = "busy"
    NOT_ORGANISER = "not_organiser"
    NO_SUCH_TOURNAMENT = "no_such_tournament"
    IN_TOURNAMENT = "in_tournament"
    CLUSTER_UNAVAILABLE = "cluster_unavailable"


ERROR_CODES: dict[ErrorCode, str] = {
    ErrorCode.BAD_MESSAGE: "the message is not a map with a known shape (field missing or of the wrong type)",
    ErrorCode.BAD_ENCODING: "the bytes are not valid JSON or msgpack for the chosen subprotocol",
    ErrorCode.TOO_LARGE: "the message is larger than the server accepts",
    ErrorCode.UNKNOWN_TYPE: "the message type is not one the server knows",
    ErrorCode.NOT_LOGGED_IN: "log in first",
    ErrorCode.ALREADY_LOGGED_IN: "this connection is already logged in",
    ErrorCode.BAD_NAME: "the name is not acceptable",
    ErrorCode.WRONG_SECRET: "the name is claimed and the secret does not match",
    ErrorCode.NAME_IN_USE: "somebody is connected under that name",
    ErrorCode.BAD_OPTION: "a room or game option is unknown or out of range",
    ErrorCode.NO_SUCH_ROOM: "there is no room by that name",
    ErrorCode.ROOM_EXISTS: "a room by that name exists already",
    ErrorCode.ROOM_FULL: "both seats are taken",
    ErrorCode.SEAT_TAKEN: "that seat is taken",
    ErrorCode.NOT_IN_ROOM: "you are not in that room",
    ErrorCode.NOT_A_PLAYER: "only a seated player may do that",
    ErrorCode.GAME_NOT_RUNNING: "no game is running in that room",
    ErrorCode.NOT_YOUR_TURN: "it is the other seat's turn",
    ErrorCode.ILLEGAL_MOVE: "the move is not legal, or not a move",
    ErrorCode.RATE_LIMITED: "too many messages; slow down",
    ErrorCode.TOO_MANY_ROOMS: "a limit on rooms was reached",
    ErrorCode.SERVER_SHUTDOWN: "the server is shutting down",
    ErrorCode.WRONG_GAME: "the room plays another game than the one you asked for",
    ErrorCode.THROTTLED: "too many failed logins for this name or address; wait and try again",
    ErrorCode.RESUME_REQUIRED: "the name holds a seat kept for its owner: log in with its secret or resume token",
    ErrorCode.BUSY: "the server cannot take this request now (e.g. house bots at their limit)",
    ErrorCode.NOT_ORGANISER: "only the organiser may do that",
    ErrorCode.NO_SUCH_TOURNAMENT: "there is no tournament by that name or id",
    ErrorCode.IN_TOURNAMENT: "you have tournament games to play; you are seated automatically",
    ErrorCode.CLUSTER_UNAVAILABLE: "the room, seek or name is on another node of the cluster, which cannot be "
                                   "reached now; try again in a few seconds",
}
"""Every error code with the sentence the docs give for it."""
