"""Rating abuse: issue 41's farming and deflation attacks replayed against a real plyhall serve on loopback, each
person at an address of its own (the client socket bound to 127.0.0.N), beside a quiet baseline, and a class of 30
bots behind one address with the operator's --rated-networks.

Run: .venv/bin/python benchmarks/rating_abuse.py [--sybils 30] [--losses 24]

* **Quiet baseline.** Two victims, each established by ``--establish`` rated games against as many honest names
  (each at its own address, 127.0.0.20 on; the victim wins two of every three). Then the first victim loses
  ``--losses`` games, each to another honest stranger at its own address: how far an established rating moves in
  a day by fair means, as many losses as the attack inflicts.
* **Farming.** The attacker's address (127.0.0.2) claims a target and ``--sybils`` more names; each extra name
  resigns to the target twice, once before any move and once after two moves each (the issue's attack used move 0
  only). The target's rating afterwards. Then each of them loses to a new name at another address (an accomplice's,
  127.0.0.4): how far one address lifts a third name.
* **Deflation.** The attacker's deflator loses to each of its sybils (to sink itself), then the attacker's names beat
  the second victim ``--losses`` times: how far the victim moves, beside the baseline.
* **Classroom.** 30 bots behind one address (127.0.0.9, declared with --rated-networks) play 30 rated games in a
  ring, beside 2 names of an undeclared address.

Every game is a real Connect Four game through the server: the players make their moves (four, unless said), then
one resigns. Figures go to stdout; docs/RATINGS.md quotes them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
import urllib.request
from collections import Counter
from typing import Any

from common import Server, heading, log, scratch, script_parser

from client.connection import Client

ATTACKER, ACCOMPLICE, CLASSROOM, UNDECLARED = "127.0.0.2", "127.0.0.4", "127.0.0.9", "127.0.0.10"
VICTIMS = {"quiet-victim": "127.0.0.3", "victim": "127.0.0.5"}
NAMES = re.compile(r"\b(sybil\d+|target|deflator|victim|accomplice)\b")
SEEK = {"type": "seek", "game": "connect4", "time_control": {"per_move": 30}}


def honest(i: int) -> str:
    """The address of the ``i``-th honest person (each its own)."""
    return f"127.0.0.{20 + i}"


async def person(url: str, name: str, source: str) -> Client:
    """``name`` claimed and logged in from ``source``."""
    client = Client(url)
    await client.connect(local_addr=(source, 0))
    await client.login(name, secret=f"{name} secret")
    return client


async def game(a: Client, b: Client, plies: int = 4, loser: Client | None = None) -> dict[str, Any]:
    """``a`` and ``b`` seek a rated game, play ``plies`` moves (columns 1, 2, ...), ``loser`` (``b``) resigns; the
    game_over."""
    await a.send(SEEK)
    await b.send(SEEK)
    start = await a.expect("game_start", timeout=30)
    await b.expect("game_start", room=start["room"], timeout=30)
    seated = {start["seat"]: a, 1 - start["seat"]: b}
    to_move = start["to_move"]
    for ply in range(plies):
        await seated[to_move].send({"type": "move", "room": start["room"], "move": str(ply % 7 + 1)})
        for client in (a, b):
            await client.expect("moved", room=start["room"], timeout=30)
        to_move = 1 - to_move
    await (loser or b).send({"type": "resign", "room": start["room"]})
    over = await a.expect("game_over", room=start["room"], timeout=30)
    await b.expect("game_over", room=start["room"], timeout=30)
    for client in (a, b):
        await client.send({"type": "leave", "room": start["room"]})
    return over


def board(port: int) -> dict[str, dict[str, Any]]:
    """The Connect Four leaderboard by name."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/ratings/connect4?limit=1000", timeout=30) as resp:
        return {row["name"]: row for row in json.load(resp)["players"]}


def rating(port: int, name: str) -> tuple[float, float] | None:
    """``name``'s rating and deviation, or None while it has none."""
    row = board(port).get(name)
    return None if row is None else (row["rating"], row["deviation"])


async def establish(url: str, victim: str, first: int, games: int) -> Client:
    """``victim`` (at its address in VICTIMS) plays ``games`` rated games, each against another honest name at its
    own address, winning two of every three."""
    me = await person(url, victim, VICTIMS[victim])
    for i in range(games):
        other = await person(url, f"{victim}-h{i}", honest(first + i))
        await game(me, other, loser=other if i % 3 < 2 else me)
        await other.close()
    return me


async def run(args: argparse.Namespace, server: Server) -> dict[str, Any]:
    url, port, figures = server.url, server.port, {}
    started = time.monotonic()
    quiet_victim = await establish(url, "quiet-victim", 0, args.establish)
    victim = await establish(url, "victim", args.establish, args.establish)
    figures["established"] = {name: rating(port, name) for name in ("quiet-victim", "victim")}
    log(f"victims established: {figures['established']}")
    before = rating(port, "quiet-victim")
    strangers = []
    for i in range(args.losses):  # each loss to another person: legitimate play, as much of it as the attack's
        strangers.append(await person(url, f"stranger{i}", honest(2 * args.establish + i)))
        await game(strangers[-1], quiet_victim)
    figures["quiet"] = (before, rating(port, "quiet-victim"), args.losses)

    target = await person(url, "target", ATTACKER)
    sybils = [await person(url, f"sybil{i}", ATTACKER) for i in range(args.sybils)]
    farmed = [await game(target, sybil, plies) for sybil in sybils for plies in (0, 4)]
    figures["farming"] = (len(farmed), sum("ratings" in over for over in farmed), rating(port, "target"))
    log(f"farming: {figures['farming']}")

    accomplice = await person(url, "accomplice", ACCOMPLICE)  # a new name elsewhere, that the sybils lose to
    boosted = [await game(accomplice, sybil, 4) for sybil in sybils]
    figures["boost"] = (len(boosted), sum("ratings" in over for over in boosted), rating(port, "accomplice"))
    log(f"boost: {figures['boost']}")

    deflator = await person(url, "deflator", ATTACKER)
    sunk = [await game(sybil, deflator) for sybil in sybils]
    before = rating(port, "victim")
    attackers = [deflator, *sybils]
    beat = [await game(attackers[i % len(attackers)], victim) for i in range(args.losses)]
    figures["deflation"] = (len(sunk), sum("ratings" in over for over in sunk), rating(port, "deflator"), before,
                            rating(port, "victim"), len(beat), sum("ratings" in over for over in beat))
    log(f"deflation: {figures['deflation']}")
    kinds = Counter(NAMES.sub("NAME", over["unrated"]) for over in farmed + boosted + sunk + beat if "unrated" in over)
    figures["reasons"] = sorted(kinds.items(), key=lambda kind: -kind[1])

    pupils = [await person(url, f"pupil{i:02}", CLASSROOM) for i in range(30)]
    ring = [await game(pupils[i], pupils[(i + 1) % 30]) for i in range(30)]
    home = [await person(url, f"home{i}", UNDECLARED) for i in range(2)]
    undeclared = [await game(home[0], home[1]) for _ in range(3)]
    figures["classroom"] = (len(ring), sum("ratings" in over for over in ring), len(undeclared),
                            sum("ratings" in over for over in undeclared))
    for client in (quiet_victim, victim, *strangers, target, accomplice, deflator, *sybils, *pupils, *home):
        await client.close()
    figures["seconds"] = time.monotonic() - started
    return figures


def show(fig: dict[str, Any], args: argparse.Namespace) -> None:
    """Print the figures."""
    def fmt(r: tuple[float, float] | None) -> str:
        return "unrated (no rating)" if r is None else f"{r[0]:.1f} ± {r[1]:.0f}"

    heading(f"Rating abuse: one attacker address, {args.sybils} sybil names; every game a real game through "
            f"plyhall serve ({fig['seconds']:.0f} s)")
    (b, a, n) = fig["quiet"]
    print(f"quiet baseline    an established victim ({fmt(b)}) loses {n} games, each to another honest name at its "
          f"own address: {fmt(a)}, {a[0] - b[0]:+.1f}")
    games, rated, target = fig["farming"]
    print(f"farming           {games} games of the target against its own address's names ({games // 2} at move 0): "
          f"{rated} rated; target {fmt(target)}, moved {0.0 if target is None else target[0] - 1500:+.1f}")
    games, rated, boosted = fig["boost"]
    print(f"boosting          the address's names each lose to a new name of another address ({games} games): {rated} "
          f"rated; that name {fmt(boosted)}, moved {0.0 if boosted is None else boosted[0] - 1500:+.1f}")
    sunk, sunk_rated, deflator, b, a, beat, beat_rated = fig["deflation"]
    print(f"deflation         the deflator loses {sunk} games to its sybils: {sunk_rated} rated, deflator "
          f"{fmt(deflator)}; then the address's names beat an established victim ({fmt(b)}) {beat} times: "
          f"{beat_rated} rated, victim {fmt(a)}, {a[0] - b[0]:+.1f}")
    for reason, count in fig["reasons"]:
        print(f"not rated {count:>4}  {reason}")
    ring, ring_rated, home, home_rated = fig["classroom"]
    print(f"classroom         30 bots behind one declared address: {ring_rated} of {ring} games rated; two names of an "
          f"undeclared address: {home_rated} of {home} rated")


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--sybils", type=int, default=30, help="names the attacker's address claims (default 30)")
    parser.add_argument("--establish", type=int, default=90, help="rated games that establish each victim, each "
                                                                   "against a name of its own address (default 90)")
    parser.add_argument("--losses", type=int, default=24, help="losses the victims suffer: to honest strangers "
                                                               "(the baseline), to the attacker's names (default 24)")
    args = parser.parse_args(argv)
    if not 1 <= args.sybils <= 150 or not 1 <= args.losses <= 100 or not 1 <= args.establish <= 100:
        parser.error("--sybils must be 1 to 150, --losses 1 to 100 and --establish 1 to 100")
    with scratch("rating-abuse") as tmp, Server(tmp / "abuse.db", "--rated-networks", CLASSROOM) as server:
        figures = asyncio.run(run(args, server))
    show(figures, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
