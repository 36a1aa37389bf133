"""The Santorini engine: compiled rules, a threat-aware evaluation, and the ``master`` bot.

``position``    the position as one ``int64`` array, its move codes, and the rules;
``evaluation``  the search's verdicts (climbs at hand, unstoppable threats), the evaluation, move ordering,
                and the compiled search;
``master``      :class:`~bots.engine.santorini.master.SantoriniMaster`.

Design and measurements: docs/ENGINES.md.
"""
