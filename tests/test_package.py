"""The installed packages are this repository's, and the command line answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bots
import client
import protocol
import server

ROOT = Path(__file__).resolve().parents[1]


def test_imported_packages_are_this_repository():
    # PyPI has unrelated distributions called "protocol", "server", "client" and "bots"
    for package in (protocol, server, client, bots):
        assert Path(package.__file__).resolve().parent == ROOT / package.__name__
    assert protocol.PLYHALL_PROTOCOL is True


def test_protocol_imports_nothing_else_of_ours():
    code = "import sys, protocol, protocol.games, protocol.codec, protocol.messages; " \
           "print([m for m in sys.modules if m.split('.')[0] in ('server', 'client', 'bots')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_cli_version_and_help():
    out = subprocess.run([sys.executable, "-m", "client.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"plyhall {protocol.__version__}"
    out = subprocess.run([sys.executable, "-m", "client.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for command in ("serve", "export", "bot", "match", "play"):
        assert command in out.stdout
