"""The mathematics and scheduling of tournaments, sans I/O.

Nothing here opens a socket, reads a clock, a file or a database: every
function takes what it needs and returns plain values. The tournament
director (which opens games and seats entrants) and storage sit on top.

``results``    :class:`ScoredGame`, one finished, forfeited or bye game
``pairing``    :class:`Pairing`, two entrants meeting in a round
``schedule``   formats (Berger round robin, gauntlet, Swiss), games and openings
``swiss``      Swiss pairing, round by round
``openings``   openings files checked against the reference rules
``ratings``    Elo for the whole field by maximum likelihood
``tally``      points, W-D-L, crosstable, head-to-head counts
``tiebreaks``  Sonneborn-Berger, Buchholz, median Buchholz
``standings``  ranking, progress, text and CSV
``director``   one event: settings, status, results, the games to open

The match statistics (cutechess-cli's figures, SPRT, z-values) are
:mod:`protocol.statistics`, shared with ``plyhall match``; this package
re-exports the ones tournaments use.

A whole event in a few lines::

    spec = TournamentSpec("round-robin", ["alpha", "beta", "gamma"], openings=len(openings))
    schedule = make_schedule(spec, results)          # every game, each with an opening index
    for game in schedule.pending(results): ...       # the director opens these
    table = compute_standings(results, spec.entrants, total_games=schedule.total_games)
    print(table.to_text())
"""

from __future__ import annotations

from protocol.statistics import (
    MatchStats,
    SprtResult,
    SprtStatus,
    elo_from_score,
    elo_margin,
    expected_score,
    likelihood_of_superiority,
    match_stats,
    sprt,
)

from .director import ScheduledGameStatus, TournamentStatus
from .openings import OPENING_FORMATS, Opening, OpeningsError, parse_openings
from .pairing import Pairing, ScheduleError
from .ratings import Rating, elo_ratings
from .results import RESULTS, ScoredGame
from .schedule import FORMATS, Schedule, ScheduledGame, TournamentSpec, make_schedule, round_robin_pairings
from .standings import Progress, Standing, Standings, compute_standings, estimate_time_left
from .swiss import swiss_pairings
from .tally import head_to_head
from .tiebreaks import TIEBREAKS, default_tiebreak

__all__ = [
    "FORMATS", "OPENING_FORMATS", "RESULTS", "TIEBREAKS",
    "MatchStats", "Opening", "OpeningsError", "Pairing", "Progress", "Rating", "Schedule", "ScheduleError",
    "ScheduledGame", "ScheduledGameStatus", "ScoredGame", "SprtResult", "SprtStatus", "Standing", "Standings",
    "TournamentSpec", "TournamentStatus",
    "compute_standings", "default_tiebreak", "elo_from_score", "elo_margin", "elo_ratings", "estimate_time_left",
    "expected_score", "head_to_head", "likelihood_of_superiority", "make_schedule", "match_stats",
    "parse_openings", "round_robin_pairings", "sprt", "swiss_pairings",
]
