"""A time margin (cutechess-cli's ``timemargin``): a move arriving less than the margin after its clock ran out still
counts, the overrun of a game clock is charged, the margin is checked when set, and it is recorded with every game of
a room and of a tournament (settings, records, the API's view, ``plyhall tournament``'s flag)."""

from __future__ import annotations

import argparse

import pytest

from client.tournament import TournamentCliError, definition
from protocol.games import OptionError
from server.core.clock import TimeControl
from server.core.env import Env
from server.core.room import Room, RoomSettings
from server.storage import SQLiteStorage
from tests.helpers import HallDriver

SECRET = "organiser-secret"


def seated(time_control: dict) -> Room:
    """A Connect Four room of ann (seat 0, to move) and bob, its clock started at 0."""
    room = Room("Lake", RoomSettings.parse("connect4", time_control=time_control), Env.fixed(1000.0))
    room.join("ann", "algebraic", 0.0)
    room.join("bob", "algebraic", 0.0)
    return room


def over(out) -> dict | None:
    """The game_over in an outbox, if any."""
    return next((m for _, m in out.messages if m["type"] == "game_over"), None)


def test_a_move_inside_the_margin_counts_and_one_after_it_loses_on_time():
    room = seated({"per_move": 2, "margin": 0.5})
    assert room.next_deadline() == 2.5  # the flag falls when the margin is spent too
    assert over(room.tick(2.4)) is None
    out = room.move("ann", "4", 2.4)  # 0.4 s after the clock ran out
    assert over(out) is None and room.moves[-1].notation == "4"
    assert room.clocks.left(0, 2.4) == 2.0  # a per-move clock starts full again: the overrun is not carried
    moved = next(m for _, m in out.messages if m["type"] == "moved")
    assert moved["clocks"]["control"] == {"per_move": 2.0, "margin": 0.5} and min(moved["clocks"]["left"]) >= 0
    out = room.move("bob", "4", 2.4 + 2.5)  # bob's move comes as his margin ends: too late
    assert over(out) is not None and over(out)["winner"] == 0 and "ran out of time" in over(out)["reason"]


def test_without_a_margin_the_flag_falls_when_the_clock_runs_out():
    room = seated({"per_move": 2})
    assert room.next_deadline() == 2.0
    assert over(room.move("ann", "4", 2.1))["winner"] == 1


def test_a_game_clock_is_charged_the_overrun_so_the_margin_is_no_fresh_allowance_each_move():
    room = seated({"initial": 2, "margin": 0.5})
    room.move("ann", "4", 2.3)  # 0.3 s into the margin: counts, and ann's clock is 0.3 s below zero
    assert room.clocks.remaining[0] == pytest.approx(-0.3) and room.clocks.left(0, 2.3) == 0.0
    room.move("bob", "4", 2.4)
    assert room.next_deadline() == pytest.approx(2.4 + 0.2)  # what is left of the margin, not another 0.5 s
    out = room.move("ann", "3", 2.65)
    assert over(out)["winner"] == 1 and "ann ran out of time" == over(out)["reason"]


@pytest.mark.parametrize(("bad", "says"), [
    ({"per_move": 30, "margin": -1}, "margin must be a number of seconds from 0 to 60"),
    ({"per_move": 30, "margin": 61}, "margin must be a number of seconds from 0 to 60"),
    ({"per_move": 30, "margin": "3"}, "margin must be a number of seconds"),
    ({"per_move": 30, "margin": True}, "margin must be a number of seconds"),
    ({"untimed": True, "margin": 3}, "margin needs a clock"),
    ({"margin": 3}, "time_control is"),
])
def test_bad_margins_are_refused_with_what_is_accepted(bad, says):
    with pytest.raises(OptionError, match=says):
        TimeControl.parse(bad)


def test_a_margin_alone_keeps_the_servers_clock():
    settings = RoomSettings.parse("connect4", time_control={"margin": 2}, defaults={"time_control": {"per_move": 30}})
    assert settings.time_control.to_json() == {"per_move": 30.0, "margin": 2.0}
    with pytest.raises(OptionError, match="margin needs a clock"):
        RoomSettings.parse("connect4", time_control={"margin": 2}, defaults={"time_control": {"untimed": True}})
    assert TimeControl.parse({"per_move": 30}).to_json() == {"per_move": 30.0}  # no margin: the same form as ever


def test_a_rooms_margin_is_in_its_listing_and_its_records():
    desk = HallDriver()
    desk.login("ann")
    desk.login("bob")
    created = desk.send("ann", {"type": "create_room", "name": "Slack", "game": "connect4",
                                "time_control": {"per_move": 5, "margin": 1.5}})[0]
    assert created["room"]["time_control"] == {"per_move": 5.0, "margin": 1.5}
    desk.send("ann", {"type": "join", "room": "Slack"})
    desk.send("bob", {"type": "join", "room": "Slack"})
    start = desk.last("ann", "game_start")
    assert start["clocks"]["control"]["margin"] == 1.5
    desk.send("ann", {"type": "move", "room": "Slack", "move": "4"}, dt=6.0)  # 1 s over its 5 s: still on time
    assert desk.last("bob", "moved")["seq"] == 1
    refused = desk.send("ann", {"type": "create_room", "name": "Tight", "game": "connect4",
                                "time_control": {"per_move": 5, "margin": 600}})[0]
    assert refused["code"] == "bad_option" and "margin" in refused["message"]
    storage = SQLiteStorage(":memory:")
    storage.apply(desk.writes)
    (record,) = storage.list_games(10, status="all")
    assert record["time_control"] == {"per_move": 5.0, "margin": 1.5}


def args(**given) -> argparse.Namespace:
    """The flags of ``plyhall tournament create``, as argparse gives them."""
    keys = ("file", "name", "game", "format", "players", "local", "games_per_pairing", "cycles", "rounds",
            "time_control", "time_margin", "concurrency", "openings", "plies", "illegal_move", "grace", "sprt",
            "options")
    return argparse.Namespace(**{key: given.get(key) for key in keys})


def test_the_tournament_flag_is_milliseconds_checked_and_goes_with_the_clock():
    request = definition(args(game="amazons", format="round-robin", players="a,b", time_control="30",
                              time_margin="3000"))
    assert request["time_control"] == {"per_move": 30.0, "margin": 3.0}
    request = definition(args(game="amazons", format="round-robin", players="a,b", time_margin="2500"))
    assert request["time_control"] == {"margin": 2.5}  # the server's clock, with the margin
    for bad in ("-5", "1.5", "60001", "lots"):
        with pytest.raises(TournamentCliError, match="time_margin"):
            definition(args(game="amazons", format="round-robin", players="a,b", time_margin=bad))


def test_a_tournaments_margin_is_in_its_settings_and_every_games_record():
    desk = HallDriver(organiser_secret=SECRET, room_defaults={"time_control": {"per_move": 30}})
    desk.login("org", organiser=SECRET)
    desk.login("ann")
    desk.login("bob")
    refused = desk.send("org", {"type": "tournament_create", "name": "Bad", "game": "connect4",
                                "format": "round-robin", "players": ["ann", "bob"],
                                "time_control": {"per_move": 30, "margin": -2}})[0]
    assert refused["code"] == "bad_option" and "margin" in refused["message"]
    view = desk.send("org", {"type": "tournament_create", "name": "Course", "game": "connect4",
                             "format": "round-robin", "players": ["ann", "bob"], "games_per_pairing": 1,
                             "time_control": {"margin": 2}, "start": True})[-1]["tournament"]
    assert view["settings"]["room"]["time_control"] == {"margin": 2}
    room = next(r for r in desk.hall.rooms.values() if r.tournament == "course")
    assert room.listing()["time_control"] == {"per_move": 30.0, "margin": 2.0}
    assert view["running"][0]["time_control"] == {"per_move": 30.0, "margin": 2.0}
    seat, players = room.game.to_move(room.state), list(room.seats)  # (the entrants leave the room at the end)
    desk.send(players[seat], {"type": "move", "room": room.name, "move": "4"}, dt=31.0)  # 1 s into the margin
    assert len(room.moves) == 1 and room.status == "playing"
    desk.tick(32.5)  # the other seat spends its 30 s and its margin
    assert room.status == "finished" and room.last_result["reason"] == f"{players[1 - seat]} ran out of time"
    storage = SQLiteStorage(":memory:")
    storage.apply(desk.writes)
    (record,) = storage.list_games(10, tournament="course", status="all")
    assert record["time_control"] == {"per_move": 30.0, "margin": 2.0}
