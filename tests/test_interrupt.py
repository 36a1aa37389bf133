"""Ctrl-C stops a bot between two callbacks of its event loop, never inside one (``client/interrupt.py``).

``asyncio.run`` cancels its main task from a signal handler that runs between any two bytecodes: a bot's search
result arriving through its executor was then and again cancelled halfway through the callback that delivers it,
and the bot printed ``InvalidStateError: invalid state`` as it stopped (seen in CI, ``plyhall bot ... --ladder``
stopped by the README's walk-through). Each script runs in a process of its own: it sends itself SIGINT. And the
cancel a Ctrl-C makes must reach the bot's task while it waits for the server, whatever arrives in the same turn.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from client import interrupt
from client.connection import Client

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import asyncio, os, signal
from client import interrupt

seen = []

async def busy_when_interrupted():
    os.kill(os.getpid(), signal.SIGINT)
    total = 0
    for i in range(200_000):  # a signal handler runs between these bytecodes: was the task cancelled inside them?
        total += i
    seen.append(asyncio.current_task().cancelling())
    await asyncio.sleep(30)

async def stubborn():  # ignores the first Ctrl-C: the second stops it at once
    os.kill(os.getpid(), signal.SIGINT)
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        seen.append("cancelled")
    os.kill(os.getpid(), signal.SIGINT)
    seen.append("went on after the second")  # a second Ctrl-C stops it at once: not at the next turn of the loop
    await asyncio.sleep(30)

async def slow_to_stop():  # takes its time after the first Ctrl-C: it is told that a second stops it
    interrupt.REMIND_AFTER = 0.05
    os.kill(os.getpid(), signal.SIGINT)
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        seen.append("cancelled")
    await asyncio.sleep(0.5)  # a timer of the same loop as the reminder's: it fires after it, however busy the machine
    os.kill(os.getpid(), signal.SIGINT)
    await asyncio.sleep(30)

try:
    RUN(MAIN())
except KeyboardInterrupt:
    print("KeyboardInterrupt", seen)
else:
    print("returned", seen)
"""


def _run(runner: str, main: str) -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT.replace("RUN", runner).replace("MAIN", main)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout.strip()


def test_ctrl_c_cancels_a_bot_between_callbacks_and_raises_keyboard_interrupt():
    assert _run("interrupt.run", "busy_when_interrupted") == "KeyboardInterrupt [0]"


def test_asyncio_run_cancels_in_the_middle_of_whatever_runs():
    """The hazard itself: with ``asyncio.run`` the task is cancelled before the loop of bytecodes is over."""
    assert _run("asyncio.run", "busy_when_interrupted") == "KeyboardInterrupt [1]"


def test_a_second_ctrl_c_stops_a_bot_that_ignores_the_first_at_once():
    assert _run("interrupt.run", "stubborn") == "KeyboardInterrupt ['cancelled']"


def test_a_bot_slow_to_stop_says_that_a_second_ctrl_c_stops_it():
    script = SCRIPT.replace("RUN", "interrupt.run").replace("MAIN", "slow_to_stop")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "KeyboardInterrupt ['cancelled']"
    assert done.stderr.strip() == interrupt.REMINDER


def test_a_bot_that_stopped_says_nothing_more_while_its_search_ends():
    """The task ends at its Ctrl-C while a search thread runs on (``asyncio.run`` waits for it, the loop running)."""
    script = SCRIPT.replace("RUN", "interrupt.run").replace("MAIN", "slow_to_stop").replace(
        "    await asyncio.sleep(0.5)",
        "    import time\n    asyncio.get_running_loop().run_in_executor(None, time.sleep, 0.5)\n    return")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "returned ['cancelled']" and done.stderr == ""


def test_a_process_that_ignores_ctrl_c_goes_on_ignoring_it():
    """A bot started in the background by a script (whose shell ignores SIGINT for it) is not stopped by one."""
    script = SCRIPT.replace("RUN(MAIN())", "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                            "    print(interrupt.run(quiet()), signal.getsignal(signal.SIGINT) is signal.SIG_IGN)")
    script = script.replace("seen = []", "seen = []\n\nasync def quiet():\n"
                            "    os.kill(os.getpid(), signal.SIGINT)\n    await asyncio.sleep(0.2)\n    return 'done'")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "done True"


@pytest.mark.parametrize("turns", [0, 1, 2])
@pytest.mark.parametrize("waiting_for", ["a push", "a reply"])
async def test_a_ctrl_c_that_meets_a_message_stops_the_bot(waiting_for, turns):
    """A bot's Ctrl-C cancels its task while it waits for the server; a message that arrived in the same turns of the
    loop must not eat the cancel. ``asyncio.wait_for`` did so on Python 3.11 (it returns the result when its inner
    wait is done, cancelled or not), and a master bot, whose messages come one after another, played on after its
    Ctrl-C until the next."""
    client = Client()
    client.ws = _Silent()
    if waiting_for == "a push":
        task = asyncio.create_task(client.recv(timeout=10))
    else:
        task = asyncio.create_task(client.request({"type": "ping"}, timeout=10))
    for _ in range(3):
        await asyncio.sleep(0)  # waiting now
    if waiting_for == "a push":
        client._keep({"type": "moved"})
    else:
        client._pending[1].set_result({"type": "pong", "id": 1})
    for _ in range(turns):
        await asyncio.sleep(0)
    if task.cancel():  # still waiting: the cancel is taken, and the task ends with it
        with pytest.raises(asyncio.CancelledError):
            await task
    else:  # the message was given before the Ctrl-C came
        assert task.done() and not task.cancelled()


class _Silent:
    """A websocket that takes what is sent and sends nothing."""

    async def send(self, data: bytes) -> None:
        pass


def test_a_bot_stopped_while_it_waits_alone_in_a_room_gives_its_seat_back(tmp_path: Path):
    """Ctrl-C on ``plyhall bot --room R`` while nobody had come yet kept its seat for the grace period, so the same
    command run again was refused ("still held by a seat kept for the connection that just went away"): the seat
    is given back as it stops, and the command runs again at once."""
    import signal

    from tests.helpers import http_json, plyhall, read_until, running_server, stop

    with running_server(tmp_path) as port:
        command = ("bot", "--game", "connect4", "--name", "ci", "--room", "Lonely Room", "--games", "1",
                   "--level", "random", "--url", f"ws://127.0.0.1:{port}/ws")
        first = plyhall(*command)
        read_until(first, "waiting in Lonely Room for a second player")
        first.send_signal(signal.SIGINT)
        assert first.wait(timeout=60) == 130
        status, listing = http_json(port, "/api/rooms")
        assert status == 200 and listing["rooms"] == [], listing  # the room closed with its only member gone
        again = plyhall(*command)
        try:
            read_until(again, "waiting in Lonely Room for a second player")
        finally:
            stop(again)


INTERRUPT_WHILE_IMPORTING = """
import sys

class Interrupt:  # a Ctrl-C that arrives while the command's modules are imported
    def find_spec(self, name, path=None, target=None):
        if name == "plyhall.commands":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt())
"""


def test_ctrl_c_while_a_command_still_imports_says_interrupted_without_a_traceback(tmp_path: Path):
    (tmp_path / "sitecustomize.py").write_text(INTERRUPT_WHILE_IMPORTING)
    script = Path(sys.executable).parent / "plyhall"  # the console script pip made, as a user runs it
    command = [str(script)] if script.exists() else [sys.executable, "-m", "plyhall"]
    done = subprocess.run([*command, "ratings", "--help"], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{ROOT}"})
    assert (done.returncode, done.stderr.strip()) == (130, "interrupted"), done.stderr
