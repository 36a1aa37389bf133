"""The installed packages are this repository's, the layers import only what DESIGN.md allows, and the
command line answers."""

from __future__ import annotations

import ast
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


OURS = ("protocol", "server", "client", "bots")
# What each part may import of ours (the most specific prefix applies). Every import counts, also one
# inside a function: a lazy import is still a dependency.
ALLOWED = {
    "protocol": {"protocol"},
    "bots": {"protocol", "bots"},
    "server": {"protocol", "server"},
    "client": {"protocol", "client"},  # the SDK: protocol only
    "client.runner": {"protocol", "client", "bots"},  # programs that run our bots: the only importers of both
    "client.cli": {"protocol", "client", "server"},  # the command line sits on top of everything
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """The packages of ours that a source file imports (absolute and relative imports)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                names = [".".join(base + ([node.module] if node.module else []))]
            else:
                names = [node.module or ""]
        else:
            continue
        found.update(name.split(".")[0] for name in names if name.split(".")[0] in OURS)
    return found


def test_every_layer_imports_only_what_the_design_allows():
    checked = 0
    for top in OURS:
        for path in sorted((ROOT / top).rglob("*.py")):
            module = _module_name(path)
            rule = max((prefix for prefix in ALLOWED if module == prefix or module.startswith(prefix + ".")), key=len)
            forbidden = _imports(path) - ALLOWED[rule]
            allowed = sorted(ALLOWED[rule])
            assert not forbidden, f"{module} imports {sorted(forbidden)}; {rule} may import only {allowed}"
            checked += 1
    assert checked > 40


def test_bots_are_imported_only_by_the_programs_that_run_them():
    importers = {_module_name(p) for top in OURS for p in (ROOT / top).rglob("*.py") if "bots" in _imports(p)
                 and not _module_name(p).startswith("bots")}
    assert importers and all(name.startswith("client.runner") for name in importers), importers


def test_cli_version_and_help():
    out = subprocess.run([sys.executable, "-m", "client.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"plyhall {protocol.__version__}"
    out = subprocess.run([sys.executable, "-m", "client.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for command in ("serve", "export", "bot", "match", "play"):
        assert command in out.stdout
