"""What a fourth hostile hunt found, through the hall (sans I/O): requests that cost the server far more than a
message (a seek sent again and again, one on settings that change each time), a series nobody plays in, a session
taken over that lost what its spectator watched, chat text that turns a page around.

The server-side costs (charged against the rate limit) and the HTTP API are in ``test_hostile_fourth_live.py``.
"""

from __future__ import annotations

import random

from server.core.room import RoomSettings
from server.core.seeks import OTHERS_SHOWN, Seek, SeekDesk, settings_key
from tests.helpers import HallDriver, assert_clear_error

SECRET = "organiser-secret"


def test_a_seek_sent_again_on_the_same_settings_reaches_nobody_else():
    """A client that sent its seek 40 times a second on 100 connections held every room: each one was withdrawn,
    made again, logged and shown to everybody seeking the game, and the lobby pushed. Sent again, it waits on as it
    was: only its sender hears ``seeking``."""
    desk = HallDriver()
    for name in ("ann", "bob", "lobby"):
        desk.login(name)
    desk.send("lobby", {"type": "watch_lobby"})
    desk.send("bob", {"type": "seek", "game": "connect4", "time_control": {"per_move": 5}})
    first = desk.send("ann", {"type": "seek", "game": "connect4", "time_control": {"per_move": 9}})
    assert [m["type"] for m in first] == ["seeking"]
    desk.tick(2)  # the lobby's pushes are spaced: what is due goes out
    told, pushed = len(desk.inbox["bob"]), len(desk.inbox["lobby"])
    since = desk.hall.seeks.seeks[settings_key(_settings(9))][0].since
    for _ in range(50):
        again = desk.send("ann", {"type": "seek", "game": "connect4", "time_control": {"per_move": 9}})
        assert [m["type"] for m in again] == ["seeking"] and again[0]["others"][0]["name"] == "bob"
    desk.tick(2)
    assert len(desk.inbox["bob"]) == told and len(desk.inbox["lobby"]) == pushed  # nobody else heard of it
    assert desk.hall.seeks.seeks[settings_key(_settings(9))][0].since == since  # the same seek waits on
    # another setting is a new seek: bob and the lobby hear of it, and a matching one still pairs at once
    desk.send("ann", {"type": "seek", "game": "connect4", "time_control": {"per_move": 7}})
    desk.tick(2)
    assert len(desk.inbox["bob"]) == told + 1 and len(desk.inbox["lobby"]) > pushed
    paired = desk.send("bob", {"type": "seek", "game": "connect4", "time_control": {"per_move": 7}})
    assert "joined" in [m["type"] for m in paired]


def _settings(per_move: float) -> RoomSettings:
    return RoomSettings.parse("connect4", None, {"per_move": per_move}, None, None, None, {"rated": True}, None)


def _shown_to_by_walking(desk: SeekDesk, found: Seek, connected: set[str]) -> list[Seek]:
    """Who is told of ``found``, as the desk worked it out before (each other's message walked, seek by seek)."""
    ordered = [s for waiting in desk.seeks.values() for s in waiting
               if s.settings.game is found.settings.game and s.name in connected]
    told = []
    for other in ordered:
        if other.key == found.key or other.name == found.name:
            continue
        shown = 0
        for seek in ordered:
            if seek is found:
                told.append(other)
                break
            if seek.key != other.key and seek.name != other.name:
                shown += 1
                if shown == OTHERS_SHOWN:
                    break
    return told


def test_who_hears_of_a_new_seek_is_worked_out_in_one_pass_as_before():
    """Those told of a seek were found by walking every other's message (100 seekers: 10,000 steps a seek); one
    pass now counts the seeks ahead by settings. Random desks: the same seeks told, in the same order."""
    rng = random.Random(7)
    settings = [_settings(s) for s in (1, 2, 3, 5, 8)] + [RoomSettings.parse(
        "quarto", None, {"per_move": 3}, None, None, None, {"rated": True}, None)]
    for trial in range(300):
        desk = SeekDesk()
        names = [f"p{n}" for n in range(rng.randint(1, 40))]
        connected = {n for n in names if rng.random() < 0.9}
        found = None
        for step in range(rng.randint(1, 60)):
            found = desk.seek(rng.choice(names), rng.choice(settings), float(step), set())  # nobody pairs
        assert isinstance(found, Seek)
        connected.add(found.name)
        assert desk.shown_to(found, connected) == _shown_to_by_walking(desk, found, connected), trial
        some = rng.choice([s for waiting in desk.seeks.values() for s in waiting])
        assert desk.shown_to(some, connected - {some.name}) == []  # a seek of a name gone tells nobody


def _series(room: str, games: int, per_move: float) -> HallDriver:
    """A hall where ann (seat 0) and bob sit in ``room``, a series of ``games`` at ``per_move`` seconds a move."""
    desk = HallDriver()
    desk.login("ann")
    desk.login("bob")
    desk.send("ann", {"type": "create_room", "game": "connect4", "name": room, "games": games,
                      "time_control": {"per_move": per_move}})
    desk.send("ann", {"type": "join", "room": room, "seat": 0})
    desk.send("bob", {"type": "join", "room": room, "seat": 1})
    return desk


def test_a_series_nobody_plays_in_ends_after_two_silent_games():
    """Two players who sat in a room of 1,000 games at 0.05 s a move and never moved recorded a game every 0.1 s
    (3,262 in 8 s in 20 rooms). A game lost on time by a player who made no move in it counts; two in a row end the
    series, and its last reason says so."""
    desk = _series("Idle", 1000, 0.05)
    for _ in range(10):
        desk.tick(0.06)
    overs = [m for m in desk.inbox["ann"] if m["type"] == "game_over"]
    assert len(overs) == 2, [o["reason"] for o in overs]
    assert overs[0]["next_game"] is True and overs[1]["next_game"] is False
    assert overs[1]["reason"].endswith("2 games in a row were lost on time without a move, so the series ends")
    assert desk.hall.rooms["Idle"].status == "finished"


def test_a_player_who_moves_keeps_the_series_going_through_lost_flags():
    """A bot that answers only when it moves first loses every other game on time without a move: never two in a row,
    so the series goes on, game after game."""
    desk = _series("Slow", 6, 1)
    for _ in range(6):
        room = desk.hall.rooms["Slow"]
        if room.seats[room.game.to_move(room.state)] == "bob":  # bob moves first: a move, ann's, then bob's flag
            desk.send("bob", {"type": "move", "room": "Slow", "move": 3})
        desk.send("ann", {"type": "move", "room": "Slow", "move": 3})
        desk.tick(1.5)  # bob's flag falls: without a move of his when ann moved first
    overs = [m for m in desk.inbox["ann"] if m["type"] == "game_over"]
    assert [o["next_game"] for o in overs] == [True] * 5 + [False], [o["reason"] for o in overs]
    assert [o["reason"] for o in overs] == ["bob ran out of time"] * 6


def test_a_spectator_that_logs_in_again_watches_on_in_its_new_coordinates():
    """A spectator took over its own session with other coordinates: ``welcome`` said matrix, but every board and
    move after it came in the old ones, and it was never told it still watched."""
    desk = HallDriver()
    desk.login("ann")
    desk.login("bob")
    desk.send("eve", {"type": "login", "name": "eve", "secret": "eve-secret", "coords": "algebraic"})
    desk.send("ann", {"type": "create_room", "game": "amazons", "name": "Wide", "time_control": {"untimed": True}})
    desk.send("ann", {"type": "join", "room": "Wide", "seat": 0})
    desk.send("bob", {"type": "join", "room": "Wide", "seat": 1})
    desk.send("eve", {"type": "join", "room": "Wide", "role": "spectator"})
    back = desk.send("eve2", {"type": "login", "name": "eve", "secret": "eve-secret", "coords": "matrix"})
    assert back[0]["type"] == "welcome"
    assert any(m["type"] == "joined" and m["room"] == "Wide" and m["seat"] is None for m in back), back
    desk.send("ann", {"type": "move", "room": "Wide", "move": "d10-d7/g7"})
    moved = desk.last("eve2", "moved")
    assert moved["move"] == {"queen": [0, 3], "to": [3, 3], "arrow": [3, 6]}, moved


def test_a_tournament_watched_is_watched_on_after_a_login_elsewhere():
    desk = HallDriver(organiser_secret=SECRET)
    desk.send("org", {"type": "login", "name": "org", "secret": "org-secret", "organiser": SECRET})
    desk.send("org", {"type": "tournament_create", "name": "Cup", "game": "connect4", "format": "round-robin",
                      "players": ["ann", "bob", "cy"], "time_control": {"untimed": True}})
    desk.send("org", {"type": "watch_tournament", "tournament": "Cup"})
    desk.send("org2", {"type": "login", "name": "org", "secret": "org-secret", "organiser": SECRET})
    before = len([m for m in desk.inbox["org2"] if m["type"] == "tournament"])
    desk.send("org2", {"type": "tournament_control", "tournament": "Cup", "action": "cancel"})
    desk.tick(5)
    pushed = [m for m in desk.inbox["org2"] if m["type"] == "tournament"]
    assert len(pushed) > before + 1 and pushed[-1]["tournament"]["status"] == "cancelled", pushed[-1:]


def test_chat_text_may_not_hold_control_characters_or_direction_overrides():
    desk = HallDriver()
    desk.login("ann")
    desk.send("ann", {"type": "create_room", "game": "connect4", "name": "Talk"})
    desk.send("ann", {"type": "join", "room": "Talk", "seat": 0})
    for text in ("csi \x9b31m red", "del \x7f", "evil \u202egnp.exe", "isolate \u2067x", "line\nbreak"):
        refused = desk.send("ann", {"type": "chat", "room": "Talk", "text": text})[0]
        assert_clear_error(refused, "bad_message", text)
        assert "no control characters" in refused["message"]
    for text in ("tab\tok", "héllo, 👍🏽 z\u200dw", "שלום"):  # tabs, accents, emoji with joiners, right-to-left script
        assert desk.send("ann", {"type": "chat", "room": "Talk", "text": text})[0]["type"] == "chat", text


def test_an_events_view_is_kept_a_moment_but_never_past_a_change():
    """An event of 100 entrants took 11 ms to show, at every request: its view is kept for a second once made, and
    made again as soon as the event changes."""
    desk = HallDriver(organiser_secret=SECRET)  # the clock stands still: only a change makes a view again
    desk.send("org", {"type": "login", "name": "org", "organiser": SECRET})
    for name in ("ann", "bob"):
        desk.login(name)
    desk.send("org", {"type": "tournament_create", "name": "Cup", "game": "connect4", "format": "round-robin",
                      "players": ["ann", "bob"], "time_control": {"untimed": True}})
    first = desk.send("org", {"type": "watch_tournament", "tournament": "Cup"})[-1]["tournament"]
    director = desk.hall.events.tournaments["cup"]
    assert desk.hall.tournament_view(director, desk.now) is desk.hall.tournament_view(director, desk.now)
    assert first["status"] == "created"
    desk.send("org", {"type": "tournament_control", "tournament": "Cup", "action": "start"})
    again = desk.send("org", {"type": "watch_tournament", "tournament": "Cup"})[-1]["tournament"]
    assert again["status"] == "running" and again["running"], again["status"]
    room = desk.hall.rooms[again["running"][0]["name"]]
    first_mover = room.seats[room.game.to_move(room.state)]
    desk.send(first_mover, {"type": "resign", "room": room.name})
    done = desk.send("org", {"type": "watch_tournament", "tournament": "Cup"})[-1]["tournament"]
    assert done["progress"]["done"] == 1, done["progress"]
