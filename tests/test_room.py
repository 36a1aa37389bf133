"""Room and lobby logic without a network: events in, messages out, time given."""

from __future__ import annotations

import pytest

from protocol.games import OptionError
from server.core.clock import Clocks, TimeControl
from server.core.env import Env
from server.core.hall import Hall, Limits
from server.core.room import Room, RoomSettings
from server.storage.records import ClaimSaved


def msgs(out, name, kind=None):
    return [m for n, m in out.messages if n == name and (kind is None or m["type"] == kind)]


def make_room(game="connect4", **kw):
    return Room("Lake", RoomSettings.parse(game, **kw), Env.fixed(1000.0))


def seated(game="connect4", **kw):
    room = make_room(game, **kw)
    room.join("ann", "algebraic", 0.0)
    out = room.join("bob", "matrix", 0.0)
    return room, out


def test_game_starts_when_both_seats_fill_and_each_sees_own_coords():
    room, out = seated()
    ann = msgs(out, "ann", "game_start")[0]
    bob = msgs(out, "bob", "game_start")[0]
    assert ann["seat"] == 0 and bob["seat"] == 1
    assert ann["players"] == ["ann", "bob"] and ann["to_move"] == 0
    out = room.move("ann", "1", 1.0)
    assert msgs(out, "ann", "moved")[0]["move"] == {"column": 1}
    assert msgs(out, "bob", "moved")[0]["move"] == {"column": 0}  # matrix is 0-based


def test_only_the_seat_to_move_may_move_and_spectators_never():
    room, _ = seated()
    room.join("sue", "algebraic", 0.0, role="spectator")
    out = room.move("bob", "4", 1.0)
    assert msgs(out, "bob", "error")[0]["code"] == "not_your_turn"
    out = room.move("sue", "4", 1.0)
    assert msgs(out, "sue", "error")[0]["code"] == "not_a_player"
    out = room.move("zed", "4", 1.0)
    assert msgs(out, "zed", "error")[0]["code"] == "not_in_room"


def test_illegal_move_is_rejected_and_turn_kept_in_casual_room():
    room, _ = seated()
    for _ in range(6):
        room.move("ann", "1", 1.0) if room.game.to_move(room.state) == 0 else room.move("bob", {"column": 0}, 1.0)
    out = room.move("ann", "1", 2.0)
    err = msgs(out, "ann", "error")[0]
    assert err["code"] == "illegal_move" and "column 1 is full" in err["message"]
    assert room.status == "playing" and room.game.to_move(room.state) == 0
    assert not out.ended


def test_illegal_move_loses_in_strict_room():
    room, _ = seated(illegal_move="lose")
    out = room.move("ann", "9", 1.0)
    over = msgs(out, "bob", "game_over")[0]
    assert over["winner"] == 1 and "illegal move" in over["reason"]
    assert out.ended and out.ended[0].winner == 1


def test_an_illegal_move_is_explained_in_the_movers_squares_and_the_record_in_algebraic_names():
    """A COSC 322 bot was told "{'queen': [7, 1], 'to': [7, 2], 'arrow'…: the arrow cannot fly from b7 to d1": a
    Python dict cut short and squares in a notation it never uses. It is told its move's fields and its own squares;
    the record, which everybody reads, keeps the algebraic names."""
    room = make_room("amazons", illegal_move="lose")
    room.join("ann", "cosc322", 0.0)
    room.join("bob", "algebraic", 0.0)
    out = room.move("ann", {"queen": [7, 1], "to": [7, 2], "arrow": [1, 4]}, 1.0)
    told = msgs(out, "ann", "error")[0]["message"]
    assert told == "queen [7, 1], to [7, 2], arrow [1, 4]: the arrow cannot fly from [7, 2] to [1, 4]: that is not a " \
                   "queen move"
    assert out.ended[0].reason == ("illegal move by ann (queen [7, 1], to [7, 2], arrow [1, 4]: the arrow cannot fly "
                                   "from b7 to d1: that is not a queen move)")


@pytest.mark.parametrize(("game", "coords", "moves", "wrong", "told"), [
    ("magnetic-cave", "matrix", [], {"square": [3, 3]}, "[3, 3] is not against a wall or beside a brick"),
    ("quarto", "cosc322", ["0000", {"square": [3, 3], "piece": "0001"}], {"square": [3, 3], "piece": "0010"},
     "[3, 3] is taken"),
    ("santorini", "matrix", ["a1 e5", "b2 d4"], {"worker": [2, 2], "to": [1, 1], "build": [0, 0]},
     "[2, 2] is not one of your workers (yours are on [4, 0] and [0, 4])"),
])
def test_every_game_explains_an_illegal_move_in_the_movers_squares(game, coords, moves, wrong, told):
    room = make_room(game)
    room.join("ann", coords, 0.0)
    room.join("bob", coords, 0.0)
    for move in moves:
        name = "ann" if room.game.to_move(room.state) == 0 else "bob"
        assert not msgs(room.move(name, move, 1.0), name, "error")
    name = "ann" if room.game.to_move(room.state) == 0 else "bob"
    assert msgs(room.move(name, wrong, 1.0), name, "error")[0]["message"].split(": ", 1)[1].startswith(told)


def test_a_null_is_quoted_as_a_client_wrote_it():
    room, _ = seated()
    assert msgs(room.move("ann", None, 1.0), "ann", "error")[0]["message"].startswith("null: null is not a Connect")


def test_per_move_clock_runs_out():
    room, _ = seated(time_control={"per_move": 5})
    assert room.next_deadline() == 5.0
    assert not room.tick(4.9).messages
    out = room.tick(5.0)
    over = msgs(out, "ann", "game_over")[0]
    assert over["winner"] == 1 and "ran out of time" in over["reason"]


def test_game_clock_with_increment():
    clocks = Clocks(TimeControl(initial=10, increment=2), 0, now=0.0)
    assert clocks.switch(3.0, 1) == 3.0
    assert clocks.left(0, 3.0) == pytest.approx(9.0)  # 10 - 3 + 2
    assert clocks.left(1, 5.0) == pytest.approx(8.0)
    clocks.switch(5.0, 0)
    assert clocks.left(1, 5.0) == pytest.approx(10.0)
    assert clocks.deadline() == pytest.approx(5.0 + 9.0)


@pytest.mark.parametrize("bad", [{"per_move": 0}, {"per_move": "5"}, {"initial": -1}, {"bogus": 1}, [], {"untimed": 1}])
def test_bad_time_controls_are_refused(bad):
    with pytest.raises(OptionError, match="time_control"):
        TimeControl.parse(bad)


def test_bad_room_settings_name_the_problem():
    with pytest.raises(OptionError, match="unknown game"):
        RoomSettings.parse("chess")
    with pytest.raises(OptionError, match="illegal_move"):
        RoomSettings.parse("connect4", illegal_move="shrug")
    with pytest.raises(OptionError, match="grace"):
        RoomSettings.parse("connect4", grace=10_000)
    with pytest.raises(OptionError, match="first"):
        RoomSettings.parse("connect4", options={"first": 5})


def test_disconnect_keeps_seat_then_resume_or_lose_after_grace():
    room, _ = seated(grace=10)
    out = room.disconnected("bob", 1.0)
    away = msgs(out, "ann", "player_away")[0]
    assert away["seat"] == 1 and away["grace"] == 10
    out = room.reconnected("bob", "cosc322", 5.0)
    assert msgs(out, "ann", "player_back")
    resumed = msgs(out, "bob", "game_start")[0]
    assert resumed["seat"] == 1 and resumed["state"]["to_move"] == 0
    room.disconnected("bob", 6.0)
    out = room.tick(16.0)
    over = msgs(out, "ann", "game_over")[0]
    assert over["winner"] == 0 and "disconnected" in over["reason"]
    assert room.seats == ["ann", None]


def test_a_game_both_players_left_is_aborted_whoever_left_second():
    """Both players dropped a second apart and never came back: the one who left second won (rated, +162 for a bot
    that was gone), the game ended "ann disconnected and did not come back in time". Nobody is there: aborted, as the
    protocol says, at the first grace's end; and a flag that falls while both are away decides nothing either."""
    room, _ = seated(grace=10)
    room.disconnected("ann", 1.0)
    room.disconnected("bob", 2.0)
    out = room.tick(11.5)
    seen = msgs(out, "bob", "game_over") or msgs(out, "ann", "game_over")
    assert room.status == "finished" and room.last_result["status"] == "aborted", room.last_result
    assert room.last_result["winner"] is None and room.last_result["reason"] == "neither player came back"
    assert not seen or seen[0]["winner"] is None
    timed, _ = seated(grace=100, time_control={"per_move": 5})
    timed.disconnected("bob", 1.0)
    timed.disconnected("ann", 2.0)
    timed.tick(6.0)  # ann's flag (she moves first) falls while both are away
    assert timed.last_result["status"] == "aborted" and timed.last_result["winner"] is None, timed.last_result


def test_late_spectator_gets_state_and_moves():
    room, _ = seated()
    room.move("ann", "4", 1.0)
    room.move("bob", {"column": 3}, 2.0)
    out = room.join("sue", "cosc322", 3.0, role="spectator")
    start = msgs(out, "sue", "game_start")[0]
    assert start["moves"] == ["4", "4"] and start["seat"] is None
    assert start["state"]["board"][0][3] == 1 and start["state"]["board"][1][3] == 2


def test_resign_and_agreed_draw():
    room, _ = seated(games=2)
    out = room.resign("bob", 1.0)
    assert msgs(out, "ann", "game_over")[0]["winner"] == 0
    # the second game starts at once with the other seat moving first
    start = msgs(out, "bob", "game_start")[0]
    assert start["game_no"] == 2 and start["to_move"] == 1
    room.offer_draw("ann", 2.0)
    out = room.offer_draw("bob", 3.0)
    over = msgs(out, "ann", "game_over")[0]
    assert over["winner"] is None and over["reason"] == "draw agreed"
    assert room.status == "finished"


def test_moving_declines_a_draw_offer():
    room, _ = seated()
    room.offer_draw("ann", 1.0)
    room.move("ann", "4", 1.5)
    room.move("bob", {"column": 3}, 2.0)  # bob moves instead of accepting
    out = room.offer_draw("ann", 3.0)
    assert not msgs(out, "ann", "game_over")
    assert room.draw_offer == 0


def test_record_holds_every_move_with_times_and_clocks():
    room, _ = seated(time_control={"initial": 60, "increment": 1})
    room.move("ann", "4", 2.0)
    room.move("bob", {"column": 3}, 5.0)
    out = room.resign("ann", 6.0)
    record = out.ended[0]
    assert [m.notation for m in record.moves] == ["4", "4"]
    assert [m.think_ms for m in record.moves] == [2000, 3000]
    assert record.moves[0].clocks_after[0] == pytest.approx(59.0)
    assert record.players == ["ann", "bob"] and record.winner == 1 and "resigned" in record.reason


def test_chat_is_length_limited():
    room, _ = seated()
    out = room.chat("ann", "good luck")
    assert msgs(out, "bob", "chat")[0]["text"] == "good luck"
    out = room.chat("ann", "x" * 501)
    assert msgs(out, "ann", "error")[0]["code"] == "bad_message"


def test_hall_limits_rooms_per_name_and_cleans_finished_rooms():
    hall = Hall(limits=Limits(max_rooms_per_name=3))
    hall.handle(1, {"type": "login", "name": "ann"}, 0.0)
    for _i in range(3):
        out = hall.handle(1, {"type": "create_room", "game": "connect4"}, 0.0)
        assert out.messages[0][1]["type"] == "room"
    out = hall.handle(1, {"type": "create_room", "game": "connect4"}, 0.0)
    assert out.messages[0][1]["code"] == "too_many_rooms"
    names = [r["name"] for r in hall.listing()]
    assert names[0] == "Kalamalka Lake" and len(set(names)) == 3
    hall.handle(2, {"type": "login", "name": "bob"}, 0.0)
    hall.handle(1, {"type": "join", "room": names[0]}, 0.0)
    hall.handle(2, {"type": "join", "room": names[0]}, 0.0)
    hall.handle(2, {"type": "resign", "room": names[0]}, 1.0)
    assert hall.rooms[names[0]].status == "finished"
    hall.handle(1, {"type": "leave", "room": names[0]}, 2.0)
    hall.handle(2, {"type": "leave", "room": names[0]}, 2.0)
    assert names[0] not in hall.rooms


def test_hall_claims_names_and_takes_over_sessions():
    hall = Hall()

    def login(conn, msg):
        return hall.run_checks(hall.handle(conn, msg, 0.0), 0.0)

    out = login(1, {"type": "login", "name": "ann", "secret": "pw"})
    assert out.messages[0][1]["claimed"] is True and any(isinstance(w, ClaimSaved) for w in out.writes)
    out = login(2, {"type": "login", "name": "ann", "secret": "nope"})
    assert out.messages[0][1]["code"] == "wrong_secret"
    out = login(3, {"type": "login", "name": "ann"})
    assert out.messages[0][1]["code"] == "wrong_secret"
    out = login(4, {"type": "login", "name": "ann", "secret": "pw"})
    assert out.close == [(1, "logged in from another connection")]
    hall.handle(5, {"type": "login", "name": "bob"}, 0.0)
    out = hall.handle(6, {"type": "login", "name": "bob"}, 0.0)
    assert out.messages[0][1]["code"] == "name_in_use"
    for bad in ["", "a b", "x" * 33, "-dash", "émile"]:
        out = hall.handle(7, {"type": "login", "name": bad}, 0.0)
        assert out.messages[0][1]["code"] == "bad_name"


def test_hall_requires_login_and_unknown_rooms_are_named():
    hall = Hall()
    out = hall.handle(1, {"type": "list_rooms"}, 0.0)
    assert out.messages[0][1]["code"] == "not_logged_in"
    hall.handle(1, {"type": "login", "name": "ann"}, 0.0)
    out = hall.handle(1, {"type": "move", "room": "Nowhere", "move": "4"}, 0.0)
    assert out.messages[0][1]["code"] == "no_such_room"


def test_empty_rooms_go_when_their_creator_disconnects():
    hall = Hall()
    hall.handle(1, {"type": "login", "name": "ann"}, 0.0)
    hall.handle(2, {"type": "login", "name": "bob"}, 0.0)
    hall.handle(1, {"type": "create_room", "game": "connect4", "name": "Empty"}, 0.0)
    hall.handle(1, {"type": "create_room", "game": "connect4", "name": "Used"}, 0.0)
    hall.handle(2, {"type": "join", "room": "Used"}, 0.0)
    hall.disconnect(1, 1.0)
    assert "Empty" not in hall.rooms and "Used" in hall.rooms


def test_leaving_mid_series_does_not_start_the_next_game_with_an_empty_seat():
    room, _ = seated(games=3, time_control={"untimed": True})
    out = room.leave("bob", 1.0)
    assert msgs(out, "ann", "game_over")[0]["winner"] == 0
    assert msgs(out, "bob", "game_over"), "the leaver hears the result too"
    assert room.status == "waiting" and room.seats == ["ann", None]
    out = room.join("cy", "algebraic", 2.0)
    assert msgs(out, "cy", "game_start")[0]["game_no"] == 2


def test_rate_limit_strikes_are_forgotten_after_quiet_time():
    from server.io.server import RateLimit, TokenBucket

    bucket = TokenBucket(RateLimit(rate=1, burst=1, strikes_to_close=3), 0.0)
    assert bucket.take(0.0) and not bucket.take(0.0) and not bucket.take(0.0)
    assert bucket.strikes == 2
    assert bucket.take(100.0) and not bucket.take(100.0)
    assert bucket.strikes == 1


def test_lobby_pushes_are_coalesced():
    hall = Hall()
    hall.handle(1, {"type": "login", "name": "ann"}, 0.0)
    hall.handle(2, {"type": "login", "name": "sue"}, 0.0)
    hall.handle(2, {"type": "watch_lobby"}, 0.0)
    pushes = []
    for i in range(5):
        out = hall.handle(1, {"type": "create_room", "game": "connect4"}, 1.0 + i * 0.01)
        pushes += [m for c, m in out.messages if c == 2]
    assert len(pushes) == 1 and len(pushes[0]["rooms"]) == 1  # the first change goes out at once
    assert hall.next_deadline() == 1.5
    out = hall.tick(1.5)
    later = [m for c, m in out.messages if c == 2]
    assert len(later) == 1 and len(later[0]["rooms"]) == 5  # the rest in one push


def test_room_names_are_unique_and_found_ignoring_case():
    hall = Hall()
    hall.handle(1, {"type": "login", "name": "ann"}, 0.0)
    hall.handle(1, {"type": "create_room", "game": "connect4", "name": "Wood Lake"}, 0.0)
    out = hall.handle(1, {"type": "create_room", "game": "connect4", "name": "wood  LAKE"}, 0.0)
    assert out.messages[0][1]["code"] == "room_exists"
    out = hall.handle(1, {"type": "join", "room": "WOOD LAKE"}, 0.0)
    assert out.messages[0][1]["type"] == "joined" and out.messages[0][1]["room"] == "Wood Lake"
    hall.disconnect(1, 1.0)
    hall.handle(2, {"type": "login", "name": "bob"}, 2.0)
    hall.handle(2, {"type": "leave", "room": "Wood Lake"}, 2.0)
    assert hall.registry.folded.keys() == {r.casefold() for r in hall.rooms}


def test_a_player_away_when_the_game_ends_learns_the_result_on_coming_back():
    """bob's connection dropped (or the game_over to him was lost with a server that died right after storing
    the result): on coming back to his seat he gets the room's state with the last result, as a ``state``
    request would give it, not just ``joined``."""
    room, _ = seated(grace=30)
    room.move("ann", "4", 1.0)
    room.disconnected("bob", 2.0)
    room.resign("ann", 3.0)  # the hall has no connection of his to send its game_over to
    out = room.reconnected("bob", "matrix", 4.0)
    state = msgs(out, "bob", "room_state")[0]
    assert state["status"] == "finished" and state["moves"] == ["4"]
    assert state["last_result"] == {"winner": 1, "reason": room.last_result["reason"], "record": state["record"],
                                    "status": "finished", "players": ["ann", "bob"]}
    assert "resign" in state["last_result"]["reason"]


def test_a_player_seated_mid_game_gets_the_last_move_in_its_coords_and_answers():
    """What a course bot seated in a running game needs: the position and, on its turn, the opponent's last move
    (its GAME_ACTION_MOVE), or, with no move played, the fact that it moves first."""
    room = make_room("amazons", grace=30)
    room.join("ann", "algebraic", 0.0)
    room.join("bob", "cosc322", 0.0)
    first = msgs(room.reconnected("ann", "algebraic", 0.5), "ann", "game_start")[0]
    assert first["to_move"] == first["seat"] == 0 and first["moves"] == [] and "last_move" not in first
    room.disconnected("bob", 1.0)
    room.move("ann", "d10-d7/g7", 2.0)  # black (seat 0) moves while white is away
    out = room.reconnected("bob", "cosc322", 3.0)  # bob's process comes back (a fresh one, or after a restart)
    start = msgs(out, "bob", "game_start")[0]
    assert start["seat"] == 1 and start["to_move"] == 1 and start["moves"] == ["d10-d7/g7"]
    assert start["last_move"] == {"seq": 1, "seat": 0, "notation": "d10-d7/g7",
                                  "move": {"queen": [10, 4], "to": [7, 4], "arrow": [7, 7]}}
    spectator = room.join("sue", "matrix", 3.5, role="spectator")
    assert msgs(spectator, "sue", "game_start")[0]["last_move"]["move"] == {"queen": [0, 3], "to": [3, 3],
                                                                            "arrow": [3, 6]}
    reply = room.move("bob", {"queen": [4, 10], "to": [4, 7], "arrow": [4, 4]}, 4.0)  # j4-g4/d4, in its coords
    assert not msgs(reply, "bob", "error") and room.notations[-1] == "j4-g4/d4"
    assert msgs(room.send_state("ann", 5.0), "ann", "game_start")[0]["last_move"]["seat"] == 1
