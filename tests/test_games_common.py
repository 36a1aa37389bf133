"""Invariants every game must keep, checked over many random games."""

from __future__ import annotations

import json
import random

import pytest

from protocol.games import COORDS, GAMES, IllegalMove

# Games with huge branching get fewer games; every other invariant is the same.
GAMES_PER_ID = {"connect4": 2000, "magnetic-cave": 1000, "quarto": 1000, "santorini": 300, "amazons": 60}


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_random_games_keep_invariants(game_id: str) -> None:
    game = GAMES[game_id]
    rng = random.Random(f"invariants-{game_id}")
    for _ in range(GAMES_PER_ID.get(game_id, 300)):
        state = game.initial_state(first=rng.randrange(2))
        hash(state)
        while game.outcome(state) is None:
            moves = game.legal_moves(state)
            assert moves, "a running game must offer a move"
            assert len(set(moves)) == len(moves), "legal_moves lists a move twice"
            move = rng.choice(moves)
            # every written form parses back to the same move
            text = game.notation(move)
            assert game.parse_move(text, state) == move
            coords = rng.choice(COORDS)
            form = game.format_move(move, coords)
            assert game.parse_move(json.loads(json.dumps(form)), state, coords) == move
            # the state encoding survives JSON both ways, in every convention
            encoded = json.loads(json.dumps(game.encode_state(state, coords)))
            assert game.decode_state(encoded, coords) == state
            before = state
            state = game.apply(state, move)
            assert game.to_move(before) in (0, 1)
            assert before != state
            str(state)
        assert game.legal_moves(state) == []
        with pytest.raises(IllegalMove):
            game.apply(state, move)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_apply_accepts_only_legal_moves(game_id: str) -> None:
    """Moves legal in some other position are rejected unless legal here."""
    game = GAMES[game_id]
    rng = random.Random(f"only-legal-{game_id}")
    pool: list = []
    for _ in range(GAMES_PER_ID.get(game_id, 300) // 10 + 5):
        state = game.initial_state()
        while game.outcome(state) is None:
            legal = game.legal_moves(state)
            pool.extend(rng.sample(legal, min(3, len(legal))))
            pool = pool[-400:]
            legal_set = set(legal)
            for candidate in rng.sample(pool, min(20, len(pool))):
                if candidate in legal_set:
                    game.apply(state, candidate)
                else:
                    with pytest.raises(IllegalMove):
                        game.apply(state, candidate)
            state = game.apply(state, rng.choice(legal))


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_bad_text_is_rejected_with_a_reason(game_id: str) -> None:
    game = GAMES[game_id]
    state = game.initial_state()
    for junk in ["", "zz", "??", "a0", "k99-z1/x3", 3.5, None, [], {}, {"bogus": 1}, True]:
        with pytest.raises(IllegalMove) as info:
            game.apply(state, game.parse_move(junk, state))
        assert info.value.reason


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_unknown_option_is_rejected(game_id: str) -> None:
    game = GAMES[game_id]
    with pytest.raises(ValueError, match="option"):
        game.initial_state(colour="purple")
    with pytest.raises(ValueError, match="first"):
        game.initial_state(first=2)
