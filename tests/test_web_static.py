"""The page's files over HTTP: content types, caching, 304s, no way out of server/web, package data."""

from __future__ import annotations

import asyncio
import glob
import gzip
import http.client
import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from server.io.static_files import CONTENT_TYPES, WEB_ROOT, StaticFiles

ROOT = Path(__file__).resolve().parents[1]


def get(port: int, path: str, method: str = "GET", headers: dict[str, str] | None = None
        ) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one raw request (the path is sent exactly as given)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def web_files() -> list[Path]:
    return sorted(p for p in WEB_ROOT.rglob("*") if p.is_file())


async def _fetch(server, path: str, method: str = "GET", headers: dict[str, str] | None = None):
    return await asyncio.to_thread(get, server.port, path, method, headers)


async def test_the_page_is_served_at_the_root_with_a_content_security_policy(server):
    status, headers, body = await _fetch(server, "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert b'<script type="module" src="static/js/app.js">' in body  # beside the page: a proxy's prefix kept
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


async def test_every_file_is_served_with_its_content_type(server):
    assert web_files(), "server/web holds the page"
    for path in web_files():
        relative = path.relative_to(WEB_ROOT).as_posix()
        status, headers, body = await _fetch(server, f"/static/{relative}")
        assert status == 200, relative
        assert headers["content-type"] == CONTENT_TYPES[path.suffix], relative
        assert body == path.read_bytes()
    status, headers, _ = await _fetch(server, "/static/js/app.js")
    assert headers["content-type"].startswith("text/javascript")


async def test_files_carry_an_etag_and_a_matching_request_gets_304(server):
    status, headers, body = await _fetch(server, "/static/style.css")
    assert status == 200 and headers["etag"].startswith('"') and headers["cache-control"] == "no-cache"
    status, again, body = await _fetch(server, "/static/style.css", headers={"If-None-Match": headers["etag"]})
    assert status == 304 and body == b"" and again["etag"] == headers["etag"]
    status, _, body = await _fetch(server, "/static/style.css", headers={"If-None-Match": '"something-else"'})
    assert status == 200 and body
    status, headers, body = await _fetch(server, "/static/style.css", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0


@pytest.mark.parametrize("path", [
    "/static/../app.py", "/static/..%2fapp.py", "/static/js/../../app.py", "/static/.hidden.js", "/static/",
    "/static/js", "/static/nope.js", "/static/js/app.py", "/static//etc/passwd", "/static/%2e%2e/app.py",
])
async def test_nothing_outside_the_web_folder_or_unknown_is_served(server, path):
    status, headers, body = await _fetch(server, path)
    assert status == 404, path
    assert headers["content-type"] == "application/json"


def test_resolve_refuses_paths_that_leave_the_folder(tmp_path):
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "a.js").write_text("export {};")
    (tmp_path / "secret.js").write_text("no")
    (tmp_path / "web" / "link.js").symlink_to(tmp_path / "secret.js")
    files = StaticFiles(tmp_path / "web")
    assert files.resolve("a.js") == (tmp_path / "web" / "a.js").resolve()
    assert files.resolve("../secret.js") is None
    assert files.resolve("link.js") is None, "a link out of the folder is not followed"
    assert files.resolve("a.txt") is None


def test_the_web_files_are_package_data():
    """A non-editable install ships every file of the page (setuptools globs package data like this)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["server"]
    shipped = {Path(found) for pattern in patterns for found in glob.glob(pattern, root_dir=ROOT / "server",
                                                                          recursive=True)}
    missing = [path for path in web_files() if path.relative_to(ROOT / "server") not in shipped]
    assert not missing, f"not package data ({patterns}): {missing}"


async def test_files_are_gzipped_for_clients_that_accept_it(server):
    plain = (WEB_ROOT / "style.css").read_bytes()
    status, headers, body = await _fetch(server, "/static/style.css", headers={"Accept-Encoding": "gzip, br"})
    assert status == 200 and headers["content-encoding"] == "gzip" and headers["vary"] == "Accept-Encoding"
    assert gzip.decompress(body) == plain and len(body) < len(plain) / 2
    assert headers["etag"].startswith('W/"'), "the compressed bytes are another representation: a weak ETag"
    status, _, body = await _fetch(server, "/static/style.css", headers={"Accept-Encoding": "gzip",
                                                                          "If-None-Match": headers["etag"]})
    assert status == 304 and body == b""
    for refusal in ("gzip;q=0", "identity", "br", "gzip; q=0.0"):
        status, headers, body = await _fetch(server, "/static/style.css", headers={"Accept-Encoding": refusal})
        assert "content-encoding" not in headers and body == plain, refusal
    status, headers, body = await _fetch(server, "/static/icon.svg", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in headers, "small files are sent as they are"
    status, headers, _ = await _fetch(server, "/api/games", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in headers, "the JSON API is left as it is"


def test_the_page_preloads_every_module():
    """The browser fetches all modules at once instead of discovering them import by import.

    The list in index.html is kept by hand: it names every module but the entry point (app.js,
    loaded by its script tag), once, and nothing that is not there.
    """
    page = (WEB_ROOT / "index.html").read_text()
    listed = re.findall(r'<link rel="modulepreload" href="static/([^"]+)">', page)
    modules = {module.relative_to(WEB_ROOT).as_posix() for module in (WEB_ROOT / "js").rglob("*.js")}
    missing = sorted(modules - set(listed) - {"js/app.js"})
    assert not missing, f"index.html does not preload {missing}: add a <link rel=\"modulepreload\"> for each"
    gone = [href for href in listed if href not in modules]
    assert not gone, f"index.html preloads {gone}, which server/web does not hold"
    assert len(listed) == len(set(listed)), "index.html preloads a module twice"


TYPESCRIPT = shutil.which("tsc")
TSCONFIG = {
    "compilerOptions": {
        # what an editor checks in a // @ts-check file without a project of its own
        "allowJs": True, "checkJs": True, "noEmit": True, "target": "es2022", "module": "es2022",
        "moduleResolution": "bundler", "lib": ["es2022", "dom", "dom.iterable"],
        "strict": False, "strictNullChecks": True, "strictFunctionTypes": True, "noImplicitAny": False,
    },
}


def test_every_module_asks_to_be_type_checked():
    """Editors check the page's modules (and the game contract in games/common.js) as they are written."""
    unchecked = [module.relative_to(WEB_ROOT).as_posix() for module in (WEB_ROOT / "js").rglob("*.js")
                 if not module.read_text().startswith("// @ts-check\n")]
    assert not unchecked, f"modules without // @ts-check on their first line: {unchecked}"


def test_the_modules_type_check(tmp_path):
    """TypeScript finds no error in the page's modules, checked as JavaScript with their JSDoc types (no build).
    Skipped where tsc is missing, unless PLYHALL_REQUIRE_TSC=1 (as in CI, which installs it)."""
    if TYPESCRIPT is None:
        message = "TypeScript's tsc is not installed (npm install -g typescript)"
        if os.environ.get("PLYHALL_REQUIRE_TSC") == "1":
            pytest.fail(message)
        pytest.skip(message)
    config = {**TSCONFIG, "include": [str(WEB_ROOT / "js" / "**" / "*.js")]}
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    checked = subprocess.run([TYPESCRIPT, "-p", str(tmp_path / "tsconfig.json")], capture_output=True, text=True,
                             timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
