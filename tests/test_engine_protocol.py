"""The stdio engine protocol (docs/ENGINE-PROTOCOL.md) as the driver speaks it: the handshake, the position
block, illegal moves sent back, a crashing engine restarted once and then resigned, a hanging one left to lose
on time, one that will not start stopped with a clear error — first against a scriptable Python engine without
a server, then as ``plyhall bot --engine`` processes on a real ``plyhall serve``, with the C and Java example
engines when their compilers are present.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from client.engine import EngineError, EnginePlayer, split_command
from client.player import GameResult, NoMove, Resign, Turn
from protocol.games import GAMES
from tests.helpers import child_pids, http_json, plyhall, poll_until, running_server

ROOT = Path(__file__).resolve().parent.parent
FAKE = Path(__file__).resolve().parent / "engines" / "fake_engine.py"
DOC = (ROOT / "docs" / "ENGINE-PROTOCOL.md").read_text(encoding="utf-8")


def fake(*flags: str) -> list[str]:
    return [sys.executable, str(FAKE), *flags]


def turn(game_id: str = "connect4", moves: tuple[str, ...] = (), room: str = "r1",
         time_left: float | None = None) -> Turn:
    game = GAMES[game_id]
    state = game.start(*moves)
    return Turn(game=game, state=state, seat=game.to_move(state), room=room, players=["ann", "bob"],
                moves=list(moves), time_left=time_left, per_move=None, increment=0.0)


def sent(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines()


@pytest.fixture
def said() -> list[str]:
    return []


def relayed(said: list[str], text: str, within: float = 10.0) -> bool:
    """True once a line holding ``text`` reached the bot's log: the engine's stderr is relayed by a thread of
    its own, so a line may land a moment after the move it explains (``within`` seconds at most)."""
    return poll_until(lambda: any(text in line for line in said), timeout=within, every=0.01)


def test_handshake_and_position_block(tmp_path: Path, said: list[str]) -> None:
    log = tmp_path / "engine.log"
    player = EnginePlayer(fake("--log", str(log), "--coords", "cosc322"), "amazons", say=said.append)
    try:
        assert player.warm_up() == "engine fake-engine"
        assert player.identity.coords == "cosc322" and player.identity.legal
        now = turn("amazons", ("d10-d7/g7",), time_left=12.5)
        move = player.choose(now)
        assert GAMES["amazons"].apply(now.state, move)  # a legal move of the reference rules
        lines = sent(log)
        assert lines[0] == "plyhall 1"
        assert lines[1] == "newgame amazons 1 ann bob"
        assert lines[2:5] == ["position", "game amazons", "coords cosc322"]
        picture = int(lines[5].split()[1])
        assert "\n".join(lines[6:6 + picture]) == GAMES["amazons"].render(now.state)
        rest = lines[6 + picture:]
        state = json.loads(rest[0].removeprefix("state "))
        assert state == GAMES["amazons"].encode_state(now.state, "cosc322")
        assert rest[1:3] == ["moves 1", "d10-d7/g7"]  # moves from the start: notation
        legal_count = int(rest[3].split()[1])
        assert legal_count == len(GAMES["amazons"].legal_moves(now.state))
        assert all(json.loads(text)["queen"] for text in rest[4:4 + legal_count])  # cosc322: structured JSON
        assert rest[4 + legal_count:] == ["time 12500 -1 0", "go"]
        assert "engine info: depth 1 score 0" in said
    finally:
        player.close()


def test_illegal_moves_are_sent_back_and_three_resign(tmp_path: Path, said: list[str]) -> None:
    log = tmp_path / "engine.log"
    player = EnginePlayer(fake("--log", str(log), "--illegal", "1"), "connect4", say=said.append)
    try:
        move = player.choose(turn())
        assert GAMES["connect4"].notation(move) in "1234567"
        refusals = [line for line in sent(log) if line.startswith("illegal ")]
        assert len(refusals) == 1 and "z99" in refusals[0]  # the reason names what was wrong
        assert relayed(said, "fake: refused: ")  # the engine's stderr is in the bot's log
    finally:
        player.close()
    stubborn_log = tmp_path / "stubborn.log"
    stubborn = EnginePlayer(fake("--log", str(stubborn_log), "--illegal", "3"), "connect4", say=said.append)
    try:
        with pytest.raises(Resign, match="3 illegal moves"):
            stubborn.choose(turn())
    finally:
        stubborn.close()
    words = [line.split()[0] for line in sent(stubborn_log) if line.split()[0] in ("go", "illegal")]
    assert words == ["go", "illegal", "go", "illegal", "go", "illegal"]  # no fourth go: nothing left unanswered


def test_an_illegal_move_is_explained_to_the_engine_in_its_own_squares(tmp_path: Path, said: list[str]) -> None:
    """A cosc322 engine was told "d1 is not one of your queens" for the [1, 4] it sent: squares it never uses."""
    log = tmp_path / "engine.log"
    wrong = '{"queen":[1,4],"to":[2,4],"arrow":[3,4]}'  # d1: a white queen, and black moves first
    player = EnginePlayer(fake("--log", str(log), "--coords", "cosc322", "--illegal", "1", "--illegal-move", wrong),
                          "amazons", say=said.append)
    try:
        player.choose(turn("amazons"))
        assert [line for line in sent(log) if line.startswith("illegal ")] == [
            "illegal [1, 4] is not one of your queens: it holds a white queen"]
        assert f"the engine's move {wrong!r} is illegal: [1, 4] is not one of your queens: it holds a white queen" \
            in said
    finally:
        player.close()


def test_a_crash_restarts_once_then_resigns(tmp_path: Path, said: list[str]) -> None:
    marker = tmp_path / "crashed"
    once = EnginePlayer(fake("--crash-at-move", "2", "--crash-once", str(marker)), "connect4", say=said.append)
    try:
        assert once.choose(turn(moves=("4", "4")))  # crashed, restarted, answered
        assert marker.exists() and any("restarting it" in line for line in said)
        assert relayed(said, "crashing on purpose")
        assert any("exited with code 3" in line and "crashing on purpose" in line for line in said)
    finally:
        once.close()
    always = EnginePlayer(fake("--crash-at-move", "2"), "connect4", say=said.append)
    try:
        assert always.choose(turn(moves=("4",)))
        with pytest.raises(Resign, match="crashed twice"):
            always.choose(turn(moves=("4", "4")))
        # the next game starts with a running engine and one restart to spare
        always.game_over(GameResult("r1", 1, 0, "seat 1 resigned", ["ann", "bob"], None))
        assert always.choose(turn(moves=("3",), room="r2"))
    finally:
        always.close()


def test_an_engine_that_crashes_in_every_game_stops_the_bot(said: list[str]) -> None:
    """Resigning game after game would go on for ever (rated losses on a ladder): after three games in a row lost to
    crashes the bot stops with an error that says so."""
    player = EnginePlayer(fake("--crash-at-move", "0"), "connect4", say=said.append)
    try:
        for game in range(2):
            with pytest.raises(Resign, match="crashed twice"):
                player.choose(turn(room=f"r{game}"))
            player.game_over(GameResult(f"r{game}", 0, 1, "seat 0 resigned", ["ann", "bob"], None))
        with pytest.raises(EngineError, match="crashed twice in each of 3 games in a row; the bot stops"):
            player.choose(turn(room="r2"))
    finally:
        player.close()


def test_a_hanging_engine_loses_on_time_and_is_replaced(said: list[str]) -> None:
    player = EnginePlayer(fake("--hang-at-move", "1"), "connect4", say=said.append, grace=0.2)
    try:
        player.warm_up()
        first = player._process
        with pytest.raises(NoMove):
            player.choose(turn(moves=("4",), time_left=0.1))
        assert first is not None and first.proc.poll() is not None  # the hung process was stopped
        assert any("did not answer before its clock ran out" in line for line in said)
        assert player.choose(turn())  # a fresh engine plays the next game
    finally:
        player.close()


def test_an_engine_whose_game_ended_while_it_thought_is_replaced_at_once(said: list[str]) -> None:
    """A hung engine was waited for until its clock and the grace were over, whatever the server said: in a series
    that was the next game's time, lost as well. Told that its game ended (abandon, from the bot's event loop), it
    gives up the turn at once, and a fresh engine takes the next one."""
    player = EnginePlayer(fake("--hang-at-move", "1"), "connect4", say=said.append)
    try:
        player.warm_up()
        hung = player._process
        done: list[BaseException] = []

        def think() -> None:
            try:
                player.choose(turn(moves=("4",), time_left=3600.0))  # no clock would end this wait
            except BaseException as exc:  # noqa: BLE001 - what the thread met, for the test to look at
                done.append(exc)

        thread = threading.Thread(target=think)
        thread.start()
        assert poll_until(lambda: hung is not None and hung.lines.qsize() == 0 and player._told is not None,
                          timeout=30, every=0.01)
        player.abandon()
        thread.join(30)
        assert not thread.is_alive() and isinstance(done[0], NoMove) and "its game ended" in str(done[0])
        assert hung is not None and hung.proc.poll() is not None  # the hung process was stopped
        assert any("started again for the next turn" in line for line in said)
        assert player.choose(turn())  # the fresh engine plays the next game
    finally:
        player.close()


def test_each_game_is_told_by_its_record_and_a_restarted_engine_gets_no_old_result(tmp_path: Path,
                                                                                      said: list[str]) -> None:
    """Games were told apart by their room: an engine started again after a timeout was sent the ``result`` of a game
    it never saw, and a room's next game after a server that started again on another database (a new record, no
    game_over) got no ``newgame``. Now: ``newgame`` for each record the running engine has not been told of, and a
    result only for the game it was told of."""
    log = tmp_path / "engine.log"
    player = EnginePlayer(fake("--log", str(log), "--hang-at-move", "1"), "connect4", say=said.append, grace=0.2)

    def of(record: str, *moves: str, time_left: float | None = None) -> Turn:
        made = turn(moves=moves, room="r", time_left=time_left)
        made.record = record
        return made

    try:
        assert player.choose(of("g1"))
        with pytest.raises(NoMove):  # hangs: restarted
            player.choose(of("g1", "4", time_left=0.1))
        player.game_over(GameResult("r", 1, 0, "bob ran out of time", ["ann", "bob"], "g1"))  # not the new one's
        assert player.choose(of("g2"))  # the room's next game
        assert player.choose(of("g3"))  # the same room after a server started on another database
    finally:
        player.close()
    told = [line.split()[0] for line in sent(log) if line.split()[0] in ("newgame", "result")]
    assert told == ["newgame", "newgame", "newgame"], told


def test_an_engine_that_stops_reading_loses_on_time_and_never_blocks_the_bot(said: list[str]) -> None:
    """An engine that no longer reads its input, sent positions bigger than a pipe holds (Amazons with its legal
    moves as cosc322 JSON: about 90 KB): the driver waits only for its clock, and stopping it waits for nothing."""
    player = EnginePlayer(fake("--deaf", "--coords", "cosc322"), "amazons", say=said.append, grace=0.2)
    try:
        player.warm_up()
        player.identity.legal = True  # as after 'option legal'
        with pytest.raises(NoMove):
            player.choose(turn("amazons", time_left=0.3))
        with pytest.raises(NoMove):
            player.choose(turn("amazons", ("d10-d7/g7",), time_left=0.3))  # the fresh engine is deaf too
    finally:
        player.close()
    assert player._process is None


def test_an_engine_that_will_not_start_is_a_clear_error(said: list[str]) -> None:
    with pytest.raises(EngineError, match=r"exited with code 5 before it said 'ready'.*failing at start"):
        EnginePlayer(fake("--exit-at-start", "5"), "connect4", say=said.append).warm_up()
    before = set(threading.enumerate())
    never = EnginePlayer(fake("--never-ready"), "connect4", say=said.append, start_timeout=0.5)
    with pytest.raises(EngineError, match="did not say 'ready' within 0.5 s"):
        never.warm_up()
    with pytest.raises(EngineError, match=r"plays only quarto santorini \(its 'id games' line\), not connect4"):
        EnginePlayer(fake("--games", "quarto santorini"), "connect4", say=said.append).warm_up()
    with pytest.raises(EngineError, match=r"'id games' line names chess connect-four, which are no games here: the "
                                          r"games are .*connect4"):  # it said "plays only chess connect-four"
        EnginePlayer(fake("--games", "chess connect-four"), "connect4", say=said.append).warm_up()
    # the failed start stopped the engine it started (and its pipe threads): nothing is left running
    assert not [pid for pid in child_pids(os.getpid()) if str(FAKE) in Path(f"/proc/{pid}/cmdline").read_text()]
    def pipe_threads() -> list[threading.Thread]:
        return [t for t in set(threading.enumerate()) - before if t.name.startswith("engine-")]

    poll_until(lambda: not pipe_threads(), timeout=10)  # they end once they read the closed pipes' ends
    assert not pipe_threads()
    with pytest.raises(ValueError, match="not on PATH"):
        split_command("no-such-engine-anywhere --fast")
    with pytest.raises(ValueError, match="does not exist"):
        split_command("./no/such/engine")


# On a real server ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with running_server(tmp_path_factory.mktemp("engines")) as port:
        yield port


def bot(port: int, name: str, room: str, *flags: str) -> subprocess.Popen:
    return plyhall("bot", "--name", name, "--room", room, "--games", "1", "--url", f"ws://127.0.0.1:{port}/ws",
                   *flags)


def finish(*procs: subprocess.Popen) -> list[str]:
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, f"{proc.args}\n{out}\n{err}"
        outputs.append(out)
    return outputs


def recorded(port: int, room: str) -> dict:
    status, games = http_json(port, "/api/games?limit=200")
    assert status == 200
    rows = games["games"] if isinstance(games, dict) else games
    game = next(g for g in rows if g["room"] == room)
    status, full = http_json(port, f"/api/games/{game['id']}")
    assert status == 200
    return full


def test_crashing_and_hanging_engines_on_a_server(server: int, tmp_path: Path) -> None:
    """Four bot processes, two games. Both bots of the hanging game ask for 1 s a move, so whichever of them makes
    the room, the hung engine loses in seconds (it waited out the default 30 s when its bot made the room)."""
    game = ["--game", "connect4"]
    opponent = bot(server, "steady", "crashes", *game, "--level", "random", "--per-move", "20")
    crasher = bot(server, "crasher", "crashes", *game, "--engine", " ".join(fake("--crash-at-move", "4")))
    out_steady, out_crasher = finish(opponent, crasher)
    assert "restarting it" in out_crasher and "crashed twice" in out_crasher
    assert "lost against steady" in out_crasher and "won against crasher" in out_steady
    assert "resigned" in recorded(server, "crashes")["reason"]

    opponent = bot(server, "patient", "hangs", *game, "--level", "random", "--per-move", "1")
    hanger = bot(server, "hanger", "hangs", *game, "--per-move", "1", "--engine",
                 " ".join(fake("--hang-at-move", "2")))
    _, out_hanger = finish(opponent, hanger)
    # given up on as its game ended (or, should its clock's end come first, on time): replaced either way
    assert "game ended while it thought" in out_hanger or "did not answer before its clock ran out" in out_hanger
    assert "lost against patient" in out_hanger
    assert "time" in recorded(server, "hangs")["reason"]


def test_bad_engine_commands_are_clear_errors(server: int) -> None:
    url = f"ws://127.0.0.1:{server}/ws"
    missing = plyhall("bot", "--game", "connect4", "--name", "x1", "--engine", "./nowhere/engine", "--url", url)
    _, err = missing.communicate(timeout=60)
    assert missing.returncode == 2 and "does not exist" in err
    both = plyhall("bot", "--game", "connect4", "--name", "x2", "--engine", "x", "--level", "master", "--url", url)
    _, err = both.communicate(timeout=60)
    assert both.returncode == 2 and "cannot go together" in err
    dead = plyhall("bot", "--game", "connect4", "--name", "x3", "--url", url,
                   "--engine", " ".join(fake("--exit-at-start", "7")))
    _, err = dead.communicate(timeout=60)
    assert dead.returncode == 1 and "exited with code 7 before it said 'ready'" in err


def doc_commands() -> list[str]:
    """The shell commands of docs/ENGINE-PROTOCOL.md's "Two example engines" section, in order."""
    section = DOC[DOC.index("## Two example engines"):DOC.index("## Writing your own")]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("javac") is None,
                    reason="the example engines need a C compiler (cc) and a JDK (javac)")
def test_the_docs_example_engines_play_each_other(server: int, tmp_path: Path) -> None:
    """The doc's commands verbatim, in a scratch folder holding a link to examples/, with two changes: the
    ``plyhall`` of the README's virtual environment is this interpreter's, and the bots get this server's
    --url, a room of their own and one game."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    commands = doc_commands()
    builds = [c for c in commands if not c.startswith(".venv/bin/plyhall ")]
    runs = [c for c in commands if c.startswith(".venv/bin/plyhall ")]
    assert len(builds) == 2 and len(runs) == 2, commands
    for command in builds:
        subprocess.run(command, shell=True, cwd=tmp_path, check=True, timeout=120)
    procs = []
    for command in runs:
        import shlex

        args = shlex.split(command.removeprefix(".venv/bin/plyhall "))
        procs.append(plyhall(*args, "--room", "examples", "--games", "1", "--url",
                             f"ws://127.0.0.1:{server}/ws", cwd=tmp_path))
    outputs = finish(*procs)
    assert "engine random-c ready" in outputs[0] and "engine greedy-java ready" in outputs[1]
    game = recorded(server, "examples")
    assert game["status"] == "finished" and len(game["moves"]) >= 7


def test_the_docs_position_block_is_what_the_driver_sends() -> None:
    """docs/ENGINE-PROTOCOL.md's example block, from ``position`` to ``go``, is the driver's own output."""
    shown = DOC[DOC.index("```text\nposition\n") + len("```text\n"):]
    shown = shown[:shown.index("```")].splitlines()
    player = EnginePlayer(fake(), "connect4")
    player.identity.legal = True  # as after an 'option legal' handshake
    game = GAMES["connect4"]
    now = Turn(game=game, state=game.start("4"), seat=1, room="r", players=["ann", "bob"], moves=["4"],
               time_left=29.874, per_move=30.0, increment=0.0)
    assert shown == [*player.position(now), "go"]


def test_a_bot_whose_engine_crashes_in_every_game_resigns_the_last_before_it_stops(server: int) -> None:
    """It stopped in its third game without a word to the server, and its opponent waited out the grace period (30
    s by default) for a player who would never come back: it resigns that game, then stops with the error. The
    opponent's room is a series, so the three games are one room's; its clock is long, so no flag decides them."""
    game = ["--game", "connect4", "--series", "3", "--per-move", "600"]  # (whichever bot makes the room)
    opponent = bot(server, "witness", "breaks", *game, "--games", "3", "--level", "random")
    broken = plyhall("bot", "--name", "breaker", "--room", "breaks", "--games", "3", "--url",
                     f"ws://127.0.0.1:{server}/ws", *game, "--engine", " ".join(fake("--crash-at-move", "0")))
    out, err = broken.communicate(timeout=240)
    assert broken.returncode == 1 and "crashed twice in each of 3 games in a row; the bot stops" in out + err
    out_witness, _ = opponent.communicate(timeout=60)  # its third game ended at once: it played all three
    assert opponent.returncode == 0, out_witness
    status, games = http_json(server, "/api/games?limit=200")
    reasons = [g["reason"] for g in games["games"] if g["room"] == "breaks"]
    assert len(reasons) == 3 and all("resigned" in reason for reason in reasons), reasons
