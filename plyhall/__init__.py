"""The ``plyhall`` command: every subcommand in one place (:mod:`plyhall.commands`), the entry point
:func:`plyhall.cli.main`.

This package sits above the four others (``protocol``, ``server``, ``client`` and ``bots``): it turns a command line
into a call of theirs and holds no logic of its own beyond reading and checking options. Beside
``plyhall/commands/`` (one module a subcommand) it holds what several commands share: the database they read
(:mod:`plyhall.database`) and the supervisor of ``plyhall serve --workers`` (:mod:`plyhall.workers`).
"""
