"""The COSC 322 course library (client/java, built by ``plyhall cosc322 jar``): course bots compile unchanged
against it and play whole games on a real server.

Everything runs as a student would run it: ``plyhall cosc322 jar`` builds the jar (once for the module),
``javac`` compiles the course-style bots of tests/cosc322_bots against it, and ``java -Djava.awt.headless=true``
runs them, against each other and against ``plyhall bot``, on a ``plyhall serve`` process with its own port
and database. The server runs with ``--illegal-move lose``, so an illegal move would end a game at once. Each
game is then checked against the server's record: finished by play ("no legal move"), every move legal (the
record is replayed with the reference rules), the final board each bot printed equal to the recorded final
position (mirrored when the second seat moved first), and the move count the bot printed equal to the record's.

The tests skip only when ``javac`` (a JDK) is missing; the one about a missing javac always runs.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from protocol.games import get_game
from protocol.games.amazons import first_option
from tests.conftest import free_port
from tests.helpers import http_json, login, start_server, stop

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "cosc322_bots"
DOC = ROOT / "docs" / "COSC322.md"
JAVAC = shutil.which("javac")
JAVA = shutil.which("java")
JAVAP = shutil.which("javap")
needs_javac = pytest.mark.skipif(
    JAVAC is None or JAVA is None,
    reason="javac and java (a JDK 11 or newer) are not installed: the COSC 322 library is Java "
           "(Debian/Ubuntu: apt install openjdk-17-jdk-headless)")
GAME_TIMEOUT = 150  # seconds; a random Amazons game between these bots takes a few
BOARD_LINE = re.compile(r"^board game=(\d+) move=(\d+): \[([0-9, ]*)\]$", re.M)


# ----- building -----

@pytest.fixture(scope="module")
def jar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The jar ``plyhall cosc322 jar -o`` builds."""
    if JAVAC is None:
        pytest.skip(needs_javac.kwargs["reason"])
    out = tmp_path_factory.mktemp("jar") / "plyhall-cosc322.jar"
    done = subprocess.run([sys.executable, "-m", "plyhall", "cosc322", "jar", "-o", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"wrote {out}" in done.stdout
    return out


@pytest.fixture(scope="module")
def bots(jar: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test bots' classes, compiled against the jar as a student compiles a course bot."""
    out = tmp_path_factory.mktemp("bots")
    sources = sorted(str(path) for path in BOTS.rglob("*.java"))
    done = subprocess.run([JAVAC, "-Xlint:none", "-cp", str(jar), "-d", str(out), *sources], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A ``plyhall serve`` process for the module: its port."""
    port = free_port()
    server = start_server(tmp_path_factory.mktemp("cosc322") / "cosc322.db", port, "--illegal-move", "lose")
    yield port
    stop(server)


# ----- running bots -----

@dataclass
class Run:
    """A process started by a test, its output going to files (so that no pipe ever fills up)."""

    label: str
    proc: subprocess.Popen
    out: Path
    err: Path

    def wait(self, timeout: float = GAME_TIMEOUT) -> tuple[int | None, str, str]:
        """Exit code (None after a hang, when it is stopped), standard output and error."""
        try:
            code: int | None = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            stop(self.proc)
            code = None
        return code, self.out.read_text(), self.err.read_text()

    def wait_for(self, text: str, timeout: float = 60) -> None:
        """Wait until the process has written ``text`` on standard error."""
        deadline = time.monotonic() + timeout
        while text not in self.err.read_text():
            assert self.proc.poll() is None, f"{self.label} ended early:\n{self.err.read_text()}"
            assert time.monotonic() < deadline, f"{self.label} never said {text!r}:\n{self.err.read_text()}"
            time.sleep(0.05)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator:
    """Start processes whose output goes to files in ``tmp_path``; every one is stopped at the end."""
    runs: list[Run] = []

    def start(label: str, argv: list[str], env: dict[str, str], cwd: Path | None = None) -> Run:
        out, err = tmp_path / f"{label}.out", tmp_path / f"{label}.err"
        with out.open("w") as stdout, err.open("w") as stderr:
            proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env, cwd=cwd or tmp_path)
        run = Run(label, proc, out, err)
        runs.append(run)
        return run

    yield start
    for run in runs:
        stop(run.proc)


def environment(port: int, **settings: str) -> dict[str, str]:
    """This process's environment without any PLYHALL_ setting, plus the server's address and ``settings``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PLYHALL_")}
    env["PLYHALL_URL"] = f"ws://127.0.0.1:{port}/ws"
    env.update(settings)
    return env


def java_bot(spawn, classpath: list[Path], main: str, name: str, port: int, **settings: str) -> Run:
    """``java -Djava.awt.headless=true -cp JAR:BOTS ubc.cosc322.MAIN NAME PASSWORD``."""
    argv = [JAVA, "-Djava.awt.headless=true", "-cp", os.pathsep.join(map(str, classpath)), f"ubc.cosc322.{main}", name,
            f"{name}-password"]
    return spawn(re.sub(r"\W", "_", name), argv, environment(port, **settings))


def python_bot(spawn, name: str, port: int) -> Run:
    """``plyhall bot --level random``, seeking one Amazons game."""
    argv = [sys.executable, "-m", "plyhall", "bot", "--game", "amazons", "--level", "random", "--name", name,
            "--url", f"ws://127.0.0.1:{port}/ws", "--games", "1", "--seed", "7"]
    return spawn(name, argv, environment(port), cwd=ROOT)


# ----- checking games -----

def records(port: int, name: str) -> list[dict]:
    """Every game ``name`` played on the server, oldest first, with its moves."""
    status, body = http_json(port, f"/api/games?player={name}&status=all&limit=50")
    assert status == 200, body
    games = []
    for summary in reversed(body["games"]):
        status, record = http_json(port, f"/api/games/{summary['id']}")
        assert status == 200, record
        games.append(record)
    return games


def final_board(record: dict) -> list[int]:
    """The course's 121-entry board at the end of ``record``, replayed with the reference rules (each move
    must be legal), as a course bot sees it: mirrored, colours swapped, when the second seat moved first."""
    game = get_game("amazons")
    state = game.initial_state(**record["options"])
    for move in record["moves"]:
        state = game.apply(state, game.parse_move(move["move"], state))
    outcome = game.outcome(state)
    assert outcome is not None and outcome.winner == record["winner"], (outcome, record["winner"])
    rows = game.encode_state(state, "cosc322")["board"]
    mirrored = first_option(record["options"].get("first", 0)) == 1
    board = [0] * 121
    for r in range(1, 11):
        for c in range(1, 11):
            value = rows[r - 1][c - 1]
            if mirrored:
                board[(11 - r) * 11 + c] = {1: 2, 2: 1}.get(value, value)
            else:
                board[r * 11 + c] = value
    return board


def check_played(record: dict, players: set[str]) -> None:
    """``record`` is a game between ``players`` played to its end, every move in turn."""
    assert set(record["players"]) == players
    assert record["status"] == "finished", record["reason"]
    assert record["reason"] == f"{record['players'][1 - record['winner']]} has no legal move", record["reason"]
    assert record["move_count"] == len(record["moves"]) >= 20
    first = first_option(record["options"].get("first", 0))
    assert [move["seat"] for move in record["moves"]] == [(first + i) % 2 for i in range(len(record["moves"]))]


def last_boards(out: str) -> dict[int, tuple[int, list[int]]]:
    """The last board a test bot printed in each game: game number -> (moves it counted, board)."""
    boards = {}
    for game, moves, cells in BOARD_LINE.findall(out):
        boards[int(game)] = (int(moves), [int(cell) for cell in cells.split(",")])
    return boards


def check_bot(run: Run, games: list[dict], code: int | None, out: str, err: str, calm: bool = True) -> None:
    """The bot ran clean to its end (``calm``: without a warning), and the last board it printed in each game
    is the game's final board."""
    assert code == 0, f"{run.label} exited with {code}:\n{err}\n{out[-2000:]}"
    assert "ERROR" not in out, out
    assert "Exception" not in err and "refused your move" not in err and "error:" not in err, err
    assert "warning" not in err or not calm, err
    assert "done (" in err, err
    boards = last_boards(out)
    assert sorted(boards) == list(range(1, len(games) + 1)), sorted(boards)
    for number, record in enumerate(games, start=1):
        moves, board = boards[number]
        assert moves == record["move_count"], (run.label, number, moves, record["move_count"])
        assert board == final_board(record), f"{run.label}: the board of game {number} differs from the server's"


# ----- the API -----

API = {
    "ygraph.ai.smartfox.games.GamePlayer": ("public abstract class ygraph.ai.smartfox.games.GamePlayer", [
        "public ygraph.ai.smartfox.games.GamePlayer();",
        "public abstract void onLogin();",
        "public abstract boolean handleGameMessage(java.lang.String, "
        "java.util.Map<java.lang.String, java.lang.Object>);",
        "public abstract java.lang.String userName();",
        "public abstract ygraph.ai.smartfox.games.GameClient getGameClient();",
        "public abstract ygraph.ai.smartfox.games.BaseGameGUI getGameGUI();",
        "public abstract void connect();",
        "public void Go();",
        "public void postSetup();",
        "public boolean handleMessage(java.lang.String);",
        "public boolean handleMessage(java.lang.String, java.lang.String);",
    ]),
    "ygraph.ai.smartfox.games.GameClient": ("public class ygraph.ai.smartfox.games.GameClient", [
        "public ygraph.ai.smartfox.games.GameClient(java.lang.String, java.lang.String, "
        "ygraph.ai.smartfox.games.GamePlayer);",
        "public ygraph.ai.smartfox.games.GameClient(java.lang.String, java.lang.String);",
        "public java.util.List<sfs2x.client.entities.Room> getRoomList();",
        "public java.lang.String getUserName();",
        "public void joinRoom(java.lang.String);",
        "public void leaveCurrentRoom();",
        "public void sendMoveMessage(java.util.ArrayList<java.lang.Integer>, java.util.ArrayList<java.lang.Integer>, "
        "java.util.ArrayList<java.lang.Integer>);",
        "public void sendMoveMessage(java.util.Map<java.lang.String, java.lang.Object>);",
        "public void sendTextMessage(java.lang.String);",
        "public void logout();",
        "public volatile java.util.List<sfs2x.client.entities.Room> rooms;",
        "public static void main(java.lang.String[]);",
    ]),
    "ygraph.ai.smartfox.games.BaseGameGUI": ("public class ygraph.ai.smartfox.games.BaseGameGUI", [
        "public ygraph.ai.smartfox.games.BaseGameGUI(ygraph.ai.smartfox.games.GamePlayer);",
        "public ygraph.ai.smartfox.games.BaseGameGUI();",
        "public synchronized javax.swing.JPanel getControlPanel();",
        "public void configureControlPanel(javax.swing.JPanel);",
        "public static void sys_setup();",
        "public void setRoomInformation(java.util.List<sfs2x.client.entities.Room>);",
        "public void setGameState(java.util.ArrayList<java.lang.Integer>);",
        "public void updateGameState(java.util.Map<java.lang.String, java.lang.Object>);",
        "public void updateGameState(java.util.ArrayList<java.lang.Integer>, java.util.ArrayList<java.lang.Integer>, "
        "java.util.ArrayList<java.lang.Integer>);",
    ]),
    "ygraph.ai.smartfox.games.GameMessage": ("public class ygraph.ai.smartfox.games.GameMessage", [
        'public static final java.lang.String GAME_ACTION_START = "cosc322.game-action.start";',
        'public static final java.lang.String GAME_ACTION_MOVE = "cosc322.game-action.move";',
        'public static final java.lang.String GAME_STATE_BOARD = "cosc322.game-state.board";',
        'public static final java.lang.String GAME_STATE_JOIN = "cosc322.game-state.join";',
        'public static final java.lang.String GAME_STATE_PLAYER_LOST = "cosc322.game-state.userlost";',
        'public static final java.lang.String GAME_TEXT_MESSAGE = "cosc322.game-state.textmessage";',
    ]),
    "ygraph.ai.smartfox.games.amazons.AmazonsGameMessage": (
        "public class ygraph.ai.smartfox.games.amazons.AmazonsGameMessage "
        "extends ygraph.ai.smartfox.games.GameMessage", [
            'public static final java.lang.String QUEEN_POS_CURR = "queen-position-current";',
            'public static final java.lang.String QUEEN_POS_NEXT = "queen-position-next";',
            'public static final java.lang.String Queen_POS_NEXT = "queen-position-next";',
            'public static final java.lang.String ARROW_POS = "arrow-position";',
            'public static final java.lang.String GAME_STATE = "game-state";',
            'public static final java.lang.String PLAYER_BLACK = "player-black";',
            'public static final java.lang.String PLAYER_WHITE = "player-white";',
            "public ygraph.ai.smartfox.games.amazons.AmazonsGameMessage(java.lang.String);",
            "public void setMessageDetails(java.lang.String, java.lang.Object);",
            "public void compile();",
        ]),
    "ygraph.ai.smartfox.games.GameTimer": (
        "public class ygraph.ai.smartfox.games.GameTimer extends java.util.TimerTask", [
            "public static final int TIMEOUT = 30000;",
            "public ygraph.ai.smartfox.games.GameTimer(ygraph.ai.smartfox.games.GamePlayer, "
            "ygraph.ai.smartfox.games.GameClient, int);",
            "public void run();",
        ]),
    "ygraph.ai.smartfox.games.amazons.HumanPlayer": (
        "public class ygraph.ai.smartfox.games.amazons.HumanPlayer extends ygraph.ai.smartfox.games.GamePlayer", [
            "public ygraph.ai.smartfox.games.amazons.HumanPlayer();",
            "public void Go();",
        ]),
    "ygraph.ai.smartfox.games.Spectator": (
        "public class ygraph.ai.smartfox.games.Spectator extends ygraph.ai.smartfox.games.GamePlayer", []),
    "ygraph.ai.smartfox.games.amazons.AmazonsBoard": (
        "public class ygraph.ai.smartfox.games.amazons.AmazonsBoard extends ygraph.ai.smartfox.games.BoardGameModel", [
            "public ygraph.ai.smartfox.games.amazons.AmazonsBoard();",
        ]),
    "ygraph.ai.smartfox.games.GameModel": ("public class ygraph.ai.smartfox.games.GameModel", [
        'public static final java.lang.String POS_MARKED_BLACK = "black";',
        'public static final java.lang.String POS_MARKED_WHITE = "white";',
        'public static final java.lang.String POS_MARKED_ARROW = "arrow";',
        'public static final java.lang.String POS_AVAILABLE = "available";',
    ]),
    "ygraph.ai.smartfox.games.BoardGameModel": (
        "public class ygraph.ai.smartfox.games.BoardGameModel extends ygraph.ai.smartfox.games.GameModel", []),
    "ygraph.ai.smartfox.games.Amazon.GameBoard": ("public class ygraph.ai.smartfox.games.Amazon.GameBoard", [
        "public ygraph.ai.smartfox.games.Amazon.GameBoard();",
    ]),
    "sfs2x.client.entities.Room": ("public interface sfs2x.client.entities.Room", [
        "public abstract java.lang.String getName();",
    ]),
    "sfs2x.client.requests.PlayerToSpectatorRequest": ("public class sfs2x.client.requests.PlayerToSpectatorRequest", [
        "public sfs2x.client.requests.PlayerToSpectatorRequest();",
    ]),
}

# How course bots use the names: compiled against the jar, it must build (constants included, as constants).
USES = """
import java.util.*;
import sfs2x.client.entities.Room;
import sfs2x.client.requests.PlayerToSpectatorRequest;
import ygraph.ai.smartfox.games.*;
import ygraph.ai.smartfox.games.Amazon.GameBoard;
import ygraph.ai.smartfox.games.amazons.*;

public class Uses {
    public static void main(String[] args) {
        switch (args.length == 0 ? "" : args[0]) {
            case GameMessage.GAME_ACTION_START: case AmazonsGameMessage.GAME_ACTION_MOVE:
            case GameMessage.GAME_STATE_BOARD: case GameMessage.GAME_STATE_JOIN:
            case GameMessage.GAME_STATE_PLAYER_LOST: case GameMessage.GAME_TEXT_MESSAGE:
            case AmazonsGameMessage.QUEEN_POS_CURR: case AmazonsGameMessage.Queen_POS_NEXT:
            case AmazonsGameMessage.ARROW_POS: case AmazonsGameMessage.GAME_STATE:
            case AmazonsGameMessage.PLAYER_BLACK: case AmazonsGameMessage.PLAYER_WHITE:
            case BoardGameModel.POS_MARKED_BLACK: case BoardGameModel.POS_MARKED_WHITE:
            case BoardGameModel.POS_MARKED_ARROW:
            case BoardGameModel.POS_AVAILABLE:
                break;
            default:
        }
        String same = AmazonsGameMessage.QUEEN_POS_NEXT;
        GamePlayer human = new HumanPlayer();
        BaseGameGUI.sys_setup();
        BaseGameGUI gui = new BaseGameGUI(human);
        gui.setRoomInformation(new ArrayList<Room>());
        gui.setGameState(new ArrayList<Integer>(Collections.nCopies(121, 0)));
        gui.updateGameState(new HashMap<String, Object>());
        new PlayerToSpectatorRequest();
        new GameBoard();
        new AmazonsBoard().getGameState();
        Spectator spectator = new Spectator("watcher", "pw");
        BaseGameGUI plain = new BaseGameGUI();
        javax.swing.JPanel panel = plain.getControlPanel();
        plain.configureControlPanel(new javax.swing.JPanel());
        AmazonsGameMessage move = new AmazonsGameMessage(GameMessage.GAME_ACTION_MOVE);
        move.setMessageDetails(AmazonsGameMessage.QUEEN_POS_CURR, new ArrayList<Integer>(Arrays.asList(7, 1)));
        move.setMessageDetails(AmazonsGameMessage.QUEEN_POS_NEXT, new ArrayList<Integer>(Arrays.asList(7, 2)));
        move.setMessageDetails(AmazonsGameMessage.ARROW_POS, new ArrayList<Integer>(Arrays.asList(7, 3)));
        move.compile();
        GameTimer timer = new GameTimer(human, null, 0);
        timer.run();
        System.out.println("uses compiled and ran: " + same + " " + spectator.userName());
        System.out.println("panel " + panel.getComponentCount() + ", move " + move.getMessageDetails() + ", timeouts "
                + timer.getViolationCount() + ", " + GameTimer.TIMEOUT + " ms");
        try {
            new AmazonsGameMessage(GameMessage.GAME_ACTION_MOVE).compile();
        } catch (IllegalStateException e) {
            System.out.println("refused: " + e.getMessage());
        }
        human.Go();
    }

    static List<Room> roomsOf(GameClient client) {  // the public field, as course bots read it
        return client.rooms;
    }

    static void mainOf() {
        GameClient.main(new String[] {"name", "password"});
    }
}
"""


def javap(jar: Path, classes: list[str]) -> dict[str, tuple[str, set[str]]]:
    """``javap -public -constants`` of ``classes``: class name -> (declaration, member lines)."""
    done = subprocess.run([JAVAP, "-public", "-constants", "-cp", str(jar), *classes], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found: dict[str, tuple[str, set[str]]] = {}
    for block in done.stdout.split("Compiled from")[1:]:
        lines = [line.strip() for line in block.splitlines()[1:] if line.strip() and line.strip() != "}"]
        header = lines[0].removesuffix("{").strip()
        name = header.split()[-1] if " extends " not in header else header.split(" extends ")[0].split()[-1]
        found[name] = (header, set(lines[1:]))
    return found


@needs_javac
def test_every_name_of_the_course_client_has_its_signature(jar: Path, tmp_path: Path):
    assert JAVAP is not None, "javap comes with javac"
    found = javap(jar, sorted(API))
    assert sorted(found) == sorted(API)
    for name, (header, members) in API.items():
        assert found[name][0] == header, (name, found[name][0])
        missing = set(members) - found[name][1]
        assert not missing, f"{name} lacks {sorted(missing)}; it has {sorted(found[name][1])}"
    (tmp_path / "Uses.java").write_text(USES, encoding="utf-8")
    done = subprocess.run([JAVAC, "-cp", str(jar), "-d", str(tmp_path), str(tmp_path / "Uses.java")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    env = environment(41234)  # nobody listens there: the human player only says where to play, and the
    ran = subprocess.run([JAVA, "-Djava.awt.headless=true", "-cp", f"{jar}{os.pathsep}{tmp_path}", "Uses"],
                         capture_output=True, text=True, timeout=60, env=env)  # spectator is never started
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "uses compiled and ran: queen-position-next watcher" in ran.stdout
    assert ("panel 1, move {queen-position-current=[7, 1], queen-position-next=[7, 2], arrow-position=[7, 3]}, "
            "timeouts 1, 30000 ms") in ran.stdout, "headless: the control panel holds the room list"
    assert "refused: compile(): the move has no queen-position-current" in ran.stdout
    assert "open http://127.0.0.1:41234/ in a web browser" in ran.stdout
    assert "Exception" not in ran.stderr, ran.stderr


PREFIXED = """
import plyhall.cosc322.Settings;
import ygraph.ai.smartfox.games.amazons.HumanPlayer;

public class Prefixed {
    public static void main(String[] args) {
        for (String url : args) {
            System.out.println(url + " -> " + HumanPlayer.webPage(url));
        }
        System.out.println(Settings.load().urlProblem());
    }
}
"""


@needs_javac
def test_the_library_keeps_a_proxys_path_prefix(jar: Path, tmp_path: Path):
    """A server a proxy serves under /plyhall/ (docs/OPERATING.md): the human player is sent to the page beside the
    /ws it was given, and a bot given the page's address is told the /ws under the same prefix."""
    (tmp_path / "Prefixed.java").write_text(PREFIXED, encoding="utf-8")
    done = subprocess.run([JAVAC, "-cp", str(jar), "-d", str(tmp_path), str(tmp_path / "Prefixed.java")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    ran = subprocess.run([JAVA, "-Dplyhall.url=https://example.org/plyhall/", "-cp", f"{jar}{os.pathsep}{tmp_path}",
                          "Prefixed", "wss://example.org/plyhall/ws", "ws://127.0.0.1:8765/ws", "ws://127.0.0.1:8765"],
                         capture_output=True, text=True, timeout=60, env=environment(8765))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "wss://example.org/plyhall/ws -> https://example.org/plyhall/" in ran.stdout
    assert "ws://127.0.0.1:8765/ws -> http://127.0.0.1:8765/" in ran.stdout
    assert "ws://127.0.0.1:8765 -> http://127.0.0.1:8765/" in ran.stdout
    assert "is a web address; bots connect to the WebSocket address: use wss://example.org/plyhall/ws" in ran.stdout


@needs_javac
def test_the_jar_holds_a_manifest_first_and_classes_for_java_11(jar: Path):
    with zipfile.ZipFile(jar) as archive:
        names = archive.namelist()
        assert names[0] == "META-INF/MANIFEST.MF"
        assert "Manifest-Version: 1.0" in archive.read(names[0]).decode()
        assert "ygraph/ai/smartfox/games/GameClient.class" in names
        majors = {int.from_bytes(archive.read(name)[6:8], "big") for name in names if name.endswith(".class")}
    assert majors == {55}, "compiled with --release 11 (class files of version 55)"
    assert not any(name.endswith(".java") for name in names)


@needs_javac
def test_game_client_main_lists_the_rooms_of_the_server(jar: Path, live: int):
    """``java -cp JAR ygraph.ai.smartfox.games.GameClient NAME PASSWORD`` logs in, prints the room list (a room
    waiting for a player among them) and ends; without a name it says how to use it."""
    async def waiting_room() -> None:
        owner = await login(f"ws://127.0.0.1:{live}/ws", "main-owner")
        await owner.request({"type": "create_room", "game": "amazons", "name": "Main Lake", "grace": 60})
        await owner.request({"type": "join", "room": "Main Lake", "seat": 0})
        done = subprocess.run([JAVA, "-Djava.awt.headless=true", "-cp", str(jar), "ygraph.ai.smartfox.games.GameClient",
                               "main-lister", "main-password"], capture_output=True, text=True, timeout=60,
                              env=environment(live))
        await owner.close()
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Main Lake (1 players, 0 spectators)" in done.stdout.splitlines(), done.stdout

    asyncio.run(waiting_room())
    usage = subprocess.run([JAVA, "-cp", str(jar), "ygraph.ai.smartfox.games.GameClient"], capture_output=True,
                           text=True, timeout=60, env=environment(live))
    assert usage.returncode == 2 and "usage: java -cp plyhall-cosc322.jar ygraph.ai.smartfox.games.GameClient NAME" \
        in usage.stderr


def test_a_spectator_of_a_room_that_is_not_there_is_told_the_rooms_that_are(jar: Path, live: int):
    """"there is no room Nowhere Lake to watch; rooms now: [[Room: Nowhere Lake, ...new]" named the very room that is
    not there (the course's room list adds the rooms a player's join would make): only the server's rooms now."""
    async def one_room() -> None:
        owner = await login(f"ws://127.0.0.1:{live}/ws", "watch-owner")
        await owner.request({"type": "create_room", "game": "amazons", "name": "Watched Lake", "grace": 60})
        await owner.request({"type": "join", "room": "Watched Lake", "seat": 0})
        done = subprocess.run([JAVA, "-Djava.awt.headless=true", "-cp", str(jar), "ygraph.ai.smartfox.games.Spectator",
                               "watcher"], capture_output=True, text=True, timeout=60,
                              env=environment(live, PLYHALL_ROOM="Nowhere Lake"))
        await owner.close()
        assert done.returncode == 1, done.stdout + done.stderr
        line = next(line for line in done.stderr.splitlines() if "to watch" in line)
        assert "there is no room Nowhere Lake to watch; rooms now: " in line and "Watched Lake" in line
        assert "Nowhere Lake" not in line.split("rooms now: ")[1] and "new" not in line, line

    asyncio.run(one_room())


@needs_javac
def test_a_course_bot_says_whether_the_host_is_unknown_or_refused_the_connection(jar: Path, bots: Path, spawn):
    """The words of ``plyhall bot``: "(unknown host)" for a name no DNS knows, "(connection refused)" for a port
    where nothing listens; both are tried again."""
    for label, host, words in (("nohost", "nosuchhost.invalid:8765", "unknown host"),
                               ("noport", f"127.0.0.1:{free_port()}", "connection refused")):
        url = f"ws://{host}/ws"
        run = java_bot(spawn, [jar, bots], "COSC322Test", label, 0, PLYHALL_URL=url)
        run.wait_for(f"[plyhall] {label}: no server at {url} ({words}); trying again in 1.0 s")
        stop(run.proc)


@needs_javac
def test_a_wrong_password_is_explained_once(jar: Path, live: int):
    """A name claimed with another secret: one sentence saying what to do, not the server's and then the library's."""
    async def claimed() -> None:
        owner = await login(f"ws://127.0.0.1:{live}/ws", "claimed-ann", secret="the-first-password")
        await owner.close()

    asyncio.run(claimed())
    done = subprocess.run([JAVA, "-Djava.awt.headless=true", "-cp", str(jar), "ygraph.ai.smartfox.games.GameClient",
                           "claimed-ann", "another-password"], capture_output=True, text=True, timeout=60,
                          env=environment(live))
    assert done.returncode == 4, done.stdout + done.stderr  # a login refused for good (the entrant runner stops)
    assert done.stderr.splitlines() == [
        "[plyhall] claimed-ann: error: the server refused the login: the name claimed-ann is claimed with another "
        "secret: give GameClient the password it was first used with (or set PLYHALL_SECRET to it), or choose "
        "another name"], done.stderr


def test_building_the_jar_without_javac_says_what_to_install(tmp_path: Path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = str(empty)
    done = subprocess.run([sys.executable, "-m", "plyhall", "cosc322", "jar", "-o", str(tmp_path / "x.jar")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for words in ("javac", "not on PATH", "JDK", "openjdk-17-jdk-headless"):
        assert words in lines[0], lines[0]
    assert not (tmp_path / "x.jar").exists()


# ----- games -----

@needs_javac
def test_two_course_bots_play_a_series_in_their_room(jar: Path, bots: Path, live: int, spawn):
    """ListBot joins the first room of its room list (PLYHALL_ROOM), moves from a thread of its own and wishes
    good luck in a text message (which COSC322Test prints); COSC322Test never calls joinRoom. Two games in one
    room: in the second the other seat moves first, so both bots see it mirrored, black still moving first
    from rows 7 and 10."""
    settings = {"PLYHALL_ROOM": "Ellison Lake", "PLYHALL_GAMES": "2"}
    runs = [java_bot(spawn, [jar, bots], "ListBot", "lister", live, **settings),
            java_bot(spawn, [jar, bots], "COSC322Test", "templ", live, **settings)]
    results = [run.wait() for run in runs]
    games = records(live, "lister")
    assert len(games) == 2, [run.err.read_text() for run in runs]
    for record in games:
        check_played(record, {"lister", "templ"})
        assert record["room"] == "Ellison Lake"
    assert [first_option(g["options"].get("first", 0)) for g in games] == [0, 1]
    for run, result in zip(runs, results, strict=True):
        check_bot(run, games, *result)
        starts = re.findall(r"^start black=(\S+) white=(\S+) room=(.*)$", result[1], re.M)
        assert starts == [(g["players"][first], g["players"][1 - first], "Ellison Lake")
                          for g, first in zip(games, (0, 1), strict=True)]
    assert "mirrored" in results[0][2] and "joining Ellison Lake" in results[0][1]
    assert results[1][1].count("lister: good luck from lister") == 2, "chat reaches handleMessage(sender, text)"


@needs_javac
@pytest.mark.parametrize(("main", "name"), [("ListBot", "lister-vs-py"), ("COSC322Test", "cosc 322 bot")])
def test_a_course_bot_plays_a_python_bot_found_by_seeking(jar: Path, bots: Path, live: int, spawn, main: str,
                                                          name: str):
    """No room set: the course bot seeks, as ``plyhall bot`` does, and they meet. A course name that is no
    Plyhall name ("cosc 322 bot") logs in as cosc_322_bot, and the bot still sees its own name."""
    wire = name.replace(" ", "_")
    opponent = f"py-{wire[:20]}"
    course = java_bot(spawn, [jar, bots], main, name, live)
    python = python_bot(spawn, opponent, live)
    result = course.wait()
    code, out, err = python.wait()
    assert code == 0 and "game 1 in" in out, out + err
    games = records(live, wire)
    assert len(games) == 1
    check_played(games[0], {wire, opponent})
    check_bot(course, games, *result)
    black, white = (name if player == wire else player for player in games[0]["players"])
    assert f"start black={black} white={white} room={games[0]['room']}" in result[1]


@needs_javac
def test_illegal_moves_are_refused_with_the_reason(jar: Path, bots: Path, live: int, spawn):
    """An off-board square is refused before it is sent; a move no queen can make is refused by the server,
    with its reason on standard error (this server makes an illegal move lose the game)."""
    settings = {"PLYHALL_ROOM": "Wood Lake 2"}
    bad = java_bot(spawn, [jar, bots], "IllegalBot", "wrongway", live, **settings)
    bad.wait_for("waiting in Wood Lake 2 for a second player")  # seat 0: black, who moves first
    good = java_bot(spawn, [jar, bots], "COSC322Test", "rightway", live, **settings)
    code, out, err = bad.wait()
    assert code == 0, err
    assert "sendMoveMessage([0, 5] -> [7, 5], arrow [3, 3]): queen-position-current [0, 5] is off the board" in err
    refused = re.search(r"error: the server refused your move \[7, 1\] -> \[2, 6\], arrow \[3, 3\]: (.+)", err)
    assert refused, err
    assert "you lost (illegal move by wrongway" in err, err
    good_code, good_out, good_err = good.wait()
    assert good_code == 0 and "you won" in good_err, good_err
    (record,) = records(live, "wrongway")
    assert record["reason"].startswith("illegal move by wrongway") and record["move_count"] == 0
    assert refused.group(1).split(": ")[-1] in record["reason"], "the server's own reason, as it gave it"


# ----- the guide -----

def guide_commands() -> list[str]:
    """The three commands of docs/COSC322.md ("Three commands")."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Three commands"):text.index("## Settings")]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the guide's three commands are in a sh block"
    commands = [line.strip() for line in block.group(1).splitlines() if line.strip()]
    assert len(commands) == 3, commands
    return commands


@needs_javac
def test_the_guides_three_commands_work_as_written(live: int, spawn, tmp_path: Path):
    """docs/COSC322.md's commands, run verbatim by bash (each as ``exec COMMAND``, so that stopping it stops
    the program itself) in a folder holding the course-style bot as ubc/cosc322/COSC322Test.java. Only the
    environment differs: PATH finds this checkout's ``plyhall``, and PLYHALL_URL points at the test server.
    The bot the guide starts (alice) meets a Python bot and plays one game, then exits."""
    build, compile_bot, run_bot = guide_commands()
    work = tmp_path / "project"
    (work / "ubc" / "cosc322").mkdir(parents=True)
    shutil.copy(BOTS / "ubc" / "cosc322" / "COSC322Test.java", work / "ubc" / "cosc322" / "COSC322Test.java")
    env = environment(live)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for command in (build, compile_bot):
        done = subprocess.run(["bash", "-c", f"exec {command}"], cwd=work, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, f"{command}:\n{done.stdout}{done.stderr}"
    assert (work / "plyhall-cosc322.jar").is_file() and (work / "ubc" / "cosc322" / "COSC322Test.class").is_file()
    name = run_bot.split()[-2]
    bot = spawn("guide", ["bash", "-c", f"exec {run_bot}"], env, cwd=work)
    python = python_bot(spawn, f"py-{name}", live)
    result = bot.wait()
    assert python.wait()[0] == 0
    games = records(live, name)
    assert len(games) == 1
    check_played(games[0], {name, f"py-{name}"})
    check_bot(bot, games, *result)


SLOW = """
package ubc.cosc322;

import java.util.Map;

/** COSC322Test taking 100 ms over each message: a game lasts long enough to restart the server in it. */
public class Slow extends COSC322Test {
    public Slow(String name, String password) {
        super(name, password);
    }

    public static void main(String[] args) {
        new Slow(args[0], args[1]).Go();
    }

    @Override
    public boolean handleGameMessage(String type, Map<String, Object> details) {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return super.handleGameMessage(type, details);
    }
}
"""


@needs_javac
def test_course_bots_carry_on_after_a_server_restart(jar: Path, bots: Path, spawn, tmp_path: Path):
    """The server stops in the middle of a game and comes back on the same database: both bots log in again
    by themselves, get their seats back, hear of the moves they missed (a move lost on the way is sent
    again), and finish the game as if nothing had happened."""
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "Slow.java").write_text(SLOW, encoding="utf-8")
    done = subprocess.run([JAVAC, "-cp", f"{jar}{os.pathsep}{bots}", "-d", str(slow), str(slow / "Slow.java")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    port = free_port()
    database = tmp_path / "restart.db"
    server = start_server(database, port)
    try:
        runs = [java_bot(spawn, [jar, bots, slow], "Slow", name, port) for name in ("phoenix-a", "phoenix-b")]
        for run in runs:
            run.wait_for("the game in")
        time.sleep(1.0)
        stop(server)  # SIGTERM: the server shuts down, keeping the game for when it is back
        server = start_server(database, port)
        results = [run.wait() for run in runs]
        games = records(port, "phoenix-a")
    finally:
        stop(server)
    assert len(games) == 1
    check_played(games[0], {"phoenix-a", "phoenix-b"})
    for run, result in zip(runs, results, strict=True):
        check_bot(run, games, *result, calm=False)
        assert "server shutting down" in result[2] and "connected again" in result[2], result[2]


@needs_javac
def test_a_course_bot_that_thinks_longer_than_the_silence_setting_keeps_its_connection(jar: Path, bots: Path,
                                                                                      live: int, spawn):
    """The bot's own code runs on the library's events thread, which also pings the server when the connection
    has been quiet: a bot that thinks for longer than PLYHALL_SILENCE (3 s here, 4.5 s of thought on its turn,
    when the server has nothing to say) holds the pinging up. Its connection is still alive: the library pings
    when the bot returns and counts the connection lost only if that ping goes unanswered."""
    course = java_bot(spawn, [jar, bots], "PonderBot", "ponderer", live, PLYHALL_SILENCE="3")
    python = python_bot(spawn, "py-ponderer", live)
    result = course.wait()
    assert python.wait()[0] == 0
    games = records(live, "ponderer")
    assert len(games) == 1 and games[0]["move_count"] >= 6, games
    check_bot(course, games, *result)
    assert "nothing came from the server" not in result[2] and "connected again" not in result[2], result[2]


class CuttableRelay:
    """A TCP relay to the server that a test cuts (its connections dropped, new ones refused) and opens again:
    a network outage for the one process that connects through it. Or freezes: its connections then carry
    nothing more, either way, and are never closed (a network gone without a word: no FIN, no RST), while new
    connections are relayed as before."""

    def __init__(self, target: int) -> None:
        self.target, self.port = target, free_port()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = None
        self.tasks: set = set()  # the relaying tasks, one a connection, for close to wait for
        self.epoch = 0  # one more at each open and cut: a connection accepted before a cut is not relayed after it
        self.writers: set = set()  # both ends of every connection relayed since the last cut
        self.clients: set = set()  # the end of each facing the process that connected
        self.frozen: set = set()  # those of them that carry nothing more
        self.open()

    def _call(self, coro) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def open(self) -> None:
        """Accept (and relay) connections again."""
        self._call(self._open())

    async def _open(self) -> None:
        self.epoch += 1
        epoch = self.epoch
        self.server = await asyncio.start_server(lambda reader, writer: self._relay(reader, writer, epoch),
                                                 "127.0.0.1", self.port)

    async def _relay(self, reader, writer, epoch: int) -> None:
        task = asyncio.current_task()
        self.tasks.add(task)
        try:
            await self._relay_one(reader, writer, epoch)
        finally:
            self.tasks.discard(task)

    async def _relay_one(self, reader, writer, epoch: int) -> None:
        if epoch != self.epoch:  # accepted, but cut before this ran
            writer.transport.abort()
            return
        self.writers.add(writer)  # at once: a cut while the server's end connects drops this end too
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.transport.abort()
            return
        if epoch != self.epoch:  # cut meanwhile
            writer.transport.abort()
            up_writer.transport.abort()
            return
        self.writers.add(up_writer)
        self.clients.add(writer)

        async def pump(source, sink) -> None:
            try:
                while data := await source.read(65536):
                    if writer not in self.frozen:
                        sink.write(data)
                        await sink.drain()
            except (OSError, ConnectionError):
                pass
            finally:
                if writer not in self.frozen:  # a frozen connection tells nobody it ended
                    sink.transport.abort()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))

    def cut(self) -> None:
        """Refuse new connections and drop the open ones."""
        self._call(self._cut())

    async def _cut(self) -> None:
        self.epoch += 1
        self.server.close()
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()
        self.clients.clear()
        self.frozen.clear()

    def freeze(self) -> None:
        """Let the open connections carry nothing more, either way, without closing them."""
        self._call(self._freeze())

    async def _freeze(self) -> None:
        self.frozen |= self.clients

    def close(self) -> None:
        """Stop relaying for good."""
        self._call(self._close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    async def _close(self) -> None:
        await self._cut()
        if self.tasks:  # their connections are aborted: they end (a stopped loop would leave them pending)
            await asyncio.wait(set(self.tasks), timeout=5)


async def list_bot_playing(resigner, room: str, start: Callable[[], Run]) -> Run:
    """``resigner`` makes ``room`` (Amazons, a long grace) and sits as black; ``start`` starts a course bot that
    sits as white. Returns once the bot has logged the game's start (it heard of the game)."""
    await resigner.request({"type": "create_room", "game": "amazons", "name": room, "grace": 120})
    await resigner.request({"type": "join", "room": room, "seat": 0})
    run = start()
    await resigner.expect("game_start", room=room, timeout=60)
    deadline = time.monotonic() + 60
    while "start black=" not in run.out.read_text():
        assert run.proc.poll() is None and time.monotonic() < deadline, run.err.read_text()
        await asyncio.sleep(0.05)
    return run


@needs_javac
def test_a_course_bot_whose_game_ended_while_it_was_away_hears_the_result_on_coming_back(jar: Path, bots: Path,
                                                                                         live: int, spawn):
    """The bot's connection drops, and while it is down its opponent resigns: the game_over cannot reach it.
    Logged in again, back in its seat, it gets the room's state with the last result, logs that game's end and
    stops after its one game, instead of waiting for ever in a room whose game is over."""

    relay = CuttableRelay(live)

    async def outage() -> Run:
        resigner = await login(f"ws://127.0.0.1:{live}/ws", "resigner")
        try:
            run = await list_bot_playing(resigner, "Cut Lake", lambda: java_bot(
                spawn, [jar, bots], "ListBot", "cut-lister", relay.port, PLYHALL_ROOM="Cut Lake", PLYHALL_GAMES="1"))
            relay.cut()
            await resigner.expect("player_away", room="Cut Lake", timeout=30)
            await resigner.send({"type": "resign", "room": "Cut Lake"})
            assert (await resigner.expect("game_over", room="Cut Lake"))["winner"] == 1
            relay.open()
            return run
        finally:
            await resigner.close()

    try:
        run = asyncio.run(outage())
        code, _, err = run.wait()
    finally:
        relay.close()
    assert code == 0, err
    assert "connected again" in err and "game over in Cut Lake after 0 moves: you won (resigner resigned)" in err, err


@needs_javac
def test_a_course_bot_whose_connection_goes_silent_connects_again(jar: Path, bots: Path, live: int, spawn):
    """The bot's connection goes silent in the middle of a game: nothing more comes through it, either way, and it
    never closes (a laptop that slept, a Wi-Fi change; the JDK's WebSocket can also miss the end of a connection
    that does close). The library counts it as lost once nothing at all, not even a pong to its own ping, has come
    for PLYHALL_SILENCE seconds, connects again (through the relay, which carries new connections), is back in
    its seat, and hears that its opponent resigned. Before that, a quiet but live connection is kept: 15 s without
    a message (and at most one of the server's pings, which come every 20 s) is not 6 s of silence, because the
    server answers the library's own pings."""
    relay = CuttableRelay(live)

    async def silence() -> Run:
        resigner = await login(f"ws://127.0.0.1:{live}/ws", "quiet-resigner")
        try:
            run = await list_bot_playing(resigner, "Quiet Lake", lambda: java_bot(
                spawn, [jar, bots], "ListBot", "quiet-lister", relay.port, PLYHALL_ROOM="Quiet Lake", PLYHALL_GAMES="1",
                PLYHALL_SILENCE="6"))
            await asyncio.sleep(15)  # nothing to say: the white bot waits for black's move
            assert "trying again" not in run.err.read_text(), run.err.read_text()
            relay.freeze()
            await asyncio.to_thread(run.wait_for, "connected again", 90)  # 6 s of silence, then a new connection
            await resigner.send({"type": "resign", "room": "Quiet Lake"})
            assert (await resigner.expect("game_over", room="Quiet Lake"))["winner"] == 1
            return run
        finally:
            await resigner.close()

    try:
        run = asyncio.run(silence())
        code, _, err = run.wait()
    finally:
        relay.close()
    assert code == 0, err
    noticed = re.findall(r"the connection broke \(nothing came from the server for (\d+) s\); trying again in", err)
    assert len(noticed) == 1 and 6 <= int(noticed[0]) <= 30, err  # never before the 6 s; once, and soon after
    assert "connected again" in err, err
    assert "game over in Quiet Lake after 0 moves: you won (quiet-resigner resigned)" in err, err
