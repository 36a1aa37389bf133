"""``plyhall bot --engine`` bounded whatever its engine does (issue 41): each hostile engine of
tests/engines/hostile_engine.py as a real process, first under the driver in this process, then under real
``plyhall bot`` processes on a real server: an ``info`` flood meets its deadline, a huge line on stdout ends
the game and one on stderr is cut, neither held in memory; an engine that forks and exits is a crash and its
child is killed; every signal that ends the bot, SIGKILL included, leaves no engine process behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from client.engine import EnginePlayer
from client.engine_process import MAX_LINE, RELAY_BURST, RELAY_CHARS
from client.player import NoMove, Resign, Turn
from protocol.games import GAMES
from tests.helpers import plyhall, poll_until, read_until, running_server

HOSTILE = Path(__file__).resolve().parent / "engines" / "hostile_engine.py"


def hostile(mode: str, pids: Path | None = None, size: int | None = None) -> list[str]:
    argv = [sys.executable, str(HOSTILE), "--mode", mode]
    if pids is not None:
        argv += ["--pids", str(pids)]
    if size is not None:
        argv += ["--size", str(size)]
    return argv


def turn(room: str = "r1", time_left: float | None = 1.0) -> Turn:
    game = GAMES["connect4"]
    state = game.start()
    return Turn(game=game, state=state, seat=0, room=room, players=["ann", "bob"], moves=[], time_left=time_left,
                per_move=None, increment=0.0)


def alive(pid: int) -> bool:
    """True while process ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text(encoding="ascii").split()] if path.exists() else []


def all_gone(pids: list[int]) -> bool:
    return poll_until(lambda: not any(alive(pid) for pid in pids), timeout=10)


# The driver in this process -------------------------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_an_info_flood_meets_the_deadline_and_its_relay_is_bounded() -> None:
    said: list[str] = []
    player = EnginePlayer(hostile("flood"), "connect4", say=said.append, grace=0.5)
    try:
        player.warm_up()
        with pytest.raises(NoMove, match="did not answer in time"):
            player.choose(turn(time_left=0.5))  # the old driver read the flood for ever, past any deadline
    finally:
        player.close()
    shown = [line for line in said if line.startswith("engine info:")]
    assert 0 < len(shown) <= RELAY_BURST + 40  # a burst, then about 20 a second for the second it lasted
    assert any("lines not shown" in line for line in said)


@pytest.mark.timeout(60)
def test_a_huge_line_on_stdout_ends_the_game_with_the_reason(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    said: list[str] = []
    player = EnginePlayer(hostile("huge-stdout", pids, size=8 * MAX_LINE), "connect4", say=said.append)
    try:
        player.warm_up()
        with pytest.raises(Resign, match=f"more than {MAX_LINE:,} bytes"):
            player.choose(turn(time_left=None))  # no clock: only the line's length can end this turn
        first = pids_in(pids)[0]
        assert all_gone([first])  # replaced by a fresh engine for the next game
        assert player._process is not None and player._process.proc.pid != first
    finally:
        player.close()


@pytest.mark.timeout(60)
def test_a_huge_line_on_stderr_is_cut_and_the_game_goes_on() -> None:
    said: list[str] = []
    player = EnginePlayer(hostile("huge-stderr", size=4 * MAX_LINE), "connect4", say=said.append)
    try:
        player.warm_up()
        move = player.choose(turn(time_left=None))
        assert GAMES["connect4"].apply(GAMES["connect4"].start(), move)
        assert poll_until(lambda: any("more bytes not shown" in line for line in said), timeout=10)
    finally:
        player.close()
    assert sum(len(line) for line in said) < 20 * RELAY_CHARS  # not the 4 MiB it wrote


@pytest.mark.timeout(60)
def test_an_engine_that_forks_and_exits_is_a_crash_and_its_children_are_killed(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    said: list[str] = []
    player = EnginePlayer(hostile("fork-exit", pids), "connect4", say=said.append)
    try:
        player.warm_up()
        # no clock: the old driver waited for ever on the pipe the child holds
        with pytest.raises(Resign, match="crashed twice"):
            player.choose(turn(time_left=None))
        assert player._process is not None
        fresh = player._process.proc.pid  # the engine started again for the next game
        started = [pid for pid in pids_in(pids) if pid != fresh]
        assert len(started) == 4  # two engines, each with its child
        assert all_gone(started), [pid for pid in started if alive(pid)]
        assert any("exited with code 0" in line for line in said)
    finally:
        player.close()


# Real bots on a real server ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with running_server(tmp_path_factory.mktemp("bounds")) as port:
        yield port


def _as_from_a_terminal() -> None:
    # A bot started at a terminal has the default SIGHUP and SIGINT; the suite itself may run under nohup or in
    # a background job, whose ignored signals its children would inherit (a hang-up would then not stop the bot).
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def bot(port: int, name: str, room: str, *flags: str) -> subprocess.Popen:
    """``plyhall bot`` in a session of its own, so that a Ctrl-C can reach its process group and no other, with
    the signals' dispositions of a bot started at a terminal."""
    return plyhall("bot", "--name", name, "--room", room, "--game", "connect4", "--url", f"ws://127.0.0.1:{port}/ws",
                   *flags, start_new_session=True, preexec_fn=_as_from_a_terminal)


def peak_memory_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def end(*procs: subprocess.Popen) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("pipe", ["stdout", "stderr"])
def test_a_300_mb_line_does_not_fill_the_bots_memory(server: int, pipe: str) -> None:
    size = 300 << 20
    room = f"huge-{pipe}"
    engine = " ".join(hostile(f"huge-{pipe}", size=size))
    hostile_bot = bot(server, f"huge{pipe}", room, "--engine", engine, "--per-move", "30")
    opponent = bot(server, f"calm{pipe}", room, "--level", "random")
    try:
        if pipe == "stdout":
            read_until(hostile_bot, "bytes on its output", timeout=120)  # the game ends with the reason
        else:
            read_until(hostile_bot, "more bytes not shown", timeout=120)  # relayed, cut
        assert peak_memory_mb(hostile_bot.pid) < 200  # the issue saw 810 MB and 2.7 GB
    finally:
        end(hostile_bot, opponent)


SIGNALS = [("SIGTERM", signal.SIGTERM), ("SIGHUP", signal.SIGHUP), ("Ctrl-C", signal.SIGINT),
           ("SIGKILL", signal.SIGKILL)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("what", "number"), SIGNALS, ids=[what for what, _ in SIGNALS])
def test_no_engine_process_outlives_the_bot(server: int, tmp_path: Path, what: str, number: int) -> None:
    # the bot is stopped while its engine thinks (the old driver could start it again as it was stopped)
    pids, went = tmp_path / "pids", tmp_path / "went"
    engine = " ".join([*hostile("spawn-hang", pids), "--went", str(went)])
    thinking = bot(server, f"think{number}", f"signal-{number}", "--engine", engine)
    opponent = bot(server, f"calm{number}", f"signal-{number}", "--level", "random", "--per-move", "60")
    try:
        assert poll_until(went.exists, timeout=60)  # the game runs and the engine was told 'go'
        started = pids_in(pids)
        assert len(started) == 2 and all(alive(pid) for pid in started)  # the engine and its child
        if number == signal.SIGINT:
            os.killpg(thinking.pid, signal.SIGINT)  # a Ctrl-C at the terminal reaches the bot's process group
        else:
            os.kill(thinking.pid, number)
        thinking.communicate(timeout=30)
        started = pids_in(pids)  # with any engine started again meanwhile
        assert all_gone(started), f"after {what}: {[pid for pid in started if alive(pid)]} still run"
    finally:
        end(thinking, opponent)
