"""Helpers of the browser tests (tests/test_web.py): Debian's chromium, logging in, rooms, and
playing the reference rules' moves by clicking the squares and pieces the page highlights."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from protocol.games import GAMES

CHROMIUM_PATHS = ("/usr/lib/chromium/chromium", "/usr/bin/chromium")
CHROMIUM = next((path for path in CHROMIUM_PATHS if Path(path).exists()), None)
# No internet here: without these flags chromium keeps trying (and failing) to reach Google's services.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
FILES = "abcdefghij"


def drawn_box(locator: Locator, tries: int = 50) -> dict[str, float]:
    """The bounding box of ``locator``'s element once the page shows it. A box read while the page draws the element
    anew (a room's seats are drawn again on each news of the room) is None: it is read again, as Playwright's own
    ``expect`` retries, up to ``tries`` times."""
    for _ in range(tries):
        expect(locator).to_be_visible()
        box = locator.bounding_box()
        if box is not None:
            return box
    raise AssertionError(f"{locator} was drawn anew {tries} times in a row, never read whole")


def login(page: Page, base: str, name: str, coords: str = "algebraic", secret: str = "") -> None:
    """Open the page and log in through its form; returns once the lobby shows."""
    page.goto(base + "/#/lobby")
    page.get_by_label("Name").fill(name)
    if secret:
        page.get_by_label("Secret (optional)").fill(secret)
    settings = page.locator("details.settings")  # the convention sits under a disclosure, algebraic by default
    if settings.count():
        settings.evaluate("details => { details.open = true; }")
    page.get_by_label("Coordinates").select_option(coords)
    page.get_by_role("button", name="Enter").click()
    expect(page.get_by_role("heading", name="Lobby")).to_be_visible()


def create_room(page: Page, game: str, room: str, seat: int = 0, **fields: str) -> None:
    """Create a room with the lobby's form (more fields by their labels) and sit in ``seat``."""
    page.locator("details.create-card summary").click()
    form = page.locator("form.create")
    form.get_by_label("Room name (optional)").fill(room)
    form.get_by_label("Game", exact=True).select_option(game)
    for label, value in fields.items():
        control = form.get_by_label(label, exact=True)
        if control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)
    form.get_by_label("Your seat").select_option(str(seat))
    form.get_by_role("button", name="Create the room").click()
    expect(page.get_by_role("heading", name=room)).to_be_visible()


def play_a_house_bot(page: Page, game: str, level: str, first: str = "0") -> None:
    """Ask for a game against a house bot with the lobby's *Play a bot* form (``first``: "0" you, "1" the bot)."""
    card = page.locator("form", has=page.get_by_role("heading", name="Play a bot"))
    card.get_by_label("Game").select_option(game)
    card.get_by_label("Level").select_option(level)
    card.get_by_label("Who moves first").select_option(first)
    card.get_by_role("button", name="Play the bot").click()


def take_seat(page: Page, room: str) -> None:
    """Take the free seat of ``room`` from the lobby's list."""
    row = page.locator(f'.room-row[data-room="{room}"]')
    row.get_by_role("button", name="Take a seat").click()
    expect(page.get_by_role("heading", name=room)).to_be_visible()


def notation_shown(page: Page) -> list[str]:
    """The moves of a room page in notation (a move said in words, as Quarto's, keeps its notation as its title)."""
    return page.locator("ol.moves li .mv").evaluate_all("els => els.map((e) => e.title || e.textContent)")


def moves_shown(page: Page) -> Any:
    """The moves list of a room page."""
    return page.locator("ol.moves li .mv")


def clicks(game_id: str, state: Any, move: Any) -> list[str]:
    """CSS selectors of what a player clicks to play ``move``: squares, then (Quarto) the piece."""
    form = GAMES[game_id].format_move(move, "algebraic")
    squares: list[str] = []
    pieces: list[str] = []
    if game_id == "connect4":
        column = form["column"] - 1
        rank = next(r for r in range(6) if state.board[r * 7 + column] == 0)
        squares = [f"{FILES[column]}{rank + 1}"]  # the square the disc lands on: the page highlights it
    elif game_id == "santorini":
        squares = form["place"] if "place" in form else [form["worker"], form["to"]] + ([form["build"]] if form["build"]
                                                                                         else [])
    elif game_id == "amazons":
        squares = [form["queen"], form["to"], form["arrow"]]
    elif game_id == "magnetic-cave":
        squares = [form["square"]]
    elif game_id == "quarto":
        squares = [form["square"]] if form["square"] else []
        pieces = [form["piece"]] if form["piece"] else []
    return [f'.sq[data-sq="{s}"]' for s in squares] + [f'.piece[data-piece="{p}"]' for p in pieces]


def play_by_clicking(page: Page, game_id: str, state: Any, move: Any, prompt: re.Pattern[str] | None = None) -> None:
    """Click the squares (and piece) of ``move``, each once the page shows it as a legal target; a target that does
    not come fails with what the page showed instead (its status line, the picks it holds, the targets it offers).
    With ``prompt``, the status line matches it before each click (what the page asks the player to pick)."""
    done: list[str] = []
    for selector in clicks(game_id, state, move):
        if prompt is not None:
            expect(page.locator(".play .status")).to_have_text(prompt)
        try:
            page.locator(selector + ".target").click(timeout=20_000)
        except PlaywrightTimeout:
            shown = page.evaluate("""() => ({
                status: document.querySelector(".play .status")?.textContent ?? null,
                chosen: [...document.querySelectorAll(".play .chosen")].map((e) => e.dataset.sq || e.dataset.piece),
                targets: [...document.querySelectorAll(".play .target")].map((e) => e.dataset.sq || e.dataset.piece),
            })""")
            raise AssertionError(f"{selector} never became a target after {done} were clicked; the page showed "
                                 f"{shown}") from None
        done.append(selector)


def _queen_reach(board: tuple[int, ...], stone: int) -> int:
    """Squares the queens of ``stone`` reach in one queen move (Amazons mobility)."""
    reach = 0
    for square, cell in enumerate(board):
        if cell != stone:
            continue
        col, row = square % 10, square // 10
        for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)):
            c, r = col + dc, row + dr
            while 0 <= c < 10 and 0 <= r < 10 and board[r * 10 + c] == 0:
                reach += 1
                c, r = c + dc, r + dr
    return reach


def choose_move(game_id: str, state: Any, rng: random.Random) -> Any:
    """A move that ends games soon: a win when there is one; in Amazons both sides wall in white's
    queens, in Santorini both climb; otherwise a random legal move."""
    game = GAMES[game_id]
    moves = game.legal_moves(state)
    if game_id == "amazons":
        return min(moves, key=lambda m: (_queen_reach(game.apply(state, m).board, 2), rng.random()))
    mover = game.to_move(state)
    for move in moves:
        outcome = game.outcome(game.apply(state, move))
        if outcome is not None and outcome.winner == mover:
            return move
    if game_id == "santorini" and hasattr(moves[0], "to"):
        levels = state.levels
        return max(moves, key=lambda m: (levels[m.to] * 3 + (levels[m.build] if m.build is not None
                                                             and levels[m.build] < 3 else 0), rng.random()))
    return rng.choice(moves)
