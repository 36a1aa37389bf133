"""The Leaderboard page in a real browser (Debian's chromium through Playwright) against a real server: the
leaderboard of a game and a player's page render from rated games, update without a reload when another game
ends, and link to the games' replays. Skipped only where no chromium is installed."""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import re

import pytest
from playwright.sync_api import expect

from tests.helpers import login as sdk_login
from tests.helpers import play_out
from tests.test_web import browser, open_page, own_server  # noqa: F401 - the browser tests' fixtures
from tests.web_helpers import CHROMIUM

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")


SOURCES = {"ann-lb": "127.0.0.1", "bob-lb": "127.0.0.2", "cat-lb": "127.0.0.3", "dan-lb": "127.0.0.4"}
"""Each player's address: four people (names that play from one address do not rate each other, and one address
moves a name's rating at most 100 points a day after their first game: docs/RATINGS.md)."""


def play_rated_game(port: int, first: str, second: str, seed: int) -> str:
    """Two claimed names seek Connect Four, are paired and play random moves to the end; the game's record id."""
    async def play() -> str:
        url = f"ws://127.0.0.1:{port}/ws"
        clients = [await sdk_login(url, name, secret=f"{name}-secret", source=SOURCES[name])
                   for name in (first, second)]
        seek = {"type": "seek", "game": "connect4", "time_control": {"per_move": 20}}
        await clients[0].request(seek)
        joined = await clients[1].request(seek)
        assert joined["type"] == "joined"
        over = await play_out(clients, joined["room"], random.Random(seed))
        for client in clients:
            await client.close()
        return over["record"]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
        return pool.submit(asyncio.run, play()).result()


def test_the_leaderboard_and_a_player_page_follow_rated_games_and_link_to_replays(own_server, open_page):  # noqa: F811
    port = own_server()
    base = f"http://127.0.0.1:{port}"
    play_rated_game(port, "ann-lb", "bob-lb", 1)
    page = open_page("fan")
    page.goto(base + "/#/leaderboard")
    expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible()
    rows = page.locator("table.leaderboard tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("table.leaderboard caption")).to_have_text("Connect Four: 2 rated players")
    expect(page.locator(".game-tabs a[aria-current=page]")).to_have_text("Connect Four")
    expect(rows.first.locator("td.rating abbr")).to_have_text("?")  # one game: both ratings are provisional
    expect(page.locator('tr[data-name="ann-lb"] td').nth(2)).to_have_text("1")  # games

    play_rated_game(port, "ann-lb", "cat-lb", 2)  # the open page sees it without a reload
    expect(rows).to_have_count(3, timeout=30_000)
    expect(page.locator('tr[data-name="ann-lb"] td').nth(2)).to_have_text("2")

    page.locator("table.leaderboard").get_by_role("link", name="ann-lb").click()
    expect(page.get_by_role("heading", name="ann-lb")).to_be_visible()
    assert page.url.endswith("#/players/ann-lb")
    card = page.locator('.rating-card[data-game="connect4"]')
    expect(card.locator("svg.rating-chart circle.dot")).to_have_count(2)
    expect(card.locator(".figures")).to_contain_text("2 rated games")
    expect(card.locator("table.rated-games tbody tr")).to_have_count(2)
    expect(page.locator("table.recent-games tbody tr")).to_have_count(2)

    play_rated_game(port, "dan-lb", "ann-lb", 3)  # the player's page follows too
    expect(card.locator("svg.rating-chart circle.dot")).to_have_count(3, timeout=30_000)
    expect(card.locator("table.rated-games tbody tr").first).to_contain_text("dan-lb")

    latest = card.locator("table.rated-games tbody tr").first
    record = latest.get_by_role("link", name="Replay").get_attribute("href").rsplit("/", 1)[1]
    latest.get_by_role("link", name="Replay").click()
    expect(page.locator(".where")).to_have_text(re.compile(r"Start position · \d+ moves"))
    assert f"#/replay/{record}" in page.url
    page.go_back()
    card.locator("table.rated-games").get_by_role("link", name="dan-lb").first.click()
    expect(page.get_by_role("heading", name="dan-lb")).to_be_visible()


def test_an_empty_leaderboard_says_so_and_its_tabs_lead_to_the_other_games(own_server, open_page):  # noqa: F811
    base = f"http://127.0.0.1:{own_server()}"
    page = open_page("fan")
    page.goto(base + "/#/leaderboard")
    expect(page.locator("main")).to_contain_text("No rated Connect Four games yet.")
    page.locator(".game-tabs").get_by_role("link", name="Quarto").click()
    expect(page.locator("main")).to_contain_text("No rated Quarto games yet.")
    assert page.url.endswith("#/leaderboard/quarto")
