"""Plyhall's bots: one interface (:class:`Bot`), levels from random to minimax.

>>> from bots import make_bot
>>> from protocol.games import GAMES
>>> bot = make_bot("connect4", "minimax-4", seed=1)
>>> move = bot.choose(GAMES["connect4"].initial_state())

A level is named by a short string:

``random``     a uniformly random legal move;
``novice``     wins at once when it can, avoids handing the opponent a win at once;
``minimax-N``  plain alpha-beta minimax to depth N plies (N = 1..8) with a simple
               evaluation per game (see ``bots/evaluate/``);
``master``     the compiled engines of ``bots/engine/`` on one shared search.

A bot is rebuilt anywhere from ``(game_id, level, seed)`` with :func:`make_bot`,
which is how the SDK's runner and local matches create one in a worker process.
"""

from __future__ import annotations

import importlib

from protocol.games import GAMES

from .base import Bot, TimeBudget

MAX_MINIMAX_DEPTH = 8
"""The deepest ``minimax-N`` level (pure Python: depth 8 is already slow in most games)."""

LEVELS: dict[str, str] = {
    "random": "a uniformly random legal move",
    "novice": "wins at once when it can, else avoids moves that let the opponent win at once, else random",
    "minimax-N": f"alpha-beta minimax to N plies (N = 1..{MAX_MINIMAX_DEPTH}) with a simple evaluation",
    "master": "the strongest: a compiled (numba) search with per-game evaluation, solving endgames exactly",
}
"""Level name (``minimax-N`` stands for all depths) -> what that level plays like."""

LEVELS_HELP = f"random, novice, minimax-N (N = 1..{MAX_MINIMAX_DEPTH}), master"
"""The accepted level names in one line, for error messages and ``--help``."""


MASTERS: dict[str, tuple[str, str]] = {
    "connect4": ("connect4.master", "Connect4Master"),
    "santorini": ("santorini.master", "SantoriniMaster"),
    "amazons": ("amazons.master", "AmazonsMaster"),
    "magnetic-cave": ("magnetic_cave.master", "MagneticCaveMaster"),
    "quarto": ("quarto.master", "QuartoMaster"),
}
"""Game id -> (module in ``bots.engine``, class) of its ``master`` engine, imported on demand."""


class BotConfigError(ValueError):
    """An unknown game or level asked of :func:`make_bot`; the message lists what is accepted."""


def parse_level(level: str) -> tuple[str, int | None]:
    """Split a level name into its kind and depth: ``"minimax-3"`` -> ``("minimax", 3)``.

    ``random`` and ``novice`` have no depth (``None``). Raises :class:`BotConfigError`
    naming the accepted levels for anything else.
    """
    text = level.strip().lower() if isinstance(level, str) else level
    if text in ("random", "novice", "master"):
        return text, None
    if isinstance(text, str) and text.startswith("minimax-"):
        digits = text[len("minimax-") :]
        if digits.isdigit() and 1 <= int(digits) <= MAX_MINIMAX_DEPTH:
            return "minimax", int(digits)
    raise BotConfigError(f"unknown level {level!r}; levels: {LEVELS_HELP}")


def check_game(game_id: str) -> str:
    """Return ``game_id`` if a game of that id exists, else raise :class:`BotConfigError`."""
    if not isinstance(game_id, str) or game_id not in GAMES:
        raise BotConfigError(f"unknown game {game_id!r}; games: {', '.join(GAMES)}")
    return game_id


def make_bot(game_id: str, level: str, seed: int | None = None) -> Bot:
    """A bot for ``game_id`` playing at ``level``; ``seed`` makes its random choices reproducible.

    Raises :class:`BotConfigError` (a ``ValueError``) for an unknown game or
    level, listing the accepted ones.
    """
    check_game(game_id)
    kind, depth = parse_level(level)
    name = kind if depth is None else f"{kind}-{depth}"
    if kind == "random":
        from .simple import RandomBot

        return RandomBot(game_id, name, seed)
    if kind == "novice":
        from .simple import NoviceBot

        return NoviceBot(game_id, name, seed)
    if kind == "master":
        module_name, class_name = MASTERS[game_id]
        module = importlib.import_module(f".engine.{module_name}", __name__)
        return getattr(module, class_name)(game_id, name, seed)
    from .minimax import MinimaxBot

    assert depth is not None
    return MinimaxBot(game_id, name, depth, seed)


__all__ = [
    "LEVELS",
    "LEVELS_HELP",
    "MAX_MINIMAX_DEPTH",
    "Bot",
    "BotConfigError",
    "TimeBudget",
    "check_game",
    "make_bot",
    "parse_level",
]
