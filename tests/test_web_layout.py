"""The room page fits the screen, in a real browser (Debian's chromium): at 1280×800, 1366×768 and 390×844, the board,
both player bars, the status line and (Quarto) the piece tray are all in view without scrolling, for each of the
five games, at the start of a game — when the first thing to do must be seen. Each board is saved as a screenshot at
each size in the test's folder (printed), to be looked at.
"""

from __future__ import annotations

import asyncio
import random
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from protocol.games import GAMES
from tests.helpers import login as sdk_login
from tests.test_web import browser, open_page, own_server  # noqa: F401 - the browser tests' fixtures
from tests.web_helpers import CHROMIUM, PlaywrightTimeout, drawn_box, login

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")

SIZES = [(1280, 800), (1366, 768), (390, 844)]
PARTS = {"top bar": ".play .player >> nth=0", "board": ".play .board", "bottom bar": ".play .player >> nth=1",
         "status": ".play .status"}


class Opponent:
    """bob, an SDK client in a thread of its own: creates a room of each game and sits in seat 1."""

    def __init__(self, port: int, name: str = "bob-layout") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = self.run(sdk_login(f"ws://127.0.0.1:{port}/ws", name))

    def run(self, coro):  # noqa: ANN001, ANN201 - a coroutine's result
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    def open_room(self, game: str, room: str) -> None:
        self.run(self.client.request({"type": "create_room", "game": game, "name": room}))
        self.run(self.client.request({"type": "join", "room": room, "seat": 1}))

    def close(self) -> None:
        self.run(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def out_of_view(page, parts: dict[str, str]) -> list[str]:  # noqa: ANN001 - a Playwright page
    """The parts whose box is not wholly inside the viewport (the page scrolled to its top)."""
    page.evaluate("window.scrollTo(0, 0)")
    height = page.evaluate("window.innerHeight")
    width = page.evaluate("document.documentElement.clientWidth")
    problems = []
    for name, selector in parts.items():
        box = page.locator(selector).bounding_box()
        if box is None:
            problems.append(f"{name}: not shown")
        elif (box["y"] < 0 or box["y"] + box["height"] > height + 0.5 or box["x"] < 0
              or box["x"] + box["width"] > width + 0.5):
            problems.append(f"{name}: x {box['x']:.0f}-{box['x'] + box['width']:.0f}, y {box['y']:.0f}-"
                            f"{box['y'] + box['height']:.0f} in a {width}×{height} view")
    return problems


def test_the_board_bars_status_and_tray_fit_the_screen(own_server, open_page, tmp_path: Path):  # noqa: F811
    port = own_server()
    bob = Opponent(port)
    page = open_page("ann", width=1280, height=800)
    login(page, f"http://127.0.0.1:{port}", "ann-layout")
    problems = []
    try:
        for game in GAMES:
            room = f"Fit {game}"
            bob.open_room(game, room)
            page.goto(f"http://127.0.0.1:{port}/#/room/{room.replace(' ', '%20')}")
            page.get_by_role("button", name="Take this seat").click()
            expect(page.locator(".play .status")).to_contain_text("Your move")
            parts = dict(PARTS)
            if game == "quarto":
                parts["piece tray"] = ".play .tray"
            for width, height in SIZES:
                page.set_viewport_size({"width": width, "height": height})
                page.wait_for_timeout(100)  # the layout follows the new size
                problems += [f"{game} at {width}×{height}: {p}" for p in out_of_view(page, parts)]
                shot = tmp_path / f"{game}-{width}x{height}.png"
                page.screenshot(path=str(shot))
            page.set_viewport_size({"width": 1280, "height": 800})
    finally:
        bob.close()
    print(f"screenshots of every board at every size: {tmp_path}")
    assert not problems, "\n".join(problems)


def test_played_quarto_highlights_its_last_move(own_server, open_page):  # noqa: F811
    """Quarto's squares keep their lines and still show the last move (its highlight used to be hidden); its moves
    read in words."""
    port = own_server()
    bob = Opponent(port)  # seat 1 of a room the page takes seat 0 of
    try:
        bob.open_room("quarto", "Marks")
        page = open_page("ann-q")
        login(page, f"http://127.0.0.1:{port}", "ann-marks")
        page.goto(f"http://127.0.0.1:{port}/#/room/Marks")
        page.get_by_role("button", name="Take this seat").click()
        expect(page.locator(".play .status")).to_contain_text("Your move")
        page.locator('.tray .piece[data-piece="0101"]').click()  # the opening hand-over: a piece for bob
        expect(page.locator("ol.moves li .mv").first).to_have_text("gives light round short hollow")
        bob.run(bob.client.send({"type": "move", "room": "Marks", "move": "c2 1111"}))
        marked = page.locator('.sq.mark[data-sq="c2"]')
        expect(marked).to_have_count(1)
        shadow = marked.evaluate("e => getComputedStyle(e).boxShadow")
        plain = page.locator('.sq[data-sq="d2"]').evaluate("e => getComputedStyle(e).boxShadow")
        assert shadow != plain and shadow.count("inset") == 2, (shadow, plain)  # its lines, and the mark over them
        expect(page.locator("ol.moves li .mv").nth(1)).to_have_text("c2, gives dark round tall hollow")
    finally:
        bob.close()


NAV_CLIPPED = """() => {
  const nav = document.querySelector('#nav');
  const box = nav.getBoundingClientRect();
  const width = document.documentElement.clientWidth;
  const problems = [];
  if (nav.scrollWidth > nav.clientWidth + 1) problems.push(`the nav scrolls: ${nav.scrollWidth} px`);
  for (const link of nav.querySelectorAll('a')) {
    const r = link.getBoundingClientRect();
    const name = link.textContent;
    if (r.width === 0 || r.height === 0) problems.push(`${name}: not shown`);
    else if (r.left < Math.max(0, box.left) - 0.5 || r.right > Math.min(width, box.right) + 0.5
             || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
      problems.push(`${name}: x ${Math.round(r.left)}-${Math.round(r.right)} outside the nav's ` +
                    `${Math.round(box.left)}-${Math.round(box.right)} in a ${width} px view`);
    } else if (link.scrollWidth > link.clientWidth + 1) problems.push(`${name}: its words cut`);
  }
  return problems;
}"""


@pytest.mark.parametrize("width", [390, 360, 320])
def test_every_nav_link_is_whole_on_a_phone_in_a_room(own_server, open_page, width):  # noqa: F811
    """In a room at phone width (390×844, and narrower phones) every link of the nav, My page last, shows whole: the
    nav wraps a link that does not fit instead of clipping it ("My p…") or scrolling it out of sight. The room itself
    is never wider than the screen (at 320 px its board and bars were 415 px wide), and its empty seat's button shows
    whole."""
    port = own_server()
    bob = Opponent(port)
    try:
        bob.open_room("amazons", "Phone nav")
        page = open_page("ann-nav", width=width, height=844)
        login(page, f"http://127.0.0.1:{port}", "ann-with-a-long-name")
        page.goto(f"http://127.0.0.1:{port}/#/room/Phone%20nav")
        take = page.get_by_role("button", name="Take this seat")
        box = drawn_box(take)  # its room's news redraws the seats: a box read meanwhile was None (a CI run saw it)
        assert 0 <= box["x"] and box["x"] + box["width"] <= width + 0.5, box
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "the room is wider than the screen"
        take.click()
        expect(page.locator(".play .status")).to_contain_text("Your move")
        links = page.locator("#nav a")
        expect(links).to_have_text(["Lobby", "Replays", "Tournaments", "Leaderboard", "My page"])
        assert page.evaluate(NAV_CLIPPED) == []
        page.goto(f"http://127.0.0.1:{port}/#/leaderboard")  # the current link is bold, so wider
        expect(page.locator('#nav a[aria-current="page"]')).to_have_text("Leaderboard")
        assert page.evaluate(NAV_CLIPPED) == []
    finally:
        bob.close()


def test_long_names_never_make_a_page_wider_than_a_phone(own_server, open_page):  # noqa: F811
    """Two players with 32-letter names: a spectator's room at 375 px scrolled sideways (its status line, "WWW…
    (black) to move.", 565 px wide), and so did the player's page (its heading, 830 px)."""
    port = own_server()
    long_names = ["W" * 32, "M" * 32]
    bob = Opponent(port, long_names[1])
    ann = Opponent(port, long_names[0])
    try:
        ann.open_room("amazons", "Long names")
        bob.run(bob.client.request({"type": "join", "room": "Long names", "seat": 0}))
        page = open_page("fan-long", width=375, height=812)
        login(page, f"http://127.0.0.1:{port}", "fan-long")
        page.goto(f"http://127.0.0.1:{port}/#/room/Long%20names")
        expect(page.locator(".play .status")).to_contain_text("to move")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, "the room is wider than the screen"
        ann.run(ann.client.request({"type": "resign", "room": "Long names"}))  # a game of its own on its page
        expect(page.locator(".play .status")).to_contain_text("resigned")
        page.goto(f"http://127.0.0.1:{port}/#/players/{long_names[0]}")
        expect(page.get_by_role("heading", name=long_names[0])).to_be_visible()
        expect(page.locator("table.recent-games tbody tr")).to_have_count(1)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, "the player page is wider than the screen"
    finally:
        ann.close()
        bob.close()


@pytest.mark.parametrize(("game", "moves", "marked"), [
    ("amazons", ["d10-d7/g7", "d1-d4/g4"], {"d1", "d4", "g4"}),
    ("connect4", ["4", "4", "5"], {"e1"}),
])
def test_a_room_opened_mid_game_marks_the_last_move(own_server, open_page, game, moves, marked):  # noqa: F811
    """Someone who opens a game already under way (or reloads the page) sees its last move marked, as someone who
    watched it live does: the position arrives whole, without the squares its last move touched."""
    port = own_server()
    players = [Opponent(port, "amy-mid"), Opponent(port, "ben-mid")]
    try:
        players[0].run(players[0].client.request({"type": "create_room", "game": game, "name": "Mid"}))
        for seat, player in enumerate(players):
            player.run(player.client.request({"type": "join", "room": "Mid", "seat": seat}))
        for ply, move in enumerate(moves):
            player = players[ply % 2]
            player.run(player.client.request({"type": "move", "room": "Mid", "move": move}))
        page = open_page("watcher", width=1280, height=800)
        login(page, f"http://127.0.0.1:{port}", "watcher-mid")
        page.goto(f"http://127.0.0.1:{port}/#/room/Mid")
        expect(page.locator("ol.moves li .mv")).to_have_count(len(moves))
        shown = page.locator(".board .sq.mark").evaluate_all("els => els.map((e) => e.dataset.sq)")
        assert set(shown) == marked, shown
    finally:
        for player in players:
            player.close()


def play_a_random_game(players: list, game_id: str, room: str, seed: int) -> int:
    """``players`` (two :class:`Opponent`) make room ``room`` of ``game_id``, sit in seats 0 and 1 and play seeded
    random moves to the end; the number of moves."""
    players[0].run(players[0].client.request({"type": "create_room", "game": game_id, "name": room}))
    for seat, player in enumerate(players):
        player.run(player.client.request({"type": "join", "room": room, "seat": seat}))
    game, rng = GAMES[game_id], random.Random(seed)
    state, ply = game.initial_state(), 0
    while game.outcome(state) is None:
        move = rng.choice(game.legal_moves(state))
        player = players[game.to_move(state)]
        player.run(player.client.request({"type": "move", "room": room, "move": game.format_move(move)}))
        state, ply = game.apply(state, move), ply + 1
    return ply


def settled(page, box: str, item: str) -> None:
    """Wait (10 s at most: a hang, not a speed) until ``item`` lies within ``box``: the page refits and scrolls a
    list a frame after the window changed size; the test's own measure, after, says what is wrong if it never does."""
    try:
        page.wait_for_function("""([box, item]) => {
            const outer = document.querySelector(box)?.getBoundingClientRect();
            const inner = document.querySelector(item)?.getBoundingClientRect();
            return !!outer && !!inner && outer.left - 1 <= inner.left && inner.right <= outer.right + 1
                && outer.top - 1 <= inner.top && inner.bottom <= outer.bottom + 1;
        }""", arg=[box, item], timeout=10_000)
    except PlaywrightTimeout:
        pass


def test_a_finished_room_opened_later_shows_its_last_move_in_the_list(own_server, open_page):  # noqa: F811
    """The move list of a room opened after many moves (here a whole game of Quarto, its moves in words over two
    lines) is scrolled to its end, and stays so when the window changes size: the last move, the one that won, is in
    view, not rows 7 to 11 of 15."""
    port = own_server()
    players = [Opponent(port, "amy-end"), Opponent(port, "ben-end")]
    try:
        ply = play_a_random_game(players, "quarto", "End", seed=7)
        page = open_page("watcher", width=390, height=844)  # opened on a phone, then the window changes size
        login(page, f"http://127.0.0.1:{port}", "watcher-end")
        page.goto(f"http://127.0.0.1:{port}/#/room/End")
        last = page.locator("ol.moves li").last
        expect(last).to_have_attribute("data-seq", str(ply))
        for width, height in ((390, 844), (1280, 800), (1366, 768), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            settled(page, "ol.moves", "ol.moves li:last-child")
            page.locator("ol.moves").scroll_into_view_if_needed()
            box, item = page.locator("ol.moves").bounding_box(), last.bounding_box()
            assert box and item, (box, item)
            assert box["y"] - 1 <= item["y"] and item["y"] + item["height"] <= box["y"] + box["height"] + 1, \
                (width, box, item)
    finally:
        for player in players:
            player.close()


def test_a_replay_keeps_its_current_move_in_view_when_the_window_changes_size(own_server, open_page):  # noqa: F811
    """A replay at its last move, opened on a desktop and then narrowed to a phone (its moves in a strip under the
    board), shows that move in the strip, not moves 1 to 4 of 30."""
    port = own_server()
    players = [Opponent(port, "amy-rep"), Opponent(port, "ben-rep")]
    try:
        ply = play_a_random_game(players, "connect4", "Rep", seed=3)
        page = open_page("replayer", width=1366, height=768)
        page.goto(f"http://127.0.0.1:{port}/#/replay")
        page.locator("table.games a", has_text="Replay").first.click()
        page.locator(".replay-moves button.move").first.wait_for()
        page.keyboard.press("End")  # the last move
        current = page.locator(".replay-moves button.current")
        expect(current).to_have_attribute("data-seq", str(ply))
        for width, height in ((390, 844), (1280, 800), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            settled(page, ".replay-moves", ".replay-moves button.current")
            box, item = page.locator(".replay-moves").bounding_box(), current.bounding_box()
            assert box and item, (box, item)
            inside = (box["x"] - 1 <= item["x"] and item["x"] + item["width"] <= box["x"] + box["width"] + 1
                      and box["y"] - 1 <= item["y"] and item["y"] + item["height"] <= box["y"] + box["height"] + 1)
            assert inside, (width, box, item)
    finally:
        for player in players:
            player.close()
