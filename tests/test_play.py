"""``plyhall play``: a person against a bot, driven here by scripted input."""

from __future__ import annotations

import io
import random
import re

import pytest

from client.runner.play import play_in_terminal
from plyhall.cli import main
from protocol.games import GAMES
from protocol.games.quarto import describe_piece

BOT_MOVE = re.compile(r"^(?:random|novice|minimax-\d) plays (.+)$")


class ScriptedPerson:
    """Types ``script`` first, then random legal moves, following the game from the printed bot moves."""

    def __init__(self, game_id: str, script: tuple[str, ...] | list[str] = (), seed: int = 0) -> None:
        self.game = GAMES[game_id]
        self.state = self.game.initial_state()
        self.script = list(script)
        self.rng = random.Random(seed)
        self.output: list[str] = []
        self.prompts: list[str] = []

    def write(self, text: str) -> None:
        self.output.append(text)
        found = BOT_MOVE.match(text)
        if found:
            self.state = self.game.apply(self.state, self.game.parse_move(found.group(1), self.state))

    def read(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if self.script:
            return self.script.pop(0)
        move = self.rng.choice(self.game.legal_moves(self.state))
        self.state = self.game.apply(self.state, move)
        return self.game.notation(move)

    @property
    def text(self) -> str:
        return "\n".join(self.output)


@pytest.mark.parametrize("game_id", sorted(GAMES))
@pytest.mark.parametrize("seat", [0, 1])
def test_a_person_plays_a_whole_game(game_id: str, seat: int) -> None:
    person = ScriptedPerson(game_id, seed=seat)
    outcome = play_in_terminal(game_id, "random", seat, seed=1, read=person.read, write=person.write)
    assert outcome is not None
    assert outcome == GAMES[game_id].outcome(person.state)
    last = person.output[-1]
    if outcome.winner is None:
        assert last.startswith("Draw")
    elif outcome.winner == seat:
        assert last.startswith("You won")
    else:
        assert last.startswith("You lost, random won")
    assert f"you are seat {seat}" in person.output[0]


def test_bad_input_is_asked_again_with_the_reason() -> None:
    person = ScriptedPerson("connect4", ["9", "hello", "", "moves", "help", "moves 3"])
    play_in_terminal("connect4", "novice", 0, seed=2, read=person.read, write=person.write)
    text = person.text
    assert "Not a legal move: '9' is not a column; type a number from 1 to 7" in text
    assert "Not a legal move: 'hello' is not a column" in text
    assert "7 legal moves:\n1  2  3  4  5  6  7" in text
    assert "1 legal move:\n3" in text
    assert "list the legal moves" in text and "quit" in text  # the help
    # every bad line, the empty one and the commands were followed by a new prompt before the first move
    assert len(person.prompts) >= 7


def test_an_illegal_move_gets_the_rules_reason() -> None:
    person = ScriptedPerson("santorini", ["a1 a1", "b2-c3/d4", "quit"])
    play_in_terminal("santorini", "random", 0, seed=5, read=person.read, write=person.write)
    refusals = [line for line in person.output if line.startswith("Not a legal move")]
    assert refusals == [
        "Not a legal move: both workers cannot stand on a1: place them on two squares. "
        "Try again ('moves' lists the legal moves).",
        "Not a legal move: you must place both workers first (e.g. 'b2 d4'). "
        "Try again ('moves' lists the legal moves).",
    ]


def test_the_amazons_move_list_is_cut_short_with_a_hint() -> None:
    person = ScriptedPerson("amazons", ["moves", "moves a7-b7", "quit"])
    assert play_in_terminal("amazons", "random", 0, seed=1, read=person.read, write=person.write) is None
    assert "2176 legal moves:" in person.text
    assert "... and 1976 more; type 'moves a7' to list only the moves starting with a7" in person.text
    assert "28 legal moves:\na7-b7/c7" in person.text
    assert person.output[-1] == "You left the game."


def test_santorini_placements_are_listed_whole_on_each_line() -> None:
    person = ScriptedPerson("santorini", ["moves a1", "quit"])
    play_in_terminal("santorini", "random", 0, seed=1, read=person.read, write=person.write)
    after = person.text.split("legal moves:\n", 1)[1].splitlines()
    listing = after[:next(i for i, line in enumerate(after) if line.startswith("You left"))]
    assert len(listing) > 1 and all(len(line) <= 100 for line in listing)
    for line in listing:  # 'a1 b1  a1 c1  ...': every placement is two squares, never cut between lines
        assert re.fullmatch(r"[a-e][1-5] [a-e][1-5](  [a-e][1-5] [a-e][1-5])*", line), line


def test_end_of_input_quits() -> None:
    def no_more_input(prompt: str) -> str:
        raise EOFError

    output: list[str] = []
    assert play_in_terminal("quarto", "novice", 0, read=no_more_input, write=output.append) is None
    assert output[-1] == "You left the game."


def test_the_bot_moves_first_when_the_person_takes_seat_1() -> None:
    person = ScriptedPerson("santorini", ["quit"])
    play_in_terminal("santorini", "novice", 1, seed=3, read=person.read, write=person.write)
    assert BOT_MOVE.match(person.output[2])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "chess"], "unknown game 'chess'"),
        (["--game", "quarto", "--level", "minimax-0"], "unknown level 'minimax-0'; levels: random, novice"),
    ],
)
def test_cli_refuses_bad_options(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", *args]) == 2
    assert message in capsys.readouterr().err


def test_cli_refuses_a_bad_seat(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["play", "--game", "connect4", "--seat", "2"])
    assert "must be 0 (move first) or 1 (move second)" in capsys.readouterr().err


def test_cli_plays_a_game_from_piped_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # cycling through the columns always finds a legal one; full columns are refused and asked again
    lines = "\n".join(["8", "moves"] + [str(c) for c in range(1, 8)] * 20) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    assert main(["play", "--game", "connect4", "--level", "random", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "Not a legal move: '8' is not a column" in out
    assert "your move (seat 0): 8\n" in out  # piped input is echoed like typed input
    assert re.search(r"^(You won|You lost|Draw)", out, re.MULTILINE)


def test_quarto_help_says_what_this_turn_asks_for_and_what_a_pieces_digits_mean(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The help's example was always the first legal move ('0000' at the opening), nothing said what the four digits
    of a piece are, and 'zz' while choosing a piece was refused as not a square."""
    monkeypatch.setattr("sys.stdin", io.StringIO("help\nzz\n0110\nhelp\nquit\n"))
    assert main(["play", "--game", "quarto", "--level", "random", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    game = GAMES["quarto"]
    digits = ("A piece is four binary digits, one an attribute, left to right: colour (0 light, 1 dark), shape "
              "(0 square, 1 round), height (0 short, 1 tall), hollow (0 solid, 1 hollow).")
    assert out.count(digits) == 2, out
    assert ("Now: choose a piece for your opponent: four binary digits (colour, shape, height, hollow), like 0110."
            in out)
    assert ("Not a legal move: 'zz' is not a piece; choose a piece for your opponent: four binary digits (colour, "
            "shape, height, hollow), like 0110.") in out
    reply = re.search(r"^random plays (\S+ \S+)$", out, re.MULTILINE).group(1)
    state = game.play(game.initial_state(), "0110", reply)
    assert f"Now: place {reply.split()[1]} on an empty square, then choose a piece for your opponent" in out
    assert f"your piece is {describe_piece(int(reply.split()[1], 2))}." in out
    examples = re.findall(r"^Type a move in Quarto notation, for example '([^']+)'\.$", out, re.MULTILINE)
    assert len(examples) == 2 and examples[0] != "0000", examples
    assert game.parse_move(examples[0], game.initial_state()) in game.legal_moves(game.initial_state())
    assert game.parse_move(examples[1], state) in game.legal_moves(state)
    # under the board, the pieces nobody holds or has placed: all 16 at the start; then 14 (0110 on the board, the
    # reply's piece in hand)
    left = re.findall(r"^pieces left to give: (.*)$", out, re.MULTILINE)
    assert len(left[0].split()) == 16 and len(left[1].split()) == 14, left
    assert "0110" not in left[1].split() and reply.split()[1] not in left[1].split()


def test_the_hint_under_a_cut_list_names_moves_it_left_out() -> None:
    """Santorini's 300 placements: the hint said 'moves a1', whose moves were all shown already."""
    from client.runner.play import MOVES_SHOWN, _list_moves

    game = GAMES["santorini"]
    state = game.initial_state()
    text = _list_moves(game, state, "")
    prefix = re.search(r"type 'moves ([^']+)' to list only", text).group(1)
    left_out = [game.notation(move) for move in game.legal_moves(state)][MOVES_SHOWN:]
    assert any(name.startswith(prefix) for name in left_out), (prefix, left_out[:3])
