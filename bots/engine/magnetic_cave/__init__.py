"""The Magnetic Cave engine: bitboards, a threat-based evaluation, and the ``master`` bot.

``position``    the board as two ``uint64`` bitboards, its lines of five, its moves, and the search's state array;
``evaluation``  exact pruning of the moves searched, the middle-game and endgame evaluations (threat squares,
                lines, chains of fours, the zugzwang of the filling board), and the compiled search;
``master``      :class:`~bots.engine.magnetic_cave.master.MagneticCaveMaster`, with its drawing traps.

Design and measurements: docs/ENGINES.md.
"""
