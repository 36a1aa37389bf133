"""The lobby, tournaments, leaderboard and player pages, third pass (issue 43, items 2, 4, 7, 8, 10, 12), in a real
browser (Debian's chromium) against a real server: live games first, who seeks, finished games with both names and
their results, your games with results; a refusal beside its button and in view; words instead of seats and bit
codes; a coordinate choice a newcomer need not make; ties announced as ties; 0 in empty forfeit and bye cells;
entrants linked; an estimate that counts down; one leaderboard link on a player's page, a rating band that leaves
room for the line, dates under the chart; a link to your own page; a lobby that uses a desktop's width; a nav on one
line on a phone. Set PLYHALL_SHOTS=DIR to keep screenshots of each page at each size there.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.sdk_thread import SdkClient
from tests.test_web import browser, open_page, own_server  # noqa: F401 - the browser tests' fixtures
from tests.test_web_layout import out_of_view
from tests.test_web_leaderboard import play_rated_game
from tests.web_helpers import CHROMIUM, login

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")

SIZES = ((1280, 800), (1366, 768), (390, 844))
SHOTS = os.environ.get("PLYHALL_SHOTS", "")


def shot(page: Page, name: str) -> None:
    """Keep a screenshot of the whole page in $PLYHALL_SHOTS (when set), named by ``name`` and the viewport."""
    if not SHOTS:
        return
    size = page.viewport_size or {"width": 0, "height": 0}
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(SHOTS) / f"{name}-{size['width']}x{size['height']}.png"), full_page=True)


def wrapped(page: Page, selector: str) -> list[str]:
    """The texts of the elements matching ``selector`` whose text runs over more than one line."""
    return page.locator(selector).evaluate_all("""els => els.filter((el) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        return tops.size > 1;
    }).map((el) => el.textContent)""")


def nav_on_one_line(page: Page) -> bool:
    """Every link of the nav on one line and none of them cut off."""
    return page.evaluate("""(() => {
        const nav = document.querySelector("#nav");
        const tops = new Set([...nav.querySelectorAll("a")].map((a) => Math.round(a.getBoundingClientRect().top)));
        return tops.size === 1 && nav.scrollWidth <= nav.clientWidth + 1;
    })()""")


def render(page: Page, module: str, function: str, data: dict) -> None:
    """Show in the page's main area what ``function`` of the page's own ``module`` renders from ``data`` (an answer of
    the server's API): the page's code at work on an answer too slow to produce for real (a finished tournament)."""
    page.evaluate("""async ([module, fn, data]) => {
        const mod = await import(`/static/js/${module}`);
        document.querySelector("#main").replaceChildren(mod[fn](data));
    }""", [module, function, data])


# Item 7: live games first, who seeks, finished games with both names and results; the lobby's layout


def test_the_lobby_shows_live_games_first_who_seeks_and_finished_games_with_their_results(own_server, open_page):  # noqa: F811
    port = own_server()
    base = f"http://127.0.0.1:{port}"
    ann, bob = SdkClient(port, "ann", secret="ann-pw"), SdkClient(port, "bob")
    carl, dan, erin, fay = (SdkClient(port, name) for name in ("carl", "dan", "erin", "fay"))
    try:
        # a finished game whose loser (a bot, say) left its seat, then a game being played, then a room that waits
        ann.request({"type": "create_room", "game": "connect4", "name": "Done Room"})
        ann.request({"type": "join", "room": "Done Room", "seat": 0})
        bob.request({"type": "join", "room": "Done Room", "seat": 1})
        bob.request({"type": "resign", "room": "Done Room"})
        bob.request({"type": "leave", "room": "Done Room"})
        carl.request({"type": "create_room", "game": "quarto", "name": "Aaa Live Room"})
        carl.request({"type": "join", "room": "Aaa Live Room", "seat": 0})
        dan.request({"type": "join", "room": "Aaa Live Room", "seat": 1})
        erin.request({"type": "create_room", "game": "amazons", "name": "Open Room"})
        erin.request({"type": "join", "room": "Open Room", "seat": 0})
        fay.request({"type": "seek", "game": "santorini", "time_control": {"per_move": 30}})
        ann.close()  # the page takes ann's claimed name (its seat in Done Room too)
        page = open_page("ann", width=1280, height=800)
        login(page, base, "ann", secret="ann-pw")
        rows = page.locator(".room-row")
        expect(rows).to_have_count(3)
        # live first (not by name: "Aaa Live Room" would sort first by name anyway, so the finished room must be last)
        assert rows.evaluate_all("rs => rs.map((r) => r.dataset.room)") == ["Aaa Live Room", "Open Room", "Done Room"]
        expect(page.locator(".room-group")).to_have_text(["Live now", "Waiting for players", "Finished"])
        done = page.locator('.room-row[data-room="Done Room"] .room-players')
        expect(done).to_contain_text("ann vs bob")  # not "ann vs open seat"
        expect(done).to_contain_text("ann won: bob resigned")
        expect(page.locator('.room-row[data-room="Open Room"] .room-players')).to_have_text("erin vs open seat")
        # your games: the finished one with its result
        expect(page.locator(".yours .your-finished")).to_contain_text("Done Room")
        expect(page.locator(".yours .your-finished")).to_contain_text("ann won")
        # who seeks: fay, for Santorini, 30 s a move, with a button that answers the seek
        seek = page.locator('.seek-row[data-name="fay"]')
        expect(seek).to_contain_text("Santorini · 30 s a move")
        # a link to each game's rules
        expect(page.locator(".rules-all a")).to_have_count(5)
        seek_card = page.locator("form", has=page.get_by_role("heading", name="Play someone"))
        expect(seek_card.locator("a.rules-link")).to_have_attribute("href", re.compile(r"^#/rules/"))
        # the layout: at a desktop's width the lists sit beside the cards, not under them; on a phone, a one-line nav
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(100)
            if width >= 1280:
                cards = page.locator(".lobby-grid .cards").bounding_box()
                lists = page.locator(".lobby-lists").bounding_box()
                assert cards and lists
                beside = lists["x"] >= cards["x"] + cards["width"] and abs(lists["y"] - cards["y"]) < 5
                assert beside, (width, cards, lists)
                assert cards["width"] + lists["width"] > 0.8 * width, (width, cards, lists)
            else:  # one column: your games on top, in view
                assert out_of_view(page, {"your games": ".yours h2"}) == []
            assert nav_on_one_line(page), f"the nav wraps or is cut at {width}×{height}"
            shot(page, "lobby")
        page.set_viewport_size({"width": 1280, "height": 800})
        seek.get_by_role("button", name="Play fay at Santorini").click()  # answering the seek pairs the two at once
        expect(page.locator("h1")).not_to_have_text("Lobby")
        expect(page.locator(".play .status")).to_be_visible()
    finally:
        for client in (bob, carl, dan, erin, fay):
            client.close()


def test_your_games_put_the_one_to_move_first_and_keep_only_the_latest_results(own_server, open_page):  # noqa: F811
    port = own_server()
    pat, opp = SdkClient(port, "pat", secret="pat-pw"), SdkClient(port, "opp")
    try:
        for n in range(1, 8):  # seven finished games: pat wins the odd ones, loses the even ones
            room = f"Old {n}"
            opp.request({"type": "create_room", "game": "connect4", "name": room})
            opp.request({"type": "join", "room": room, "seat": 1})
            pat.request({"type": "join", "room": room, "seat": 0})
            (opp if n % 2 else pat).request({"type": "resign", "room": room})
            pat.request({"type": "leave", "room": room})
        opp.request({"type": "create_room", "game": "connect4", "name": "Now"})
        opp.request({"type": "join", "room": "Now", "seat": 1})
        pat.request({"type": "join", "room": "Now", "seat": 0})  # pat moves first
        pat.close()
        page = open_page("pat", width=1280, height=800)
        login(page, f"http://127.0.0.1:{port}", "pat", secret="pat-pw")
        live = page.locator(".yours .your-live li")
        expect(live).to_have_count(1)
        expect(live.first).to_contain_text("Now")
        expect(live.first).to_contain_text("your move")
        results = page.locator(".yours .your-finished li")
        expect(results).to_have_count(5)  # the five latest, newest first, each with its result
        assert results.evaluate_all("ls => ls.map((l) => l.dataset.room)") == [f"Old {n}" for n in (7, 6, 5, 4, 3)]
        expect(results.first).to_contain_text("pat won: opp resigned")
        expect(results.nth(1)).to_contain_text("opp won: pat resigned")
    finally:
        opp.close()


# Item 4 (the lobby's part): a refusal beside the button that caused it, in view


def test_a_house_bot_refusal_shows_beside_its_button_in_view_on_a_phone(own_server, open_page):  # noqa: F811
    port = own_server("--house-bots", "1", "--max-rooms", "1")
    filler = SdkClient(port, "filler")
    try:
        filler.request({"type": "create_room", "game": "connect4", "name": "Full"})  # the server's one room
        page = open_page("zoe", width=390, height=844)
        login(page, f"http://127.0.0.1:{port}", "zoe")
        card = page.locator("form", has=page.get_by_role("heading", name="Play a bot"))
        button = card.get_by_role("button", name="Play the bot")
        button.evaluate("b => b.scrollIntoView({ block: 'end' })")  # the button at the bottom edge of the screen
        button.click()
        status = card.locator(".form-status")
        expect(status).to_contain_text("limit")
        box, near = status.bounding_box(), button.bounding_box()
        assert box and near
        assert 0 <= box["y"] and box["y"] + box["height"] <= 845, f"the refusal is out of view: {box}"  # 1 px: rounding
        assert box["y"] - (near["y"] + near["height"]) < 40, "the refusal is not beside its button"
        assert len(re.findall("try again", status.inner_text(), re.I)) <= 1
    finally:
        filler.close()


# Item 8: words instead of seats, bit codes and conventions


def test_newcomers_meet_words_not_seats_bit_codes_or_a_convention_to_choose(own_server, open_page):  # noqa: F811
    port = own_server()
    page = open_page("newcomer", width=1280, height=800)
    page.goto(f"http://127.0.0.1:{port}/#/lobby")
    expect(page.get_by_label("Name")).to_be_visible()
    expect(page.get_by_label("Coordinates")).to_be_hidden()  # under a "Settings" disclosure, algebraic by default
    expect(page.locator("details.settings summary")).to_contain_text("Settings")
    page.get_by_label("Name").fill("newcomer")
    page.get_by_role("button", name="Enter").click()
    expect(page.get_by_role("heading", name="Lobby")).to_be_visible()
    stored = page.evaluate("JSON.parse(localStorage.getItem('plyhall.identity') || '{}').coords || 'algebraic'")
    assert stored == "algebraic"
    page.locator("details.create-card summary").click()
    form = page.locator("form.create")
    first, seat = form.get_by_label("Moves first", exact=True), form.get_by_label("Your seat")
    form.get_by_label("Game", exact=True).select_option("connect4")
    assert first.locator("option").all_text_contents() == ["you", "your opponent"]
    assert seat.locator("option").all_text_contents() == ["Red", "Yellow", "none: I only watch"]
    form.get_by_label("Game", exact=True).select_option("amazons")
    seat.select_option("1")
    assert first.locator("option").all_text_contents() == ["your opponent", "you"]
    assert seat.locator("option").all_text_contents()[:2] == ["Black", "White"]
    seat.select_option("none")
    assert first.locator("option").all_text_contents() == ["Black", "White"]
    assert "seat 0" not in form.inner_text() and "seat 1" not in form.inner_text()
    # Quarto's pieces in words, never their bit codes
    form.get_by_label("Game", exact=True).select_option("quarto")
    seat.select_option("0")
    form.get_by_label("Room name (optional)").fill("Words Room")
    form.get_by_role("button", name="Create the room").click()
    expect(page.get_by_role("heading", name="Words Room")).to_be_visible()
    tray = page.locator(".tray .piece")
    expect(tray).to_have_count(16)
    labels = tray.evaluate_all("ps => ps.map((p) => [p.title, p.getAttribute('aria-label'), p.textContent].join(' '))")
    assert not [text for text in labels if re.search(r"\b[01]{4}\b", text)], labels[:3]
    assert any("dark round tall hollow" in text for text in labels)


# Items 2 and 12 (tournament page): a tie announced as a tie; 0 for no forfeits and byes; entrants linked; the estimate

TIED = {
    "id": "t1", "name": "Spring Cup", "game": "connect4", "format": "round robin", "status": "finished",
    "entrants": ["house-novice-11", "house-novice-12", "ann"],
    "progress": {"done": 6, "total": 6, "fraction": 1.0, "seconds_left": None},
    "standings": {"tiebreak": "sonneborn-berger", "rows": [
        {"rank": 1, "name": "house-novice-11", "points": 3, "played": 4, "games": 4, "wins": 3, "draws": 0, "losses": 1,
         "forfeit_wins": 0, "forfeit_losses": 0, "byes": 0, "tiebreak": 3, "elo": 0, "elo_margin": 0},
        {"rank": 1, "name": "house-novice-12", "points": 3, "played": 4, "games": 4, "wins": 3, "draws": 0, "losses": 1,
         "forfeit_wins": 0, "forfeit_losses": 0, "byes": 0, "tiebreak": 3, "elo": 0, "elo_margin": 0},
        {"rank": 3, "name": "ann", "points": 0, "played": 4, "games": 4, "wins": 0, "draws": 0, "losses": 4,
         "forfeit_wins": 0, "forfeit_losses": 1, "byes": 0, "tiebreak": 0, "elo": -300, "elo_margin": 200}],
        "crosstable": {"house-novice-11": {"house-novice-12": ["1", "0"], "ann": ["1", "1"]},
                       "house-novice-12": {"house-novice-11": ["0", "1"], "ann": ["1", "1"]},
                       "ann": {"house-novice-11": ["0", "0"], "house-novice-12": ["0", "0"]}}},
    "schedule": [{"number": 1, "round": 1, "white": "house-novice-11", "black": "ann", "opening": "",
                  "status": "finished", "result": "house-novice-11 won", "record": "r1"}],
}


def test_a_tournament_page_announces_a_tie_links_its_entrants_and_shows_zeros(own_server, open_page):  # noqa: F811
    port = own_server()
    page = open_page("fan", width=1280, height=800)
    page.goto(f"http://127.0.0.1:{port}/#/tournaments")
    expect(page.get_by_role("heading", name="Tournaments")).to_be_visible()
    render(page, "tournaments.js", "renderTournament", TIED)
    winner = page.locator(".tournament .winner")
    expect(winner).to_contain_text("tie for first place: house-novice-11 and house-novice-12")
    expect(winner).not_to_contain_text("wins")
    row = page.locator(".standings tbody tr").first
    headings = page.locator(".standings thead th").all_text_contents()
    cells = row.locator("th, td").all_text_contents()
    assert cells[headings.index("Forfeits")] == "0" and cells[headings.index("Byes")] == "0"
    for table in (".standings", ".crosstable", ".schedule"):
        expect(page.locator(f'{table} a[href="#/players/house-novice-11"]').first).to_be_visible()
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        assert nav_on_one_line(page), f"the nav wraps at {width}×{height}"
        shot(page, "tournament")
    # the estimate says seconds under a minute and a half, and counts down instead of sticking at "about 1 min left"
    texts = page.evaluate("""async () => {
        const { progressText } = await import("/static/js/tournaments.js");
        const progress = { done: 5, total: 6, seconds_left: 50 };
        const later = { ...progress, seconds_left: 600 };
        return [progressText(progress), progressText(progress, 45), progressText(later, 60)];
    }""")
    assert texts == ["5 of 6 games played · about 50 s left", "5 of 6 games played · any moment now",
                     "5 of 6 games played · about 9 min left"]


# Item 12 (leaderboard and player page; replays table): one leaderboard link, a band that leaves the line room, dates,
# your own page in the nav, winners highlighted and no wrapped dates or names


def test_the_player_page_leaderboard_and_replays_read_well_at_every_size(own_server, open_page):  # noqa: F811
    port = own_server()
    base = f"http://127.0.0.1:{port}"
    for seed in range(3):
        play_rated_game(port, "ann-lb", "bob-lb", seed)
    page = open_page("ann-lb", width=1280, height=800)
    login(page, base, "ann-lb", secret="ann-lb-secret")
    mine = page.locator("#nav a", has_text="My page")
    expect(mine).to_have_attribute("href", "#/players/ann-lb")
    mine.click()
    expect(page.get_by_role("heading", name="ann-lb", exact=True)).to_be_visible()
    expect(mine).to_have_attribute("aria-current", "page")
    expect(page.locator("svg.rating-chart")).to_be_visible()
    assert page.locator("#main a", has_text=re.compile("leaderboard", re.I)).count() == 1
    # every rating is provisional after three games: no ± band swallows the chart; the dates are under it
    chart = page.locator("svg.rating-chart").bounding_box()
    bands = page.locator(".rating-chart .band")
    assert chart
    for i in range(bands.count()):
        band = bands.nth(i).bounding_box()
        assert band and band["height"] < 0.6 * chart["height"], (band, chart)
    dates = page.locator(".rating-chart text.date")
    expect(dates.first).to_have_text(re.compile(r"[A-Z][a-z]{2}"))
    expect(page.locator(".recent-games .won").first).to_be_visible()  # who won each game, in bold
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(100)
        assert nav_on_one_line(page), f"the nav wraps at {width}×{height}"
        assert wrapped(page, ".recent-games td.date, .recent-games td.players") == []
        cut = page.evaluate("""(() => {
            const chart = document.querySelector("svg.rating-chart").getBoundingClientRect();
            return [...document.querySelectorAll(".rating-chart text")].map((t) => t.getBoundingClientRect())
              .filter((t) => t.left < chart.left - 0.5 || t.right > chart.right + 0.5).length;
        })()""")
        assert cut == 0, f"{cut} labels of the rating chart are cut by its edges at {width}×{height}"
        shot(page, "player")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(base + "/#/leaderboard")
    expect(page.locator("table.leaderboard tbody tr")).to_have_count(2)
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(100)
        assert nav_on_one_line(page), f"the nav wraps at {width}×{height}"
        shot(page, "leaderboard")
    page.goto(base + "/#/replay")
    expect(page.locator("table.games tbody tr")).to_have_count(3)
    for width, height in SIZES[:2]:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(100)
        assert wrapped(page, "table.games td.date, table.games td.players") == []
        shot(page, "replays")
    expect(page.locator("table.games td.players .won").first).to_be_visible()


def test_a_gauntlet_stopped_by_its_sprt_says_so_numbers_openings_from_1_and_counts_forfeits(own_server, open_page):  # noqa: F811
    """The event page showed "36 of 36 games played" for a gauntlet its SPRT had stopped after 36 of 200, with no
    word of the test; the schedule hid the first opening and numbered the others from 0; the list said "12 of 12
    games played" of an event with 6 forfeits."""
    from server.tournament.director import Director, define
    from tests.test_sprt import play_out

    event = Director(define({"game": "connect4", "format": "gauntlet", "name": "Test", "cycles": 100,
                             "sprt": {"elo0": 0, "elo1": 20}, "openings": {"text": "4 4\n3 4\n", "plies": 2}},
                            ["alpha", "beta"], {}, 0.0))
    event.control("start")
    played = play_out(event, lambda game: 0 if game.white == "alpha" else None)
    view = event.to_json(2.0)
    assert view["progress"]["total"] == played < 200
    port = own_server()
    page = open_page("fan-sprt", width=1280, height=800)
    page.goto(f"http://127.0.0.1:{port}/#/tournaments")
    expect(page.get_by_role("heading", name="Tournaments")).to_be_visible()
    render(page, "tournaments.js", "renderTournament", view)
    expect(page.locator(".tournament .stopped-early")).to_have_text(f"Stopped early: SPRT accepted H1 after {played} "
                                                                    "games.")
    expect(page.locator(".tournament .sprt")).to_contain_text("alpha against the others: SPRT (normalized Elo, "
                                                               "pentanomial")
    expect(page.locator(".tournament .sprt")).to_contain_text("H1 was accepted")
    openings = page.locator(".schedule tbody tr").evaluate_all(
        "rows => rows.slice(0, 4).map((row) => row.children[4].textContent)")
    assert openings == ["1", "1", "2", "2"], openings  # a colour-swapped pair a opening, the first one numbered 1
    listed = page.evaluate("""async (progress) => {
        const { progressText } = await import("/static/js/tournaments.js");
        return progressText(progress);
    }""", {**view["progress"], "done": 12, "total": 12, "forfeits": 6})
    assert listed == "12 of 12 games done: 6 played, 6 forfeited"
    summary = event.summary()["progress"]
    assert summary["forfeits"] == 0 and summary["done"] == played  # (the list's answer carries the count)


def test_an_empty_lobby_points_to_the_finished_games(own_server, open_page):  # noqa: F811
    """After 30 finished games the lobby said "No rooms yet: create one, or find an opponent.", as if nothing had been
    played: a room closes once its players leave, and its games are under Replays."""
    port = own_server()
    page = open_page("newbie", width=1280, height=800)
    login(page, f"http://127.0.0.1:{port}", "newbie")
    empty = page.locator(".rooms-section .empty")
    expect(empty).to_contain_text("No open rooms")
    empty.get_by_role("link", name="Replays").click()
    expect(page.locator("main h1")).to_have_text("Recorded games")


@contextlib.contextmanager
def room_of(port: int, game: str, room: str, first: str, second: str, seated: bool) -> Iterator[list[SdkClient]]:
    """``first`` opens ``room`` of ``game`` in seat 0; ``second`` sits in seat 1 (``seated``) or not yet: both
    clients, closed after the block."""
    clients = [SdkClient(port, first), SdkClient(port, second)]
    try:
        clients[0].request({"type": "create_room", "game": game, "name": room})
        clients[0].request({"type": "join", "room": room, "seat": 0})
        if seated:
            clients[1].request({"type": "join", "room": room, "seat": 1})
        yield clients
    finally:
        for client in clients:
            client.close()


def test_a_focused_room_row_keeps_the_focus_when_the_list_changes(own_server, open_page):  # noqa: F811
    """A keyboard user on a room's Watch link lost the focus (to the page itself, where Enter does nothing) whenever
    the list was made again: somebody came to watch, a game moved on. The focus stays on that link."""
    port = own_server()
    with room_of(port, "connect4", "Focus", "bob-focus", "sue-focus", seated=False) as (_, sue):
        page = open_page("keys", width=1280, height=800)
        login(page, f"http://127.0.0.1:{port}", "keys")
        row = page.locator('li.room-row[data-room="Focus"]')
        row.get_by_role("link", name="Watch").focus()
        sue.request({"type": "join", "room": "Focus", "role": "spectator"})
        expect(row).to_contain_text("1 watching")
        assert page.evaluate("() => [document.activeElement.textContent, "
                             "document.activeElement.closest('li')?.dataset.room]") == ["Watch", "Focus"]
        page.keyboard.press("Enter")
        expect(page.locator("main h1")).to_have_text("Focus")


def test_a_screen_reader_hears_each_move_another_player_makes(own_server, open_page):  # noqa: F811
    """A spectator with a screen reader heard only "bob (red) to move.": the move just played changed the board and
    the move list without a word. Each move is said (a live region nobody sees), in the watcher's convention."""
    port = own_server()
    with room_of(port, "amazons", "Said", "ann-said", "bob-said", seated=True) as (ann, _):
        page = open_page("hears", width=1280, height=800)
        login(page, f"http://127.0.0.1:{port}", "hears", coords="cosc322")
        page.goto(f"http://127.0.0.1:{port}/#/room/Said")
        said = page.locator(".play .said-move")
        expect(page.locator(".play .status")).to_contain_text("to move")
        expect(said).to_have_text("")  # nothing was played since the page opened
        ann.request({"type": "move", "room": "Said", "move": "d10-d7/g7"})
        expect(said).to_have_text("ann-said played 10,4-7,4/7,7")  # as the move list writes it
        assert said.get_attribute("aria-live") == "polite"
        assert said.evaluate("e => e.getBoundingClientRect().width") <= 1  # for screen readers, not seen


def test_a_link_to_a_room_that_closed_leads_to_its_games(own_server, open_page):  # noqa: F811
    """A shared link to a room whose players have left said only "There is no room named … (any more)"."""
    port = own_server()
    page = open_page("late", width=1280, height=800)
    login(page, f"http://127.0.0.1:{port}", "late")
    page.goto(f"http://127.0.0.1:{port}/#/room/Gone")
    expect(page.locator(".room.missing")).to_contain_text("There is no room named Gone (any more).")
    page.locator(".room.missing").get_by_role("link", name="Replays").click()
    expect(page.locator("main h1")).to_have_text("Recorded games")
