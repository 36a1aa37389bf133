"""Openings files: the shared Santorini placements and Connect Four test sets, plain move lists, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.games import GAMES
from server.tournament import OpeningsError, parse_openings

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"  # shared/ sits beside the repository


def shared_file(*parts: str) -> str:
    path = DATA.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"{path} is missing (the shared data folder sits beside the repository)")
    return path.read_text()


def test_santorini_placements_file():
    text = shared_file("santorini", "opening_positions.txt")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    openings = parse_openings(text, "santorini", source="opening_positions.txt")
    assert len(openings) == len(lines)
    santorini = GAMES["santorini"]
    for opening, line in zip(openings, lines, strict=True):
        # cell k (two characters) is square index k: a1, b1, ... e1, a2, ...
        cells = [line[2 * k: 2 * k + 2] for k in range(25)]
        g_squares = [santorini.grid.name(k) for k, cell in enumerate(cells) if cell[1] == "G"]
        b_squares = [santorini.grid.name(k) for k, cell in enumerate(cells) if cell[1] == "B"]
        assert opening.moves == (" ".join(g_squares), " ".join(b_squares))
        state = opening.play(santorini)
        assert santorini.outcome(state) is None and santorini.to_move(state) == 0
        assert [santorini.grid.name(sq) for sq in state.workers] == g_squares + b_squares


def test_connect4_test_set_as_first_plies():
    text = shared_file("connect4", "Test_L2_R1")
    lines = [line.split() for line in text.splitlines() if line.strip()]
    openings = parse_openings(text, "connect4", unique=False, source="Test_L2_R1")
    assert [opening.moves for opening in openings] == [tuple(moves) for moves, _score in lines]
    assert openings[4].line == 5
    first_four = parse_openings(text, "connect4", plies=4, source="Test_L2_R1")
    assert all(len(opening) == 4 for opening in first_four)
    expected = list(dict.fromkeys(tuple(moves[:4]) for moves, _score in lines))  # first occurrences, in order
    assert [opening.moves for opening in first_four] == expected
    assert len(first_four) < len(lines), "truncating makes repeats, which are dropped"


def test_plain_move_lists_for_every_game():
    text = """
    # Connect Four: spaces or commas
    4 4 3
    4, 4, 5   # a comment after the moves
    """
    assert [o.moves for o in parse_openings(text, "connect4")] == [("4", "4", "3"), ("4", "4", "5")]
    quarto = parse_openings("0101 c3 1000 d4 0000\n1111, a1 0000", "quarto")
    assert [o.moves for o in quarto] == [("0101", "c3 1000", "d4 0000"), ("1111", "a1 0000")]
    santorini = parse_openings("c3 d3 b2 d2 c3-c4/c5", "santorini")
    assert santorini[0].moves == ("c3 d3", "b2 d2", "c3-c4/c5")
    amazons = parse_openings("a7-b7/c7, a4-b4/c4\na7 b7 c7 a4 b4 c4", "amazons")
    assert amazons[0].moves == ("a7-b7/c7", "a4-b4/c4") and len(amazons) == 1  # the second line repeats it
    cave = parse_openings("a1 h8 b1", "magnetic-cave")
    assert cave[0].moves == ("a1", "h8", "b1")
    # "4 3" alone reads as two moves, not as a test-set line
    assert parse_openings("4 3\n2 5", "connect4")[0].moves == ("4", "3")
    # the options the games start with: white first in the Amazons
    assert parse_openings("a4-b4/c4", "amazons", options={"first": "white"})[0].moves == ("a4-b4/c4",)


@pytest.mark.parametrize("game, text, message", [
    ("connect4", "4 4\n4 4 8", "x.txt, line 2: move 3 '8': '8' is not a column"),
    ("connect4", "4 4 4 4 4 4 4", "line 1: move 7 '4': column 4 is full"),
    ("connect4", "1 1 2 2 3 3 4", r"line 1: the opening ends the game \(four in a row\)"),
    ("connect4", "4,,3", "line 1: '4,,3' has an empty move between commas"),
    ("connect4", "# only a comment\n\n", "x.txt: no openings found"),
    ("santorini", "a1 a1", "line 1: move 1 'a1 a1': both workers cannot stand on a1"),
    ("santorini", "1N" + "0N" * 20 + "0G0G0B0B" + "0000", r"line 1: the position has buildings on a1 \(height 1\)"),
    ("santorini", "0G" * 3 + "0N" * 20 + "0B0B" + "0000", "line 1: G must have exactly 2 workers, not 3"),
    ("santorini", "0N" * 21 + "0G0G0B0X" + "0000", "line 1: occupants are N .* not e5 \\('X'\\)"),
    ("amazons", "a7-b7/c7 a4-b4", "line 1: move 2 'a4-b4': 'a4-b4' is not an Amazons move"),
    ("quarto", "0101 c3", "line 1: move 2 'c3': you must choose a piece"),
])
def test_bad_openings_name_the_line_and_the_problem(game, text, message):
    with pytest.raises(OpeningsError, match=message):
        parse_openings(text, game, source="x.txt")


def test_bad_arguments():
    with pytest.raises(OpeningsError, match="unknown openings format 'pgn'; formats: auto"):
        parse_openings("4", "connect4", format="pgn")
    with pytest.raises(OpeningsError, match="connect4-test format is for Connect Four"):
        parse_openings("4453 2", "quarto", format="connect4-test")
    with pytest.raises(OpeningsError, match="plies"):
        parse_openings("4", "connect4", plies=0)
    with pytest.raises(OpeningsError, match="bad game options"):
        parse_openings("4", "connect4", options={"colour": 1})
    with pytest.raises(KeyError, match="unknown game 'chess'"):
        parse_openings("e4", "chess")
    with pytest.raises(OpeningsError, match="line 2: 'x9 3' is not a test-set line"):
        parse_openings("4453 2\nx9 3", "connect4", format="connect4-test")
