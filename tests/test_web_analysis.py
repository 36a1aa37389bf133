"""The analysis in a replay, in a real browser (Debian's chromium): the evaluation graph draws and jumps to the position
clicked, a known blunder is marked in the move list and counted for its player, the engine's best move is outlined
on the board, and a game not analysed yet gets "Analyse this game", then its analysis.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from bots.engine.connect4.book import opening_table
from tests.helpers import login as sdk_login
from tests.helpers import play_out
from tests.test_analysis import a_blunder_game
from tests.test_web import browser, open_page, own_server  # noqa: F401 - the browser tests' fixtures
from tests.web_helpers import CHROMIUM

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")


def record_game(port: int, room: str, script: list[str]) -> str:
    """ann and bob play ``script`` (Connect Four columns) to the end; the record's id."""
    async def play() -> str:
        url = f"ws://127.0.0.1:{port}/ws"
        ann, bob = await sdk_login(url, f"ann-{room}"), await sdk_login(url, f"bob-{room}")
        await ann.request({"type": "create_room", "game": "connect4", "name": room})
        await ann.request({"type": "join", "room": room, "seat": 0})
        await bob.request({"type": "join", "room": room})
        over = await play_out([ann, bob], room, random.Random(1), script)
        await ann.close()
        await bob.close()
        return over["record"]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, play()).result()


def test_the_replay_shows_the_analysis_graph_marks_and_best_move(own_server, open_page, tmp_path: Path):  # noqa: F811
    moves, blunder_ply = a_blunder_game()
    opening_table()  # made once a run in the run's cache (tests/conftest.py), which the server's worker reads
    port = own_server("--analyse-finished", "--analysis-nodes", "4000000")
    record = record_game(port, "blunders", list(moves))
    page = open_page("analyst", width=1280, height=800)
    page.goto(f"http://127.0.0.1:{port}/#/replay/{record}/0")
    graph = page.locator(".eval-graph svg.eval")
    expect(graph).to_be_visible(timeout=120_000)  # made by the server's worker once the game ended (seconds: exact)
    blunder = page.locator(f'button.move[data-seq="{blunder_ply}"]')
    expect(blunder).to_have_class("move mv label-blunder")
    expect(blunder.locator(".label-mark")).to_have_text("??")
    marked = page.locator("button.move.label-blunder").count()  # the random opening has blunders of its own
    expect(page.locator(".eval .dot.label-blunder")).to_have_count(marked)
    seat = (blunder_ply - 1) % 2
    row = page.locator(f'table.accuracy tr[data-seat="{seat}"]')
    expect(row.locator("td").nth(1)).not_to_have_text("0")
    # Connect Four is solved, not searched to a node limit: the page says so
    expect(page.locator("section.analysis-figures")).to_contain_text("every position solved exactly")
    # the engine's best move at the start is outlined on the board and said in words
    expect(page.locator(".best-move")).to_contain_text("Engine's best here: ")
    expect(page.locator(".sq.best")).to_have_count(1)
    box = graph.bounding_box()
    assert box is not None
    graph.click(position={"x": box["width"] - 2, "y": box["height"] / 2})
    expect(page.locator(".where")).to_have_text(f"Move {len(moves)} of {len(moves)}: {moves[-1]}")
    expect(page.locator(".sq.best")).to_have_count(0)  # the game is over: no best move
    graph.click(position={"x": 1, "y": box["height"] / 2})
    expect(page.locator(".where")).to_have_text(f"Start position · {len(moves)} moves")
    blunder.click()
    # after the blunder the opponent wins, exactly ("win in 25", or "bob (yellow) wins in 25" said from a side)
    expect(page.locator(".best-move")).to_contain_text(re.compile(r"\bwins? in \d+"))
    page.screenshot(path=str(tmp_path / "analysis-1280x800.png"), full_page=True)


def test_a_game_not_analysed_yet_offers_to_analyse_it(own_server, open_page):  # noqa: F811
    port = own_server("--analysis-nodes", "20000")
    record = record_game(port, "later", ["4", "4", "3", "3", "2", "2", "1"])
    page = open_page("curious")
    page.goto(f"http://127.0.0.1:{port}/#/replay")  # the list of recorded games: not analysed yet, not marked
    row = page.locator("table.games tr", has=page.locator(f'a[href="#/replay/{record}"]'))
    expect(row.locator("td.open")).to_have_text("Replay")
    page.goto(f"http://127.0.0.1:{port}/#/replay/{record}")
    button = page.get_by_role("button", name="Analyse this game")
    expect(button).to_be_visible()
    expect(page.locator(".eval-graph svg")).to_have_count(0)
    button.click()
    expect(page.locator(".eval-graph svg.eval")).to_be_visible(timeout=120_000)
    expect(page.locator("table.accuracy tbody tr")).to_have_count(2)
    expect(page.locator('button.move[data-seq="7"]')).to_contain_text("1")
    page.goto(f"http://127.0.0.1:{port}/#/replay")  # analysed games are marked in the list
    expect(row.locator("td.open .analysed")).to_have_text(re.compile("analysed"))
