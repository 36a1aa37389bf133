"""The analysis in a replay, in a real browser (Debian's chromium): the evaluation graph draws and jumps to the position
clicked, a known blunder is marked in the move list and counted for its player, the engine's best move is outlined
on the board, and a game not analysed yet gets "Analyse this game", then its analysis.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from bots.engine.connect4.book import opening_table
from client.sdk import Client
from tests.helpers import login as sdk_login
from tests.helpers import play_out
from tests.test_analysis import a_blunder_game
from tests.test_web import browser, open_page, own_server, record_an_amazons_game  # noqa: F401 - fixtures
from tests.web_helpers import CHROMIUM

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")


def a_recorded_game(port: int, room: str, play: Callable[[list[Client]], Awaitable[dict[str, Any]]]) -> str:
    """ann-ROOM and bob-ROOM sit at a Connect Four room ``room`` (ann first), ``play`` makes the game end (its
    game_over message) and they leave: the record's id."""
    async def run() -> str:
        url = f"ws://127.0.0.1:{port}/ws"
        ann, bob = await sdk_login(url, f"ann-{room}"), await sdk_login(url, f"bob-{room}")
        await ann.request({"type": "create_room", "game": "connect4", "name": room})
        await ann.request({"type": "join", "room": room, "seat": 0})
        await bob.request({"type": "join", "room": room})
        over = await play([ann, bob])
        await ann.close()
        await bob.close()
        return over["record"]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def record_game(port: int, room: str, script: list[str]) -> str:
    """ann and bob play ``script`` (Connect Four columns) to the end; the record's id."""
    return a_recorded_game(port, room, lambda players: play_out(players, room, random.Random(1), script))


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


def record_resigned_game(port: int, room: str, script: list[str]) -> str:
    """ann and bob play ``script`` (Connect Four columns, a running game), then the player to move resigns; the
    record's id."""
    async def play(players: list[Client]) -> dict[str, Any]:
        for client in players:
            await client.expect("game_start", room=room)
        for ply, column in enumerate(script):
            await players[ply % 2].send({"type": "move", "room": room, "move": column})
            for client in players:
                await client.expect("moved", room=room)
        return await players[len(script) % 2].request({"type": "resign", "room": room})

    return a_recorded_game(port, room, play)


# a Connect Four game that fills the board without four in a row: bob's 42nd move draws it
DRAWN = "472424756645422154157737216635626711335331"


def test_the_analysis_says_how_the_game_ended_at_its_end(own_server, open_page):  # noqa: F811
    """After the move that wins or draws, the analysis says the game is won or drawn, never "still wins in 1"; the
    position before it still says who wins in 1; a resigned game's last position says who resigned, not who moves."""
    port = own_server("--analysis-nodes", "20000")
    won = record_game(port, "endwon", ["4", "4", "3", "3", "2", "2", "1"])
    drawn = record_game(port, "enddrawn", list(DRAWN))
    resigned = record_resigned_game(port, "endquit", ["4", "4", "3"])
    page = open_page("ender", width=1280, height=800)
    best, verdict = page.locator(".best-move"), page.locator(".analysis .verdict-line")
    ann, bob = "ann-endwon (red)", "bob-endwon (yellow)"

    def analysed(record: str, ply: int) -> None:
        page.goto(f"http://127.0.0.1:{port}/#/replay/{record}/{ply}")
        page.get_by_role("button", name="Analyse this game").click()
        expect(page.locator(".eval-graph svg.eval")).to_be_visible(timeout=120_000)

    analysed(won, 7)
    expect(verdict).to_have_text(re.compile(rf"^7\. 1 by {re.escape(ann)}, the best move: {re.escape(ann)} has won\.$"))
    expect(best).to_have_text(f"Game over: {ann} has won.")
    page.locator('button.move[data-seq="6"]').click()  # next to the end: ann wins with her next move
    expect(best).to_have_text(re.compile(rf"^{re.escape(ann)} to move\. Engine's best here: [15] \({re.escape(ann)} "
                                         r"wins in 1, exact\)$"))
    expect(verdict).to_contain_text(f"by {bob}")
    expect(verdict).to_contain_text(f"{ann} wins in 1.")  # bob's move let ann win: not the end yet (counted from
    # the position after it, as the line above: it said "in 2", from before the move, under "wins in 1")
    expect(verdict).not_to_contain_text("has won")

    lost = record_game(port, "endlost", ["1", "4", "1", "3", "1", "2", "7", "5"])  # ann misses her win: bob's
    analysed(lost, 8)
    yellow = "bob-endlost (yellow)"
    expect(verdict).to_have_text(re.compile(rf"^8\. 5 by {re.escape(yellow)}, the best move: {re.escape(yellow)} "
                                            r"has won\.$"))
    expect(best).to_have_text(f"Game over: {yellow} has won.")
    page.locator('button.move[data-seq="7"]').click()  # next to the end: the blunder that lost, and its better move
    red = "ann-endlost (red)"
    expect(verdict).to_have_text(f"7. 7?? by {red}, a blunder: {red} wins in 1 → {yellow} wins in 1. Better: 1 ({red} "
                                 "wins in 1).")
    expect(best).to_have_text(re.compile(rf"^{re.escape(yellow)} to move\. Engine's best here: 5 \({re.escape(yellow)} "
                                         r"wins in 1, exact\)$"))

    analysed(drawn, 42)
    expect(verdict).to_have_text(re.compile(r"^42\. 1 by bob-enddrawn \(yellow\), the best move \(the only move that "
                                            r"keeps the result\): the game is drawn\.$"))
    expect(best).to_have_text("Game over: a draw.")

    analysed(resigned, 3)
    expect(best).to_have_text(re.compile(r"^Game over: ann-endquit won: bob-endquit resigned\. Engine's best here was "
                                         r"[1-7] \(.+\)\.$"))
    expect(best).not_to_contain_text("to move")
    expect(verdict).to_have_text(re.compile(r"^3\. 3\S* by ann-endquit \(red\), "))  # what the last move did


def test_odd_addresses_and_stepping_leave_the_replay_whole_and_still(own_server, open_page):  # noqa: F811
    """A stray "%" in the address left "Loading…" for ever (an uncaught URIError); a move number such as 2.5 or abc
    replaced the replay with "Cannot read properties of undefined", and its key handler then threw on every arrow
    key of later pages. Stepping through an analysed replay moved its graph by the length of the text above it (a
    click on the graph then landed on its legend), and on a phone the move shown fell outside the move strip once the
    analysis had marked the moves."""
    moves, _ = a_blunder_game()
    opening_table()
    port = own_server("--analyse-finished", "--analysis-nodes", "4000000")
    record = record_game(port, "steps", list(moves))
    base = f"http://127.0.0.1:{port}/"
    page = open_page("stepper", width=1280, height=800)
    page.goto(f"{base}#/rules/%E0%A4%A")  # (open_page fails the test on any uncaught error)
    expect(page.locator(".rules-page .notice")).to_have_text("There is no game %E0%A4%A: choose one of these.")
    page.goto(f"{base}#/replay/{record}/2.5")
    expect(page.locator(".where")).to_have_text(re.compile(rf"^Move 2 of {len(moves)}: "))
    page.goto(f"{base}#/replay/{record}/abc")
    expect(page.locator(".where")).to_have_text(f"Start position · {len(moves)} moves")
    page.goto(f"{base}#/replay?offset=abc")
    expect(page.locator("table.games")).to_be_visible()
    page.keyboard.press("ArrowRight")  # no replay's handler is left behind
    page.goto(f"{base}#/replay/{record}/0")
    graph = page.locator(".eval-graph svg.eval")
    expect(graph).to_be_visible(timeout=120_000)
    tops = set()
    for ply in range(1, 8):
        page.keyboard.press("ArrowRight")
        expect(page.locator(".where")).to_have_text(re.compile(rf"^Move {ply} of "))
        box = graph.bounding_box()
        assert box is not None
        tops.add(round(box["y"]))
    assert len(tops) == 1, f"the graph moved as the moves were stepped through: its top at {sorted(tops)}"
    phone = open_page("phone", width=390, height=844)
    shown = len(moves) - 3
    phone.goto(f"{base}#/replay/{record}/{shown}")
    expect(phone.locator(".eval-graph svg.eval")).to_be_visible(timeout=60_000)
    expect(phone.locator("button.move.label-blunder").first).to_be_attached()
    phone.wait_for_timeout(200)  # the list refitted after the marks
    inside = phone.evaluate("""(seq) => {
        const list = document.querySelector("ol.replay-moves").getBoundingClientRect();
        const item = document.querySelector(`button.move[data-seq="${seq}"]`).getBoundingClientRect();
        return item.left >= list.left - 1 && item.right <= list.right + 1 && item.top >= list.top - 1
          && item.bottom <= list.bottom + 1;
    }""", shown)
    assert inside, "the move shown is outside the move strip"


def test_flipping_the_board_keeps_the_engine_s_best_move_outlined(own_server, open_page):  # noqa: F811
    """Amazons' board turns half a turn ("Flip the board"), and rebuilt its squares without the engine's best move:
    its outline was gone until the next step, while the words still named it."""
    port = own_server("--analyse-finished", "--analysis-nodes", "5000")
    record = record_an_amazons_game(port)
    page = open_page("flipper", width=1280, height=800)
    page.goto(f"http://127.0.0.1:{port}/#/replay/{record}/10")
    expect(page.locator(".eval-graph svg.eval")).to_be_visible(timeout=120_000)
    best = page.locator(".sq.best")
    expect(best.first).to_be_visible()  # the queen's square, where it goes and where its arrow lands
    outlined = sorted(best.evaluate_all("squares => squares.map((square) => square.dataset.sq)"))
    assert len(outlined) >= 2, outlined
    page.get_by_role("button", name="Flip the board").click()
    expect(page.get_by_role("button", name="Flip the board")).to_have_attribute("aria-pressed", "true")
    expect(best).to_have_count(len(outlined))
    assert sorted(best.evaluate_all("squares => squares.map((square) => square.dataset.sq)")) == outlined
