"""``plyhall analyse``: the master engines' verdict on every move of recorded games, in the terminal.

It reads games from a database (one by ``--id``, or every game of ``--tournament``), uses an analysis the
server stored already (unless ``--fresh`` or another ``--nodes`` is asked for), and otherwise analyses the
game in a worker process (``server.io.analysis.Worker``, as the server does). It prints the annotated move
list, or with ``--json`` one JSON object a game (``{"id": ..., "analysis": ...}``, the form
``/api/games/ID/analysis`` and ``plyhall export`` give).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from plyhall.database import NoSuchTournament, add_db_option, open_database, tournament_id
from protocol.wording import counted, without_password

LABEL_MARKS = {"blunder": "??", "mistake": "?", "inaccuracy": "?!", "best": "", "good": ""}


def register(subparsers: Any) -> None:
    """Add the ``analyse`` subcommand."""
    parser = subparsers.add_parser(
        "analyse", help="the master engine's verdict on every move of recorded games",
        description="Analyse recorded games with the master engines: every position's value, the best move, and "
                    "each move labelled best, inaccuracy (?!), mistake (?) or blunder (??); exact where the engine "
                    "is (Connect Four's solver, proven wins and losses, Quarto's endgame). Reproducible: a fixed "
                    "node budget, never the clock.")
    add_db_option(parser)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", dest="game_id", help="the game's id (as in /api/games)")
    which.add_argument("--tournament", help="every game of this tournament (its id or its name)")
    parser.add_argument("--json", action="store_true", help="write JSON, one object a game, instead of the move list")
    parser.add_argument("--nodes", type=int, help="search nodes per position (default: each game's own budget)")
    parser.add_argument("--fresh", action="store_true", help="analyse again even when the server stored an analysis")
    parser.set_defaults(func=run_analyse)


def run_analyse(args: argparse.Namespace) -> int:
    """Analyse (or read) the games and print them."""
    if args.nodes is not None and not 1000 <= args.nodes <= 10**9:
        print("plyhall analyse: --nodes must be 1000 to 1000000000", file=sys.stderr)
        return 2
    storage = open_database(args.db, "analyse")
    if storage is None:
        return 1
    try:
        games = _games(storage, args)
        if isinstance(games, str):
            print(f"plyhall analyse: {games}", file=sys.stderr)
            return 1
        stored = {g["id"]: storage.get_analysis(g["id"]) for g in games}
    finally:
        storage.close()
    return asyncio.run(_analyse_all(games, stored, args))


def _games(storage: Any, args: argparse.Namespace) -> list[dict[str, Any]] | str:
    """The finished games asked for, or what is wrong."""
    if args.game_id is not None:
        record = storage.get_game(args.game_id)
        if record is None:
            return f"no game with id {args.game_id} in {without_password(args.db)}"
        if record["status"] == "running":
            return f"game {args.game_id} is still running: it can be analysed once it has ended"
        if not record["moves"]:
            return f"game {args.game_id} has no moves ({record['status']}): there is nothing to analyse"
        return [record]
    try:
        key = tournament_id(storage, args.tournament, args.db)
    except NoSuchTournament as exc:  # (games kept of a tournament the database no longer lists are still found)
        key = args.tournament
        games = list(storage.iter_games(tournament=key))
        if not games:
            return str(exc)
    else:
        games = list(storage.iter_games(tournament=key))
    if not games:
        return f"the tournament {key} has no finished games in {without_password(args.db)} yet"
    played = [g for g in games if g["moves"]]
    if len(played) < len(games):
        print(f"plyhall analyse: {len(games) - len(played)} of the tournament's {len(games)} games have no moves "
              "(forfeits, aborted games): left out", file=sys.stderr)
    return played or f"none of the tournament {key}'s games in {without_password(args.db)} has a move to analyse"


async def _analyse_all(games: list[dict[str, Any]], stored: dict[str, Any], args: argparse.Namespace) -> int:
    from server.io.analysis import WORKER, Worker

    worker = Worker(WORKER)
    try:
        for number, record in enumerate(games, 1):
            analysis = stored.get(record["id"])
            if analysis is None or args.fresh or (args.nodes is not None and analysis.get("nodes") != args.nodes):
                analysis = await _analyse(worker, record, args.nodes, f"{number}/{len(games)}")
            if args.json:
                print(json.dumps({"id": record["id"], "analysis": analysis}, separators=(",", ":")), flush=True)
            else:
                print(annotated(record, analysis), flush=True)
    except RuntimeError as exc:
        print(f"plyhall analyse: {exc}", file=sys.stderr)
        return 1
    finally:
        await worker.close()
    return 0


async def _analyse(worker: Any, record: dict[str, Any], nodes: int | None, which: str) -> dict[str, Any]:
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            print(f"\ranalysing game {which} ({record['game']}, {record['id']}): position {done} of {total}",
                  end="", file=sys.stderr, flush=True)

    print(f"analysing game {which} ({record['game']}, {record['id']}, {counted(len(record['moves']), 'move')})…",
          file=sys.stderr, flush=True)
    request = {"id": record["id"], "game": record["game"], "options": record.get("options") or {},
               "moves": [m["move"] for m in record["moves"]], "nodes": nodes}
    analysis = await worker.analyse(request, progress)
    if tty:
        print(file=sys.stderr)
    return analysis


def describe_value(value: float, outcome: str | None, plies: int | None) -> str:
    """A value in words: ``win in 7``, ``draw``, ``loss in 4`` when exact (an outcome), else the expected score."""
    if outcome == "draw":
        return "draw"
    if outcome:
        return outcome + (f" in {plies}" if plies else "")
    return f"{value:.2f}"


def annotated(record: dict[str, Any], analysis: dict[str, Any]) -> str:
    """The annotated move list of one game, with each player's accuracy and counts."""
    from bots.analysis import budget_words  # (numpy: imported only once a game is shown)

    players = record["players"]
    winner = "a draw" if record["winner"] is None else f"won by {players[record['winner']]}"
    lines = [f"{record['game']} game {record['id']}: {players[0]} vs {players[1]}, {winner} ({record['reason']}), "
             f"{counted(len(record['moves']), 'move')}; master, {budget_words(record['game'], analysis['nodes'])}",
             f"{'ply':>4}  {'player':<16} {'move':<12} {'best':<12} {'before':>11}  {'after':>11}  verdict"]
    for v in analysis["moves"]:
        before = describe_value(v["before"], v["outcome_before"], v["plies_before"])
        after = describe_value(v["after"], v["outcome_after"], v["plies_after"])
        text = v["label"] + (" (only move)" if v.get("only") else "")
        lines.append(f"{v['ply']:>4}  {players[v['seat']]:<16} {v['move'] + LABEL_MARKS.get(v['label'], ''):<12} "
                     f"{v['best'] or '':<12} {before:>11}  {after:>11}  {text}")
    for seat in (0, 1):
        s = analysis["summary"][str(seat)]
        accuracy = "-" if s["accuracy"] is None else f"{s['accuracy']:.1f}%"
        counts = ", ".join(counted(s[key], word) for key, word in (("blunders", "blunder"), ("mistakes", "mistake"),
                                                                   ("inaccuracies", "inaccuracy")))
        lines.append(f"{players[seat]}: accuracy {accuracy}, {counts}")
    return "\n".join(lines)


