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
    "client.runner": {"protocol", "client", "bots"},  # programs that run our bots: with plyhall, all that imports both
    "plyhall": {"protocol", "server", "client", "bots", "plyhall"},  # the commands sit on top of everything
}
RUN_BOTS = ("client.runner", "plyhall")
"""What runs our bots as a program (DESIGN.md): the only code outside ``bots`` that imports ``bots``."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_statements(path: Path, type_checking: bool = True) -> list[tuple[str, list[str]]]:
    """Every import of a source file, also one inside a function: ``(module, names)``, the module fully named
    (relative imports resolved) and ``names`` what ``from module import ...`` takes ([] for ``import module``).
    ``type_checking=False`` leaves out the imports made only for type checking (``if TYPE_CHECKING:``)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(), str(path))
    skipped = set() if type_checking else {
        id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
        and getattr(block.test, "id", getattr(block.test, "attr", "")) == "TYPE_CHECKING"
        for statement in block.body for node in ast.walk(statement)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((name, [alias.name for alias in node.names]))
    return found


def _imports(path: Path) -> set[str]:
    """The packages of ours that a source file imports (absolute and relative imports)."""
    return {name.split(".")[0] for name, _ in _import_statements(path) if name.split(".")[0] in OURS}


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


def test_every_command_is_a_module_of_the_commands_package_and_listed():
    """A subcommand module left out of ``plyhall.cli.COMMANDS`` would be a command nobody can run; every subcommand
    registers itself under its module's name."""
    from plyhall.cli import COMMANDS, build_parser

    modules = {path.stem for path in (ROOT / "plyhall" / "commands").glob("*.py")} - {"__init__"}
    assert {module.__name__.removeprefix("plyhall.commands.") for module in COMMANDS} == modules
    subcommands = next(action for action in build_parser()._actions if action.dest == "command").choices
    assert set(subcommands) == modules


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
    return {name for name, _ in _import_statements(path, type_checking=False)}


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


def _module_graph() -> dict[str, set[str]]:
    """Each module of ours and the modules of ours it imports: every import counts, one inside a function or under
    ``if TYPE_CHECKING:`` too (two modules that name each other's types cannot be read, or moved, one without the
    other). ``from package import name`` imports the module ``package.name`` where there is one, else ``package``;
    a module always imports its package first, so that is no edge."""
    paths = {_module_name(path): path for top in OURS for path in sorted((ROOT / top).rglob("*.py"))}
    graph = {}
    for module, path in paths.items():
        targets = set()
        for name, names in _import_statements(path):
            submodules = {f"{name}.{each}" for each in names if f"{name}.{each}" in paths}
            targets |= submodules or ({name} if name in paths else set())
            if len(submodules) < len(names) and name in paths:  # "from pkg import mod, Thing": pkg too
                targets.add(name)
        graph[module] = {t for t in targets if t != module and not module.startswith(t + ".")}
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports in ``graph`` (its modules in order, the first again at the end), or None."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(module: str, path: list[str]) -> list[str] | None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := walk(target, [*path, target])):
                return cycle
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := walk(module, [module])):
            return cycle
    return None


def test_no_modules_of_ours_import_each_other_in_a_circle():
    graph = _module_graph()
    assert len(graph) > 150 and {"protocol", "server.core.hall", "client.sdk", "bots", "plyhall.cli"} <= set(graph)
    cycle = _circle(graph)
    assert cycle is None, (f"modules import each other in a circle: {' -> '.join(cycle)} (move what they share to a "
                           "module below both, or pass the callback in)")


def test_the_circle_check_sees_a_circle_of_type_only_and_lazy_imports(tmp_path, monkeypatch):
    """The check above finds circles like the issue's: two modules importing each other, one only for its types,
    the other inside a function."""
    package = tmp_path / "bots" / "circle"
    package.mkdir(parents=True)
    (tmp_path / "bots" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "book.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .master import M\n")
    (package / "master.py").write_text("def f():\n    from bots.circle import book\n")
    (package / "other.py").write_text("from . import master\nfrom bots.circle.book import Book\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = _module_graph()
    assert graph["bots.circle.other"] == {"bots.circle.master", "bots.circle.book"}
    assert _circle(graph) == ["bots.circle.book", "bots.circle.master", "bots.circle.book"]
    graph["bots.circle.master"] = set()
    assert _circle(graph) is None


def _lines(path: Path) -> int:
    return path.read_text().count("\n")


def test_no_module_is_long_unless_its_docstring_says_why():
    checked = 0
    for top in OURS:
        for path in sorted((ROOT / top).rglob("*.py")):
            docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
            assert _lines(path) <= 500 or "long because" in docstring, (
                f"{path.relative_to(ROOT)} has {_lines(path)} lines: split it where it has a seam, or say in its "
                "docstring why it is long because ...")
            checked += 1
    assert checked > 150


def test_the_architecture_map_names_only_files_that_exist():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:protocol|server|client|bots|plyhall|tests|docs)/[A-Za-z0-9_/<>.]*)`", text))
    assert len(paths) > 30
    for path in sorted(paths):
        if "<" in path:  # a pattern such as protocol/games/<game>.py: its folder exists
            path = path.split("<", 1)[0].rsplit("/", 1)[0]
        assert (ROOT / path).exists(), f"docs/ARCHITECTURE.md names {path}, which does not exist"
    # a module named alone (`floor.py`, beside the folder a row or sentence names): some package of ours has it
    names = set(re.findall(r"`([a-z0-9_]+\.py)`", text))
    assert len(names) > 30
    for name in sorted(names):
        assert any(ROOT.glob(f"{top}/**/{name}") for top in OURS), f"docs/ARCHITECTURE.md names {name}: no such file"


def test_the_hall_dispatches_the_room_fits_and_the_cluster_link_is_split():
    """Issue 45's bounds, which no docstring lifts: the hall a dispatcher of at most 600 lines, the room under 600,
    the Redis link of a cluster node a package split by responsibility, each module within 500 lines."""
    assert _lines(ROOT / "server" / "core" / "hall.py") <= 600
    assert _lines(ROOT / "server" / "core" / "room.py") <= 600
    cluster = sorted((ROOT / "server" / "io" / "cluster").glob("*.py"))
    assert {path.stem for path in cluster} >= {"leases", "register", "forwarding", "adoption"}
    for path in cluster:
        assert _lines(path) <= 500, f"{path.relative_to(ROOT)} has {_lines(path)} lines"
