"""The Connect Four engine: bitboards, an exact solver, a heuristic search, and the ``master`` bot.

``position``    the board as two ``uint64`` bitboards, its moves, and the search's state array;
``solver``      the exact solver (Pascal Pons' design), scoring as the public test sets do;
``evaluation``  the heuristic on odd/even threats, the search hooks, and the compiled search;
``master``      :class:`~bots.engine.connect4.master.Connect4Master`: the solver first, the search when
                the solver cannot finish in time.

Design and measurements: docs/ENGINES.md.
"""
