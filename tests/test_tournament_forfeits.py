"""A tournament never stalls on an entrant's mistake: an entrant that leaves its seat before its game starts, or never
comes back, forfeits that game (with the reason on the record, in the standings and in ``tournament run``'s lines),
a game whose room closes without a result is played again, and an entrant of an event not started yet is never
paired in the lobby by a seek."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from client.tournament import new_forfeits
from server.core.outbox import HallOutbox
from server.storage import SQLiteStorage
from tests.conftest import free_port
from tests.helpers import HallDriver, http_json, plyhall, read_until, start_server, stop
from tests.test_tournament_live import wait_for

SECRET = "organiser-secret"
LEFT = "left the room before the game started"


def organiser_desk() -> HallDriver:
    """A hall with a logged-in organiser, driven by hand."""
    desk = HallDriver(organiser_secret=SECRET)
    desk.login("org", organiser=SECRET)
    return desk


def event(desk: HallDriver, tournament: str) -> dict:
    """The event as its watchers see it."""
    return desk.send("org", {"type": "watch_tournament", "tournament": tournament})[0]["tournament"]


def play_and_leave(desk: HallDriver, rng: random.Random, leavers: set[str]) -> None:
    """One step of the field: a ``leavers`` entrant leaves every seat it is pushed into while its game waits (what a
    course bot without PLYHALL_TOURNAMENT did), every running game gets one random legal move, and the players of a
    finished game leave its room."""
    for room in list(desk.hall.rooms.values()):
        for name in list(room.seats):
            if name in leavers and room.status == "waiting" and name in desk.hall.by_name \
                    and room.seat_of(name) not in room.away:
                desk.send(name, {"type": "leave", "room": room.name})
                # falls back to a seek, as the course library did: refused, it waits
                assert desk.send(name, {"type": "seek", "game": room.game.id})[0]["code"] == "in_tournament"
    for room in list(desk.hall.rooms.values()):
        if room.status == "playing" and not room.paused:
            move = rng.choice(room.game.legal_moves(room.state))
            desk.send(room.seats[room.game.to_move(room.state)], {"type": "move", "room": room.name,
                                                                  "move": room.game.notation(move)})
        if room.status == "finished":
            for name in list(room.seats):
                if name is not None and name in desk.hall.by_name and room.seat_of(name) not in room.away:
                    desk.send(name, {"type": "leave", "room": room.name})


def test_an_entrant_leaving_its_waiting_seat_forfeits_and_the_event_ends():
    """The issue's stall: entrants connect one after another, so a course bot is seated in a room still waiting for
    its opponent; it answers ``leave`` and falls back to a seek. Its game is forfeited at once (the event showed it
    "playing" with no room for good), and the round robin of four ends with every game played or forfeited."""
    desk = organiser_desk()
    desk.login("dee")  # the course bot is first: seated in game 1, still waiting for ann
    desk.send("org", {"type": "tournament_create", "name": "Class", "game": "connect4", "format": "round-robin",
                      "players": ["dee", "ann", "bob", "cy"], "games_per_pairing": 1, "concurrency": 2, "grace": 30,
                      "start": True, "time_control": {"untimed": True}})
    rng = random.Random(5)
    play_and_leave(desk, rng, {"dee"})
    for name in ("ann", "bob", "cy"):  # the others connect one after another while the event runs
        desk.tick(2.0)
        desk.login(name)
        play_and_leave(desk, rng, {"dee"})
    for _ in range(2000):
        if event(desk, "class")["status"] == "finished":
            break
        play_and_leave(desk, rng, {"dee"})
        desk.tick(1.0)
    view = event(desk, "class")
    assert view["status"] == "finished" and view["progress"]["done"] == 6
    assert all(g["status"] in ("finished", "forfeit") and g["reason"] and g["room"] is None for g in view["schedule"])
    forfeits = [g for g in view["schedule"] if g["status"] == "forfeit"]
    first = view["schedule"][0]
    assert "dee" in (first["white"], first["black"]) and first in forfeits  # dee's game that used to stall
    for game in forfeits:
        dee_seat = (game["white"], game["black"]).index("dee")
        assert game["result"] == ("0-1" if dee_seat == 0 else "1-0")
        assert game["reason"] == f"dee {LEFT}"
    rows = {row["name"]: row for row in view["standings"]["rows"]}
    assert rows["dee"]["forfeit_losses"] == len(forfeits) and rows["dee"]["played"] == 3 - len(forfeits)
    # what plyhall tournament run prints for them, and the results text
    lines = new_forfeits(view, set())
    assert len(lines) == len(forfeits) and all(line.startswith("forfeit: game ") and f": dee {LEFT}" in line
                                               for line in lines)
    assert new_forfeits(view, {g["number"] for g in forfeits}) == []
    text = desk.hall.tournaments["class"].to_text(desk.now)
    assert "Forfeits:" in text and text.count(LEFT) == len(forfeits)
    # the forfeits are stored games with their reason
    storage = SQLiteStorage(":memory:")
    storage.apply(desk.writes)
    stored = {g["tournament_game"]: g for g in storage.list_games(100, tournament="class", status="all")}
    assert {n: g["reason"] for n, g in stored.items() if g["status"] == "forfeit"} == {
        g["number"]: g["reason"] for g in forfeits}


def test_an_entrant_that_disconnects_and_never_comes_back_forfeits_after_the_grace():
    desk = organiser_desk()
    desk.login("ann")
    desk.login("bob")
    desk.send("org", {"type": "tournament_create", "name": "Gone", "game": "quarto", "format": "round-robin",
                      "players": ["ann", "bob"], "games_per_pairing": 1, "grace": 10, "start": True,
                      "time_control": {"untimed": True}, "options": {}})
    room = next(r for r in desk.hall.rooms.values() if r.tournament == "gone")
    assert room.status == "playing"
    first = room.game.legal_moves(room.state)[0]
    desk.send(room.seats[room.game.to_move(room.state)], {"type": "move", "room": room.name,
                                                          "move": room.game.notation(first)})
    gone = room.seats[room.game.to_move(room.state)]
    desk.disconnect(gone)
    desk.tick(9.0)
    assert event(desk, "gone")["schedule"][0]["status"] == "playing"  # its seat is kept for the grace
    desk.tick(2.0)
    view = event(desk, "gone")
    assert view["status"] == "finished"
    game = view["schedule"][0]
    assert game["status"] == "finished" and f"{gone} disconnected and did not come back in time" == game["reason"]


@pytest.mark.parametrize(("per_move", "grace", "first_gap"), [(15, 60, 0.0), (30, 5, 0.01)])
def test_a_game_whose_two_entrants_are_both_gone_is_aborted_and_played_again(per_move: int, grace: int,
                                                                               first_gap: float):
    """OPERATING.md: "if both are gone, the game is aborted and played again later". Both entrants' machine drops
    mid-game: the side to move's clock ran out first (a short clock) and the other won, or the first grace to end
    (a short grace; the two disconnects a moment apart) gave the other, just as gone, the win."""
    desk = organiser_desk()
    desk.login("ann")
    desk.login("bob")
    desk.send("org", {"type": "tournament_create", "name": "Both", "game": "connect4", "format": "round-robin",
                      "players": ["ann", "bob"], "games_per_pairing": 1, "grace": grace, "start": True,
                      "time_control": {"per_move": per_move}})
    room = next(r for r in desk.hall.rooms.values() if r.tournament == "both")
    assert room.status == "playing"
    desk.send(room.seats[room.game.to_move(room.state)], {"type": "move", "room": room.name, "move": "4"})
    desk.disconnect("ann")
    desk.tick(first_gap)
    desk.disconnect("bob")
    desk.tick(min(per_move, grace) + 1.0)
    [ended] = [w.record for w in desk.writes if type(w).__name__ == "GameEnded"]
    assert ended.status == "aborted" and ended.winner is None, (ended.status, ended.reason)
    game = event(desk, "both")["schedule"][0]
    assert game["status"] == "playing" and game["room"] != room.name  # opened again, for when they come back


def test_two_absent_entrants_both_forfeit_and_a_lost_room_is_played_again():
    desk = organiser_desk()
    desk.send("org", {"type": "tournament_create", "name": "Empty", "game": "connect4", "format": "round-robin",
                      "players": ["ann", "bob", "cy"], "games_per_pairing": 1, "concurrency": 1, "grace": 5,
                      "start": True, "time_control": {"untimed": True}})
    desk.tick(6.0)  # nobody came to game 1: a double forfeit
    view = event(desk, "empty")
    first = view["schedule"][0]
    assert first["status"] == "forfeit" and first["result"] == "0-0" and "did not come" in first["reason"]
    # game 2's room closes with no result (as a room nobody came back to after a crash did): it is opened again
    director = desk.hall.tournaments["empty"]
    number, name = next(iter(director.open.items()))
    room = desk.hall.rooms[name]
    out = HallOutbox()
    desk.hall._apply(out, room, room.dissolve(desk.now, "closed by hand"))
    desk.take(out)
    game = event(desk, "empty")["schedule"][number - 1]
    assert game["status"] == "playing" and game["room"] in desk.hall.rooms
    assert desk.hall.rooms[game["room"]] is not room and desk.hall.rooms[game["room"]].tournament_game == number


def test_an_entrant_of_an_event_not_started_is_not_paired_in_the_lobby():
    desk = organiser_desk()
    desk.send("org", {"type": "tournament_create", "name": "Soon", "game": "amazons", "format": "round-robin",
                      "players": ["ann", "bob"]})
    for name in ("ann", "bob"):
        desk.login(name)
        refused = desk.send(name, {"type": "seek", "game": "amazons"})[0]
        assert refused["code"] == "in_tournament"
        assert "Soon" in refused["message"] and "has not started yet" in refused["message"]
    assert not desk.hall.rooms  # no lobby game paired them
    desk.login("cy")  # not an entrant: seeks as ever
    assert desk.send("cy", {"type": "seek", "game": "amazons"})[0]["type"] == "seeking"
    desk.send("org", {"type": "tournament_control", "tournament": "soon", "action": "start"})
    room = next(r for r in desk.hall.rooms.values() if r.tournament == "soon")
    assert sorted(room.seats) == ["ann", "bob"] and room.status == "playing"
    # after the event, its entrants seek again
    desk.send("org", {"type": "tournament_control", "tournament": "soon", "action": "cancel"})
    assert all(reply["type"] != "error" for reply in desk.send("ann", {"type": "seek", "game": "amazons"}))
    assert any(sorted(r.seats) == ["ann", "cy"] and r.tournament is None for r in desk.hall.rooms.values())


LEAVER = """
import asyncio, sys
from client.connection import Client

async def main(url):
    client = await Client(url).connect()
    await client.login("lea")
    print("logged in", flush=True)
    while True:
        msg = await client.recv(timeout=None)
        settings = msg.get("settings") or {}
        if msg["type"] == "joined" and settings.get("tournament") and settings.get("status") == "waiting":
            await client.send({"type": "leave", "room": msg["room"]})  # what a bot that knows no tournaments did
            await client.send({"type": "seek", "game": "connect4"})
        elif msg["type"] == "error":
            print("refused:", msg["code"], flush=True)

asyncio.run(main(sys.argv[1]))
"""


def test_tournament_run_prints_the_forfeits_of_an_entrant_that_leaves_and_the_event_ends(tmp_path):
    """Through a real server: an entrant that answers its seat with leave (and seeks instead) forfeits, plyhall
    tournament run says so as it happens and in the results, and the event ends; its games carry the margin."""
    port = free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    server = start_server(tmp_path / "forfeits.db", port, "--organiser-secret", SECRET)
    procs = [subprocess.Popen([sys.executable, "-c", LEAVER, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)]
    try:
        read_until(procs[0], "logged in", 60)
        run = plyhall("tournament", "run", "--url", url, "--secret", SECRET, "--name", "Leavers", "--game",
                      "connect4", "--format", "round-robin", "--players", "lea,r1,r2,r3", "--games-per-pairing", "1",
                      "--concurrency", "2", "--time-control", "10", "--time-margin", "500", "--grace", "30")
        procs.append(run)
        # game 1 (r3 - lea) opens with lea alone: she leaves, and forfeits at once
        wait_for(lambda: any(g["status"] == "forfeit" for g in http_json(port, "/api/tournaments/leavers")[1].get(
            "schedule", [])), 60)
        procs += [plyhall("bot", "--game", "connect4", "--level", "random", "--name", name, "--tournament",
                          "leavers", "--url", url) for name in ("r1", "r2", "r3")]
        out, err = run.communicate(timeout=180)
        status = subprocess.run([sys.executable, "-m", "plyhall", "tournament", "status", "Leavers", "--url", url],
                                capture_output=True, text=True, timeout=60)
    finally:
        for proc in procs:
            stop(proc)
        stop(server)
    assert run.returncode == 0, out + err
    assert "6/6 games" in out and "(finished)" in out
    assert f"forfeit: game 1 (round 1) r3 1-0 lea: lea {LEFT}" in out
    assert "Forfeits:" in out.split("(finished)", 1)[1]  # the results text lists them too
    assert "forfeited)" in status.stdout and f"  forfeit: game 1 (round 1) r3 1-0 lea: lea {LEFT}" in \
        status.stdout, status.stdout + status.stderr
    storage = SQLiteStorage(tmp_path / "forfeits.db")
    records = storage.list_games(100, tournament="leavers", status="all")
    storage.close()
    assert sorted(r["tournament_game"] for r in records if r["status"] in ("finished", "forfeit")) == [1, 2, 3, 4, 5, 6]
    assert all(r["time_control"] == {"per_move": 10.0, "margin": 0.5} for r in records)


def test_a_seek_left_waiting_by_a_new_events_entrant_is_withdrawn():
    desk = organiser_desk()
    desk.login("ann")
    desk.login("bob")
    assert desk.send("ann", {"type": "seek", "game": "amazons"})[0]["type"] == "seeking"
    desk.send("org", {"type": "tournament_create", "name": "Later", "game": "amazons", "format": "round-robin",
                      "players": ["ann", "cy"]})
    told = desk.last("ann", "error")
    assert told["code"] == "in_tournament" and "amazons is withdrawn" in told["message"] and "Later" in told["message"]
    assert desk.send("bob", {"type": "seek", "game": "amazons"})[0]["type"] == "seeking"  # ann's seek is gone
    assert not desk.hall.rooms


def test_the_listing_of_events_counts_forfeits_apart():
    """The tournament list's progress had no forfeits: the page said "12 of 12 games played" where the event's own
    page said "6 played, 6 forfeited"."""
    from server.tournament.director import Director, define

    director = Director(define({"game": "connect4", "format": "round-robin", "name": "Cup", "games_per_pairing": 1},
                               ["ann", "bob", "cy"], {}, 0.0))
    director.control("start")
    statuses = iter(["forfeit", "finished", "forfeit"])
    while director.status == "running":
        for game in director.due():
            director.opened(game.number, f"room{game.number}", 0.0)
            director.ended(game.number, 0, next(statuses), f"g{game.number}", 1.0)
    assert director.summary()["progress"] == {"done": 3, "total": 3, "fraction": 1.0, "forfeits": 2}
