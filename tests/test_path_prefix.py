"""Plyhall served under a proxy's path prefix: a real nginx running the snippet printed in docs/OPERATING.md ("Behind
a proxy, under a path prefix") in front of a real ``plyhall serve``. Bots play through ``ws://PROXY/plyhall/ws`` and
read their game back from the HTTP side beside it; the page at ``/plyhall/`` loads, logs in, shows the lobby and the
recorded games, and asks for nothing outside the prefix. Before, the page asked for ``/static/...``, ``/api/...`` and
``/ws`` at the host's root, and the bot runner read ``/api/...`` there too."""

from __future__ import annotations

import asyncio
import random
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from client.connection import ServerURLError, check_url, describe_connect_error
from client.play_loop import stored_game
from client.tournament import http_base
from tests.conftest import free_port
from tests.helpers import login, play_out, start_server, stop
from tests.nginx_proxy import NginxProxy, documented_snippet, require

OPERATING = Path(__file__).resolve().parent.parent / "docs" / "OPERATING.md"
SECTION = "## Behind a proxy, under a path prefix"
PREFIX = "/plyhall"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None  # the 3xx itself is the answer looked at


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of a GET of ``url``, redirects not followed."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(url, timeout=10) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


@pytest.fixture(scope="module")
def behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[NginxProxy, str]]:
    """A ``plyhall serve`` behind nginx at /plyhall/ (the documented snippet), with one game played through the
    prefix by two bots; the proxy and the game's record id."""
    require()
    port = free_port()
    server = start_server(tmp_path_factory.mktemp("prefix") / "plyhall.db", port, "--trusted-proxies", "127.0.0.1")
    try:
        with NginxProxy([port], config=documented_snippet(OPERATING, SECTION)) as proxy:
            record = asyncio.run(_play_a_game(f"ws://127.0.0.1:{proxy.port}{PREFIX}/ws"))
            yield proxy, record
    finally:
        stop(server)


async def _play_a_game(url: str) -> str:
    ann, bob = await login(url, "ann"), await login(url, "bob", coords="matrix")
    try:
        await ann.request({"type": "create_room", "game": "connect4", "name": "Kalamalka"})
        await ann.request({"type": "join", "room": "Kalamalka"})
        await bob.request({"type": "join", "room": "Kalamalka"})
        over = await play_out([ann, bob], "Kalamalka", random.Random(11))
        return over["record"]
    finally:
        await ann.close()
        await bob.close()


def test_the_http_address_of_a_bot_keeps_the_prefix() -> None:
    assert http_base("ws://127.0.0.1:8765/ws") == "http://127.0.0.1:8765"
    assert http_base("wss://example.org/plyhall/ws") == "https://example.org/plyhall"
    assert http_base("ws://example.org/plyhall/ws/") == "http://example.org/plyhall"
    assert http_base("ws://127.0.0.1:8765") == "http://127.0.0.1:8765"
    assert http_base("ws://127.0.0.1:8765/socket") == "http://127.0.0.1:8765"  # not an endpoint's folder: the root


@pytest.mark.parametrize(("given", "advised"), [
    ("http://127.0.0.1:8765/", "ws://127.0.0.1:8765/ws"),
    ("https://example.org/plyhall/", "wss://example.org/plyhall/ws"),
    ("https://example.org/plyhall", "wss://example.org/plyhall/ws"),
    ("example.org:8765", "ws://example.org:8765/ws"),
    ("example.org/plyhall/", "ws://example.org/plyhall/ws"),
])
def test_a_web_address_given_to_a_bot_is_answered_with_the_endpoint_under_the_same_prefix(given: str,
                                                                                           advised: str) -> None:
    with pytest.raises(ServerURLError, match=f"use {re.escape(advised)} "):
        check_url(given)


def test_a_404_under_a_prefix_advises_the_endpoint_under_that_prefix() -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.http11 import Response

    error = InvalidStatus(Response(404, "Not Found", {}, b""))  # type: ignore[arg-type]
    said, hopeless = describe_connect_error("ws://example.org/plyhall", error, connected_before=False)
    assert "add /ws (ws://example.org/plyhall/ws)" in said and hopeless
    # a proxy that sends every other path to the web page answers the handshake 200: it said "refused (HTTP 200)"
    page = InvalidStatus(Response(200, "OK", {}, b"<!doctype html>"))  # type: ignore[arg-type]
    said, hopeless = describe_connect_error("ws://example.org:8090", page, connected_before=False)
    assert "add /ws (ws://example.org:8090/ws)" in said and hopeless


def test_bots_play_through_the_prefix_and_read_their_game_beside_it(behind: tuple[NginxProxy, str]) -> None:
    proxy, record = behind
    url = f"ws://127.0.0.1:{proxy.port}{PREFIX}/ws"
    stored = stored_game(url, record)  # what the bot runner reads after a game: /plyhall/api/games/ID
    assert stored is not None, f"the game {record} could not be read through {http_base(url)}/api/games/"
    assert stored["id"] == record and stored["status"] == "finished" and stored["players"] == ["ann", "bob"]
    assert any(f"GET {PREFIX}/ws" in line and " 101 " in line for line in proxy.access_log.splitlines())


def test_the_page_and_everything_it_names_load_under_the_prefix(behind: tuple[NginxProxy, str]) -> None:
    proxy, _ = behind
    status, headers, _ = get(f"{proxy.http}{PREFIX}")
    assert status == 301 and headers["location"].endswith(f"{PREFIX}/"), (status, headers)
    page_url = f"{proxy.http}{PREFIX}/"
    status, _, body = get(page_url)
    assert status == 200 and b"<title>" in body
    named = re.findall(r'(?:href|src)="([^"#]+)"', body.decode())
    assert named, "the page names its stylesheet, icon and scripts"
    rooted = [ref for ref in named if ref.startswith("/")]
    assert not rooted, f"the page names {rooted} from the host's root, outside the proxy's prefix"
    for ref in named:
        status, _, _ = get(urljoin(page_url, ref))
        assert status == 200, f"{ref} under {page_url}: HTTP {status}"


def test_the_page_plays_its_part_under_the_prefix(behind: tuple[NginxProxy, str]) -> None:
    """Log in, see the lobby (the WebSocket under the prefix) and the recorded game (the API under it)."""
    from playwright.sync_api import expect, sync_playwright

    from tests.web_helpers import CHROMIUM, CHROMIUM_ARGS
    from tests.web_helpers import login as page_login

    if CHROMIUM is None:
        pytest.skip("no chromium installed (apt-get install chromium)")
    proxy, record = behind
    base = f"{proxy.http}{PREFIX}"
    asked: list[str] = []
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda request: asked.append(request.url))
            page.on("websocket", lambda socket: asked.append(socket.url))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page_login(page, base, "carol")  # the lobby shows: logged in over the WebSocket
            page.goto(f"{base}/#/replay")
            row = page.locator("table.games tbody tr", has_text="ann vs bob")
            expect(row).to_be_visible(timeout=15_000)
            row.get_by_role("link", name="Replay").click()
            expect(page).to_have_url(re.compile(re.escape(f"{base}/#/replay/{record}")))
            expect(page.locator("section.replay")).to_be_visible()
        finally:
            browser.close()
    socket = f"ws://127.0.0.1:{proxy.port}{PREFIX}/ws"
    assert socket in asked, f"the page's WebSocket went elsewhere: {asked}"
    outside = [url for url in asked if not url.startswith(f"{base}/") and url != socket]
    assert not outside, f"the page asked for {outside}, outside {base}/"
    assert not errors, errors


def test_a_page_opened_without_the_slash_sends_itself_to_it(behind: tuple[NginxProxy, str]) -> None:
    """A proxy that strips the prefix and answers ``/plyhall`` itself with the page, where the documented nginx
    redirects (Caddy's ``handle_path /plyhall*``, Traefik's ``StripPrefix``): the page goes to ``/plyhall/`` and loads,
    where before it asked for its files at the host's root and stayed at "Loading…"."""
    from playwright.sync_api import expect, sync_playwright

    from tests.web_helpers import CHROMIUM, CHROMIUM_ARGS

    if CHROMIUM is None:
        pytest.skip("no chromium installed (apt-get install chromium)")
    proxy, _ = behind
    documented = documented_snippet(OPERATING, SECTION)
    stripping = documented.replace("    location /plyhall/ {", "    location = /plyhall {\n"
                                   "        proxy_pass http://plyhall_server/;\n    }\n\n    location /plyhall/ {", 1)
    assert stripping != documented
    errors: list[str] = []
    with NginxProxy(proxy.upstreams, config=stripping) as other:
        status, _, body = get(f"{other.http}{PREFIX}")
        assert status == 200 and b"<title>" in body, "this proxy answers /plyhall with the page, unredirected"
        base = f"{other.http}{PREFIX}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
                page.goto(f"{base}?from=link#/lobby")
                expect(page).to_have_url(f"{base}/?from=link#/lobby")
                page.get_by_label("Name").fill("dave")
                page.get_by_role("button", name="Enter").click()
                expect(page.get_by_role("heading", name="Lobby")).to_be_visible()
            finally:
                browser.close()
    assert not [e for e in errors if "Content Security Policy" in e], errors


def test_the_page_s_own_redirect_stays_on_its_site(behind: tuple[NginxProxy, str]) -> None:
    """A page served at a path that starts with two slashes (a proxy that answers every path with it) goes to that
    path with its slash on the same site, never to ``//evil.example/`` (another host, for a browser)."""
    from playwright.sync_api import Route, sync_playwright

    from tests.web_helpers import CHROMIUM, CHROMIUM_ARGS

    if CHROMIUM is None:
        pytest.skip("no chromium installed (apt-get install chromium)")
    proxy, _ = behind
    status, headers, body = get(f"{proxy.http}{PREFIX}/")
    assert status == 200
    asked: list[str] = []

    def serve_the_page(route: Route) -> None:  # the page wherever it is asked for, with its own policy
        if route.request.resource_type == "document":
            kept = {name: headers[name] for name in ("content-type", "content-security-policy")}
            route.fulfill(status=200, body=body, headers=kept)
        else:
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda request: asked.append(request.url))
            page.route("**/*", serve_the_page)
            page.goto(f"{proxy.http}//evil.example")
            page.wait_for_url(f"{proxy.http}//evil.example/", timeout=10_000)
        finally:
            browser.close()
    assert not [url for url in asked if url.startswith(("http://evil.example", "https://evil.example"))], asked
