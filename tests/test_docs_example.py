"""The docs stay true: the Python bot in docs/BOTS.md runs as written, and every message quoted in
docs/PROTOCOL.md fits the message schemas, which the reference covers in full.

The bot example (the first ```python block) is saved as a script and started the way a reader
starts it (``python mybot.py``, so its worker process imports the file as ``__main__``), with only
two of ``run``'s arguments replaced: the live server's URL and ``games=1``.
"""

from __future__ import annotations

import ast
import asyncio
import json
import random
import re
import subprocess
import sys
from pathlib import Path

from client.sdk import FunctionPlayer, RunOptions, Turn, run_player
from protocol.messages import CLIENT_MESSAGES, ERROR_CODES, SERVER_MESSAGES, ProtocolError, validate

ROOT = Path(__file__).resolve().parent.parent
BOTS_MD = ROOT / "docs" / "BOTS.md"
PROTOCOL_MD = ROOT / "docs" / "PROTOCOL.md"

# Runs the example as __main__ with client.sdk.run patched to play one game on the test server.
BOOTSTRAP = """
import runpy, sys
import client.sdk

real_run = client.sdk.run

def run_one_game(player, name, **options):
    assert "url" in options, "the example names the server it connects to"
    options.update(url=sys.argv[2], games=1)
    return real_run(player, name, **options)

client.sdk.run = run_one_game
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", BOTS_MD.read_text(encoding="utf-8"), re.S | re.M)


def test_every_python_block_compiles():
    blocks = python_blocks()
    assert blocks
    for block in blocks:
        ast.parse(block)


def random_move(turn: Turn):
    return random.choice(turn.legal_moves)


async def test_the_bot_example_plays_a_game(server, url, tmp_path):
    example = python_blocks()[0]
    assert "run(" in example and "class" in example
    game = re.search(r'game="([a-z0-9-]+)"', example).group(1)
    name = re.search(r'name="([A-Za-z0-9_.-]+)"', example).group(1)
    script = tmp_path / "mybot.py"
    script.write_text(example, encoding="utf-8")
    # the opponent sits down first, so the example finds its room in the listing and joins it
    opponent = asyncio.create_task(run_player(FunctionPlayer(random_move), RunOptions(
        name="sparring", url=url, game=game, room="Docs Lake", games=1, think="thread")))
    for _ in range(200):
        room = server.hall.rooms.get("Docs Lake")
        if room is not None and room.seats[0] == "sparring":
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the opponent never sat down")
    # a plain Popen waited on in a thread (asyncio's child watcher can miss an exit across tests)
    proc = subprocess.Popen([sys.executable, "-c", BOOTSTRAP, str(script), url], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stdout, stderr = await asyncio.to_thread(proc.communicate, timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0, stderr.decode()[-3000:]
    results = await asyncio.wait_for(opponent, 30)
    assert len(results) == 1 and results[0].players == ["sparring", name]
    # the example prints one line per game, from its own seat's point of view
    lines = stdout.decode().splitlines()
    assert len(lines) == 1 and re.match(r"^(won|drew|lost) in Docs Lake against sparring: ", lines[0]), lines
    mine = {0.0: "won", 0.5: "drew", 1.0: "lost"}[results[0].score]
    assert lines[0].startswith(mine)
    await server.flush()
    records = server.storage.list_games()
    assert len(records) == 1 and records[0]["players"] == ["sparring", name] and records[0]["status"] == "finished"


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
