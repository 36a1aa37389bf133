"""Rated games: which games the hall rates (claimed names, the room's `rated` option, how the game ended, house
bots only as anchors), and what storing a rated result does on SQLite and PostgreSQL alike (the ratings change
in the result's own transaction, once, and always match their recomputation from the records)."""

from __future__ import annotations

import pytest

from protocol.ratings import PAIR_DAILY_LIMIT, anchor_rating
from server.storage import open_storage
from server.storage.records import GameEnded, GameRecord, MoveRecord, RoomSaved
from tests.helpers import HallDriver, assert_clear_error, play_moves


def _ended(desk: HallDriver) -> list[GameRecord]:
    return [w.record for w in desk.writes if isinstance(w, GameEnded)]


def _pair_by_seek(desk: HallDriver, **seek: object) -> str:
    """ann and bob seek Connect Four and are paired; the room's name."""
    desk.send("ann", {"type": "seek", "game": "connect4", **seek})
    replies = desk.send("bob", {"type": "seek", "game": "connect4", **seek})
    return next(m for m in replies if m["type"] == "joined")["room"]


def _claimed_pair(desk: HallDriver | None = None) -> HallDriver:
    desk = desk or HallDriver()
    assert desk.login("ann", secret="ann's secret")["claimed"]
    assert desk.login("bob", secret="bob's secret")["claimed"]
    return desk


def test_a_seek_between_claimed_names_is_rated_by_default_and_played_out_on_time_too():
    desk = _claimed_pair()
    room = _pair_by_seek(desk, time_control={"per_move": 5})
    desk.send("ann", {"type": "resign", "room": room})  # at move 0: aborted, whatever the room says
    first = _ended(desk)[-1]
    assert not first.rated and first.unrated.startswith("too short to rate: 0 moves played")
    assert desk.last("bob", "game_over")["unrated"] == first.unrated and "ratings" not in desk.last("bob", "game_over")
    room = _pair_by_seek(desk, time_control={"per_move": 5})
    play_moves(desk, room, 3)  # one move short of two each: still not rated
    desk.send("ann", {"type": "resign", "room": room})
    assert not _ended(desk)[-1].rated and _ended(desk)[-1].unrated.startswith("too short to rate: 3 moves played")
    room = _pair_by_seek(desk, time_control={"per_move": 5})
    play_moves(desk, room)
    desk.send("ann", {"type": "resign", "room": room})
    assert _ended(desk)[-1].rated and _ended(desk)[-1].status == "finished" and _ended(desk)[-1].unrated is None
    assert "unrated" not in desk.last("bob", "game_over")  # (the hall alone stores nothing: no ratings to tell)
    room = _pair_by_seek(desk, time_control={"per_move": 5})
    play_moves(desk, room)
    desk.tick(6.0)  # whoever was to move lost on time: a played game
    assert _ended(desk)[-1].rated and "time" in _ended(desk)[-1].reason


def test_unclaimed_names_unrated_seeks_and_plain_rooms_are_not_rated():
    desk = HallDriver()
    desk.login("ann")  # no secret: nobody's name for good
    desk.login("bob", secret="bob's secret")
    desk.send("ann", {"type": "resign", "room": _pair_by_seek(desk)})
    assert not _ended(desk)[-1].rated
    desk = _claimed_pair()
    desk.send("ann", {"type": "resign", "room": _pair_by_seek(desk, rated=False)})
    assert not _ended(desk)[-1].rated
    for rated, expected in ((None, False), (True, True)):
        msg = {"type": "create_room", "game": "connect4", "name": f"Room {rated}"}
        if rated is not None:
            msg["rated"] = rated
        listing = desk.send("ann", msg)[0]["room"]
        assert listing["rated"] is expected
        desk.send("ann", {"type": "join", "room": listing["name"], "seat": 0})
        desk.send("bob", {"type": "join", "room": listing["name"], "seat": 1})
        play_moves(desk, listing["name"])
        desk.send("bob", {"type": "offer_draw", "room": listing["name"]})
        desk.send("ann", {"type": "offer_draw", "room": listing["name"]})
        assert _ended(desk)[-1].rated is expected and _ended(desk)[-1].winner is None


def test_an_aborted_game_is_not_rated_but_a_player_who_never_returns_loses_a_rated_game():
    desk = _claimed_pair()
    room = _pair_by_seek(desk, time_control={"per_move": 60})
    desk.disconnect("ann")
    desk.disconnect("bob")
    desk.tick(31.0)  # neither came back: aborted
    assert _ended(desk)[-1].status == "aborted" and not _ended(desk)[-1].rated
    desk = _claimed_pair()
    room = _pair_by_seek(desk, time_control={"per_move": 60})
    play_moves(desk, room)
    desk.disconnect("bob")
    desk.tick(31.0)
    assert _ended(desk)[-1].rated and _ended(desk)[-1].winner == 0 and room


@pytest.mark.parametrize("msg", [
    {"type": "seek", "game": "connect4", "rated": "yes"},
    {"type": "seek", "game": "connect4", "rated": 1},
    {"type": "create_room", "game": "connect4", "rated": None},
])
def test_a_bad_rated_field_is_refused_clearly(msg):
    desk = _claimed_pair()
    replies = desk.send("ann", msg)
    error = assert_clear_error(replies[0], "bad_message", msg)
    assert "rated" in error["message"]


def test_a_rated_room_against_a_house_bot_is_played_by_its_anchor():
    desk = HallDriver(house_limit=2)
    desk.login("ann", secret="ann's secret")
    reply = desk.send("ann", {"type": "create_room", "game": "connect4", "opponent": "novice", "rated": True,
                              "time_control": {"per_move": 5}})[0]
    assert reply["room"]["rated"]
    assert desk.hall.rooms[reply["room"]["name"]].seats == ["ann", "house-novice-connect4"]
    desk.login("cat", secret="cat's secret")
    busy = desk.send("cat", {"type": "create_room", "game": "connect4", "opponent": "novice", "rated": True,
                             "time_control": {"per_move": 5}})[0]
    assert_clear_error(busy, "busy", {})
    plain = desk.send("cat", {"type": "create_room", "game": "connect4", "opponent": "novice",
                              "time_control": {"per_move": 5}})[0]
    assert not plain["room"]["rated"]
    assert desk.hall.rooms[plain["room"]["name"]].seats[1].startswith("house-novice-")


# Storage -------------------------------------------------------------------------------------------------------


def result(number: int, players: tuple[str, str] = ("ann", "bob"), winner: int | None = 0, rated: bool = True,
           status: str = "finished", at: float = 1000.0, game: str = "connect4") -> GameRecord:
    moves = [MoveRecord(seq, (seq - 1) % 2, str(seq), 10, [None, None]) for seq in range(1, 5)]  # played, if short
    return GameRecord(f"g{number}", "Lake", game, {}, {"per_move": 5.0}, list(players), moves, winner,
                      "four in a row", status, at - 30, at, rated=rated)


def test_a_rated_result_rates_both_players_once_in_its_own_transaction(storage_url):
    storage = open_storage(storage_url)
    storage.apply([GameEnded(result(1)), GameEnded(result(2, rated=False)), GameEnded(result(3, status="aborted")),
                   GameEnded(result(4, winner=None, at=2000.0))])
    storage.apply([GameEnded(result(1))])  # stored again (a replayed spill): rated once
    board = storage.leaderboard("connect4")
    assert [(name, s.games, s.wins, s.draws, s.losses) for name, s, _ in board] == [("ann", 2, 1, 1, 0),
                                                                                     ("bob", 2, 0, 1, 1)]
    assert board[0][1].rating.rating > 1500 > board[1][1].rating.rating and board[0][1].last_played == 2000.0
    assert storage.get_game("g1")["rated"] and not storage.get_game("g2")["rated"]
    ratings = storage.player_ratings("ann")
    standing, history = ratings["connect4"]
    assert [h["id"] for h in history] == ["g1", "g4"] and history[0]["opponent"] == "bob"
    assert history[0]["score"] == 1.0 and history[1]["score"] == 0.5 and history[-1]["rating"] == round(
        standing.rating.rating, 1)
    assert storage.player_ratings("nobody") == {} and storage.rated_games() == ["connect4"]
    assert storage.check_ratings() == (2, [])
    storage.close()


def test_a_failed_transaction_takes_the_ratings_with_it(storage_url):
    storage = open_storage(storage_url)
    bad = RoomSaved({"name": None})  # violates NOT NULL: the whole transaction fails
    with pytest.raises(Exception):  # noqa: B017 - whatever the driver raises
        storage.apply([GameEnded(result(1)), bad])
    assert storage.leaderboard("connect4") == [] and storage.get_game("g1") is None
    assert storage.check_ratings() == (0, [])
    storage.close()


def test_recomputation_finds_any_tampering(storage_url):
    storage = open_storage(storage_url)
    storage.apply([GameEnded(result(n, winner=n % 2, at=1000.0 + n)) for n in range(1, 6)])
    assert storage.check_ratings() == (5, [])
    with storage._write_lock, storage._transaction() as cur:
        cur.execute(storage._sql("UPDATE games SET winner = 1 WHERE id = ?"), ("g2",))
    count, problems = storage.check_ratings()
    assert count == 5 and problems and any("g2" in p for p in problems)
    storage.close()


def test_recomputation_on_a_live_database_reads_one_snapshot(storage_url):
    """A server stores a rated result while `plyhall ratings --recompute` reads: the check sees the database as it
    was when it began, and finds nothing wrong (it reported the new result's players as differing)."""
    storage = open_storage(storage_url)
    storage.apply([GameEnded(result(n, winner=n % 2, at=1000.0 + n)) for n in range(1, 4)])
    reading = storage.rated_results

    def meanwhile():  # the server stores one more result between the check's reads
        results = reading()
        storage.apply([GameEnded(result(9, at=2000.0))])
        return results

    storage.rated_results = meanwhile
    assert storage.check_ratings() == (3, [])
    storage.rated_results = reading
    assert storage.check_ratings() == (4, [])
    storage.close()


def test_fair_play_and_anchors_in_storage(storage_url):
    storage = open_storage(storage_url)
    farm = [GameEnded(result(n, ("ann", "bob"), at=1000.0 + n)) for n in range(PAIR_DAILY_LIMIT + 6)]
    storage.apply(farm)
    history = storage.player_ratings("ann")["connect4"][1]
    assert [h["weight"] for h in history][PAIR_DAILY_LIMIT - 1:] == [1.0, 0.5, 0.25, 0.125, 0.0625, 0.0, 0.0]
    assert history[-1]["change"] == 0.0
    storage.apply([GameEnded(result(100, ("house-master-connect4", "cat"), winner=0, at=5000.0))])
    board = {name: (s, anchor) for name, s, anchor in storage.leaderboard("connect4")}
    assert board["house-master-connect4"][0].rating.rating == anchor_rating("master", "connect4")
    assert board["house-master-connect4"][1] and not board["cat"][1]
    assert storage.check_ratings() == (PAIR_DAILY_LIMIT + 7, [])
    storage.close()


# The leaderboard over HTTP and in the terminal -------------------------------------------------------------------


async def test_the_leaderboard_and_a_player_page_over_http(server, url):
    import asyncio

    from tests.helpers import http_json, login, open_game

    async def get(path: str) -> tuple[int, dict]:
        return await asyncio.to_thread(http_json, server, path)

    ann = await login(url, "ann", secret="ann's secret")
    bob = await login(url, "bob", secret="bob's secret", source="127.0.0.2")  # another person: another address
    cat = await login(url, "cat", secret="cat's secret", source="127.0.0.3")  # (and one more: docs/RATINGS.md)
    for loser in (bob, cat):
        await ann.send({"type": "seek", "game": "connect4"})
        await loser.send({"type": "seek", "game": "connect4"})
        start = await ann.expect("game_start")
        await open_game({start["seat"]: ann, 1 - start["seat"]: loser}, start["room"], start["to_move"])
        await loser.send({"type": "resign", "room": start["room"]})
        over = await ann.expect("game_over", room=start["room"])
        for client in (ann, loser):
            await client.send({"type": "leave", "room": start["room"]})
    status, board = await get("/api/ratings/connect4")
    assert status == 200 and board["game"] == "connect4"
    top, second, third = board["players"]
    assert (top["rank"], top["name"], top["games"], top["wins"], top["losses"]) == (1, "ann", 2, 2, 0)
    assert {second["name"], third["name"]} == {"bob", "cat"} and second["losses"] == third["losses"] == 1
    assert (second["rank"], third["rank"]) == (2, 3)
    assert top["rating"] > 1500 > second["rating"] and top["provisional"] and not top["anchor"]
    assert top["deviation"] < 350 and top["last_played"] > 0
    assert await get("/api/ratings/quarto") == (200, {"game": "quarto", "players": [],
                                                      "provisional_deviation": 110.0, "unrated": []})
    assert (await get("/api/ratings"))[1]["games"] == ["connect4"]
    status, player = await get("/api/players/ann")
    assert status == 200 and player["name"] == "ann" and set(player["ratings"]) == {"connect4"}
    history = player["ratings"]["connect4"]["history"]
    assert [h["opponent"] for h in history] == ["bob", "cat"] and history[-1]["id"] == over["record"]
    assert player["recent"][0]["id"] == over["record"] and player["recent"][0]["rated"]
    for path, words in (("/api/ratings/chess", "no game 'chess'"), ("/api/players/nobody", "no player 'nobody'"),
                        ("/api/players/%20bad%20name", "names are"), ("/api/ratings/connect4?limit=0", "limit")):
        status, body = await get(path)
        assert status in (400, 404) and words in body["error"], (path, body)
    for client in (ann, bob, cat):
        await client.close()


def test_plyhall_ratings_in_the_terminal(tmp_path):
    import subprocess
    import sys

    db = tmp_path / "ratings.db"
    storage = open_storage(str(db))
    aborted = result(10, ("cat", "dan"), rated=False, at=3000.0)
    aborted.moves, aborted.unrated = [], ("too short to rate: 0 moves played, and a connect4 game is rated from its "
                                          "4th move on")
    storage.apply([GameEnded(result(n, winner=1, at=1000.0 + n)) for n in range(3)]
                  + [GameEnded(result(9, ("house-master-connect4", "ann"), winner=0, at=2000.0)), GameEnded(aborted)])
    storage.close()

    def ratings(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "plyhall", "ratings", "--db", str(db), *args],
                              capture_output=True, text=True, timeout=60)

    board = ratings("--game", "connect4")
    assert board.returncode == 0, board.stderr
    lines = board.stdout.splitlines()
    assert lines[0] == "connect4: 3 rated players" and "W-D-L" in lines[1]
    first = ratings("--game", "connect4", "--limit", "1").stdout.splitlines()  # it said "1 rated player"
    assert first[0] == "connect4: 3 rated players, the first 1 shown (--limit)" and first[3].startswith("? "), first
    anchor = ratings("--player", "house-master-connect4").stdout.splitlines()[0]
    assert anchor.startswith(f"house-master-connect4 in connect4: {anchor_rating('master', 'connect4'):.0f}* +/- ")
    assert anchor.endswith(", 1 game (1-0-0)")  # it said "1 games"
    assert lines[2].split()[:2] == ["1", "house-master-connect4"]
    assert f"{anchor_rating('master', 'connect4'):.0f}*" in lines[2]
    assert lines[3].split()[1] == "bob" and "3-0-0" in lines[3] and "?" in lines[3]
    assert "0-0-4" in lines[4]
    assert lines[-2].startswith("latest games of rated rooms that were not rated") and lines[-1].endswith(
        "g10  cat vs dan: too short to rate: 0 moves played, and a connect4 game is rated from its 4th move on")
    player = ratings("--player", "ann")
    assert player.returncode == 0 and "ann in connect4" in player.stdout and "lost vs house-master-connect4" in \
        player.stdout
    assert ratings("--player", "zed").returncode == 1
    check = ratings("--recompute")
    assert check.returncode == 0 and "4 rated results: every stored rating matches" in check.stdout
    assert ratings("--game", "chess").returncode == 2  # argparse names the choices
    assert "no database file" in subprocess.run([sys.executable, "-m", "plyhall", "ratings", "--db",
                                                 str(tmp_path / "none.db"), "--game", "connect4"],
                                                capture_output=True, text=True, timeout=60).stderr


def test_the_ladder_never_pairs_names_whose_game_would_not_be_rated_and_plays_on_after_an_unrated_game():
    """Two ladder bots of one IPv6 /64 (as the I/O layer counts addresses): their game could not be rated (names one
    person may control), so they are not paired, where they were, again and again, each game stored unrated. A bot
    from elsewhere is paired with the one who waited longest; that game, resigned before the fourth move, is not
    rated, its game_over says why, and both wait on the ladder again as after any game."""
    desk = HallDriver()
    for name, address in (("ann", "2001:db8:0:7::/64"), ("bob", "2001:db8:0:7::/64"), ("cid", "2001:db8:0:9::/64")):
        desk.connect(name, address)
        assert desk.login(name, secret=f"{name}'s secret")["claimed"]
    desk.send("ann", {"type": "seek", "game": "connect4", "ladder": True})
    assert not [m for m in desk.send("bob", {"type": "seek", "game": "connect4", "ladder": True}, dt=120.0)
                if m["type"] == "joined"]  # (long past the widest window: only the rules of rated play keep them)
    room = next(m for m in desk.send("cid", {"type": "seek", "game": "connect4", "ladder": True})
                if m["type"] == "joined")["room"]
    assert set(desk.hall.rooms[room].players) == {"ann", "cid"}
    desk.send("ann", {"type": "resign", "room": room})
    over = desk.last("cid", "game_over")
    assert "ratings" not in over and over["unrated"].startswith("too short to rate: 0 moves played")
    assert not _ended(desk)[-1].rated and _ended(desk)[-1].unrated == over["unrated"]
    assert desk.last("cid", "joined")["room"] not in (room, None)  # paired again at once (with bob): it goes on


def test_a_rated_game_needs_a_clock():
    """An untimed rated game never forces a result: a losing player who stays connected could sit on its move for
    ever and never take the loss. A rated room or seek without a clock is refused, saying what is accepted; an
    untimed seek is unrated unless it asks (seeks are rated by default), and an unrated untimed room is made."""
    desk = HallDriver()
    for name, address in (("ann", "10.0.0.2"), ("bob", "10.0.0.3")):
        desk.connect(name, address)
        assert desk.login(name, secret=f"{name}'s secret")["claimed"]
    untimed = {"time_control": {"untimed": True}}
    for msg in ({"type": "seek", "game": "connect4", "rated": True, **untimed},
                {"type": "create_room", "game": "connect4", "name": "Slow", "rated": True, **untimed}):
        refused = assert_clear_error(desk.send("ann", msg)[0], "bad_option", msg)
        assert refused["message"].startswith("a rated game needs a clock") and "rated false" in refused["message"]
    made = desk.send("ann", {"type": "create_room", "game": "connect4", "name": "Slow", "rated": False, **untimed})
    assert made[0]["type"] == "room" and made[0]["room"]["time_control"] == {"untimed": True}
    seeking = desk.send("bob", {"type": "seek", "game": "connect4", **untimed})
    assert seeking[0]["type"] == "seeking" and seeking[0]["seek"]["rated"] is False


def test_an_anchor_s_rating_in_game_over_is_a_number_like_the_others(tmp_path):
    """game_over.ratings gave an anchor's pinned rating as an integer (1200) beside the players' floats."""
    storage = open_storage(str(tmp_path / "anchor.db"))
    record = result(9, ("house-master-connect4", "ann"), winner=0, at=2000.0)
    storage.apply([GameEnded(record)])
    storage.close()
    assert record.ratings is not None and [type(r[key]) for r in record.ratings for key in ("rating", "change")] == \
        [float] * 4, record.ratings
