"""The docs stay true: the Python bot in docs/BOTS.md runs as written, and every message quoted in
docs/PROTOCOL.md fits the message schemas, which the reference covers in full.

The bot example (the first ```python block) is saved as a script and started the way a reader
starts it (``python mybot.py``, so its worker process imports the file as ``__main__``), with only
two of ``run``'s arguments replaced: the live server's URL and ``games=1``.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from protocol.messages import CLIENT_MESSAGES, ERROR_CODES, SERVER_MESSAGES, ProtocolError, validate
from tests.conftest import free_port
from tests.helpers import plyhall, start_server, stop

ROOT = Path(__file__).resolve().parent.parent
BOTS_MD = ROOT / "docs" / "BOTS.md"
PROTOCOL_MD = ROOT / "docs" / "PROTOCOL.md"

# Runs the example as __main__ with only the server address in client.sdk.run replaced by the test server's.
BOOTSTRAP = """
import runpy, sys
import client.sdk

real_run = client.sdk.run

def run_on_test_server(player, name, **options):
    assert options.get("url") == "ws://127.0.0.1:8765/ws", "the example names the README's server"
    options["url"] = sys.argv[2]
    return real_run(player, name, **options)

client.sdk.run = run_on_test_server
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", BOTS_MD.read_text(encoding="utf-8"), re.S | re.M)


def test_every_python_block_compiles():
    blocks = python_blocks()
    assert blocks
    for block in blocks:
        ast.parse(block)


@pytest.mark.parametrize("order", ["house first", "example first", "together"])
def test_the_bot_example_and_the_house_bot_play_all_their_games(order, tmp_path):
    """BOTS.md's three commands as a reader runs them: plyhall serve, plyhall bot, python mybot.py."""
    example = python_blocks()[0]
    games = int(re.search(r"games=(\d+)", example).group(1))
    name = re.search(r'name="([A-Za-z0-9_.-]+)"', example).group(1)
    command = re.search(r"^(plyhall bot --game .*?)\s+#", BOTS_MD.read_text(encoding="utf-8"), re.M).group(1)
    opponent = re.search(r"--name (\S+)", command).group(1)
    script = tmp_path / "mybot.py"
    script.write_text(example, encoding="utf-8")
    port = free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    server = start_server(tmp_path / "docs.db", port)
    procs: dict[str, subprocess.Popen] = {}
    try:
        def start(which: str) -> None:
            if which == "house":
                procs[which] = plyhall(*shlex.split(command)[1:], "--url", url)
            else:
                procs[which] = subprocess.Popen([sys.executable, "-c", BOOTSTRAP, str(script), url], cwd=ROOT,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        first, second = ("house", "example") if order != "example first" else ("example", "house")
        start(first)
        if order != "together":
            time.sleep(1.0)
        start(second)
        outputs = {which: proc.communicate(timeout=180) for which, proc in procs.items()}
    finally:
        for proc in procs.values():
            stop(proc)
        stop(server)
    for which, proc in procs.items():
        assert proc.returncode == 0, (which, outputs[which])
    house_out, example_out = outputs["house"][0], outputs["example"][0]
    # the example prints one line per game as it ends, from its own seat's point of view
    lines = example_out.splitlines()
    assert len(lines) == games and all(re.match(rf"^(won|drew|lost) in .* against {re.escape(opponent)}: ", line)
                                       for line in lines)
    ended = re.findall(r"^game \d+ in .*: (?:won|drew|lost) against", house_out, re.M)
    assert len(ended) == games and "done: " in house_out and f"against {name}" in house_out
    waiting = [line for out in (house_out, outputs["example"][1]) for line in out.splitlines()
               if "waiting for an opponent for connect4" in line]
    assert waiting, "the bot that waited said so"


def test_quoted_exchanges_fit_the_schemas():
    """Lines such as ``ann -> {...}`` (sent) and ``ann <- {...}`` (received) in PROTOCOL.md."""
    quoted = re.findall(r"^\w+ (->|<-) (\{.*\})$", PROTOCOL_MD.read_text(encoding="utf-8"), re.M)
    assert len(quoted) > 40
    seen = set()
    for direction, text in quoted:
        msg = json.loads(text)
        schemas = CLIENT_MESSAGES if direction == "->" else SERVER_MESSAGES
        checked = validate(msg, schemas)
        assert not isinstance(checked, ProtocolError), (text[:80], checked)
        seen.add(msg["type"])
    assert {"login", "welcome", "game_start", "move", "moved", "game_over", "error"} <= seen


def test_the_script_that_makes_the_quoted_exchange_runs_and_gives_its_message_types():
    """docs/example_exchange.py, which PROTOCOL.md says to run "to see the messages of the current version", ended
    in a TypeError once the client passed a size limit to its codec: it runs, and says what the quote says."""
    run = subprocess.run([sys.executable, str(PROTOCOL_MD.parent / "example_exchange.py")], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    printed = {json.loads(text)["type"] for text in re.findall(r"^\w+ (?:->|<-) (\{.*\})$", run.stdout, re.M)}
    quoted = {json.loads(text)["type"]
              for text in re.findall(r"^\w+ (?:->|<-) (\{.*\})$", PROTOCOL_MD.read_text(encoding="utf-8"), re.M)}
    assert {"login", "welcome", "game_start", "move", "moved", "game_over"} <= printed <= quoted
    # and the quote is what it prints, but for the tokens and ids each run makes afresh (it went stale: seeks and
    # rooms said "rated", a game's end "unrated", an error quoted the move it refused, and the quote did not)
    fresh = re.compile(r'"(resume|record)":"[0-9a-f]+"')
    block = PROTOCOL_MD.read_text(encoding="utf-8").split("## 6. An example exchange", 1)[1].split("```text\n", 1)[1]
    assert fresh.sub(r'"\1":"?"', block.split("```", 1)[0]) == fresh.sub(r'"\1":"?"', run.stdout), \
        "PROTOCOL.md section 6 is not what docs/example_exchange.py prints: paste its output in"


def test_the_reference_lists_every_message_and_error_code():
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    for name in [*CLIENT_MESSAGES, *SERVER_MESSAGES, *ERROR_CODES]:
        assert f"| `{name}` |" in text, name
    for kind, schema in SERVER_MESSAGES.items():
        row = re.search(rf"^\| `{kind}` \|(.*)$", text[text.index("## 5. Server messages"):], re.M).group(1)
        for field in [*schema.required, *schema.optional]:
            assert f"`{field}`" in row, (kind, field)
    for kind, schema in CLIENT_MESSAGES.items():
        row = re.search(rf"^\| `{kind}` \|(.*)$", text[text.index("## 4. Client messages"):], re.M).group(1)
        for field in [*schema.required, *schema.optional]:
            assert f"`{field}`" in row, (kind, field)
