"""The lobby listing says what the lobby page needs (issue 43, item 7): who seeks which game (read-only, like
lichess's seek list), and each room's players and result even once a bot has left its seat.

Driven without a network through ``tests.helpers.HallDriver`` (every message checked against the server schemas).
"""

from __future__ import annotations

from tests.helpers import HallDriver


def test_the_listing_names_who_seeks_and_a_watcher_sees_seeks_come_and_go():
    desk = HallDriver(step=1.0)
    desk.login("watcher")
    desk.login("ann")
    assert "seeks" not in desk.send("watcher", {"type": "watch_lobby"})[0]  # nobody seeks
    desk.send("ann", {"type": "seek", "game": "quarto", "time_control": {"per_move": 30}})
    pushed = desk.last("watcher", "rooms")
    assert [(s["name"], s["game"], s["time_control"]) for s in pushed["seeks"]] == [("ann", "quarto", {"per_move": 30})]
    listed = desk.send("watcher", {"type": "list_rooms"})[0]
    assert [s["name"] for s in listed["seeks"]] == ["ann"]
    desk.tick(1.0)  # past the lobby's push interval
    desk.send("ann", {"type": "cancel_seek", "game": "quarto"})
    desk.tick(1.0)
    assert "seeks" not in desk.send("watcher", {"type": "list_rooms"})[0]
    assert "seeks" not in desk.last("watcher", "rooms")  # the cancel was pushed to the watcher too


def test_a_seek_of_a_player_who_left_is_not_listed_and_the_watchers_are_told():
    desk = HallDriver(step=1.0)
    desk.login("watcher")
    desk.login("bob")
    desk.send("watcher", {"type": "watch_lobby"})
    desk.send("bob", {"type": "seek", "game": "connect4"})
    assert [s["name"] for s in desk.last("watcher", "rooms")["seeks"]] == ["bob"]
    desk.disconnect("bob")
    desk.tick(1.0)  # past the lobby's push interval
    assert "seeks" not in desk.last("watcher", "rooms")
    assert "seeks" not in desk.send("watcher", {"type": "list_rooms"})[0]


def test_a_finished_room_keeps_its_players_and_result_after_the_seats_empty():
    desk = HallDriver()
    desk.login("ann")
    desk.login("bob")
    desk.send("ann", {"type": "create_room", "game": "connect4", "name": "Wood Lake"})
    desk.send("ann", {"type": "join", "room": "Wood Lake", "seat": 0})
    desk.send("bob", {"type": "join", "room": "Wood Lake", "seat": 1})
    room = desk.send("ann", {"type": "list_rooms"})[0]["rooms"][0]
    assert room["players"] == ["ann", "bob"] and "result" not in room  # playing: no result yet
    desk.send("bob", {"type": "resign", "room": "Wood Lake"})
    desk.send("bob", {"type": "leave", "room": "Wood Lake"})
    room = desk.send("ann", {"type": "list_rooms"})[0]["rooms"][0]
    assert room["status"] == "finished" and room["seats"] == ["ann", None]
    assert room["players"] == ["ann", "bob"]
    assert room["result"]["winner"] == "ann" and "bob" in room["result"]["reason"]


def test_a_listed_seek_sent_back_as_it_is_listed_pairs_at_once():
    """The lobby's *Play* beside a seek sends a seek of the listed game and settings: it must pair with it."""
    desk = HallDriver()
    desk.login("ann")
    desk.login("bob")
    for time_control in (None, {"initial": 300, "increment": 3}):
        seek = {"type": "seek", "game": "quarto"} | ({"time_control": time_control} if time_control else {})
        desk.send("ann", seek)
        listed = desk.send("bob", {"type": "list_rooms"})[0]["seeks"][0]
        answer = {"type": "seek", **{key: listed[key] for key in ("game", "time_control", "games", "rated")}}
        assert [m["type"] for m in desk.send("bob", answer)][0] == "joined", listed
        assert "seeks" not in desk.send("bob", {"type": "list_rooms"})[0]  # both seeks are gone once paired
        for name in ("ann", "bob"):
            room = desk.last(name, "joined")["room"]
            desk.send(name, {"type": "resign", "room": room})
            desk.send(name, {"type": "leave", "room": room})
