"""Every subcommand of ``plyhall``, one module each (``plyhall.cli.COMMANDS`` lists them in the order of
``plyhall --help``).

Each module offers ``register(subparsers)``, which adds its parser and sets ``func``, the function that carries
the command out (the server's, the client's or the bot runner's; the module keeps only the argparse glue and the
checks of its options). This package's ``__init__`` imports none of them, so that importing one command (the
server's ``serve``) loads nothing of the others (the engines of ``bot``).
"""
