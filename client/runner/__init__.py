"""Programs that run our bots: ``plyhall bot`` (a bot on a server), ``match`` (local games between
levels) and ``play`` (a person against a bot in the terminal).

This package sits above both the client SDK and ``bots``: with the ``plyhall`` command above it (whose
``plyhall/commands/`` read these programs' options), it is the only code that imports both
(``tests/test_package.py`` checks it). The server never imports it; house bots it starts are
separate ``plyhall bot`` processes that connect like any remote bot.
"""
