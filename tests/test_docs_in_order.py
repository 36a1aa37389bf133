"""Every fenced shell command of README.md and docs/*.md runs as written, in the order a reader meets them, on one
database: README.md first, then the docs in the order README.md links them (the rest after, by name).

Each command runs with bash in a temporary directory laid out like the checkout (``.venv``, ``examples``,
``benchmarks`` … are links to the real ones, so ``.venv/bin/plyhall`` and ``examples/engines/…`` work as written;
what a command writes, ``plyhall.db`` first, lands in the temporary directory), with the venv's ``bin`` first on
PATH as the docs ask (``source .venv/bin/activate``), so ``plyhall`` and ``python`` are the venv's. Files the docs
tell the reader to save ("Save this as `mybot.py`") are written from the ```python block that follows.

How each kind of command runs, the way a reader runs it:

- ``plyhall serve`` starts in the background ("in another terminal") and is waited for on ``/healthz``; a later
  ``serve`` first stops the one running, and the players started against it, with Ctrl-C (SIGINT), as a reader
  who has one server at a time does.
- a player (``plyhall bot``, ``plyhall cosc322 entrant``, ``python FILE`` of a saved file) starts in the
  background. Players that stop by themselves (``--games N``, a saved script) and were started in the same block
  as another player (their opponent) are waited for before the block's next other command, or at its end; a lone
  player just waits for an opponent until its server stops.
- anything else runs in the foreground to its end.

Nothing else is changed but what must be (SUBSTITUTIONS): the port 8765 becomes a free one (a ``serve`` without
``--port`` gets ``--port``, a client without ``--url`` gets ``--url``, since both default to 8765), the doc's
example game id becomes one of this database, and the few game counts that would take minutes are smaller.
Commands that cannot run in a test are skipped by SKIPPED, with a reason each, and every entry must still match a
command. The test fails at the first command that exits non-zero (EXITS lists the few that rightly do not exit 0)
or prints a traceback, naming its doc and line; each command is printed as it starts (shown when the test fails).
A whole run took 94 s to 3.7 minutes on a busy two-core machine (load 10-20): a master engine's warm-up, the
README's tournament, two builds of the COSC 322 jar and two analyses are most of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
SHELL_FENCES = ("sh", "bash", "shell", "console")
LINKED = ("protocol", "server", "client", "bots", "plyhall", "tests", "examples", "benchmarks", "docs",
          "pyproject.toml", "README.md", ".venv")
"""What the temporary directory links to the checkout (each one that exists)."""

SKIPPED: list[tuple[str, str, str]] = [
    ("README.md", "python3 -m venv .venv", "installs packages (the test runs in the installed venv)"),
    ("README.md", ".venv/bin/pip install", "installs packages"),
    ("README.md", "--cluster redis://127.0.0.1:6379/0 --db postgresql://USER:PW",
     "needs the reader's Redis and PostgreSQL (USER:PW); tests/test_workers.py runs serve --workers"),
    ("*", "benchmarks/", "a benchmark: minutes of measuring, not a check"),
    ("README.md", "plyhall play ", "a game at the keyboard (tests/test_play.py plays it through a pipe)"),
    ("docs/COSC322.md", "ubc", "compiles or runs the student's own course bot, which the reader brings "
                               "(tests/test_cosc322.py builds one against the jar)"),
    ("docs/COSC322.md", "games.example.org", "a placeholder for the course's server"),
    ("docs/COSC322.md", "--players alice,bob,carol",
     "the class tournament of the student bots skipped above (tests/test_cosc322_tournament.py runs one)"),
    ("docs/COSC322.md", "tournament results class", "the results of the class tournament skipped above"),
    ("docs/SCALING.md", "--cluster redis://10.0.0.5", "a cluster node on the reader's machines (10.0.0.x)"),
    ("docs/SCALING.md", "--cluster redis://127.0.0.1:6379/0",
     "needs the reader's Redis and PostgreSQL (PW); tests/test_workers.py runs serve --workers"),
    ("docs/OPERATING.md", "plyhall db upgrade",
     "upgrades a database whose server was stopped, where the walk-through's server runs (tests/test_storage.py "
     "upgrades one, and is refused under a running server)"),
]
"""(doc, a piece of the command, why it does not run here): commands that cannot run in a test (doc ``*``: any)."""

SUBSTITUTIONS: list[tuple[str, str, str]] = [
    ("README.md", "--games 20 --time-per-move 0.2", "--games 2 --time-per-move 0.2"),  # 20 Santorini games: minutes
    ("README.md", "--games 100 --jobs 2", "--games 20 --jobs 2"),
    ("docs/ANALYSIS.md", "--tournament spring-cup", "--tournament cup"),  # the README's tournament
]
"""(doc, text, replacement) in a command, besides the port and the example game id: what would take minutes."""

EXITS: list[tuple[str, str, int, str]] = [
    ("docs/RATINGS.md", "ratings --player alice", 1,
     "alice, registered a few commands before, has no rated game yet on the reader's database: one line saying so"),
]
"""(doc, a piece of the command, its exit code, why): commands that, run in order on one database, rightly end
otherwise than with 0."""

EXAMPLE_GAME_ID = "1a2198d07ca25be"
"""The game id of docs/ANALYSIS.md's example, replaced by a game of this database."""

SECRETS = {"SECRET": "the-organiser-secret"}
"""Variables the docs leave to the reader ("$SECRET")."""

PLAYER_FINISH_S = 150.0  # a bound on players that stop by themselves; never reached when they work
SERVER_START_S = 90.0


@dataclass
class Command:
    """One command of a fenced shell block: where it is, its text (continuation lines joined), its block."""

    doc: str
    line: int
    text: str
    block: int

    def where(self) -> str:
        """``doc:line`` and the command as written."""
        return f"{self.doc}:{self.line}: {self.text}"


def reading_order() -> list[Path]:
    """README.md, then docs/*.md in the order README.md first links them, then the others by name."""
    readme = ROOT / "README.md"
    linked = list(dict.fromkeys(re.findall(r"\]\((docs/[\w.-]+\.md)\)", readme.read_text(encoding="utf-8"))))
    docs = [ROOT / path for path in linked if (ROOT / path).exists()]
    return [readme, *docs, *(path for path in sorted((ROOT / "docs").glob("*.md")) if path not in docs)]


def saved_files(path: Path) -> dict[str, str]:
    """The files a doc tells its reader to save: a ```python block right after prose naming it ("saved as `X`")."""
    found = {}
    prose = ""
    for part in re.split(r"^(```\w*\n.*?^```)$", path.read_text(encoding="utf-8"), flags=re.S | re.M):
        block = re.match(r"```python\n(.*)```", part, re.S)
        named = re.findall(r"[Ss]aved? (?:this |it )?as `([\w.-]+\.py)`", prose)
        if block and named:
            found[named[-1]] = block.group(1)
        prose = part if not part.startswith("```") else ""
    return found


def commands(paths: list[Path]) -> list[Command]:
    """Every command of the shell blocks of ``paths``, in order (comment lines and ``$`` prompts handled)."""
    found: list[Command] = []
    block = 0
    for path in paths:
        doc = str(path.relative_to(ROOT))
        lines = path.read_text(encoding="utf-8").splitlines()
        fence = None
        pending: tuple[int, str] | None = None
        for number, line in enumerate(lines, 1):
            opened = re.match(r"^```(\w*)\s*$", line)
            if fence is None:
                if opened:
                    fence = opened.group(1)
                    block += 1
                continue
            if line.startswith("```"):
                fence = None
                continue
            if fence not in SHELL_FENCES:
                continue
            if fence == "console":
                if not line.startswith("$ ") and pending is None:
                    continue  # output
                line = line.removeprefix("$ ")
            if pending is not None:
                start, text = pending
                line, number = text + " " + line.strip(), start
            if line.rstrip().endswith("\\"):
                pending = (number, line.rstrip()[:-1].rstrip())
                continue
            pending = None
            if line.strip() and not line.lstrip().startswith("#"):
                found.append(Command(doc, number, line.strip(), block))
    return found


def skip_reason(command: Command) -> str | None:
    """Why ``command`` does not run here, if it does not (SKIPPED)."""
    for doc, piece, reason in SKIPPED:
        if doc in (command.doc, "*") and piece in command.text:
            return reason
    return None


def words(text: str) -> list[str]:
    """The command's words after any ``cd DIR &&`` and ``VAR=value`` prefixes."""
    parts = shlex.split(text.split("&&")[-1], comments=True)
    while parts and re.fullmatch(r"[A-Z_]+=.*", parts[0]):
        parts.pop(0)
    return parts


def is_plyhall(parts: list[str], *sub: str) -> bool:
    """True when ``parts`` run ``plyhall SUB…``."""
    return bool(parts) and Path(parts[0]).name == "plyhall" and tuple(parts[1:1 + len(sub)]) == sub


def substituted(command: Command, port: int, game_id: str | None) -> str:
    """The command as it runs here: the free port, the game id of this database, the shorter game counts."""
    text = command.text
    for doc, old, new in SUBSTITUTIONS:
        if command.doc == doc:
            text = text.replace(old, new)
    text = text.replace("8765", str(port))
    if EXAMPLE_GAME_ID in text:
        assert game_id is not None, f"{command.where()}: no game in the database yet"
        text = text.replace(EXAMPLE_GAME_ID, game_id)
    parts = words(text)
    comment = re.search(r"\s+#.*$", text)
    bare = text[:comment.start()] if comment else text
    if is_plyhall(parts, "serve") and "--port" not in parts:
        bare += f" --port {port}"
    connects = is_plyhall(parts, "bot") or is_plyhall(parts, "tournament") or is_plyhall(parts, "cosc322", "entrant")
    if connects and "--url" not in parts and "--" not in parts:
        bare += f" --url ws://127.0.0.1:{port}/ws"
    return bare


@dataclass
class Running:
    """A command started in the background, its output in files."""

    command: Command
    proc: subprocess.Popen
    out: Path
    finite: bool = False
    stopped: bool = False
    output: str = field(default="", repr=False)

    def stop(self) -> None:
        """Ctrl-C, as a reader stops it (then harder, if it does not stop), once it has said something: a reader
        does not press Ctrl-C before the program is up (Python itself fails if interrupted while it starts)."""
        deadline = time.monotonic() + 60
        while self.proc.poll() is None and not self.out.stat().st_size and time.monotonic() < deadline:
            time.sleep(0.2)
        if self.proc.poll() is None:
            self.stopped = True
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def check(self) -> None:
        """Fail unless it ended well: exit 0 (or the Ctrl-C exit when it was stopped), and no traceback."""
        self.output = self.out.read_text(encoding="utf-8", errors="replace")
        code = self.proc.returncode
        command = self.command
        expected = next((exit for doc, piece, exit, _ in EXITS if doc == command.doc and piece in command.text), 0)
        ok = code == expected or (self.stopped and code in (130, -signal.SIGINT, -signal.SIGKILL))
        assert ok, f"{self.command.where()}\nexited {code}:\n{tail(self.output)}"
        assert "Traceback" not in self.output, f"{self.command.where()}\nprinted a traceback:\n{tail(self.output)}"


def tail(text: str, lines: int = 30) -> str:
    """The last lines of an output."""
    return "\n".join(text.splitlines()[-lines:])


class Reader:
    """Runs the commands as a reader does: one server at a time, players in other terminals."""

    def __init__(self, home: Path, port: int) -> None:
        self.home = home
        self.port = port
        self.env = {key: value for key, value in os.environ.items() if not key.startswith("PLYHALL_")}
        self.env.update(SECRETS, PATH=f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(VENV_BIN.parent))
        self.server: Running | None = None
        self.players: list[Running] = []
        self.block_players: list[Running] = []
        self.block = 0
        self.count = 0
        self.ran: list[Command] = []

    def start(self, command: Command, text: str) -> Running:
        self.count += 1
        out = self.home / f".out-{self.count}.txt"
        with out.open("w", encoding="utf-8") as sink:
            proc = subprocess.Popen(["bash", "-c", text], cwd=self.home, env=self.env, stdout=sink,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        return Running(command, proc, out)

    def run(self, command: Command) -> None:
        """Run one command (its block's players are waited for first when this is a new block)."""
        if command.block != self.block:
            self.finish_block()
            self.block = command.block
        text = substituted(command, self.port, self.game_id() if EXAMPLE_GAME_ID in command.text else None)
        parts = words(text)
        self.ran.append(command)
        print(f"{time.strftime('%H:%M:%S')} {command.where()}", flush=True)
        if parts and parts[0] == "export":
            for assignment in parts[1:]:
                key, _, value = assignment.partition("=")
                self.env[key] = value
        elif is_plyhall(parts, "serve"):
            self.stop_server()
            self.server = self.start(command, text)
            self.wait_healthy()
        elif self.is_player(parts):
            player = self.start(command, text)
            player.finite = "--games" in parts or Path(parts[0]).name.startswith("python")
            self.players.append(player)
            self.block_players.append(player)
        else:
            self.wait_players()
            done = self.start(command, text)
            try:
                done.proc.wait(timeout=240)
            except subprocess.TimeoutExpired:
                done.stop()
                output = tail(done.out.read_text(encoding="utf-8"))
                raise AssertionError(f"{command.where()}\ndid not end in 240 s:\n{output}") from None
            done.check()

    def is_player(self, parts: list[str]) -> bool:
        """A bot, an entrant, or a saved script run with python."""
        if is_plyhall(parts, "bot") or is_plyhall(parts, "cosc322", "entrant"):
            return True
        return bool(parts) and Path(parts[0]).name.startswith("python") and len(parts) == 2 \
            and (self.home / parts[1]).is_file() and not (ROOT / parts[1]).exists()

    def wait_players(self) -> None:
        """Wait for this block's players that stop by themselves, when they have an opponent among them."""
        if len(self.block_players) >= 2:
            deadline = time.monotonic() + PLAYER_FINISH_S
            for player in (p for p in self.block_players if p.finite):
                try:
                    player.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    raise AssertionError(f"{player.command.where()}\ndid not finish its games:\n"
                                         f"{tail(player.out.read_text())}") from None
                player.check()
        self.block_players = []

    def finish_block(self) -> None:
        """The end of a block: its players that stop by themselves have played."""
        self.wait_players()

    def wait_healthy(self) -> None:
        """Wait until the server answers /healthz (failing if it exits first)."""
        assert self.server is not None
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            if self.server.proc.poll() is not None:
                self.server.check()
                raise AssertionError(f"{self.server.command.where()}\nstopped at once:\n{tail(self.server.output)}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"{self.server.command.where()}\ndid not answer /healthz in {SERVER_START_S:.0f} s")

    def stop_server(self) -> None:
        """Ctrl-C the players, then the server (each must end well)."""
        for player in self.players:
            player.stop()
        for player in self.players:
            player.check()
        self.players = []
        if self.server is not None:
            self.server.stop()
            self.server.check()
            self.server = None

    def game_id(self) -> str | None:
        """A finished game of the database the running server serves."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/games?limit=1", timeout=10) as answer:
            games = json.load(answer)["games"]
        return games[0]["id"] if games else None

    def close(self) -> None:
        """Stop everything still running (without judging it: the test has failed already, or judges it itself)."""
        for running in [*self.players, *([self.server] if self.server else [])]:
            with contextlib.suppress(Exception):
                running.stop()


def checkout_like(home: Path, port: int) -> None:
    """Link the checkout's entries into ``home`` and write the files the docs tell the reader to save (with the
    free port for 8765)."""
    for name in LINKED:
        if (ROOT / name).exists():
            (home / name).symlink_to(ROOT / name)
    for path in reading_order():
        for name, text in saved_files(path).items():
            (home / name).write_text(text.replace("8765", str(port)), encoding="utf-8")


def planned() -> Iterator[tuple[Command, str | None]]:
    """Every command in reading order, with the reason it is skipped (None: it runs)."""
    for command in commands(reading_order()):
        yield command, skip_reason(command)


def test_the_skip_list_is_short_and_every_entry_matches_a_command():
    plan = list(planned())
    for doc, piece, _ in SKIPPED:
        assert any(doc in (c.doc, "*") and piece in c.text for c, _ in plan), f"stale entry of SKIPPED: {doc}: {piece}"
    for doc, piece, _, _ in EXITS:
        assert any(c.doc == doc and piece in c.text for c, _ in plan), f"stale entry of EXITS: {doc}: {piece}"
    for doc, old, _ in SUBSTITUTIONS:
        assert any(c.doc == doc and old in c.text for c, _ in plan), f"stale entry of SUBSTITUTIONS: {doc}: {old}"
    ran = [c for c, reason in plan if reason is None]
    assert len(SKIPPED) <= 15 and len(ran) >= 35, "the docs' commands run, but for a short list of kinds"
    assert {c.doc for c in ran} >= {"README.md", "docs/BOTS.md", "docs/RATINGS.md", "docs/ANALYSIS.md"}


def test_the_docs_name_files_they_ask_to_save():
    saved = saved_files(ROOT / "docs" / "BOTS.md")
    assert {"mybot.py", "agent.py"} <= set(saved)


@pytest.mark.slow
@pytest.mark.timeout(900)  # a master engine's first warm-up, two jar builds: minutes on a busy machine
def test_every_command_of_the_docs_runs_in_order_on_one_database(tmp_path):
    port = free_port()
    checkout_like(tmp_path, port)
    reader = Reader(tmp_path, port)
    try:
        for command, reason in planned():
            if reason is None:
                reader.run(command)
        reader.finish_block()
        reader.stop_server()
    finally:
        reader.close()
    assert (tmp_path / "plyhall.db").exists(), "the docs' commands share plyhall.db"
