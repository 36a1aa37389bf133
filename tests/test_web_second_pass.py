"""The page's second pass, in a real browser (Debian's chromium): the finished game keeps its players' names after one
has left, no tab claims a room page, the tournament list follows events as they are created, a deep link to a replay
move on a phone leaves the board in view, a refused chat line is said beside the chat box, an empty filter says so,
and a player waiting for the other side sees that it is thinking.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.test_web import browser, open_page, own_server  # noqa: F401 - the browser tests' fixtures
from tests.test_web_analysis import record_game
from tests.test_web_layout import Opponent
from tests.web_helpers import CHROMIUM, login

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")

SECRET = "organiser-secret"


def seated_against_bob(start_server, new_page, name: str, room: str):  # noqa: ANN001, ANN201 - fixtures; page, bob
    """A page logged in as ``name`` on a server of the test's own, in seat 0 of a Connect Four room in which bob (an
    SDK client) sits in seat 1: the page and bob."""
    port = start_server()
    page = new_page(name)
    login(page, f"http://127.0.0.1:{port}", name)
    bob = Opponent(port)
    bob.open_room("connect4", room)
    page.goto(f"http://127.0.0.1:{port}/#/room/{room}")
    page.get_by_role("button", name="Take this seat").click()
    expect(page.locator(".play .status")).to_contain_text("Your move")
    return page, bob


def test_names_stay_after_a_player_leaves_and_no_tab_claims_the_room(own_server, open_page):  # noqa: F811
    page, bob = seated_against_bob(own_server, open_page, "ann-stays", "Leavers")
    try:
        expect(page.locator("#nav a[aria-current]")).to_have_count(0)  # a room is no tab's page
        page.locator('.sq[data-sq="d1"]').click()  # ann drops in column 4: now bob is to move
        expect(page.locator(".play .status")).to_have_class("status waiting-on")  # the spinner while bob thinks
        bob.run(bob.client.request({"type": "resign", "room": "Leavers"}))
        bob.run(bob.client.request({"type": "leave", "room": "Leavers"}))
        top = page.locator(".play .player").first
        expect(top).to_contain_text("bob-layout")
        expect(top).to_contain_text("· has left")
        expect(page.locator(".play .status")).to_contain_text("ann-stays won")
        expect(page.locator(".play .status")).not_to_contain_text("Seat")
        expect(page.locator(".play .status")).not_to_have_class("status waiting-on")
    finally:
        bob.close()


def test_a_refused_chat_line_is_said_beside_the_chat_box(own_server, open_page):  # noqa: F811
    page, bob = seated_against_bob(own_server, open_page, "ann-talks", "Talk")
    try:
        box = page.get_by_label("Chat message")
        box.evaluate("e => e.removeAttribute('maxlength')")  # as a pasted essay would arrive from another client
        box.fill("x" * 600)
        page.get_by_role("button", name="Send").click()
        notice = page.locator(".chat-form .chat-notice")
        expect(notice).to_contain_text("chat text must be 1 to 500")
        expect(page.locator(".play .notice")).to_have_text("")  # not under the board
        box.fill("hello")
        expect(notice).to_have_text("")
    finally:
        bob.close()


def test_the_tournament_list_is_live(own_server, open_page):  # noqa: F811
    port = own_server("--organiser-secret", SECRET)
    page = open_page("fan")
    page.goto(f"http://127.0.0.1:{port}/#/tournaments")
    expect(page.locator("main")).to_contain_text("No tournaments.")
    organiser = Opponent(port)
    try:
        from tests.helpers import login as sdk_login

        org = organiser.run(sdk_login(f"ws://127.0.0.1:{port}/ws", "org", organiser=SECRET))
        organiser.run(org.request({"type": "tournament_create", "name": "Live Cup", "game": "connect4",
                                   "format": "round-robin", "players": ["p1", "p2", "p3"]}))
        expect(page.locator(".tournament-list")).to_contain_text("Live Cup", timeout=20_000)  # no reload
        organiser.run(org.close())
    finally:
        organiser.close()


def test_a_deep_link_on_a_phone_keeps_the_board_in_view_and_empty_filters_say_so(own_server, open_page):  # noqa: F811
    port = own_server()
    moves = "4 7 5 7 7 4 4 5 7 5 2 2 7 5 4 6 5 7 2 1 4 3 2 1 5 1 6 4 6 2 1 1 1 2 3".split()  # 35 moves to a win
    record = record_game(port, "longish", moves)
    page = open_page("phone", width=390, height=844)
    page.goto(f"http://127.0.0.1:{port}/#/replay/{record}/17")
    expect(page.locator(".where")).to_contain_text("Move 17 of")
    page.wait_for_timeout(300)
    assert page.evaluate("window.scrollY") == 0
    box = page.locator(".board").bounding_box()
    assert box is not None and box["y"] >= 0
    page.goto(f"http://127.0.0.1:{port}/#/replay?player=nobody-at-all")
    expect(page.locator(".replays .empty")).to_have_text("No recorded games match these filters.")
