"""Page load of the web client: time to the lobby on loopback and the bytes transferred.

    .venv/bin/python benchmarks/web_load.py                 # 7 loads of each kind
    .venv/bin/python benchmarks/web_load.py --loads 20 --rooms 50

A ``plyhall serve`` on a temporary database and a free loopback port; Debian's
chromium (headless, through Playwright) loads the page as a returning player
whose name is in the browser's storage, so the page logs in by itself and shows
the lobby. ``--rooms`` rooms are open (the lobby lists them).

* cold: a fresh browser context (empty cache) per load;
* warm: a reload in the same context (the files revalidate: 304 Not Modified).

For each load: milliseconds from the start of navigation to the lobby's room
list drawn (the page's ``plyhall-lobby-ready`` performance mark), to
DOMContentLoaded and to the load event; HTTP requests and the bytes they moved
(``transferSize``: headers and bodies, as chromium counts them); and the bytes
of the WebSocket frames received until the lobby showed. Medians are printed.
A benchmark prints figures; it passes or fails nothing.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

from common import Server, scratch, script_parser
from playwright.sync_api import sync_playwright

from tests.web_helpers import CHROMIUM, CHROMIUM_ARGS

MEASURE = """() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const resources = performance.getEntriesByType("resource").filter((r) => !r.name.startsWith("ws"));
    const ready = performance.getEntriesByName("plyhall-lobby-ready")[0];
    return {
        lobby: ready ? ready.startTime : null,
        dom: nav.domContentLoadedEventEnd,
        load: nav.loadEventEnd,
        requests: 1 + resources.length,
        bytes: nav.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0),
        body: nav.decodedBodySize + resources.reduce((sum, r) => sum + r.decodedBodySize, 0),
    };
}"""


def host_rooms(base: str, index: int, count: int) -> subprocess.Popen:
    """A small process that creates ``count`` rooms as ``host{index}``, sits in each, and stays connected."""
    script = f"""
import asyncio, json
from websockets.asyncio.client import connect
async def main():
    async with connect("{base.replace('http', 'ws')}/ws", subprotocols=["plyhall.v1.json"]) as ws:
        await ws.send(json.dumps({{"type": "login", "name": "host{index}"}}))
        await ws.recv()
        for n in range({count}):
            await ws.send(json.dumps({{"type": "create_room", "game": "connect4", "name": "Room {index} " + str(n)}}))
            await ws.send(json.dumps({{"type": "join", "room": "Room {index} " + str(n), "seat": 0}}))
        print("ready", flush=True)
        await asyncio.Future()
asyncio.run(main())
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    return proc


def load(context, base: str, reload: bool = False) -> dict:
    """One page load as a returning player; its figures."""
    page = context.pages[0] if reload else context.new_page()
    frames: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(len(payload))))
    if reload:
        page.reload()
    else:
        page.goto(base + "/#/lobby")
    page.locator(".room-list li").first.wait_for(timeout=30_000)  # drawn with the plyhall-lobby-ready mark
    figures = page.evaluate(MEASURE)
    figures["ws_bytes"] = sum(frames)
    return figures


def main() -> None:
    parser = script_parser(__doc__)
    parser.add_argument("--loads", type=int, default=7, help="loads of each kind (default 7)")
    parser.add_argument("--rooms", type=int, default=0, help="rooms open while loading (default 0)")
    args = parser.parse_args()
    if CHROMIUM is None:
        raise SystemExit("no chromium: apt-get install chromium")
    with scratch("web") as tmp, Server(tmp / "bench.db") as server:
        base = f"http://127.0.0.1:{server.port}"
        hosts: list[subprocess.Popen] = []
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                for i in range((args.rooms + 19) // 20):
                    hosts.append(host_rooms(base, i, min(20, args.rooms - 20 * i)))
                results: dict[str, list[dict]] = {"cold": [], "warm": []}
                for n in range(args.loads):
                    context = browser.new_context()
                    identity = json.dumps({"name": f"bench{n}", "coords": "algebraic"})
                    context.add_init_script(f"localStorage.setItem('plyhall.identity', {json.dumps(identity)});")
                    results["cold"].append(load(context, base))
                    results["warm"].append(load(context, base, reload=True))
                    context.close()
                browser.close()
        finally:
            for host in hosts:
                host.kill()
    print(f"web page load on loopback, {args.loads} loads each, {args.rooms} rooms open (medians)")
    print(f"{'':6} {'lobby ms':>9} {'DOM ms':>7} {'load ms':>8} {'requests':>9} {'HTTP bytes':>11} {'bodies':>8} "
          f"{'WS bytes':>9}")
    for kind, runs in results.items():
        med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        print(f"{kind:6} {med['lobby']:9.0f} {med['dom']:7.0f} {med['load']:8.0f} {med['requests']:9.0f} "
              f"{med['bytes']:11,.0f} {med['body']:8,.0f} {med['ws_bytes']:9,.0f}")


if __name__ == "__main__":
    main()
