"""The room, board and replay, third pass, in a real browser (Debian's chromium): the analysis says whose view every
number is from and shows the better move without hovering, with its graph (legend, axes, uncut dots) in view; moves in
the player's convention; refusals over the board, in view; a spinner while a house bot sits down; board colours and
marks that match their words (blue workers, four win rings, no stuck hover, a flippable Amazons board); phone layouts
that keep the board in view; whole rows in move lists; clocks that agree; a bigger Quarto board; a rules page per game.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import threading
from collections.abc import Iterator
from typing import Any
from urllib.request import urlopen

import pytest
from playwright.sync_api import Page, expect

from bots.engine.connect4.book import opening_table
from protocol.games import GAMES
from tests.helpers import login as sdk_login
from tests.sdk_thread import SdkClient
from tests.test_analysis import a_blunder_game
from tests.test_web import browser, open_page, own_server, record_an_amazons_game  # noqa: F401 - fixtures
from tests.test_web_analysis import record_game
from tests.test_web_layout import Opponent, out_of_view
from tests.web_helpers import CHROMIUM, create_room, drawn_box, login, play_a_house_bot, play_by_clicking

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")


class NamedOpponent(Opponent):
    """An SDK client of its own name (``Opponent`` is always bob-layout)."""

    def __init__(self, port: int, name: str) -> None:  # noqa: D107 - as Opponent, with a name
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = self.run(sdk_login(f"ws://127.0.0.1:{port}/ws", name))


@contextlib.contextmanager
def seated(own_server, open_page, game: str, room: str, name: str, coords: str = "algebraic",  # noqa: ANN001, F811
           opponent: str = "bob-layout") -> Iterator[tuple[Page, Opponent]]:
    """A page (1280×800) logged in as ``name`` on a server of the test's own, in seat 0 of a ``game`` room whose seat 1
    ``opponent`` (an SDK client) holds: the page and the opponent, closed after the block."""
    port = own_server()
    bob = NamedOpponent(port, opponent)
    page = open_page(name, width=1280, height=800)
    try:
        login(page, f"http://127.0.0.1:{port}", name, coords)
        bob.open_room(game, room)
        page.goto(f"http://127.0.0.1:{port}/#/room/{room.replace(' ', '%20')}")
        page.get_by_role("button", name="Take this seat").click()
        expect(page.locator(".play .status")).to_contain_text("Your move")
        yield page, bob
    finally:
        bob.close()


def count_pixels(page: Page, png: bytes, colours: tuple[tuple[int, int, int], tuple[int, int, int]]) -> int:
    """How many pixels of a screenshot have a colour in ``colours``: (lowest r, g, b), (highest r, g, b)."""
    return page.evaluate("""async ([data, [low, high]]) => {
        const image = new Image();
        image.src = "data:image/png;base64," + data;
        await image.decode();
        const canvas = document.createElement("canvas");
        canvas.width = image.width;
        canvas.height = image.height;
        const context = canvas.getContext("2d");
        context.drawImage(image, 0, 0);
        const pixels = context.getImageData(0, 0, image.width, image.height).data;
        let count = 0;
        for (let i = 0; i < pixels.length; i += 4) {
          if ([0, 1, 2].every((c) => pixels[i + c] >= low[c] && pixels[i + c] <= high[c])) count++;
        }
        return count;
    }""", [base64.b64encode(png).decode(), colours])


def centre_y(page: Page, square: str, scope: str = ".play") -> float:
    """How far down the page the middle of ``square`` is drawn (on the board inside ``scope``)."""
    box = page.locator(f'{scope} .sq[data-sq="{square}"]').bounding_box()
    assert box is not None
    return box["y"] + box["height"] / 2


# Item 3 (and 9): the analysis


def analysed_replay(own_server, open_page, room: str, viewer: str, coords: str = "") -> tuple[Page, str, int]:  # noqa: ANN001, F811
    """A Connect Four game with a known blunder, played by ann-ROOM and bob-ROOM on a server that analyses finished
    games, and a page (1280×800) on its replay's start, logged in as ``viewer`` in ``coords`` if given: the page,
    the moves and the blunder's ply."""
    moves, blunder_ply = a_blunder_game()
    opening_table()  # made once a run in the run's cache, which the server's worker reads
    port = own_server("--analyse-finished", "--analysis-nodes", "4000000")
    record = record_game(port, room, list(moves))
    page = open_page(viewer, width=1280, height=800)
    if coords:
        login(page, f"http://127.0.0.1:{port}", viewer, coords)
    page.goto(f"http://127.0.0.1:{port}/#/replay/{record}/0")
    return page, moves, blunder_ply


def test_the_analysis_says_whose_view_every_number_is_from(own_server, open_page):  # noqa: F811
    page, moves, blunder_ply = analysed_replay(own_server, open_page, "thirds", "analyst")
    graph = page.locator(".eval-graph svg.eval")
    expect(graph).to_be_visible(timeout=120_000)
    best = page.locator(".best-move")
    # the side to move is named, and so is the side that wins: never a bare "win in 31"
    expect(best).to_have_text(re.compile(r"^ann-thirds \(red\) to move\. Engine's best here: 4 \(ann-thirds \(red\) "
                                         r"wins in \d+, exact\)$"))
    legend = page.locator(".eval-graph .legend")
    expect(legend).to_contain_text("ann-thirds (red)'s expected score")
    expect(legend).to_contain_text("bottom: bob-thirds (yellow) wins")
    expect(page.locator(".eval-graph .y-axis")).to_have_text(re.compile("100%.*50%.*0%"))
    expect(page.locator(".eval-graph .x-axis")).to_contain_text(str(len(moves)))
    for width, height in ((1280, 800), (1366, 768)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(100)  # the layout follows the new size
        assert out_of_view(page, {"graph": ".eval-graph svg.eval", "legend": ".eval-graph .legend"}) == []
    cut = page.evaluate("""(() => {
        const chart = document.querySelector(".eval-graph svg.eval").getBoundingClientRect();
        return [...document.querySelectorAll(".eval .dot")].map((dot) => dot.getBoundingClientRect())
          .filter((dot) => dot.y - 4.5 < chart.top - 0.5 || dot.y + 4.5 > chart.bottom + 0.5
                           || dot.x - 4.5 < chart.left - 0.5 || dot.x + 4.5 > chart.right + 0.5).length;
    })()""")
    assert page.locator(".eval .dot").count() > 0
    assert cut == 0, f"{cut} dots of the graph are cut by its edges"
    # the blunder: what it did and the better move, in words on the page (a touch screen has no hover)
    page.locator(f'button.move[data-seq="{blunder_ply}"]').click()
    verdict = page.locator(".analysis .verdict-line")
    expect(verdict).to_be_visible()
    mover = "ann-thirds (red)" if blunder_ply % 2 else "bob-thirds (yellow)"
    expect(verdict).to_contain_text(f"{blunder_ply}. {moves[blunder_ply - 1]}?? by {mover}, a blunder")
    expect(verdict).to_contain_text(re.compile(r"Better: [1-7] \("))
    for button in page.locator("button.move.label-best").all():  # a best move has no better one
        button.click()
        expect(verdict).to_contain_text("the best move")
        expect(verdict).not_to_contain_text("Better")
    page.locator(f'button.move[data-seq="{blunder_ply}"]').click()
    expect(best).to_contain_text(re.compile(r"to move\. Engine's best here: [1-7] \((ann-thirds \(red\)|bob-thirds "
                                            r"\(yellow\)) wins in \d+"))


def test_moves_and_the_engines_best_move_are_in_the_players_convention(own_server, open_page):  # noqa: F811
    page, moves, _ = analysed_replay(own_server, open_page, "matrix", "mia-matrix", "matrix")
    expect(page.locator(".edge.file").first).to_have_text("0")  # matrix numbers the columns from 0
    first = page.locator('button.move[data-seq="1"]')
    expect(first).to_have_text(str(int(moves[0]) - 1))
    expect(first).to_have_attribute("title", moves[0])  # the notation everyone shares, on hover
    expect(page.locator(".best-move")).to_contain_text("Engine's best here: 3 (", timeout=120_000)  # column 4


def test_amazons_in_cosc322_reads_one_convention_and_the_board_flips(own_server, open_page):  # noqa: F811
    with seated(own_server, open_page, "amazons", "Flip", "cora-cosc", "cosc322") as (page, _):
        # black's queens (this player's) start at the top, as the coordinates have it: black's bar is at the top too
        assert centre_y(page, "d10") < centre_y(page, "d1")
        expect(page.locator(".play .player").nth(0)).to_contain_text("cora-cosc (black) (you)")
        game = GAMES["amazons"]
        state = game.initial_state()
        move = game.legal_moves(state)[0]
        play_by_clicking(page, "amazons", state, move)
        form = game.format_move(move, "cosc322")
        written = "{}-{}/{}".format(*(",".join(map(str, form[key])) for key in ("queen", "to", "arrow")))
        shown = page.locator("ol.moves li .mv").first
        expect(shown).to_have_text(written)
        expect(shown).to_have_attribute("title", game.notation(move))
        wide = page.evaluate("(() => { const ol = document.querySelector('ol.moves'); "
                             "return ol.scrollWidth - ol.clientWidth; })()")
        assert wide <= 0, f"the move list scrolls {wide} px sideways"
        flip = page.get_by_role("button", name="Flip the board")
        flip.click()  # black's queens and bar come to the bottom, and the edges count from the other corner
        expect(flip).to_have_attribute("aria-pressed", "true")
        assert centre_y(page, "d10") > centre_y(page, "d1")
        expect(page.locator(".play .player").nth(1)).to_contain_text("cora-cosc (black) (you)")
        expect(page.locator(".edge.file").first).to_have_text("10")


# Items 4 and 5: notices in view, waiting for a house bot


def test_taking_a_seat_in_a_room_one_only_watches_keeps_the_room(own_server, open_page):  # noqa: F811
    """"Take this seat" left the room before joining it: the room's only member leaving closed it, and the board
    showed "there is no room called 'Den'"."""
    port = own_server()
    page = open_page("sam-sits", width=1280, height=800)
    login(page, f"http://127.0.0.1:{port}", "sam-sits")
    create_room(page, "connect4", "Den", seat="none")  # type: ignore[arg-type]
    expect(page.get_by_role("button", name="Take this seat")).to_have_count(2)
    page.get_by_role("button", name="Take this seat").first.click()
    expect(page.get_by_role("button", name="Take this seat")).to_have_count(0)  # a player takes no other seat
    expect(page.locator(".play .player", has_text="sam-sits")).to_have_count(1)
    expect(page.get_by_text("there is no room")).to_have_count(0)
    rooms = json.loads(urlopen(f"http://127.0.0.1:{port}/api/rooms", timeout=10).read())["rooms"]
    assert [(room["name"], sorted(room["seats"], key=str)) for room in rooms] == [("Den", [None, "sam-sits"])]


def test_a_refusal_shows_over_the_board_in_view(own_server, open_page):  # noqa: F811
    with seated(own_server, open_page, "connect4", "Refusals", "rita-refused") as (page, bob):
        page.locator('.sq[data-sq="d1"]').click()
        expect(page.locator(".play .status")).to_contain_text("bob-layout (yellow) to move")
        page.locator('.sq[data-sq="a1"]').click()
        notice = page.locator(".play .notice")
        expect(notice).to_have_text("It is bob-layout's turn.")
        for width, height in ((1280, 800), (1366, 768), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(100)
            assert out_of_view(page, {"notice": ".play .notice"}) == [], f"at {width}×{height}"
            board, box = drawn_box(page.locator(".play .board")), drawn_box(notice)
            assert board["y"] <= box["y"] <= board["y"] + board["height"], "the notice is over the board"


STATUS_LOG = """
window.statusLog = [];
new MutationObserver(() => {
  const status = document.querySelector(".play .status");
  const bar = document.querySelector(".play .player");
  if (!status || !bar) return;
  const entry = {text: status.textContent, spinner: status.classList.contains("waiting-on"), bar: bar.textContent};
  const last = window.statusLog[window.statusLog.length - 1];
  if (!last || last.text !== entry.text || last.spinner !== entry.spinner || last.bar !== entry.bar) {
    window.statusLog.push(entry);
  }
}).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
"""


def test_a_house_bot_sitting_down_shows_a_spinner_and_its_name(own_server, open_page):  # noqa: F811
    port = own_server("--house-bots", "1")
    page = open_page("hal", width=1280, height=800)
    page.add_init_script(STATUS_LOG)
    login(page, f"http://127.0.0.1:{port}", "hal-waits")
    play_a_house_bot(page, "connect4", "random")
    expect(page.locator(".play .status")).to_contain_text("Your move", timeout=30_000)
    log = page.evaluate("window.statusLog")
    waiting = [entry for entry in log if entry["text"].startswith("Waiting")]
    assert waiting, f"the page never said it was waiting: {log}"
    for entry in waiting:  # every moment before the bot sat down: its name in the words, and the spinner
        assert re.fullmatch(r"Waiting for house-random-\d+ to sit down…", entry["text"]), entry
        assert entry["spinner"], entry
        assert "house-random" in entry["bar"], entry


# Item 6: board colours and marks


def test_santorini_blue_workers_are_blue_against_their_squares(own_server, open_page):  # noqa: F811
    with seated(own_server, open_page, "santorini", "Blue", "sam-blue") as (page, bob):
        page.locator('.sq[data-sq="a1"].target').click()
        page.locator('.sq[data-sq="c3"].target').click()
        expect(page.locator("ol.moves li")).to_have_count(1)
        colours = page.evaluate("""(() => {
            const rgb = (text) => text.match(/\\d+/g).slice(0, 3).map(Number);
            const worker = document.querySelector('.sq[data-sq="a1"] .w0');
            return {worker: rgb(getComputedStyle(worker).fill),
                    squares: [...document.querySelectorAll('.sq[data-sq="b2"], .sq[data-sq="b1"]')]
                      .map((sq) => rgb(getComputedStyle(sq).backgroundColor))};
        })()""")
        red, green, blue = colours["worker"]
        assert blue - max(red, green) >= 80, f"a blue worker is drawn {colours['worker']}"
        for square in colours["squares"]:
            assert contrast(colours["worker"], square) >= 3, f"{colours['worker']} on {square}"  # WCAG AA, 1.4.11


def contrast(one: list[int], two: list[int]) -> float:
    """WCAG's contrast ratio of two sRGB colours."""
    def luminance(rgb: list[int]) -> float:
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(one), luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


RED = ((151, 0, 0), (255, 99, 99))  # a red disc
RING = ((250, 250, 250), (255, 255, 255))  # the white win ring (the holes are #f3f0e8, the last disc's glow yellow)


def test_connect_four_rings_all_four_and_a_drop_stays_off_the_bar(own_server, open_page):  # noqa: F811
    with seated(own_server, open_page, "connect4", "Rings", "cass-rings") as (page, bob):
        page.locator('.sq[data-sq="a1"].target').click()
        page.wait_for_selector(".sq.drop")
        drops = "document.getAnimations().filter((a) => a.animationName === 'drop')"
        page.evaluate(f"{drops}.forEach((a) => {{ a.pause(); a.currentTime = 0; }})")  # the disc held at its highest
        top_bar = page.locator(".play .player").first.screenshot()
        page.evaluate(f"{drops}.forEach((a) => a.finish())")
        assert count_pixels(page, top_bar, RED) == 0, "the dropping disc is drawn over the opponent's bar"
        for seq in range(2, 8):  # bob drops in column 2, the page in column 1 (a): four in a column
            if seq % 2 == 0:
                bob.run(bob.client.request({"type": "move", "room": "Rings", "move": {"column": 2}}))
            else:
                page.locator(f'.sq[data-sq="a{(seq + 1) // 2}"].target').click()
            expect(page.locator("ol.moves li")).to_have_count(seq)
        expect(page.locator(".result .verdict")).to_have_text("You won.")
        rings = {sq: count_pixels(page, page.locator(f'.sq[data-sq="{sq}"]').screenshot(animations="disabled"), RING)
                 for sq in ("a1", "a2", "a3", "a4")}
        assert all(page.locator(f'.sq[data-sq="{sq}"]').get_attribute("class").count("win") for sq in rings)
        assert min(rings.values()) >= 0.5 * max(rings.values()) > 0, f"white ring pixels by square: {rings}"


def test_the_winning_magnetic_cave_brick_keeps_no_hover_look(own_server, open_page):  # noqa: F811
    with seated(own_server, open_page, "magnetic-cave", "Cave", "cleo-cave", opponent="bob-cave") as (page, bob):
        for rank in range(1, 6):
            square = page.locator(f'.sq[data-sq="a{rank}"]')
            square.hover()
            expect(square).to_have_class(re.compile(r"\bhover\b"))
            square.click()
            expect(page.locator("ol.moves li")).to_have_count(2 * rank - 1)
            if rank < 5:
                bob.run(bob.client.request({"type": "move", "room": "Cave", "move": {"square": f"h{rank}"}}))
                expect(page.locator(".play .status")).to_contain_text("Your move")
        expect(page.locator(".result .verdict")).to_have_text("You won.")
        expect(page.locator('.sq[data-sq="a5"]')).not_to_have_class(re.compile(r"\bhover\b"))  # the mouse is on it


# Item 10: phones


def test_a_phone_keeps_the_board_in_view(own_server, open_page):  # noqa: F811
    port = own_server()
    record = record_an_amazons_game(port)
    page = open_page("pia", width=390, height=844)
    page.goto(f"http://127.0.0.1:{port}/#/replay/{record}/0")
    board = page.locator(".replay .board")
    expect(board).to_be_visible()
    for seq in (5, 30, 60):
        page.locator(f'button.move[data-seq="{seq}"]').click()
        expect(page.locator(".where")).to_contain_text(f"Move {seq} of")
        box = board.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844, f"move {seq}: board at {box}"
    # a room opens at its top, wherever the lobby was scrolled to
    bob = NamedOpponent(port, "bob-with-a-long-name-2026")
    try:
        login(page, f"http://127.0.0.1:{port}", "pia-phone")
        bob.open_room("connect4", "Phone")
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        assert page.evaluate("window.scrollY") > 20
        page.evaluate("location.hash = '#/room/Phone'")
        page.get_by_role("button", name="Take this seat").click()
        expect(page.locator(".play .status")).to_contain_text("Your move")
        assert page.evaluate("window.scrollY") == 0
        # "· has left" does not wrap the name bar, and the board does not jump
        page.locator('.sq[data-sq="d1"]').click()
        expect(page.locator(".play .status")).to_contain_text("to move")
        before = (drawn_box(page.locator(".play .player").first), board_y(page))
        bob.run(bob.client.request({"type": "resign", "room": "Phone"}))
        bob.run(bob.client.request({"type": "leave", "room": "Phone"}))
        expect(page.locator(".play .player").first).to_contain_text("· has left")
        after = (drawn_box(page.locator(".play .player").first), board_y(page))
        assert after[0]["height"] == before[0]["height"], f"the bar grew from {before[0]} to {after[0]}"
        assert after[1] == before[1], "the board moved"
    finally:
        bob.close()


def board_y(page: Page) -> float:
    """Where the room's board starts, once drawn (the room's news draws it anew)."""
    return drawn_box(page.locator(".play .board"))["y"]


# Item 12: move lists, clocks, Quarto


def test_a_move_list_scrolled_to_its_end_shows_whole_rows(own_server, open_page):  # noqa: F811
    port = own_server()
    record = record_an_amazons_game(port)
    page = open_page("rowan", width=1280, height=800)
    page.goto(f"http://127.0.0.1:{port}/#/replay/{record}/0")
    page.get_by_role("button", name="Last position").click()
    expect(page.locator("button.move.current")).to_be_visible()
    cut = page.evaluate("""(() => {
        const list = document.querySelector(".replay-moves");
        const box = list.getBoundingClientRect();
        return [...list.children].map((li) => li.getBoundingClientRect())
          .filter((li) => (li.top < box.top - 0.5 && li.bottom > box.top + 0.5)
                          || (li.top < box.bottom - 0.5 && li.bottom > box.bottom + 0.5)).length;
    })()""")
    assert page.evaluate("document.querySelector('.replay-moves').scrollTop") > 0
    assert cut == 0, f"{cut} rows of the move list are cut in half"
    # an Amazons replay turns too
    assert centre_y(page, "d10", ".replay") < centre_y(page, "d1", ".replay")
    page.get_by_role("button", name="Flip the board").click()
    assert centre_y(page, "d10", ".replay") > centre_y(page, "d1", ".replay")


def test_a_clock_under_ten_seconds_never_reads_ten(own_server, open_page):  # noqa: F811
    port = own_server()
    page = open_page("tick")
    page.goto(f"http://127.0.0.1:{port}/#/rules")
    shown = page.evaluate("""(async () => {
        const { formatClock } = await import("/static/js/format.js");
        return [9.96, 9.999, 10.04, 0.04].map((s) => formatClock(s));
    })()""")
    assert shown == ["9.9", "9.9", "0:10", "0.0"]  # tenths (in red) only under ten seconds, and never "10.0"


def test_quarto_has_a_bigger_board_and_tall_pieces_tell_from_short(own_server, open_page):  # noqa: F811
    with seated(own_server, open_page, "quarto", "Big Quarto", "quinn-big") as (page, bob):
        board, piece = drawn_box(page.locator(".play .board")), drawn_box(page.locator('.piece[data-piece="0000"]'))
        assert board["width"] >= 400, f"the board is {board['width']:.0f} px wide"
        assert piece["width"] >= 56, f"a tray piece is {piece['width']:.0f} px wide"
        heights = page.evaluate("""(() => ["0010", "0000"].map((code) => {
            const drawn = document.querySelector(`.piece[data-piece="${code}"] svg`);
            return drawn.getBBox().height;
        }))()""")
        assert heights[0] >= 1.5 * heights[1], f"a tall piece is drawn {heights[0]} high, a short one {heights[1]}"
        assert out_of_view(page, {"board": ".play .board", "tray": ".play .tray", "status": ".play .status"}) == []


# Item 13: the rules


TITLES = {"connect4": "Connect Four", "santorini": "Santorini", "amazons": "Amazons", "magnetic-cave": "Magnetic Cave",
          "quarto": "Quarto"}


def test_each_game_has_a_rules_page_with_a_diagram(own_server, open_page):  # noqa: F811
    assert set(TITLES) == set(GAMES)
    with seated(own_server, open_page, "magnetic-cave", "Newcomers", "nel-new") as (page, _):
        page.get_by_role("link", name="Rules of Magnetic Cave").click()  # reachable from a room
        expect(page.get_by_role("heading", name="How to play Magnetic Cave")).to_be_visible()
        expect(page.locator(".diagram .sq.target")).not_to_have_count(0)  # where a brick may go
        for game, title in TITLES.items():
            page.goto(page.url.split("#")[0] + f"#/rules/{game}")
            expect(page.get_by_role("heading", name=f"How to play {title}")).to_be_visible()
            diagram = page.locator(f".diagram .board-wrap.game-{game}")
            expect(diagram).to_be_visible()
            assert diagram.locator(".sq.filled").count() >= 4, f"{game}: the diagram shows pieces"
            expect(page.locator(".rules-page ol li")).not_to_have_count(0)
        expect(page.locator(".diagram .sq.win")).to_have_count(4)  # Quarto's: four tall pieces in a row
        page.goto(page.url.split("#")[0] + "#/rules/chess")
        expect(page.locator(".rules-page .notice")).to_have_text("There is no game chess: choose one of these.")
        expect(page.locator(".rules-page li a")).to_have_count(len(GAMES))


def test_quarto_moves_read_cleanly_in_every_convention(own_server, open_page):  # noqa: F811
    port = own_server()
    page = open_page("words")
    page.goto(f"http://127.0.0.1:{port}/#/rules")
    said = page.evaluate("""(async () => {
        const { moveText } = await import("/static/js/games/quarto.js");
        return [moveText("c2 1111"), moveText("2,3 1111"), moveText("0000"), moveText("2,3")];
    })()""")
    assert said[0] == "c2, gives dark round tall hollow"
    assert said[1] == "[2,3], gives dark round tall hollow"  # one comma inside the square, one before "gives"
    assert said[2].startswith("gives ") and said[3] == "2,3"


def test_picks_made_survive_a_late_second_answer_of_legal_moves(own_server, open_page):  # noqa: F811
    """Taking the seat that starts a game brings game_start twice (the game's start, and the answer to the state the
    page asked for on joining), so the page asks for the legal moves twice. The second answer, held here until the
    player has picked a queen and its square (as a busy server might send it), keeps the picks: the arrow's squares
    are still offered, and the move is played."""
    port = own_server()
    bob = NamedOpponent(port, "bob-race")
    page = open_page("cora-race", width=1280, height=800)
    answers: list[str] = []  # the legal_moves answers the server sent, in order
    held: list[Any] = []  # (the page's end of the socket, the second answer)

    def route(ws: Any) -> None:
        server = ws.connect_to_server()
        ws.on_message(server.send)

        def from_server(message: str | bytes) -> None:
            if isinstance(message, str) and json.loads(message).get("type") == "legal_moves":
                answers.append(message)
                if len(answers) == 2:
                    held.append((ws, message))
                    return
            ws.send(message)

        server.on_message(from_server)

    page.route_web_socket(re.compile(r"/ws$"), route)
    try:
        login(page, f"http://127.0.0.1:{port}", "cora-race")
        bob.open_room("amazons", "Race")
        page.goto(f"http://127.0.0.1:{port}/#/room/Race")
        page.get_by_role("button", name="Take this seat").click()
        expect(page.locator(".play .status")).to_contain_text("Your move")
        page.locator('.sq[data-sq="a7"].target').click()
        page.locator('.sq[data-sq="b7"].target').click()
        expect(page.locator(".play .status")).to_contain_text("shoot an arrow from b7")
        assert len(held) == 1, f"the page asked for the legal moves {len(answers)} time(s), not twice"
        socket, late = held[0]
        socket.send(late)
        # a chat line after it, on the same socket: once the page shows it, it has taken the late answer too
        socket.send(json.dumps({"type": "chat", "room": "Race", "from": "bob-race", "text": "after the answer"}))
        expect(page.locator(".chat-log")).to_contain_text("after the answer")
        expect(page.locator(".play .status")).to_contain_text("shoot an arrow from b7")
        page.locator('.sq[data-sq="c7"].target').click(timeout=10_000)
        expect(page.locator('button.move[data-seq="1"], ol.moves li .mv').first).to_be_visible()
    finally:
        bob.close()


def test_an_untimed_series_shows_no_clock_and_a_resign_question_ends_with_its_game(own_server, open_page):  # noqa: F811
    """An untimed game showed a red "0.0" on the clock of the side to move, as if its time were out; and a "Yes,
    resign" left standing when the opponent resigned game 1 of a series stood in game 2, where one click resigned
    it."""
    port = own_server()
    base = f"http://127.0.0.1:{port}"
    ann = open_page("ann-untimed", width=1280, height=800)
    bob = open_page("bob-untimed", width=1280, height=800)
    login(ann, base, "ann-untimed")
    login(bob, base, "bob-untimed")
    create_room(ann, "connect4", "Slow Pair", **{"Time control": "untimed", "Games in the series": "2"})
    bob.goto(f"{base}/#/room/Slow%20Pair")
    bob.get_by_role("button", name="Take this seat").first.click()
    expect(ann.locator(".play .player .clock").first).to_be_attached()
    for page in (ann, bob):
        expect(page.get_by_role("button", name="Resign…")).to_be_visible()
        clocks = page.locator(".play .player .clock")
        assert [clocks.nth(i).text_content() for i in range(clocks.count())] == ["", ""]
        expect(page.locator(".play .player .clock.low")).to_have_count(0)
    ann.get_by_role("button", name="Resign…").click()
    expect(ann.get_by_role("button", name="Yes, resign")).to_be_visible()
    bob.get_by_role("button", name="Resign…").click()
    bob.get_by_role("button", name="Yes, resign").click()
    expect(ann.get_by_text("Game 2", exact=False).first).to_be_attached()
    expect(ann.get_by_role("button", name="Resign…")).to_be_visible()  # game 2 asks again
    expect(ann.get_by_role("button", name="Yes, resign")).to_have_count(0)


@pytest.mark.parametrize("game", ["connect4", "quarto", "amazons"])
def test_a_phone_held_sideways_gets_a_board_it_can_play_on(own_server, open_page, game: str):  # noqa: F811
    """At 844×390 (a phone held sideways) the board fitted the height left over by the bars and shrank to a sliver:
    about 60 px in Connect Four, 54 px in Amazons, 34 px in Quarto with 2 px pieces. It keeps a size to play on, and
    the page scrolls."""
    port = own_server("--house-bots", "1")
    page = open_page(f"side-{game}", width=844, height=390)
    login(page, f"http://127.0.0.1:{port}", f"side-{game}")
    play_a_house_bot(page, game, "random")
    board = page.locator(".play .board")
    expect(board).to_be_visible()
    box = drawn_box(board)
    assert box["width"] >= 250, f"a {box['width']:.0f} px board"


def test_a_long_room_name_without_spaces_wraps_on_a_phone(own_server, open_page):  # noqa: F811
    """A 40-character room name with no space ("Saturday_Connect4_...") ran past a phone's screen: its title was cut
    and the room page (409-1034 px) and the lobby's row (835 px) scrolled sideways at 390 px."""
    port = own_server()
    base = f"http://127.0.0.1:{port}"
    page = open_page("long-name", width=390, height=844)
    login(page, base, "long-name")
    name = "Saturday_Connect4_Club_Final_Rounds_1234"
    create_room(page, "connect4", name)
    wide = "document.documentElement.scrollWidth"
    assert page.evaluate(wide) <= 390, f"the room page is {page.evaluate(wide)} px wide"
    page.goto(f"{base}/#/lobby")
    expect(page.locator(f'.room-row[data-room="{name}"]')).to_be_visible()
    assert page.evaluate(wide) <= 390, f"the lobby is {page.evaluate(wide)} px wide"


def test_an_empty_square_picked_for_a_queen_is_called_empty(own_server, open_page):  # noqa: F811
    """Picking an empty square when a queen is asked for said "e5 holds an empty square"."""
    with seated(own_server, open_page, "amazons", "Empty Pick", "erin-empty") as (page, _):
        page.locator('.sq[data-sq="e5"]').click()
        expect(page.locator(".play .notice")).to_have_text("e5 is empty: pick one of your own queens (black).")


def test_a_spectators_chat_and_a_left_series_stay_as_they_were_after_a_new_login(own_server, open_page):  # noqa: F811
    """A spectator who changed coordinates from the menu (a new login) got an empty chat, and the lobby's "Your games"
    went on listing a series its player had left, as a game of theirs."""
    port = own_server()
    base = f"http://127.0.0.1:{port}"
    ann, bob = SdkClient(port, "ann-chat"), SdkClient(port, "bob-chat")
    try:
        ann.request({"type": "create_room", "game": "connect4", "name": "Talk"})
        ann.request({"type": "join", "room": "Talk", "seat": 0})
        bob.request({"type": "join", "room": "Talk", "seat": 1})
        sam = open_page("sam-chat", width=1280, height=800)
        login(sam, base, "sam-chat")
        sam.goto(f"{base}/#/room/Talk")
        ann.request({"type": "move", "room": "Talk", "move": "4"})
        expect(sam.locator("ol.moves li .mv")).to_have_text(["4"])
        ann.request({"type": "chat", "room": "Talk", "text": "good luck"})
        expect(sam.locator(".chat-log")).to_contain_text("good luck")
        sam.locator(".identity summary").click()
        sam.get_by_label("Coordinates").select_option("matrix")
        expect(sam.locator("ol.moves li .mv")).to_have_text(["3"])  # watching again, under the new login
        bob.request({"type": "chat", "room": "Talk", "text": "thanks"})
        expect(sam.locator(".chat-log li")).to_have_count(2)
        expect(sam.locator(".chat-log")).to_contain_text("good luck")

        # sam plays in a series of three and leaves during its first game: the series is not sam's any more
        ann.request({"type": "create_room", "game": "connect4", "name": "Series", "games": 3})
        ann.request({"type": "join", "room": "Series", "seat": 0})
        sam.goto(f"{base}/#/room/Series")
        sam.get_by_role("button", name="Take this seat").first.click()
        sam.get_by_role("button", name="Leave (loses the game)…").click()
        sam.get_by_role("button", name="Stay").click()  # asked first: staying keeps the game
        expect(sam.get_by_role("button", name="Resign…")).to_be_visible()
        sam.get_by_role("button", name="Leave (loses the game)…").click()
        expect(sam.get_by_role("button", name="Yes, leave and lose")).to_be_focused()
        sam.get_by_role("button", name="Yes, leave and lose").click()
        expect(sam).to_have_url(re.compile("#/lobby$"))
        expect(sam.locator("main h1")).to_have_text("Lobby")
        expect(sam.locator(".rooms-section")).to_contain_text("Series")  # the listing has come
        expect(sam.locator(".yours")).not_to_contain_text("Series")
    finally:
        ann.close()
        bob.close()


def test_a_person_playing_a_house_bot_is_warned_before_a_move_left_too_long_loses(own_server, open_page):  # noqa: F811
    """A person who left a move against a house bot for 3 minutes lost the game with nothing on the page saying such a
    limit existed: the room says it, and the last minute counts down under the status."""
    port = own_server("--house-bots", "1", "--house-idle", "30")
    page = open_page("ida-idle", width=1280, height=800)
    login(page, f"http://127.0.0.1:{port}", "ida-idle")
    card = page.locator("form", has=page.get_by_role("heading", name="Play a bot"))
    card.get_by_label("Time").select_option(label="5 min + 3 s")
    play_a_house_bot(page, "connect4", "random", first="0")
    expect(page.locator(".room .meta")).to_contain_text("a move left 30 s loses")
    expect(page.get_by_role("button", name="Resign…")).to_be_visible()
    expect(page.get_by_role("button", name="Offer a draw")).to_have_count(0)  # a house bot never answers one
    warning = page.locator(".play .idle-warning")
    expect(warning).to_contain_text(re.compile(r"Move within [0-9]+ s, or you lose the game"))
    page.locator('.sq[data-sq="d1"]').click()
    expect(page.locator("ol.moves li .mv")).to_have_count(2, timeout=20_000)  # the bot's reply: the next turn's
    expect(warning).to_contain_text("or you lose the game")
    # while the other side moves, nothing is said (the page's own function, on the model as it is then)
    said = page.evaluate("""async () => {
        const { idleWarning } = await import("/static/js/room-status.js");
        const waiting = { idle: 30, idleUntil: performance.now() + 5000, myTurn: false, paused: false, seat: 0,
                          clockNow: () => [100, 100] };
        return [idleWarning(waiting, performance.now()), idleWarning({ ...waiting, myTurn: true }, performance.now())];
    }""")
    assert said == ["", "Move within 5 s, or you lose the game."], said


def test_a_name_kept_for_its_away_player_is_explained_to_a_person_in_a_persons_words(own_server, open_page):  # noqa: F811
    """Logging in from another browser under an unclaimed name whose seat waited for its page gave the sentence meant
    for bot operators ("a bot restarted within its room's grace period ... start the bot with --secret S")."""
    port = own_server()
    base = f"http://127.0.0.1:{port}"
    bob = SdkClient(port, "bob-kept")
    try:
        bob.request({"type": "create_room", "game": "connect4", "name": "Kept"})
        bob.request({"type": "join", "room": "Kept", "seat": 1})
        first = open_page("ann-kept-1", width=1280, height=800)
        login(first, base, "ann-kept")
        first.goto(f"{base}/#/room/Kept")
        first.get_by_role("button", name="Take this seat").first.click()
        expect(first.get_by_role("button", name="Resign…")).to_be_visible()
        first.close()  # the page goes away mid-game: its seat waits for it
        second = open_page("ann-kept-2", width=1280, height=800)
        second.goto(f"{base}/#/lobby")
        second.get_by_label("Name").fill("ann-kept")
        second.get_by_role("button", name="Enter").click()
        said = second.locator(".login .form-status")
        expect(said).to_contain_text(re.compile(r"ann-kept is kept for the browser or program that was using it a "
                                                r"moment ago: its seat in a game waits [0-9]+ s for it to come back"))
        assert "--secret" not in said.inner_text() and "bot restarted" not in said.inner_text()
    finally:
        bob.close()


def test_a_spectators_clocks_stop_while_the_server_cannot_be_reached(browser, tmp_path):  # noqa: F811
    """The server dies mid-game: the page says it cannot reach it, and the clock of the side to move went on counting
    down (1:57, 1:51, ...) for a game the restarted server paused at 2:00. While the connection is lost the clocks
    stop where they were. (A page of its own: its reconnection attempts are console errors, which open_page fails.)"""
    import signal

    from tests.conftest import free_port
    from tests.helpers import start_server, stop

    port = free_port()
    proc = start_server(tmp_path / "clocks.db", port)
    bob = ann = None
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        bob, ann = Opponent(port, "bob-down"), Opponent(port, "ann-down")
        bob.run(bob.client.request({"type": "create_room", "game": "connect4", "name": "Down",
                                    "time_control": {"initial": 120}}))
        bob.run(bob.client.request({"type": "join", "room": "Down", "seat": 1}))
        ann.run(ann.client.request({"type": "join", "room": "Down", "seat": 0}))
        page = context.new_page()
        login(page, f"http://127.0.0.1:{port}", "fan-down")
        page.goto(f"http://127.0.0.1:{port}/#/room/Down")
        running = page.locator(".play .clock.running")
        expect(running).to_have_count(1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        expect(page.get_by_text("Trying again in")).to_be_visible(timeout=30_000)
        page.wait_for_timeout(600)  # a tick drawn just before the clocks stopped may still be the one shown
        shown = running.inner_text()
        page.wait_for_timeout(2500)  # a running clock shows a second less each second
        assert running.inner_text() == shown, "the clock ran on while the server could not be reached"
    finally:
        context.close()
        for client in (ann, bob):
            if client is not None:
                client.close()
        stop(proc)
