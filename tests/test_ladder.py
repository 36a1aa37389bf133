"""The ladder: bots that seek with ``ladder: true`` play rated games for as long as they are connected.

The pairing rules in the sans-I/O core without a network (rating proximity, a window that widens with the
time waited, no immediate rematch while others wait, anchors never meeting, colours alternating per pair), the
hall's handling of ladder seeks (validation, rated rooms at the ladder's time, players put back after each
stored result, disconnections, anchors), the ``plyhall serve`` options, and a real server on which ``plyhall bot
--ladder`` processes and house-bot anchors play rated games that show up on /api/ratings/GAME.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import pytest

from plyhall.commands import serve as cli
from protocol.ratings import anchor_rating
from server.core.env import Env
from server.core.hall import Hall
from server.core.house import HOUSE_LEVELS, HOUSE_RESTARTS
from server.core.ladder import (
    LADDER_TIMES,
    WINDOW_BASE,
    WINDOW_GROWTH,
    WINDOW_OPEN,
    Ladder,
    LadderConfig,
    parse_anchors,
    parse_ladder_times,
)
from server.core.seeks import SeekDesk
from tests.conftest import free_port
from tests.helpers import HallDriver, assert_clear_error, http_json, play_moves, plyhall, start_server, stop

GAME = "connect4"


def ladder_of(players: dict[str, tuple[float, float]], since: float = 0.0) -> Ladder:
    """A ladder of Connect Four with these players waiting since ``since``: name -> (rating, deviation)."""
    ladder = Ladder()
    for name, rating in players.items():
        ladder.ratings[(GAME, name)] = rating
        ladder.join(name, GAME, since)
    return ladder


def everyone(name: str) -> bool:
    return True


# The pairing rules, sans I/O -----------------------------------------------------------------------------------


def test_the_closest_rating_is_paired_first_and_a_far_one_waits():
    ladder = ladder_of({"ann": (1500, 50), "bob": (1520, 50), "cat": (1900, 50), "dan": (1570, 50)})
    assert ladder.pairings(GAME, 0.0, everyone) == [("ann", "bob")]
    assert ladder.rungs[(GAME, "ann")].since is None and ladder.rungs[(GAME, "ann")].last_opponent == "bob"
    assert [rung.name for rung in ladder.rungs.values() if rung.since is not None] == ["cat", "dan"]


def test_the_window_widens_with_the_time_waited_until_anybody_will_do():
    ladder = ladder_of({"ann": (1500, 50), "bob": (1900, 50)})
    assert ladder.pairings(GAME, 0.0, everyone) == []
    opens = (400 - WINDOW_BASE) / WINDOW_GROWTH  # 30 s: 100 points + 10 a second reach the 400 between them
    assert ladder.next_time(0.0, everyone) == pytest.approx(opens)
    assert ladder.pairings(GAME, opens - 0.5, everyone) == []
    assert ladder.pairings(GAME, ladder.next_time(0.0, everyone), everyone) == [("ann", "bob")]
    far = ladder_of({"ann": (800, 50), "bob": (2000, 50)})  # 1,200 apart: only the open window pairs them
    assert far.next_time(0.0, everyone) == pytest.approx(WINDOW_OPEN)
    assert far.pairings(GAME, WINDOW_OPEN - 0.1, everyone) == []
    assert far.pairings(GAME, WINDOW_OPEN, everyone) == [("ann", "bob")]


def test_each_player_must_accept_the_other_and_a_provisional_window_starts_wide():
    ladder = ladder_of({"new": (1500, 350), "old": (1800, 50)})
    assert ladder.window(ladder.rungs[(GAME, "new")], 0.0) == 350  # its deviation: 300 points is within it
    assert ladder.pairings(GAME, 0.0, everyone) == []  # ... but not within the established player's 100
    assert ladder.next_time(0.0, everyone) == pytest.approx((300 - WINDOW_BASE) / WINDOW_GROWTH)
    late = ladder_of({"new": (1500, 350)}, since=0.0)
    late.ratings[(GAME, "old")] = (1800, 50)
    late.join("old", GAME, 15.0)  # arrived later: its own window is the narrower one, and decides
    assert late.next_time(15.0, everyone) == pytest.approx(15.0 + 20.0)


def test_no_rematch_while_anybody_else_waits():
    ladder = ladder_of({"ann": (1500, 50), "bob": (1510, 50)})
    assert ladder.pairings(GAME, 0.0, everyone) == [("ann", "bob")]
    ladder.ended("g1", GAME, ("ann", "bob"))
    ladder.stored("g1", 10.0)
    ladder.ratings[(GAME, "cat")] = (1600, 50)
    ladder.join("cat", GAME, 10.0)
    # bob is ann's closest, but they just played: ann meets cat (100 points: within both windows)
    assert ladder.pairings(GAME, 10.0, everyone) == [("ann", "cat")]
    ladder.ended("g2", GAME, ("ann", "cat"))
    assert ladder.stored("g2", 20.0)
    ladder.leave("bob")  # nobody else waits: a rematch is better than no game
    assert ladder.pairings(GAME, 20.0, everyone) == [("ann", "cat")]


def test_a_lone_bot_goes_round_the_anchors_game_after_game():
    """One bot and two anchors (a new server's usual start): the bot keeps playing, alternating between them; an
    anchor's previous opponent is no reason not to play it again (the ladder used to stop after one game each)."""
    random_anchor, novice_anchor = f"house-random-{GAME}", f"house-novice-{GAME}"
    ladder = ladder_of({random_anchor: (800, 50), novice_anchor: (1000, 50), "ann": (900, 60)})
    opponents = []
    now = 0.0
    for game in range(6):
        pairs = ladder.pairings(GAME, now, everyone)
        if not pairs:
            wake = ladder.next_time(now, everyone)
            assert wake is not None, f"the ladder stopped after {game} games"
            now = wake
            pairs = ladder.pairings(GAME, now, everyone)
        assert len(pairs) == 1 and "ann" in pairs[0], pairs
        opponents.append(next(name for name in pairs[0] if name != "ann"))
        ladder.ended(f"g{game}", GAME, pairs[0])
        now += 30.0
        ladder.stored(f"g{game}", now)
    assert all(a != b for a, b in zip(opponents, opponents[1:], strict=False)), opponents  # round the anchors


def test_a_bot_that_waited_a_minute_is_paired_whatever_the_others_windows():
    """Bots coming back from their games pair at once among themselves; a bot far from them in rating, once it
    has waited WINDOW_OPEN seconds, is paired with the next of them that comes back instead of starving."""
    ladder = ladder_of({"far": (2300, 50)}, since=0.0)
    for name in ("ann", "bob"):
        ladder.ratings[(GAME, name)] = (1500, 50)
    ladder.join("ann", GAME, WINDOW_OPEN + 5)
    ladder.join("bob", GAME, WINDOW_OPEN + 5)
    pairs = ladder.pairings(GAME, WINDOW_OPEN + 5, everyone)
    assert pairs and "far" in pairs[0], pairs  # the longest waiter first, though 800 points from both


def test_a_far_player_is_waited_for_rather_than_a_rematch():
    ladder = ladder_of({"ann": (1500, 50), "bob": (1510, 50), "cat": (1800, 50)})
    for rung, other in (("ann", "bob"), ("bob", "ann")):
        ladder.rungs[(GAME, rung)].last_opponent = other
    assert ladder.pairings(GAME, 0.0, everyone) == []
    when = ladder.next_time(0.0, everyone)
    assert when == pytest.approx((290 - WINDOW_BASE) / WINDOW_GROWTH)  # bob and cat, 290 apart, meet first
    assert ladder.pairings(GAME, when, everyone) == [("bob", "cat")]


def test_anchors_never_meet_and_are_paired_by_their_pinned_ratings():
    ladder = ladder_of({})
    for level in ("random", "novice"):
        ladder.join(f"house-{level}-{GAME}", GAME, 0.0)
    assert ladder.pairings(GAME, 1000.0, everyone) == [] and ladder.next_time(0.0, everyone) is None
    assert ladder.rating(GAME, f"house-novice-{GAME}") == (anchor_rating("novice", GAME), 50.0)
    ladder.ratings[(GAME, "ann")] = (anchor_rating("novice", GAME) + 300, 50)  # 300 above: only her window counts
    ladder.join("ann", GAME, 0.0)
    assert ladder.pairings(GAME, 0.0, everyone) == []
    assert ladder.next_time(0.0, everyone) == pytest.approx((300 - WINDOW_BASE) / WINDOW_GROWTH)
    assert ladder.pairings(GAME, 20.0, everyone) == [("ann", f"house-novice-{GAME}")]


def test_players_not_ready_are_left_waiting():
    ladder = ladder_of({"ann": (1500, 50), "bob": (1500, 50)})
    assert ladder.pairings(GAME, 0.0, lambda name: name != "bob") == []
    assert ladder.next_time(0.0, lambda name: name != "bob") is None


def test_colours_alternate_between_the_same_two_on_the_ladder():
    desk = SeekDesk()
    seats = []
    for at in (0.0, 10.0, 20.0):
        for name in ("ann", "bob"):
            desk.ladder_seek(name, GAME, at)
        pairing, = desk.ladder_pairings(GAME, at, everyone)
        assert pairing.ladder and pairing.settings.rated and pairing.settings.time_control.to_json() == {
            "per_move": LADDER_TIMES[GAME]}
        seats.append((pairing.first, pairing.second))
        desk.ladder.leave("ann")
        desk.ladder.leave("bob")
    assert seats == [("ann", "bob"), ("bob", "ann"), ("ann", "bob")]


# The options of `plyhall serve` ------------------------------------------------------------------------------


def test_ladder_times_are_parsed_and_bad_ones_refused_clearly():
    assert parse_ladder_times("connect4=5, amazons=30") == {"connect4": 5.0, "amazons": 30.0}
    assert parse_ladder_times("") == {}
    for text, words in (("connect4", "GAME=SECONDS"), ("chess=5", "unknown game 'chess'"),
                        ("connect4=fast", "'fast' is not a number"), ("connect4=0", "0.05 to 3600"),
                        ("connect4=5,connect4=6", "twice")):
        with pytest.raises(ValueError, match=words):
            parse_ladder_times(text)


def test_anchors_are_parsed_and_bad_ones_refused_clearly():
    assert parse_anchors(["connect4:random,novice", "amazons:master"], HOUSE_LEVELS) == [
        ("connect4", "random"), ("connect4", "novice"), ("amazons", "master")]
    for values, words in ((["connect4"], "GAME:LEVEL"), (["chess:master"], "unknown game"),
                          (["connect4:grandmaster"], "unknown level 'grandmaster'"),
                          (["connect4:master", "connect4:master"], "twice")):
        with pytest.raises(ValueError, match=words):
            parse_anchors(values, HOUSE_LEVELS)


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    return parser.parse_args(["serve", *argv])


def test_serve_reports_every_bad_ladder_option():
    errors = cli.serve_option_errors(_serve_args("--ladder-time", "connect4=0", "--ladder-anchors", "go:master"))
    assert any(e.startswith("--ladder-time: connect4:") for e in errors), errors
    assert any(e.startswith("--ladder-anchors: unknown game 'go'") for e in errors), errors
    # anchors are house bots of their own, on top of --house-bots: any number of each is fine
    assert cli.serve_option_errors(_serve_args("--house-bots", "1", "--ladder-anchors", "connect4:random,master")) == []
    args = _serve_args("--ladder-anchors", "connect4:random,master", "--ladder-time", "connect4=2")
    assert cli.serve_option_errors(args) == []
    config = cli.ladder_config(args)
    assert config.times == {"connect4": 2.0} and config.anchors == (("connect4", "random"), ("connect4", "master"))


def test_plyhall_bot_ladder_refuses_what_the_ladder_decides_and_says_where_it_stands():
    from client.play_loop import PlayerRunner, RunOptions, describe_seeking
    from client.player import FunctionPlayer
    from client.runner import bot
    from plyhall.commands import bot as bot_command

    parser = argparse.ArgumentParser()
    bot_command.register(parser.add_subparsers())
    args = parser.parse_args(["bot", "--game", GAME, "--name", "x", "--ladder", "--room", "R", "--per-move", "3"])
    assert bot._usage_problem(args).startswith("--ladder cannot go with --room or --per-move: the ladder pairs")
    args = parser.parse_args(["bot", "--game", GAME, "--name", "x", "--ladder", "--series", "3"])
    assert "--series" in bot._usage_problem(args)
    with pytest.raises(ValueError, match="the ladder is played by game"):
        PlayerRunner(FunctionPlayer(lambda turn: None), RunOptions(name="x", game=GAME, ladder=True, tournament="T"))
    seeking = {"type": "seeking", "seek": {"game": GAME, "time_control": {"per_move": 5.0}, "games": 1, "ladder": True},
               "ladder": {"rating": 1612.4, "deviation": 61.0, "provisional": False, "waiting": 2, "playing": 4}}
    assert describe_seeking(seeking) == (f"on the ladder of {GAME} (5 s a move, 1 game), rating 1612 ± 61: waiting for "
                                         "an opponent (2 waiting, 4 playing)")


# The hall --------------------------------------------------------------------------------------------------


def _claimed(desk: HallDriver, *names: str) -> HallDriver:
    for name in names:
        assert desk.login(name, secret=f"{name}'s secret")["claimed"]
    return desk


def _ladder_seek(desk: HallDriver, name: str, **extra: object) -> list[dict]:
    return desk.send(name, {"type": "seek", "game": GAME, "ladder": True, **extra})


def _joined(replies: list[dict]) -> dict:
    return next(msg for msg in replies if msg["type"] == "joined")


@pytest.mark.parametrize(("extra", "words"), [
    ({"time_control": {"per_move": 1}}, "takes no time_control"),
    ({"games": 3}, "takes no games"),
    ({"options": {"first": 1}}, "takes no options"),
    ({"rated": False}, "all rated"),
    ({"game": "chess"}, "unknown game 'chess'"),
])
def test_a_bad_ladder_seek_is_refused_clearly(extra, words):
    desk = _claimed(HallDriver(), "ann")
    error = assert_clear_error(_ladder_seek(desk, "ann", **extra)[0], "bad_option", extra)
    assert words in error["message"]
    assert not desk.hall.seeks.ladder.rungs


def test_only_names_that_can_be_rated_go_on_the_ladder():
    desk = HallDriver(house_limit=2)
    desk.login("guest")
    error = assert_clear_error(_ladder_seek(desk, "guest")[0], "bad_option")
    assert "claimed" in error["message"] and "secret" in error["message"]
    desk.login("house-random-7", secret=desk.hall.house_secret)
    error = assert_clear_error(_ladder_seek(desk, "house-random-7")[0], "bad_option")
    assert "anchors" in error["message"]
    desk.login(f"house-master-{GAME}", secret=desk.hall.house_secret)
    assert _ladder_seek(desk, f"house-master-{GAME}")[0]["type"] == "seeking"


def test_two_ladder_bots_play_rated_games_one_after_another_colours_alternating():
    desk = _claimed(HallDriver(), "ann", "bob")
    first = _ladder_seek(desk, "ann")[0]
    assert first["type"] == "seeking" and first["seek"]["ladder"] and first["seek"]["rated"]
    assert first["ladder"] == {"rating": 1500.0, "deviation": 350.0, "provisional": True, "waiting": 0, "playing": 0}
    room = _joined(_ladder_seek(desk, "bob"))["settings"]
    assert room["rated"] and room["time_control"] == {"per_move": LADDER_TIMES[GAME]} and room["games"] == 1
    assert room["seats"] == ["ann", "bob"]  # who waited sits first when two meet for the first time
    seats = [tuple(room["seats"])]
    for _ in range(2):
        play_moves(desk, room["name"])  # a game resigned before two moves each would not be rated
        desk.send(seats[-1][0], {"type": "resign", "room": room["name"]})
        over = desk.last("ann", "game_over")
        assert over["players"] == list(seats[-1]) and not over["next_game"]
        assert room["name"] not in desk.hall.rooms, "a ladder room goes once its game is over"
        assert desk.last("ann", "left")["room"] == room["name"]
        room = desk.last("ann", "joined")["settings"]  # the result stored, both are paired again at once
        seats.append(tuple(desk.hall.rooms[room["name"]].seats))
    assert seats[1] == seats[0][::-1] and seats[2] == seats[0]
    assert [w.record.rated for w in desk.writes if type(w).__name__ == "GameEnded"] == [True, True]


def test_a_third_bot_is_met_before_a_rematch():
    desk = _claimed(HallDriver(), "ann", "bob", "cat")
    _ladder_seek(desk, "ann")
    room = _joined(_ladder_seek(desk, "bob"))["settings"]["name"]
    _ladder_seek(desk, "cat")  # nobody free to meet: it waits
    desk.send("ann", {"type": "resign", "room": room})
    meetings = {tuple(sorted(desk.hall.rooms[name].seats)) for name in desk.hall.rooms}
    assert len(meetings) == 1 and "cat" in meetings.pop(), "cat plays one of them; the other waits"
    waiting = [rung.name for rung in desk.hall.seeks.ladder.rungs.values() if rung.since is not None]
    assert len(waiting) == 1 and waiting[0] in ("ann", "bob")
    assert desk.last(waiting[0], "seeking")["ladder"]["playing"] == 2


def test_the_hall_wakes_when_a_widening_window_makes_a_pair():
    desk = _claimed(HallDriver(), "ann", "bob")
    desk.hall.seeks.ladder.ratings.update({(GAME, "ann"): (1500.0, 50.0), (GAME, "bob"): (1800.0, 50.0)})
    _ladder_seek(desk, "ann")
    assert _ladder_seek(desk, "bob")[0]["type"] == "seeking"
    wake = desk.hall.next_deadline()
    assert wake == pytest.approx((300 - WINDOW_BASE) / WINDOW_GROWTH)
    desk.tick(wake - 1.0)
    assert not desk.hall.rooms
    desk.tick(1.0)
    assert desk.last("ann", "game_start")["players"] in (["ann", "bob"], ["bob", "ann"])


def test_game_over_carries_the_ratings_the_stored_result_made():
    hall = Hall(Env.fixed())
    desk = _claimed(HallDriver(hall), "ann", "bob")
    _ladder_seek(desk, "ann")
    room = _joined(_ladder_seek(desk, "bob"))["settings"]["name"]
    play_moves(desk, room)
    out = hall.handle(desk.conn("ann"), {"type": "resign", "room": room}, 1.0)
    record = out.ended[0]
    assert record.rated
    players = record.players
    record.ratings = [{"name": players[0], "rating": 1400.0, "deviation": 290.0, "change": -100.0, "provisional": True},
                      {"name": players[1], "rating": 1600.0, "deviation": 290.0, "change": 100.0, "provisional": True}]
    after = hall.committed(out, 1.0)  # what storage does in the result's transaction, the server then does
    overs = [msg for _, msg in out.messages if msg["type"] == "game_over"]
    assert overs and all(msg["ratings"] == record.ratings for msg in overs)
    assert hall.seeks.ladder.rating(GAME, players[1]) == (1600.0, 290.0)
    assert any(msg["type"] == "game_start" for _, msg in after.messages), "and they are paired again"


def test_a_disconnected_bot_leaves_the_ladder_but_one_in_a_game_keeps_its_place_until_it_ends():
    desk = _claimed(HallDriver(), "ann", "bob", "cat")
    _ladder_seek(desk, "cat")
    desk.disconnect("cat")
    assert (GAME, "cat") not in desk.hall.seeks.ladder.rungs
    _ladder_seek(desk, "ann")
    room = _joined(_ladder_seek(desk, "bob"))["settings"]["name"]
    desk.disconnect("ann")  # its seat waits for it: so does its place on the ladder
    assert (GAME, "ann") in desk.hall.seeks.ladder.rungs
    desk.conns["ann"] = 99  # back on a new connection, within the grace period
    assert desk.login("ann", secret="ann's secret")["rooms"] == [room]
    desk.send("bob", {"type": "resign", "room": room})
    assert desk.last("ann", "game_start")["room"] != room, "back in time, it plays on"
    room = desk.last("ann", "game_start")["room"]
    desk.disconnect("bob")
    desk.tick(31.0)  # bob never came back: it lost (its clock or its grace ran out), and is off the ladder
    over = desk.last("ann", "game_over")
    assert over["room"] == room and over["players"][over["winner"]] == "ann"
    assert (GAME, "bob") not in desk.hall.seeks.ladder.rungs and desk.last("ann", "seeking")["seek"]["ladder"]


def test_bots_busy_in_another_game_are_paired_on_the_ladder_once_it_ends():
    desk = _claimed(HallDriver(), "ann", "bob")
    desk.send("ann", {"type": "create_room", "game": GAME, "name": "Resumed"})
    desk.send("ann", {"type": "join", "room": "Resumed"})
    desk.send("bob", {"type": "join", "room": "Resumed"})  # as a game resumed after a restart would be
    assert [_ladder_seek(desk, name)[0]["type"] for name in ("ann", "bob")] == ["seeking", "seeking"]
    assert list(desk.hall.rooms) == ["Resumed"], "one game at a time: they wait until it is over"
    desk.send("ann", {"type": "resign", "room": "Resumed"})
    start = desk.last("bob", "game_start")
    assert start["room"] != "Resumed" and sorted(start["players"]) == ["ann", "bob"]


def test_cancel_seek_or_a_plain_seek_takes_a_bot_off_the_ladder():
    desk = _claimed(HallDriver(), "ann")
    _ladder_seek(desk, "ann")
    assert desk.send("ann", {"type": "cancel_seek", "game": GAME})[0]["type"] == "seek_cancelled"
    assert not desk.hall.seeks.ladder.rungs
    _ladder_seek(desk, "ann")
    assert desk.send("ann", {"type": "seek", "game": GAME})[0]["type"] == "seeking"
    assert not desk.hall.seeks.ladder.rungs and desk.hall.seeks.waiting() == 1
    _ladder_seek(desk, "ann")
    assert desk.hall.seeks.waiting() == 1, "the ladder seek replaced the plain one"


def test_anchors_start_with_the_server_count_as_house_bots_and_restart_a_few_times():
    hall = Hall(Env.fixed(), house_limit=3, ladder=LadderConfig(anchors=((GAME, "random"), (GAME, "master"))))
    names = [f"house-random-{GAME}", f"house-master-{GAME}"]
    assert [start.name for start in hall.restarted_house] == names
    start = hall.restarted_house[0]
    assert start.ladder and "--ladder" in start.argv("ws://x") and "--room" not in start.argv("ws://x")
    assert set(hall.house.running) == set(names)
    desk = _claimed(HallDriver(hall), "ann")
    busy = desk.send("ann", {"type": "create_room", "game": GAME, "opponent": "master", "rated": True,
                             "time_control": {"per_move": 5}})[0]
    assert "ladder" in assert_clear_error(busy, "busy")["message"]
    for _ in range(HOUSE_RESTARTS):
        assert [s.name for s in hall.house_exited(names[0], 1.0).house] == [names[0]]
    assert hall.house_exited(names[0], 1.0).house == [], "not in a loop"
    hall.house.anchor_played(names[1])
    assert hall.house_exited(names[1], 1.0).house[0].ladder


def test_an_anchor_plays_on_after_its_games_whichever_seat_it_had():
    anchor = f"house-novice-{GAME}"
    hall = Hall(Env.fixed(), house_limit=1, ladder=LadderConfig(anchors=((GAME, "novice"),)))
    desk = _claimed(HallDriver(hall), "ann")
    desk.login(anchor, secret=hall.house_secret)
    hall.seeks.ladder.ratings[(GAME, "ann")] = (anchor_rating("novice", GAME) + 50, 80.0)  # close to the anchor
    _ladder_seek(desk, anchor)
    _ladder_seek(desk, "ann")
    seats = []
    for _ in range(2):
        room = desk.last("ann", "game_start")["room"]
        seats.append(hall.rooms[room].seats.index(anchor))
        out = hall.handle(desk.conn("ann"), {"type": "resign", "room": room}, desk.now)
        assert not out.house_stop, "the anchor is not stopped when its opponent leaves the room first"
        desk.take(out)
    assert sorted(seats) == [0, 1] and anchor in hall.house.running


def test_an_anchor_seated_first_is_not_stopped_and_its_crash_rates_nobody():
    """A ladder room seats its players one by one: an anchor paired by the clock (it waited longest) is seated first
    and is alone in the room for a moment, which must not read as a house bot nobody needs (it was stopped, and its
    opponent won a rated game). And a game an anchor loses by its process ending is recorded but rated for nobody."""
    anchor = f"house-novice-{GAME}"
    hall = Hall(Env.fixed(), house_limit=1, ladder=LadderConfig(anchors=((GAME, "novice"),)))
    desk = _claimed(HallDriver(hall), "ann")
    desk.login(anchor, secret=hall.house_secret)
    hall.seeks.ladder.ratings[(GAME, "ann")] = (anchor_rating("novice", GAME) + 300, 50.0)  # 300 above the anchor
    _ladder_seek(desk, anchor)
    desk.now += 1.0  # the anchor has waited longer: paired first, it is seated first
    assert _ladder_seek(desk, "ann")[0]["type"] == "seeking"
    desk.now = hall.next_deadline() + 0.01
    out = hall.tick(desk.now)
    assert anchor not in out.house_stop, "the anchor is needed: it is never stopped for being alone in a room"
    desk.take(out)
    assert desk.last("ann", "game_start")["players"][0] == anchor  # the longest waiter was seated first
    crashed = hall.house_exited(anchor, desk.now)
    over = list(crashed.ended)
    assert len(over) == 1 and over[0].reason == f"{anchor} stopped" and over[0].status == "finished"
    assert not over[0].rated, "a house bot's crash is nobody's rated result"
    desk.take(crashed)  # stored: the anchor waits again, but the crash is no game played
    assert hall.house.restarts.get(anchor) == 1, "restarts after crashes stay counted (capped), not reset by them"


# A real server ----------------------------------------------------------------------------------------------


def _board(port: int) -> dict[str, dict]:
    status, body = http_json(port, f"/api/ratings/{GAME}")
    return {row["name"]: row for row in body["players"]} if status == 200 else {}


def test_ladder_bots_and_anchors_play_rated_games_on_a_real_server(tmp_path: Path):
    port = free_port()
    server = start_server(tmp_path / "plyhall.db", port, "--ladder-time", f"{GAME}=0.5", "--ladder-anchors",
                          f"{GAME}:random,novice", "--rated-networks", "127.0.0.1")  # the bots share one address
    bots: list[subprocess.Popen] = []
    try:
        names = {"lad-random": "random", "lad-novice": "novice", "lad-novice-2": "novice"}
        for name, level in names.items():
            bots.append(plyhall("bot", "--game", GAME, "--level", level, "--name", name, "--secret", f"{name}-secret",
                                "--ladder", "--url", f"ws://127.0.0.1:{port}/ws"))
        anchors = [f"house-random-{GAME}", f"house-novice-{GAME}"]
        deadline = time.monotonic() + 240  # only catches a hang: the condition decides
        board = _board(port)
        while not (all(board.get(n, {}).get("games", 0) >= 2 for n in names)
                   and all(board.get(a, {}).get("games", 0) >= 2 for a in anchors)):
            assert time.monotonic() < deadline, f"the ladder did not get going: {json.dumps(board)[:2000]}"
            assert all(bot.poll() is None for bot in bots), [bot.communicate() for bot in bots if bot.poll()]
            time.sleep(0.5)
            board = _board(port)
        assert all(board[a]["anchor"] and board[a]["rating"] == anchor_rating(a.split("-")[1], GAME)
                   for a in anchors)
        assert all(board[n]["ladder"] and not board[n]["anchor"] for n in names)
        status, player = http_json(port, "/api/players/lad-random")
        assert status == 200 and len(player["ratings"][GAME]["history"]) >= 2
        assert {h["opponent"] for h in player["ratings"][GAME]["history"]} - {"lad-random"}
    finally:
        outputs = [stop(bot) for bot in bots]
        stop(server)
    said = outputs[0][0]
    assert f"on the ladder of {GAME}" in said and "rating " in said, said[-3000:]
    checked = plyhall("ratings", "--recompute", "--db", str(tmp_path / "plyhall.db"))
    out, err = checked.communicate(timeout=120)
    assert checked.returncode == 0, out + err


def test_a_bot_that_drops_while_waiting_leaves_the_ladder_even_when_busy_elsewhere():
    """ann waits on the Connect Four ladder while she plays an Amazons game from a seek, and drops: she is off the
    ladder at once (she used to stay "on the ladder" for ever, since she held a seat elsewhere)."""
    desk = _claimed(HallDriver(), "ann", "bob")
    desk.send("ann", {"type": "seek", "game": "amazons"})
    desk.send("bob", {"type": "seek", "game": "amazons"})
    assert desk.last("ann", "game_start")["game"] == "amazons"
    _ladder_seek(desk, "ann")
    assert "ann" in desk.hall.seeks.ladder.names(GAME)
    desk.disconnect("ann")
    assert "ann" not in desk.hall.seeks.ladder.names(GAME)


def test_a_ladder_bot_told_to_stop_after_n_games_plays_exactly_n(tmp_path: Path):
    """`plyhall bot --ladder --games 2` against an anchor: the bot leaves the ladder as its last game starts, so the
    server does not pair it once more as it ends (it used to, and the bot, gone, lost that extra game on time to the
    anchor, which stays: a rated loss it never played)."""
    port = free_port()
    server = start_server(tmp_path / "plyhall.db", port, "--ladder-time", f"{GAME}=2", "--grace", "1",
                          "--ladder-anchors", f"{GAME}:minimax-3")  # pinned within a new bot's window
    try:
        bot = plyhall("bot", "--game", GAME, "--level", "minimax-1", "--name", "lad-a", "--secret", "lad-a-pw",
                      "--ladder", "--games", "2", "--url", f"ws://127.0.0.1:{port}/ws")
        out, err = bot.communicate(timeout=120)
        assert bot.returncode == 0 and "done: " in out, out + err
        deadline = time.monotonic() + 30  # only catches a hang: the bot's rooms go as it leaves
        while any("lad-a" in room.get("players", []) for room in http_json(port, "/api/rooms")[1]["rooms"]):
            assert time.monotonic() < deadline, http_json(port, "/api/rooms")[1]
            time.sleep(0.2)
        time.sleep(1.5)  # past the grace period, a game it was paired into would be lost (and recorded) by now
        status, games = http_json(port, "/api/games?limit=50&player=lad-a")
        assert len(games["games"]) == 2, [(g["players"], g["reason"]) for g in games["games"]]
        assert _board(port)["lad-a"]["games"] == 2
    finally:
        stop(server)


def test_a_server_whose_only_house_bots_are_anchors_offers_no_house_bot_rooms():
    """`--ladder-anchors` without `--house-bots`: the house bots are all anchors, so the welcome lists no levels to
    play in rooms, and a room against one is refused with what to do instead (it was refused `busy`, for ever)."""
    hall = Hall(Env.fixed(), house_limit=1, ladder=LadderConfig(anchors=((GAME, "master"),)))
    desk = HallDriver(hall)
    assert "house" not in desk.login("ann")
    reply = desk.send("ann", {"type": "create_room", "game": GAME, "opponent": "random",
                              "time_control": {"per_move": 5}})[0]
    assert_clear_error(reply, "bad_option")
    assert "ladder's anchors" in reply["message"] and "--house-bots" in reply["message"]
    more = HallDriver(Hall(Env.fixed(), house_limit=3, ladder=LadderConfig(anchors=((GAME, "master"),))))
    assert more.login("bob")["house"]  # room beside the anchor: levels offered
