"""Scripted clients for server tests."""

from __future__ import annotations

import random
from typing import Any

from client.sdk import Client
from protocol.games import get_game


async def login(url: str, name: str, coords: str = "algebraic", secret: str | None = None,
                subprotocol: str | None = "plyhall.v1.msgpack") -> Client:
    client = Client(url, subprotocol)
    await client.connect()
    await client.login(name, secret, coords)
    return client


async def play_out(clients: list[Client], room: str, rng: random.Random) -> dict[str, Any]:
    """Both seated clients play random legal moves (each in its own coordinates) until game_over.

    Returns the game_over message as seat 0's client saw it.
    """
    starts = [await c.expect("game_start", room=room) for c in clients]
    by_seat = {s["seat"]: (c, s) for c, s in zip(clients, starts, strict=True)}
    game = get_game(starts[0]["game"])
    states = {seat: game.decode_state(start["state"], by_seat[seat][0].coords) for seat, (_, start) in by_seat.items()}
    to_move = starts[0]["to_move"]
    while True:
        client, _ = by_seat[to_move]
        move = rng.choice(game.legal_moves(states[to_move]))
        await client.send({"type": "move", "room": room, "move": game.format_move(move, client.coords)})
        over = None
        for seat, (c, _) in by_seat.items():
            msg = await c.expect("moved", room=room)
            mine = game.parse_move(msg["move"], states[seat], c.coords)
            assert mine == move, "every player sees the same move, in its own coordinates"
            states[seat] = game.apply(states[seat], mine)
            if msg["to_move"] is None:
                over = await c.expect("game_over", room=room)
                if seat == 0:
                    result = over
        assert states[0] == states[1]
        if over is not None:
            return result
        to_move = msg["to_move"]
