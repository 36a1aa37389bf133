"""The web page: static files shipped in ``server/web/``, served by the HTTP layer.

The page is plain HTML, CSS and JavaScript modules (no build step); it talks
``plyhall.v1.json`` to ``/ws`` like any client. ``/`` answers ``index.html``;
``/static/PATH`` answers the file ``server/web/PATH``. Only files under that folder
are served: a path with ``..``, hidden names or characters outside ``[A-Za-z0-9._-]``
is refused. Every file carries an ETag and ``Cache-Control: no-cache``, so a browser
revalidates (and gets ``304 Not Modified``) instead of running stale modules after an
upgrade; the HTTP layer sends it gzipped to browsers that accept it.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from websockets.http11 import Response

from .http import file_response, json_response

WEB_ROOT = Path(__file__).resolve().parent.parent / "web"
STATIC_PREFIX = "/static/"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}

# The page loads its own modules and styles and talks to its own server, nothing else; its one inline script (the
# slash below) is allowed by its hash, added to script-src when the page is read.
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

_SEGMENT = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def page_policy(body: bytes) -> str:
    """:data:`PAGE_POLICY` for an HTML file, with the hash of each inline script it has in ``script-src``. The page's
    one inline script sends a page opened at ``/plyhall`` to ``/plyhall/``: behind a proxy that strips a path prefix
    and answers ``/plyhall`` with the page (Caddy's ``handle_path /plyhall*``, Traefik's ``StripPrefix``), the
    page's relative addresses would otherwise name files at the host's root, and it would stay at "Loading…"."""
    hashes = "".join(f" 'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
                     for script in _INLINE_SCRIPT.findall(body))
    return PAGE_POLICY.replace("script-src 'self'", "script-src 'self'" + hashes, 1)


@dataclass(frozen=True)
class _Cached:
    stamp: tuple[int, int]  # (mtime_ns, size) of the file when read
    body: bytes
    etag: str
    policy: str  # an HTML file's Content-Security-Policy ("" for other files)


class StaticFiles:
    """Serves the files under ``root`` with their content types and ETags (read once, re-read when changed)."""

    def __init__(self, root: Path = WEB_ROOT, prefix: str = STATIC_PREFIX) -> None:
        self.root = root.resolve()
        self.prefix = prefix
        self._cache: dict[Path, _Cached] = {}

    async def index(self, path: str, query: dict[str, str]) -> Response:
        """The page itself (``/``)."""
        return self._serve("index.html")

    async def file(self, path: str, query: dict[str, str]) -> Response:
        """A file under the static prefix, or 404."""
        return self._serve(path.removeprefix(self.prefix))

    def resolve(self, relative: str) -> Path | None:
        """The file ``relative`` names under the root, or None when it is not a servable file there."""
        segments = relative.split("/")
        if not all(_SEGMENT.fullmatch(s) for s in segments) or Path(segments[-1]).suffix not in CONTENT_TYPES:
            return None
        candidate = self.root.joinpath(*segments).resolve()
        if not candidate.is_relative_to(self.root) or not candidate.is_file():
            return None
        return candidate

    def _serve(self, relative: str) -> Response:
        found = self.resolve(relative)
        if found is None:
            return json_response(404, {"error": f"no such file {relative[:80]!r}"})
        cached = self._read(found)
        headers = [("ETag", cached.etag), ("Cache-Control", "no-cache"), ("Vary", "Accept-Encoding"),
                   ("X-Content-Type-Options", "nosniff")]
        if found.suffix == ".html":
            headers += [("Content-Security-Policy", cached.policy), ("Referrer-Policy", "no-referrer")]
        return file_response(cached.body, CONTENT_TYPES[found.suffix], headers)

    def _read(self, path: Path) -> _Cached:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is None or cached.stamp != stamp:
            body = path.read_bytes()
            policy = page_policy(body) if path.suffix == ".html" else ""
            cached = _Cached(stamp, body, '"' + hashlib.sha256(body).hexdigest()[:20] + '"', policy)
            self._cache[path] = cached
        return cached
