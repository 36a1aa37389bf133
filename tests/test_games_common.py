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
    for not_a_seat in (1.0, True):  # (1.0 was taken, and the room's listing showed 1.0)
        with pytest.raises(ValueError, match=r"first' must be 0 or 1"):
            game.initial_state(first=not_a_seat)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_moves_print_as_their_notation_and_are_told_from_written_forms(game_id: str) -> None:
    game = GAMES[game_id]
    rng = random.Random(f"repr-{game_id}")
    state = game.initial_state()
    while game.outcome(state) is None:
        move = rng.choice(game.legal_moves(state))
        assert repr(move) == f"<{type(move).__name__} {game.notation(move)}>"
        assert game.is_move(move)
        assert not game.is_move(game.notation(move))
        assert not game.is_move(game.format_move(move))
        state = game.apply(state, move)
    assert not game.is_move(state) and not game.is_move(None)


MOVE_REPRS = {
    "connect4": ("4", "<Drop 4>"),
    "amazons": ("d1-d7/g7", "<AmazonsMove d1-d7/g7>"),
    "santorini": ("e5 a1", "<Placement a1 e5>"),
    "magnetic-cave": ("d4", "<Brick d4>"),
    "quarto": ("0101", "<QuartoMove 0101>"),
}


@pytest.mark.parametrize("game_id", sorted(MOVE_REPRS))
def test_a_move_prints_its_notation_and_never_fails_to_print(game_id: str) -> None:
    game = GAMES[game_id]
    text, expected = MOVE_REPRS[game_id]
    move = game.parse_move(text, game.initial_state())
    assert repr(move) == expected
    odd = type(move)(*(["junk"] * len(move)))  # not a move apply accepts, but it still prints
    assert repr(odd).startswith(f"<{type(move).__name__} ") and "'junk'" in repr(odd)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_state_is_rebuilt_from_the_picture_it_prints(game_id: str) -> None:
    game = GAMES[game_id]
    rng = random.Random(f"pictures-{game_id}")
    for _ in range(GAMES_PER_ID[game_id] // 20):
        state = game.initial_state(first=rng.randrange(2))
        while True:
            picture = str(state)
            # a drawn picture does not say who would move next: the count of moves decides, seat 0 first
            drawn = state.result is not None and state.result.winner is None
            rebuilt = game.from_picture(picture, **({"to_move": state.to_move} if drawn else {}))
            assert rebuilt == state and rebuilt.result == state.result, picture
            # the board alone, without rank numbers, file letters or status, with the side to move given
            rows = picture.splitlines()[: game.grid.height]
            bare = "\n".join(row.split(maxsplit=1)[1] for row in rows)
            assert game.from_picture(bare, to_move=state.to_move, **_hand(state)) == state, picture
            if game.outcome(state) is not None:
                break
            state = game.apply(state, rng.choice(game.legal_moves(state)))


def _hand(state: object) -> dict[str, object]:
    """Quarto's piece in hand, which a bare picture does not show."""
    return {"in_hand": state.in_hand} if hasattr(state, "in_hand") else {}


BAD_CELLS = {
    "connect4": ("Z", "'Z' is not a cell"),
    "amazons": ("Q", "'Q' is not a cell"),
    "santorini": ("5A", "'5A' is not a square"),
    "magnetic-cave": ("X", "'X' is not a cell"),
    "quarto": ("0120", "'0120' is not a square"),
}


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_bad_picture_is_refused_naming_the_row_and_cell(game_id: str) -> None:
    game = GAMES[game_id]
    lines = str(game.initial_state()).splitlines()
    height = game.grid.height
    cell, message = BAD_CELLS[game_id]
    second_row = lines[1].split()
    second_row[3] = cell  # the rank number first, so this is the third column
    bad = "\n".join([lines[0], " ".join(second_row), *lines[2:]])
    column = "3" if game_id == "connect4" else "c"
    with pytest.raises(ValueError, match=f"row {height - 1}, column {column}: {message}"):
        game.from_picture(bad)
    with pytest.raises(ValueError, match=f"row {height - 1} stands where row {height} should"):
        game.from_picture("\n".join(lines[1:]))
    with pytest.raises(ValueError, match=f"the board has {height}"):
        game.from_picture("\n".join(line.split(maxsplit=1)[1] for line in lines[1:height]))
    with pytest.raises(ValueError, match=f"row {height} has"):
        game.from_picture(lines[0] + " " + lines[0].split()[-1])
    with pytest.raises(ValueError, match="who is to move"):
        game.from_picture("\n".join(lines[:height] + ["nobody moves"]))
    with pytest.raises(ValueError, match=f"more than {height} rows"):
        game.from_picture("\n".join(lines[:height] + [lines[0]]))
