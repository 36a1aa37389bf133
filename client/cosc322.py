"""``plyhall cosc322``: the COSC 322 course library, rebuilt for Plyhall.

COSC 322 bots are Java programs written against the course's client library (``ygraph.ai.smartfox.games``).
``client/java/src`` holds a library with the same public API that plays on a Plyhall server instead (see
docs/COSC322.md); ``plyhall cosc322 jar`` compiles it with the user's own ``javac`` into a jar, so that a course
bot compiles unchanged against it: ``javac -cp plyhall-cosc322.jar ...``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import protocol

JAVA_SOURCES = Path(__file__).resolve().parent / "java" / "src"
"""The library's Java sources, shipped inside the ``client`` package."""

DEFAULT_JAR = "plyhall-cosc322.jar"
JAVA_RELEASE = "11"
VERSION_RESOURCE = "plyhall-cosc322.properties"  # read by plyhall.cosc322.Version
INSTALL_HINT = ("install a JDK, version 11 or newer (Debian/Ubuntu: sudo apt install openjdk-17-jdk-headless; "
                "Fedora: sudo dnf install java-17-openjdk-devel; macOS: brew install openjdk@17; "
                "Windows: https://adoptium.net), or give its javac with --javac")


class BuildError(Exception):
    """The jar cannot be built; the message says why and what to do, in one line for people."""


def run_jar(args: argparse.Namespace) -> int:
    """``plyhall cosc322 jar``: build the jar, saying what to do next; one clear line on failure."""
    try:
        javac = find_javac(args.javac)
        classes = build_jar(Path(args.output), javac)
    except BuildError as exc:
        print(f"plyhall cosc322 jar: {exc}", file=sys.stderr)
        return 1
    jar = Path(args.output).resolve()
    print(f"wrote {args.output} ({classes} classes, for Java 11 and newer); in the folder that holds your bot's "
          "ubc folder:")
    print(f"  compile it:  javac -cp {jar} ubc/cosc322/*.java")
    print(f"  run it:      java -cp {jar}{os.pathsep}. ubc.cosc322.COSC322Test NAME PASSWORD")
    print("  (your own class name there; docs/COSC322.md has the settings: PLYHALL_URL, PLYHALL_ROOM, ...)")
    return 0


def find_javac(explicit: str | None = None) -> str:
    """The javac to use: ``explicit``, else ``javac`` on PATH, else ``$JAVA_HOME/bin/javac``."""
    if explicit:
        found = shutil.which(explicit)
        if found is None:
            raise BuildError(f"{explicit} is not a javac that can be run; {INSTALL_HINT}")
        return found
    found = shutil.which("javac")
    if found is not None:
        return found
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / ("javac.exe" if os.name == "nt" else "javac")
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise BuildError(f"javac (the Java compiler) is not on PATH; {INSTALL_HINT}")


def java_sources() -> list[Path]:
    """Every Java source file of the library, in a stable order."""
    sources = sorted(JAVA_SOURCES.rglob("*.java"))
    if not sources:
        raise BuildError(f"the library's Java sources are missing from {JAVA_SOURCES}; reinstall plyhall")
    return sources


def build_jar(output: Path, javac: str) -> int:
    """Compile the library with ``javac`` into a temporary folder and write the jar to ``output``.

    Returns the number of classes in the jar. The jar holds a manifest, the classes and a small resource
    naming the library's version; it is written next to ``output`` first and then moved into place.
    """
    sources = java_sources()
    with tempfile.TemporaryDirectory(prefix="plyhall-cosc322-") as tmp:
        classes_dir = Path(tmp) / "classes"
        classes_dir.mkdir()
        argfile = Path(tmp) / "sources.txt"
        argfile.write_text("\n".join(f'"{path.as_posix()}"' for path in sources) + "\n", encoding="utf-8")
        command = [javac, "--release", JAVA_RELEASE, "-encoding", "UTF-8", "-nowarn", "-d", str(classes_dir),
                   f"@{argfile}"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except OSError as exc:
            raise BuildError(f"cannot run {javac}: {exc}; {INSTALL_HINT}") from exc
        except subprocess.TimeoutExpired as exc:
            raise BuildError(f"{javac} took more than 5 minutes") from exc
        if done.returncode != 0:
            raise BuildError(_compile_failure(javac, done.stdout + done.stderr))
        return _write_jar(output, classes_dir)


def _compile_failure(javac: str, output: str) -> str:
    """The message for a failed compilation: an old JDK said plainly, else javac's own first lines."""
    if "--release" in output and ("invalid" in output or "not supported" in output or "unrecognized" in output):
        return f"{javac} is too old for --release {JAVA_RELEASE}; {INSTALL_HINT}"
    lines = [line for line in output.strip().splitlines() if line.strip()][:20]
    return f"{javac} failed to compile the library:\n" + "\n".join(lines)


def _write_jar(output: Path, classes_dir: Path) -> int:
    """Zip the compiled classes into ``output`` (manifest first, as the jar format wants)."""
    manifest = (
        "Manifest-Version: 1.0\r\n"
        f"Created-By: plyhall {protocol.__version__}\r\n"
        "Implementation-Title: plyhall-cosc322\r\n"
        f"Implementation-Version: {protocol.__version__}\r\n"
        "\r\n"
    )
    class_files = sorted(classes_dir.rglob("*.class"))
    output = output.expanduser()
    if output.parent and not output.parent.exists():
        raise BuildError(f"the folder {output.parent} does not exist")
    partial = output.with_name(output.name + ".part")
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", manifest)
            jar.writestr(VERSION_RESOURCE, f"version={protocol.__version__}\n")
            for path in class_files:
                jar.write(path, path.relative_to(classes_dir).as_posix())
        os.replace(partial, output)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise BuildError(f"cannot write {output}: {exc.strerror or exc}") from exc
    return len(class_files)
