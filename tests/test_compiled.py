"""The compiled core (``plyhall compile``, :mod:`plyhall.compiled`): built once a run with mypyc into the run's own
folder, it serves a real ``plyhall serve`` whose games are played and stored as the Python core's are, and the
room's, the hall's and the codecs' own tests pass against it. Without a build, or with one of other sources, the
server runs its Python and says so; a core asked for that cannot be had is refused with what to do.

The build needs a C compiler and Python's headers: without them these tests skip, unless
``PLYHALL_REQUIRE_COMPILE=1`` (CI) makes that a failure."""

from __future__ import annotations

import asyncio
import fcntl
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from plyhall import compiled
from tests.conftest import free_port
from tests.helpers import login, play_out, start_server, stop

ROOT = Path(__file__).resolve().parent.parent

UNIT_TESTS = ("tests/test_room.py",
              "tests/test_hall_requests.py", "tests/test_protocol_messages.py", "tests/test_codec.py",
              "tests/test_games_connect4.py", "tests/test_written_out_values.py")
"""Test modules of the compiled modules' own behaviour, run again against the build."""


@pytest.fixture(scope="session")
def core_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of builds holding the build of these sources, made once a run (the xdist workers share it: the
    first builds it under a lock, the others wait and find it)."""
    missing = compiled.missing_tools()
    if missing:
        if os.environ.get("PLYHALL_REQUIRE_COMPILE"):
            pytest.fail(f"PLYHALL_REQUIRE_COMPILE is set but {missing}")
        pytest.skip(missing)
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "compiled-core"
    folder.mkdir(exist_ok=True)
    with open(folder.parent / "compiled-core.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run([sys.executable, "-m", "plyhall", "compile", "--jobs", "1"], capture_output=True,
                              text=True, env=core_env(folder, "auto"), timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    return folder


def core_env(folder: Path, choice: str) -> dict[str, str]:
    """This process's environment with the builds in ``folder`` and ``PLYHALL_CORE=choice``."""
    return {**os.environ, compiled.DIRECTORY: str(folder), compiled.ENVIRONMENT: choice}


async def test_the_compiled_core_serves_and_stores_games(core_dir: Path, tmp_path: Path) -> None:
    db, port = tmp_path / "compiled.db", free_port()
    proc = await asyncio.to_thread(start_server, db, port, env=core_env(core_dir, "compiled"))
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        rng = random.Random(322)
        for number in range(3):
            room = f"Kalamalka {number}"
            ann, bob = await login(url, f"ann{number}"), await login(url, f"bob{number}", coords="matrix")
            await ann.request({"type": "create_room", "game": "connect4", "name": room})
            await ann.request({"type": "join", "room": room})
            await bob.request({"type": "join", "room": room})
            over = await play_out([ann, bob], room, rng)
            assert over["type"] == "game_over"
            await ann.close()
            await bob.close()
    finally:
        out, _ = await asyncio.to_thread(stop, proc)
    assert "plyhall: compiled core (mypyc)" in out
    with sqlite3.connect(db) as conn:
        games = conn.execute("SELECT id, status, move_count FROM games ORDER BY started_at").fetchall()
        counts = dict(conn.execute("SELECT game_id, COUNT(*) FROM moves GROUP BY game_id").fetchall())
    assert len(games) == 3 and all(status == "finished" for _, status, _ in games)
    assert all(counts[game_id] == plies >= 7 for game_id, _, plies in games)  # four in a row takes 7 stones


def test_the_core_s_own_tests_pass_against_the_build(core_dir: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *UNIT_TESTS],
                          capture_output=True, text=True, cwd=ROOT, env=core_env(core_dir, "compiled"), timeout=900,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    probe = subprocess.run([sys.executable, "-c", "from plyhall import compiled; compiled.use(); "
                            "import server.core.room as r; print(r.__file__)"],
                           capture_output=True, text=True, env=core_env(core_dir, "compiled"), timeout=60, check=True)
    assert probe.stdout.strip().startswith(str(core_dir)) and probe.stdout.strip().endswith(".so")


def test_without_a_build_of_these_sources_the_python_core_runs(tmp_path: Path) -> None:
    empty = tmp_path / "builds"
    status = subprocess.run([sys.executable, "-m", "plyhall", "compile", "--status"], capture_output=True, text=True,
                            env=core_env(empty, "auto"), timeout=60, check=False)
    assert status.returncode == 0 and "none for these sources" in status.stdout
    assert "Python core (`plyhall compile` builds the compiled one)" in status.stdout
    (empty / ".tmp" / "core-cut-short").mkdir(parents=True)  # a build cut short is no build
    status = subprocess.run([sys.executable, "-m", "plyhall", "compile", "--status"], capture_output=True, text=True,
                            env=core_env(empty, "auto"), timeout=60, check=False)
    assert "Python core (`plyhall compile` builds the compiled one)" in status.stdout
    (empty / "0123456789abcdef0123").mkdir(parents=True)  # a build of other sources (edited since)
    (empty / "0123456789abcdef0123" / compiled.MANIFEST).write_text("{}\n")
    status = subprocess.run([sys.executable, "-m", "plyhall", "compile", "--status"], capture_output=True, text=True,
                            env=core_env(empty, "auto"), timeout=60, check=False)
    assert "built from other sources: run `plyhall compile` again" in status.stdout
    port = free_port()
    proc = start_server(tmp_path / "p.db", port, env=core_env(empty, "auto"))
    out, _ = stop(proc)
    assert "plyhall: Python core (the compiled core was built from other sources" in out
    assert "plyhall serving on" in out


def test_an_edit_to_any_source_asks_for_another_build(tmp_path: Path) -> None:
    copy = tmp_path / "tree"
    for package in ("protocol", "server"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__", "*.so", "web"))
    before = compiled.fingerprint(copy)
    assert before == compiled.fingerprint(ROOT)
    hall = copy / "server" / "core" / "hall.py"
    hall.write_text(hall.read_text() + "\n# an edit\n")
    edited = compiled.fingerprint(copy)
    assert edited != before
    (copy / "protocol" / "games" / "extra.py").write_text("X = 1\n")  # a new module counts too
    assert compiled.fingerprint(copy) not in (before, edited)
    (copy / "server" / ".#hall.py").symlink_to(copy / "nowhere")  # an editor's lock file: neither read nor counted
    (copy / "server" / "core" / "extra.py").write_text("Y = 2\n")
    assert len({before, edited, compiled.fingerprint(copy)}) == 3


def test_another_choice_of_modules_asks_for_another_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """A release that compiles one module more (or less) from the same sources has a build of its own: two such
    trees would otherwise build into one folder in turn, each finding the other's build of no use."""
    before = compiled.fingerprint(ROOT)
    monkeypatch.setattr(compiled, "MODULES", compiled.MODULES[:-1])
    assert compiled.fingerprint(ROOT) != before


def test_a_build_that_does_not_load_is_not_run(core_dir: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "builds"
    shutil.copytree(core_dir, damaged, ignore=shutil.ignore_patterns(".tmp", "*.lock"))
    for library in damaged.glob(f"*/{compiled.GROUP}__mypyc*"):
        library.write_bytes(b"not a shared library")
    port = free_port()
    proc = start_server(tmp_path / "d.db", port, env=core_env(damaged, "auto"))
    out, _ = stop(proc)
    assert "does not load" in out and "plyhall compile --force" in out and "plyhall serving on" in out
    refused = subprocess.run([sys.executable, "-m", "plyhall", "serve", "--port", str(free_port()),
                              "--db", str(tmp_path / "r.db")], capture_output=True, text=True,
                             env=core_env(damaged, "compiled"), timeout=60, check=False)
    assert refused.returncode == 2 and "does not load" in refused.stderr


@pytest.mark.parametrize(("choice", "words"), [
    ("fast", "PLYHALL_CORE='fast' is not a choice; use one of auto, compiled, python"),
    ("compiled", "no compiled core for these sources in"),
])
def test_serve_refuses_a_core_it_cannot_run(tmp_path: Path, choice: str, words: str) -> None:
    done = subprocess.run([sys.executable, "-m", "plyhall", "serve", "--port", str(free_port()),
                           "--db", str(tmp_path / "x.db")], capture_output=True, text=True,
                          env=core_env(tmp_path / "none", choice), timeout=60, check=False)
    assert done.returncode == 2 and words in done.stderr
    assert not (tmp_path / "x.db").exists()


def test_compile_without_mypyc_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(compiled.DIRECTORY, str(tmp_path))
    real = compiled.importlib.util.find_spec
    monkeypatch.setattr(compiled.importlib.util, "find_spec", lambda name, *a: None if name == "mypyc" else real(name))
    with pytest.raises(compiled.CompileError, match=r"pip install 'plyhall\[compile\]'"):
        compiled.build(log=lambda line: None)


def test_a_new_build_keeps_the_three_used_or_made_before_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every compiled edit adds a build; the cache keeps the one just made and the three used or made last, whatever
    their names, and leaves what is not a build (a build under way, the lock) alone."""
    monkeypatch.setenv(compiled.DIRECTORY, str(tmp_path))
    made = []
    for number in range(7):
        folder = tmp_path / f"{9 - number:020d}"  # names in the opposite order to the builds
        folder.mkdir()
        (folder / compiled.MANIFEST).write_text("{}\n")
        os.utime(folder / compiled.MANIFEST, (1_000_000 + number, 1_000_000 + number))
        made.append(folder)
    (tmp_path / ".tmp" / "core-under-way").mkdir(parents=True)
    (tmp_path / ".lock").write_text("")
    said: list[str] = []
    compiled._prune(made[2], said.append)  # just rebuilt in place: kept, though its manifest is older
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [".lock", ".tmp", made[2].name, made[4].name, made[5].name, made[6].name])
    assert said == ["removed 3 older build(s) (the 4 made last are kept)"]
    compiled._prune(made[6], said.append)
    assert said[1:] == []  # nothing more to remove
