"""Plyhall's client side: the SDK (``client.sdk``: connect, log in, find games, play, reconnect),
the programs that run our bots (``client.runner``) and the ``plyhall`` command (``client.cli``).

``client.sdk`` imports only ``protocol``; ``client.runner`` adds ``bots``; ``client.cli`` sits on
top of everything, the server's commands included.
"""
