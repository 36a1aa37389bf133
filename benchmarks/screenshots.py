"""Screenshots to look at: every game's board (mid-game and at its end) and a replay with the master engines'
analysis, at 1280x800, 1366x768 and 390x844, in Debian's chromium. Nothing is measured; the PNGs go to a folder
(default /tmp/shots/) for a person to look at, and are not kept in the repository.

    .venv/bin/python benchmarks/screenshots.py [--out /tmp/shots] [--seed 1]

A server of its own (a temporary database) hosts two rooms per game, where two SDK clients play seeded random moves:
one room stops after a few moves (a game in progress, at an hour a move), the other plays to the end. The browser
watches each room, then asks for the analysis of the finished Connect Four game in its replay and shoots it.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from protocol.games import GAMES, get_game  # noqa: E402
from tests.helpers import http_json, login, running_server  # noqa: E402
from tests.web_helpers import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

SIZES = ((1280, 800), (1366, 768), (390, 844))
MID_GAME = {"connect4": 9, "santorini": 8, "amazons": 6, "magnetic-cave": 12, "quarto": 7}
"""Plies played in the room of a game in progress."""


async def play(url: str, game_id: str, room: str, rng: random.Random, plies: int | None) -> None:
    """ann and bob play seeded random moves in ``room``: ``plies`` of them, or to the end (None). They stay
    connected, so the room stays open to be looked at."""
    tag = f"{room.split()[0].lower()}-{game_id[:4]}"
    ann, bob = await login(url, f"ann-{tag}"), await login(url, f"bob-{tag}")
    await ann.request({"type": "create_room", "game": game_id, "name": room,
                       "time_control": {"per_move": 3600}})  # a game in progress stays so while it is looked at
    await ann.request({"type": "join", "room": room, "seat": 0})
    await bob.request({"type": "join", "room": room, "seat": 1})
    clients = [ann, bob]
    start = await ann.expect("game_start", room=room)
    game = get_game(game_id)
    state = game.decode_state(start["state"], ann.coords)
    to_move = start["to_move"]
    played = 0
    while to_move is not None and (plies is None or played < plies):
        move = rng.choice(game.legal_moves(state))
        await clients[to_move].send({"type": "move", "room": room, "move": game.format_move(move)})
        msg = await ann.expect("moved", room=room)
        state = game.apply(state, game.parse_move(msg["move"], state))
        to_move = msg["to_move"]
        played += 1
    PLAYERS.extend(clients)


PLAYERS: list[Any] = []


def shoot(page: Any, out: Path, name: str) -> None:
    """Screenshot the viewport at each size as ``name-WxH.png``."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(400)
        page.evaluate("window.scrollTo(0, 0)")
        path = out / f"{name}-{width}x{height}.png"
        page.screenshot(path=str(path))
        print(path, flush=True)


def main() -> int:
    """Start a server, play, and save the screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/shots"), help="where the PNGs go (default /tmp/shots)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random moves")
    args = parser.parse_args()
    if CHROMIUM is None:
        print("no chromium (apt-get install chromium)", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as folder, running_server(Path(folder)) as port:
        base, url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
        for game_id in GAMES:
            loop.run_until_complete(play(url, game_id, f"Over {game_id}", rng, None))
            loop.run_until_complete(play(url, game_id, f"Live {game_id}", rng, MID_GAME.get(game_id, 6)))
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
            page.goto(base + "/#/lobby")
            page.get_by_label("Name").fill("viewer")
            page.get_by_role("button", name="Enter").click()
            page.get_by_role("heading", name="Lobby").wait_for()
            shoot(page, args.out, "lobby")
            for game_id in GAMES:
                for kind in ("Live", "Over"):
                    page.goto(f"{base}/#/room/{kind}%20{game_id}")
                    page.locator(".board").first.wait_for()
                    shoot(page, args.out, f"room-{kind.lower()}-{game_id}")
            game_id = http_json(port, "/api/games?game=connect4&limit=1")[1]["games"][0]["id"]
            record = http_json(port, f"/api/games/{game_id}")[1]
            page.goto(f"{base}/#/replay/{game_id}/{len(record['moves'])}")
            page.get_by_role("button", name="Analyse this game").click()  # the master engine, in the server's worker
            page.locator(".eval-graph svg").wait_for(timeout=600_000)
            for ply in (len(record["moves"]), 4):
                page.goto(f"{base}/#/replay/{game_id}/{ply}")
                page.locator(".board").first.wait_for()
                page.wait_for_timeout(1500)
                shoot(page, args.out, f"replay-connect4-{ply}")
            browser.close()
        for client in PLAYERS:
            loop.run_until_complete(client.close())
    loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
