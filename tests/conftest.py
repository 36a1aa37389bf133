"""Shared fixtures: a live server on a free loopback port with its own database (and servers of one's own, with the
clients to close after them), PostgreSQL and Redis."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from plyhall import compiled

# The Python core unless the run asks for the compiled one (PLYHALL_CORE=compiled, built by `plyhall compile`); the
# servers the tests start inherit the choice, and where the build is (their XDG_CACHE_HOME is the run's own).
os.environ.setdefault(compiled.ENVIRONMENT, "python")
os.environ.setdefault(compiled.DIRECTORY, str(compiled.builds()))
if multiprocessing.current_process().name == "MainProcess":  # not a spawned child (a bot's thinking process),
    compiled.use()  # which imports its player's test module after the core's modules, and never runs the hall

from client.sdk import Client  # noqa: E402
from server.io.server import PlyhallServer, RateLimit  # noqa: E402
from server.storage import SQLiteStorage  # noqa: E402

if TYPE_CHECKING:
    from tests.redis_server import RedisServer


def free_port() -> int:
    """A port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session", autouse=True)
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``XDG_CACHE_HOME`` of the whole run (and of the processes it starts): a temporary folder shared by the
    xdist workers, so Connect Four's opening table is made once a run, never in the user's own cache."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "xdg-cache"
    folder.mkdir(exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = str(folder)
    return folder


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "plyhall.db"


@pytest.fixture
async def one_server(db_path: Path) -> AsyncIterator[PlyhallServer]:
    """A running server on 127.0.0.1 with a port of its own: always one node of this process, even in a module whose
    ``server`` is run as a cluster too (a test that reads the server's hall or connections)."""
    srv = PlyhallServer(SQLiteStorage(db_path), host="127.0.0.1", port=0, rate_limit=RateLimit(rate=2000, burst=4000))
    await srv.start()
    yield srv
    await srv.stop()


@pytest.fixture
def server(one_server: PlyhallServer) -> PlyhallServer:
    """A running server on 127.0.0.1 with a port of its own."""
    return one_server


@pytest.fixture
def url(server: PlyhallServer) -> str:
    return f"ws://127.0.0.1:{server.port}/ws"


@pytest.fixture
async def make_server(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[PlyhallServer]]]:
    """Start servers of one's own (strict rate limits, small room limits); all stopped afterwards."""
    servers: list[PlyhallServer] = []

    async def make(**kwargs: Any) -> PlyhallServer:
        kwargs.setdefault("rate_limit", RateLimit(rate=2000, burst=4000))  # relaxed
        srv = PlyhallServer(SQLiteStorage(tmp_path / f"server{len(servers)}.db"), host="127.0.0.1", port=0, **kwargs)
        await srv.start()
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        await srv.stop()


@pytest.fixture
async def opened() -> AsyncIterator[list[Client]]:
    """Clients to close at the end of a test (before its servers stop)."""
    clients: list[Client] = []
    yield clients
    for client in clients:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.close(), 5)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[object]:
    """A throwaway PostgreSQL cluster for this test process (skipped where PostgreSQL is not installed,
    unless PLYHALL_REQUIRE_POSTGRES=1, as in CI)."""
    from tests.pg_cluster import ENABLE, Cluster, binaries

    if binaries() is None:
        if os.environ.get("PLYHALL_REQUIRE_POSTGRES") == "1":
            pytest.fail(ENABLE)
        pytest.skip(ENABLE)
    cluster = Cluster()
    yield cluster
    cluster.destroy()


@pytest.fixture
def pg_url(postgres_cluster: object) -> str:
    """The URL of a fresh, empty PostgreSQL database."""
    return postgres_cluster.new_database()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A throwaway Redis (tests/redis_server.py) for this test process: with pytest-xdist each worker has its
    own. Skipped where redis-server is not installed, unless PLYHALL_REQUIRE_REDIS=1, as in CI."""
    from tests.redis_server import ENABLE, RedisServer, binary

    if binary() is None:
        if os.environ.get("PLYHALL_REQUIRE_REDIS") == "1":
            pytest.fail(ENABLE)
        pytest.skip(ENABLE)
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The URL of the session's Redis, emptied (FLUSHALL) for this test; running again if a test before left it
    paused or frozen."""
    redis_server.revive()
    redis_server.flushall()
    return redis_server.url


@pytest.fixture(params=["sqlite", "postgresql"])
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each storage test runs on both databases: a fresh SQLite file, and a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("pg_url")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """Keep each phase's report on the test item (``item.report_call``), so fixtures can tell a
    failed test at teardown (the browser tests screenshot the board then)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


CRASH_RERUNS = 1
"""How many times a test whose worker process died under it is run again on a fresh worker."""
_crashed: dict[str, int] = {}


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: pytest.TestReport, sched: object) -> None:
    """A pytest-xdist worker that dies (a C extension's fault, from whatever the process ran before) takes
    down the test it was running at the time, which need not be the culprit: run that test once more on a
    fresh worker. A test that kills its worker again fails, and every rerun is listed in the summary."""
    _crashed[crashitem] = _crashed.get(crashitem, 0) + 1
    if _crashed[crashitem] > CRASH_RERUNS:
        return  # it failed as a crash
    sched.mark_test_pending(crashitem)  # type: ignore[attr-defined]
    report.outcome = "rerun"  # type: ignore[assignment]


def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    """A test run again after its worker died shows as R (and 'rerun' in the counts), neither passed nor failed."""
    if report.outcome == "rerun":
        return "rerun", "R", "RERUN (its worker died)"
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the tests whose worker died under them, so that a rare crash is seen even when the rerun passed."""
    if _crashed:
        terminalreporter.write_sep("=", "worker crashes (the test running was run once more, on a fresh worker)")
        for nodeid, count in _crashed.items():
            terminalreporter.write_line(f"{nodeid}: its worker died {count} time(s)")


# The two tiers --------------------------------------------------------------------------------------------------
# `pytest -m "not slow"` is the fast tier, for developers (under two minutes on two cores); the whole suite is what CI
# runs. A test is slow when it starts real processes (`plyhall serve`, bots, engines, a JVM), a browser or a database
# server, or waits long on real clocks. It says so with @pytest.mark.slow, or is marked here by what it uses, so
# that a new test using a browser or a database server is put in its tier without a word.

SLOW_FIXTURES = frozenset({
    "browser", "open_page",  # Chromium, through Playwright (tests/test_web*.py)
    "postgres_cluster", "pg_url",  # a throwaway PostgreSQL server
    "redis_server", "redis_url",  # a throwaway Redis server
})
"""Fixtures that start a server or a browser: a test that uses one, even indirectly, is slow."""

SLOW_PARAMS = frozenset({"three nodes", "postgresql"})
"""Parameters that run a test against a cluster of nodes (Redis and PostgreSQL) or a PostgreSQL database."""

SLOW_MODULES: dict[str, str] = {
    "test_attacks": "each attack against a real plyhall serve (and three cluster nodes)",
    "test_chaos": "a fault matrix on real cluster nodes, PostgreSQL and Redis",
    "test_cold_start": "every master engine compiled anew in real bot processes",
    "test_cosc322": "the Java library built, course bots in JVMs",
    "test_cosc322_tournament": "class tournaments of course bots in JVMs",
    "test_docs_example": "the docs' bot example against a house bot, as processes",
    "test_docs_in_order": "every command of the docs, run in order as processes",
    "test_entrants": "tournament entrants as bot processes on a real server",
    "test_first_hour": "the README's server and bots, as processes",
    "test_postgres_live": "a live PostgreSQL server",
    "test_ratings_crash": "a server SIGKILLed during rated games",
    "test_serve_cli": "plyhall serve as a process: signals, kill -9, its options",
    "test_server_memory": "thousands of connections to a server process",
}
"""Test modules (file name without .py) of which every test is slow, with the reason."""

SLOW_TESTS: dict[str, tuple[str, ...]] = {
    # each starts plyhall processes (serve, bot, tournament, analyse, names, db), unless its comment says why else
    "test_analysis": ("test_the_server_analyses_stores_serves_and_exports", "test_analysis_on_request",
                      "test_plyhall_analyse_prints_and_writes_json",
                      "test_a_tournaments_games_are_analysed_with_each_entrants_accuracy"),
    "test_bots_levels": ("test_the_commands_that_take_a_level_list_every_level_in_their_help",),
    "test_cli_manners": ("test_ctrl_c_in_a_match_prints_the_results_so_far",
                         "test_a_match_says_it_warms_up_the_master_engine_and_ctrl_c_acts_during_it",
                         "test_a_bot_with_no_server_says_so_before_its_engine_warms_up",
                         "test_tournament_without_a_server_says_so_in_one_line_without_an_errno",
                         "test_a_mistyped_game_is_one_line_and_game_ids_take_any_case",
                         "test_each_game_a_bot_reports_has_the_number_it_was_announced_with"),
    "test_engine_bounds": ("test_a_300_mb_line_does_not_fill_the_bots_memory",
                           "test_no_engine_process_outlives_the_bot"),
    "test_engine_magnetic_cave": (  # a master's searches through a won endgame, about 30 s of CPU
        "test_master_keeps_a_won_endgame_its_search_cannot_see_to_the_end",),
    "test_engine_protocol": ("test_crashing_and_hanging_engines_on_a_server",
                             "test_bad_engine_commands_are_clear_errors",
                             "test_the_docs_example_engines_play_each_other"),
    "test_engine_santorini": (  # depth-5 searches with and without each pruning, about 40 s of CPU in all
        "test_prunings_reach_a_depth_in_fewer_nodes_and_prove_only_what_the_full_search_proves",),
    "test_fair_share": ("test_http_is_limited_per_address_with_retry_after_and_the_page_files_are_free",
                        "test_the_largest_pages_are_capped_with_a_clear_answer",
                        "test_a_full_share_of_the_analysis_queue_gets_429_and_a_bystander_is_served_next"),
    "test_kaggle": ("test_the_docs_agent_runs_unchanged", "test_kaggles_own_agents_play_each_other",
                    "test_a_bot_whose_agent_exits_plays_its_next_game"),
    "test_ladder": ("test_ladder_bots_and_anchors_play_rated_games_on_a_real_server",
                    "test_a_ladder_bot_told_to_stop_after_n_games_plays_exactly_n"),
    "test_ladder_churn": ("test_a_churning_crowd_on_a_real_server_neither_starves_others_nor_grows_the_pairing_work",),
    "test_rated_games": ("test_plyhall_ratings_in_the_terminal",),
    "test_rating_abuse": ("test_a_resignation_before_two_moves_each_is_stored_unrated_with_its_reason",
                          "test_registered_names_log_in_with_their_token_and_rate_each_other_from_one_address"),
    "test_sdk": ("test_plyhall_bot_command_plays_against_an_sdk_bot", "test_bot_command_rejects_bad_level",
                 "test_long_thinking_bot_stays_connected"),  # the last: 1.5 s a move of real thinking against pings
    "test_storage": ("test_plyhall_db_copy_moves_a_deployment_and_back",),
    "test_tournament_forfeits": (
        "test_tournament_run_prints_the_forfeits_of_an_entrant_that_leaves_and_the_event_ends",),
    "test_tournament_live": ("test_the_documented_commands_run_a_round_robin_of_four_bots",
                             "test_a_tournament_survives_the_server_being_killed",
                             "test_the_cli_takes_a_toml_file_and_steers_the_event"),
    "test_web_static": ("test_the_modules_type_check",),  # TypeScript's tsc over every module of the page
    "test_workers": ("test_cluster_options_are_checked_before_anything_starts",),  # (in process: test_command_checks)
}
"""Slow tests of modules whose other tests are fast: module name -> names of test functions."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark slow tests (see SLOW_FIXTURES, SLOW_PARAMS, SLOW_MODULES, SLOW_TESTS) before ``-m`` selects among them;
    a module or test named there that no longer exists is an error, so that the lists never go stale."""
    gone = [name for name in {*SLOW_MODULES, *SLOW_TESTS} if not (Path(__file__).parent / f"{name}.py").exists()]
    if gone:
        raise pytest.UsageError(f"tests/conftest.py names test modules that tests/ lacks: {sorted(gone)}")
    slow = pytest.mark.slow
    checked: set[str] = set()
    for item in items:
        module = getattr(item, "module", None)
        name = module.__name__.rsplit(".", 1)[-1] if module is not None else ""
        if name in SLOW_TESTS and name not in checked:
            checked.add(name)
            missing = [test for test in SLOW_TESTS[name] if not hasattr(module, test)]
            if missing:
                raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that {name}.py lacks: {missing}")
        params = getattr(getattr(item, "callspec", None), "params", {})
        function = getattr(item, "originalname", item.name)
        if (name in SLOW_MODULES or function in SLOW_TESTS.get(name, ())
                or not SLOW_FIXTURES.isdisjoint(item.fixturenames)
                or any(isinstance(value, str) and value in SLOW_PARAMS for value in params.values())):
            item.add_marker(slow)
