"""The Quarto engine: a compact compiled position, safe-piece pruning, canonical keys, and the ``master`` bot.

``position``    the position as one ``int64`` array with per-line counters, its moves, the rules, and the
                transposition key canonical under relabelling the attributes;
``evaluation``  safe-piece pruning of the moves searched, the parity heuristic, the compiled search, and
                an exact solver for small positions;
``master``      :class:`~bots.engine.quarto.master.QuartoMaster`, with its traps in drawn endgames.

Design and measurements: docs/ENGINES.md.
"""
