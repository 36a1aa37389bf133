"""The SQL of game analyses: one row per analysed game, the analysis as JSON (``bots.analysis`` makes it, in a
worker process; the server stores it with an ``AnalysisSaved`` write and serves it at
``/api/games/ID/analysis``)."""

from __future__ import annotations

import json
import time
from typing import Any

from .records import AnalysisSaved

ANALYSIS_TABLES = [
    """CREATE TABLE analyses (
        game_id VARCHAR(32) PRIMARY KEY,
        version INTEGER NOT NULL,
        nodes INTEGER NOT NULL,
        data TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL)""",
]
"""The table of analyses (schema version 4)."""


class AnalysisSQL:
    """Analyses, for :class:`server.storage.sql.SQLStorage` (which provides ``_sql`` and ``_read``)."""

    _sql: Any
    _read: Any

    def _save_analysis(self, cur: Any, write: AnalysisSaved) -> None:
        """Store (or replace) a game's analysis, in the caller's transaction."""
        data = write.analysis
        cur.execute(self._sql("INSERT INTO analyses (game_id, version, nodes, data, created_at) VALUES (?, ?, ?, ?, ?)"
                              " ON CONFLICT (game_id) DO UPDATE SET version = excluded.version, nodes = excluded.nodes,"
                              " data = excluded.data, created_at = excluded.created_at"),
                    (write.game_id, int(data.get("version", 0)), int(data.get("nodes", 0)),
                     json.dumps(data, separators=(",", ":")), time.time()))

    def tournament_accuracy(self, tournament_id: str) -> dict[str, dict[str, Any]]:
        """Each player's figures over the analysed games of a tournament: games analysed, moves, accuracy (the mean
        over those moves), blunders, mistakes and inaccuracies."""
        rows = self._read("SELECT g.player0, g.player1, a.data FROM games g JOIN analyses a ON a.game_id = g.id"
                          " WHERE g.tournament = ? ORDER BY g.id", (tournament_id,))
        players: dict[str, dict[str, Any]] = {}
        for p0, p1, data in rows:
            summary = json.loads(data)["summary"]
            for seat, name in enumerate((p0, p1)):
                mine = summary[str(seat)]
                into = players.setdefault(name, {"games": 0, "moves": 0, "accuracy": None, "blunders": 0,
                                                 "mistakes": 0, "inaccuracies": 0, "_points": 0.0})
                into["games"] += 1
                if mine["accuracy"] is not None:
                    into["moves"] += mine["moves"]
                    into["_points"] += mine["accuracy"] * mine["moves"]
                for key in ("blunders", "mistakes", "inaccuracies"):
                    into[key] += mine[key]
        for into in players.values():
            points = into.pop("_points")
            into["accuracy"] = round(points / into["moves"], 1) if into["moves"] else None
        return players

    def get_analysis(self, game_id: str) -> dict[str, Any] | None:
        """A game's stored analysis, or None."""
        rows = self._read("SELECT data FROM analyses WHERE game_id = ?", (game_id,))
        return json.loads(rows[0][0]) if rows else None
