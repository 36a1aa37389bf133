"""The web page in a real browser: Playwright drives Debian's chromium against a real server.

Two pages play a whole game of each game by clicking, a spectator sees the moves live, a replay
steps through a recorded game, an illegal click is refused with a reason, a reload resumes the
seat. Skipped only where no chromium is installed (apt-get install chromium). A failing test
saves a screenshot of each of its pages (the board, and the whole page) and prints the paths.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from protocol.games import GAMES
from server.core.house import HOUSE_LEVELS
from tests.conftest import free_port
from tests.helpers import login as sdk_login
from tests.helpers import play_out, plyhall, start_server, stop
from tests.web_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    choose_move,
    create_room,
    drawn_box,
    login,
    moves_shown,
    notation_shown,
    play_a_house_bot,
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


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Callable[..., int]]:
    """``own_server(*options)``: a ``plyhall serve`` of the test's own; its port.

    Listed before ``open_page``, it stops after the pages have closed: a page whose server went away
    first would log its reconnection attempts as console errors."""
    procs: list[subprocess.Popen] = []

    def start(*options: str) -> int:
        port = free_port()
        procs.append(start_server(tmp_path / f"own-{len(procs)}.db", port, *options))
        return port

    yield start
    for proc in procs:
        stop(proc)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_page(browser: Browser, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Page]]:
    """``open_page(name, width=1100, context=None)``: a page in a fresh browser context (its own storage).

    Console errors and uncaught exceptions fail the test; a failed test screenshots every page."""
    pages: list[tuple[str, Page]] = []
    problems: list[str] = []

    def make(name: str, width: int = 1100, height: int = 900, context: BrowserContext | None = None) -> Page:
        """A page in a fresh context, or a further page of ``context`` (which shares its storage)."""
        context = context or browser.new_context(viewport={"width": width, "height": height})
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
    for context in {page.context for _, page in pages}:
        context.close()
    assert not problems, "\n".join(problems)


# The label of the leftmost file in each convention (Connect Four numbers its columns as its moves do).
FIRST_FILE = {False: {"algebraic": "a", "cosc322": "1", "matrix": "0"},
              True: {"algebraic": "1", "cosc322": "1", "matrix": "0"}}
CONVENTIONS = {
    "connect4": ("algebraic", "matrix"),
    "santorini": ("cosc322", "algebraic"),
    "amazons": ("algebraic", "cosc322"),
    "magnetic-cave": ("matrix", "algebraic"),
    "quarto": ("algebraic", "matrix"),
}


# what the page asks the player to pick is one sentence: "Your move: drop a disc in a column."
ONE_SENTENCE = re.compile(r"^Your move: [a-z][^:.]*\.$")


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
    for page, coords in zip((ann, bob), CONVENTIONS[game_id], strict=True):
        expect(page.locator(".edge.file").first).to_have_text(FIRST_FILE[game_id == "connect4"][coords])
    pages = {0: ann, 1: bob}
    rng = random.Random(game_id)
    state = game.initial_state()
    played: list[str] = []
    while game.outcome(state) is None:
        seat = game.to_move(state)
        expect(pages[seat].locator(".status")).to_contain_text("Your move")
        move = choose_move(game_id, state, rng)
        play_by_clicking(pages[seat], game_id, state, move, prompt=ONE_SENTENCE)
        played.append(game.notation(move))
        state = game.apply(state, move)
        for page in pages.values():
            expect(moves_shown(page)).to_have_count(len(played))
    outcome = game.outcome(state)
    for seat, page in pages.items():
        expect(page.locator(".status")).to_contain_text(outcome.reason)
        verdict = "A draw." if outcome.winner is None else "You won." if outcome.winner == seat else "You lost."
        expect(page.locator(".result .verdict")).to_have_text(verdict)
        assert notation_shown(page) == played


def start_connect4(open_page, base: str, room: str, coords: tuple[str, str] = ("algebraic", "algebraic"),
                   width: int = 1100) -> tuple[Page, Page]:
    """ann (seat 0, ``width`` wide) and bob (seat 1) in a new Connect Four room, the game started."""
    ann, bob = open_page("ann", width=width), open_page("bob")
    login(ann, base, f"ann-{room.split()[0].lower()}", coords[0])
    login(bob, base, f"bob-{room.split()[0].lower()}", coords[1])
    create_room(ann, "connect4", room)
    take_seat(bob, room)
    expect(ann.locator(".status")).to_contain_text("Your move")
    expect(ann.locator(".sq.target")).to_have_count(7)  # the legal moves are in: ann can play
    return ann, bob


def drop(page: Page, column: str) -> None:
    """Click the column's highlighted landing square (the page knows where the disc lands)."""
    page.locator(f'.sq.target[data-sq^="{column}"]').click()


def test_a_spectator_sees_the_moves_live_and_chat_stays_text(base, open_page):
    ann, bob = start_connect4(open_page, base, "Watched Room")
    sue = open_page("sue")
    login(sue, base, "sue-watch", "matrix")
    sue.locator('.room-row[data-room="Watched Room"]').get_by_role("link", name="Watch", exact=True).click()
    expect(sue.locator(".meta")).to_contain_text("you are watching")
    drop(ann, "d")
    expect(moves_shown(sue)).to_have_text(["3"])  # columns 4 and 3, as matrix numbers them (from 0)
    drop(bob, "c")
    expect(moves_shown(sue)).to_have_text(["3", "2"])
    expect(sue.locator('.sq[data-sq="c1"]')).to_have_attribute("aria-label", re.compile("yellow disc"))
    sue.locator('.sq[data-sq="e1"]').click()
    expect(sue.locator(".notice")).to_have_text("You are watching this game.")
    markup = '<b>bold?</b> <img src=x onerror="document.title=1">'
    ann.get_by_label("Chat message").fill(markup)
    ann.get_by_role("button", name="Send").click()
    for page in (ann, bob, sue):
        line = page.locator(".chat-log li").last
        expect(line).to_have_text(f"ann-watched: {markup}")
        expect(line.locator("img")).to_have_count(0)
        expect(line.locator("b")).to_have_count(1)  # the sender's name, nothing from the text


def test_an_illegal_click_is_refused_with_a_visible_reason(base, open_page):
    ann, bob = open_page("ann"), open_page("bob")
    login(ann, base, "ann-illegal", "cosc322")
    login(bob, base, "bob-illegal")
    create_room(ann, "magnetic-cave", "Illegal Room")
    take_seat(bob, "Illegal Room")
    expect(ann.locator(".sq.target")).to_have_count(16)
    ann.locator('.sq[data-sq="d4"]').click()
    expect(ann.locator(".notice")).to_have_text(re.compile(r"^4,4 is not open: a brick goes in the first or last"))
    bob.locator('.sq[data-sq="a1"]').click()
    expect(bob.locator(".notice")).to_have_text("It is ann-illegal's turn.")
    expect(moves_shown(ann)).to_have_count(0)
    ann.locator('.sq[data-sq="a1"]').click()
    expect(moves_shown(bob)).to_have_text(["a1"])
    expect(ann.locator(".notice")).to_be_hidden()
    expect(bob.locator(".sq.target")).not_to_have_count(0)  # bob's page has the legal moves
    bob.locator('.sq[data-sq="a1"]').click()
    expect(bob.locator(".notice")).to_have_text("a1 is taken.")


def test_a_reload_resumes_the_seat_and_the_opponent_sees_the_drop(base, open_page):
    ann, bob = start_connect4(open_page, base, "Resume Room")
    drop(ann, "d")
    drop(bob, "d")
    ann.reload()
    expect(ann.get_by_role("heading", name="Resume Room")).to_be_visible()
    expect(moves_shown(ann)).to_have_text(["4", "4"])
    expect(ann.locator(".status")).to_contain_text("Your move")
    drop(ann, "e")
    expect(moves_shown(bob)).to_have_count(3)
    room_url = bob.url
    context = bob.context
    bob.close()
    away = ann.locator('.player[data-seat="1"] .away')
    expect(away).to_have_text(re.compile(r"lost the connection: \d+ s to come back"))
    bob = open_page("bob, back", context=context)  # the same browser storage: name and resume token
    bob.goto(room_url)
    expect(bob.locator(".status")).to_contain_text("Your move")
    expect(moves_shown(bob)).to_have_text(["4", "4", "5"])
    expect(away).to_have_text("")
    drop(bob, "e")
    expect(moves_shown(ann)).to_have_count(4)


def record_a_connect4_game(port: int) -> str:
    """Two SDK clients play a short Connect Four game (ann wins in column 1); its record id."""
    async def play() -> str:
        ann = await sdk_login(f"ws://127.0.0.1:{port}/ws", "ann-rec")
        bob = await sdk_login(f"ws://127.0.0.1:{port}/ws", "bob-rec")
        await ann.request({"type": "create_room", "game": "connect4", "name": "Recorded Room"})
        await ann.request({"type": "join", "room": "Recorded Room", "seat": 0})
        await bob.request({"type": "join", "room": "Recorded Room"})
        for column in ["1", "2", "1", "2", "1", "2"]:
            player = ann if column == "1" else bob
            await player.request({"type": "move", "room": "Recorded Room", "move": column})
        await ann.request({"type": "move", "room": "Recorded Room", "move": "1"})
        over = await ann.expect("game_over")
        await ann.close()
        await bob.close()
        return over["record"]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
        return pool.submit(asyncio.run, play()).result()


def test_a_replay_steps_through_a_recorded_game(base, open_page):
    record = record_a_connect4_game(int(base.rsplit(":", 1)[1]))
    page = open_page("viewer")
    page.goto(base + "/#/replay")
    row = page.locator("table.games tr", has_text="ann-rec vs bob-rec")
    expect(row).to_contain_text("ann-rec won: four in a row")
    row.get_by_role("link", name="Replay").click()
    expect(page.locator(".where")).to_have_text("Start position · 7 moves")
    expect(page.locator(".sq.filled")).to_have_count(0)
    page.get_by_role("button", name="Forward one move").click()
    expect(page.locator(".where")).to_have_text("Move 1 of 7: 1")
    assert page.url.endswith(f"#/replay/{record}/1")
    page.locator('button.move[data-seq="5"]').click()
    expect(page.locator(".where")).to_have_text("Move 5 of 7: 1")
    expect(page.locator(".sq.filled")).to_have_count(5)
    page.get_by_role("button", name="Back one move").click()
    expect(page.locator(".where")).to_have_text("Move 4 of 7: 2")
    page.keyboard.press("ArrowRight")
    expect(page.locator(".where")).to_have_text("Move 5 of 7: 1")
    assert page.url.endswith(f"#/replay/{record}/5")
    linked = open_page("linked")
    linked.goto(f"{base}/#/replay/{record}/3")
    expect(linked.locator(".where")).to_have_text("Move 3 of 7: 1")
    expect(linked.locator(".sq.filled")).to_have_count(3)
    linked.get_by_label("Autoplay speed").select_option("0.5")
    linked.get_by_role("button", name="Autoplay").click()
    expect(linked.locator(".where")).to_have_text("Move 7 of 7: 1")
    expect(linked.locator(".sq.win")).to_have_count(4)
    expect(linked.get_by_role("button", name="Autoplay")).to_have_attribute("aria-pressed", "false")


def record_an_amazons_game(port: int) -> str:
    """Two SDK clients play a random Amazons game to its end (long moves such as d10-e10/f10); its record id."""
    async def play() -> str:
        url = f"ws://127.0.0.1:{port}/ws"
        ann, bob = await sdk_login(url, "ann-long"), await sdk_login(url, "bob-long")
        await ann.request({"type": "create_room", "game": "amazons", "name": "Long Moves"})
        await ann.request({"type": "join", "room": "Long Moves", "seat": 0})
        await bob.request({"type": "join", "room": "Long Moves"})
        over = await play_out([ann, bob], "Long Moves", random.Random(3))
        await ann.close()
        await bob.close()
        return over["record"]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, play()).result()


def test_long_amazons_moves_stay_on_their_numbers_line_in_the_replay(base, open_page):
    record = record_an_amazons_game(int(base.rsplit(":", 1)[1]))
    page = open_page("viewer")
    page.goto(f"{base}/#/replay/{record}")
    moves = page.locator(".replay-moves li")
    expect(moves.first).to_be_visible()
    longest = max(len(text) for text in page.locator(".replay-moves .mv").all_inner_texts())
    assert longest >= 9, "the game has long moves (a queen or an arrow on the tenth rank)"
    heights = {round(box["height"]) for box in (moves.nth(i).bounding_box() for i in range(moves.count()))}
    assert len(heights) == 1, f"every move is one line high, not {sorted(heights)} px"
    wide = page.evaluate("(() => { const ol = document.querySelector('.replay-moves'); "
                         "return ol.scrollWidth - ol.clientWidth; })()")
    assert wide <= 0, f"the move list scrolls {wide} px sideways"
    fits(page, 1100)


def test_a_page_plays_a_house_bot_to_the_end(own_server, open_page):
    port = own_server("--house-bots", "1")
    base = f"http://127.0.0.1:{port}"
    page = open_page("ann")
    login(page, base, "ann-vs-bot")
    # each level the server offers says what it plays like: a few words in the list, a sentence beside it
    card = page.locator("form", has=page.get_by_role("heading", name="Play a bot"))
    levels = card.get_by_label("Level")
    expect(levels.locator("option")).to_have_count(len(HOUSE_LEVELS))
    shown = [text.split(": ", 1) for text in levels.locator("option").all_text_contents()]
    assert [name for name, *_ in shown] == list(HOUSE_LEVELS) and all(len(words) == 2 and words[1] for words in shown)
    assert dict(shown)["random"] == "the weakest" and dict(shown)["master"] == "the strongest"
    assert dict(shown)["minimax-3"] == "looks 3 moves ahead"
    expect(levels).to_have_accessible_description(re.compile(r"^novice takes a win in one move when it has one, "))
    levels.select_option("minimax-3")
    expect(card.locator("#level-help")).to_have_text(re.compile(r"^minimax-3 looks 3 moves ahead, its own and yours "))
    play_a_house_bot(page, "connect4", "random")
    expect(page.locator(".status")).to_contain_text("Your move", timeout=30_000)
    game = GAMES["connect4"]
    rng = random.Random(7)
    while True:
        expect(page.locator(".status")).to_contain_text(re.compile("Your move|won|Draw"), timeout=30_000)
        if page.locator(".result").is_visible():
            break
        state = game.play(game.initial_state(), *notation_shown(page))
        if game.outcome(state) is not None:
            continue  # the last move is on the page; its result is on its way
        move = choose_move("connect4", state, rng)
        count = moves_shown(page).count()
        play_by_clicking(page, "connect4", state, move)
        expect(moves_shown(page).nth(count)).to_be_attached()  # the bot may answer at once
    expect(page.locator(".result .verdict")).to_have_text(re.compile("You won|You lost|A draw"))


def test_tournaments_show_none_when_the_server_has_none(base, open_page):
    page = open_page("fan")
    page.goto(base + "/#/tournaments")
    expect(page.locator("main")).to_contain_text("No tournaments.")


def test_a_tournament_page_follows_the_event_as_its_games_finish(own_server, open_page):
    """Two house bots play a round robin; a logged-in page watching it sees the games finish without a reload."""
    secret = "organiser-secret"
    port = own_server("--organiser-secret", secret, "--house-bots", "2")
    url = f"ws://127.0.0.1:{port}/ws"
    base = f"http://127.0.0.1:{port}"
    created = plyhall("tournament", "create", "--url", url, "--secret", secret, "--name", "Web Cup", "--game",
                      "connect4", "--format", "round-robin", "--local", "random,novice", "--time-control", "10")
    assert created.wait(60) == 0, created.communicate()
    page = open_page("fan")
    login(page, base, "fan-cup")
    page.get_by_role("link", name="Tournaments").click()
    page.get_by_role("link", name="Web Cup").click()
    expect(page.locator(".tournament .meta")).to_contain_text("Connect Four · round-robin · created · 2 entrants")
    expect(page.locator(".progress")).to_contain_text("0 of 2 games played")
    started = plyhall("tournament", "start", "--url", url, "--secret", secret, "web-cup")
    assert started.wait(60) == 0, started.communicate()
    expect(page.locator(".progress")).to_contain_text("2 of 2 games played", timeout=60_000)
    expect(page.locator(".tournament .meta")).to_contain_text("finished")
    expect(page.locator("table.standings tbody tr")).to_have_count(2)
    expect(page.locator("table.standings thead th").nth(7)).to_have_text("SB")  # the server's key is sonneborn-berger
    expect(page.locator("table.schedule tbody tr")).to_have_count(2)
    expect(page.locator("table.schedule").get_by_role("link", name="Replay")).to_have_count(2)


TOURNAMENT = {
    "id": "t1", "name": "Spring Cup", "game": "connect4", "format": "round-robin", "status": "running",
    "entrants": ["alpha", "beta", "gamma"],
    "progress": {"done": 2, "total": 6, "fraction": 0.33, "seconds_left": 240},
    "standings": {"tiebreak": "sonneborn-berger", "rows": [
        {"rank": 1, "name": "alpha", "points": 1.5, "games": 4, "played": 2, "wins": 1, "draws": 1, "losses": 0,
         "forfeit_wins": 0, "forfeit_losses": 0, "byes": 0, "tiebreak": 1.25, "elo": 120.4, "elo_margin": 300.2},
        {"rank": 2, "name": "beta", "points": 0.5, "games": 4, "played": 1, "wins": 0, "draws": 1, "losses": 0,
         "forfeit_wins": 0, "forfeit_losses": 0, "byes": 0, "tiebreak": 0.5, "elo": 0, "elo_margin": None},
        {"rank": 3, "name": "gamma", "points": 0, "games": 4, "played": 1, "wins": 0, "draws": 0, "losses": 1,
         "forfeit_wins": 0, "forfeit_losses": 0, "byes": 0, "tiebreak": 0, "elo": None, "elo_margin": None}],
        "crosstable": {"alpha": {"beta": ["="], "gamma": ["1"]}, "beta": {"alpha": ["="]}, "gamma": {"alpha": ["0"]}}},
    "schedule": [
        {"number": 1, "round": 1, "white": "alpha", "black": "beta", "opening": None, "status": "finished",
         "room": "Cup 1", "record": "abc123", "result": "1/2-1/2"},
        {"number": 2, "round": 1, "white": "gamma", "black": "alpha", "opening": None, "status": "finished",
         "room": "Cup 2", "record": "def456", "result": "0-1"},
        {"number": 3, "round": 2, "white": "beta", "black": "gamma", "opening": "4", "status": "playing",
         "room": "Cup 3", "record": None, "result": None}],
}


def test_a_tournament_page_shows_standings_crosstable_schedule_and_live_games(base, open_page):
    """The view of one tournament, drawn from the documented shape of /api/tournaments/ID."""
    page = open_page("fan")
    page.goto(base + "/#/replay")
    page.evaluate("""async (tournament) => {
        const { renderTournament } = await import("/static/js/tournaments.js");
        document.getElementById("main").replaceChildren(renderTournament(tournament));
    }""", TOURNAMENT)
    expect(page.get_by_role("heading", name="Spring Cup")).to_be_visible()
    expect(page.locator(".progress")).to_contain_text("2 of 6 games played · about 4 min left")
    standings = page.locator("table.standings tbody tr")
    expect(standings).to_have_count(3)
    expect(standings.first).to_contain_text("alpha")
    expect(standings.first.locator("td").nth(1)).to_have_text("1½")
    # the tie-break the server names by its key is a heading a person reads, explained on the page
    headings = page.locator("table.standings thead th")
    expect(headings).to_have_text(["#", "Player", "Points", "Played", "W–D–L", "Forfeits", "Byes", "SB", "Elo"])
    expect(headings.nth(7)).to_have_attribute("title", re.compile(r"^Sonneborn-Berger: the points of the opponents "))
    expect(page.locator(".tournament .tiebreak")).to_have_text(re.compile(r"^Equal points are ranked by Sonneborn-B"))
    expect(page.locator(".tournament")).not_to_contain_text("sonneborn-berger")
    expect(page.locator("table.crosstable tbody tr").first).to_contain_text("=")
    expect(page.locator("table.schedule tbody tr")).to_have_count(3)
    expect(page.locator(".live").get_by_role("link", name="Watch")).to_have_attribute("href", "#/room/Cup%203")
    expect(page.locator("table.schedule").get_by_role("link", name="Replay").first).to_have_attribute(
        "href", "#/replay/abc123")


def fits(page: Page, width: int = 375) -> None:
    """Nothing on the page is wider than the screen (no sideways scrolling)."""
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide at {width} px"


def test_a_phone_sized_page_plays_by_keyboard(base, open_page):
    ann, bob = start_connect4(open_page, base, "Phone Room", ("cosc322", "algebraic"), width=375)
    fits(ann)
    box = drawn_box(ann.locator(".board"))
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375
    first = ann.locator('.sq[data-sq="a1"]')
    expect(first).to_have_attribute("aria-label", re.compile(r"^column 1, row 1 from the bottom: empty, legal"))
    ann.locator('.sq[tabindex="0"]').focus()
    for _ in range(3):
        ann.keyboard.press("ArrowRight")
    expect(ann.locator('.sq[data-sq="d1"]')).to_be_focused()
    ann.keyboard.press("Enter")
    expect(moves_shown(bob)).to_have_text(["4"])
    drop(bob, "a")
    # "Your move" shows while the page still asks for the legal moves: wait until d2 is one.
    expect(ann.locator('.sq[data-sq="d2"]')).to_have_attribute("aria-label", re.compile(r": empty, legal$"))
    expect(ann.locator('.sq[data-sq="d1"]')).to_be_focused()
    ann.keyboard.press("ArrowUp")
    ann.keyboard.press("Space")
    expect(moves_shown(bob)).to_have_text(["4", "1", "4"])
    for route in ("#/lobby", "#/replay", "#/tournaments"):
        ann.goto(f"{base}/{route}")
        expect(ann.locator("main h1")).to_be_visible()
        fits(ann)


def test_a_name_is_claimed_from_the_menu_and_then_needs_its_secret(base, open_page):
    ann = open_page("ann")
    login(ann, base, "ann-claims")
    ann.locator(".identity summary").click()
    ann.get_by_label("Secret", exact=True).fill("open sesame")
    ann.get_by_role("button", name="Claim the name").click()
    expect(ann.locator(".identity .claimed")).to_have_text("")
    other = open_page("other")
    other.goto(base + "/#/lobby")
    other.get_by_label("Name").fill("ann-claims")
    other.get_by_role("button", name="Enter").click()
    expect(other.locator(".login .form-status")).to_contain_text("is claimed")
    other.get_by_label("Secret (optional)").fill("open sesame")
    other.get_by_role("button", name="Enter").click()
    expect(other.get_by_role("heading", name="Lobby")).to_be_visible()
    expect(ann.locator("#banner")).to_contain_text("another window")
    # the displaced window's page is out of reach (it offered moves and a running clock that could do nothing)
    expect(ann.locator("main")).to_have_js_property("inert", True)
    ann.get_by_role("button", name="Use this window").click()
    expect(ann.locator("main")).to_have_js_property("inert", False)
    # this window kept no secret (nor a resume token of its own any more): it is asked for the secret, and why
    expect(ann.locator(".login .form-status")).to_contain_text("ann-claims is claimed")
    ann.get_by_label("Secret (optional)").fill("open sesame")
    ann.get_by_role("button", name="Enter").click()
    expect(ann.get_by_role("heading", name="Lobby")).to_be_visible()
    expect(other.locator("#banner")).to_contain_text("another window")


def test_a_draw_is_offered_and_accepted_then_the_next_game_is_resigned(base, open_page):
    ann, bob = open_page("ann"), open_page("bob")
    login(ann, base, "ann-series")
    login(bob, base, "bob-series")
    create_room(ann, "quarto", "Series Room", **{"Games in the series": "2", "Time control": "untimed"})
    take_seat(bob, "Series Room")
    expect(ann.locator(".meta")).to_have_text("Quarto · untimed · game 1 of 2")
    ann.get_by_role("button", name="Offer a draw").click()
    expect(ann.locator(".offer")).to_have_text("You offered a draw.")
    expect(bob.locator(".offer")).to_contain_text("ann-series offers a draw")
    bob.get_by_role("button", name="Accept the draw").click()
    expect(bob.locator(".meta")).to_contain_text("game 2 of 2")  # the next game starts at once
    expect(ann.locator(".series li")).to_have_text(["Draw: draw agreed replay"])
    expect(ann.locator(".meta")).to_contain_text("score ann-series ½, bob-series ½")
    expect(bob.locator(".status")).to_contain_text("Your move")  # with the other seat first
    expect(ann.locator(".result")).to_be_hidden()
    bob.get_by_role("button", name="Resign…").click()
    bob.get_by_role("button", name="Yes, resign").click()
    expect(ann.locator(".status")).to_have_text("ann-series won: bob-series resigned")
    expect(ann.locator(".result .verdict")).to_have_text("You won.")
    expect(bob.locator(".result .verdict")).to_have_text("You lost.")
    expect(ann.locator(".meta")).to_contain_text("score ann-series 1½, bob-series ½")


def test_two_players_who_seek_the_same_game_meet_and_the_clock_runs_down(base, open_page):
    ann, bob = open_page("ann"), open_page("bob")
    login(ann, base, "ann-seek")
    login(bob, base, "bob-seek")
    for page in (ann, bob):
        card = page.locator("form", has=page.get_by_role("heading", name="Play someone"))
        card.get_by_label("Game").select_option("santorini")
        card.get_by_label("Time").select_option(label="10 s a move")
        card.get_by_role("button", name="Find an opponent").click()
        if page is ann:
            expect(card.locator(".form-status")).to_have_text("Looking for an opponent for Santorini (10 s a move)…")
            expect(card.get_by_role("button", name="Cancel")).to_be_visible()
    room = ann.locator(".room-head h1")
    expect(room).not_to_be_empty()
    expect(bob.locator(".room-head h1")).to_have_text(room.inner_text())
    expect(ann.locator(".player .clock.running")).to_have_text(re.compile(r"^[0-8]\.\d$"))  # 10 s, counting down


def test_a_spectator_takes_the_empty_seat_from_the_room(base, open_page):
    ann, sue = open_page("ann"), open_page("sue")
    login(ann, base, "ann-empty")
    login(sue, base, "sue-empty")
    create_room(ann, "amazons", "Empty Seat Room")
    sue.goto(base + "/#/room/Empty%20Seat%20Room")
    expect(sue.locator(".status")).to_have_text("Waiting for players.")
    sue.get_by_role("button", name="Take this seat").click()
    expect(sue.locator(".meta")).not_to_contain_text("watching")
    expect(ann.locator(".status")).to_have_text("Your move: pick one of your queens.")
    expect(sue.locator('.player[data-seat="1"]')).to_contain_text("sue-empty (white) (you)")
