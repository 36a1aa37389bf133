"""Requests the hall refuses, one case each: before a login, bad logins, and every misuse of rooms.

Driven without a network through ``tests.helpers.HallDriver`` (validation first, as on the wire; every
reply checked against the server schemas). Each refusal is an ``error`` with the code a client can act
on and a short sentence for people; hostile input is never echoed back in full. That these errors
reach a client over a real socket, and that a game misused this way still plays to the end and is
recorded, is tested end to end in test_robustness.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from server.core.hall import Limits
from tests.helpers import HallDriver, Who, assert_clear_error


def refused(desk: HallDriver, who: Who, msg: dict[str, Any], code: str) -> dict[str, Any]:
    """The one reply to ``msg`` is an ``error`` with ``code`` and a message for people; that error."""
    replies = desk.send(who, msg)
    assert len(replies) == 1, (str(msg)[:80], replies)
    return assert_clear_error(replies[0], code, msg)


def hall_with_a_game() -> HallDriver:
    """ann (seat 0, to move) and bob (seat 1, matrix coordinates) play Connect Four in Wood Lake; eve is
    logged in and in no room; ann opened Empty Room (Quarto), where nobody sits."""
    desk = HallDriver()
    desk.login("ann")
    desk.login("bob", coords="matrix")
    desk.send("ann", {"type": "create_room", "game": "connect4", "name": "Wood Lake"})
    desk.send("ann", {"type": "join", "room": "Wood Lake", "seat": 0})
    assert desk.send("bob", {"type": "join", "room": "Wood Lake", "seat": 1})[-1]["type"] == "game_start"
    desk.login("eve")
    desk.send("ann", {"type": "create_room", "game": "quarto", "name": "Empty Room"})
    return desk


def cases(*rows: tuple[str, dict[str, Any], str]) -> list[Any]:
    """Parameters (message, code) of the rows (id, message, code), each case named by its id."""
    return [pytest.param(msg, code, id=case_id) for case_id, msg, code in rows]


# Before a login, and bad logins -----------------------------------------------------------------

BEFORE_LOGIN = [
    {"type": "list_rooms"}, {"type": "watch_lobby"}, {"type": "create_room", "game": "connect4"},
    {"type": "join", "room": "x"}, {"type": "leave", "room": "x"}, {"type": "move", "room": "x", "move": "4"},
    {"type": "legal_moves", "room": "x"}, {"type": "state", "room": "x"}, {"type": "resign", "room": "x"},
    {"type": "offer_draw", "room": "x"}, {"type": "chat", "room": "x", "text": "hi"},
]


@pytest.mark.parametrize("msg", [pytest.param(msg, id=msg["type"]) for msg in BEFORE_LOGIN])
def test_a_request_before_login_is_refused_with_its_id(msg):
    reply = refused(HallDriver(), "anon", {**msg, "id": msg["type"]}, "not_logged_in")
    assert reply["id"] == msg["type"] and "login" in reply["message"]


def test_a_ping_needs_no_login():
    assert HallDriver().send("anon", {"type": "ping", "id": 1}) == [{"type": "pong", "id": 1}]


@pytest.mark.parametrize("name", [
    pytest.param("", id="empty"),
    pytest.param(" ann", id="leading-space"),
    pytest.param("ann ", id="trailing-space"),
    pytest.param("ann\n", id="trailing-newline"),
    pytest.param("-ann", id="leading-dash"),
    pytest.param("a" * 33, id="33-characters"),
    pytest.param("ann/bob", id="slash"),
    pytest.param("\u00e4nn", id="umlaut"),
    pytest.param("ann\x00", id="nul"),
    pytest.param("x" * 5000, id="5000-characters"),
])
def test_a_bad_name_is_refused_briefly(name):
    reply = refused(HallDriver(), "anon", {"type": "login", "name": name}, "bad_name")
    assert len(reply["message"]) < 300


def test_a_name_too_long_says_so_and_accents_are_named():
    """A 100-character name was quoted cut at 40 characters, with no sign of the cut and no word of its length;
    "Jürgen" was told names are "letters", which it is made of."""
    long = refused(HallDriver(), "anon", {"type": "login", "name": "a" * 100}, "bad_name")["message"]
    assert long == f"'{'a' * 39}\u2026' is too long for a name: 100 characters, and at most 32 are allowed"
    accented = refused(HallDriver(), "anon", {"type": "login", "name": "J\u00fcrgen"}, "bad_name")["message"]
    assert accented.startswith("'J\u00fcrgen' is not a valid name: use 1 to 32 letters (a-z, A-Z: no accents)")


@pytest.mark.parametrize(("msg", "code"), cases(
    ("unknown-coords", {"type": "login", "name": "ann", "coords": "hex"}, "bad_message"),
    ("empty-secret", {"type": "login", "name": "ann", "secret": ""}, "bad_message"),
    ("201-character-secret", {"type": "login", "name": "ann", "secret": "s" * 201}, "bad_message"),
))
def test_a_login_with_a_bad_field_is_refused(msg, code):
    refused(HallDriver(), "anon", msg, code)


@pytest.mark.parametrize("name", [pytest.param("ann", id="same-name"), pytest.param("bob", id="other-name")])
def test_a_second_login_on_a_connection_is_refused_and_the_first_one_stays(name):
    desk = HallDriver()
    desk.login("ann")
    refused(desk, "ann", {"type": "login", "name": name}, "already_logged_in")
    assert desk.send("ann", {"type": "list_rooms"})[0]["rooms"] == []


def test_rooms_of_a_misspelt_game_are_refused_with_the_games_there_are():
    """As /api/rooms?game=conect4 is: an empty list said nothing of the typo."""
    desk = hall_with_a_game()
    reply = refused(desk, "eve", {"type": "list_rooms", "game": "conect4"}, "bad_option")
    assert reply["message"].startswith("unknown game 'conect4'; games: connect4, ")
    listed = desk.send("eve", {"type": "list_rooms", "game": "connect4"})[0]["rooms"]
    assert [r["name"] for r in listed] == ["Wood Lake"]


def test_a_spectator_asking_for_a_seat_is_told_it_takes_none():
    """The seat was ignored: the client believed it sat there."""
    desk = hall_with_a_game()
    reply = refused(desk, "eve", {"type": "join", "room": "Wood Lake", "role": "spectator", "seat": 0}, "bad_message")
    assert reply["message"] == "a spectator takes no seat: leave out seat" and reply["room"] == "Wood Lake"
    assert desk.send("eve", {"type": "join", "room": "Wood Lake", "role": "spectator"})[0]["type"] == "joined"


def test_a_draw_offered_again_is_said_to_its_maker_only():
    desk = hall_with_a_game()
    desk.send("eve", {"type": "join", "room": "Wood Lake", "role": "spectator"})
    for who in ("bob", "eve"):
        desk.inbox[who].clear()
    assert desk.send("ann", {"type": "offer_draw", "room": "Wood Lake", "id": 1})[0]["id"] == 1
    assert [m["type"] for m in desk.inbox["bob"]] == [m["type"] for m in desk.inbox["eve"]] == ["draw_offered"]
    again = desk.send("ann", {"type": "offer_draw", "room": "Wood Lake", "id": 2})
    assert [(m["type"], m["id"], m["seat"]) for m in again] == [("draw_offered", 2, 0)]  # the request answered
    assert len(desk.inbox["bob"]) == len(desk.inbox["eve"]) == 1  # and nobody else told again
    assert desk.send("bob", {"type": "offer_draw", "room": "Wood Lake"})[-1]["reason"] == "draw agreed"


def test_a_request_refused_by_its_shape_names_its_room():
    """docs/PROTOCOL.md §7: an error carries the room the request named; those of the message checks had none."""
    desk = hall_with_a_game()
    deep: list[Any] = []
    for _ in range(33):
        deep = [deep]
    for msg in ({"type": "chat", "room": "Wood Lake", "text": "hi", "x": 1, "id": 7},
                {"type": "move", "room": "Wood Lake", "move": {"column": 2 ** 53}, "id": 8},
                {"type": "chat", "room": "Wood Lake", "text": "hi", "x": deep}):
        reply = refused(desk, "ann", msg, "bad_message")
        assert reply["room"] == "Wood Lake" and reply.get("id") == msg.get("id"), reply
    assert reply["message"].endswith("booleans and null, nested at most 32 deep")


def test_a_move_resignation_or_draw_offer_that_crossed_its_game_s_end_is_not_given_to_the_next_game():
    """A three-game room: bob moves, resigns and offers a draw as ann's winning move ends game 1, and game 2 starts at
    once, bob to move first. Sent with their game's number they are refused; before, the move was played as game 2's
    first (where it was never chosen) and the resignation or draw offer decided game 2 without a move."""
    desk = HallDriver()
    desk.login("ann")
    desk.login("bob")
    desk.send("ann", {"type": "create_room", "game": "connect4", "name": "Series", "games": 3})
    desk.send("ann", {"type": "join", "room": "Series", "seat": 0})
    desk.send("bob", {"type": "join", "room": "Series", "seat": 1})
    for column in ("1", "2", "1", "2", "1", "2"):
        assert desk.send("ann" if column == "1" else "bob", {"type": "move", "room": "Series", "move": column})[0][
            "type"] == "moved"
    ended = desk.send("ann", {"type": "move", "room": "Series", "move": "1"})
    assert [(m["type"], m.get("game_no")) for m in ended if m["type"] in ("game_over", "game_start")] == [
        ("game_over", 1), ("game_start", 2)]
    assert [m["to_move"] for m in ended if m["type"] == "game_start"] == [1]  # bob moves first in game 2
    for kind, extra in (("move", {"move": "4"}), ("resign", {}), ("offer_draw", {})):
        reply = refused(desk, "bob", {"type": kind, "room": "Series", "game_no": 1, **extra}, "game_not_running")
        assert reply["message"] == "game 1 is not running in Series"
    series = desk.hall.registry.find("Series")
    assert series.game_no == 2 and series.draw_offer is None and series.moves == []
    played = desk.send("bob", {"type": "move", "room": "Series", "move": "4", "game_no": 2})  # its own game: played
    assert [(m["type"], m["seq"]) for m in played] == [("moved", 1)] and len(series.moves) == 1
    over = desk.send("bob", {"type": "resign", "room": "Series", "game_no": 2})  # its own game's number: resigned
    assert [(m["game_no"], m["reason"]) for m in over if m["type"] == "game_over"] == [(2, "bob resigned")]


def test_a_connected_name_is_in_use():
    desk = HallDriver()
    desk.login("ann")
    refused(desk, "another connection", {"type": "login", "name": "ann"}, "name_in_use")


# Rooms: ones that do not exist, ones one is not in, full ones --------------------------------------

@pytest.mark.parametrize("msg", [
    pytest.param({"type": "move", "room": "Nowhere", "move": "4"}, id="move-nowhere"),
    pytest.param({"type": "move", "room": "", "move": "4"}, id="move-empty-name"),
    pytest.param({"type": "move", "room": "   ", "move": "4"}, id="move-blank-name"),
    pytest.param({"type": "move", "room": "x" * 60_000, "move": "4"}, id="move-60000-character-name"),
    pytest.param({"type": "move", "room": "Wood  Lake 2", "move": "4"}, id="move-spacing-variant-of-none"),
    pytest.param({"type": "move", "room": "\u00dfx", "move": "4"}, id="move-case-variant-of-none"),
    pytest.param({"type": "leave", "room": "Nowhere"}, id="leave-nowhere"),
    pytest.param({"type": "join", "room": "Nowhere"}, id="join-nowhere"),
])
def test_a_room_that_does_not_exist_is_named_briefly(msg):
    reply = refused(hall_with_a_game(), "eve", msg, "no_such_room")
    assert len(reply["room"]) <= 40


@pytest.mark.parametrize(("msg", "code"), cases(
    ("move", {"type": "move", "room": "Wood Lake", "move": "4"}, "not_in_room"),
    ("leave", {"type": "leave", "room": "Wood Lake"}, "not_in_room"),
    ("leave-empty-room", {"type": "leave", "room": "Empty Room"}, "not_in_room"),
    ("legal_moves", {"type": "legal_moves", "room": "Wood Lake"}, "not_in_room"),
    ("state", {"type": "state", "room": "Wood Lake"}, "not_in_room"),
    ("chat", {"type": "chat", "room": "Wood Lake", "text": "hi"}, "not_in_room"),
    ("resign", {"type": "resign", "room": "Wood Lake"}, "not_a_player"),
    ("offer_draw", {"type": "offer_draw", "room": "Wood Lake"}, "not_a_player"),
))
def test_requests_about_a_room_one_is_not_in_are_refused(msg, code):
    refused(hall_with_a_game(), "eve", msg, code)


@pytest.mark.parametrize(("msg", "code"), cases(
    ("full-room", {"type": "join", "room": "Wood Lake"}, "room_full"),
    ("taken-seat", {"type": "join", "room": "wood lake", "seat": 1}, "seat_taken"),
    ("seat-2", {"type": "join", "room": "Empty Room", "seat": 2}, "bad_message"),
    ("seat-minus-1", {"type": "join", "room": "Empty Room", "seat": -1}, "bad_message"),
    ("unknown-role", {"type": "join", "room": "Empty Room", "role": "referee"}, "bad_message"),
))
def test_a_full_room_a_taken_seat_and_bad_seats_and_roles_are_refused(msg, code):
    refused(hall_with_a_game(), "eve", msg, code)


# Spectators and players in the wrong role --------------------------------------------------------

SPECTATE = {"type": "join", "room": "Wood Lake", "role": "spectator"}


def hall_with_a_spectator() -> HallDriver:
    """:func:`hall_with_a_game`, with eve watching Wood Lake."""
    desk = hall_with_a_game()
    assert [m["type"] for m in desk.send("eve", SPECTATE)] == ["joined", "game_start"]
    return desk


@pytest.mark.parametrize(("msg", "code"), cases(
    ("move", {"type": "move", "room": "Wood Lake", "move": "4"}, "not_a_player"),
    ("take-a-seat", {"type": "join", "room": "Wood Lake", "seat": 0}, "seat_taken"),
))
def test_a_spectator_may_not_play(msg, code):
    refused(hall_with_a_spectator(), "eve", msg, code)


def test_a_spectator_joining_as_a_player_sits_down_and_the_room_stays():
    """The page's "Take this seat" left the room, then joined: leaving as its only member closed the room first."""
    desk = hall_with_a_game()
    desk.send("eve", {"type": "create_room", "game": "connect4", "name": "Den"})
    assert desk.send("eve", {"type": "join", "room": "Den", "role": "spectator"})[0]["seat"] is None
    joined = desk.send("eve", {"type": "join", "room": "Den", "seat": 1})
    assert (joined[0]["type"], joined[0]["seat"]) == ("joined", 1)
    den = desk.hall.registry.find("Den")
    assert den is not None and den.seats == [None, "eve"] and "eve" not in den.spectators
    assert desk.send("ann", {"type": "join", "room": "Den", "role": "spectator"})[0]["type"] == "joined"
    refused(desk, "eve", {"type": "join", "room": "Den", "role": "spectator"}, "bad_message")  # seated: leave first


@pytest.mark.parametrize(("who", "msg", "code"), [
    pytest.param("bob", {"type": "move", "room": "Wood Lake", "move": "4"}, "not_your_turn", id="out-of-turn"),
    pytest.param("ann", SPECTATE, "bad_message", id="become-a-spectator"),
    pytest.param("ann", {"type": "join", "room": "Wood Lake", "seat": 1}, "bad_message", id="switch-seats"),
])
def test_a_player_may_not_move_out_of_turn_or_change_role(who, msg, code):
    refused(hall_with_a_game(), who, msg, code)


def test_joining_again_in_the_same_role_is_harmless():
    desk = hall_with_a_spectator()
    again = desk.send("eve", SPECTATE)[0]
    assert again["type"] == "joined" and again["seat"] is None
    again = desk.send("ann", {"type": "join", "room": "Wood Lake", "seat": 0})[0]
    assert again["type"] == "joined" and again["seat"] == 0
    listing = desk.send("eve", {"type": "list_rooms"})[0]["rooms"]
    wood = next(r for r in listing if r["name"] == "Wood Lake")
    assert wood["seats"] == ["ann", "bob"] and wood["spectators"] == 1


# Moves, and games that are not running -----------------------------------------------------------

# '²' passes str.isdigit() but not int(), and 5000 digits are past int()'s limit: both used to raise
# ValueError inside the server ("the server could not handle this message")
@pytest.mark.parametrize("move", [
    pytest.param("8", id="column-8"),
    pytest.param("0", id="column-0"),
    pytest.param(8, id="integer-8"),
    pytest.param([1, 2, 3], id="list"),
    pytest.param({"col": 4}, id="map-with-another-key"),
    pytest.param(None, id="null"),
    pytest.param(True, id="true"),
    pytest.param("", id="empty"),
    pytest.param("x" * 10_000, id="10000-characters"),
    pytest.param(1.5, id="fraction"),
    pytest.param("\u00b2", id="superscript-two"),
    pytest.param("4" * 5000, id="5000-digits"),
])
def test_an_illegal_move_is_refused_briefly(move):
    reply = refused(hall_with_a_game(), "ann", {"type": "move", "room": "Wood Lake", "move": move}, "illegal_move")
    assert len(reply["message"]) < 300


@pytest.mark.parametrize(("msg", "code"), cases(
    ("move", {"type": "move", "room": "Empty Room", "move": "0101"}, "game_not_running"),
    ("resign", {"type": "resign", "room": "Empty Room"}, "game_not_running"),
))
def test_a_player_alone_in_a_room_has_no_game_to_play(msg, code):
    desk = hall_with_a_game()
    assert desk.send("ann", {"type": "join", "room": "Empty Room"})[0]["type"] == "joined"
    refused(desk, "ann", msg, code)


# Bad rooms and bad chat -----------------------------------------------------------------------

@pytest.mark.parametrize(("msg", "code"), cases(
    ("unknown-game", {"type": "create_room", "game": "chess"}, "bad_option"),
    ("unknown-option", {"type": "create_room", "game": "connect4", "options": {"size": 19}}, "bad_option"),
    ("bad-first-seat", {"type": "create_room", "game": "connect4", "options": {"first": 2}}, "bad_option"),
    ("negative-per-move", {"type": "create_room", "game": "connect4", "time_control": {"per_move": -1}},
     "bad_option"),
    ("huge-per-move", {"type": "create_room", "game": "connect4", "time_control": {"per_move": 10**9}},
     "bad_option"),
    ("unknown-time-control-field",
     {"type": "create_room", "game": "connect4", "time_control": {"per_move": 1, "extra": 1}}, "bad_option"),
    ("negative-grace", {"type": "create_room", "game": "connect4", "grace": -1}, "bad_option"),
    ("no-games", {"type": "create_room", "game": "connect4", "games": 0}, "bad_option"),
    ("unknown-illegal-move-rule", {"type": "create_room", "game": "connect4", "illegal_move": "explode"},
     "bad_option"),
    ("markup-in-name", {"type": "create_room", "game": "connect4", "name": "<script>"}, "bad_message"),
    ("41-character-name", {"type": "create_room", "game": "connect4", "name": "x" * 41}, "bad_message"),
    ("name-taken-but-for-spacing-and-case", {"type": "create_room", "game": "connect4", "name": "wood  lake"},
     "room_exists"),
))
def test_a_bad_room_is_not_created(msg, code):
    desk = hall_with_a_game()
    refused(desk, "eve", msg, code)
    assert sorted(desk.hall.rooms) == ["Empty Room", "Wood Lake"]


@pytest.mark.parametrize("text", [
    pytest.param("   ", id="blank"),
    pytest.param("x" * 501, id="501-characters"),
    pytest.param("bell\x07", id="control-character"),
])
def test_bad_chat_is_refused(text):
    refused(hall_with_a_spectator(), "eve", {"type": "chat", "room": "Wood Lake", "text": text}, "bad_message")


# Room names and the cost of looking them up ------------------------------------------------------

def test_a_long_name_that_is_no_room_is_looked_up_without_a_scan_of_every_room():
    # A lookup of a name that is no room used to casefold the (long) name once per room:
    # 0.1 s for each 60 KB name with 2000 rooms, so one client at the default rate kept the server busy.
    desk = HallDriver(limits=Limits(max_rooms=2000, max_rooms_per_name=2000, max_rooms_per_address=0))
    desk.login("spammer")
    for i in range(2000):
        assert desk.send("spammer", {"type": "create_room", "game": "connect4", "id": i})[0]["type"] == "room"
    assert len(desk.hall.rooms) == 2000
    long_name = "y" * 60_000
    for i in range(40):
        reply = refused(desk, "spammer", {"type": "move", "room": long_name, "move": "4", "id": f"m{i}"},
                        "no_such_room")
        assert reply["room"] == "y" * 40 and reply["id"] == f"m{i}"
    # lookups go through the case-folded index, never a scan of every room
    assert len(desk.hall.registry.folded) == len(desk.hall.rooms) == 2000
    # a name that differs only in case is still found
    reply = desk.send("spammer", {"type": "join", "room": "WOOD LAKE", "role": "spectator"})[0]
    assert reply["room"] == "Wood Lake"


def test_the_seek_limit_counts_games_being_played_not_finished_rooms_left_unattended():
    """A bot whose finished game's room it never left (it dropped, or is simply slow to leave) may seek again; only
    rooms still playing count against --max-seek-games-per-name."""
    desk = HallDriver(limits=Limits(max_seek_games_per_name=1))
    for name in ("ann", "bob"):
        desk.login(name)
        desk.send(name, {"type": "seek", "game": "connect4"})
    start = desk.last("ann", "game_start")
    refused = desk.send("ann", {"type": "seek", "game": "quarto"})[0]  # a game runs: the limit holds
    assert_clear_error(refused, "too_many_rooms")
    desk.send("ann", {"type": "resign", "room": start["room"]})
    assert desk.last("bob", "game_over")["room"] == start["room"]
    again = desk.send("ann", {"type": "seek", "game": "quarto"})[0]  # the room is finished, though not left
    assert again["type"] == "seeking", again


def _restarted(desk: HallDriver) -> HallDriver:
    """The hall as a restarted server rebuilds it from what ``desk`` stored; its players log in again with their
    resume tokens (an unclaimed name's seat waits for its own connection)."""
    from server.core.env import Env
    from server.core.hall import Hall
    from server.storage import SQLiteStorage

    storage = SQLiteStorage(":memory:")
    storage.apply(desk.writes)
    restored = storage.load()
    storage.close()
    again = HallDriver(Hall(Env.fixed()))
    again.hall.restore(restored, 0.0)
    for name in ("ann", "bob"):
        token = next(m["resume"] for m in reversed(desk.inbox[name]) if m["type"] == "welcome")
        again.login(name, resume=token, coords="matrix" if name == "bob" else "algebraic")
    return again


@pytest.mark.parametrize("declined", [False, True])
def test_a_draw_offer_stands_across_a_restart_until_the_opponent_moves(declined: bool):
    """An offer was forgotten by a restart: the opponent's offer_draw to accept it became a new offer, and the game
    went on. ann offers, then moves (her own move leaves the offer standing); ``declined``: bob moves after her."""
    desk = hall_with_a_game()
    desk.send("ann", {"type": "move", "room": "Wood Lake", "move": "4"})
    desk.send("bob", {"type": "move", "room": "Wood Lake", "move": "3"})  # (matrix coordinates: column d)
    desk.send("ann", {"type": "offer_draw", "room": "Wood Lake"})
    desk.send("ann", {"type": "move", "room": "Wood Lake", "move": "4"})
    if declined:
        desk.send("bob", {"type": "move", "room": "Wood Lake", "move": "3"})
    again = _restarted(desk)
    told = [m for m in again.inbox["bob"] if m["type"] in ("game_start", "draw_offered")]
    assert len(again.hall.rooms["Wood Lake"].moves) == (4 if declined else 3)
    if declined:
        assert told[-1]["type"] == "game_start"
    else:
        assert told[-2]["type"] == "game_start" and told[-1] == {"type": "draw_offered", "room": "Wood Lake", "seat": 0}
    answer = again.send("bob", {"type": "offer_draw", "room": "Wood Lake"})[-1]
    if declined:
        assert answer == {"type": "draw_offered", "room": "Wood Lake", "seat": 1}  # a new offer: ann's was declined
    else:
        assert answer["type"] == "game_over" and answer["reason"] == "draw agreed"


def test_legal_moves_are_formatted_once_a_position_and_convention():
    """Every ask formatted the position's moves again (2,176 for an Amazons opening, 2.3 ms): the answer is kept
    for the next member who asks about the same position in the same coordinates. (Connect Four here: this driver
    checks every message against a client's 64 KB limit, which an Amazons answer is over.)"""
    desk = HallDriver()
    for name, coords in (("ann", "algebraic"), ("bob", "algebraic"), ("eve", "algebraic"), ("sue", "matrix")):
        desk.login(name, coords=coords)
    desk.send("ann", {"type": "create_room", "game": "connect4", "name": "Big"})
    desk.send("ann", {"type": "join", "room": "Big", "seat": 0})
    desk.send("bob", {"type": "join", "room": "Big", "seat": 1})
    for name in ("eve", "sue"):
        desk.send(name, {"type": "join", "room": "Big", "role": "spectator"})
    asked = {name: desk.send(name, {"type": "legal_moves", "room": "Big"})[0]["moves"] for name in ("ann", "eve")}
    assert asked["ann"] is asked["eve"] and len(asked["ann"]) == 7  # made once, for both
    theirs = desk.send("sue", {"type": "legal_moves", "room": "Big"})[0]["moves"]
    assert theirs is not asked["ann"] and theirs[0] != asked["ann"][0]  # matrix's own
    for column in ("1", "1", "1", "2", "2", "2"):  # two columns filled, nobody four in a row
        desk.send("ann", {"type": "move", "room": "Big", "move": column})
        desk.send("bob", {"type": "move", "room": "Big", "move": column})
    after = desk.send("eve", {"type": "legal_moves", "room": "Big"})[0]["moves"]
    assert after is not asked["eve"] and len(after) == 5  # a new position: two columns full


def test_a_new_seek_is_told_only_to_the_seekers_whose_message_would_list_it():
    """Every seek was told to every other seeker of the game, each message listing the others: one address's 150
    names with 150 more seeks made 22,500 messages (25 MB) and held every room for 2 s."""
    desk = HallDriver()
    names = [f"s{n}" for n in range(14)]
    for n, name in enumerate(names):
        desk.login(name)
        desk.inbox[name].clear()
        desk.send(name, {"type": "seek", "game": "quarto", "time_control": {"per_move": 10 + n}})  # none pair
    told = {name: sum(m["type"] == "seeking" for m in desk.inbox[name]) for name in names}
    # s0 hears of s1 ... s10 (its message lists 10 others), and nothing after; s12 and s13 hear of nobody newer
    assert told["s0"] == 1 + 10 and told["s13"] == 1 and told["s12"] == 1, told
    assert len(desk.last("s13", "seeking")["others"]) == 10  # the newest still sees the ten oldest
