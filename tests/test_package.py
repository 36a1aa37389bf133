"""The installed packages are this repository's, the layers import only what DESIGN.md allows, and the
command line answers."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import bots
import client
import plyhall
import protocol
import server

ROOT = Path(__file__).resolve().parents[1]


def test_imported_packages_are_this_repository():
    # PyPI has unrelated distributions called "protocol", "server", "client" and "bots"
    for package in (protocol, server, client, bots, plyhall):
        assert Path(package.__file__).resolve().parent == ROOT / package.__name__
    assert protocol.PLYHALL_PROTOCOL is True


def test_protocol_imports_nothing_else_of_ours():
    code = "import sys, protocol, protocol.games, protocol.codec, protocol.messages; " \
           "print([m for m in sys.modules if m.split('.')[0] in ('server', 'client', 'bots')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


OURS = ("protocol", "server", "client", "bots", "plyhall")
# What each part may import of ours (the most specific prefix applies). Every import counts, also one
# inside a function: a lazy import is still a dependency.
ALLOWED = {
    "protocol": {"protocol"},
    "bots": {"protocol", "bots"},
    "server": {"protocol", "server"},
    "client": {"protocol", "client"},  # the SDK: protocol only
    "client.runner": {"protocol", "client", "bots"},  # programs that run our bots: the only importers of both
    "plyhall": {"protocol", "server", "client", "bots", "plyhall"},  # the commands sit on top of everything
}
RUN_BOTS = ("client.runner", "plyhall")
"""What runs our bots as a program (DESIGN.md): the only code outside ``bots`` that imports ``bots``."""


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
    assert importers and all(name.startswith(RUN_BOTS) for name in importers), importers
    # the server never imports bots, nor what runs them: house bots are processes of their own
    server_imports = set().union(*(_imports(p) for p in (ROOT / "server").rglob("*.py")))
    assert not server_imports & {"bots", "plyhall"}, server_imports


def test_cli_version_and_help():
    out = subprocess.run([sys.executable, "-m", "plyhall", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"plyhall {protocol.__version__}"
    out = subprocess.run([sys.executable, "-m", "plyhall", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for command in ("serve", "export", "bot", "match", "play"):
        assert command in out.stdout


# The server's folders show its design: what may touch a socket or a database, and what may not --------

SANS_IO = ("server.core", "server.tournament")
"""Plain objects fed events and the time: no sockets, files, databases, processes or clocks of their own."""
IO_MODULES = {"asyncio", "websockets", "sqlite3", "psycopg", "subprocess", "socket", "threading", "concurrent",
              "http", "urllib", "uvloop", "prometheus_client", "fcntl", "os", "time", "tempfile", "shutil"}
"""Standard and third-party modules that do I/O (``server.core.env`` alone reads the clock: it is injected)."""
STORAGE_INTERFACE = {"server.storage", "server.storage.base", "server.storage.records", "server.storage.writer",
                     "server.storage.spill"}
"""What of ``server.storage`` the rest of the server may import (never the SQL or a database's module)."""


def _module_imports(path: Path) -> set[str]:
    """Every module a source file imports, fully named (relative imports resolved), leaving out imports only made
    for type checking (``if TYPE_CHECKING:``)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(), str(path))
    skipped = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
               and getattr(block.test, "id", getattr(block.test, "attr", "")) == "TYPE_CHECKING"
               for statement in block.body for node in ast.walk(statement)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                found.add(".".join(base + ([node.module] if node.module else [])))
            else:
                found.add(node.module or "")
    return found


def _server_modules() -> dict[str, set[str]]:
    return {_module_name(path): _module_imports(path) for path in sorted((ROOT / "server").rglob("*.py"))}


def test_the_sans_io_core_imports_no_io_and_storage_only_through_its_interface():
    for module, imports in _server_modules().items():
        ours = {name for name in imports if name.split(".")[0] == "server"}
        if module.startswith(SANS_IO):
            io = {name for name in imports if name.split(".")[0] in IO_MODULES} - (
                {"time"} if module == "server.core.env" else set())
            assert not io, f"{module} is sans-I/O but imports {sorted(io)}"
            edge = {name for name in ours if name.startswith("server.io")}
            assert not edge, f"{module} is sans-I/O but imports the I/O edge: {sorted(edge)}"
            stored = {name for name in ours if name.startswith("server.storage") and name != "server.storage.records"}
            assert not stored, f"{module} is sans-I/O and may know only the storage records, not {sorted(stored)}"
        if module.startswith("server.storage"):
            above = {name for name in ours if not name.startswith("server.storage")}
            assert not above, f"{module} is storage and may import nothing else of the server: {sorted(above)}"
        elif module != "server.storage":
            inside = {name for name in ours if name.startswith("server.storage.")} - STORAGE_INTERFACE
            assert not inside, f"{module} reaches past the storage interface: {sorted(inside)}"


def test_the_server_modules_import_each_other_without_circles():
    graph = _server_modules()
    modules = set(graph)

    def targets(module: str) -> set[str]:
        # "from .core import hall" names a module; "from .core.hall import Hall" too: keep what is a module
        return {name for name in graph[module] if name in modules and name != module}

    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(targets(module)):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                raise AssertionError(f"the server modules import each other in a circle: {' -> '.join(cycle)}")
            if target not in state:
                walk(target, [*path, target])
        state[module] = 2

    for module in sorted(modules):
        if module not in state:
            walk(module, [module])


def test_no_server_module_is_long_unless_its_docstring_says_why():
    for path in sorted((ROOT / "server").rglob("*.py")):
        lines = path.read_text().count("\n")
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
        assert lines <= 500 or "long because" in docstring, f"{path.relative_to(ROOT)} has {lines} lines"


def test_the_architecture_map_names_only_files_that_exist():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:protocol|server|client|bots|plyhall|tests|docs)/[A-Za-z0-9_/<>.]*)`", text))
    assert len(paths) > 30
    for path in sorted(paths):
        if "<" in path:  # a pattern such as protocol/games/<game>.py: its folder exists
            path = path.split("<", 1)[0].rsplit("/", 1)[0]
        assert (ROOT / path).exists(), f"docs/ARCHITECTURE.md names {path}, which does not exist"
    for name in re.findall(r"`((?:hall|room|room_settings|clock|identity|logins|seeks|tournaments|house|timers|rooms|"
                           r"sql|sqlite|postgres|records|writer|spill|connections|transport|http|api|static_files|"
                           r"checks|supervisor)\.py)`", text):
        assert any(ROOT.glob(f"server/*/{name}")), f"docs/ARCHITECTURE.md names {name}, which no server folder has"
