"""Compiled engines for the ``master`` levels: one shared search and a package per game.

``search``      the game-tree search every engine shares, compiled per game from its hooks;
``engine_bot``  :class:`~bots.engine.engine_bot.EngineBot`, how every master chooses a move;
``traps``       choosing among drawing moves the one a fallible opponent most likely loses after;
``budget``      how long a move may think; ``bits``, ``squares``: helpers shared by several games.

Each game's package holds ``position`` (the compiled position: its layout, moves and rules),
``evaluation`` (how the search judges positions and which moves it looks at, and the compiled
search) and ``master`` (the bot), and a few more parts where a game needs them (Connect Four's
exact ``solver``, the Amazons' ``endgame``). docs/ENGINES.md tells their design and measurements.
"""
