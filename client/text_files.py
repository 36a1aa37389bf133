"""Reading a user's text file (a tournament definition, an openings file, an agent's source): UTF-8, as every
file Plyhall reads, and an error in one line that says what is wrong with it and what is accepted."""

from __future__ import annotations

from pathlib import Path


def read_text(path: Path, what: str = "") -> str:
    """The text of ``path``, read as UTF-8 (a byte order mark allowed); ``ValueError`` saying why it cannot be
    (``what``: the file's role in the message, e.g. "the openings file"; none: the path alone)."""
    name = f"{what} {path}" if what else str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
        raise ValueError(f"{name} is not UTF-8 text (byte {data[exc.start]:#04x} at position {exc.start}"
                         f"{': it is UTF-16' if utf16 else ''}); save it as UTF-8") from None
