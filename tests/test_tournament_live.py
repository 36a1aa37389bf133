"""Tournaments through the hall (sans I/O) and through live processes: an organiser's whole event, forfeits,
a restart in the middle, and the figures agreeing with the stored records."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from client.play_loop import PlayerRunner, RunOptions
from client.player import FunctionPlayer
from client.thinker import Thinker
from protocol.messages import FEATURES
from server.core.env import Env
from server.core.hall import Hall
from server.storage import SQLiteStorage
from tests.conftest import free_port
from tests.helpers import HallDriver, http_json, plyhall, read_until, start_server, stop

SECRET = "organiser-secret"


def organiser_desk() -> HallDriver:
    """A hall with an organiser, driven by hand: clients by name, every message and write kept."""
    return HallDriver(organiser_secret=SECRET)


def play_running_games(desk: HallDriver, rng: random.Random) -> None:
    """Every seated entrant plays random legal moves until no game runs."""
    while True:
        playing = [r for r in desk.hall.rooms.values() if r.status == "playing" and not r.paused]
        if not playing:
            return
        for room in playing:
            seat = room.game.to_move(room.state)
            move = rng.choice(room.game.legal_moves(room.state))
            desk.send(room.seats[seat], {"type": "move", "room": room.name, "move": room.game.notation(move)})
            if room.status != "playing":
                for name in list(room.seats):
                    if name is not None:
                        desk.send(name, {"type": "leave", "room": room.name})


def test_a_round_robin_runs_to_the_end_and_its_figures_match_the_records():
    desk = organiser_desk()
    for name in ("ann", "bob", "cy", "dee"):
        desk.login(name)
    desk.login("org", organiser=SECRET)
    refused = desk.send("ann", {"type": "tournament_create", "game": "connect4", "format": "round-robin"})[0]
    assert refused["code"] == "not_organiser"
    reply = desk.send("org", {"type": "tournament_create", "name": "Cup", "game": "connect4", "format": "round-robin",
                              "players": ["ann", "bob", "cy", "dee"], "concurrency": 2, "start": True,
                              "time_control": {"untimed": True}})[-1]
    event = reply["tournament"]
    assert event["status"] == "running" and event["progress"]["total"] == 12
    # entrants are seated without asking, two games at a time, nobody twice at once
    rooms = [r for r in desk.hall.rooms.values() if r.tournament == "cup"]
    assert len(rooms) == 2 and len({n for r in rooms for n in r.seats}) == 4
    assert desk.send("ann", {"type": "seek", "game": "connect4"})[0]["code"] == "in_tournament"
    play_running_games(desk, random.Random(1))
    event = desk.send("org", {"type": "watch_tournament", "tournament": "Cup"})[0]["tournament"]
    assert event["status"] == "finished" and event["progress"]["done"] == 12
    # the stored records give the same totals and crosstable as the standings
    storage = SQLiteStorage(":memory:")
    storage.apply(desk.writes)
    records = storage.list_games(500, tournament="cup")
    assert len(records) == 12 and all(r["status"] == "finished" for r in records)
    points: dict[str, float] = {}
    cross: dict[tuple[str, str], list[str]] = {}
    for record in sorted(records, key=lambda r: r["tournament_game"]):
        white, black = record["players"]
        for name, opponent, seat in ((white, black, 0), (black, white, 1)):
            score = 0.5 if record["winner"] is None else 1.0 if record["winner"] == seat else 0.0
            points[name] = points.get(name, 0.0) + score
            cross.setdefault((name, opponent), []).append({1.0: "1", 0.5: "=", 0.0: "0"}[score])
    standings = event["standings"]
    assert {row["name"]: row["points"] for row in standings["rows"]} == points
    assert sum(points.values()) == 12
    for (name, opponent), marks in cross.items():
        assert sorted(standings["crosstable"][name][opponent]) == sorted(marks)
    assert all(row["elo"] is not None and row["elo_margin"] > 0 for row in standings["rows"])


def test_entrants_leave_each_game_s_room_when_it_ends():
    """docs/PROTOCOL.md §15: an entrant does nothing but log in, and leaves each room after its game_over. A client
    that did not leave by itself stayed seated in the finished room, and was told of its old opponent's drop there."""
    desk = organiser_desk()
    for name in ("ann", "bob"):
        desk.login(name)
    desk.login("org", organiser=SECRET)
    desk.send("org", {"type": "tournament_create", "name": "Duo", "game": "connect4", "format": "round-robin",
                      "players": ["ann", "bob"], "games_per_pairing": 2, "concurrency": 1, "start": True,
                      "time_control": {"untimed": True}})
    first = next(r for r in desk.hall.rooms.values() if r.tournament == "duo")
    rng = random.Random(2)
    while first.status == "playing":
        seat = first.game.to_move(first.state)
        move = first.game.notation(rng.choice(first.game.legal_moves(first.state)))
        desk.send(first.seats[seat], {"type": "move", "room": first.name, "move": move})
    assert first.name not in desk.hall.rooms  # both left it, and it closed
    second = next(r for r in desk.hall.rooms.values() if r.tournament == "duo")
    assert second.status == "playing" and sorted(second.seats) == ["ann", "bob"]
    desk.inbox["ann"].clear()
    desk.disconnect("bob")
    assert [(m["type"], m["room"]) for m in desk.inbox["ann"] if m["type"] == "player_away"] == [
        ("player_away", second.name)]


def test_an_absent_entrant_forfeits_after_the_grace_period_and_a_late_one_plays_on():
    desk = organiser_desk()
    desk.login("org", organiser=SECRET)
    desk.login("ann")
    desk.send("org", {"type": "tournament_create", "name": "Late", "game": "quarto", "format": "round-robin",
                      "players": ["ann", "bob"], "games_per_pairing": 2, "concurrency": 1, "grace": 10,
                      "start": True, "time_control": {"untimed": True}})
    room = next(r for r in desk.hall.rooms.values() if r.tournament == "late")
    bob_seat = room.seats.index("bob")
    assert sorted(room.seats) == ["ann", "bob"] and bob_seat in room.away  # bob's seat waits for him
    desk.tick(11.0)
    over = desk.last("ann", "game_over")
    assert over["status"] == "forfeit" and over["winner"] == 1 - bob_seat and "did not come" in over["reason"]
    desk.send("ann", {"type": "leave", "room": room.name})
    # bob arrives for the second game (colours swapped) and plays it
    desk.login("bob")
    second = desk.last("bob", "game_start")
    assert second["players"][1 - bob_seat] == "bob"
    play_running_games(desk, random.Random(2))
    event = desk.send("org", {"type": "watch_tournament", "tournament": "late"})[0]["tournament"]
    rows = {row["name"]: row for row in event["standings"]["rows"]}
    assert rows["ann"]["forfeit_wins"] == 1 and rows["bob"]["forfeit_losses"] == 1
    assert rows["ann"]["played"] + rows["bob"]["played"] == 2  # the forfeit is not a played game
    assert [g["status"] for g in event["schedule"]] == ["forfeit", "finished"]


def test_a_restored_hall_finishes_the_event_without_playing_a_game_twice():
    desk = organiser_desk()
    desk.login("org", organiser=SECRET)
    for name in ("ann", "bob", "cy"):
        desk.login(name, secret=f"{name}-pw")
    desk.send("org", {"type": "tournament_create", "name": "Restart", "game": "connect4",
                      "format": "double-round-robin", "players": ["ann", "bob", "cy"], "games_per_pairing": 1,
                      "concurrency": 1, "start": True, "time_control": {"untimed": True}})
    rng = random.Random(3)
    # two games to the end, then a few moves of the third: the server dies there
    for _ in range(2):
        room = next(r for r in desk.hall.rooms.values() if r.status == "playing")
        while room.status == "playing":
            move = rng.choice(room.game.legal_moves(room.state))
            desk.send(room.seats[room.game.to_move(room.state)], {"type": "move", "room": room.name,
                                                                  "move": room.game.notation(move)})
        for name in room.seats:
            desk.send(name, {"type": "leave", "room": room.name})
    room = next(r for r in desk.hall.rooms.values() if r.status == "playing")
    for _ in range(3):
        desk.send(room.seats[room.game.to_move(room.state)], {"type": "move", "room": room.name,
                                                              "move": room.game.notation(room.game.legal_moves(
                                                                  room.state)[0])})
    storage = SQLiteStorage(":memory:")
    storage.apply(desk.writes)
    restored = storage.load()
    again = HallDriver(Hall(Env.fixed(first=1000), organiser_secret=SECRET))
    again.now = 500.0
    again.hall.restore(restored, again.now)
    again.take(again.hall.resume_tournaments(again.now))
    event = again.hall.tournaments["restart"]
    assert len(event.ended_games) == 2 and len(event.open) == 1
    for name in ("ann", "bob", "cy"):
        again.login(name, secret=f"{name}-pw")
    resumed = next(r for r in again.hall.rooms.values() if r.status == "playing")
    assert len(resumed.moves) == 3 and not resumed.paused
    play_running_games(again, rng)
    assert event.status == "finished" and len(event.ended_games) == 6
    storage.apply(again.writes)
    records = storage.list_games(500, tournament="restart")
    assert sorted(r["tournament_game"] for r in records) == [1, 2, 3, 4, 5, 6]  # each game once


def test_bad_definitions_are_refused_with_the_reason():
    desk = organiser_desk()
    desk.login("org", organiser=SECRET)
    cases = [
        ({"format": "knockout"}, "round-robin"),
        ({"players": ["ann"]}, "at least 2"),
        ({"players": ["ann", "ann"]}, "twice"),
        ({"players": ["ann", "house-x"]}, "local"),
        ({"local": ["grandmaster"]}, "levels"),
        ({"local": ["master", "novice"]}, "--house-bots"),
        ({"format": "swiss", "rounds": 9}, "at most"),
        ({"sprt": {"elo0": 0, "elo1": 20}}, "gauntlet"),
        ({"time_control": {"per_move": -1}}, "per_move"),
        ({"openings": {"text": "9 9 9 9 9 9 9"}}, "line 1"),
        # an event too big to schedule is refused before anything is built (this one froze the server for
        # minutes and took gigabytes): the games it would play, and the options that make them
        ({"format": "double-round-robin", "cycles": 100_000, "games_per_pairing": 1_000},
         "at most 10,000 games; this one would play 600,000,000 (3 entrants, double-round-robin, cycles 100,000"),
        ({"players": [f"p{k}" for k in range(300)]}, "at most 256 entrants, not 300"),
    ]
    for change, words in cases:
        msg = {"type": "tournament_create", "game": "connect4", "format": "round-robin",
               "players": ["ann", "bob", "cy"], **change}
        reply = desk.send("org", msg)[0]
        assert reply["type"] == "error" and words in reply["message"], (change, reply)


@pytest.fixture
def tournament_server(tmp_path):
    port = free_port()
    proc = start_server(tmp_path / "cup.db", port, "--organiser-secret", SECRET)
    yield port, tmp_path / "cup.db"
    stop(proc)


def entrant(name: str, level: str, url: str) -> subprocess.Popen:
    return plyhall("bot", "--game", "connect4", "--level", level, "--name", name, "--secret", f"{name}-pw",
                   "--tournament", "cup", "--url", url)


def test_the_documented_commands_run_a_round_robin_of_four_bots(tournament_server):
    port, _ = tournament_server
    url = f"ws://127.0.0.1:{port}/ws"
    bots = [entrant(name, level, url) for name, level in (("r1", "random"), ("r2", "random"), ("n1", "novice"),
                                                           ("n2", "novice"))]
    try:
        run = subprocess.run([*PLYHALL, "tournament", "run", "--url", url, "--secret", SECRET, "--name", "Cup",
                              "--game", "connect4", "--format", "round-robin", "--players", "r1,r2,n1,n2",
                              "--time-control", "10", "--concurrency", "2"],
                             capture_output=True, text=True, timeout=240)
        outputs = [b.communicate(timeout=60) for b in bots]
    finally:
        for bot in bots:
            stop(bot)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "12/12 games" in run.stdout and "(finished)" in run.stdout and "Rank" in run.stdout
    for bot, (out, err) in zip(bots, outputs, strict=True):
        assert bot.returncode == 0 and "tournament Cup is finished" in out, out + err
        # a room a game, so each is game 1 of its room; the bot's own count goes on (no total: it plays on)
        counts = re.findall(r"^game 1 in .*: (?:won|drew|lost) against .*; \w+'s game (\d+), score ", out, re.M)
        assert counts == [str(n) for n in range(1, 7)], out
    status, event = http_json(port, "/api/tournaments/cup")
    status, games = http_json(port, "/api/games?tournament=cup&limit=500")
    assert len(games["games"]) == 12 and sum(row["points"] for row in event["standings"]["rows"]) == 12
    results = subprocess.run([*PLYHALL, "tournament", "results", "Cup", "--url", url, "--csv"],
                             capture_output=True, text=True, timeout=60)
    assert results.returncode == 0 and results.stdout.splitlines()[0].startswith("rank,name,points")


def test_a_tournament_survives_the_server_being_killed(tmp_path):
    port, db = free_port(), tmp_path / "crash.db"
    url = f"ws://127.0.0.1:{port}/ws"
    server = start_server(db, port, "--organiser-secret", SECRET)
    bots = [entrant(name, "minimax-3", url) for name in ("m1", "m2", "m3")]
    try:
        made = subprocess.run([*PLYHALL, "tournament", "create", "--url", url, "--secret", SECRET, "--name", "Cup",
                               "--game", "connect4", "--format", "double-round-robin", "--players", "m1,m2,m3",
                               "--games-per-pairing", "1", "--time-control", "30", "--start"],
                              capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        wait_for(lambda: http_json(port, "/api/tournaments/cup")[1]["progress"]["done"] >= 2, 120)
        server.send_signal(signal.SIGKILL)  # the real server process dies at once: no goodbye, no flush
        server.communicate(timeout=30)
        server = start_server(db, port, "--organiser-secret", SECRET)
        wait_for(lambda: http_json(port, "/api/tournaments/cup")[1]["status"] == "finished", 240)
        outputs = [bot.communicate(timeout=60) for bot in bots]
    finally:
        for bot in bots:
            stop(bot)
        stop(server)
    for bot, (out, err) in zip(bots, outputs, strict=True):
        assert bot.returncode == 0 and "tournament Cup is finished" in out, out + err
    storage = SQLiteStorage(db)
    records = storage.list_games(500, tournament="cup", status="all")
    storage.close()
    numbers = sorted(r["tournament_game"] for r in records if r["status"] in ("finished", "forfeit"))
    assert numbers == [1, 2, 3, 4, 5, 6], records  # every scheduled game once, none twice


PLYHALL = [sys.executable, "-m", "plyhall"]


def wait_for(condition: Any, timeout: float) -> None:
    """Poll ``condition`` until it holds (AssertionError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_the_cli_takes_a_toml_file_and_steers_the_event(tournament_server, tmp_path):
    port, _ = tournament_server
    url = f"ws://127.0.0.1:{port}/ws"
    openings = tmp_path / "first-plies.txt"
    openings.write_text("# two first plies each\n4 4\n3 5\n", encoding="utf-8")
    (tmp_path / "cup.toml").write_text(
        'name = "Toml Cup"\ngame = "connect4"\nformat = "swiss"\nrounds = 2\nplayers = ["a", "b", "c", "d"]\n'
        'time_control = "5m+2s"\nopenings = "first-plies.txt"\nconcurrency = 2\n', encoding="utf-8")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*PLYHALL, "tournament", *args, "--url", url, "--secret", SECRET],
                              capture_output=True, text=True, timeout=60)

    made = cli("create", "--file", str(tmp_path / "cup.toml"), "--games-per-pairing", "1")
    assert made.returncode == 0 and "Toml Cup (id toml-cup)" in made.stdout and "4 games" in made.stdout, made.stderr
    event = http_json(port, "/api/tournaments/toml-cup")[1]
    assert event["settings"]["room"]["time_control"] == {"initial": 300.0, "increment": 2.0}
    assert event["settings"]["openings"] == [["4", "4"], ["3", "5"]] and event["status"] == "created"
    for action, status in (("start", "running"), ("pause", "paused"), ("resume", "running"), ("cancel", "cancelled")):
        done = cli(action, "Toml Cup")
        assert done.returncode == 0 and done.stdout.strip().endswith(status), done.stderr
    assert cli("start", "toml-cup").returncode == 1  # a cancelled event does not start again
    listing = cli("list")
    assert "toml-cup" in listing.stdout and "cancelled" in listing.stdout
    bad = cli("create", "--game", "connect4", "--format", "round-robin", "--players", "a,b", "--time-control", "soon")
    assert bad.returncode == 2 and "5m+2s" in bad.stderr
    quiet = {k: v for k, v in os.environ.items() if k != "PLYHALL_ORGANISER_SECRET"}

    def anybody(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*PLYHALL, "tournament", *args, "--url", url], capture_output=True, text=True,
                              timeout=60, env=quiet)

    nobody = anybody("start", "toml-cup")  # steering needs the organiser secret
    assert nobody.returncode == 2 and "organiser secret" in nobody.stderr
    assert "toml-cup" in anybody("list").stdout  # reading what /api/tournaments shows anybody does not
    status = anybody("status", "Toml Cup")
    assert status.returncode == 0 and "0/4 games" in status.stdout and "(cancelled)" in status.stdout, status.stderr


def test_an_entrant_whose_game_over_was_lost_in_a_crash_still_ends_with_its_event():
    """A server that died after storing a game's result but before sending its game_over leaves the entrant's
    bot following a game that is over. When the news that the event is over comes, the bot stops all the same,
    and says which game's end it did not hear (it used to wait for that game_over for ever)."""
    desk = organiser_desk()
    for name in ("org", "ann", "bob"):
        desk.login(name, **({"organiser": SECRET} if name == "org" else {}))
    desk.send("org", {"type": "tournament_create", "name": "Cup", "game": "connect4", "format": "round-robin",
                      "players": ["ann", "bob"], "games_per_pairing": 1, "start": True,
                      "time_control": {"untimed": True}})
    said: list[str] = []
    runner = hand_driven_bot(RunOptions(name="ann", game="connect4", tournament="Cup", on_status=said.append))

    async def follow() -> None:
        runner._tournament_news(desk.send("ann", {"type": "watch_tournament", "tournament": "Cup"})[0]["tournament"])
        seen, rng = 0, random.Random(3)
        while not runner.finished:
            inbox = desk.inbox["ann"][seen:]
            seen += len(inbox)
            for msg in inbox:
                if msg["type"] != "game_over":  # lost with the server that died
                    await runner._on_message(Relay(desk, "ann"), msg)
            room = next((r for r in desk.hall.rooms.values() if r.tournament == "cup"), None)
            if not inbox and room is not None and room.status == "playing":
                assert room.seats[room.game.to_move(room.state)] == "bob"  # the bot answers at once
                move = rng.choice(room.game.legal_moves(room.state))
                desk.send("bob", {"type": "move", "room": room.name, "move": room.game.notation(move)})
            assert inbox or room is not None and room.status == "playing", said

    asyncio.run(asyncio.wait_for(follow(), 30))
    runner.thinker.close()
    room = desk.last("ann", "game_start")["room"]
    assert desk.last("ann", "game_over")["room"] == room  # the game did end, and the hall sent its end
    assert said[-2:] == [f"the end of the game in {room} was not heard (a server restarted); the tournament's "
                         "standings count it", "tournament Cup is finished"]
    assert runner.rooms == {}


def test_a_bot_away_when_its_game_ended_counts_the_result_on_coming_back():
    """bob's bot lost its connection (or the game_over to it was lost with a server that died right after
    storing the result) while ann resigned: back in his seat, the room's state with its last result ends the game
    for the bot as the game_over would have, so it counts the game and goes on instead of waiting for ever."""
    desk = HallDriver()
    desk.login("ann")
    token = desk.login("bob")["resume"]
    desk.send("ann", {"type": "create_room", "name": "Lake", "game": "connect4", "grace": 30})
    desk.send("ann", {"type": "join", "room": "Lake", "seat": 0})
    desk.send("bob", {"type": "join", "room": "Lake", "seat": 1})
    runner = hand_driven_bot(RunOptions(name="bob", game="connect4", room="Lake", games=1))
    relay = Relay(desk, "bob")

    async def follow() -> None:
        for msg in desk.inbox["bob"]:
            await runner._on_message(relay, msg)
        desk.send("ann", {"type": "move", "room": "Lake", "move": "4"})
        await runner._on_message(relay, desk.last("bob", "moved"))  # the bot answers
        assert desk.hall.rooms["Lake"].notations == ["4", "1"]
        desk.disconnect("bob")
        desk.send("ann", {"type": "resign", "room": "Lake"})
        seen = len(desk.inbox["bob"])
        desk.login("bob", resume=token)
        for msg in desk.inbox["bob"][seen:]:
            await runner._on_message(relay, msg)

    asyncio.run(asyncio.wait_for(follow(), 30))
    runner.thinker.close()
    assert [m["type"] for m in desk.inbox["bob"]].count("game_over") == 0  # the hall never reached him with it
    [result] = runner.results
    assert result.room == "Lake" and result.winner == 1 and result.seat == 1 and "resign" in result.reason
    assert runner.finished and runner.rooms == {} and "bob" not in desk.hall.rooms["Lake"].seats  # left the room


@pytest.mark.parametrize("key", ["Slow", "SLOW", " slow "])
def test_an_entrant_that_finds_its_event_only_once_it_was_cancelled_still_hears_its_game_aborted(key):
    """A bot waits for an event that does not exist yet, looking again every few seconds. The event is created, seats
    the bot and is cancelled between two looks: the answer to the next look says cancelled, and reaches the bot behind
    the game_start and game_over sent before it. The bot reads them in that order and says its game was aborted (it
    used to stop on the answer with them unread, and said it had played nothing: CI saw "done: 0/0 points"). The bot
    may name the event as the server finds it, in other letters or with spaces: it knows the event's news by the id the
    answer gives (given "SLOW", it used to ignore all of it, the news that the event is over too, and wait for ever)."""
    desk = organiser_desk()
    for name in ("org", "s1", "s2"):
        desk.login(name, **({"organiser": SECRET} if name == "org" else {}))
    desk.send("org", {"type": "tournament_create", "name": "Slow", "game": "connect4", "format": "round-robin",
                      "players": ["s1", "s2"], "start": True, "time_control": {"untimed": True}})
    room = desk.last("s2", "game_start")["room"]
    desk.send("org", {"type": "tournament_control", "tournament": "Slow", "action": "cancel"})
    assert desk.last("s2", "game_over")["room"] == room
    said: list[str] = []
    runner = hand_driven_bot(RunOptions(name="s2", game="connect4", tournament=key, on_status=said.append))
    asyncio.run(asyncio.wait_for(runner._play(InboxRelay(desk, "s2"), {}), 30))
    runner.thinker.close()
    assert runner.finished and said[-1] == "tournament Slow is cancelled", said
    [result] = runner.results
    assert result.room == room and result.status == "aborted" and "cancelled" in result.reason, result


def test_a_bot_whose_leave_was_lost_leaves_the_finished_room_on_coming_back_and_plays_on():
    """bob's bot heard its game's end and asked to leave the room, but the connection dropped before the leave
    reached the server: back in, the server still seats it in the finished room (``welcome.rooms``, then its
    room_state), so the bot does not seek. It leaves that room and seeks its next game, without counting the first
    game twice (it used to wait there for ever)."""
    desk = HallDriver()
    desk.login("ann")
    token = desk.login("bob", secret="bob-pw")["resume"]
    runner = hand_driven_bot(RunOptions(name="bob", game="connect4", games=2))

    def ann_seeks() -> None:
        desk.send("ann", {"type": "seek", "game": "connect4"})

    def ann_resigns() -> None:
        room = desk.last("ann", "game_start")["room"]
        desk.send("ann", {"type": "resign", "room": room})
        desk.send("ann", {"type": "leave", "room": room})

    async def follow() -> None:
        first = ScriptedRelay(desk, "bob", [ann_seeks, ann_resigns], lost={"leave"})
        with pytest.raises(ConnectionError):
            await runner._play(first, {"rooms": []})
        room = desk.last("bob", "game_over")["room"]
        assert [r.room for r in runner.results] == [room] and "bob" in desk.hall.rooms[room].seats  # still seated
        desk.disconnect("bob")
        second = ScriptedRelay(desk, "bob", [ann_seeks, ann_resigns])
        welcome = desk.login("bob", secret="bob-pw", resume=token)
        second.read += 1  # the answer to the login, which the bot's login took
        assert welcome["rooms"] == [room]
        await runner._play(second, welcome)

    asyncio.run(asyncio.wait_for(follow(), 30))
    runner.thinker.close()
    first, second = runner.results
    assert first.room != second.room and second.room == desk.last("bob", "game_over")["room"]
    assert runner.finished and not any("bob" in r.seats for r in desk.hall.rooms.values())


def test_a_move_thought_for_a_game_that_ended_meanwhile_is_not_sent_to_the_rooms_next_game():
    """bob's bot thinks in the first game of a two-game room of Quarto; its clock runs out meanwhile, and the second
    game starts at once, bob to move. The move it finishes thinking is not sent: it would land in the second game,
    where it was never chosen, and where a Quarto placement is illegal on the first turn (the bot stopped on that
    'illegal move'). It reads the end of the first game and the start of the second, and moves there."""
    desk = HallDriver()
    desk.login("ann")
    desk.login("bob")
    desk.send("ann", {"type": "create_room", "name": "Two", "game": "quarto", "games": 2,
                      "time_control": {"per_move": 5}})
    desk.send("ann", {"type": "join", "room": "Two", "seat": 0})
    desk.send("bob", {"type": "join", "room": "Two", "seat": 1})
    room = desk.hall.rooms["Two"]
    first_move = room.game.legal_moves(room.state)[0]
    desk.send("ann", {"type": "move", "room": "Two", "move": room.game.notation(first_move)})
    player = HeldPlayer()
    runner = PlayerRunner(player, RunOptions(name="bob", game="quarto", room="Two", games=2))
    runner.thinker = Thinker(player, mode="thread")
    relay = ScriptedRelay(desk, "bob", [lambda: desk.send("ann", {"type": "resign", "room": "Two"})])
    relay.read = 0

    async def follow() -> None:
        bot = asyncio.create_task(runner._play(relay, {"rooms": ["Two"]}))
        while not player.thinking.is_set():
            assert not bot.done(), bot.result()
            await asyncio.sleep(0.01)
        desk.tick(6.0)  # bob's clock runs out while it thinks
        assert room.game_no == 2 and room.players[room.game.to_move(room.state)] == "bob" and not room.notations
        player.go.set()
        await bot

    asyncio.run(asyncio.wait_for(follow(), 30))
    runner.thinker.close()
    first, second = runner.results
    assert "ran out of time" in first.reason and first.winner == 1 - first.seat
    assert second.game_no == 2 and "resigned" in second.reason
    assert "illegal_move" not in desk.errors
    [chosen] = [m for m in desk.inbox["bob"] if m["type"] == "moved" and m["seat"] == second.seat]  # chosen for game 2
    assert chosen["seq"] == 1


def test_an_entrant_counts_the_game_its_opponent_never_came_to():
    """ann's bot waits in its tournament room for bob, who never comes: the game is forfeited to ann, and no game_start
    ever came. The bot counts that win as the standings do (it counted only games it had seen start: 'done: 0/0
    points' beside a standings' 1 point)."""
    desk = organiser_desk()
    desk.login("org", organiser=SECRET)
    desk.login("ann")
    counted: list[Any] = []
    runner = hand_driven_bot(RunOptions(name="ann", game="quarto", tournament="Late", on_result=counted.append))
    desk.send("org", {"type": "tournament_create", "name": "Late", "game": "quarto", "format": "round-robin",
                      "players": ["ann", "bob"], "games_per_pairing": 1, "grace": 10, "start": True,
                      "time_control": {"untimed": True}})
    relay = ScriptedRelay(desk, "ann", [lambda: desk.tick(11.0)])
    relay.read = 1  # after the welcome

    asyncio.run(asyncio.wait_for(runner._play(relay, desk.inbox["ann"][0]), 30))
    runner.thinker.close()
    assert "game_start" not in [m["type"] for m in desk.inbox["ann"]]
    [result] = counted
    event = desk.send("org", {"type": "watch_tournament", "tournament": "late"})[0]["tournament"]
    assert runner.finished and event["status"] == "finished"
    assert result.status == "forfeit" and result.opponent == "bob" and "did not come" in result.reason
    assert {row["name"]: row["points"] for row in event["standings"]["rows"]} == {"ann": result.score, "bob": 0.0}
    assert desk.errors == []  # nor did it leave a room the event had closed (no_such_room: 2 errors a game)


def test_a_seeker_whose_opponent_is_gone_between_two_games_of_its_series_seeks_again():
    """bob's bot seeks series of two games. ann, paired with it, loses the connection for good during the first game:
    it ends (her time, her grace run out) with the series' next game to come, and her seat is freed. Nobody is sent to
    that room any more: the bot leaves it and seeks again, and plays cy (it used to wait there for ever)."""
    desk = HallDriver()
    for name in ("ann", "bob", "cy"):
        desk.login(name)
    runner = hand_driven_bot(RunOptions(name="bob", game="connect4", series=2, games=2))

    def ann_is_gone() -> None:  # (on her move: the bot answers at once)
        desk.disconnect("ann")
        desk.tick(31.0)

    def cy_resigns() -> None:
        desk.send("cy", {"type": "resign", "room": desk.last("cy", "game_start")["room"]})

    steps = [lambda: desk.send("ann", {"type": "seek", "game": "connect4", "games": 2}), ann_is_gone,
             lambda: desk.send("cy", {"type": "seek", "game": "connect4", "games": 2}), cy_resigns]
    asyncio.run(asyncio.wait_for(runner._play(ScriptedRelay(desk, "bob", steps), {"rooms": []}), 30))
    runner.thinker.close()
    first, second = runner.results
    assert first.opponent == "ann" and "ann ran out of time" in first.reason and first.game_no == 1
    assert second.opponent == "cy" and second.room != first.room and first.room not in desk.hall.rooms  # left, gone


def test_a_seeker_back_in_a_series_whose_opponent_went_while_it_was_away_counts_the_game_and_seeks_again():
    """bob's bot is away when the first game of its series ends (ann, away too, ran out of time: with both away, the
    game is aborted) and when ann's seat is freed. Back in, the room's state brings both: the bot counts the game from
    its last result and, the seat being empty, leaves and seeks again (it used to wait in that room for ever)."""
    desk = HallDriver()
    desk.login("ann")
    token = desk.login("bob", secret="bob-pw")["resume"]
    clock = {"per_move": 10}
    runner = hand_driven_bot(RunOptions(name="bob", game="connect4", series=2, room_options={"time_control": clock}))

    async def follow() -> None:
        paired = ScriptedRelay(desk, "bob", [lambda: desk.send("ann", {"type": "seek", "game": "connect4", "games": 2,
                                                                        "time_control": clock})])
        with pytest.raises(AssertionError, match="never sent"):  # the bot waits for ann's move
            await runner._play(paired, {"rooms": []})
        desk.disconnect("ann")
        desk.tick(5.0)
        desk.disconnect("bob")
        desk.tick(26.0)  # ann's clock, then her grace, run out; bob's grace has 4 s to go
        back = ScriptedRelay(desk, "bob", [])
        welcome = desk.login("bob", secret="bob-pw", resume=token)
        back.read += 1  # the answer to the login, which the bot's login took
        with pytest.raises(AssertionError, match="never sent"):  # the bot waits for an opponent
            await runner._play(back, welcome)

    asyncio.run(asyncio.wait_for(follow(), 30))
    runner.thinker.close()
    [result] = runner.results
    assert result.game_no == 1 and result.reason == "neither player was connected" and result.status == "aborted"
    assert desk.hall.seeks.seeking("bob") and result.room not in desk.hall.rooms  # bob left it, and it went


class HeldPlayer(FunctionPlayer):
    """Plays the first legal move, the first time only once let go (``go``); says when it starts thinking."""

    def __init__(self) -> None:
        super().__init__(_first_legal)
        self.thinking, self.go = threading.Event(), threading.Event()

    def choose(self, turn: Any) -> Any:
        self.thinking.set()
        assert self.go.wait(30), "never let go"
        return super().choose(turn)


def test_a_room_bot_waits_for_its_finished_room_to_empty_however_long_the_opponent_keeps_its_seat(monkeypatch):
    """bob's bot, back in its finished room, sets it up again under the same name once it is empty. ann, away, keeps
    her seat for the room's grace (up to ten minutes), so the room lingers: the bot looks again, a tenth of a second
    apart, then two seconds apart, until ann's seat is freed (it gave up after ten seconds, with 'R has finished its
    games' as its last words)."""
    import client.play_loop
    from client.connection import ServerError

    desk = HallDriver()
    token = desk.login("ann")["resume"]
    desk.login("bob")
    desk.send("ann", {"type": "create_room", "name": "R", "game": "connect4"})
    desk.send("ann", {"type": "join", "room": "R", "seat": 0})
    desk.send("bob", {"type": "join", "room": "R", "seat": 1})
    desk.send("ann", {"type": "resign", "room": "R"})
    desk.send("bob", {"type": "leave", "room": "R"})
    desk.disconnect("ann")  # away: her seat is held, the finished room stays
    waits: list[float] = []

    async def look_again_later(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 150:  # 100 looks a tenth apart, then 50 two seconds apart: ann is back, and leaves
            desk.login("ann", resume=token)
            desk.send("ann", {"type": "leave", "room": "R"})
        assert len(waits) <= 150, "the bot looked again after the room was gone"

    class Refusing(Relay):  # as Client.request: an error answer raises
        async def request(self, msg: dict[str, Any], check: bool = True) -> dict[str, Any]:
            reply = await super().request(msg, check)
            if check and reply["type"] == "error":
                raise ServerError(reply)
            return reply

    monkeypatch.setattr(client.play_loop.asyncio, "sleep", look_again_later)
    runner = hand_driven_bot(RunOptions(name="bob", game="connect4", room="R"))
    found = asyncio.run(runner._try_join(Refusing(desk, "bob"), {"type": "join", "room": "R", "game": "connect4"}))
    runner.thinker.close()
    assert found is False and "R" not in desk.hall.rooms  # gone: the bot sets it up anew
    assert waits == [0.1] * 100 + [2.0] * 50


class Relay:
    """A bot's connection driven by hand: what it sends goes to the hall as ``name``."""

    coords = "algebraic"
    welcome: dict[str, Any] = {"type": "welcome", "features": list(FEATURES)}  # as today's server greets a client
    kept = 0  # (pushed messages: the test hands them over itself)

    async def news(self, since: int, timeout: float) -> bool:
        """Nothing is pushed while the bot waits: the test hands the bot each message."""
        return False

    def __init__(self, desk: HallDriver, name: str) -> None:
        self.desk, self.name = desk, name

    async def send(self, msg: dict[str, Any]) -> None:
        self.desk.send(self.name, msg)

    async def request(self, msg: dict[str, Any], check: bool = True) -> dict[str, Any]:
        return self.desk.send(self.name, msg)[0]

    def unread(self, room: str) -> list[dict[str, Any]]:
        """Nothing waits unread: the test hands the bot each message."""
        return []

    @property
    def received_at(self) -> float:
        """The message handed to the bot arrived just now."""
        return asyncio.get_running_loop().time()


class InboxRelay(Relay):
    """A bot's connection driven by hand that also reads, as a real client does, everything the hall sent ``name``
    from the start, the answers to its own requests in their place among the pushed messages."""

    def __init__(self, desk: HallDriver, name: str) -> None:
        super().__init__(desk, name)
        self.read = 0

    async def recv(self, timeout: float | None = None) -> dict[str, Any]:
        inbox = self.desk.inbox[self.name]
        assert self.read < len(inbox), "the bot waits for a message the hall never sent"
        self.read += 1
        return inbox[self.read - 1]

    def unread(self, room: str) -> list[dict[str, Any]]:
        """What the hall sent ``name`` about ``room`` and the bot has not read yet."""
        return [msg for msg in self.desk.inbox[self.name][self.read:] if msg.get("room") == room]


class ScriptedRelay(InboxRelay):
    """An :class:`InboxRelay` (reading from its ``read`` on) where the other players act, one of ``steps`` each
    time the bot has read everything and waits; a request of a type in ``lost`` meets a connection that dropped."""

    def __init__(self, desk: HallDriver, name: str, steps: list[Any], lost: set[str] = frozenset()) -> None:
        super().__init__(desk, name)
        self.read = len(desk.inbox[name])
        self.steps, self.lost = list(steps), lost

    async def request(self, msg: dict[str, Any], check: bool = True) -> dict[str, Any]:
        if msg["type"] in self.lost:
            raise ConnectionError("connection closed")
        return await super().request(msg, check)

    async def recv(self, timeout: float | None = None) -> dict[str, Any]:
        if self.read == len(self.desk.inbox[self.name]) and self.steps:
            self.steps.pop(0)()
        return await super().recv(timeout)


def hand_driven_bot(options: RunOptions) -> PlayerRunner:
    """The play loop of a bot that plays the first legal move, thinking in a thread, for a test to hand it the
    hall's messages (with a :class:`Relay` for its connection)."""
    runner = PlayerRunner(FunctionPlayer(_first_legal), options)
    runner.thinker = Thinker(runner.player, mode="thread")
    return runner


def _first_legal(turn: Any) -> Any:
    return turn.game.legal_moves(turn.state)[0]


def test_entrants_waiting_for_their_event_hear_its_first_game_start_at_once(tournament_server, monkeypatch):
    """Bots waiting for an event to be created looked for it every 2 s and read nothing meanwhile, while the event,
    created with them among its entrants, started their first game at once: its clock ran for the rest of the wait
    (0.3-1.2 s of a first move, a lost game under a 1 s clock). With a wait of an hour between two looks, the bots
    here play only if what the server pushes ends the wait."""
    import client.play_loop
    from client.connection import Client

    monkeypatch.setattr(client.play_loop, "TOURNAMENT_POLL", 3600.0)
    port, _ = tournament_server
    url = f"ws://127.0.0.1:{port}/ws"

    async def scenario() -> list[list[Any]]:
        waiting = {name: asyncio.Event() for name in ("ww1", "ww2")}

        def runner(name: str) -> PlayerRunner:
            def said(text: str) -> None:
                if "waiting for the tournament" in text:
                    waiting[name].set()
            return PlayerRunner(FunctionPlayer(_first_legal), RunOptions(
                url=url, name=name, game="connect4", tournament="Prompt", think="thread", on_status=said))

        bots = [asyncio.create_task(runner(name).run()) for name in waiting]
        for event in waiting.values():
            await asyncio.wait_for(event.wait(), 60)
        async with Client(url) as org:
            await org.login("org", organiser=SECRET)
            await org.request({"type": "tournament_create", "name": "Prompt", "game": "connect4",
                               "format": "round-robin", "players": list(waiting), "start": True,
                               "time_control": {"per_move": 30}})
            return await asyncio.wait_for(asyncio.gather(*bots), 120)

    results = asyncio.run(scenario())
    assert [len(played) for played in results] == [2, 2]  # both games of the pairing, each bot


def test_an_interrupted_run_is_followed_again_with_follow(tournament_server):
    """After Ctrl-C, ``run`` said "interrupted (the tournament goes on on the server)", and the same command run
    again was refused ("exists already; choose another name"), with no way to follow the event to its end."""
    port, _ = tournament_server
    url = f"ws://127.0.0.1:{port}/ws"
    base = [*PLYHALL, "tournament"]
    tail = ["--url", url, "--secret", SECRET]
    run = subprocess.Popen([*base, "run", "--name", "Again", "--game", "connect4", "--format", "round-robin",
                            "--players", "x1,x2", *tail], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "tournament Again (id again)" in run.stdout.readline()
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=30)
    finally:
        run.kill()
    assert run.returncode == 130 and f"plyhall tournament follow Again --url {url} follows it again" in err, err
    again = subprocess.run([*base, "run", "--name", "Again", "--game", "connect4", "--format", "round-robin",
                            "--players", "x1,x2", *tail], capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "exists already (running)" in again.stderr
    assert "plyhall tournament follow again" in again.stderr, again.stderr
    quiet = {k: v for k, v in os.environ.items() if k != "PLYHALL_ORGANISER_SECRET"}
    follow = subprocess.Popen([*base, "follow", "Again", "--url", url], stdout=subprocess.PIPE,  # as Ctrl-C said
                              stderr=subprocess.PIPE, text=True, env=quiet)
    try:
        assert follow.stdout.readline().startswith("following tournament Again (id again): running")
        cancel = subprocess.run([*base, "cancel", "again", *tail], capture_output=True, text=True, timeout=60)
        assert cancel.returncode == 0, cancel.stderr
        out, err = follow.communicate(timeout=60)
    finally:
        follow.kill()
    assert follow.returncode == 1 and "(cancelled)" in out, (out, err)  # followed to its end, with the results


def _crashes(turn: Any) -> Any:
    return 1 // 0


def _plays_off_the_board(turn: Any) -> Any:
    return "9"  # no column: the server refuses it


def _game_of_a_bot_that_stops(choose: Any, stops: type[BaseException], match: str) -> dict[str, Any]:
    """A bot ``bad`` (``choose``) in a room against ``opp``: its run raises ``stops``; the game_over opp saw."""
    desk = organiser_desk()
    welcome = desk.login("bad")
    desk.login("opp")
    desk.send("opp", {"type": "create_room", "game": "connect4", "name": "Lake", "options": {"first": 0}})
    desk.send("opp", {"type": "join", "room": "Lake", "seat": 1})
    desk.send("bad", {"type": "join", "room": "Lake", "seat": 0})
    runner = PlayerRunner(FunctionPlayer(choose), RunOptions(name="bad", game="connect4", room="Lake"))
    runner.thinker = Thinker(runner.player, mode="thread")
    relay = InboxRelay(desk, "bad")
    relay.read = 1  # after the welcome
    with pytest.raises(stops, match=match):
        asyncio.run(asyncio.wait_for(runner._play(relay, {**welcome, "rooms": ["Lake"]}), 30))
    runner.thinker.close()
    return desk.last("opp", "game_over")


def test_a_player_that_crashes_in_choose_resigns_its_game_before_the_bot_stops():
    """A ``choose`` that raised ended the bot with the game left standing: the opponent waited out the grace
    ("crasher lost the connection; it has 30 s to come back"), and the game ended on time. It is resigned first."""
    over = _game_of_a_bot_that_stops(_crashes, ZeroDivisionError, "division")
    assert over["winner"] == 1 and "bad resigned" in over["reason"], over


def test_a_player_whose_move_the_server_refuses_resigns_its_game_before_the_bot_stops():
    """The server refused a bot's move as illegal: the bot stopped with IllegalMove, its game left standing, and the
    opponent waited out the grace ("lost the connection; it has 10 s to come back"). It resigns first."""
    from protocol.games import IllegalMove

    over = _game_of_a_bot_that_stops(_plays_off_the_board, IllegalMove, "not a column")
    assert over["winner"] == 1 and "bad resigned" in over["reason"], over


def test_an_entrant_of_an_event_not_over_is_refused_by_another():
    """A second event took an entrant of one still running: its bot was seated in both events' games (of another
    game: it stopped, and forfeited the rest of both). Refused, naming the event; once that is over, accepted."""
    desk = organiser_desk()
    desk.login("org", organiser=SECRET)
    for name in ("ann", "bob", "cy"):
        desk.login(name)
    desk.send("org", {"type": "tournament_create", "name": "First", "game": "connect4", "format": "round-robin",
                      "players": ["ann", "bob"], "time_control": {"untimed": True}, "start": True})
    refused = desk.send("org", {"type": "tournament_create", "name": "Second", "game": "quarto",
                                "format": "round-robin", "players": ["cy", "bob"]})[0]
    assert refused["code"] == "bad_option" and refused["message"] == (
        "bob is an entrant of First (running), which is not over: an entrant plays one event at a time"), refused
    desk.send("org", {"type": "tournament_control", "tournament": "First", "action": "cancel"})
    accepted = desk.send("org", {"type": "tournament_create", "name": "Second", "game": "quarto",
                                 "format": "round-robin", "players": ["cy", "bob"]})[-1]
    assert accepted["type"] == "tournament" and accepted["tournament"]["status"] == "created", accepted


def test_a_gauntlet_reports_its_challenger_against_the_field_and_ranks_by_share():
    """The first entrant of a gauntlet plays every game, the others a pairing each: it "won" with 3 points of 10
    games over an opponent with 2 of 2. The event's result is the challenger's score against the field, and the
    standings rank by the share of the points."""
    desk = organiser_desk()
    desk.login("org", organiser=SECRET)
    for name in ("ann", "bob", "cy", "dee"):
        desk.login(name)
    desk.send("org", {"type": "tournament_create", "name": "Gaunt", "game": "connect4", "format": "gauntlet",
                      "players": ["ann", "bob", "cy", "dee"], "games_per_pairing": 2, "concurrency": 6,
                      "time_control": {"untimed": True}, "start": True})
    while rooms := [r for r in desk.hall.rooms.values() if r.tournament == "gaunt" and r.status == "playing"]:
        for room in rooms:  # ann wins her games against bob and loses every other
            desk.send("bob" if "bob" in room.players else "ann", {"type": "resign", "room": room.name})
    event = desk.send("org", {"type": "watch_tournament", "tournament": "Gaunt"})[0]["tournament"]
    assert event["status"] == "finished"
    rows = {row["name"]: (row["rank"], row["points"], row["games"]) for row in event["standings"]["rows"]}
    # 2 points of 6 games below 2 of 2 (on points alone, ann shared first place)
    assert rows == {"cy": (1, 2.0, 2), "dee": (1, 2.0, 2), "ann": (3, 2.0, 6), "bob": (4, 0.0, 2)}, rows
    assert event["first_place"] == "ann, the gauntlet's challenger, scores 2 of 6 games (33%) against the field"


def test_a_server_restarted_without_the_organiser_secret_says_nobody_can_stop_its_events(tmp_path):
    """Restarted without --organiser-secret, a running event went on and every pause or cancel was refused, with
    nothing said at the start."""
    port, db = free_port(), tmp_path / "nosecret.db"
    quiet = {k: v for k, v in os.environ.items() if k != "PLYHALL_ORGANISER_SECRET"}
    server = start_server(db, port, "--organiser-secret", SECRET, env=quiet)
    try:
        made = subprocess.run([*PLYHALL, "tournament", "create", "--url", f"ws://127.0.0.1:{port}/ws", "--secret",
                               SECRET, "--name", "Cup", "--game", "connect4", "--format", "round-robin", "--players",
                               "p1,p2", "--start"], capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        server.send_signal(signal.SIGKILL)
        server.communicate(timeout=30)
        server = start_server(db, port, env=quiet)
        said = read_until(server, "serving on")
    finally:
        stop(server)
    assert ("plyhall: warning: tournament Cup goes on, but this server has no --organiser-secret: nobody can pause "
            "or cancel it until it is started with one") in said, said
