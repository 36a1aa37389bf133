"""Santorini, the base game without god powers: 5 by 5 squares, ``a1`` to ``e5``.

Every square has a building level: 0 (ground) to 3, or 4 for a dome. Each
seat has two workers.

Setup
    The first seat (option ``first``, default 0) places both of its workers on
    empty squares in one move, then the other seat places both of its. After
    that the first seat makes the first turn. A placement is written ``"a1 e5"``
    (either order is accepted; it is stored sorted) or ``{"place": [SQ, SQ]}``.

A turn
    Pick one of your workers and move it to an adjacent square (8 directions)
    with no worker and no dome, at most one level higher than where it stands
    (it may step down any number of levels). Then build with that worker on a
    square adjacent to its new square with no worker and no dome; the square it
    just left counts as free. A build raises the level by one; a build on level
    3 is a dome. Written ``"b2-c3/d4"`` (worker, destination, build) or
    ``{"worker": SQ, "to": SQ, "build": SQ}``.

Winning
    A worker that moves *up* from level 2 onto level 3 wins at once. The game
    ends before the build, so **a winning turn has no build**: it is written
    ``"b2-c3"`` or ``{"worker": SQ, "to": SQ, "build": null}`` (the ``build``
    key may be left out), and a winning move that names a build is rejected
    with a reason. Every other turn must name its build. This keeps exactly one
    way to write each winning move, so ``legal_moves`` lists exactly the moves
    ``apply`` accepts. Stepping across from level 3 to level 3, or building
    under nobody, never wins.

    A player who must make a turn and has no legal one loses ("no legal move").
    The block supply is unlimited.

A decoded position (``decode_state``) carries no history, so its result is
inferred: a worker of the seat that just moved (not ``to_move``) standing on
level 3 means that seat won by climbing there, which is the only way it can
happen in play; otherwise the seat to move loses if it has no legal turn.

On the printed board each square shows its level (``0``-``3``, ``D`` for a
dome) followed by ``A`` for a worker of seat 0, ``B`` for one of seat 1, or
``.`` when no worker stands there. ``from_picture`` reads such a board back,
rank 5 first, and also takes a square without its ``.`` (``"0 0 2A D 0"``).
Rank numbers, the file letters and the status line (``"A (seat 0) to move"``)
may be left out; without a status line or ``to_move``, seat 0 moved first and
the placements and builds made (one a turn) say who is next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .base import (
    LEGEND,
    Game,
    Grid,
    IllegalMove,
    Outcome,
    check_coords,
    move_repr,
    shown,
    status_to_move,
)

SIZE = 5
GRID = Grid(SIZE, SIZE)
SQUARES = SIZE * SIZE
DOME = 4
NO_WORKER = -1
WORKER_SYMBOLS = ("A", "B")


def _neighbours(square: int) -> tuple[int, ...]:
    col, row = GRID.col_row(square)
    return tuple(
        GRID.index(col + dc, row + dr)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dc or dr) and GRID.on_board(col + dc, row + dr)
    )


NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(_neighbours(sq) for sq in range(SQUARES))
"""``NEIGHBOURS[sq]``: the squares adjacent to ``sq`` in 8 directions."""

ADJACENT: tuple[frozenset[int], ...] = tuple(frozenset(n) for n in NEIGHBOURS)
"""``ADJACENT[sq]``: the same squares as a set, for quick membership tests."""


class Placement(NamedTuple):
    """A setup move: place both workers, on squares ``first`` < ``second``.

    ``parse_move`` and ``legal_moves`` always give the squares sorted; ``apply``
    also accepts them the other way round.
    """

    first: int
    second: int

    def __str__(self) -> str:
        return f"{GRID.name(self.first)} {GRID.name(self.second)}"

    def __repr__(self) -> str:
        return move_repr(self)


class WorkerTurn(NamedTuple):
    """A turn after the setup: move the worker on ``worker`` to ``to``, then build on ``build``.

    ``build`` is ``None`` for a winning move (up onto level 3), which has no build.
    """

    worker: int
    to: int
    build: int | None = None

    def __str__(self) -> str:
        text = f"{GRID.name(self.worker)}-{GRID.name(self.to)}"
        return text if self.build is None else f"{text}/{GRID.name(self.build)}"

    def __repr__(self) -> str:
        return move_repr(self)


SantoriniMove = Placement | WorkerTurn


@dataclass(frozen=True)
class SantoriniState:
    """A Santorini position.

    ``levels[sq]`` is 0-3 or 4 (dome). ``workers`` holds seat 0's two squares then
    seat 1's two, each pair sorted, ``-1`` for a worker not placed yet.
    """

    levels: tuple[int, ...]
    workers: tuple[int, int, int, int]
    to_move: int
    result: Outcome | None = field(default=None, compare=False)

    def __str__(self) -> str:
        owner = _worker_map(self.workers)
        cells = []
        for sq in range(SQUARES):
            level = "D" if self.levels[sq] == DOME else str(self.levels[sq])
            seat = owner.get(sq)
            cells.append(level + ("." if seat is None else WORKER_SYMBOLS[seat]))
        lines = GRID.render(cells, cell_width=2).splitlines()
        lines.append(f"{LEGEND} the level (0-3, D a dome), then A or B for a worker of seat 0 or 1 (. none)")
        if self.result is not None:
            lines.append(_describe(self.result))
        else:
            who = f"{WORKER_SYMBOLS[self.to_move]} (seat {self.to_move})"
            if self.workers[2 * self.to_move] == NO_WORKER:
                lines.append(f"{who} to place both workers")
            else:
                lines.append(f"{who} to move")
        return "\n".join(lines)


def _describe(result: Outcome) -> str:
    if result.winner is None:
        return f"draw ({result.reason})"
    return f"{WORKER_SYMBOLS[result.winner]} (seat {result.winner}) won: {result.reason}"


def _worker_map(workers: tuple[int, ...]) -> dict[int, int]:
    """Square -> seat for every placed worker."""
    return {sq: i // 2 for i, sq in enumerate(workers) if sq != NO_WORKER}


def _name(square: Any) -> str:
    return GRID.name(square) if isinstance(square, int) and 0 <= square < SQUARES else repr(square)


def _on(*squares: Any) -> tuple[int, ...]:
    """The squares among ``squares`` that are squares: those a reason names, for :meth:`Grid.named_in`."""
    return tuple(sq for sq in squares if isinstance(sq, int) and not isinstance(sq, bool) and 0 <= sq < SQUARES)


def _check_square(square: Any) -> None:
    if isinstance(square, bool) or not isinstance(square, int) or not 0 <= square < SQUARES:
        raise IllegalMove(f"{shown(square)} is not a square; squares run from a1 to e5")


def _has_move(levels: tuple[int, ...], workers: tuple[int, ...], seat: int) -> bool:
    """True when ``seat`` can move a worker (a build then always exists: the square it left)."""
    occupied = set(workers)
    for frm in workers[2 * seat : 2 * seat + 2]:
        limit = levels[frm] + 1
        for to in NEIGHBOURS[frm]:
            if to not in occupied and levels[to] <= limit and levels[to] != DOME:
                return True
    return False


def _check_step(state: SantoriniState, frm: int, to: int) -> None:
    """``IllegalMove`` unless the side to move has a worker on ``frm`` that may step to ``to``."""
    mine = state.workers[2 * state.to_move : 2 * state.to_move + 2]
    if frm not in mine:
        yours = " and ".join(GRID.name(sq) for sq in mine)
        raise IllegalMove(f"{_name(frm)} is not one of your workers (yours are on {yours})", _on(frm, *mine))
    levels = state.levels
    if to == frm:
        raise IllegalMove(f"the worker on {_name(frm)} must move to another square", _on(frm))
    if to not in ADJACENT[frm]:
        raise IllegalMove(f"{_name(to)} is not next to {_name(frm)}", _on(to, frm))
    if to in state.workers:
        raise IllegalMove(f"{_name(to)} is taken by a worker", _on(to))
    if levels[to] == DOME:
        raise IllegalMove(f"{_name(to)} has a dome", _on(to))
    climb = levels[to] - levels[frm]
    if climb > 1:
        amount = "two" if climb == 2 else "three"
        raise IllegalMove(f"{_name(to)} is {amount} levels above {_name(frm)}: a worker climbs at most one level",
                          _on(to, frm))


def _check_build(levels: tuple[int, ...], workers: tuple[int, ...], to: int, build: int) -> None:
    """``IllegalMove`` unless the worker that stepped to ``to`` may build on ``build`` (``workers`` after the step)."""
    if build not in ADJACENT[to]:
        where = "your worker stands there" if build == to else f"it is not next to {_name(to)}"
        raise IllegalMove(f"you cannot build on {_name(build)}: {where}", _on(build, to))
    if build in workers:
        raise IllegalMove(f"you cannot build on {_name(build)}: a worker stands there", _on(build))
    if levels[build] == DOME:
        raise IllegalMove(f"you cannot build on {_name(build)}: it has a dome", _on(build))


_WIN_REASON = "moved up onto level 3"
_NO_MOVE_REASON = "no legal move"


class Santorini(Game[SantoriniState, SantoriniMove]):
    """The rules of Santorini (base game, no god powers)."""

    id = "santorini"
    name = "Santorini"
    grid = GRID
    options_help = {"first": "seat (0 or 1) that places its workers first and moves first; default 0"}
    _MOVE_TYPES = (Placement, WorkerTurn)

    def _starting_position(self, first: int) -> SantoriniState:
        """The empty board, no workers placed."""
        return SantoriniState((0,) * SQUARES, (NO_WORKER,) * 4, first)

    def to_move(self, state: SantoriniState) -> int:
        """Seat to place or move next."""
        return state.to_move

    def legal_moves(self, state: SantoriniState) -> list[SantoriniMove]:
        """All placements during setup, else every turn; empty once the game is over."""
        if state.result is not None:
            return []
        seat = state.to_move
        workers = state.workers
        if workers[2 * seat] == NO_WORKER:
            free = [sq for sq in range(SQUARES) if sq not in workers and state.levels[sq] != DOME]
            return [Placement(a, b) for i, a in enumerate(free) for b in free[i + 1 :]]
        levels = state.levels
        moves: list[SantoriniMove] = []
        for frm in workers[2 * seat : 2 * seat + 2]:
            others = set(workers)
            others.discard(frm)
            limit = levels[frm] + 1
            for to in NEIGHBOURS[frm]:
                height = levels[to]
                if to in others or height > limit or height == DOME:
                    continue
                if height == 3 and levels[frm] == 2:
                    moves.append(WorkerTurn(frm, to, None))
                    continue
                for build in NEIGHBOURS[to]:
                    if build not in others and levels[build] != DOME:
                        moves.append(WorkerTurn(frm, to, build))
        return moves

    def apply(self, state: SantoriniState, move: SantoriniMove) -> SantoriniState:
        """Place the workers or play a turn; ``IllegalMove`` with the reason otherwise."""
        if state.result is not None:
            raise IllegalMove("the game is over")
        if isinstance(move, Placement):
            return self._place(state, move)
        if isinstance(move, WorkerTurn):
            return self._worker_turn(state, move)
        if isinstance(move, str):  # notation text, handy at a prompt: parsed (with its reasons), then applied
            return self.apply(state, self.parse_move(move, state))
        raise IllegalMove(f"{shown(move)} is not a Santorini move; place workers ('a1 e5') or move ('b2-c3/d4')")

    def _place(self, state: SantoriniState, move: Placement) -> SantoriniState:
        seat = state.to_move
        if state.workers[2 * seat] != NO_WORKER:
            raise IllegalMove("your workers are already placed: move one and build ('b2-c3/d4')")
        first, second = move
        _check_square(first)
        _check_square(second)
        if first == second:
            raise IllegalMove(f"both workers cannot stand on {_name(first)}: place them on two squares", _on(first))
        for sq in (first, second):
            if sq in state.workers:
                raise IllegalMove(f"{_name(sq)} is taken by a worker", _on(sq))
            if state.levels[sq] == DOME:
                raise IllegalMove(f"{_name(sq)} has a dome", _on(sq))
        pair = (min(first, second), max(first, second))
        workers = state.workers[:2] + pair if seat else pair + state.workers[2:]
        result = None
        if NO_WORKER not in workers and not _has_move(state.levels, workers, 1 - seat):
            result = Outcome(seat, _NO_MOVE_REASON)  # only in a decoded position with domes
        return SantoriniState(state.levels, workers, 1 - seat, result)

    def _worker_turn(self, state: SantoriniState, move: WorkerTurn) -> SantoriniState:
        seat = state.to_move
        workers = state.workers
        if NO_WORKER in workers:
            raise IllegalMove("you must place both workers first (e.g. 'b2 d4')")
        frm, to, build = move
        for sq in (frm, to) if build is None else (frm, to, build):
            _check_square(sq)
        _check_step(state, frm, to)
        levels = state.levels
        moved = tuple(to if sq == frm else sq for sq in workers)
        pair = moved[2 * seat : 2 * seat + 2]
        if pair[0] > pair[1]:
            pair = (pair[1], pair[0])
        new_workers = moved[:2] + pair if seat else pair + moved[2:]
        if levels[frm] == 2 and levels[to] == 3:
            if build is not None:
                raise IllegalMove(
                    f"moving up onto {_name(to)} wins at once, so there is no build: write {_name(frm)}-{_name(to)}"
                )
            return SantoriniState(levels, new_workers, 1 - seat, Outcome(seat, _WIN_REASON))
        if build is None:
            raise IllegalMove(f"after moving you must build: write {_name(frm)}-{_name(to)}/SQUARE")
        _check_build(levels, new_workers, to, build)
        new_levels = levels[:build] + (levels[build] + 1,) + levels[build + 1 :]
        result = None
        if not _has_move(new_levels, new_workers, 1 - seat):
            result = Outcome(seat, _NO_MOVE_REASON)
        return SantoriniState(new_levels, new_workers, 1 - seat, result)

    def outcome(self, state: SantoriniState) -> Outcome | None:
        """Winner and reason, or ``None`` while the game runs."""
        return state.result

    def notation(self, move: SantoriniMove) -> str:
        """``"a1 e5"`` for a placement, ``"b2-c3/d4"`` for a turn, ``"b2-c3"`` for a winning turn."""
        return str(move)

    def format_move(self, move: SantoriniMove, coords: str = "algebraic") -> dict[str, Any]:
        """``{"place": [SQ, SQ]}`` or ``{"worker": SQ, "to": SQ, "build": SQ or None}``."""
        check_coords(coords)
        if isinstance(move, Placement):
            return {"place": [GRID.format(move.first, coords), GRID.format(move.second, coords)]}
        build = None if move.build is None else GRID.format(move.build, coords)
        return {"worker": GRID.format(move.worker, coords), "to": GRID.format(move.to, coords), "build": build}

    _SQUARE_NAME = re.compile(r"^[a-z][0-9]+$", re.I)
    _TEXT_TURN = re.compile(r"^\s*([a-z][0-9]+)\s*-\s*([a-z][0-9]+)\s*(?:/\s*([a-z][0-9]+))?\s*$", re.I)

    def parse_move(self, obj: Any, state: SantoriniState, coords: str = "algebraic") -> SantoriniMove:
        """A move from notation (``"a1 e5"``, ``"b2-c3/d4"``, ``"b2-c3"``) or its structured form."""
        check_coords(coords)
        if self.is_move(obj):
            return obj
        if isinstance(obj, str):
            m = self._TEXT_TURN.match(obj)
            if m:
                build = None if m.group(3) is None else GRID.parse_name(m.group(3))
                return WorkerTurn(GRID.parse_name(m.group(1)), GRID.parse_name(m.group(2)), build)
            parts = obj.replace(",", " ").split()
            if len(parts) == 2 and "-" not in obj and "/" not in obj:
                return _placement(GRID.parse_name(parts[0]), GRID.parse_name(parts[1]))
            if len(parts) == 3 and all(self._SQUARE_NAME.match(p) for p in parts):
                worker, to, build = parts
                raise IllegalMove(f"{shown(obj)} names three squares without saying what each is: a turn moves a "
                                  f"worker and then builds, written worker-destination/build: '{worker}-{to}/{build}'")
            raise IllegalMove(
                f"{shown(obj)} is not a Santorini move; place workers as 'a1 e5' or move and build as 'b2-c3/d4'"
            )
        if isinstance(obj, dict):
            keys = set(obj)
            if keys == {"place"}:
                squares = obj["place"]
                if not isinstance(squares, list) or len(squares) != 2:
                    raise IllegalMove('a placement is {"place": [SQUARE, SQUARE]}')
                return _placement(GRID.parse(squares[0], coords), GRID.parse(squares[1], coords))
            if keys in ({"worker", "to"}, {"worker", "to", "build"}):
                worker = GRID.parse(obj["worker"], coords)
                to = GRID.parse(obj["to"], coords)
                build = obj.get("build")
                return WorkerTurn(worker, to, None if build is None else GRID.parse(build, coords))
        raise IllegalMove(
            f"{obj!r} is not a Santorini move; send notation text, "
            '{"place": [SQUARE, SQUARE]} or {"worker": SQUARE, "to": SQUARE, "build": SQUARE}'
        )

    def encode_state(self, state: SantoriniState, coords: str = "algebraic") -> dict[str, Any]:
        """``{"levels": rows, "workers": rows, "to_move": seat}``.

        ``levels`` cells are 0-3, 4 for a dome; ``workers`` cells are 0 (none),
        1 (seat 0) or 2 (seat 1). Rows follow ``coords`` (see ``Grid.rows_for``).
        """
        owner = _worker_map(state.workers)
        cells = tuple(owner[sq] + 1 if sq in owner else 0 for sq in range(SQUARES))
        return {
            "levels": GRID.rows_for(state.levels, coords),
            "workers": GRID.rows_for(cells, coords),
            "to_move": state.to_move,
        }

    def decode_state(self, obj: Any, coords: str = "algebraic") -> SantoriniState:
        """Rebuild a state from ``encode_state``; ``ValueError`` if it is not a position.

        The result is inferred (see the module documentation).
        """
        if not isinstance(obj, dict) or not {"levels", "workers", "to_move"} <= set(obj):
            raise ValueError("a Santorini state is an object with levels, workers and to_move")
        levels = GRID.cells_from(obj["levels"], coords)
        if any(isinstance(v, bool) or v not in (0, 1, 2, 3, 4) for v in levels):
            raise ValueError("Santorini levels are 0-3, or 4 for a dome")
        cells = GRID.cells_from(obj["workers"], coords)
        if any(isinstance(v, bool) or v not in (0, 1, 2) for v in cells):
            raise ValueError("Santorini worker cells are 0 (none), 1 (seat 0) or 2 (seat 1)")
        to_move = obj["to_move"]
        if isinstance(to_move, bool) or to_move not in (0, 1):
            raise ValueError("to_move must be 0 or 1")
        workers = _decoded_workers(cells, levels, to_move)
        placed = [workers[2 * seat] != NO_WORKER for seat in (0, 1)]
        result = None
        if all(placed):
            mover = 1 - to_move
            if any(levels[sq] == 3 for sq in workers[2 * mover : 2 * mover + 2]):
                result = Outcome(mover, _WIN_REASON)
            elif not _has_move(levels, workers, to_move):
                result = Outcome(mover, _NO_MOVE_REASON)
        return SantoriniState(levels, (workers[0], workers[1], workers[2], workers[3]), to_move, result)

    def from_picture(self, text: str, to_move: int | None = None) -> SantoriniState:
        """A position from a picture of its board, as the state prints it (see the module notes)."""
        squares, status = GRID.read_picture(text, _read_square)
        levels = tuple(level for level, _ in squares)
        workers = tuple(worker for _, worker in squares)
        if to_move is None:
            to_move = status_to_move(status)
        if to_move is None:
            placements = sum(1 for seat in (1, 2) if seat in workers)
            to_move = (placements + sum(levels)) % 2
        return self.decode_state(
            {"levels": GRID.rows_for(levels), "workers": GRID.rows_for(workers), "to_move": to_move}
        )



def _decoded_workers(cells: tuple[int, ...], levels: tuple[int, ...], to_move: int) -> list[int]:
    """The four workers' squares of a decoded board (``NO_WORKER`` for a seat that has not placed); ``ValueError``
    when they cannot be a position's."""
    workers: list[int] = []
    for seat in (0, 1):
        squares = [sq for sq in range(SQUARES) if cells[sq] == seat + 1]
        if len(squares) not in (0, 2):
            raise ValueError(f"seat {seat} must have two workers on the board, or none before setup")
        workers.extend(squares or [NO_WORKER, NO_WORKER])
    if any(sq != NO_WORKER and levels[sq] == DOME for sq in workers):
        raise ValueError("a worker cannot stand on a dome")
    placed = [workers[2 * seat] != NO_WORKER for seat in (0, 1)]
    if not all(placed) and any(levels):
        raise ValueError("nothing is built before both seats have placed their workers: a board with buildings "
                         "has all four workers on it")
    if placed[to_move] and not placed[1 - to_move]:
        raise ValueError(f"seat {1 - to_move} must place its workers before seat {to_move} moves")
    return workers


_SQUARE_PICTURE = re.compile(r"^([0-3D])([.AB]?)$")


def _read_square(text: str) -> tuple[int, int]:
    """``(level, worker)`` of a pictured square; ``worker`` as in ``encode_state`` (0 none, 1 seat 0, 2 seat 1)."""
    found = _SQUARE_PICTURE.match(text)
    if found is None:
        raise ValueError(f"{text!r} is not a square; write its level (0-3, or D for a dome), "
                         "then A or B for a worker of seat 0 or 1 (or . or nothing for none)")
    level = DOME if found.group(1) == "D" else int(found.group(1))
    return level, ".AB".index(found.group(2) or ".")


def _placement(a: int, b: int) -> Placement:
    return Placement(min(a, b), max(a, b))


SANTORINI = Santorini()
"""The Santorini rules object registered as ``"santorini"``."""
