"""The Game of the Amazons engine: compiled rules, a territory evaluation, selective search, and the ``master`` bot.

``position``    the position as one ``int64`` array (with the search's scratch space), its moves, and the rules;
``endgame``     separated endgames: bounds on each side's moves, the race they decide, and the filling walk;
``evaluation``  Lieberum's territory evaluation, the selective choice of moves to search, and the compiled
                search;
``master``      :class:`~bots.engine.amazons.master.AmazonsMaster`.

Design and measurements: docs/ENGINES.md.
"""
