"""The Quarto engine: a compact compiled position, safe-piece pruning, canonical keys, and the ``master`` bot.

``position``    the position as one ``int64`` array with per-line counters, its moves, the rules, and the
                transposition key canonical under relabelling the attributes;
``evaluation``  safe-piece pruning of the moves searched, the parity heuristic, the compiled search, and
                an exact solver for small positions;
``master``      :class:`~bots.engine.quarto.master.QuartoMaster`, with its traps in drawn endgames.

Measured on solving 10- and 11-empty positions, the canonical key saves 3-4%
of the nodes at about the same speed per node (relabelled twins are rare
inside one search; they matter most early in the game).

Traps: Measured with
``benchmarks/strength.py --game quarto --time-per-move 0.2 --depth 4``:
70 wins and 30 draws in 100 games before; after, 77-82 wins and 17-23 draws
in four runs of 100 games, and 165-34-1 (0.910) in 200. The opponents'
actual blunder rate follows the predicted chance, a little below it
(0.48 for a predicted 0.62, 0.73 for 0.87).
"""
