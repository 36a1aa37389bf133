"""Our ``master`` bots against OpenSpiel's compiled MCTS bot, at equal time per move.

    pip install -e '.[bench]'      # OpenSpiel, the outside opponent
    .venv/bin/python benchmarks/openspiel_match.py --game all --games 50 --time-per-move 0.5

The opponent is ``pyspiel.MCTSBot`` (C++ UCT with a random-rollout evaluator
and OpenSpiel's MCTS-Solver on, as in OpenSpiel's own examples), a program
nobody here wrote. Each game is played on two boards kept in step: our
reference rules (``protocol.games``) and OpenSpiel's own game. Every move is
checked by both sets of rules, and after every turn the two boards, the side to
move, the legal choices and, at the end, the result must agree, else the run
stops with :class:`MappingError`: a mapping bug cannot go unnoticed.

Games. OpenSpiel's ``connect_four`` (7x6, four in a row) and ``amazons``
(``board_size=10``, its default) are the same games as ours:

* Connect Four: OpenSpiel's action is the column, 0-based, as our
  ``Drop.column``; its player 0 (``x``) drops first, like our seat 0 (``X``).
  Its printout lists the top row first; our row 0 is the bottom row.
* Amazons: OpenSpiel splits a turn into three actions (the queen's square, its
  destination, the arrow's square), each a cell ``r * 10 + c`` with ``r``
  counted from the top of its printout. Its player 0 (``X``, who moves first)
  starts on cells 60, 69, 93 and 96, exactly our seat 0's (black, who moves
  first) a7, j7, d10 and g10 as squares ``row * 10 + col`` counted from rank 1.
  So the cell number is the same square on both sides: OpenSpiel's printout
  is our board upside down, a reflection under which queen lines, and so the
  rules, are unchanged. OpenSpiel's rules match ours: the square the queen
  leaves is free for its arrow, and a player with no legal turn loses.

Master and MCTS swap seats every game, so each moves first in half the games.

Equal time. Our bot gets ``TimeBudget(per_move=T)`` (and keeps a margin of
its own: it thinks at most ``T - min(0.15, T / 4)``). MCTS gets ``T`` of wall
clock per turn (``--mcts-limit time``, OpenSpiel's ``max_wall_clock_time``;
in Amazons the turn's three searches share it, each getting an equal share of
what is left), or a fixed number of simulations per search calibrated at the
start from its simulations per second (``--mcts-limit sims``). The calibration
(simulations per second at the start and in mid-game) is printed either way,
and the table shows the measured mean seconds per move of both sides.

Progress goes to stderr, the table to stdout. A benchmark prints figures; it
passes nothing. Exit status 2 when OpenSpiel is not installed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from common import script_parser

from bots import Bot, TimeBudget, make_bot
from protocol.games import GAMES
from protocol.games.amazons import AmazonsMove
from protocol.games.base import IllegalMove
from protocol.games.connect4 import Drop
from protocol.statistics import wilson_interval

INSTALL_HINT = "pip install -e '.[bench]'"
"""How to get OpenSpiel, printed when it is missing."""

UNLIMITED_SIMULATIONS = 1_000_000_000
"""``max_simulations`` when the wall clock limits MCTS instead (a C++ ``int``)."""

MAX_MEMORY_MB = 1000
"""MCTS tree memory before OpenSpiel garbage-collects rarely visited nodes (its examples' value)."""

CALIBRATION_PLIES: dict[str, tuple[int, ...]] = {"connect4": (0, 8, 16), "amazons": (0, 15, 30)}
"""Turns of random play before each calibration position: the start and two mid-game positions."""


class MappingError(AssertionError):
    """Our rules and OpenSpiel's disagree about a move or a position: a bug in the mapping."""


class GameMapping:
    """How one of our games and its OpenSpiel twin correspond (subclassed per game)."""

    game_id: str
    openspiel_name: str
    decisions: int
    """OpenSpiel actions per turn."""
    rows: int
    cols: int
    cells: dict[str, int]
    """OpenSpiel's printout character -> our cell value."""

    def to_actions(self, move: Any) -> list[int]:
        """The OpenSpiel actions of one of our moves."""
        raise NotImplementedError

    def from_actions(self, actions: list[int]) -> Any:
        """Our move for the OpenSpiel actions of one turn."""
        raise NotImplementedError

    def our_index(self, line: int, col: int) -> int:
        """Our square index of the cell at ``line`` (from the top) and ``col`` of OpenSpiel's printout."""
        raise NotImplementedError

    def our_choices(self, state: Any) -> list[int]:
        """What OpenSpiel offers as the turn's first action, from our legal moves."""
        raise NotImplementedError

    def board_of(self, os_state: Any) -> tuple[int, ...]:
        """OpenSpiel's board as our board tuple (read from its printout)."""
        lines = [line for line in str(os_state).splitlines() if line.strip()]
        if len(lines) != self.rows or any(len(line) != self.cols for line in lines):
            raise MappingError(f"unexpected OpenSpiel {self.openspiel_name} printout:\n{os_state}")
        board = [0] * (self.rows * self.cols)
        for line_no, line in enumerate(lines):
            for col, char in enumerate(line):
                if char not in self.cells:
                    raise MappingError(f"unknown OpenSpiel cell {char!r} in:\n{os_state}")
                board[self.our_index(line_no, col)] = self.cells[char]
        return tuple(board)


class Connect4Mapping(GameMapping):
    """Connect Four: action = column (0-based) = ``Drop.column``; printout top row first."""

    game_id = "connect4"
    openspiel_name = "connect_four"
    decisions = 1
    rows, cols = 6, 7
    cells = {".": 0, "x": 1, "o": 2}

    def to_actions(self, move: Drop) -> list[int]:
        """The column, as OpenSpiel's only action of the turn."""
        return [Drop(*move).column]

    def from_actions(self, actions: list[int]) -> Drop:
        """The drop in OpenSpiel's column."""
        (column,) = actions
        return Drop(column)

    def our_index(self, line: int, col: int) -> int:
        """Line 0 of the printout is our top row, 5."""
        return (self.rows - 1 - line) * self.cols + col

    def our_choices(self, state: Any) -> list[int]:
        """The playable columns."""
        return sorted(m.column for m in GAMES[self.game_id].legal_moves(state))


class AmazonsMapping(GameMapping):
    """Amazons: the turn is three cell actions (queen, destination, arrow); cell = our square index."""

    game_id = "amazons"
    openspiel_name = "amazons"
    decisions = 3
    rows, cols = 10, 10
    cells = {".": 0, "X": 1, "O": 2, "#": 3}

    def to_actions(self, move: AmazonsMove) -> list[int]:
        """Pick the queen, move it, shoot: three OpenSpiel actions."""
        queen, to, arrow = move
        return [queen, to, arrow]

    def from_actions(self, actions: list[int]) -> AmazonsMove:
        """Our turn from OpenSpiel's three actions."""
        queen, to, arrow = actions
        return AmazonsMove(queen, to, arrow)

    def our_index(self, line: int, col: int) -> int:
        """The identity: printout line ``r`` holds cells ``r * 10 + c``, our row ``r`` (a reflection)."""
        return line * self.cols + col

    def our_choices(self, state: Any) -> list[int]:
        """The queens that have a turn (OpenSpiel offers only those)."""
        return sorted({m.queen for m in GAMES[self.game_id].legal_moves(state)})


MAPPINGS: dict[str, GameMapping] = {"connect4": Connect4Mapping(), "amazons": AmazonsMapping()}
"""Our game id -> its correspondence with OpenSpiel."""


def check_agree(mapping: GameMapping, ours: Any, os_state: Any, where: str) -> None:
    """Raise :class:`MappingError` unless both boards, the side to move, the choices and any result agree."""
    game = GAMES[mapping.game_id]
    os_board = mapping.board_of(os_state)
    if os_board != tuple(ours.board):
        raise MappingError(f"{where}: boards differ\nours:\n{ours}\nOpenSpiel's:\n{os_state}")
    outcome = game.outcome(ours)
    if os_state.is_terminal() != (outcome is not None):
        raise MappingError(
            f"{where}: game over for one side only (ours: {outcome}, OpenSpiel: {os_state.is_terminal()})"
        )
    if outcome is None:
        if os_state.current_player() != game.to_move(ours):
            raise MappingError(
                f"{where}: seat {game.to_move(ours)} to move, OpenSpiel's player {os_state.current_player()}"
            )
        if sorted(os_state.legal_actions()) != mapping.our_choices(ours):
            raise MappingError(f"{where}: first actions differ: {sorted(os_state.legal_actions())} "
                               f"against ours {mapping.our_choices(ours)}")
        return
    returns = list(os_state.returns())
    expected = [0.0, 0.0] if outcome.winner is None else [1.0 if s == outcome.winner else -1.0 for s in (0, 1)]
    if returns != expected:
        raise MappingError(f"{where}: results differ: ours {outcome}, OpenSpiel returns {returns}")


@dataclass
class Mcts:
    """OpenSpiel's C++ MCTS bot, limited by wall clock per turn or by simulations per search."""

    pyspiel: Any
    os_game: Any
    uct_c: float
    rollouts: int
    solve: bool
    seconds: float | None = None
    """Wall clock per turn (``--mcts-limit time``)."""
    simulations: int | None = None
    """Simulations per search (``--mcts-limit sims``)."""
    rng: random.Random = field(default_factory=random.Random)

    def _bot(self, wall: float) -> Any:
        """A fresh MCTS bot for one search (a new seed each time, from ``rng``)."""
        sp = self.pyspiel
        seed = self.rng.randrange(2**31)
        evaluator = sp.RandomRolloutEvaluator(self.rollouts, seed)
        sims = self.simulations if self.simulations is not None else UNLIMITED_SIMULATIONS
        return sp.MCTSBot(self.os_game, evaluator, self.uct_c, sims, MAX_MEMORY_MB, self.solve, seed, False,
                          sp.ChildSelectionPolicy.UCT, wall)

    def turn(self, os_state: Any, decisions: int) -> tuple[list[int], int, float]:
        """Search and pick one turn's actions: ``(actions, simulations, seconds)``.

        In Amazons a turn is three decisions, each searched by ``MCTSBot`` from
        the state OpenSpiel is in (as its ``step`` does); on the clock, each
        search gets an equal share of the time left for the turn.
        """
        started = time.perf_counter()
        work = os_state.clone()
        player = work.current_player()
        actions: list[int] = []
        simulations = 0
        for k in range(decisions):
            if work.current_player() != player:
                raise MappingError(f"OpenSpiel's turn ended after {k} of {decisions} actions")
            wall = -1.0
            if self.seconds is not None:
                wall = max((self.seconds - (time.perf_counter() - started)) / (decisions - k), 1e-3)
            root = self._bot(wall).mcts_search(work)
            action = root.best_child().action
            simulations += root.explore_count
            del root  # the tree's memory is freed on MCTS's time, as inside ``step``
            actions.append(action)
            work.apply_action(action)
        if not work.is_terminal() and work.current_player() == player:
            raise MappingError(f"OpenSpiel's turn did not end after {decisions} actions")
        return actions, simulations, time.perf_counter() - started


@dataclass
class GameRecord:
    """One finished game, from master's side."""

    master_seat: int
    result: str
    """``win``, ``draw`` or ``loss`` for master."""
    plies: int
    master_seconds: list[float]
    mcts_seconds: list[float]
    mcts_simulations: list[int]


def apply_both(mapping: GameMapping, ours: Any, os_state: Any, move: Any, actions: list[int], where: str) -> Any:
    """Play one turn on both boards (each checks legality); our new state. ``os_state`` changes in place."""
    try:
        new = GAMES[mapping.game_id].apply(ours, move)
    except IllegalMove as exc:
        raise MappingError(f"{where}: {move} is illegal in our rules: {exc}") from exc
    for action in actions:
        if action not in os_state.legal_actions():
            raise MappingError(f"{where}: action {action} of {move} is illegal in OpenSpiel's rules\n{os_state}")
        os_state.apply_action(action)
    check_agree(mapping, new, os_state, where)
    return new


def play_game(mapping: GameMapping, master: Bot, mcts: Mcts, master_seat: int, budget: TimeBudget) -> GameRecord:
    """One game of master against MCTS, master in ``master_seat`` (seat 0 moves first)."""
    game = GAMES[mapping.game_id]
    ours = game.initial_state()
    os_state = mcts.os_game.new_initial_state()
    check_agree(mapping, ours, os_state, "start")
    master.new_game()
    record = GameRecord(master_seat, "", 0, [], [], [])
    while game.outcome(ours) is None:
        seat = game.to_move(ours)
        if seat == master_seat:
            started = time.perf_counter()
            move = master.choose(ours, budget)
            record.master_seconds.append(time.perf_counter() - started)
            actions = mapping.to_actions(move)
        else:
            actions, simulations, seconds = mcts.turn(os_state, mapping.decisions)
            record.mcts_seconds.append(seconds)
            record.mcts_simulations.append(simulations)
            move = mapping.from_actions(actions)
        record.plies += 1
        ours = apply_both(mapping, ours, os_state, move, actions, f"ply {record.plies} ({game.notation(move)})")
    outcome = game.outcome(ours)
    assert outcome is not None
    record.result = "draw" if outcome.winner is None else "win" if outcome.winner == master_seat else "loss"
    return record


def random_position(mapping: GameMapping, os_game: Any, turns: int, rng: random.Random) -> Any:
    """An OpenSpiel state after ``turns`` turns of uniformly random play that is not over."""
    while True:
        state = os_game.new_initial_state()
        for _ in range(turns * mapping.decisions):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            return state


def calibrate(mapping: GameMapping, mcts: Mcts, seconds: float, rng: random.Random) -> float:
    """Simulations per second of MCTS at the start and in mid-game, printed; their overall rate.

    Each position is searched for one turn of ``seconds`` on the wall clock.
    """
    saved = mcts.seconds, mcts.simulations
    mcts.seconds, mcts.simulations = seconds, None
    print(f"  calibration, {seconds:g} s of MCTS per turn:", flush=True)
    print(f"    {'position':<22} {'simulations':>11} {'seconds':>8} {'sims/s':>9}")
    total_sims, total_seconds = 0, 0.0
    for turns in CALIBRATION_PLIES[mapping.game_id]:
        state = random_position(mapping, mcts.os_game, turns, rng)
        _, sims, spent = mcts.turn(state, mapping.decisions)
        total_sims += sims
        total_seconds += spent
        name = "start" if turns == 0 else f"after {turns} random turns"
        print(f"    {name:<22} {sims:>11} {spent:>8.3f} {sims / spent:>9.0f}", flush=True)
    mcts.seconds, mcts.simulations = saved
    rate = total_sims / total_seconds
    print(f"    {'overall':<22} {total_sims:>11} {total_seconds:>8.3f} {rate:>9.0f}", flush=True)
    return rate


@dataclass
class Summary:
    """The games of one match and their totals."""

    game_id: str
    records: list[GameRecord]

    def count(self, result: str, seat: int | None = None) -> int:
        """Games master finished with ``result`` (in ``seat``, or in either)."""
        return sum(r.result == result and (seat is None or r.master_seat == seat) for r in self.records)

    def wdl(self, seat: int | None = None) -> str:
        """``W-D-L`` of master (in ``seat``, or in either)."""
        return "-".join(str(self.count(x, seat)) for x in ("win", "draw", "loss"))

    @staticmethod
    def mean(values: list[float] | list[int]) -> float:
        """The mean, 0 for no values."""
        return sum(values) / len(values) if values else 0.0

    def row(self) -> list[str]:
        """The table row of this match."""
        games = len(self.records)
        score = (self.count("win") + 0.5 * self.count("draw")) / games if games else 0.0
        low, high = wilson_interval(score, games)
        sims = [s for r in self.records for s in r.mcts_simulations]
        mcts_s = [s for r in self.records for s in r.mcts_seconds]
        master_s = [s for r in self.records for s in r.master_seconds]
        return [
            self.game_id, str(games), str(self.count("win")), str(self.count("draw")), str(self.count("loss")),
            f"{score:.3f}", f"{low:.3f}-{high:.3f}", self.wdl(0), self.wdl(1), f"{self.mean(sims):.0f}",
            f"{self.mean(mcts_s):.3f}", f"{self.mean(master_s):.3f}", f"{max(master_s, default=0.0):.3f}",
        ]


HEADER = ["game", "games", "W", "D", "L", "score", "95% Wilson", "W-D-L 1st", "W-D-L 2nd",
          "MCTS sims/move", "MCTS s/move", "master s/move", "master max s"]
"""Columns of the table; W/D/L are master's; 1st/2nd: master moving first/second."""


def print_table(rows: list[list[str]]) -> None:
    """Print ``rows`` under :data:`HEADER`, columns aligned."""
    widths = [max(len(HEADER[i]), *(len(r[i]) for r in rows)) for i in range(len(HEADER))]
    print("  ".join(h.rjust(w) for h, w in zip(HEADER, widths, strict=True)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


def run_match(pyspiel: Any, game_id: str, args: argparse.Namespace) -> Summary:
    """Calibrate, then play ``args.games`` games of master against MCTS in ``game_id``."""
    mapping = MAPPINGS[game_id]
    seconds = args.time_per_move
    os_game = pyspiel.load_game(mapping.openspiel_name)
    rng = random.Random(args.seed)
    mcts = Mcts(pyspiel, os_game, args.uct_c, args.rollouts, not args.no_solve, rng=rng)
    print(f"\n{game_id} against OpenSpiel {mapping.openspiel_name} ({os_game.get_parameters()}), "
          f"{seconds:g} s per move:", flush=True)
    rate = calibrate(mapping, mcts, seconds, random.Random(args.seed + 7))
    if args.mcts_limit == "time":
        mcts.seconds = seconds
        print(f"  MCTS limit: {seconds:g} s of wall clock per turn (about {rate * seconds:.0f} simulations)")
    else:
        mcts.simulations = max(2, round(rate * seconds / mapping.decisions))
        print(f"  MCTS limit: {mcts.simulations} simulations per search, {mapping.decisions} per turn")
    print(f"  master: TimeBudget(per_move={seconds:g}), thinks at most {seconds - min(0.15, seconds / 4):.3f} s "
          "(its own margin)", flush=True)

    budget = TimeBudget(remaining=None, per_move=seconds, increment=0.0)
    make_bot(game_id, "master", args.seed)  # load or compile its engine before any clock runs
    records: list[GameRecord] = []
    started = time.perf_counter()
    for index in range(args.games):
        master_seat = index % 2
        master = make_bot(game_id, "master", args.seed + index)
        mcts.rng = random.Random(args.seed * 7919 + 1000 + index)
        record = play_game(mapping, master, mcts, master_seat, budget)
        records.append(record)
        summary = Summary(game_id, records)
        print(
            f"{game_id} game {index + 1}/{args.games}: master {'first' if master_seat == 0 else 'second'}, "
            f"{record.plies} plies, master {record.result}; master {Summary.mean(record.master_seconds):.3f} s/move, "
            f"MCTS {Summary.mean(record.mcts_seconds):.3f} s/move, {Summary.mean(record.mcts_simulations):.0f} sims; "
            f"so far W-D-L {summary.wdl()} ({time.perf_counter() - started:.0f} s)",
            file=sys.stderr, flush=True,
        )
    return Summary(game_id, records)


def main(argv: list[str] | None = None) -> int:
    """Parse the options, play the matches and print the table."""
    parser = script_parser(__doc__)
    parser.add_argument("--game", choices=[*MAPPINGS, "all"], default="all")
    parser.add_argument("--games", type=int, default=50, help="games per game kind (default 50)")
    parser.add_argument("--time-per-move", type=float, default=1.0, help="seconds per move for both sides")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--uct-c", type=float, default=2.0, help="MCTS exploration constant (default 2)")
    parser.add_argument("--rollouts", type=int, default=1, help="random rollouts per MCTS evaluation (default 1)")
    parser.add_argument("--mcts-limit", choices=["time", "sims"], default="time",
                        help="limit MCTS by wall clock per turn, or by calibrated simulations (default time)")
    parser.add_argument("--no-solve", action="store_true", help="turn OpenSpiel's MCTS-Solver off")
    args = parser.parse_args(argv)
    if args.games < 1 or args.time_per_move <= 0 or args.rollouts < 1:
        parser.error("--games, --time-per-move and --rollouts must be positive")

    try:
        import pyspiel
    except ImportError:
        print(f"OpenSpiel is not installed (no module pyspiel); install it with: {INSTALL_HINT}", file=sys.stderr)
        return 2
    if args.mcts_limit == "time":
        try:
            game = pyspiel.load_game("tic_tac_toe")
            pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10, 10, True, 0, False,
                            pyspiel.ChildSelectionPolicy.UCT, 1.0)
        except TypeError:
            print("this OpenSpiel's MCTSBot has no max_wall_clock_time; use --mcts-limit sims", file=sys.stderr)
            return 2

    from importlib.metadata import PackageNotFoundError, version

    try:
        os_version = version("open_spiel")
    except PackageNotFoundError:
        os_version = "unknown"
    print(f"OpenSpiel {os_version} MCTSBot: UCT c={args.uct_c:g}, {args.rollouts} random rollout(s) per "
          f"evaluation, solver {'off' if args.no_solve else 'on'}, limit by {args.mcts_limit}; seed {args.seed}")
    games = list(MAPPINGS) if args.game == "all" else [args.game]
    summaries = [run_match(pyspiel, game_id, args) for game_id in games]
    print(f"\nmaster against OpenSpiel MCTS, {args.time_per_move:g} s per move, colours alternated "
          f"(W/D/L are master's; 1st/2nd: master moving first/second):")
    print_table([s.row() for s in summaries])
    return 0


if __name__ == "__main__":
    sys.exit(main())
