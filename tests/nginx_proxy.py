"""A throwaway nginx for tests: Debian's ``nginx`` on a free loopback port, in front of Plyhall nodes.

The configuration is the recipe printed in docs/SCALING.md ("Deployment recipe: nginx in front of
the nodes"): its ```nginx block, an http-level snippet (``upstream`` + ``server``), with the
``listen 127.0.0.1:8080;`` port and the ``server 127.0.0.1:PORT ...;`` lines of its upstream
replaced by this proxy's port and the given nodes. A test using it thus proves the documented
recipe works. Only the outer frame is the test's own: ``events``, ``http``, the pid file, the logs
and every temporary path inside a temporary folder, so nginx never touches /etc/nginx,
/var/lib/nginx, /var/log/nginx or port 80. It runs in the foreground (``daemon off``) as whoever
runs the tests; as root its workers run as root too (``user``), since they must reach that folder.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

from tests.throwaway import Throwaway

ENABLE = ("nginx is not installed here: install Debian's nginx package (apt-get install nginx-light, or nginx) and the "
          "test of the nginx recipe in docs/SCALING.md runs; PLYHALL_REQUIRE_NGINX=1 makes this a failure")
DOC = Path(__file__).resolve().parent.parent / "docs" / "SCALING.md"
SECTION = "## Deployment recipe: nginx in front of the nodes"
TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")

_LISTEN = re.compile(r"^(?P<head>[ \t]*listen[ \t]+)127\.0\.0\.1:\d+(?P<tail>[^;\n]*;)", re.MULTILINE)
_UPSTREAM = re.compile(r"^[ \t]*upstream[ \t]+\S+[ \t]*\{(?P<body>[^}]*)\}", re.MULTILINE)
_SERVER = re.compile(r"^(?P<indent>[ \t]*)server[ \t]+127\.0\.0\.1:\d+(?P<params>[^;\n]*);[ \t]*\n", re.MULTILINE)


def binary() -> str | None:
    """The path of ``nginx``, or None."""
    return shutil.which("nginx") or next(
        (path for path in ("/usr/sbin/nginx", "/usr/bin/nginx") if os.access(path, os.X_OK)), None)


def require() -> str:
    """The path of ``nginx``; skips the test where it is not installed (fails it with PLYHALL_REQUIRE_NGINX=1)."""
    import pytest

    path = binary()
    if path is None:
        if os.environ.get("PLYHALL_REQUIRE_NGINX") == "1":
            pytest.fail(ENABLE)
        pytest.skip(ENABLE)
    return path


def documented_snippet(doc: Path = DOC, section: str = SECTION) -> str:
    """The first ```nginx block of ``section`` in ``doc`` (the recipe of docs/SCALING.md by default), as printed."""
    text = doc.read_text(encoding="utf-8")
    start = text.find(section)
    if start < 0:
        raise LookupError(f"{doc} has no section {section!r}")
    block = re.search(r"^```nginx[ \t]*\n(.*?)^```", text[start:], re.MULTILINE | re.DOTALL)
    if block is None:
        raise LookupError(f"the section {section!r} of {doc} has no ```nginx block")
    return block.group(1)


def fill_in(snippet: str, port: int, upstreams: list[int]) -> str:
    """``snippet`` (in the documented form) listening on 127.0.0.1:``port`` and proxying to 127.0.0.1:each of
    ``upstreams``: its one ``listen 127.0.0.1:N`` replaced, and its upstream's ``server 127.0.0.1:N ...;``
    lines replaced by one a node, each with the parameters (``max_fails=...``) of the first."""
    if not upstreams:
        raise ValueError("give at least one upstream port")
    snippet, listens = _LISTEN.subn(lambda m: f"{m['head']}127.0.0.1:{port}{m['tail']}", snippet)
    if listens != 1:
        raise ValueError(f"the nginx snippet must have one 'listen 127.0.0.1:PORT;' line, not {listens}")
    upstream = _UPSTREAM.search(snippet)
    servers = list(_SERVER.finditer(upstream["body"])) if upstream else []
    if not servers:
        raise ValueError("the nginx snippet must have an upstream block with 'server 127.0.0.1:PORT ...;' lines")
    indent, params = servers[0]["indent"], servers[0]["params"]
    body = upstream["body"]
    lines = "".join(f"{indent}server 127.0.0.1:{node}{params};\n" for node in upstreams)
    body = body[:servers[0].start()] + lines + _SERVER.sub("", body[servers[0].end():])
    return snippet[:upstream.start("body")] + body + snippet[upstream.end("body"):]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _missing_modules(path: str) -> set[str]:
    """The temporary-path modules (fastcgi, uwsgi, scgi) this nginx was built without: their directives are unknown."""
    try:
        built = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=10).stderr
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {name for name in ("fastcgi", "uwsgi", "scgi") if f"--without-http_{name}_module" in built}


class NginxProxy(Throwaway):
    """One nginx on 127.0.0.1:``port`` in front of Plyhall nodes on 127.0.0.1:each of ``upstreams``.

    ``config``: the http-level snippet, in the documented form (placeholders replaced the same way);
    None: the one printed in docs/SCALING.md. ``url`` is ``ws://127.0.0.1:PORT/ws``. Use it as a context
    manager (started on entry, stopped and its folder removed on exit), or call :meth:`start` and
    :meth:`stop`. The access log names the node each request went to (``upstream=127.0.0.1:PORT``):
    :meth:`upstreams_of`.
    """

    def __init__(self, upstreams: list[int], config: str | None = None, port: int | None = None) -> None:
        path = binary()
        if path is None:
            raise FileNotFoundError(ENABLE)
        self.binary = path
        self.upstreams = list(upstreams)
        self.snippet = documented_snippet() if config is None else config
        self.port = port or _free_port()
        fill_in(self.snippet, self.port, self.upstreams)  # a snippet without the placeholders fails here
        self.root: Path | None = None
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """``ws://127.0.0.1:PORT/ws``."""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        """nginx's error log (and what it wrote to stderr) so far."""
        return "".join(self._read(name) for name in ("stderr.log", "error.log"))

    @property
    def access_log(self) -> str:
        """One line a finished request or WebSocket connection: ``ADDRESS "REQUEST" STATUS upstream=NODES``."""
        return self._read("access.log")

    def upstreams_of(self, request: str) -> list[str]:
        """The nodes (``127.0.0.1:PORT``, the last one tried) that served the finished requests whose request line
        contains ``request`` (e.g. ``GET /ws``), in the order they finished."""
        found = []
        for line in self.access_log.splitlines():
            if request in line and "upstream=" in line:
                found.append(line.rsplit("upstream=", 1)[1].split(",")[-1].strip())
        return found

    def _read(self, name: str) -> str:
        if self.root is None or not (self.root / name).exists():
            return ""
        return (self.root / name).read_text(errors="replace")

    def config(self) -> str:
        """The whole nginx.conf: the outer frame around the filled-in snippet."""
        assert self.root is not None
        root = self.root
        user = ""
        if os.geteuid() == 0:  # the master runs as root: its workers would be 'nobody', locked out of the folder
            user = f"user {pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name};\n"
        missing = _missing_modules(self.binary)
        temps = "".join(f"    {name}_temp_path {root / 'temp' / name};\n" for name in TEMP_PATHS if name not in missing)
        snippet = fill_in(self.snippet, self.port, self.upstreams)
        return (f"# a throwaway nginx of the tests (tests/nginx_proxy.py)\n"
                f"daemon off;\nmaster_process on;\nworker_processes 1;\n{user}"
                f"pid {root / 'nginx.pid'};\nerror_log {root / 'error.log'} notice;\n"
                "events {\n    worker_connections 512;\n}\n"
                "http {\n"
                "    log_format plyhall_test '$remote_addr \"$request\" $status upstream=$upstream_addr';\n"
                f"    access_log {root / 'access.log'} plyhall_test;\n"
                f"{temps}"
                "    # the documented snippet (docs/SCALING.md), placeholders filled in\n"
                f"{snippet}"
                "}\n")

    def start(self, timeout: float = 20) -> None:
        """Start nginx (on another free port when this one turns out to be taken); returns once it accepts
        connections. A failure to start raises with nginx's error log."""
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="plyhall-nginx-"))
            for name in TEMP_PATHS:
                (self.root / "temp" / name).mkdir(parents=True)
        self._launch_until_ready(timeout, "nginx", details=lambda: f"\nits configuration:\n{self.config()}")

    def _launch(self) -> None:
        assert self.root is not None
        for name in ("stderr.log", "error.log"):
            (self.root / name).unlink(missing_ok=True)
        (self.root / "nginx.conf").write_text(self.config())
        with open(self.root / "stderr.log", "wb") as err:
            # a session of its own: if the master ever has to be killed, its workers go with its process group
            self.proc = subprocess.Popen(
                [self.binary, "-p", f"{self.root}/", "-c", str(self.root / "nginx.conf"), "-e",
                 str(self.root / "error.log")],
                stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.STDOUT, start_new_session=True)

    def _answers(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1):
            return True

    def _end_process(self, timeout: float = 10) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()  # nginx's fast shutdown: open connections are closed
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:  # the master (not yet reaped, so the group is still its) and workers
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout)
