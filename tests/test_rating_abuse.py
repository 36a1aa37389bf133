"""A rating measures play between different people, against a real server on loopback, each person at an address of
its own (127.0.0.2, 127.0.0.3, ...; the client socket is bound to it): a game resigned before both players made two
moves is stored unrated with its reason; the names one address claims cannot farm or sink a name; the operator's
``--rated-networks`` rates a classroom behind one address; names the organiser registers with ``plyhall names add``
log in with their token, rate each other from one address, and are the only ones rated with ``--rated-names
registered``. docs/RATINGS.md "Which games are rated"."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from client.connection import Client
from server.core.hall import Limits
from server.core.rated import MOVE_LIMIT, PER_OPPONENT
from server.io.server import PlyhallServer, RateLimit
from server.storage.sqlite import SQLiteStorage
from tests.helpers import http_json, login, open_game

SEEK = {"type": "seek", "game": "connect4", "time_control": {"per_move": 30}}


@asynccontextmanager
async def serving(db: Path, **limits: Any) -> AsyncIterator[tuple[PlyhallServer, str]]:
    """A real server on 127.0.0.1 (any loopback address reaches it) with these :class:`Limits`, and its URL."""
    server = PlyhallServer(SQLiteStorage(db), host="127.0.0.1", port=0, limits=Limits(**limits),
                           rate_limit=RateLimit(rate=5000, burst=20000))
    await server.start()
    try:
        yield server, f"ws://127.0.0.1:{server.port}/ws"
    finally:
        await server.stop()


async def play(a: Client, b: Client, plies: int = 4, loser: Client | None = None) -> dict[str, Any]:
    """``a`` and ``b`` seek a rated Connect Four game, play ``plies`` moves, and ``loser`` (``b`` by default)
    resigns; the game_over ``a`` saw."""
    await a.send(SEEK)
    await b.send(SEEK)
    start = await a.expect("game_start", timeout=30)
    await b.expect("game_start", room=start["room"], timeout=30)
    await open_game({start["seat"]: a, 1 - start["seat"]: b}, start["room"], start["to_move"], plies)
    await (loser or b).send({"type": "resign", "room": start["room"]})
    over = await a.expect("game_over", room=start["room"], timeout=30)
    await b.expect("game_over", room=start["room"], timeout=30)
    for client in (a, b):
        await client.send({"type": "leave", "room": start["room"]})
    return over


async def board(server: PlyhallServer) -> dict[str, Any]:
    """/api/ratings/connect4."""
    status, found = await asyncio.to_thread(http_json, server, "/api/ratings/connect4")
    assert status == 200
    return found


async def test_a_resignation_before_two_moves_each_is_stored_unrated_with_its_reason(tmp_path: Path):
    async with serving(tmp_path / "p.db") as (server, url):
        ann = await login(url, "ann", secret="ann's secret", source="127.0.0.2")
        bob = await login(url, "bob", secret="bob's secret", source="127.0.0.3")
        over = await play(ann, bob, plies=0)
        assert "ratings" not in over and over["unrated"].startswith("too short to rate: 0 moves played")
        over = await play(ann, bob, plies=3)  # the third move is not enough: two by each player
        assert "ratings" not in over and over["unrated"].startswith("too short to rate: 3 moves played")
        status, record = await asyncio.to_thread(http_json, server, f"/api/games/{over['record']}")
        assert status == 200 and record["rated"] is False and record["unrated"] == over["unrated"]
        found = await board(server)
        assert found["players"] == []
        assert [g["unrated"][:24] for g in found["unrated"]] == ["too short to rate: 3 mov", "too short to rate: 0 mov"]
        over = await play(ann, bob, plies=4)
        assert [r["name"] for r in over["ratings"]] == [*over["players"]] and "unrated" not in over
        for client in (ann, bob):
            await client.close()
    check = subprocess.run([sys.executable, "-m", "plyhall", "ratings", "--recompute", "--db",
                            str(tmp_path / "p.db")], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "1 rated result: every stored rating matches" in check.stdout, check.stdout


async def test_names_of_one_address_cannot_farm_a_name_nor_sink_one(tmp_path: Path):
    async with serving(tmp_path / "p.db") as (server, url):
        farmer = await login(url, "target", secret="t", source="127.0.0.2")
        sybils = [await login(url, f"sybil{i}", secret="s", source="127.0.0.2") for i in range(4)]
        for sybil in sybils:  # each extra name loses to the target after a real opening: still the same person
            over = await play(farmer, sybil)
            assert "ratings" not in over and "play from one address" in over["unrated"]
        await farmer.close()
        moved = await login(url, "target", secret="t", source="127.0.0.3")  # claimed at .2, now playing from .3
        over = await play(moved, sybils[0])
        assert "ratings" not in over and "or were claimed from one" in over["unrated"]
        assert (await board(server))["players"] == []
        # lifting a third name: a new one wins against each of the address's names
        protege = await login(url, "protege", secret="p", source="127.0.0.5")
        lifted = [await play(protege, sybil) for sybil in sybils]
        assert "ratings" in lifted[0] and all("ratings" not in over for over in lifted[1:])
        assert 99 < {row["name"]: row for row in (await board(server))["players"]}["protege"]["rating"] - 1500 <= 100
        # sinking a third name: one with 20 games against 20 people loses to the address's names
        victim = await login(url, "victim", secret="v", source="127.0.0.4")
        for i in range(20):
            person = await login(url, f"person{i}", secret="p", source=f"127.0.0.{20 + i}")
            await play(victim, person, loser=person if i % 3 else victim)
            await person.close()
        before = {row["name"]: row for row in (await board(server))["players"]}["victim"]
        overs = [await play(sybils[game % 4], victim, loser=victim) for game in range(PER_OPPONENT)]
        changes = [next(r["change"] for r in over["ratings"] if r["name"] == "victim") for over in overs
                   if "ratings" in over]
        after = {row["name"]: row for row in (await board(server))["players"]}["victim"]
        assert len(changes) >= 2 and all(change < 0 for change in changes)  # it does lose rating, within bounds
        assert before["rating"] - after["rating"] <= MOVE_LIMIT + 0.1 and -sum(changes) <= MOVE_LIMIT + 0.5  # (0.1s)
        spent = r"have moved (victim|sybil\d)'s rating by 100 points in the last 24 hours"  # whichever ran out first
        assert re.search(spent, overs[-1]["unrated"])
        for client in (moved, protege, victim, *sybils):
            await client.close()


async def test_games_that_end_together_share_what_an_address_may_move_a_name_by(tmp_path: Path):
    """Eight names of one address each sit in a rated room with a target, play their opening, and resign at the same
    moment: the games end before any of their results is stored. Each was weighed against the stored changes only,
    so each moved the target by up to the whole 100 points (+361 in all, in a second); together they now move it by
    at most 100, and the operator's check agrees with what was stored."""
    async with serving(tmp_path / "p.db") as (server, url):
        target = await login(url, "target", secret="t", source="127.0.0.6")
        sybils = [await login(url, f"sybil{i}", secret="s", source="127.0.0.7") for i in range(8)]
        for i, sybil in enumerate(sybils):
            await sybil.request({"type": "create_room", "game": "connect4", "name": f"Burst {i}", "rated": True,
                                 "time_control": {"per_move": 30}})
            await sybil.request({"type": "join", "room": f"Burst {i}", "seat": 0})
            await target.request({"type": "join", "room": f"Burst {i}", "seat": 1})
            start = await target.expect("game_start", room=f"Burst {i}", timeout=30)
            await open_game({0: sybil, 1: target}, f"Burst {i}", start["to_move"])
        await asyncio.gather(*(sybil.send({"type": "resign", "room": f"Burst {i}"}) for i, sybil in enumerate(sybils)))
        overs = [await target.expect("game_over", room=f"Burst {i}", timeout=30) for i in range(8)]
        changes = [over["ratings"][1]["change"] for over in overs if "ratings" in over]
        rating = {row["name"]: row for row in (await board(server))["players"]}["target"]["rating"]
        assert changes and all(change > 0 for change in changes)
        assert sum(changes) <= MOVE_LIMIT + 0.5 and rating - 1500 <= MOVE_LIMIT + 0.5, (changes, rating)
        for client in (target, *sybils):
            await client.close()
    check = subprocess.run([sys.executable, "-m", "plyhall", "ratings", "--recompute", "--db",
                            str(tmp_path / "p.db")], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "every stored rating matches" in check.stdout, check.stdout


async def test_an_address_has_a_daily_budget_of_rated_games(tmp_path: Path):
    async with serving(tmp_path / "p.db", rated_games_per_address=3) as (server, url):
        busy = await login(url, "busy", secret="b", source="127.0.0.2")
        others = [await login(url, f"other{i}", secret="o", source=f"127.0.0.{3 + i}") for i in range(4)]
        overs = [await play(busy, other) for other in others]
        assert ["ratings" in over for over in overs] == [True, True, True, False]
        assert overs[-1]["unrated"] == "busy's address has played its 3 rated games of the last 24 hours"
        for client in (busy, *others):
            await client.close()


async def _seated_game(a: Client, b: Client) -> dict[str, Any]:
    """``a`` and ``b`` seek a rated Connect Four game and play its opening; ``a``'s game_start."""
    await a.send(SEEK)
    await b.send(SEEK)
    start = await a.expect("game_start", timeout=30)
    await b.expect("game_start", room=start["room"], timeout=30)
    await open_game({start["seat"]: a, 1 - start["seat"]: b}, start["room"], start["to_move"])
    return start


async def _moved_mid_game(url: str, stays: Client, moves: Client, name: str, source: str,
                          mover_resigns: bool) -> tuple[dict[str, Any], Client]:
    """``stays`` and ``moves`` (``name``, secret ``name[0]``) play a rated game's opening; ``name`` logs in again
    from ``source``, its seat kept, and then it (or ``stays``) resigns: the game_over, and ``name``'s new client."""
    start = await _seated_game(stays, moves)
    await moves.close()
    moved = await login(url, name, secret=name[0], source=source)
    await (moved if mover_resigns else stays).send({"type": "resign", "room": start["room"]})
    over = await stays.expect("game_over", room=start["room"], timeout=30)
    assert over["winner"] == (start["seat"] if mover_resigns else 1 - start["seat"])
    return over, moved


async def test_a_game_counts_against_the_addresses_it_was_played_from_not_those_at_its_end(tmp_path: Path):
    """Whether a game is rated was decided by the addresses the players held when it ended: a loser that moved to an
    address whose day was used up before it resigned escaped its loss, and two names of one address unlinked by one
    of them moving. A game now counts against the address each started it from, and links by every address."""
    async with serving(tmp_path / "p.db", rated_games_per_address=1) as (server, url):
        burned = await login(url, "burned", secret="b", source="127.0.0.2")
        other = await login(url, "other", secret="o", source="127.0.0.3")
        assert "ratings" in await play(burned, other)  # 127.0.0.2 has played its one rated game of the day
        escaper = await login(url, "escaper", secret="e", source="127.0.0.4")
        rival = await login(url, "rival", secret="r", source="127.0.0.5")
        over, escaper = await _moved_mid_game(url, rival, escaper, "escaper", "127.0.0.2", mover_resigns=True)
        assert "unrated" not in over
        assert {r["name"]: r["change"] < 0 for r in over["ratings"]} == {"escaper": True, "rival": False}
        # linked when the game starts (claimed elsewhere, both playing from .6), linked at its end
        for name, claimed_at in (("target", "127.0.0.8"), ("sybil", "127.0.0.9")):
            await (await login(url, name, secret=name[0], source=claimed_at)).close()
        target = await login(url, "target", secret="t", source="127.0.0.6")
        sybil = await login(url, "sybil", secret="s", source="127.0.0.6")
        over, target = await _moved_mid_game(url, sybil, target, "target", "127.0.0.7", mover_resigns=False)
        assert "ratings" not in over and "play from one address" in over["unrated"]
        for client in (burned, other, escaper, rival, target, sybil):
            await client.close()


async def test_an_anchor_that_runs_out_of_time_moves_no_rating(tmp_path: Path):
    """A house bot at a level's pinned rating is only that level under a clock it can play at: a player that sets a
    clock too short for it and waits for its flag to fall gains nothing (a random mover reached 2,069 this way)."""
    async with serving(tmp_path / "p.db") as (server, url):
        flagger = await login(url, "flagger", secret="f", source="127.0.0.2")
        anchor = await login(url, "house-minimax-8-connect4", secret=server.hall.house_secret)
        await flagger.request({"type": "create_room", "game": "connect4", "name": "Flag", "rated": True,
                               "time_control": {"initial": 1.0}})
        await flagger.request({"type": "join", "room": "Flag", "seat": 0})
        await anchor.request({"type": "join", "room": "Flag", "seat": 1})
        start = await flagger.expect("game_start", room="Flag", timeout=30)
        to_move = await open_game({0: flagger, 1: anchor}, "Flag", start["to_move"])
        if to_move == 0:
            await open_game({0: flagger, 1: anchor}, "Flag", 0, plies=1)
        # and the anchor thinks too long
        over = await flagger.expect("game_over", room="Flag", timeout=30)
        assert over["winner"] == 0 and over["reason"] == "house-minimax-8-connect4 ran out of time"
        assert "ratings" not in over and over["unrated"].startswith(
            "house-minimax-8-connect4 ran out of time: an anchor's rating is at stake only under a clock")
        assert (await board(server))["players"] == []
        for client in (flagger, anchor):
            await client.close()


async def test_a_classroom_behind_one_address_is_rated_when_the_operator_says_so(tmp_path: Path):
    async with serving(tmp_path / "p.db", rated_networks=(ipaddress.ip_network("127.0.0.5/32"),)) as (server, url):
        pupils = [await login(url, f"pupil{i}", secret=f"p{i}", source="127.0.0.5") for i in range(4)]
        for i in range(4):
            over = await play(pupils[i], pupils[(i + 1) % 4])
            assert len(over["ratings"]) == 2
        elsewhere = [await login(url, f"home{i}", secret="h", source="127.0.0.6") for i in range(2)]
        assert "play from one address" in (await play(*elsewhere))["unrated"]  # only the networks the operator named
        assert len((await board(server))["players"]) == 4
        for client in (*pupils, *elsewhere):
            await client.close()


def names(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plyhall", "names", *args], capture_output=True, text=True,
                          timeout=60)


async def test_registered_names_log_in_with_their_token_and_rate_each_other_from_one_address(tmp_path: Path):
    db = str(tmp_path / "p.db")
    added = names("add", "alice", "bob", "--db", db)
    assert added.returncode == 0, added.stderr
    tokens = dict(line.split() for line in added.stdout.splitlines())
    assert set(tokens) == {"alice", "bob"} and len(set(tokens.values())) == 2
    again = names("add", "alice", "--db", db)
    assert again.returncode == 1 and "alice is claimed already" in again.stderr
    bad = names("add", "house-x", "no spaces", "--db", db)
    assert bad.returncode == 2 and "house-" in bad.stderr and "'no spaces' is not a name" in bad.stderr
    assert names("list", "--db", db).stdout.split() == ["alice", "bob"]
    async with serving(tmp_path / "p.db", rated_names="registered") as (server, url):
        wrong = Client(url)
        await wrong.connect(local_addr=("127.0.0.7", 0))
        refused = await wrong.request({"type": "login", "name": "alice", "secret": "not the token"}, check=False)
        assert refused["type"] == "error" and refused["code"] == "wrong_secret"
        alice = await login(url, "alice", secret=tokens["alice"], source="127.0.0.7")
        bob = await login(url, "bob", secret=tokens["bob"], source="127.0.0.7")  # one address: vouched for
        assert len((await play(alice, bob))["ratings"]) == 2
        carol = await login(url, "carol", secret="c", source="127.0.0.8")  # a claimed name, not registered
        over = await play(alice, carol)
        assert over["unrated"] == "carol is not a registered name, and this server rates registered names only"
        for client in (wrong, alice, bob, carol):
            await client.close()


async def test_names_registered_while_the_server_runs_count_at_once(tmp_path: Path):
    """``plyhall names add`` on the database of a running server: the new names log in with their tokens (and only
    with them) and are registered names at once (they counted only after a restart)."""
    db = tmp_path / "p.db"
    async with serving(db, rated_names="registered") as (server, url):
        early = await login(url, "early", secret="e", source="127.0.0.9")  # claimed before, not registered
        added = await asyncio.to_thread(names, "add", "dora", "emil", "--db", str(db))
        assert added.returncode == 0, added.stderr
        tokens = dict(line.split() for line in added.stdout.splitlines())
        thief = Client(url)
        await thief.connect(local_addr=("127.0.0.9", 0))
        refused = await thief.request({"type": "login", "name": "dora", "secret": "my own"}, check=False)
        assert refused["type"] == "error" and refused["code"] == "wrong_secret", refused
        dora = await login(url, "dora", secret=tokens["dora"], source="127.0.0.7")
        emil = await login(url, "emil", secret=tokens["emil"], source="127.0.0.7")  # one address: vouched for
        assert len((await play(dora, emil))["ratings"]) == 2
        over = await play(dora, early)
        assert over["unrated"] == "early is not a registered name, and this server rates registered names only"
        for client in (early, thief, dora, emil):
            await client.close()


def test_the_rated_play_options_of_serve_are_checked_and_reach_the_hall():
    from plyhall.cli import build_parser
    from plyhall.commands import serve as cli

    args = build_parser().parse_args(["serve", "--rated-networks", "10.0.0.0/8,2001:db8::/33", "--rated-names",
                                      "registered", "--rated-games-per-address", "50"])
    assert cli.serve_option_errors(args) == []
    limits = cli.serve_limits(args)
    assert [str(n) for n in limits.rated_networks] == ["10.0.0.0/8", "2001:db8::/33"]
    assert limits.rated_names == "registered" and limits.rated_games_per_address == 50
    bad = build_parser().parse_args(["serve", "--rated-networks", "10.0.0.0/33", "--rated-games-per-address", "-1"])
    errors = cli.serve_option_errors(bad)
    assert any(e.startswith("--rated-networks: '10.0.0.0/33' is not an IP address or network") for e in errors)
    assert any(e.startswith("--rated-games-per-address must be 0 (no limit) to") for e in errors)


def test_recompute_lists_a_rated_game_too_short_to_rate(tmp_path: Path):
    """A database an older Plyhall filled with zero-move rated games: its ratings are consistent, and meaningless."""
    from server.storage import open_storage
    from server.storage.records import GameEnded, GameRecord

    storage = open_storage(str(tmp_path / "old.db"))
    storage.apply([GameEnded(GameRecord("g1", "Lake", "connect4", {}, {"per_move": 5.0}, ["ann", "bob"], [], 1,
                                        "seat 0 resigned", "finished", 10.0, 20.0, rated=True))])
    count, problems = storage.check_ratings()
    storage.close()
    assert count == 1 and problems == ["rated game g1 ended after 0 moves: a connect4 game is rated from move 4 on "
                                       "(rated by an older Plyhall?)"]


def test_addresses_link_names_by_ipv4_address_and_ipv6_64_unless_in_a_declared_network():
    from server.core.rated import RatedPlay

    plain = RatedPlay()
    declared = RatedPlay(networks=(ipaddress.ip_network("2001:db8::/48"), ipaddress.ip_network("192.0.2.0/24")))
    for rules in (plain, declared):
        for name, address in (("a", "2001:db8:0:7::/64"), ("b", "2001:db8:0:7::/64"), ("c", "2001:db8:0:8::/64"),
                              ("d", "192.0.2.1"), ("e", "192.0.2.1"), ("f", "198.51.100.1"), ("g", "198.51.100.2")):
            rules.seen(name, address)
        rules.claimed("g", "198.51.100.1")  # claimed where f plays, now elsewhere
    no_anchor = (False, False)
    assert "play from one address" in plain.reason(("a", "b"), no_anchor, 0.0)
    assert plain.reason(("a", "c"), no_anchor, 0.0) is None  # another /64: another household
    assert "play from one address" in plain.reason(("d", "e"), no_anchor, 0.0)
    assert "or were claimed from one" in plain.reason(("f", "g"), no_anchor, 0.0)
    assert declared.reason(("a", "b"), no_anchor, 0.0) is None and declared.reason(("d", "e"), no_anchor, 0.0) is None
    assert "or were claimed from one" in declared.reason(("f", "g"), no_anchor, 0.0)  # not declared
    assert plain.reason(("house-master-connect4", "a"), (True, False), 0.0) is None  # the server's own anchors
