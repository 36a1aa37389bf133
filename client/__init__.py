"""Plyhall's client side: the SDK (``client.sdk``: connect, log in, find games, play, reconnect),
the programs that run our bots (``client.runner``) and the client's commands (``plyhall tournament``,
``plyhall cosc322``), whose options the ``plyhall`` command (the ``plyhall`` package) reads.

``client.sdk`` is the SDK's front door; behind it ``client.connection`` (one connection),
``client.player`` (what a bot author writes), ``client.thinker`` (the worker process that runs
``choose``) and ``client.play_loop`` (finding games, playing them, reconnecting). The SDK imports
only ``protocol``; ``client.runner`` adds ``bots``; the ``plyhall`` package sits on top of everything, the
server's commands included.
"""
