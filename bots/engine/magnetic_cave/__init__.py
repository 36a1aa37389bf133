"""The Magnetic Cave engine: bitboards, a threat-based evaluation, and the ``master`` bot.

``position``    the board as two ``uint64`` bitboards, its lines of five, its moves, and the search's state array;
``evaluation``  exact pruning of the moves searched, the middle-game and endgame evaluations (threat squares,
                lines, chains of fours, the zugzwang of the filling board), and the compiled search;
``master``      :class:`~bots.engine.magnetic_cave.master.MagneticCaveMaster`, with its drawing traps.

Measured against ``minimax-4`` at 0.2 s a move (``benchmarks/strength.py``,
100 games, seed 1): 60-35-5 (score 0.775) with the chain of fours and the
drawing traps, 62-36-2 (0.800) without them in the same session; the two are
within the noise. Master rarely loses but draws about a third of its games,
as the second player more often, and 0.4 s a move did not help (30
second-player games: 0.733, as at 0.2 s): the draws are not a matter of
depth. Tried and dropped: an ``order_hint`` favouring bricks that make or
stop fours (6% fewer nodes to depth 9, 18% fewer nodes a second); playing
out forced blocks at the horizon (30 second-player games: 0.617 with, 0.717
without); a contempt for draws; a bonus for open squares beside threat
squares; a count of the squares left outside the threat squares' reach,
whose parity predicted solved endgames worse than the evaluation's sign; a
penalty when the opponent would win by a chain of fours were it to move
(56-38-6, no better). A later run with ``--jobs 2``: 58-37-5 (0.765).

Where the results come from (this version): wins as the first player mostly
come at brick 63, the first player's last: the second player runs out of
safe bricks. ``zugzwang`` is that rule, and it is why one threat square is
worth a win to the first player but not to the second. Even ``minimax-2``
drew 14 of 40 games (``master`` scored 0.80 against it), so the draws are
not the opponent's depth either: they are boards striped brick by brick,
each side answering beside the other's brick, with no threat squares left.
Building more than blocking (``OWN_LINES``) is what moved the score, and
more so once the endgame evaluation was held back until brick 28
(``LATE_FROM``) so that the building lasts longer:

* without ``OWN_LINES``, endgame evaluation from brick 20: 0.740-0.775 in four
  runs of 100 games;
* ``OWN_LINES``, from brick 20: 0.82, 0.81, 0.8125, 0.800 and 0.777 in 100,
  100, 200, 100 and 200 games (seeds 1, 2, 3, 1, 4; 0.801 over the 700);
* ``OWN_LINES``, from brick 28: 0.86, 0.8675 and 0.838 (100 games seed 2; 200
  games seed 4: 148-51-1; 200 games seed 1: 140-55-5, first player 87-13-0,
  second 53-42-5; 0.854 over the 500); from brick 36: 0.855; never: 0.84 with 5
  losses (seed 2).

1.75 times as many own points scored 0.745 and 0.815, 1.5 times with the
threat squares too 0.81 (from brick 20). Without ``OWN_LINES`` the endgame
evaluation did not move the score (0.775 and 0.740), and whether it predicts solved positions better
depends on the games they come from (``benchmarks/cave_endgames.py``,
concordance endgame against middle game: 0.907 against 0.827 from games of
the version before ``OWN_LINES``; 0.941 against 0.933 and 0.950 against
0.956 from games of this one, seeds 1 and 2). Also tried and dropped:
the endgame evaluation from brick 4 on (0.63); the zugzwang term in the
middle game (0.76); one more ply after a forced move (0.765); a steeper
point for three in a line, 40 (0.755).
"""
