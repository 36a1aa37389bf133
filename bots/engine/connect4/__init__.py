"""The Connect Four engine: bitboards, an exact solver, a heuristic search, and the ``master`` bot.

``position``    the board as two ``uint64`` bitboards, its moves, and the search's state array;
``solver``      the exact solver (Pascal Pons' design), scoring as the public test sets do;
``fieldbook``   our reader of the field's 12-stone book (``bitbully-databases``), where the solver stops;
``book``        the opening table (every position up to 5 stones, made once in the user's cache) and the
                proven opening moves of every position before 12 stones;
``evaluation``  the heuristic on odd/even threats, the search hooks, and the compiled search;
``master``      :class:`~bots.engine.connect4.master.Connect4Master`: the openings, then the solver in steps
                (a column proven to hold a floor first), the search only where not even that finished in time.

Design and measurements: docs/ENGINES.md.
"""
