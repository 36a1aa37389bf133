"""A COSC 322 class tournament with course-style bots as they are (issue 39), on a real ``plyhall serve``.

Four course-style entrants connect one after another while a round robin runs: COSC322Test (the course template),
ListBot (joins the first room of its list, moves from its own thread), StaleBot (plays one game per process: it
keeps the board of its first game) and FreezeBot (hangs in handleGameMessage at the opponent's first move). The
event is run twice: each bot in one process with PLYHALL_TOURNAMENT (the course library follows the event), and
each through ``plyhall cosc322 entrant`` (a fresh, supervised process per game). Either way every scheduled game is
played or forfeited with a reason, no game stalls, the frozen bot loses on time and its process is gone, and the
event ends with its standings. The clock is short (2 s a move in one process, 5 s for the fresh processes of the
runner, with a margin of 0.5 s; these bots move at once) so that the frozen bot's losses cost seconds.

A course bot seated in a game already under way hears of it as a course bot expects, at its turn. And the guide's
"Run a class tournament" commands run as written.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from protocol.games import get_game
from tests.conftest import free_port
from tests.helpers import http_json, login, start_server, stop
from tests.test_command_checks import ENTRANT_MISTAKES
from tests.test_cosc322 import (  # noqa: F401  (jar, bots and spawn are fixtures)
    BOTS,
    DOC,
    JAVA,
    ROOT,
    Run,
    bots,
    environment,
    jar,
    java_bot,
    needs_javac,
    spawn,
)

ORGANISER = "organiser-secret-for-tests"
ENTRANTS = (("ann", "COSC322Test"), ("bob", "ListBot"), ("cat", "StaleBot"), ("dan", "FreezeBot"))
EVENT_TIMEOUT = 300  # seconds; the event itself takes well under a minute
BOARD_LINE = re.compile(r"^board game=\d+ move=\d+: \[([0-9, ]*)\]$", re.M)


@pytest.fixture
def server(tmp_path: Path):
    """A ``plyhall serve`` with an organiser secret, where an illegal move loses: its port."""
    port = free_port()
    proc = start_server(tmp_path / "class.db", port, "--organiser-secret", ORGANISER, "--illegal-move", "lose")
    yield port
    stop(proc)


def organise(start, port: int, name: str, grace: int, per_move: int = 2) -> Run:
    """``plyhall tournament run``: a round robin of the four entrants, one game a pairing, ``per_move`` seconds a
    move (and a margin of half a second)."""
    argv = [sys.executable, "-m", "plyhall", "tournament", "run", "--url", f"ws://127.0.0.1:{port}/ws",
            "--secret", ORGANISER, "--name", name, "--game", "amazons", "--format", "round-robin",
            "--players", ",".join(n for n, _ in ENTRANTS), "--games-per-pairing", "1", "--time-control", str(per_move),
            "--time-margin", "500", "--grace", str(grace)]
    run = start("organiser", argv, environment(port), cwd=ROOT)
    deadline = time.monotonic() + 60
    while "running" not in run.out.read_text():
        assert run.proc.poll() is None and time.monotonic() < deadline, run.out.read_text() + run.err.read_text()
        time.sleep(0.05)
    return run


def replay(record: dict) -> None:
    """Every move of ``record`` is legal by the reference rules."""
    game = get_game("amazons")
    state = game.initial_state(**record["options"])
    for move in record["moves"]:
        state = game.apply(state, game.parse_move(move["move"], state))


def check_event(port: int, name: str) -> list[tuple[dict, dict]]:
    """The event is finished, every scheduled game played or forfeited with a reason (and legal moves), and the
    standings list the four entrants: (schedule entry, record) for each game."""
    status, event = http_json(port, f"/api/tournaments/{name}?format=json")
    assert status == 200, event
    assert event["status"] == "finished", event["status"]
    assert event["progress"]["done"] == event["progress"]["total"] == 6
    games = []
    for entry in event["schedule"]:
        assert entry["status"] in ("finished", "forfeit") and entry["result"] in ("1-0", "0-1"), entry
        status, record = http_json(port, f"/api/games/{entry['record']}")
        assert status == 200 and record["reason"], record
        replay(record)
        games.append((entry, record))
    assert sorted(row["name"] for row in event["standings"]["rows"]) == ["ann", "bob", "cat", "dan"]
    return games


def check_frozen_bot(games: list[tuple[dict, dict]], logs: dict[str, Path]) -> None:
    """dan (FreezeBot) loses every game; those it was at lost on time, and the others were played out (``logs``:
    each entrant's standard error, shown when not)."""
    for entry, record in games:
        dan = 0 if entry["white"] == "dan" else 1 if entry["black"] == "dan" else None
        if dan is None:  # the three others play their games
            players = (entry["white"], entry["black"])
            assert entry["status"] == "finished", (entry, record["reason"], {
                name: log.read_text()[-3000:] for name, log in logs.items() if name in players})
            continue
        assert entry["result"] == ("0-1" if dan == 0 else "1-0"), entry
        if entry["status"] == "finished":
            assert record["reason"] == "dan ran out of time", record["reason"]
    assert any(entry["status"] == "finished" and "dan" in (entry["white"], entry["black"]) for entry, _ in games)


def our_processes(marker: Path) -> list[str]:
    """Command lines of live processes that use ``marker`` (the test bots' class folder)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(marker) in cmdline and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z":
            found.append(cmdline)
    return found


@needs_javac
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="looks for leftover processes in /proc")
def test_a_round_robin_of_course_bots_each_in_one_process(jar: Path, bots: Path, server: int, spawn):  # noqa: F811
    """PLYHALL_TOURNAMENT=class: each bot stays in the rooms the server seats it in and plays all its games in one
    process; bob runs without it (PLYHALL_GAMES=3), so it is told which variable to set, and plays the games it is
    seated in instead of leaving them. FreezeBot's first game is lost on time, its process ends itself (exit code
    3) and its later games are forfeited after the grace. StaleBot may lose its later games on its stale board:
    with a reason, like every game. A bot that is no entrant is told so and ends. About half a minute: six games
    of JVM bots, one lost on time at 5 s a move (a cold JVM's first move on a busy machine needs that clock, or its
    opponent, the frozen bot, wins) and the frozen bot's next ones forfeited after the 20 s grace."""
    organiser = organise(spawn, server, "class", grace=20, per_move=5)
    runs = {}
    for name, main in ENTRANTS:
        settings = {"PLYHALL_GAMES": "3"} if name == "bob" else {"PLYHALL_TOURNAMENT": "class"}
        runs[name] = java_bot(spawn, [jar, bots], main, name, server, **settings)
        time.sleep(0.5)
    stranger = java_bot(spawn, [jar, bots], "COSC322Test", "eve", server, PLYHALL_TOURNAMENT="class")
    assert organiser.wait(EVENT_TIMEOUT)[0] == 0, organiser.out.read_text() + organiser.err.read_text()
    games = check_event(server, "class")
    check_frozen_bot(games, {name: run.err for name, run in runs.items()})
    results = {name: run.wait(60) for name, run in runs.items()}
    for name in ("ann", "cat"):
        code, out, err = results[name]
        assert code == 0 and "the tournament class is finished" in err, err
    code, out, err = results["bob"]
    assert code == 0 and "run the bot with PLYHALL_TOURNAMENT=class" in err and "done (3 games" in err, err
    code, out, err = results["dan"]
    assert code == 3 and "freezing in handleGameMessage" in out, err
    assert "a bot that never returns cannot play on" in err, err
    code, _, err = stranger.wait(30)
    assert code == 1 and "eve is not an entrant of the tournament class; its entrants: ann, bob, cat, dan" in err
    assert "ERROR" not in results["ann"][1] and "ERROR" not in results["bob"][1]
    assert our_processes(bots) == []
    assert re.search(r"6 of 6 games done: [45] played, [12] forfeited", organiser.out.read_text())  # dan's later


@needs_javac
def test_course_bots_run_without_settings_play_every_game_they_are_seated_in(  # noqa: F811
        jar: Path, bots: Path, server: int, spawn):  # noqa: F811
    """A student who runs a bot as the guide's three commands do (no PLYHALL_TOURNAMENT, no PLYHALL_GAMES) into a
    running event: it played one game and stopped, while the server had already started its next, which it lost on
    time as a game played. The bot the server seats plays every game of the event, then stops."""
    argv = [sys.executable, "-m", "plyhall", "tournament", "run", "--url", f"ws://127.0.0.1:{server}/ws",
            "--secret", ORGANISER, "--name", "plain", "--game", "amazons", "--format", "round-robin",
            "--players", "pia,quin", "--games-per-pairing", "3", "--time-control", "5", "--time-margin", "500",
            "--grace", "20"]
    organiser = spawn("organiser", argv, environment(server), cwd=ROOT)
    deadline = time.monotonic() + 60
    while "running" not in organiser.out.read_text():  # the event runs before the students start their bots
        assert organiser.proc.poll() is None and time.monotonic() < deadline, organiser.err.read_text()
        time.sleep(0.05)
    runs = {name: java_bot(spawn, [jar, bots], "COSC322Test", name, server) for name in ("pia", "quin")}
    assert organiser.wait(EVENT_TIMEOUT)[0] == 0, organiser.out.read_text() + organiser.err.read_text()
    for run in runs.values():
        code, _, err = run.wait(60)
        assert code == 0 and "the bot plays every game of it" in err and "the tournament plain is finished" in err, err
    status, games = http_json(server, "/api/games?tournament=plain&status=all")
    assert status == 200 and len(games["games"]) == 3, games
    assert all("time" not in game["reason"] and game["status"] == "finished" for game in games["games"]), games


def entrant_runner(start, classpath: list[Path], port: int, name: str, main: str, password: str = "") -> Run:
    """``plyhall cosc322 entrant --tournament class --name NAME -- java ... NAME NAME-password`` (or ``password``)."""
    argv = [sys.executable, "-m", "plyhall", "cosc322", "entrant", "--tournament", "class", "--name", name,
            "--url", f"ws://127.0.0.1:{port}/ws", "--poll", "0.3", "--", JAVA, "-Djava.awt.headless=true", "-cp",
            os.pathsep.join(map(str, classpath)), f"ubc.cosc322.{main}", name, password or f"{name}-password"]
    return start(f"runner-{name}", argv, environment(port), cwd=ROOT)


@needs_javac
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="looks for leftover processes in /proc")
def test_a_round_robin_of_course_bots_through_the_entrant_runner(jar: Path, bots: Path, server: int,  # noqa: F811
                                                                 spawn):  # noqa: F811
    """Each bot through ``plyhall cosc322 entrant``, started before the tournament exists (the runner waits for
    it) or while it runs: a fresh process per game, so StaleBot never sees a second board, and FreezeBot loses
    each of its games on time (it freezes at the opponent's first move) and each of its processes is gone when
    its game is over. About half a minute: a JVM started for every game, and three games lost on time at 5 s a
    move (a fresh JVM's first move needs that clock)."""
    runners = {name: entrant_runner(spawn, [jar, bots], server, name, main) for name, main in ENTRANTS[:1]}
    time.sleep(1.0)  # ann's runner is there before the tournament is
    organiser = organise(spawn, server, "class", grace=30, per_move=5)  # a fresh JVM's first move takes a while
    for name, main in ENTRANTS[1:]:
        runners[name] = entrant_runner(spawn, [jar, bots], server, name, main)
        time.sleep(0.5)
    assert organiser.wait(EVENT_TIMEOUT)[0] == 0, organiser.out.read_text() + organiser.err.read_text()
    games = check_event(server, "class")
    check_frozen_bot(games, {name: run.out for name, run in runners.items()})
    assert all(entry["status"] == "finished" for entry, _ in games), "every entrant came to every game"
    outputs = {}
    for name, run in runners.items():
        code, out, err = run.wait(60)
        assert code == 0, f"{name}: {code}\n{out}\n{err}"
        assert f"{name}: the tournament class is finished: 3 games here" in out, out
        outputs[name] = out
    assert "waiting for the tournament class to be created" in outputs["ann"]
    assert "stale:" not in outputs["cat"], "each of StaleBot's games had a process of its own"
    lost = re.findall(r"^dan: game \d+ in class [\d.]+: lost \(dan ran out of time\); (.*)$", outputs["dan"], re.M)
    assert len(lost) == 3, outputs["dan"]
    # each process is gone when its game is over: it ended itself (exit code 3 once frozen; 0 for a process that came
    # after its short clock ran out, as its frozen forerunner still held the seat, and heard the event end) or the
    # runner stopped it
    assert all("ended by itself" in how or "was stopped" in how for how in lost), (lost, runners["dan"].err.read_text())
    assert "exit code 3" in " ".join(lost) and "freezing in handleGameMessage" in outputs["dan"]
    for name in ("ann", "bob"):
        assert "ERROR" not in outputs[name], outputs[name]
    assert our_processes(bots) == []


def test_the_entrant_runner_says_what_is_wrong_with_its_arguments():
    """Mistakes in the command are one clear line and exit code 2, before anything runs: as a process here, in
    process (the fast tier) in tests/test_command_checks.py."""
    def entrant(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "plyhall", "cosc322", "entrant", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    for args, words in ENTRANT_MISTAKES:
        done = entrant(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and "Traceback" not in done.stderr, (args, done.stderr)


# ----- seated in a game under way -----

def course_board(record: dict) -> list[int]:
    """The course's 121-entry board after the moves of ``record`` (seat 0 moves first: no mirroring)."""
    game = get_game("amazons")
    state = game.initial_state(**record["options"])
    for move in record["moves"]:
        state = game.apply(state, game.parse_move(move["move"], state))
    rows = game.encode_state(state, "cosc322")["board"]
    board = [0] * 121
    for r in range(1, 11):
        for c in range(1, 11):
            board[r * 11 + c] = rows[r - 1][c - 1]
    return board


@needs_javac
@pytest.mark.parametrize(("case", "seat", "before", "after"), [
    ("white-to-answer", 1, 1, 0),  # white's seat: the opponent (black) moved first; the bot answers
    ("black-to-move", 0, 2, 0),  # black's seat: it moved, the opponent answered; the bot moves at the start
    ("white-held", 1, 2, 1),  # white's seat, its move made: the bot hears of the game at the opponent's next move
])
def test_a_course_bot_seated_in_a_game_under_way_hears_of_it_at_its_turn(jar: Path, bots: Path,  # noqa: F811
                                                                       server: int, spawn,  # noqa: F811
                                                                       case: str, seat: int, before: int,
                                                                       after: int):
    """The bot's seat was taken by a test client that played ``before`` moves between the two seats (random legal
    ones) and left; the course bot logs in under that name and gets the seat back. Once it is its turn (after
    ``after`` more opponent moves) it gets what a course bot expects: white the board before the opponent's last
    move, the start and then that move; black the board and the start. It answers with a legal move, and its
    board (COSC322Test checks every opponent move against its own board) is the server's."""
    name = f"late-{case}"
    url = f"ws://127.0.0.1:{server}/ws"
    room = f"Late Lake {case}"
    rng = random.Random(seat * 10 + before)
    game = get_game("amazons")

    async def scenario() -> tuple[Run, str]:
        opponent = await login(url, f"early-{case}")
        held = await login(url, name, secret=f"{name}-password")
        try:
            await opponent.request({"type": "create_room", "game": "amazons", "name": room, "grace": 120,
                                    "time_control": {"per_move": 60}})
            await opponent.request({"type": "join", "room": room, "seat": 1 - seat})
            await held.request({"type": "join", "room": room, "seat": seat})
            await opponent.expect("game_start", room=room, timeout=30)
            state = game.initial_state()
            clients = {seat: held, 1 - seat: opponent}

            async def play() -> None:
                nonlocal state
                mover = game.to_move(state)
                move = rng.choice(game.legal_moves(state))
                await clients[mover].send({"type": "move", "room": room, "move": game.format_move(move, "algebraic")})
                await opponent.expect("moved", room=room, timeout=30)
                state = game.apply(state, move)

            for _ in range(before):
                await play()
            await held.close()
            await opponent.expect("player_away", room=room, timeout=30)
            run = java_bot(spawn, [jar, bots], "COSC322Test", name, server)
            await opponent.expect("player_back", room=room, timeout=60)
            if after:
                deadline = time.monotonic() + 60
                while "your bot hears of the game when it is its turn" not in run.err.read_text():
                    assert run.proc.poll() is None and time.monotonic() < deadline, run.err.read_text()
                    await asyncio.sleep(0.05)
                assert "start black=" not in run.out.read_text(), "nothing reaches the bot before its turn"
                for _ in range(after):
                    await play()
            answer = await opponent.expect("moved", room=room, timeout=60)
            assert answer["seat"] == seat, answer
            await opponent.send({"type": "resign", "room": room})
            over = await opponent.expect("game_over", room=room, timeout=30)
            return run, over["record"]
        finally:
            await opponent.close()

    run, record_id = asyncio.run(scenario())
    code, out, err = run.wait(60)
    assert code == 0, err
    assert "ERROR" not in out and "error:" not in err, out + err
    status, record = http_json(server, f"/api/games/{record_id}")
    assert status == 200 and len(record["moves"]) == before + after + 1 and record["moves"][-1]["seat"] == seat
    replay(record)
    black, white = record["players"]
    assert f"start black={black} white={white} room={room}" in out
    boards = BOARD_LINE.findall(out)
    assert [int(cell) for cell in boards[-1].split(",")] == course_board(record), "the bot's board is the server's"
    first = [int(cell) for cell in boards[0].split(",")]
    shown_before = before + after - (1 if seat == 1 else 0)  # white first sees the board before the last move
    assert first == course_board({**record, "moves": record["moves"][:shown_before]})


# ----- the guide -----

def guide_commands() -> list[str]:
    """The commands of docs/COSC322.md's "Run a class tournament", in order (every line of its sh blocks)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Run a class tournament")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        commands += [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return commands


@needs_javac
def test_the_guides_class_tournament_runs_as_written(tmp_path: Path, spawn):  # noqa: F811
    """docs/COSC322.md's "Run a class tournament", each command run by bash as written (long-running ones in the
    background, as in terminals of their own), in a class folder with three students' folders each holding the
    course-style bot as ubc/cosc322/COSC322Test.java. Only the port differs (the guide's 8765 becomes a free one)
    and PATH finds this checkout's ``plyhall``. The event ends with its standings, every game played. Its time is
    the guide's own: the jar built, three students' bots compiled, and a round robin of three JVM bots (they move at
    once, so the guide's 30 s clock costs nothing)."""
    commands = guide_commands()
    port = free_port()
    work = tmp_path / "class"
    for student in ("alice", "bob", "carol"):
        (work / student / "ubc" / "cosc322").mkdir(parents=True)
        shutil.copy(BOTS / "ubc" / "cosc322" / "COSC322Test.java", work / student / "ubc" / "cosc322")
    env = environment(port)
    del env["PLYHALL_URL"]
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    background: list[Run] = []
    organiser = None
    for number, written in enumerate(commands):
        command = written.replace("8765", str(port))
        folder = re.fullmatch(r"\(cd (\S+) && (.+)\)", command)  # a student's command, in a subshell
        cwd = work / folder.group(1) if folder else work
        command = folder.group(2) if folder else command
        if command.startswith("export "):
            key, _, value = command[len("export "):].partition("=")
            env[key] = value
        elif command.startswith("plyhall serve"):
            background.append(spawn("serve", ["bash", "-c", f"exec {command}"], env, cwd=cwd))
            wait_for_port(port, background[-1])
        elif command.startswith("plyhall cosc322 entrant"):
            background.append(spawn(f"entrant-{number}", ["bash", "-c", f"exec {command}"], env, cwd=cwd))
        elif command.startswith("plyhall tournament run"):
            organiser = spawn("organiser", ["bash", "-c", f"exec {command}"], env, cwd=cwd)
            assert organiser.wait(EVENT_TIMEOUT)[0] == 0, organiser.out.read_text() + organiser.err.read_text()
        else:
            done = subprocess.run(["bash", "-c", f"exec {command}"], cwd=cwd, env=env, capture_output=True,
                                  text=True, timeout=300)
            assert done.returncode == 0, f"{written}:\n{done.stdout}{done.stderr}"
            if command.startswith("plyhall tournament results"):
                results = done.stdout
    assert organiser is not None and results, commands
    assert "6 of 6 games played" in results and "Forfeits" not in results, results
    for student in ("alice", "bob", "carol"):
        assert re.search(rf"^\s+\d\s+{student}\s", results, re.M), results
    for run in background[1:]:
        code, out, err = run.wait(60)
        assert code == 0 and "the tournament class is finished" in out, out + err


def wait_for_port(port: int, run: Run) -> None:
    """Wait until the server started by the guide's command answers /healthz."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if http_json(port, "/healthz")[0] == 200:
                return
        except OSError:
            pass
        assert run.proc.poll() is None and time.monotonic() < deadline, run.err.read_text()
        time.sleep(0.1)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process groups, SIGINT and /proc")
def test_ctrl_c_stops_the_entrant_runner_and_its_bots_process_group(server: int, spawn, tmp_path: Path):  # noqa: F811
    """Ctrl-C (SIGINT) while a game runs: the runner stops the bot's whole process group (here a shell and the
    program it started) and says so, exit code 130."""
    async def create() -> None:
        organiser = await login(f"ws://127.0.0.1:{server}/ws", "organiser", organiser=ORGANISER)
        await organiser.request({"type": "tournament_create", "game": "amazons", "format": "round-robin",
                                 "name": "interrupted", "players": ["ivy", "jon"], "games_per_pairing": 1,
                                 "grace": 120, "start": True})
        await organiser.close()

    pids = tmp_path / "pids"
    bot = f"echo $$ > {pids}; sleep 600 & echo $! >> {pids}; wait"
    argv = [sys.executable, "-m", "plyhall", "cosc322", "entrant", "--tournament", "interrupted", "--name", "ivy",
            "--url", f"ws://127.0.0.1:{server}/ws", "--poll", "0.2", "--", "bash", "-c", bot]
    runner = spawn("runner-ivy", argv, environment(server), cwd=ROOT)
    asyncio.run(create())
    deadline = time.monotonic() + 60
    while not pids.exists() or len(pids.read_text().split()) < 2:
        assert runner.proc.poll() is None and time.monotonic() < deadline, runner.err.read_text()
        time.sleep(0.05)
    shell, sleeper = (int(pid) for pid in pids.read_text().split())
    runner.proc.send_signal(signal.SIGINT)
    code, out, err = runner.wait(30)
    assert code == 130, out + err
    assert "ivy: game 1 in interrupted 1.1: jon against ivy" in out, out
    assert f"stopped; the bot's process (pid {shell}) was stopped" in err, err
    for pid in (shell, sleeper):
        assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z", pid


@needs_javac
def test_the_runner_starts_a_bot_that_died_in_its_game_again_and_it_resumes_its_seat(jar: Path,  # noqa: F811
                                                                                     bots: Path,  # noqa: F811
                                                                                     server: int,
                                                                                     spawn):  # noqa: F811
    """CrashBot's process dies at each of its turns. The runner starts it again (twice) while the game runs; each
    fresh process gets its seat back and hears of the game at its turn, as a bot seated in a game under way; then
    the game goes on without it, and it loses on time. Its opponent plays through, the event ends. Its time is
    the JVMs started (two or three for CrashBot) and the 5 s clock that CrashBot runs out at the end."""
    runners = [entrant_runner(spawn, [jar, bots], server, name, main) for name, main in
               (("kim", "CrashBot"), ("lee", "COSC322Test"))]

    async def create() -> None:
        organiser = await login(f"ws://127.0.0.1:{server}/ws", "organiser", organiser=ORGANISER)
        await organiser.request({"type": "tournament_create", "game": "amazons", "format": "round-robin",
                                 "name": "class", "players": ["kim", "lee"], "games_per_pairing": 1, "grace": 60,
                                 "time_control": {"per_move": 5}, "start": True})
        await organiser.close()

    asyncio.run(create())
    (kim_code, kim, kim_err), (lee_code, lee, _) = (run.wait(EVENT_TIMEOUT) for run in runners)
    assert kim_code == 0 and lee_code == 0, kim + kim_err
    restarts = kim.count("while its game runs; starting it again (it resumes its seat)")
    assert 1 <= restarts <= 2, kim  # at most twice; the game may be over before a third start
    # every process heard of the game under way at its turn, as white: the board before lee's move, then the move
    assert kim.count("start black=lee white=kim room=class 1.1") == kim.count("crashing at my turn") >= 2, kim
    assert "kim: game 1 in class 1.1: lost (kim ran out of time); " in kim, kim
    assert "lee: game 1 in class 1.1: won (kim ran out of time)" in lee, lee
    assert re.search(r"\d+ moves? (are|is) played already: your bot hears of the game when it is its turn: as "
                     r"white, the board before the opponent's last move, the start, then that move", kim_err), \
        "a fresh process was seated in the game under way, and told how it hears of it as white (it plays white)"


@needs_javac
def test_a_bot_whose_password_is_wrong_is_not_started_again_and_the_runner_says_why(jar: Path,  # noqa: F811
                                                                                   bots: Path,  # noqa: F811
                                                                                   server: int,
                                                                                   spawn):  # noqa: F811
    """kim's name was claimed with its password; the runner's command gives another. The library ends with exit code
    4 (a login refused for good) and the runner stops at once, saying so, instead of starting the bot three times a
    game, every game, until each is forfeited as "did not come"."""
    url = f"ws://127.0.0.1:{server}/ws"

    async def claim_and_create() -> None:
        kim = await login(url, "kim", secret="kim-password")
        await kim.close()
        organiser = await login(url, "organiser", organiser=ORGANISER)
        await organiser.request({"type": "tournament_create", "game": "amazons", "format": "round-robin",
                                 "name": "class", "players": ["kim", "lee"], "games_per_pairing": 1, "grace": 5,
                                 "time_control": {"per_move": 5}, "start": True})
        await organiser.close()

    asyncio.run(claim_and_create())
    kim = entrant_runner(spawn, [jar, bots], server, "kim", "COSC322Test", password="kim-pasword")
    lee = entrant_runner(spawn, [jar, bots], server, "lee", "COSC322Test")
    code, out, err = kim.wait(120)
    assert code == 1, out + err
    assert "the name kim is claimed with another secret" in err  # the library's own line
    assert "game 1 in class 1.1: the server refused the bot's login (exit code 4;" in err, err
    assert "starting it again" not in out and out.count("; starting ") == 1, out
    code, out, _ = lee.wait(EVENT_TIMEOUT)
    assert code == 0 and "lee: game 1 in class 1.1: won by forfeit (kim did not come)" in out, out
    assert "the tournament class is finished: 1 game here, 1 point; in the standings: rank 1, 1 point from 1 game" \
        in out, out
    # an entrant started after the event is over says how it went for that name (it said "0 games here, 0 points")
    code, out, _ = entrant_runner(spawn, [jar, bots], server, "lee", "COSC322Test").wait(60)
    assert code == 0 and ("the tournament class is finished: 0 games here, 0 points; in the standings: rank 1, "
                          "1 point from 1 game") in out, out
    assert our_processes(bots) == []
