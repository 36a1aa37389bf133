"""Kaggle ConnectX agents as they are: what the agent is given (Kaggle's observation and configuration, with
attribute and key access), which function of the file is the agent, a bad answer resigned with the reason, and
``plyhall bot --kaggle`` on a real server — docs/BOTS.md's example verbatim, and Kaggle's own built-in agents
from the ``kaggle-environments`` package when it can be downloaded.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from client.kaggle import KaggleAgentPlayer, configuration, load_agent, observation
from client.player import Resign, Turn
from protocol.games import GAMES
from tests.helpers import http_json, plyhall, running_server

ROOT = Path(__file__).resolve().parent.parent
BOTS_DOC = (ROOT / "docs" / "BOTS.md").read_text(encoding="utf-8")
C4 = GAMES["connect4"]
KAGGLE_ENVIRONMENTS = "kaggle-environments==1.33.2"
CONNECTX = "kaggle_environments/envs/connectx/connectx.py"


def turn(*moves: str, per_move: float | None = None, time_left: float | None = None) -> Turn:
    state = C4.start(*moves)
    return Turn(game=C4, state=state, seat=C4.to_move(state), room="r", players=["a", "b"], moves=list(moves),
                time_left=time_left, per_move=per_move, increment=0.0)


def test_observation_and_configuration_as_kaggle_gives_them() -> None:
    now = turn("4", "4", "1", time_left=7.5, per_move=5.0)
    obs, config = observation(now), configuration(now)
    assert obs.board == obs["board"] and len(obs.board) == 42
    bottom = obs.board[35:]  # row-major, the top row first: the bottom row is last
    assert bottom == [1, 0, 0, 1, 0, 0, 0]
    assert obs.board[28:35] == [0, 0, 0, 2, 0, 0, 0]
    assert sum(obs.board[:28]) == 0
    assert obs.mark == 2 and obs.step == 3 and obs.remainingOverageTime == 0  # a per-move clock: no overage
    assert (config.columns, config.rows, config.inarow) == (7, 6, 4) == (config["columns"], config["rows"],
                                                                          config["inarow"])
    assert config.actTimeout == config.timeout == 5.0
    assert observation(turn()).mark == 1 and configuration(turn()).actTimeout == 2  # Kaggle's default
    with pytest.raises(AttributeError):
        _ = obs.no_such_field


def test_the_agent_is_the_last_callable_or_the_named_one(tmp_path: Path) -> None:
    agent = tmp_path / "submission.py"
    agent.write_text("import math\n\ndef helper(x):\n    return x\n\n"
                     "def my_agent(obs, config):\n    return helper(3)\n\nBOARD_SIZE = 42\n")
    assert load_agent(agent).__name__ == "my_agent"
    assert load_agent(agent, "helper").__name__ == "helper"
    with pytest.raises(ValueError, match="defines no function 'nope'; its callables: helper, my_agent"):
        load_agent(agent, "nope")
    broken = tmp_path / "broken.py"
    broken.write_text("def agent(obs, config):\n    return (\n")
    with pytest.raises(ValueError, match="failed to load"):
        load_agent(broken)
    with pytest.raises(ValueError, match="cannot read"):
        load_agent(tmp_path / "missing.py")


def test_one_parameter_agents_and_numpy_columns(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("import numpy as np\n\ndef act(observation):\n    return np.int64(observation.step % 7)\n")
    player = KaggleAgentPlayer(agent)
    player.warm_up()
    assert C4.notation(player.choose(turn("4", "5"))) == "3"  # 0-based column 2 is Plyhall's column 3


def test_a_bad_answer_resigns_with_the_reason(tmp_path: Path) -> None:
    full = ("1",) * 6
    agent = tmp_path / "agent.py"
    agent.write_text("def agent(obs, config):\n    return 0\n")
    with pytest.raises(Resign, match="column 0: the free columns are 1, 2, 3, 4, 5, 6"):
        KaggleAgentPlayer(agent).choose(turn(*full))  # column 1 (Kaggle's 0) is full
    agent.write_text("def agent(obs, config):\n    return 'left'\n")
    with pytest.raises(Resign, match="returned 'left': a column is an integer 0-6"):
        KaggleAgentPlayer(agent).choose(turn())
    agent.write_text("def agent(obs, config):\n    raise RuntimeError('out of ideas')\n")
    with pytest.raises(Resign, match="(?s)raised an exception.*out of ideas"):
        KaggleAgentPlayer(agent).choose(turn())


# On a real server ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with running_server(tmp_path_factory.mktemp("kaggle")) as port:
        yield port


def finished_game(port: int, room: str) -> dict:
    status, listing = http_json(port, "/api/games?limit=200")
    assert status == 200
    game = next(g for g in listing["games"] if g["room"] == room)
    assert game["status"] == "finished" and game["move_count"] >= 7
    return game


def play(port: int, room: str, first: list[str], second: list[str], cwd: Path) -> tuple[str, str]:
    url = f"ws://127.0.0.1:{port}/ws"
    procs = [plyhall(*args, "--room", room, "--games", "1", "--url", url, cwd=cwd) for args in (first, second)]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, f"{proc.args}\n{out}\n{err}"
        outputs.append(out)
    return outputs[0], outputs[1]


def test_the_docs_agent_runs_unchanged(server: int, tmp_path: Path) -> None:
    """docs/BOTS.md's agent file and command verbatim; the test adds only --url, a room and --games 1, and runs
    the command with this interpreter's ``plyhall`` instead of the README's virtual environment."""
    section = BOTS_DOC[BOTS_DOC.index("## Kaggle ConnectX agents"):]
    source = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    command = re.search(r"```sh\n(.*?)```", section, re.S).group(1).strip()
    (tmp_path / "agent.py").write_text(source, encoding="utf-8")
    args = shlex.split(command.removeprefix(".venv/bin/plyhall "))
    out, _ = play(server, "kaggle-doc", args, ["bot", "--game", "connect4", "--level", "random", "--name", "rnd"],
                  tmp_path)
    assert "Kaggle agent my_agent from agent.py ready" in out
    finished_game(server, "kaggle-doc")


@pytest.fixture(scope="module")
def connectx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Kaggle's connectx.py (its built-in agents), from the kaggle-environments wheel on PyPI (its dependencies,
    JAX and transformers among them, are far too heavy to install for a test: only the file is taken)."""
    folder = tmp_path_factory.mktemp("kaggle-wheel")
    fetched = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder),
                              KAGGLE_ENVIRONMENTS], capture_output=True, text=True, timeout=180)
    wheels = list(folder.glob("kaggle_environments-*.whl"))
    if fetched.returncode != 0 or not wheels:
        pytest.skip(f"cannot download {KAGGLE_ENVIRONMENTS} from PyPI: {fetched.stderr.strip()[-300:]}")
    with zipfile.ZipFile(wheels[0]) as wheel:  # the agents' file, and the specification it reads beside it
        for name in (CONNECTX, CONNECTX.replace(".py", ".json")):
            (folder / Path(name).name).write_bytes(wheel.read(name))
    return folder / "connectx.py"


def test_kaggles_own_agents_play_each_other(server: int, connectx: Path, tmp_path: Path) -> None:
    negamax = ["bot", "--game", "connect4", "--kaggle", str(connectx), "--agent", "negamax_agent", "--name", "negamax"]
    rand = ["bot", "--game", "connect4", "--kaggle", str(connectx), "--agent", "random_agent", "--name", "kag-rnd"]
    out_negamax, out_random = play(server, "kaggle-own", negamax, rand, tmp_path)
    assert "Kaggle agent negamax_agent from connectx.py ready" in out_negamax
    assert "Kaggle agent random_agent from connectx.py ready" in out_random
    finished_game(server, "kaggle-own")


def test_mark_one_is_whoever_moved_first_as_on_kaggle() -> None:
    """In the second game of a series seat 1 moves first: it is mark 1 and its stones are 1s, as on Kaggle."""
    state = C4.initial_state(first=1)
    first = Turn(game=C4, state=state, seat=1, room="r", players=["a", "b"], moves=[], time_left=50.0, per_move=None,
                 increment=0.0)
    assert observation(first).mark == 1 and observation(first).remainingOverageTime == 50.0
    after = C4.apply(state, C4.parse_move("4", state))
    second = Turn(game=C4, state=after, seat=0, room="r", players=["a", "b"], moves=["4"], time_left=None,
                  per_move=None, increment=0.0)
    obs = observation(second)
    assert obs.mark == 2 and obs.board[35 + 3] == 1  # seat 1's stone is mark 1's


async def test_an_agent_that_never_answers_loses_the_move_not_the_bot(tmp_path: Path) -> None:
    """An agent stuck in a loop: once its clock (and a little grace) has run out its process is replaced and the
    move given up (the game is lost on time, as on Kaggle); the next turn gets an answer from the fresh process."""
    from client.player import NoMove
    from client.thinker import Thinker

    agent = tmp_path / "stuck.py"
    agent.write_text("def agent(obs, config):\n"
                     "    while obs.step == 0:\n"
                     "        pass\n"
                     "    return 3\n")
    thinker = Thinker(KaggleAgentPlayer(agent), "process")
    try:
        await thinker.warm_up()
        with pytest.raises(NoMove, match="did not answer"):
            await thinker.choose(turn(time_left=0.2))
        await thinker.warm_up()  # the fresh process started (two interpreters: no clock of a turn to decide it)
        move = await thinker.choose(turn("4", time_left=5.0))
        assert C4.notation(move) == "4"  # column 3 of Kaggle's 0-6
    finally:
        thinker.close()


# Agents that end their own process (issue 41) -------------------------------------------------------------------------

EXITS = {
    "sys.exit": "sys.exit(3)",
    "os._exit": "os._exit(5)",
    "KeyboardInterrupt": "raise KeyboardInterrupt",
}
EXIT_REASONS = {"sys.exit": "called sys.exit(3)", "os._exit": "exited with code 5",
                "KeyboardInterrupt": "raised KeyboardInterrupt"}


def exiting_agent(folder: Path, how: str) -> Path:
    """An agent that, in its first game only, starts a child that sleeps (its pid noted in ``pids``), then ends as
    ``how`` says; afterwards (a marker file says so) it plays the first free column."""
    agent = folder / "agent.py"
    agent.write_text(
        "import os, subprocess, sys\n"
        "HERE = os.path.dirname(os.path.abspath(__file__))\n"
        "def agent(obs, config):\n"
        "    marker = os.path.join(HERE, 'exited')\n"
        "    if not os.path.exists(marker):\n"
        "        open(marker, 'w').close()\n"
        "        child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1000)'])\n"
        "        with open(os.path.join(HERE, 'pids'), 'a') as f:\n"
        "            f.write(f'{child.pid}\\n')\n"
        f"        {EXITS[how]}\n"
        "    return next(c for c in range(7) if obs.board[c] == 0)\n", encoding="utf-8")
    return agent


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("how", list(EXITS))
def test_an_agent_that_exits_loses_its_game_and_its_children_die_with_it(tmp_path: Path, how: str) -> None:
    from tests.helpers import poll_until

    player = KaggleAgentPlayer(exiting_agent(tmp_path, how))
    try:
        player.warm_up()
        with pytest.raises(Resign, match=re.escape(EXIT_REASONS[how])):
            player.choose(turn())
        child = int((tmp_path / "pids").read_text().split()[0])
        assert poll_until(lambda: gone(child), timeout=10)  # killed with the agent's process group
        assert C4.notation(player.choose(turn("4"))) == "1"  # the next game: a fresh agent plays on
    finally:
        player.close()


@pytest.mark.parametrize("how", list(EXITS))
def test_a_bot_whose_agent_exits_plays_its_next_game(server: int, tmp_path: Path, how: str) -> None:
    agent = exiting_agent(tmp_path, how)
    url = f"ws://127.0.0.1:{server}/ws"
    room = f"kaggle-exit-{how.replace('.', '-').lower()}"
    procs = [plyhall("bot", "--game", "connect4", *flags, "--room", room, "--series", "2", "--games", "2",
                     "--url", url, cwd=tmp_path)
             for flags in (["--kaggle", str(agent), "--name", f"quitter{len(how)}"],
                           ["--level", "random", "--name", f"steady{len(how)}"])]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, f"{proc.args}\n{out}\n{err}"  # the whole bot used to die with its agent
        outputs.append(out)
    assert re.search(r"resigning game in .*: the agent .*" + re.escape(EXIT_REASONS[how]), outputs[0])
    # the room numbers its two games, and the bot counts its own beside them
    assert re.search(r"^game 1 in .*: lost against .*; quitter\d+'s game 1 of 2, score ", outputs[0], re.M), outputs[0]
    assert re.search(r"^game 2 in .*; quitter\d+'s game 2 of 2, score ", outputs[0], re.M), outputs[0]
    assert all(gone(int(pid)) for pid in (tmp_path / "pids").read_text().split())


def test_a_long_traceback_still_resigns_with_what_was_raised(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("def deeper(n):\n    return deeper(n + 1)\n\ndef agent(obs, config):\n    return deeper(0)\n")
    player = KaggleAgentPlayer(agent)
    try:
        with pytest.raises(Resign, match="RecursionError"):  # the traceback's end, not 'the agent ended its process'
            player.choose(turn())
    finally:
        player.close()
