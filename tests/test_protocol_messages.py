"""The message schemas: every message the server produces fits SERVER_MESSAGES, and validate()
turns any bad client message into a ProtocolError naming the problem, never an exception.

The games are driven through the sans-I/O ``server.core.hall.Hall`` (no network) by ``tests.helpers.HallDriver``,
which checks every message the hall sends, one by one.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from protocol.games import GAMES, get_game
from protocol.messages import (
    CLIENT_MESSAGES,
    ERROR_CODES,
    MAX_SAFE_INTEGER,
    SERVER_MESSAGES,
    ProtocolError,
    validate,
)
from tests.helpers import HallDriver

ANN, BOB, SUE = 1, 2, 3


def recorder() -> HallDriver:
    """A hall with an organiser secret and room for one house bot, sent only valid requests, half a second
    apart; every message it sends is checked against SERVER_MESSAGES as it is produced."""
    return HallDriver(step=0.5, only_valid=True, organiser_secret="organiser-pw", house_limit=1)


def test_a_whole_session_fits_the_server_schemas():
    rec = recorder()
    # before logging in
    assert rec.send(ANN, {"type": "ping", "id": 1}) == [{"type": "pong", "id": 1}]
    assert rec.send(ANN, {"type": "list_rooms"})[0]["code"] == "not_logged_in"
    # log in, each in its own convention; ann and bob claim their names
    welcome = rec.send(ANN, {"type": "login", "name": "ann", "secret": "ann-pw", "id": "a1"})[0]
    assert welcome["type"] == "welcome" and welcome["id"] == "a1" and welcome["claimed"] is True
    assert welcome["games"] == sorted(GAMES) and welcome["rooms"] == []
    rec.send(BOB, {"type": "login", "name": "bob", "secret": "bob-pw", "coords": "matrix", "client": "test"})
    rec.send(SUE, {"type": "login", "name": "sue", "coords": "cosc322"})
    assert rec.send(SUE, {"type": "login", "name": "sue"})[0]["code"] == "already_logged_in"
    wrong = rec.send(4, {"type": "login", "name": "ann", "secret": "wrong"})[0]
    assert wrong["code"] == "wrong_secret" and wrong["message"].startswith("wrong secret for ann, a claimed name")
    without = rec.send(4, {"type": "login", "name": "ann"})[0]  # (no secret given: told the name needs its own)
    assert without["code"] == "wrong_secret" and without["message"].startswith("the name ann is claimed; log in")
    assert rec.send(4, {"type": "login", "name": "sue"})[0]["code"] == "name_in_use"
    assert rec.send(4, {"type": "login", "name": "-x"})[0]["code"] == "bad_name"
    assert rec.send(SUE, {"type": "watch_lobby", "id": 5})[0]["rooms"] == []
    assert rec.send(ANN, {"type": "list_rooms", "id": 2}) == [{"type": "rooms", "rooms": [], "id": 2}]
    # a room for two games of Connect Four
    bad = rec.send(ANN, {"type": "create_room", "game": "connect4", "time_control": {"per_move": -1}})[0]
    assert bad["code"] == "bad_option" and "per_move" in bad["message"]
    room_msg = rec.send(ANN, {"type": "create_room", "game": "connect4", "name": "Wood Lake", "games": 2,
                              "time_control": {"initial": 60, "increment": 1}, "grace": 20, "id": 3})[0]
    assert room_msg["type"] == "room" and room_msg["room"]["name"] == "Wood Lake"
    assert rec.last(SUE, "rooms")["rooms"][0]["name"] == "Wood Lake"  # the lobby push
    assert rec.send(BOB, {"type": "create_room", "game": "connect4", "name": "wood lake"})[0]["code"] == "room_exists"
    assert rec.send(ANN, {"type": "list_rooms", "game": "connect4"})[0]["rooms"][0]["status"] == "waiting"
    # no game yet: the state is a room_state without a position
    assert rec.send(ANN, {"type": "state", "room": "Wood Lake"})[0]["type"] == "error"  # not in the room yet
    joined = rec.send(ANN, {"type": "join", "room": "Wood Lake", "seat": 0, "id": 4})[0]
    assert joined["type"] == "joined" and joined["seat"] == 0 and joined["settings"]["games"] == 2
    waiting = rec.send(ANN, {"type": "state", "room": "Wood Lake", "id": 6})[0]
    assert waiting["type"] == "room_state" and waiting["status"] == "waiting" and "state" not in waiting
    assert rec.send(ANN, {"type": "legal_moves", "room": "Wood Lake"})[0]["code"] == "game_not_running"
    assert rec.send(BOB, {"type": "join", "room": "Wood Lake", "seat": 0})[0]["code"] == "seat_taken"
    # bob sits down: the game starts, each sees the board in its own convention
    replies = rec.send(BOB, {"type": "join", "room": "Wood Lake"})
    assert [m["type"] for m in replies] == ["joined", "seated", "game_start"]
    start = replies[-1]
    assert start["seat"] == 1 and start["status"] == "playing" and start["to_move"] == 0
    assert len(start["state"]["board"]) == 6 and start["clocks"]["running"] == 0
    assert rec.send(BOB, {"type": "join", "room": "Wood Lake"})[0]["type"] == "joined"  # joining again resumes
    spectate = rec.send(SUE, {"type": "join", "room": "Wood Lake", "role": "spectator"})
    assert [m["type"] for m in spectate] == ["joined", "game_start"] and spectate[1]["seat"] is None
    assert rec.send(SUE, {"type": "move", "room": "Wood Lake", "move": "4"})[0]["code"] == "not_a_player"
    # moves, in notation and in the structured form of each convention
    assert rec.send(BOB, {"type": "move", "room": "Wood Lake", "move": "4"})[0]["code"] == "not_your_turn"
    assert rec.send(ANN, {"type": "move", "room": "Wood Lake", "move": "9"})[0]["code"] == "illegal_move"
    moved = rec.send(ANN, {"type": "move", "room": "Wood Lake", "move": "4", "id": 7})[0]
    assert moved["type"] == "moved" and moved["id"] == 7 and moved["move"] == {"column": 4} and moved["seq"] == 1
    assert rec.last(BOB, "moved")["move"] == {"column": 3} and rec.last(SUE, "moved")["move"] == {"column": 4}
    legal = rec.send(BOB, {"type": "legal_moves", "room": "Wood Lake", "id": 8})[0]
    assert legal["moves"] == [{"column": c} for c in range(7)]
    rec.send(BOB, {"type": "move", "room": "Wood Lake", "move": {"column": 3}})
    state = rec.send(SUE, {"type": "state", "room": "Wood Lake"})[0]
    assert state["type"] == "game_start" and state["moves"] == ["4", "4"]
    assert state["state"]["board"][0][3] == 1 and state["state"]["board"][1][3] == 2  # cosc322: rank 1 first
    # chat and a declined draw offer
    assert rec.send(SUE, {"type": "chat", "room": "Wood Lake", "text": "good luck", "id": 9})[0]["id"] == 9
    assert rec.last(ANN, "chat") == {"type": "chat", "room": "Wood Lake", "from": "sue", "text": "good luck"}
    assert rec.send(ANN, {"type": "chat", "room": "Wood Lake", "text": " "})[0]["code"] == "bad_message"
    offer = rec.send(ANN, {"type": "offer_draw", "room": "Wood Lake", "id": 10})[0]
    assert offer["type"] == "draw_offered" and offer["seat"] == 0
    # bob loses the connection, and comes back in another convention
    rec.disconnect(BOB)
    away = rec.last(ANN, "player_away")
    assert away["seat"] == 1 and away["name"] == "bob" and away["grace"] == 20
    back = rec.send(BOB, {"type": "login", "name": "bob", "secret": "bob-pw", "coords": "cosc322"})
    # (ann's offer stands: it follows the game's state)
    assert [m["type"] for m in back] == ["welcome", "joined", "game_start", "draw_offered"]
    assert back[0]["rooms"] == ["Wood Lake"]
    assert rec.last(ANN, "player_back")["name"] == "bob"
    rec.send(BOB, {"type": "move", "room": "Wood Lake", "move": {"column": 1}})
    # the second game starts at once after bob resigns the first
    over = rec.send(BOB, {"type": "resign", "room": "Wood Lake", "id": 11})[0]
    assert over["type"] == "game_over" and over["id"] == 11 and over["winner"] == 0 and over["next_game"] is True
    second = rec.last(ANN, "game_start")
    assert second["game_no"] == 2 and second["to_move"] == 1
    # a takeover of ann's session by a restarted ann
    taken = rec.send(5, {"type": "login", "name": "ann", "secret": "ann-pw"})
    assert [m["type"] for m in taken] == ["welcome", "joined", "game_start"]
    rec.send(BOB, {"type": "offer_draw", "room": "Wood Lake"})
    draw = rec.send(5, {"type": "offer_draw", "room": "Wood Lake"})
    assert draw[0]["type"] == "game_over" and draw[0]["winner"] is None and draw[0]["next_game"] is False
    # after the last game the state holds the final position and the last result
    final = rec.send(SUE, {"type": "state", "room": "Wood Lake"})[0]
    assert final["type"] == "room_state" and final["status"] == "finished"
    assert final["last_result"] == {"winner": None, "reason": "draw agreed", "record": draw[0]["record"],
                                    "status": "finished", "players": draw[0]["players"]}
    assert rec.send(BOB, {"type": "resign", "room": "Wood Lake"})[0]["code"] == "game_not_running"
    for conn in (5, BOB, SUE):
        assert rec.send(conn, {"type": "leave", "room": "Wood Lake", "id": 12})[-1] == {
            "type": "left", "room": "Wood Lake", "id": 12}
    assert rec.send(BOB, {"type": "leave", "room": "Wood Lake"})[0]["code"] == "no_such_room"  # finished and empty
    # a clock that runs out
    rec.send(BOB, {"type": "create_room", "game": "quarto", "name": "Fast", "time_control": {"per_move": 1}})
    rec.send(BOB, {"type": "join", "room": "Fast"})
    rec.send(SUE, {"type": "join", "room": "Fast"})
    rec.tick(2.0)
    assert "ran out of time" in rec.last(SUE, "game_over")["reason"]
    assert rec.send(SUE, {"type": "chat", "room": "Nowhere", "text": "hi"})[0] == {
        "type": "error", "code": "no_such_room", "message": "there is no room called 'Nowhere'", "room": "Nowhere"}
    _seeks(rec)
    _ladder(rec)
    _throttled_logins(rec)
    _organiser_login(rec)
    _house_and_tournaments(rec)
    rec = _restart(rec)
    _every_schema_field_was_seen(rec)


def _seeks(rec: HallDriver) -> None:
    """Two seeks for the same game pair at once; a seek for other settings waits; a seek can be withdrawn."""
    for conn in (6, 7):
        rec.send(conn, {"type": "login", "name": f"s{conn}"})
    waiting = rec.send(6, {"type": "seek", "game": "connect4", "games": 2, "id": "k"})[0]
    assert waiting == {"type": "seeking", "id": "k", "seek": {
        "game": "connect4", "options": {}, "time_control": {"per_move": 30.0}, "games": 2, "rated": True}}
    assert rec.send(7, {"type": "seek", "game": "connect4"})[0]["type"] == "seeking"  # one game: no match
    assert rec.send(7, {"type": "cancel_seek", "game": "connect4", "id": 3})[0] == {
        "type": "seek_cancelled", "game": "connect4", "id": 3}
    paired = rec.send(7, {"type": "seek", "game": "connect4", "games": 2, "id": "p"})
    assert [m["type"] for m in paired] == ["joined", "seated", "game_start"] and paired[0]["id"] == "p"
    assert paired[0]["seat"] == 1 and rec.last(6, "game_start")["seat"] == 0
    room = paired[0]["room"]
    assert rec.send(6, {"type": "join", "room": room, "game": "amazons"})[0]["code"] == "wrong_game"
    rec.send(6, {"type": "move", "room": room, "move": "4"})
    rec.send(7, {"type": "resign", "room": room})
    assert rec.last(7, "game_start")["game_no"] == 2  # the series goes on


def _ladder(rec: HallDriver) -> None:
    """Two claimed names on the ladder are paired; the game_over of their rated game carries the ratings storage
    made of it (set here on the record as storage does). Off the ladder by then, they are not paired again."""
    for conn in (10, 11):
        rec.send(conn, {"type": "login", "name": f"l{conn}", "secret": f"l{conn}-pw"})
    assert rec.send(10, {"type": "seek", "game": "quarto", "ladder": True})[0]["ladder"]["waiting"] == 0
    room = next(m for m in rec.send(11, {"type": "seek", "game": "quarto", "ladder": True}) if m["type"] == "joined")
    for conn in (10, 11):
        rec.send(conn, {"type": "cancel_seek", "game": "quarto"})
    rec.now += 0.5
    out = rec.hall.handle(rec.conn(10), {"type": "resign", "room": room["room"]}, rec.now)
    record = out.ended[0]
    record.ratings = [{"name": name, "rating": 1500.0 + 100 * (1 - 2 * seat), "deviation": 290.0,
                       "change": 100.0 * (1 - 2 * seat), "provisional": True}
                      for seat, name in enumerate(record.players)]
    rec.take(out)
    assert rec.last(10, "game_over")["ratings"] == record.ratings


def _throttled_logins(rec: HallDriver) -> None:
    """Failed logins are answered, then delayed with a retry_after."""
    codes = [rec.send(8, {"type": "login", "name": "ann", "secret": f"guess{i}"}, dt=0.01)[0] for i in range(7)]
    assert [c["code"] for c in codes[:5]] == ["wrong_secret"] * 5
    assert codes[-1]["code"] == "throttled" and codes[-1]["retry_after"] > 0


def _organiser_login(rec: HallDriver) -> None:
    assert rec.send(9, {"type": "login", "name": "org", "organiser": "wrong"})[0]["code"] == "not_organiser"
    assert rec.send(9, {"type": "login", "name": "org", "organiser": "organiser-pw"})[0]["organiser"] is True


def _house_and_tournaments(rec: HallDriver) -> None:
    """A room against a house bot; an organiser's tournament, watched and steered."""
    assert "master" in rec.last(9, "welcome")["house"]
    rec.send(10, {"type": "login", "name": "hugo"})
    room = rec.send(10, {"type": "create_room", "game": "quarto", "opponent": "novice"})
    assert room[0]["type"] == "room" and room[1]["type"] == "joined"
    name = room[0]["room"]["name"]
    bot = rec.hall.rooms[name].seats[1]  # its process logs in with the server's own secret, and sits down
    rec.send(20, {"type": "login", "name": bot, "secret": rec.hall.house_secret})
    rec.send(20, {"type": "join", "room": name})
    assert rec.last(10, "game_start")["idle"] == 180
    rec.send(10, {"type": "resign", "room": name})
    assert rec.send(9, {"type": "list_tournaments", "id": 1})[0] == {"type": "tournaments", "tournaments": [], "id": 1}
    made = rec.send(9, {"type": "tournament_create", "name": "Cup", "game": "quarto", "format": "gauntlet",
                        "players": ["hugo", "ann", "bob"], "sprt": {"elo0": 0, "elo1": 50}, "id": 2})[0]
    assert made["type"] == "tournament" and made["id"] == 2 and made["tournament"]["status"] == "created"
    watched = rec.send(10, {"type": "watch_tournament", "tournament": "cup"})[0]["tournament"]
    assert watched["schedule"][0]["status"] == "pending" and watched["sprt"]["status"] == "continue"
    started = rec.send(9, {"type": "tournament_control", "tournament": "Cup", "action": "start"})[0]
    assert started["tournament"]["status"] == "running"
    assert rec.send(9, {"type": "tournament_control", "tournament": "Cup", "action": "start"})[0]["code"] == \
        "bad_option"
    rec.send(9, {"type": "tournament_control", "tournament": "Cup", "action": "cancel"})
    assert rec.last(10, "tournament")["tournament"]["status"] == "cancelled"


def _restart(rec: HallDriver) -> HallDriver:
    """Everything the hall asked storage to write, restored into a new hall: the running series continues."""
    from server.storage import SQLiteStorage

    storage = SQLiteStorage(":memory:")
    storage.apply(rec.writes)
    restored = storage.load()
    storage.close()
    again = recorder()
    again.seen = rec.seen  # one account of what the server sent, before and after the restart
    again.now = rec.now + 100.0  # a monotonic clock of another process
    rooms, running = again.hall.restore(restored, again.now)
    assert running == 1 and rooms >= 1
    room = next(r for r in again.hall.rooms.values() if r.status == "playing")
    names = list(room.seats)
    tokens = {w["name"]: w["resume"] for msgs in rec.inbox.values() for w in msgs if w["type"] == "welcome"}
    refused = again.send(1, {"type": "login", "name": names[0]})[0]
    assert refused["code"] == "resume_required"  # an unclaimed name's seat is kept for its owner
    first = again.send(1, {"type": "login", "name": names[0], "resume": tokens[names[0]]})
    assert first[0]["rooms"] == [room.name] and first[-1]["type"] == "game_start" and first[-1]["paused"] is True
    assert again.send(1, {"type": "move", "room": room.name, "move": "4"})[0]["code"] == "game_not_running"
    second = again.send(2, {"type": "login", "name": names[1], "resume": tokens[names[1]]})
    resumed = second[-1]
    assert resumed["type"] == "game_start" and "paused" not in resumed and resumed["game_no"] == 2
    assert resumed["moves"] == [] and resumed["clocks"]["running"] == resumed["to_move"]
    return again


def _every_schema_field_was_seen(rec: HallDriver) -> None:
    """The schemas list nothing the server never sends."""
    for kind, schema in SERVER_MESSAGES.items():
        assert kind in rec.seen, f"the server never sent {kind!r}"
        missing = (set(schema.required) | set(schema.optional)) - rec.seen[kind]
        assert not missing, f"{kind!r} never carried {sorted(missing)}"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_whole_games_in_every_convention_fit_the_schemas(game_id):
    rec = recorder()
    conventions = {ANN: "algebraic", BOB: "cosc322", SUE: "matrix"}
    for conn, coords in conventions.items():
        rec.send(conn, {"type": "login", "name": f"p{conn}", "coords": coords})
    rec.send(ANN, {"type": "create_room", "game": game_id, "name": "Lake", "time_control": {"untimed": True}})
    rec.send(ANN, {"type": "join", "room": "Lake"})
    rec.send(SUE, {"type": "join", "room": "Lake", "role": "spectator"})
    rec.send(BOB, {"type": "join", "room": "Lake"})
    game = get_game(game_id)
    state = game.initial_state()
    rng = random.Random(game_id)
    seat_conn = {0: ANN, 1: BOB}
    while game.outcome(state) is None:
        move = rng.choice(game.legal_moves(state))
        conn = seat_conn[game.to_move(state)]
        form = game.format_move(move, conventions[conn]) if rng.random() < 0.5 else game.notation(move)
        reply = rec.send(conn, {"type": "move", "room": "Lake", "move": form})
        assert reply[0]["type"] == "moved", reply
        for other, coords in conventions.items():  # each receiver reads the move in its own convention
            seen = rec.last(other, "moved")["move"]
            assert game.parse_move(seen, state, coords) == move
        state = game.apply(state, move)
    over = rec.last(SUE, "game_over")
    assert over["winner"] == game.outcome(state).winner
    assert not rec.errors


# validate(): bad client messages become ProtocolErrors naming the problem --------------------------------


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("msg", "code", "words"),
    [
        ({"type": "join", "room": 5}, "bad_message", ["'room'", "'join'", "a string"]),
        ({"type": "join", "room": "Lake", "seat": "0"}, "bad_message", ["'seat'", "an integer"]),
        ({"type": "join", "room": "Lake", "seat": True}, "bad_message", ["'seat'", "an integer"]),
        ({"type": "join", "room": "Lake", "seat": 1.0}, "bad_message", ["'seat'", "an integer"]),
        ({"type": "create_room", "game": "quarto", "games": 2**53}, "bad_message", ["2^53"]),
        ({"type": "create_room", "game": "quarto", "games": -(2**60)}, "bad_message", ["2^53"]),
        ({"type": "create_room", "game": "quarto", "grace": False}, "bad_message", ["'grace'", "a number"]),
        ({"type": "create_room", "game": "quarto", "options": []}, "bad_message", ["'options'", "a map"]),
        ({"type": "watch_lobby", "on": 1}, "bad_message", ["'on'", "true or false"]),
        ({"type": "join"}, "bad_message", ["'join'", "needs the field 'room'"]),
        ({"type": "move", "room": "Lake"}, "bad_message", ["needs the field 'move'"]),
        ({"type": "chat", "room": "Lake", "text": "hi", "colour": "red"}, "bad_message", ["no field 'colour'", "text"]),
        ({"type": "ping", "extra": 1}, "bad_message", ["no field 'extra'", "none"]),
        ({"type": "teleport"}, "unknown_type", ["'teleport'", "login"]),
        ({"type": "welcome", "name": "x"}, "unknown_type", ["'welcome'"]),  # a server message is no request
        ({"type": 3}, "bad_message", ["'type'"]),
        ({"name": "ann"}, "bad_message", ["'type'"]),
        ({}, "bad_message", ["'type'"]),
        ({"type": "ping", "id": True}, "bad_message", ["'id'"]),
        ({"type": "ping", "id": 1.5}, "bad_message", ["'id'"]),
        ({"type": "ping", "id": [1]}, "bad_message", ["'id'"]),
        ({"type": "ping", "id": "x" * 65}, "bad_message", ["'id'", "64"]),
        ({"type": "ping", "id": 2**53}, "bad_message", ["'id'"]),
        ({"type": "move", "room": "Lake", "move": float("nan")}, "bad_message", ["2^53"]),
        ({"type": "move", "room": "Lake", "move": {1: 2}}, "bad_message", ["string keys"]),
        ({"type": "move", "room": "Lake", "move": b"4"}, "bad_message", ["strings"]),
        ({"type": "move", "room": "Lake", "move": _nested(40)}, "bad_message", ["maps"]),
    ],
)
def test_bad_client_messages_name_the_problem(msg, code, words):
    error = validate(msg)
    assert isinstance(error, ProtocolError), msg
    assert error.code == code
    for word in words:
        assert word in error.message, (word, error.message)
    reply = error.to_message()
    assert reply["type"] == "error" and reply["code"] == code
    assert not isinstance(validate(reply, SERVER_MESSAGES), ProtocolError)


@pytest.mark.parametrize("value", [None, 5, "login", ["type", "ping"], 1.5, True, b"x"])
def test_a_message_that_is_not_a_map_is_refused(value):
    error = validate(value)
    assert isinstance(error, ProtocolError) and error.code == "bad_message" and "map" in error.message


def test_the_id_is_echoed_in_the_error_when_it_is_valid():
    error = validate({"type": "join", "id": "req-1"})
    assert isinstance(error, ProtocolError) and error.id == "req-1"
    assert error.to_message()["id"] == "req-1"
    assert validate({"type": "join", "room": "Lake", "seat": 1, "role": "player", "id": -(2**53 - 1)})["seat"] == 1


def test_good_client_messages_pass_unchanged():
    good = [
        {"type": "login", "name": "ann", "secret": "s", "coords": "matrix", "client": "java-bot 1.0"},
        {"type": "list_rooms", "game": "amazons", "id": 1},
        {"type": "watch_lobby", "on": False},
        {"type": "create_room", "game": "amazons", "name": "Lake", "options": {"first": "white"},
         "time_control": {"initial": 300, "increment": 2}, "illegal_move": "lose", "grace": 12.5, "games": 4},
        {"type": "join", "room": "Lake", "role": "spectator"},
        {"type": "move", "room": "Lake", "move": {"queen": [1, 4], "to": [5, 4], "arrow": [5, 8]}, "id": "m"},
        {"type": "move", "room": "Lake", "move": "d1-d7/g7"},
        {"type": "move", "room": "Lake", "move": MAX_SAFE_INTEGER},
        {"type": "ping", "id": None},
    ]
    for msg in good:
        assert validate(msg) is msg
    for kind, schema in CLIENT_MESSAGES.items():  # every request names the server messages that answer it
        assert schema.replies and set(schema.replies) <= set(SERVER_MESSAGES), kind


def test_random_junk_never_raises():
    rng = random.Random(322)
    atoms: list[Any] = [None, True, 0, -1, 2**53, 2**64, 1.5, float("inf"), "", "x" * 70, "room", b"b", (1,), {1}]
    keys = ["type", "id", "room", "move", "seat", "name", "text", "game", "options", "on", 7]
    kinds = list(CLIENT_MESSAGES) + ["welcome", "", "x" * 100]

    def junk(depth: int = 0) -> Any:
        pick = rng.random()
        if depth > 3 or pick < 0.5:
            return rng.choice(atoms)
        if pick < 0.7:
            return [junk(depth + 1) for _ in range(rng.randrange(3))]
        return {rng.choice(keys): junk(depth + 1) for _ in range(rng.randrange(4))}

    for _ in range(3000):
        msg = junk()
        if isinstance(msg, dict) and rng.random() < 0.8:
            msg["type"] = rng.choice(kinds)
        result = validate(msg)
        assert result is msg or isinstance(result, ProtocolError)
        if isinstance(result, ProtocolError):
            assert result.code in ERROR_CODES and result.message
