"""The mathematics and scheduling of tournaments, sans I/O.

Nothing here opens a socket, reads a clock, a file or a database: every
function takes what it needs and returns plain values. The tournament
director (which opens games and seats entrants) and storage sit on top.

``results``    :class:`GameResult`, one finished, forfeited or bye game
``schedule``   formats, pairings (Berger round robin, gauntlet, Swiss), games and openings
``openings``   openings files checked against the reference rules
``ratings``    Elo by maximum likelihood, cutechess-cli's match figures, SPRT
``standings``  points, W-D-L, crosstable, tie-breaks, ranking, progress, text and CSV

A whole event in a few lines::

    spec = TournamentSpec("round-robin", ["alpha", "beta", "gamma"], openings=len(openings))
    schedule = make_schedule(spec, results)          # every game, each with an opening index
    for game in schedule.pending(results): ...       # the director opens these
    table = compute_standings(results, spec.entrants, total_games=schedule.total_games)
    print(table.to_text())
"""

from __future__ import annotations

from .openings import OPENING_FORMATS, Opening, OpeningsError, parse_openings
from .ratings import (
    MatchStats,
    Rating,
    SprtResult,
    SprtStatus,
    elo_from_score,
    elo_margin,
    elo_ratings,
    expected_score,
    likelihood_of_superiority,
    match_stats,
    sprt,
)
from .results import RESULTS, GameResult
from .schedule import (
    FORMATS,
    Pairing,
    Schedule,
    ScheduledGame,
    ScheduleError,
    TournamentSpec,
    make_schedule,
    round_robin_pairings,
    swiss_pairings,
)
from .standings import (
    TIEBREAKS,
    Progress,
    Standing,
    Standings,
    compute_standings,
    default_tiebreak,
    estimate_time_left,
    head_to_head,
)

__all__ = [
    "FORMATS", "OPENING_FORMATS", "RESULTS", "TIEBREAKS",
    "GameResult", "MatchStats", "Opening", "OpeningsError", "Pairing", "Progress", "Rating", "Schedule",
    "ScheduleError", "ScheduledGame", "SprtResult", "SprtStatus", "Standing", "Standings", "TournamentSpec",
    "compute_standings", "default_tiebreak", "elo_from_score", "elo_margin", "elo_ratings", "estimate_time_left",
    "expected_score", "head_to_head", "likelihood_of_superiority", "make_schedule", "match_stats",
    "parse_openings", "round_robin_pairings", "sprt", "swiss_pairings",
]
