"""An accessibility pass with axe-core (issue 43): the lobby, a room, a replay and the leaderboard, at a desktop's and
a phone's size, have no serious or critical violation. axe-core comes from npm into a cache outside the repository
(.ci/run installs it; locally: npm install --prefix ~/.cache/plyhall-axe axe-core); the test is skipped where it is
missing, unless PLYHALL_REQUIRE_AXE=1 (as in CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.test_web import browser, open_page, own_server  # noqa: F401 - the browser tests' fixtures
from tests.test_web_leaderboard import play_rated_game
from tests.web_helpers import CHROMIUM, create_room, login

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")

AXE_HOME = Path(os.environ.get("PLYHALL_AXE_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                / "plyhall-axe")
AXE = AXE_HOME / "node_modules" / "axe-core" / "axe.min.js"


def axe_script() -> Path:
    """The axe-core script; the test is skipped without it unless PLYHALL_REQUIRE_AXE=1."""
    if not AXE.exists():
        message = f"axe-core is not installed ({AXE}; npm install --prefix {AXE_HOME} axe-core)"
        if os.environ.get("PLYHALL_REQUIRE_AXE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return AXE


def serious(page: Page, what: str) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now, one line each."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_script()))
    violations = page.evaluate("""async () => {
        const result = await axe.run(document, { resultTypes: ["violations"] });
        return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                         nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
    }""")
    return [f"{what}: {v['impact']} {v['id']} ({v['help']}): {', '.join(v['nodes'])}" for v in violations]


def test_the_lobby_a_room_a_replay_and_the_leaderboard_have_no_serious_violation(own_server, browser, open_page):  # noqa: F811
    axe_script()
    port = own_server()
    base = f"http://127.0.0.1:{port}"
    record = play_rated_game(port, "ann-lb", "bob-lb", 1)
    # the page's Content-Security-Policy allows its own scripts only: the test's context lets axe-core in
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    page = open_page("axe", context=context)
    login(page, base, "axe")
    problems: list[str] = []
    for width, height in ((1280, 800), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(base + "/#/lobby")
        expect(page.get_by_role("heading", name="Lobby")).to_be_visible()
        expect(page.locator(".room-row").first).to_be_visible()
        problems += serious(page, f"lobby {width}px")
        page.goto(f"{base}/#/replay/{record}/5")
        expect(page.locator(".replay .board").first).to_be_visible()
        problems += serious(page, f"replay {width}px")
        page.goto(base + "/#/leaderboard")
        expect(page.locator("table.leaderboard tbody tr")).to_have_count(2)
        problems += serious(page, f"leaderboard {width}px")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(base + "/#/lobby")
    create_room(page, "connect4", "Axe Room")
    expect(page.locator(".play .board").first).to_be_visible()
    problems += serious(page, "room 1280px")
    page.set_viewport_size({"width": 390, "height": 844})
    problems += serious(page, "room 390px")
    assert problems == [], "\n".join(problems)
