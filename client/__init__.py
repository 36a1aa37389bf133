"""Plyhall's client side: the SDK (``client.sdk``: connect, log in, find games, play, reconnect),
the programs that run our bots (``client.runner``) and the ``plyhall`` command (``client.cli``).

``client.sdk`` is the SDK's front door; behind it ``client.connection`` (one connection),
``client.player`` (what a bot author writes), ``client.thinker`` (the worker process that runs
``choose``) and ``client.play_loop`` (finding games, playing them, reconnecting). The SDK imports
only ``protocol``; ``client.runner`` adds ``bots``; ``client.cli`` sits on top of everything, the
server's commands included.
"""
