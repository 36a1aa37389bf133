"""House bots: a player opens a room against one of our bots, which the server starts as a process of its own."""

from __future__ import annotations

import random

import pytest

from bots import parse_level
from client.sdk import ServerError
from protocol.games import get_game
from server.core.env import Env
from server.core.hall import Hall, Limits
from server.core.house import HOUSE_LEVELS
from server.io.server import PlyhallServer, RateLimit
from server.storage import SQLiteStorage
from tests.helpers import HallDriver, login, wait_until


def test_house_levels_are_the_levels_bots_accept():
    for level in HOUSE_LEVELS:
        parse_level(level)
    assert {"random", "novice", "master", "minimax-8"} <= set(HOUSE_LEVELS)


@pytest.fixture
async def house_server(tmp_path):
    srv = PlyhallServer(SQLiteStorage(tmp_path / "house.db"), port=0, house_bots=1,
                        rate_limit=RateLimit(rate=2000, burst=4000))
    await srv.start()
    yield srv
    await srv.stop()


async def test_a_player_plays_a_house_bot_to_the_end(house_server):
    url = f"ws://127.0.0.1:{house_server.port}/ws"
    ann = await login(url, "ann")
    assert "master" in ann.welcome["house"]
    reply = await ann.request({"type": "create_room", "game": "connect4", "opponent": "random",
                               "time_control": {"per_move": 30}, "options": {"first": 0}})
    room = reply["room"]["name"]
    joined = await ann.expect("joined", room=room)
    assert joined["seat"] == 0  # the creator sits down at once
    # a second house bot is over this server's limit of one
    with pytest.raises(ServerError) as busy:
        await ann.request({"type": "create_room", "game": "quarto", "opponent": "novice"})
    assert busy.value.code == "busy"
    start = await ann.expect("game_start", room=room, timeout=60)
    assert start["players"] == ["ann", "house-random-1"]
    game = get_game("connect4")
    state = game.decode_state(start["state"], ann.coords)
    rng = random.Random(1)
    while True:
        if game.to_move(state) == 0:
            await ann.send({"type": "move", "room": room, "move": game.notation(rng.choice(game.legal_moves(state)))})
        msg = await ann.expect("moved", room=room, timeout=30)
        state = game.apply(state, game.parse_move(msg["move"], state, ann.coords))
        if msg["to_move"] is None:
            break
    over = await ann.expect("game_over", room=room)
    assert over["status"] == "finished" and over["players"] == ["ann", "house-random-1"]
    # the bot leaves when its game is done, its process ends, and its slot is free for the next player
    await wait_until(lambda: not house_server.hall.house.running, "the house bot's slot was free", 60)
    await ann.request({"type": "create_room", "game": "quarto", "opponent": "novice"})


async def test_house_names_and_levels_are_checked(house_server, server):
    url = f"ws://127.0.0.1:{house_server.port}/ws"
    with pytest.raises(ServerError) as refused:
        await login(url, "house-master-1", secret="guess")
    assert refused.value.code == "bad_name" and "own bots" in refused.value.message
    ann = await login(url, "ann")
    with pytest.raises(ServerError) as bad:
        await ann.request({"type": "create_room", "game": "connect4", "opponent": "grandmaster"})
    assert bad.value.code == "bad_option" and "minimax-8" in bad.value.message
    plain = await login(f"ws://127.0.0.1:{server.port}/ws", "bob")  # a server without --house-bots
    assert "house" not in plain.welcome
    with pytest.raises(ServerError) as off:
        await plain.request({"type": "create_room", "game": "connect4", "opponent": "master"})
    assert off.value.code == "bad_option" and "--house-bots" in off.value.message


# The hall's side of house bots, without processes ------------------------------------------------


def house_desk(**limits: float) -> HallDriver:
    return HallDriver(organiser_secret="organiser-secret", house_limit=2, limits=Limits(**limits))


def bot_arrives(desk: HallDriver, room: str) -> str:
    """The house bot's process logs in (with the server's own secret) and joins its room, as `plyhall bot` does."""
    bot = desk.hall.rooms[room].seats[1]
    desk.send(bot, {"type": "login", "name": bot, "secret": desk.hall.house_secret})
    desk.send(bot, {"type": "join", "room": room})
    return bot


def test_an_event_that_has_not_started_holds_no_house_bot():
    desk = house_desk()
    desk.login("org", organiser="organiser-secret")
    made = desk.send("org", {"type": "tournament_create", "game": "connect4", "format": "round-robin",
                             "name": "Cup", "players": ["ann"], "local": ["random", "novice"]})
    assert made[-1]["tournament"]["status"] == "created" and not desk.hall.house.running
    desk.login("vis")
    room = desk.send("vis", {"type": "create_room", "game": "connect4", "opponent": "random"})[0]["room"]["name"]
    refused = desk.send("org", {"type": "tournament_control", "tournament": "Cup", "action": "start"})[0]
    assert not desk.hall.house.running.keys() - {desk.hall.rooms[room].seats[1]}
    assert refused["code"] == "busy" and "needs 2 house bots" in refused["message"]
    bot = desk.hall.rooms[room].seats[1]
    desk.take(desk.hall.house_exited(bot, desk.now))  # the visitor's bot is done
    started = desk.send("org", {"type": "tournament_control", "tournament": "Cup", "action": "start"})
    assert started[-1]["tournament"]["status"] == "running" and len(desk.hall.house.running) == 2


def test_a_house_bot_whose_process_ends_gives_its_seat_up_at_once_and_its_name_is_not_reused():
    desk = house_desk()
    desk.login("ann")
    room = desk.send("ann", {"type": "create_room", "game": "connect4", "opponent": "random", "games": 3,
                             "options": {"first": 0}})[0]["room"]["name"]
    bot = bot_arrives(desk, room)
    assert desk.last("ann", "game_start")["players"] == ["ann", bot]
    desk.take(desk.hall.house_exited(bot, desk.now))  # it crashed mid-game
    over = desk.last("ann", "game_over")
    assert over["winner"] == 0 and over["next_game"] is False and f"{bot} stopped" in over["reason"]
    assert desk.hall.rooms[room].seats == ["ann", None] and desk.hall.rooms[room].reserved == ("ann", None)
    desk.send("ann", {"type": "leave", "room": room})
    again = desk.send("ann", {"type": "create_room", "game": "connect4", "opponent": "random"})[0]["room"]["name"]
    assert desk.hall.rooms[again].seats[1] not in (None, bot)


def test_a_person_who_sits_on_a_move_against_a_house_bot_loses_and_the_room_ends():
    desk = house_desk(house_idle=60)
    desk.login("ann")
    too_many = desk.send("ann", {"type": "create_room", "game": "connect4", "opponent": "random", "games": 1000})[0]
    assert too_many["code"] == "bad_option" and "at most 10 games" in too_many["message"]
    room = desk.send("ann", {"type": "create_room", "game": "connect4", "opponent": "random", "games": 10,
                             "time_control": {"per_move": 86400}, "options": {"first": 0}})[0]["room"]["name"]
    bot = bot_arrives(desk, room)
    start = desk.last("ann", "game_start")
    assert start["to_move"] == 0 and start["idle"] == 60 and start["idle_left"] == 60  # the limit, said to ann
    assert "idle" not in desk.last(bot, "game_start")  # (only the person has it)
    desk.tick(20)
    desk.send("ann", {"type": "state", "room": room})
    assert desk.last("ann", "game_start")["idle_left"] == pytest.approx(40)
    desk.tick(39)
    assert desk.hall.rooms[room].status == "playing"
    desk.tick(2)
    over = desk.last("ann", "game_over")
    assert over["winner"] == 1 and "did not move for 60 s" in over["reason"] and over["next_game"] is False
    assert desk.hall.rooms[room].status == "finished"


def test_a_house_bot_game_must_be_timed_and_one_name_plays_one_at_a_time():
    desk = house_desk()
    desk.login("ann")
    untimed = desk.send("ann", {"type": "create_room", "game": "connect4", "opponent": "random",
                                "time_control": {"untimed": True}})[0]
    assert untimed["code"] == "bad_option" and "timed" in untimed["message"]
    desk.send("ann", {"type": "create_room", "game": "connect4", "opponent": "random"})
    second = desk.send("ann", {"type": "create_room", "game": "quarto", "opponent": "novice"})[0]
    assert second["code"] == "busy" and "per name" in second["message"]


def test_a_restart_starts_a_tournaments_house_bot_for_the_whole_event_and_again_if_it_dies(tmp_path):
    desk = house_desk()
    desk.login("org", organiser="organiser-secret")
    desk.login("ann")
    desk.send("org", {"type": "tournament_create", "game": "connect4", "format": "round-robin", "name": "Cup",
                      "players": ["ann"], "local": ["random"], "start": True, "games_per_pairing": 4})
    bot = next(iter(desk.hall.house.running))
    bot_arrives(desk, next(name for name, room in desk.hall.rooms.items() if room.tournament))
    storage = SQLiteStorage(tmp_path / "cup.db")
    storage.apply(desk.writes)
    restored = storage.load()
    storage.close()
    hall = Hall(Env.fixed(first=1000), organiser_secret="organiser-secret", house_limit=2)
    hall.restore(restored, 0.0)
    assert [(h.name, h.tournament, h.room) for h in hall.restarted_house] == [(bot, "cup", None)]
    # the bot's process dies while the event goes on: it is started again, a few times, not for ever
    starts = [hall.house_exited(bot, 1.0).house for _ in range(5)]
    assert [len(started) for started in starts] == [1, 1, 1, 0, 0]


def test_rooms_count_against_their_creators_after_reconnects_and_restarts(tmp_path):
    desk = HallDriver(limits=Limits(max_rooms_per_name=2, max_rooms_per_address=3))
    desk.connect("ann", "10.0.0.1")
    token = desk.send("ann", {"type": "login", "name": "ann"})[0]["resume"]
    for name in ("A", "B"):
        desk.send("ann", {"type": "create_room", "game": "connect4", "name": name})
        desk.send("ann", {"type": "join", "room": name})
    desk.disconnect("ann")  # the rooms stay (ann sits in them), and still count against ann
    desk.connect("ann again", "10.0.0.1")
    desk.send("ann again", {"type": "login", "name": "ann", "resume": token})
    third = desk.send("ann again", {"type": "create_room", "game": "connect4", "name": "C"})[0]
    assert third["code"] == "too_many_rooms" and "per name" in third["message"]
    storage = SQLiteStorage(tmp_path / "rooms.db")
    storage.apply(desk.writes)
    restored = storage.load()
    storage.close()
    hall = Hall(Env.fixed(first=1000), limits=Limits(max_rooms_per_name=2, max_rooms_per_address=3))
    hall.restore(restored, 0.0)
    after = HallDriver(hall)
    after.connect("bob", "10.0.0.1")
    after.send("bob", {"type": "login", "name": "bob"})
    after.send("bob", {"type": "create_room", "game": "connect4", "name": "D"})
    fourth = after.send("bob", {"type": "create_room", "game": "connect4", "name": "E"})[0]
    assert fourth["code"] == "too_many_rooms" and "your address" in fourth["message"]  # A and B count still


def test_a_house_entrant_that_cannot_run_forfeits_after_the_events_grace(tmp_path, caplog):
    """A tournament's house bot that died four times is not started again, and a server restarted with no house bots
    starts none: each of their games waited the two minutes a starting bot gets (an event of N games, N x 2 minutes,
    'under a minute left' all along), with nothing in the log. Now their games are forfeited after the event's grace,
    and the log says why."""
    desk = house_desk()
    desk.login("org", organiser="organiser-secret")
    desk.login("ann")
    desk.send("org", {"type": "tournament_create", "game": "connect4", "format": "round-robin", "name": "Cup",
                      "players": ["ann"], "local": ["random"], "start": True, "games_per_pairing": 4, "grace": 10})
    bot = next(iter(desk.hall.house.running))
    storage = SQLiteStorage(tmp_path / "cup.db")
    storage.apply(desk.writes)
    restored = storage.load()
    storage.close()
    for _ in range(4):  # it dies before it ever sits down: started again three times, then given up
        desk.take(desk.hall.house_exited(bot, desk.now))
    assert bot not in desk.hall.house.running
    desk.tick(121)  # the first game's seat was kept two minutes for a bot that was starting
    for _ in range(3):
        desk.tick(11)  # each next one, the grace
    event = desk.send("org", {"type": "watch_tournament", "tournament": "Cup"})[0]["tournament"]
    assert event["status"] == "finished" and event["progress"]["done"] == 4, event["progress"]
    assert {row["status"] for row in event["schedule"]} == {"forfeit"}
    # restarted with no house bots: none starts, the log says so, and the games are forfeited as above
    hall = Hall(Env.fixed(first=1000), organiser_secret="organiser-secret", house_limit=0)
    with caplog.at_level("ERROR", logger="plyhall.house"):
        hall.restore(restored, 0.0)
    assert hall.restarted_house == []
    assert f"its house entrant {bot} cannot start: this server runs 0 house bots at most" in caplog.text
    after = HallDriver(hall)
    after.take(hall.resume_tournaments(after.now))
    after.login("org", organiser="organiser-secret")
    after.login("ann")
    for _ in range(4):
        after.tick(11)
    event = after.send("org", {"type": "watch_tournament", "tournament": "Cup"})[0]["tournament"]
    assert event["status"] == "finished" and event["progress"]["done"] == 4, event["progress"]
