"""Words shared by every message a person reads: a number with its noun, plural unless the number is one."""

from __future__ import annotations


def counted(number: int, noun: str) -> str:
    """``number`` and ``noun``, in the plural unless the number is one: ``1 game``, ``3 games``, ``2 entries``."""
    if number == 1:
        return f"{number} {noun}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{number} {noun[:-1]}ies"
    return f"{number} {noun}s"
