"""The words the server says to people name the players, never their seats: how a game ended (in game_over, and in the
stored record the replay list and the API repeat), a tied tournament announced as a tie, and a house bot refusal
that says "try again" once and does not count the ladder's anchors."""

from __future__ import annotations

import logging

from protocol.games.amazons import AMAZONS
from server.core.env import Env
from server.core.house import HouseDesk
from server.core.identity import Holder
from server.core.room import Room, RoomSettings
from server.tournament import ScoredGame, compute_standings
from server.tournament.director import Director, define
from tests.helpers import HallDriver
from tests.test_identity import holding


def msgs(out, name, kind):
    return [m for n, m in out.messages if n == name and m["type"] == kind]


def seated(game: str = "connect4", **settings) -> Room:
    room = Room("Lake", RoomSettings.parse(game, **settings), Env.fixed(1000.0))
    room.join("alice", "algebraic", 0.0)
    room.join("bob", "algebraic", 0.0)
    return room


def ended(out, name: str = "alice") -> tuple[dict, str]:
    """The game_over ``name`` was sent, and the reason stored in the record."""
    (over,) = msgs(out, name, "game_over")
    (record,) = out.ended
    assert record.reason == over["reason"], "the page, the API and the replay list say the same"
    return over, record.reason


def test_a_resignation_names_who_resigned_and_keeps_the_winner_seat():
    room = seated()
    room.move("alice", "4", 1.0)
    over, reason = ended(room.resign("bob", 2.0))
    assert reason == "bob resigned" and over["winner"] == 0


def test_the_log_line_of_a_game_start_names_the_game_beside_the_room_not_beside_a_player(caplog):
    with caplog.at_level(logging.INFO, logger="plyhall.rooms"):
        room = seated()
    (line,) = [r.getMessage() for r in caplog.records if " started in " in r.getMessage()]
    assert line == f"game {room.record_id} of connect4 started in Lake: alice vs bob, game 1 of 1"


def test_a_flag_fall_and_a_player_who_never_came_back_are_named():
    room = seated(time_control={"initial": 5})
    over, reason = ended(room.tick(6.0))
    assert reason == "alice ran out of time" and over["winner"] == 1
    room = seated(grace=10)
    room.move("alice", "4", 1.0)
    room.disconnected("bob", 2.0)
    over, reason = ended(room.tick(13.0))
    assert reason == "bob disconnected and did not come back in time" and over["winner"] == 0


def test_an_illegal_move_that_loses_and_a_move_out_of_turn_name_the_player():
    room = seated(illegal_move="lose")
    (error,) = msgs(room.move("bob", "4", 1.0), "bob", "error")
    assert error["message"] == "it is alice's turn, not yours"
    over, reason = ended(room.move("alice", "9", 1.0))
    assert reason.startswith("illegal move by alice (") and over["winner"] == 1


def test_no_legal_move_says_who_had_none():
    room = seated("amazons")
    squares = {"a10": "W", "j10": "W", "f7": "W", "j1": "W", "a1": "B", "b1": "B", "a2": "B", "b2": "B",
               "a3": "x", "b3": "x", "c3": "x", "c2": "x"}  # black's queens walled in but for c1
    rows = [f"{rank} " + " ".join(squares.get(f"{file}{rank}", ".") for file in "abcdefghij")
            for rank in range(10, 0, -1)]
    room.state = AMAZONS.from_picture("\n".join([*rows, "   a b c d e f g h i j"]), to_move=1)
    over, reason = ended(room.move("bob", "j1-d1/c1", 1.0))  # white walls black's last square in
    assert reason == "alice has no legal move" and over["winner"] == 1


def test_an_entrant_who_did_not_come_is_named_without_a_seat_number():
    room = Room("Lake", RoomSettings.parse("connect4", grace=5), Env.fixed(1000.0))
    room.tournament = "cup"
    room.hold("alice", 0, 0.0)
    room.join("bob", "algebraic", 0.0, seat=1)
    over, reason = ended(room.tick(6.0), "bob")
    assert reason == "alice did not come" and over["winner"] == 1


def test_a_tournament_tied_at_the_top_is_announced_as_a_tie():
    tied = compute_standings([ScoredGame("house-novice-11", "house-novice-12", "1/2-1/2"),
                              ScoredGame("house-novice-12", "house-novice-11", "1/2-1/2")])
    assert [row.rank for row in tied.rows] == [1, 1]
    assert tied.first_place() == "house-novice-11 and house-novice-12 share first place with 1 point"
    won = compute_standings([ScoredGame("ann", "bob", "1-0"), ScoredGame("bob", "ann", "1/2-1/2")])
    assert won.first_place() == "ann wins with 1.5 points"


def test_a_finished_event_tied_at_the_top_says_so_in_its_results_and_its_json():
    settings = define({"game": "connect4", "format": "round-robin", "name": "Cup", "games_per_pairing": 2},
                      ["house-novice-11", "house-novice-12"], {}, 0.0)
    director = Director(settings)
    director.control("start")
    while director.status == "running":
        for game in director.due():
            director.opened(game.number, f"room{game.number}", 0.0)
            director.ended(game.number, 0, "finished", f"g{game.number}", 1.0)  # white wins: one game each
    said = "house-novice-11 and house-novice-12 share first place with 1 point"
    assert director.to_text(0.0).splitlines()[0] == f"Cup: connect4 round-robin, finished: {said}"
    assert director.to_json(0.0)["first_place"] == said


def test_the_house_bots_refusal_says_try_again_once_and_leaves_the_anchors_out():
    desk = HouseDesk(4 + 1)  # plyhall serve --house-bots 4 --ladder-anchors connect4:novice
    desk.anchor("connect4", "novice")
    for n in range(4):
        assert desk.refusal("novice", True, 1, f"p{n}", f"10.0.0.{n}", 1, 0) is None
        desk.room_bot("novice", "connect4", f"room {n}", 1, f"p{n}", f"10.0.0.{n}", lambda name: False)
    refusal = desk.refusal("novice", True, 1, "p9", "10.0.0.9", 1, 0)
    assert refusal is not None and refusal.code == "busy"
    assert refusal.text.lower().count("try again") == 1
    assert refusal.text.startswith("all 4 house bots of this server are playing")


def test_the_readme_tournament_starts_beside_three_ladder_anchors():
    """plyhall serve --house-bots 4 --ladder-anchors connect4:random,novice,master: the anchors come on top, so the
    README's tournament (two house entrants) starts (it was refused: "this server can start 1 more now")."""
    desk = HouseDesk(4 + 3)  # what plyhall serve gives the hall
    for level in ("random", "novice", "master"):
        desk.anchor("connect4", level)
    assert desk.free_for(2) is None and desk.free_for(4) is None and desk.free_for(5) == 4


def test_a_bot_restarted_without_a_secret_is_told_to_wait_or_use_a_secret_not_about_a_new_secret():
    desk, _ = holding(Holder.SEAT, claimed=False)  # ann sits in a game, and her bot's process was just stopped
    refused = desk.send("restarted", {"type": "login", "name": "ann"})[0]
    assert refused["code"] == "resume_required"
    assert "new secret" not in refused["message"] and "choose another name" not in refused["message"]
    assert "start again" in refused["message"] and "--secret" in refused["message"]
    refused = desk.send("with a secret", {"type": "login", "name": "ann", "secret": "fresh"})[0]
    assert "gave no secret" in refused["message"]  # why a secret of its own does not help here


def test_a_bot_restarted_too_soon_is_told_the_time_actually_left_not_the_default_grace():
    desk, _ = holding(Holder.SEAT, claimed=False)  # ann's seat is kept 30 s (the default grace) from now
    desk.tick(12.0)
    refused = desk.send("restarted", {"type": "login", "name": "ann"})[0]
    assert refused["code"] == "resume_required"
    assert "given up in 18 s" in refused["message"] and "30 s" not in refused["message"], refused["message"]
    assert refused["retry_after"] == 18.0
    desk.tick(17.5)
    refused = desk.send("again", {"type": "login", "name": "ann"})[0]
    assert "given up in 1 s" in refused["message"], refused["message"]  # 0.5 s, said as a whole second
    desk.tick(1.0)  # the grace period is over: ann's seat is given up (her game lost), and the name is free
    assert desk.send("at last", {"type": "login", "name": "ann"})[0]["type"] == "welcome"


def test_a_name_in_use_says_what_to_do_without_the_rule_in_brackets():
    desk = HallDriver()
    desk.login("dup")
    refused = desk.send("again", {"type": "login", "name": "dup"})[0]
    assert refused["code"] == "name_in_use"
    assert refused["message"] == ("dup is in use right now (a live session): stop the other program or page logged in "
                                  "as dup, or choose another name")
