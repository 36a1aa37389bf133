"""The web page in a real browser: Playwright drives Debian's chromium against a real server.

Two pages play a whole game of each game by clicking, a spectator sees the moves live, a replay
steps through a recorded game, an illegal click is refused with a reason, a reload resumes the
seat. Skipped only where no chromium is installed (apt-get install chromium). A failing test
saves a screenshot of each of its pages (the board, and the whole page) and prints the paths.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from protocol.games import GAMES
from tests.conftest import free_port
from tests.helpers import start_server, stop
from tests.web_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    choose_move,
    create_room,
    login,
    moves_shown,
    play_by_clicking,
    take_seat,
)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")

expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``plyhall serve`` for the module; its address."""
    port = free_port()
    proc = start_server(tmp_path_factory.mktemp("web") / "plyhall.db", port, "--grace", "60")
    yield f"http://127.0.0.1:{port}"
    stop(proc)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_page(browser: Browser, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Page]]:
    """``open_page(name, width=1100)``: a page in a fresh browser context (its own storage).

    Console errors and uncaught exceptions fail the test; a failed test screenshots every page."""
    pages: list[tuple[str, Page]] = []
    problems: list[str] = []

    def make(name: str, width: int = 1100, height: int = 900) -> Page:
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.on("console", lambda msg: problems.append(f"{name}: console {msg.type}: {msg.text}")
                if msg.type == "error" else None)
        page.on("pageerror", lambda exc: problems.append(f"{name}: uncaught {exc}"))
        pages.append((name, page))
        return page

    yield make
    report = getattr(request.node, "report_call", None)
    if report is None or report.failed:
        for name, page in pages:
            if page.is_closed():
                continue
            whole = tmp_path / f"{name}-page.png"
            page.screenshot(path=str(whole), full_page=True)
            shots = [whole]
            board = page.locator(".board-wrap")
            if board.count() and board.first.is_visible():
                shots.append(tmp_path / f"{name}-board.png")
                board.first.screenshot(path=str(shots[-1]))
            print(f"screenshots of {name}'s page: {', '.join(map(str, shots))}")
    for _, page in pages:
        page.context.close()
    assert not problems, "\n".join(problems)


CONVENTIONS = {
    "connect4": ("algebraic", "matrix"),
    "santorini": ("cosc322", "algebraic"),
    "amazons": ("algebraic", "cosc322"),
    "magnetic-cave": ("matrix", "algebraic"),
    "quarto": ("algebraic", "matrix"),
}


@pytest.mark.parametrize("game_id", list(CONVENTIONS))
def test_two_pages_play_a_whole_game_by_clicking(base, open_page, game_id):
    game = GAMES[game_id]
    room = f"Whole {game_id}"
    ann, bob = open_page("ann"), open_page("bob")
    login(ann, base, f"ann-{game_id}", CONVENTIONS[game_id][0])
    login(bob, base, f"bob-{game_id}", CONVENTIONS[game_id][1])
    create_room(ann, game_id, room)
    expect(ann.locator(".status")).to_contain_text("Waiting for an opponent")
    take_seat(bob, room)
    pages = {0: ann, 1: bob}
    rng = random.Random(game_id)
    state = game.initial_state()
    played: list[str] = []
    while game.outcome(state) is None:
        seat = game.to_move(state)
        expect(pages[seat].locator(".status")).to_contain_text("Your move")
        move = choose_move(game_id, state, rng)
        play_by_clicking(pages[seat], game_id, state, move)
        played.append(game.notation(move))
        state = game.apply(state, move)
        for page in pages.values():
            expect(moves_shown(page)).to_have_count(len(played))
    outcome = game.outcome(state)
    for seat, page in pages.items():
        expect(page.locator(".result")).to_contain_text(outcome.reason)
        verdict = "Draw" if outcome.winner is None else "You won" if outcome.winner == seat else "You lost"
        expect(page.locator(".result")).to_contain_text(verdict)
        assert moves_shown(page).all_inner_texts() == played
