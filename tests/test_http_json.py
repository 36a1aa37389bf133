"""The heavy listings are encoded a piece at a time (``server.io.http.encode_json``, so that encoding a 500-game page
never holds the interpreter lock long enough to stall the event loop): the bytes are exactly ``json.dumps``'s."""

from __future__ import annotations

import json

from server.io.http import ENCODE_CHUNK, encode_json, json_response


def test_a_long_listing_is_encoded_exactly_as_json_dumps_would():
    games = [{"id": f"g{n:04d}", "players": ["ann", "bøb \u2603"], "winner": n % 3 or None, "rated": n % 2 == 0,
              "options": {}, "move_count": n, "started_at": 1767225600.5 + n, "reason": 'said "resigned"\n'}
             for n in range(500)]
    for body in ({"games": games, "limit": 500, "offset": 0}, {"name": "ann", "ratings": {}, "recent": games[:100]},
                 {"players": games[:ENCODE_CHUNK + 1]}, {"players": games[:ENCODE_CHUNK]}, {"games": []},
                 {1: games}, games, {"a": {"nested": games}}):
        assert encode_json(body) == json.dumps(body).encode()
    response = json_response(200, {"games": games})
    assert json.loads(response.body) == {"games": games} and response.headers["Content-Length"] == str(
        len(response.body))
