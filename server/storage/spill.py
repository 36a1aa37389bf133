"""The spill file: writes a stopping server could not commit, kept for the next start to replay.

When the database refuses writes at shutdown (a full disk, a database server that is down), the
server does not wait for ever: after a bounded time it writes what is left, in order, as JSON lines
to the storage's spill file (``plyhall.db.spill`` beside a SQLite database), and says in its log how
many moves of which games that was. The next start on the same database replays the file in one
transaction before it restores anything, then removes it. Every write is an upsert or an insert
that ignores duplicates, so replaying writes that did reach the database after all changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from protocol.wording import counted

from .base import Storage, StorageError
from .records import GameEnded, GameStarted, MovePlayed, Write, write_from_json, write_to_json


def describe(writes: Sequence[Write]) -> str:
    """What ``writes`` hold, in a sentence for the log: moves and results of which games."""
    moves = sum(isinstance(w, MovePlayed) for w in writes)
    ended = sum(isinstance(w, GameEnded) for w in writes)
    games = sorted({w.game_id for w in writes if isinstance(w, MovePlayed)}
                   | {w.record.id for w in writes if isinstance(w, (GameStarted, GameEnded))})
    shown = ", ".join(games[:20]) + (f" and {len(games) - 20} more" if len(games) > 20 else "")
    return (f"{counted(len(writes), 'write')}: {counted(moves, 'move')} and {counted(ended, 'result')}"
            + (f" of games {shown}" if games else ""))


def spill(path: str, writes: Sequence[Write]) -> None:
    """Keep ``writes`` in ``path`` (after any the file holds already), replacing the file in one step."""
    kept = load(path) if os.path.exists(path) else []
    temporary = f"{path}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as out:
            for write in [*kept, *writes]:
                out.write(json.dumps(write_to_json(write)) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except OSError:  # a full disk: no half-written file is left behind as if it held something
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def load(path: str) -> list[Write]:
    """The writes a spill file holds; StorageError naming the file and line when it cannot be read."""
    writes = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                writes.append(write_from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                raise StorageError(f"line {number} of the spill file {path} is not a stored write ({exc}); "
                                   "move the file away to start without it") from None
    return writes


def replay(storage: Storage) -> str | None:
    """Commit the storage's spill file, if there is one, then remove it; what it held (for the log), or None."""
    path = storage.spill_path
    if path is None or not Path(path).exists():
        return None
    writes = load(path)
    try:
        storage.apply(writes)
    except Exception as exc:
        raise StorageError(f"the writes kept in {path} could not be stored ({exc}); the file stays for the next "
                           "try") from None
    os.remove(path)
    return describe(writes)
