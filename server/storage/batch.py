"""What a commit of the writer uses, kept apart from the SQL: the transaction and the writer connection as context
managers of their own (entered once a turn of the event loop: cheaper than a generator's), the JSON text of
snapshots by one encoder made once, a batch's room snapshots less those replaced later in it."""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

from .records import RoomSaved, Write

_ENCODE = c_make_encoder(None, json.JSONEncoder().default, encode_basestring_ascii, None, ": ", ", ", False, False,
                         True) if c_make_encoder is not None else None


def dumps(value: Any) -> str:
    """``json.dumps(value)``, the same text, by one C encoder made once instead of one a call (the snapshots and
    settings stored are trees of JSON values: no cycles to look for)."""
    if _ENCODE is None:  # pragma: no cover - a Python without the _json accelerator
        return json.dumps(value)
    return "".join(_ENCODE(value, 0))


def latest_snapshots(writes: list[Write]) -> list[Write]:
    """``writes`` without each :class:`RoomSaved` that a later one of the same room replaces (every column of the
    room's row is written anew by the later one, whatever comes between)."""
    last: dict[str, int] = {}
    for index, write in enumerate(writes):
        if type(write) is RoomSaved:
            last[write.snapshot["name"]] = index
    if not last:
        return writes
    return [write for index, write in enumerate(writes)
            if type(write) is not RoomSaved or last[write.snapshot["name"]] == index]


class Writing:
    """:meth:`SQLStorage._writing`: a context manager of its own rather than a generator's (entered at every
    commit, once a turn of the event loop)."""

    __slots__ = ("storage",)

    def __init__(self, storage: Any) -> None:
        self.storage = storage

    def __enter__(self) -> None:
        storage = self.storage
        storage._write_lock.acquire()
        if storage._writer is None:
            try:
                storage._writer = storage._connect_writer()
            except BaseException:
                storage._write_lock.release()
                raise

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: Any) -> None:
        storage = self.storage
        try:
            if kind is not None and issubclass(kind, storage.lost_connection):
                broken, storage._writer = storage._writer, None
                try:
                    broken.close()
                except Exception:  # already broken
                    pass
        finally:
            storage._write_lock.release()


class Transaction:
    """:meth:`SQLStorage._transaction`: BEGIN on entering, COMMIT on leaving, ROLLBACK when anything (the COMMIT
    too) raises."""

    __slots__ = ("begin", "cur")

    def __init__(self, cur: Any, begin: str) -> None:
        self.cur = cur
        self.begin = begin

    def __enter__(self) -> Any:
        cur = self.cur
        cur.execute(self.begin)
        return cur

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: Any) -> None:
        if kind is None:
            try:
                self.cur.execute("COMMIT")
                return
            except BaseException:
                self._roll_back()
                raise
        self._roll_back()

    def _roll_back(self) -> None:
        try:
            self.cur.execute("ROLLBACK")
        except Exception:  # the connection itself may be gone; the error that matters is raised
            pass


MOVES_A_STATEMENT = 64
"""The most moves one INSERT statement carries (7 parameters each: well under any driver's limit). One statement of
many rows costs SQLite less than as many executions of a one-row statement."""

