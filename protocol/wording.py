"""Words shared by every message a person reads: a number with its noun, plural unless the number is one."""

from __future__ import annotations

import urllib.parse


def counted(number: int, noun: str) -> str:
    """``number`` and ``noun``, in the plural unless the number is one: ``1 game``, ``3 games``, ``2 entries``."""
    if number == 1:
        return f"{number} {noun}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{number} {noun[:-1]}ies"
    return f"{number} {noun}s"


def without_password(url: str) -> str:
    """``url`` with the password it may carry shown as ``***`` (``redis://user:***@host/0``, and a ``password=`` of its
    query, as PostgreSQL's URLs may have it), for a message or a log."""
    parts = urllib.parse.urlsplit(url)
    if "password=" in parts.query:
        query = "&".join("password=***" if item.startswith("password=") else item for item in parts.query.split("&"))
        parts = parts._replace(query=query)
        url = urllib.parse.urlunsplit(parts)
    try:
        if parts.password is None:
            return url
    except ValueError:  # not a URL that splits (a path, a port that is no number)
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{netloc}"))


def name_refused(name: str, what: str, longest: int, rules: str) -> str:
    """Why ``name`` cannot be a ``what`` (a name, a room name): too long (saying how long), or not of the ``rules``;
    the name quoted up to 40 characters, an ellipsis saying where it was cut."""
    quoted = repr(name if len(name) <= 40 else name[:39] + "\u2026")
    if len(name) > longest:
        return f"{quoted} is too long for a {what}: {len(name)} characters, and at most {longest} are allowed"
    return f"{quoted} is not a valid {what}: use {rules}"
