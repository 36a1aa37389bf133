"""Two real cluster nodes behind a real nginx configured with the recipe printed in docs/SCALING.md: bots play
through the proxy, land on different nodes and their games are recorded; the proxy passes the client's address on.
Then the node holding a game under way (and pairing the seeks) dies: the proxy sends the player who was there to
the other node, which adopts the room, and the game goes on; new clients are paired there."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from client.sdk import Client
from tests.conftest import free_port
from tests.helpers import http_json, login, stop
from tests.nginx_proxy import NginxProxy, require

CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PLYHALL_NODE", "PLYHALL_CLUSTER", "PLYHALL_DB",
                                                               "PLYHALL_SECRET")}
GAMES = 3


@pytest.fixture
def nginx() -> str:
    """The path of nginx (the test is skipped without it, unless PLYHALL_REQUIRE_NGINX=1)."""
    return require()


def spawn(folder: Path, label: str, *args: str) -> subprocess.Popen:
    """``plyhall ARGS`` with its output in ``folder/LABEL.out`` and ``.err`` (files: a chatty node never blocks on
    a full pipe)."""
    with open(folder / f"{label}.out", "w") as out, open(folder / f"{label}.err", "w") as err:
        return subprocess.Popen([sys.executable, "-m", "plyhall", *args], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err, text=True, cwd=folder, env=CLEAN_ENV)


def output(folder: Path, label: str) -> str:
    return (folder / f"{label}.out").read_text(errors="replace") + (folder / f"{label}.err").read_text(errors="replace")


def healthz(port: int) -> dict[str, Any] | None:
    """A node's /healthz, straight from its own port; None while it does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
            return json.loads(resp.read())
    except OSError:
        return None


def wait_for(what: str, check: Any, timeout: float = 60, procs: dict[str, subprocess.Popen] | None = None,
             folder: Path | None = None) -> Any:
    """Poll ``check()`` until it returns something true (returned); fail after ``timeout`` seconds, or at once
    when one of ``procs`` has exited (with its output)."""
    deadline = time.monotonic() + timeout
    while True:
        for label, proc in (procs or {}).items():
            if proc.poll() is not None:
                raise AssertionError(f"{label} exited ({proc.returncode}) before {what}:\n"
                                     f"{output(folder, label)[-3000:] if folder else ''}")
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s in vain until {what}")
        time.sleep(0.05)


def finish(bot: subprocess.Popen, name: str, folder: Path, nodes: dict[str, subprocess.Popen],
           timeout: float = 40) -> None:
    """Wait until ``bot`` has played its games and exited 0; fail with its output and the nodes' otherwise."""
    try:
        bot.wait(timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{name} did not finish its games in {timeout:g} s:\n{output(folder, name)[-3000:]}\n"
                             + "\n".join(f"{node}:\n{output(folder, node)[-3000:]}" for node in nodes)) from None
    assert bot.returncode == 0, output(folder, name)


def ws_login(url: str, name: str, forwarded_for: str | None = None) -> tuple[str, dict[str, Any]]:
    """Connect to ``url`` (with an ``X-Forwarded-For`` header of the client's own, if given), log in as ``name``
    and close; the WebSocket handshake's status and the login's reply."""
    from websockets.sync.client import connect

    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    with connect(url, subprotocols=["plyhall.v1.json"], additional_headers=headers, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "login", "name": name}))
        reply = json.loads(ws.recv(timeout=10))
        return str(ws.response.status_code), reply


async def test_bots_play_through_nginx_over_two_nodes(nginx, tmp_path, pg_url, redis_url):
    ports = {"n1": free_port(), "n2": free_port()}
    nodes: dict[str, subprocess.Popen] = {}
    bots: dict[str, subprocess.Popen] = {}
    clients: list[Client] = []
    proxy = NginxProxy(list(ports.values()))  # the recipe printed in docs/SCALING.md
    try:
        for node, port in ports.items():
            nodes[node] = spawn(tmp_path, node, "serve", "--cluster", redis_url, "--db", pg_url, "--node", node,
                                "--port", str(port), "--trusted-proxies", "127.0.0.1")
        for node, port in ports.items():  # up, and each sees the other as a live node of its cluster
            await asyncio.to_thread(
                wait_for, f"node {node} serves and sees both nodes",
                lambda port=port: (h := healthz(port)) and h["ok"] and h["cluster"]["nodes"] == ["n1", "n2"],
                procs=nodes, folder=tmp_path)
        await asyncio.to_thread(proxy.start)

        # /healthz through the proxy: 200 with the cluster, and two requests in a row reach both nodes (round robin)
        answers = [await asyncio.to_thread(http_json, proxy.port, "/healthz") for _ in range(2)]
        assert all(status == 200 and body["ok"] and "cluster" in body for status, body in answers), answers
        assert {body["cluster"]["node"] for _, body in answers} == {"n1", "n2"}

        # the client's address crosses the proxy (the nodes trust 127.0.0.1 to say it)
        status, reply = await asyncio.to_thread(ws_login, proxy.url, "probe", "203.0.113.7")
        assert status == "101" and reply["type"] != "error", reply
        await asyncio.to_thread(wait_for, "a node logs the probe's login from its own address", lambda: any(
            "login: probe from 203.0.113.7" in output(tmp_path, node) for node in nodes))

        # two bots seek each other through the proxy, which sends consecutive connections to different nodes. A bot
        # connects twice: once to see the server is there, then to log in once its player is ready. Started together,
        # their four connections could come in any order (CI once had both logins on one node), so bob starts once
        # ann has logged in, after probes through the proxy up to one that lands on ann's node's partner: bob's
        # first connection then goes to ann's node, and its login to the other
        def start_bot(number: int, name: str) -> None:
            bots[name] = spawn(tmp_path, name, "bot", "--url", proxy.url, "--name", name, "--game", "connect4",
                               "--level", "random", "--seed", str(number), "--games", str(GAMES))

        def logged_in(name: str) -> str | None:
            return next((node for node in nodes if f"login: {name} from" in output(tmp_path, node)), None)

        start_bot(0, "ann-bot")
        ann_node = await asyncio.to_thread(wait_for, "ann-bot logs in", lambda: logged_in("ann-bot"), procs=bots,
                                           folder=tmp_path)
        for number in range(4):
            status, reply = await asyncio.to_thread(ws_login, proxy.url, f"steer-{number}")
            assert status == "101" and reply["type"] != "error", reply
            if await asyncio.to_thread(wait_for, "the probe's login is logged", lambda n=number: logged_in(
                    f"steer-{n}")) != ann_node:
                break
        else:
            raise AssertionError(f"four connections in a row through the proxy reached {ann_node}")
        start_bot(1, "bob-bot")
        for name in ("ann-bot", "bob-bot"):
            await asyncio.to_thread(finish, bots[name], name, tmp_path, nodes)
        served = proxy.upstreams_of("GET /ws")
        assert set(served[1:]) == {f"127.0.0.1:{port}" for port in ports.values()}, (served, proxy.access_log)
        logins = {node: re.findall(r"login: (\S+-bot) from 127\.0\.0\.1", output(tmp_path, node)) for node in nodes}
        assert sorted(logins.values()) == [["ann-bot"], ["bob-bot"]], logins  # one bot on each node

        # the games are recorded, and every node lists them all
        for where in (proxy.port, *ports.values()):
            status, body = await asyncio.to_thread(http_json, where, "/api/games?player=ann-bot")
            assert status == 200, body
            games = body["games"]
            assert len(games) == GAMES, games
            for game in games:
                assert game["game"] == "connect4" and set(game["players"]) == {"ann-bot", "bob-bot"}, game
                assert game["status"] != "running" and game["reason"] and game["move_count"] >= 7, game
                assert game["winner_name"] in (*game["players"], None), game  # None: a draw

        # a game is under way in a room of the node that also pairs the seeks, with one player on each node
        dead = healthz(ports["n1"])["cluster"]["matchmaker"]
        live = "n2" if dead == "n1" else "n1"
        for name in ("ann", "bob"):
            clients.append(await login(proxy.url, name, secret=f"{name}-secret"))
        at = {name: node for node in nodes for name in ("ann", "bob")
              if f"login: {name} from" in output(tmp_path, node)}
        assert sorted(at.values()) == ["n1", "n2"], at
        host, guest = clients if at["ann"] == dead else reversed(clients)
        await host.request({"type": "create_room", "game": "connect4", "name": "Mabel Lake"})
        for client in (host, guest):
            await client.request({"type": "join", "room": "Mabel Lake"})
        starts = [await client.expect("game_start", room="Mabel Lake") for client in (host, guest)]
        first, second = (host, guest) if starts[0]["seat"] == starts[0]["to_move"] else (guest, host)
        await first.send({"type": "move", "room": "Mabel Lake", "move": "4"})
        for client in (host, guest):
            await client.expect("moved", room="Mabel Lake", seq=1)

        # that node dies: the proxy skips it, and the player who was there comes back through it to the other node,
        # which adopts the room; the game goes on where it was
        nodes[dead].kill()
        await asyncio.to_thread(nodes[dead].wait)
        await asyncio.wait_for(host.closed.wait(), 10)
        for number in range(2):  # round robin sends one of two connections in a row to the dead node: nginx tries
            status, reply = await asyncio.to_thread(ws_login, proxy.url, f"late-{number}")  # the next, unseen
            assert status == "101" and reply["type"] != "error", reply
        retried = f'"GET /ws HTTP/1.1" 101 upstream=127.0.0.1:{ports[dead]}, 127.0.0.1:{ports[live]}'
        await asyncio.to_thread(wait_for, "nginx logs a WebSocket handshake it passed on to the live node",
                                lambda: retried in proxy.access_log, timeout=10)
        back = await login(proxy.url, host.name, secret=f"{host.name}-secret", resume=host.resume)
        clients.append(back)
        assert back.welcome["rooms"] == ["Mabel Lake"], back.welcome
        again = {}
        for who, client in (("back", back), ("guest", guest)):
            again[who] = await client.expect("game_start", room="Mabel Lake", timeout=20)
            assert again[who]["status"] == "playing" and again[who]["state"] != starts[0]["state"], again[who]
        second = back if second is host else guest
        await second.send({"type": "move", "room": "Mabel Lake", "move": "4"})
        for client in (back, guest):
            await client.expect("moved", room="Mabel Lake", seq=2)
        await asyncio.to_thread(wait_for, f"{live} sees {dead} gone and pairs the seeks itself", lambda: (
            h := healthz(ports[live])) and h["cluster"]["nodes"] == [live] and h["cluster"]["matchmaker"] == live,
            timeout=20)
        for attempt in range(4):
            status, body = await asyncio.to_thread(http_json, proxy.port, "/healthz")
            assert status == 200 and body["cluster"]["node"] == live, (attempt, status, body)
        assert "connect() failed" in proxy.log

        # new clients are paired by the node left
        for number, name in enumerate(("cy-bot", "di-bot")):
            bots[name] = spawn(tmp_path, name, "bot", "--url", proxy.url, "--name", name, "--game", "connect4",
                               "--level", "random", "--seed", str(number), "--games", "1")
        for name in ("cy-bot", "di-bot"):
            await asyncio.to_thread(finish, bots[name], name, tmp_path, nodes)
        status, body = await asyncio.to_thread(http_json, proxy.port, "/api/games?player=cy-bot")
        assert status == 200 and len(body["games"]) == 1 and set(body["games"][0]["players"]) == {"cy-bot", "di-bot"}
    finally:
        for client in clients:
            await client.close()
        for proc in (*bots.values(), *nodes.values()):
            await asyncio.to_thread(stop, proc)
        (tmp_path / "nginx-error.log").write_text(proxy.log)  # kept with the nodes' and bots' output
        (tmp_path / "nginx-access.log").write_text(proxy.access_log)
        proxy.stop()
    for node in nodes:
        log = output(tmp_path, node)
        assert "Traceback" not in log and " ERROR " not in log, f"{node}:\n{log[-5000:]}"
