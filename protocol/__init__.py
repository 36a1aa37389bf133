"""Plyhall's shared language: game rules, messages, codecs and coordinates.

This package imports nothing else of Plyhall's; the server, the client and the
bots all build on it.
"""

__version__ = "0.1.0"
PLYHALL_PROTOCOL = True  # lets tests tell this package from PyPI's unrelated "protocol"
