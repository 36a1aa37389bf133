"""A ladder nobody can slow down: the work of pairing grows about linearly with the bots that wait (it was cubic),
one pass makes a bounded number of pairs (the hall goes on with the rest at its next turn), the names of one
address start a bounded number of ladder games a minute and may hold a bounded number of places on the ladder,
and on a real server a crowd of names from one address resigning every game at once neither starves other
bots of games nor makes the pairing work per pass grow (counted by the server's /metrics).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import random
import time
import urllib.request
from pathlib import Path

from websockets.asyncio.client import connect

from server.core.env import Env
from server.core.hall import Hall, Limits
from server.core.ladder import GAMES_BURST, GAMES_PER_ADDRESS, PAIRS_PER_TURN, Ladder, LadderConfig
from tests.conftest import free_port
from tests.helpers import HallDriver, assert_clear_error, start_server, stop

CLASSROOM = (ipaddress.ip_network("10.0.0.0/8"),)
"""--rated-networks for the tests whose names of one address play each other: each address holds many people (a
classroom behind one NAT), else names of one address are never paired, their game not being rated."""

GAME = "connect4"


def everyone(name: str) -> bool:
    return True


class CountingLadder(Ladder):
    """A ladder that counts how often a rating is looked up: the unit of the pairing's work."""

    lookups = 0

    def rating(self, game: str, name: str) -> tuple[float, float]:
        self.lookups += 1
        return super().rating(game, name)


def crowd(count: int, spread: float, seed: int = 1) -> CountingLadder:
    """``count`` bots waiting on the Connect Four ladder with ratings spread over ``spread`` points (0: all
    newcomers at 1500), no per-address limit."""
    rng = random.Random(seed)
    ladder = CountingLadder(LadderConfig(games_per_address=0))
    for i in range(count):
        name = f"bot{i:03d}"
        ladder.ratings[(GAME, name)] = (1500 + rng.uniform(-spread, spread) if spread else 1500.0, 60.0)
        ladder.join(name, GAME, i * 0.001)
    return ladder


def pair_everybody(ladder: Ladder, now: float) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for _ in range(100):
        made = ladder.pairings(GAME, now, everyone)
        pairs += made
        if not made:
            break
    return pairs


def test_pairing_a_crowd_costs_a_few_lookups_a_bot_not_the_crowd_cubed():
    for spread in (0.0, 400.0):  # all newcomers at one rating (ties everywhere), and a spread-out field
        ladder = crowd(150, spread)
        pairs = pair_everybody(ladder, 1.0)
        assert len(pairs) >= 70, pairs  # nearly everybody plays
        assert ladder.lookups <= 10 * 150, f"{ladder.lookups} rating lookups to pair 150 bots (spread {spread})"
        ladder.lookups = 0
        ladder.next_time(1.0, everyone)
        assert ladder.lookups <= 10 * 150, f"{ladder.lookups} rating lookups for the next pairing time"


def test_the_closest_rating_still_comes_first_in_a_crowd():
    ladder = crowd(40, 300.0, seed=5)
    oldest = min(ladder.rungs.values(), key=lambda rung: (rung.since, rung.name))
    first = ladder.pairings(GAME, 1.0, everyone)[0]
    assert first[0] == oldest.name
    mine = ladder.ratings[(GAME, oldest.name)][0]
    gaps = sorted(abs(ladder.ratings[(GAME, name)][0] - mine) for (_, name) in ladder.rungs if name != oldest.name)
    assert abs(ladder.ratings[(GAME, first[1])][0] - mine) == gaps[0]


def test_one_pass_makes_a_bounded_number_of_pairs_and_the_next_comes_at_once():
    ladder = crowd(100, 0.0)
    first = ladder.pairings(GAME, 1.0, everyone)
    assert len(first) == PAIRS_PER_TURN
    assert ladder.next_time(1.0, everyone) <= 1.0 + 1e-3, "the rest are paired on the hall's next turn"
    rest = pair_everybody(ladder, 1.0)
    assert len(first) + len(rest) == 50
    assert ladder.next_time(1.0, everyone) is None


def _claimed_from(desk: HallDriver, address: str, *names: str) -> None:
    for name in names:
        desk.connect(name, address)
        assert desk.login(name, secret=f"{name}'s secret")["claimed"]


def _seek(desk: HallDriver, name: str) -> dict:
    return desk.send(name, {"type": "seek", "game": GAME, "ladder": True})[0]


def test_one_address_may_hold_a_bounded_number_of_names_on_the_ladder():
    desk = HallDriver(Hall(Env.fixed(), limits=Limits(max_ladder_names_per_address=3, rated_networks=CLASSROOM)))
    _claimed_from(desk, "10.0.0.2", "a1", "a2", "a3", "a4")
    _claimed_from(desk, "10.0.0.3", "b1")
    assert [_seek(desk, name)["type"] for name in ("a1", "a2", "a3")] == ["seeking", "joined", "seeking"]
    refused = assert_clear_error(_seek(desk, "a4"), "busy")
    assert "3 names from your address" in refused["message"]
    assert "--max-ladder-names-per-address" in refused["message"]
    assert ("connect4", "a4") not in desk.hall.seeks.ladder.rungs
    assert _seek(desk, "b1")["type"] in ("seeking", "joined"), "another address is not charged"
    assert _seek(desk, "a3")["type"] in ("seeking", "joined"), "a name on the ladder may seek again"
    desk.send("a3", {"type": "cancel_seek", "game": GAME})
    assert _seek(desk, "a4")["type"] in ("seeking", "joined"), "a place freed is a place to take"


def test_the_names_of_one_address_start_a_bounded_number_of_games_and_others_are_not_held_up():
    """30 names of one address on the ladder at once start GAMES_BURST games between them (each name in a game
    counts), then wait for the address's allowance to come back; two bots of other addresses meet at once."""
    desk = HallDriver(Hall(Env.fixed(), limits=Limits(max_ladder_names_per_address=0, rated_networks=CLASSROOM)))
    churn = [f"c{i:02d}" for i in range(30)]
    _claimed_from(desk, "10.0.0.2", *churn)
    _claimed_from(desk, "10.0.0.3", "by1")
    _claimed_from(desk, "10.0.0.4", "by2")
    for name in churn:
        _seek(desk, name)
    rooms = dict(desk.hall.rooms)
    assert len(rooms) == GAMES_BURST // 2, f"{len(rooms)} games for one address at once"
    _seek(desk, "by1")
    _seek(desk, "by2")
    bystanders = [room for room in desk.hall.rooms.values() if "by1" in room.seats]
    assert bystanders and "by2" in bystanders[0].seats, "the bystanders are not held up behind the crowd"
    for room in rooms.values():  # every crowd game resigned at once: the names come back and wait
        desk.send(room.seats[0], {"type": "resign", "room": room.name})
    crowd_rooms = [room for room in desk.hall.rooms.values() if "by1" not in room.seats]
    assert not crowd_rooms, "the address has no games left to start for now"
    wake = desk.hall.next_deadline()
    assert wake is not None and wake - desk.now <= 2 * 60 / GAMES_PER_ADDRESS + 1e-3, "woken when it may again"
    desk.tick(wake - desk.now)
    assert len([room for room in desk.hall.rooms.values() if "by1" not in room.seats]) == 1


# A real server ---------------------------------------------------------------------------------------------


async def _ladder_bot(url: str, address: str, name: str, games: list[int], stop_at: asyncio.Event,
                      replies: dict[str, dict]) -> None:
    """A claimed name from ``address`` on the Connect Four ladder that resigns each ladder game at once."""
    async with connect(url, subprotocols=["plyhall.v1.json"], local_addr=(address, 0), max_queue=None) as ws:
        while True:
            await ws.send(json.dumps({"type": "login", "name": name, "secret": f"{name}-secret"}))
            reply = json.loads(await ws.recv())
            if reply["type"] == "welcome":
                break
            await asyncio.sleep(reply.get("retry_after", 0.5))
        await ws.send(json.dumps({"type": "seek", "game": GAME, "ladder": True}))
        while not stop_at.is_set():
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
            except TimeoutError:
                continue
            replies.setdefault(name, msg)
            if msg["type"] == "game_start" and msg["players"][msg["to_move"]] == name:
                await ws.send(json.dumps({"type": "resign", "room": msg["room"]}))
            elif msg["type"] == "game_start":
                games[0] += 1
            elif msg["type"] == "error":
                replies[name] = msg


def _metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {line.split()[0]: float(line.split()[1]) for line in text.splitlines() if line.startswith("plyhall_")
            and not line.startswith("plyhall_process")}


async def test_a_churning_crowd_on_a_real_server_neither_starves_others_nor_grows_the_pairing_work(tmp_path: Path):
    port = free_port()
    server = start_server(tmp_path / "plyhall.db", port, "--max-ladder-names-per-address", "12",
                          "--rated-networks", "127.0.0.0/8")  # (a classroom: CLASSROOM's reason)
    url = f"ws://127.0.0.1:{port}/ws"
    stop_at = asyncio.Event()
    churn_games, bystander_games = [0], [[0], [0]]
    replies: dict[str, dict] = {}
    try:
        began = time.monotonic()
        tasks = [asyncio.create_task(_ladder_bot(url, "127.0.0.2", f"churn{i}", churn_games, stop_at, replies))
                 for i in range(13)]
        tasks += [asyncio.create_task(_ladder_bot(url, f"127.0.0.{3 + i}", f"stander{i}", bystander_games[i],
                                                  stop_at, replies)) for i in range(2)]
        deadline = time.monotonic() + 90  # only catches a hang: the counts decide
        while len(replies) < 15 or min(games[0] for games in bystander_games) < 5:  # every seek answered
            assert time.monotonic() < deadline, (churn_games, bystander_games)
            await asyncio.sleep(0.2)
        stop_at.set()
        await asyncio.gather(*tasks)
        elapsed = time.monotonic() - began
        metrics = _metrics(port)
    finally:
        stop(server)
    refused = [reply for name, reply in replies.items() if reply["type"] == "error"]
    assert len(refused) == 1 and refused[0]["code"] == "busy" and "12 names" in refused[0]["message"], replies
    # each churn game is counted once (by the name that did not resign): the address's allowance bounds them
    allowed = (GAMES_BURST + elapsed * GAMES_PER_ADDRESS / 60) / 2 + 2
    assert churn_games[0] <= allowed, f"{churn_games[0]} games from one address in {elapsed:.1f} s"
    passes, looked = metrics["plyhall_ladder_passes_total"], metrics["plyhall_ladder_candidates_total"]
    assert passes > 0 and looked / passes <= 10, (passes, looked)
