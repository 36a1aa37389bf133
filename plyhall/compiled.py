"""The compiled core: the modules every move runs through, built to C with mypyc by ``plyhall compile`` and loaded in
place of their Python by the processes that serve (docs/SCALING.md, "Eleventh round").

Opt-in and safe to forget: a build is kept in the user's cache (:func:`protocol.user_cache.cache_dir`, or
``$PLYHALL_CORE_DIR``) under a fingerprint of every source file of ``server`` and ``protocol`` and of the interpreter,
so a checkout edited, pulled or run by another Python simply finds no build of its own and runs its Python
(``plyhall serve`` says which core it runs, unless it is the Python with nothing built). :func:`use` is called
before any of those modules is imported; it puts a finder first on ``sys.meta_path`` that answers the compiled
modules' names with the build's extension modules. ``PLYHALL_CORE=python`` turns it off, ``PLYHALL_CORE=compiled``
makes a missing build an error instead of a fallback.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from protocol.user_cache import cache_dir

MODULES: tuple[str, ...] = (
    "protocol.codec",
    "protocol.messages",
    "protocol.games.connect4",
    "server.core.clock",
    "server.core.outbox",
    "server.core.room_state",
    "server.core.room",
    "server.core.rooms",
    "server.core.timers",
    "server.core.floor",
    "server.core.hall",
    "server.storage.records",
    "server.io.frames",
    "server.io.connections",
    "server.io.delivery",
)
"""The modules compiled: what a move runs through from its frame to its writes (the rest stays Python)."""

GROUP = "plyhall_core"
"""The name of the build's shared library (``plyhall_core__mypyc``), which every compiled module imports."""
KEEP = 4
"""Builds kept in the cache: the one just made and the three used or made last (``plyhall compile --clean``: none)."""

MANIFEST = "manifest.json"
ENVIRONMENT = "PLYHALL_CORE"
DIRECTORY = "PLYHALL_CORE_DIR"
CHOICES = ("auto", "compiled", "python")
HINT = "plyhall compile"
DEFAULT = f"Python core (`{HINT}` builds the compiled one)"
ASKED_PYTHON = f"Python core ({ENVIRONMENT}=python)"
UNSAID = (DEFAULT, ASKED_PYTHON)
"""What :func:`use` says that ``plyhall serve`` does not repeat: nothing built and nothing asked, or the Python
asked for."""


class CompileError(Exception):
    """The compiled core cannot be built or loaded; the message says why and what to do."""


def source_root() -> Path:
    """The folder that holds the ``server`` and ``protocol`` packages (the checkout, or site-packages)."""
    return Path(__file__).resolve().parent.parent


def fingerprint(root: Path | None = None) -> str:
    """A digest of every ``.py`` file of ``server`` and ``protocol`` (their paths and contents), of the modules
    compiled (:data:`MODULES`), and of the interpreter's version and extension suffix: a build serves exactly the
    sources, the choice of modules and the Python it was made from."""
    root = source_root() if root is None else root
    digest = hashlib.sha256(f"{sys.version}|{sysconfig.get_config_var('EXT_SUFFIX')}|{' '.join(MODULES)}".encode())
    for package in ("protocol", "server"):
        for path in sorted((root / package).rglob("*.py")):
            if path.name.startswith(".") or not path.is_file():  # an editor's lock file (.#hall.py), a dangling link
                continue
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def builds() -> Path:
    """The folder of the builds: ``$PLYHALL_CORE_DIR``, else ``core`` in Plyhall's folder of the user's cache."""
    chosen_dir = os.environ.get(DIRECTORY, "")
    return Path(chosen_dir) if chosen_dir else cache_dir() / "core"


def build_dir(print_of: str | None = None) -> Path:
    """Where the build for the current sources and interpreter lives (``print_of``: a fingerprint already made)."""
    return builds() / (print_of or fingerprint())


def _module_files(folder: Path) -> dict[str, Path]:
    """The build's extension module for each compiled module's name, and its shared library's."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    files = {name: folder / (name.replace(".", "/") + suffix) for name in MODULES}
    files[f"{GROUP}__mypyc"] = folder / f"{GROUP}__mypyc{suffix}"
    return files


class CompiledFinder(importlib.abc.MetaPathFinder):
    """Answers the compiled modules' names with the build's extension modules, before any other finder."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The extension module's spec for a compiled module, None for every other name."""
        file = self.files.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(file))
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def active() -> bool:
    """Whether this process loads the compiled core."""
    return any(isinstance(finder, CompiledFinder) for finder in sys.meta_path)


def _all_builds() -> list[Path]:
    """Every build in :func:`builds` (a folder with a manifest: not a build under way or one cut short)."""
    parent = builds()
    return [path for path in parent.iterdir() if (path / MANIFEST).is_file()] if parent.is_dir() else []


def stale(folder: Path) -> bool:
    """Whether the cache holds builds of other sources but not ``folder``, the build of these (edited or pulled since
    `plyhall compile`)."""
    return any(path.name != folder.name for path in _all_builds()) and not is_built(folder)


def is_built(folder: Path) -> bool:
    """Whether ``folder`` holds a whole build (its manifest and every module)."""
    return (folder / MANIFEST).is_file() and all(file.is_file() for file in _module_files(folder).values())


def chosen(choice: str | None = None) -> str:
    """``choice``, else ``$PLYHALL_CORE``, else ``auto``; :class:`CompileError` when it is none of :data:`CHOICES`."""
    value = (choice or os.environ.get(ENVIRONMENT) or "auto").strip().lower()
    if value not in CHOICES:
        raise CompileError(f"{ENVIRONMENT}={value!r} is not a choice; use one of {', '.join(CHOICES)}")
    return value


def describe(folder: Path, choice: str | None = None) -> str:
    """The words for the core a process starting now would run, ``folder`` being where the build of the sources
    would be (:func:`build_dir`)."""
    value = chosen(choice)
    if value == "python":
        return ASKED_PYTHON
    if is_built(folder):
        return "compiled core (mypyc)"
    if stale(folder):
        return f"Python core (the compiled core was built from other sources: run `{HINT}` again)"
    return DEFAULT


LAST: str | None = None
"""What the last :func:`use` said (``plyhall serve`` logs it)."""
REFUSED: str | None = None
"""Why the command line's :func:`use` failed, if it did (``plyhall serve`` then refuses to start)."""


def use(choice: str | None = None) -> str:
    """Load the compiled core for the rest of this process if a build of the current sources is in the cache (or as
    ``choice`` / ``$PLYHALL_CORE`` says: ``auto``, ``compiled``, ``python``); the words that say which core runs.
    Raises :class:`CompileError` when ``compiled`` is asked for and cannot be had, or the choice is not one."""
    global LAST
    value = chosen(choice)
    if active():
        LAST = "compiled core (mypyc)"
        return LAST
    if value == "python":
        LAST = ASKED_PYTHON
        return LAST
    try:
        folder = build_dir()
        built = is_built(folder)
        LAST = describe(folder, value)
    except OSError as exc:  # a source or the cache that cannot be read: no build to trust
        if value == "compiled":
            raise CompileError(f"cannot look for the compiled core: {exc}") from exc
        LAST = f"Python core (cannot look for the compiled core: {exc})"
        return LAST
    if value == "compiled" and not built:
        raise CompileError(f"no compiled core for these sources in {builds()}; run `{HINT}` first "
                           f"(or set {ENVIRONMENT}=auto to run the Python core)")
    if not built:
        return LAST
    loaded = sorted(name for name in MODULES if name in sys.modules)
    if loaded:  # a process that already runs their Python would hold two copies of each class
        if value == "compiled":
            raise CompileError(f"the compiled core must be loaded before {loaded[0]} is imported")
        LAST = f"Python core ({loaded[0]} was imported before the compiled core could be loaded)"
        return LAST
    finder = CompiledFinder(_module_files(folder))
    sys.meta_path.insert(0, finder)
    try:  # the shared library holds all the compiled code: one that does not load (damaged, another system's) is
        importlib.import_module(f"{GROUP}__mypyc")  # found here, before any module of the server needs it
    except (ImportError, OSError) as exc:
        sys.meta_path.remove(finder)
        sys.modules.pop(f"{GROUP}__mypyc", None)
        words = f"the compiled core in {folder} does not load ({exc}); run `{HINT} --force` to build it again"
        if value == "compiled":
            raise CompileError(words) from exc
        LAST = f"Python core ({words})"
        return LAST
    with contextlib.suppress(OSError):  # used now: the last build :func:`_prune` would remove (a read-only cache: kept)
        os.utime(folder / MANIFEST)
    return LAST


def missing_tools() -> str | None:
    """What this machine lacks to compile C extensions (a C compiler, Python's headers), in a sentence; None."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None and shutil.which("cc") is None:
        return f"no C compiler ({compiler}) on PATH; install one (Debian: apt install gcc)"
    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").is_file():
        return f"Python's C headers are missing ({include}/Python.h); install them (Debian: apt install python3-dev)"
    return None


def build(*, log: Callable[[str], None] = print, jobs: int | None = None, force: bool = False) -> Path:
    """Compile :data:`MODULES` with mypyc into the cache (a no-op when the current sources' build is there, unless
    ``force``); the build's folder. Raises :class:`CompileError` with what is missing (mypy, a C compiler), what
    cannot be written, or what failed. Two builds at once take turns (a lock in the cache): the second finds the
    first's build."""
    try:
        parent = builds()
        parent.mkdir(parents=True, exist_ok=True)
        with open(parent / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return _build(log, jobs, force)
    except OSError as exc:
        raise CompileError(f"cannot build into {builds()}: {exc.strerror or exc} (set {DIRECTORY} to a folder you "
                           "can write)") from exc


def _build(log: Callable[[str], None], jobs: int | None, force: bool) -> Path:
    root = source_root()
    print_of = fingerprint(root)
    folder = build_dir(print_of)
    if is_built(folder) and not force:
        log(f"the compiled core of these sources is already built: {folder}")
        return folder
    if importlib.util.find_spec("mypyc") is None:
        raise CompileError("mypyc is not installed; install it with: pip install 'plyhall[compile]' "
                           "(from a checkout: pip install -e '.[compile]')")
    missing = missing_tools()
    if missing:
        raise CompileError(missing)
    folder.parent.mkdir(parents=True, exist_ok=True)
    jobs = jobs or max(1, len(os.sched_getaffinity(0)))
    started = time.monotonic()
    log(f"compiling {len(MODULES)} modules with mypyc into {folder} (a minute or two)")
    (folder.parent / ".tmp").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="core-", dir=folder.parent / ".tmp") as scratch:
        staging = Path(scratch) / "lib"
        script = _BUILD_SCRIPT.format(sources=[name.replace(".", "/") + ".py" for name in MODULES],
                                      group=GROUP, scratch=scratch, staging=str(staging), jobs=jobs)
        done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            lines = [line for line in (done.stdout + done.stderr).splitlines() if "warning:" not in line]
            raise CompileError("mypyc failed:\n" + "\n".join(lines[-25:]))
        if fingerprint(root) != print_of:
            raise CompileError("the sources changed while they were compiled; run it again")
        built = _module_files(staging)
        absent = [name for name, file in built.items() if not file.is_file()]
        if absent:
            raise CompileError(f"mypyc made no module for {', '.join(absent)}")
        manifest = {"fingerprint": print_of, "modules": list(MODULES), "python": sys.version.split()[0],
                    "built": time.strftime("%Y-%m-%d %H:%M:%S %z"), "seconds": round(time.monotonic() - started, 1)}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(staging, folder)
    log(f"built in {time.monotonic() - started:.0f} s; `plyhall serve` runs it from now on, until a source changes")
    _prune(folder, log)
    return folder


def _prune(kept: Path, log: Callable[[str], None]) -> None:
    """Remove all but the :data:`KEEP` builds used or made last (``kept``, just made, among them): every edit or pull
    that is compiled adds one (3-4 MB), and the few before it serve a switch back to another branch or worktree."""

    def last_used(path: Path) -> float:
        try:
            return (path / MANIFEST).stat().st_mtime  # made, or loaded by `plyhall serve` since (:func:`use`)
        except OSError:  # removed meanwhile (`plyhall compile --clean` takes no lock)
            return 0.0

    older = sorted((path for path in _all_builds() if path.name != kept.name), key=last_used, reverse=True)[KEEP - 1:]
    for path in older:
        shutil.rmtree(path, ignore_errors=True)
    if older:
        log(f"removed {len(older)} older build(s) (the {KEEP} made last are kept)")


def clean(*, log: Callable[[str], None] = print) -> int:
    """Remove every build from the cache (any sources'); how many there were."""
    parent, found = builds(), _all_builds()
    for path in found:
        shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(parent / ".tmp", ignore_errors=True)  # builds cut short
    log(f"removed {len(found)} build(s) of the compiled core from {parent}")
    return len(found)


_BUILD_SCRIPT = """
import sys
from mypyc.build import mypycify
from setuptools import setup

options = ["--ignore-missing-imports", "--follow-imports=silent", "--cache-dir", {scratch!r} + "/mypy"]
modules = mypycify(options + {sources!r}, opt_level="3", multi_file=True, group_name={group!r},
                   target_dir={scratch!r} + "/c")
setup(name={group!r}, ext_modules=modules, script_args=["-q", "build_ext", "--build-lib", {staging!r},
      "--build-temp", {scratch!r} + "/o", "--parallel", "{jobs}"])
"""
