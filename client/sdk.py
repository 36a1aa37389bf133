"""The client SDK: talk to a Plyhall server, and run a bot on it.

Two layers:

* :class:`Client` — one connection: connect with a subprotocol, log in, send
  requests and wait for replies or pushes. The server's tests use it too.
* :func:`run_player` / :func:`run` — everything a bot needs: log in, create or
  join a room, follow the game, call :meth:`Player.choose` in a worker process
  when it is the bot's turn (so keepalive pings are answered while it thinks),
  send the move, go on to the next game, and reconnect with backoff after a
  dropped connection, resuming the seat.

A complete bot::

    import random
    from client.sdk import Player, run

    class Random(Player):
        def choose(self, turn):
            return random.choice(turn.legal_moves)

    run(Random(), name="rando", secret="s3cret", game="connect4")

This module is the front door: import from here. Behind it, one module a layer:

``client.connection``  :class:`Client`, the connection errors, :func:`check_url`
``client.player``      :class:`Player`, :class:`FunctionPlayer`, :class:`Turn`, :class:`GameResult`
``client.thinker``     :class:`Thinker`: ``choose`` in a worker process (or a thread)
``client.play_loop``   :func:`run_player`, :func:`run`, :class:`RunOptions`: the play loop
"""

from __future__ import annotations

from protocol.codec import JSON, MSGPACK

from .connection import (
    DEFAULT_URL,  # noqa: F401 - not in __all__, but programs such as plyhall bot import it from here
    Client,
    NoServer,
    ServerError,
    ServerURLError,
    TakenOver,
    TryLater,
    check_url,
)
from .play_loop import CannotPlay, RunOptions, run, run_player
from .player import FunctionPlayer, GameResult, NoMove, Player, Resign, StopPlaying, Turn

__all__ = ["CannotPlay", "Client", "FunctionPlayer", "GameResult", "JSON", "MSGPACK", "NoMove", "NoServer", "Player",
           "Resign", "RunOptions", "ServerError", "ServerURLError", "StopPlaying", "TakenOver", "TryLater", "Turn",
           "check_url", "run", "run_player"]
