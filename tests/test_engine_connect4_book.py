"""Connect Four's opening book: its keys, its generator (resumable), its values against the solver, and its use.

The real book (every position of up to 8 stones) takes hours of solving; these tests make small books of the
positions a few stones after a fixed opening, where every value is quick to check against the solver.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from bots.analysis import Analyser
from bots.engine.connect4 import book as book_module
from bots.engine.connect4.book import Book, book_key, build, generate, layer, mirror, read_layer, write_book
from bots.engine.connect4.master import Connect4Master
from bots.engine.connect4.position import CELLS, from_moves, has_four
from bots.engine.connect4.solver import SolverTables, new_solver_tables, solve
from protocol.games import GAMES
from tests.helpers import child_pids, poll_until

GAME = GAMES["connect4"]
OPENING = "1234567123"
"""The small books start here (ten stones); their deepest layer is three stones further on."""
PLIES = 13


@pytest.fixture(scope="module")
def solver_tables() -> SolverTables:
    return new_solver_tables()


@pytest.fixture(scope="module")
def small_book(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, int]]:
    work = tmp_path_factory.mktemp("book")
    start = from_moves(OPENING)
    assert generate(PLIES, work, jobs=2, start=start) == 0
    return work, build(PLIES, read_layer(PLIES, work), start)


def exact(moves: str, tables: SolverTables) -> int:
    position, mask, stones = from_moves(moves)
    score, solved = solve(np.uint64(position), np.uint64(mask), stones, tables, np.inf)
    assert solved
    return int(score)


def test_a_position_and_its_mirror_image_share_a_key() -> None:
    for moves in ("1", "12", "4415", "3321766"):
        mirrored = "".join(str(8 - int(c)) for c in moves)
        a, b = from_moves(moves)[:2], from_moves(mirrored)[:2]
        assert book_key(*a) == book_key(*b)
        assert mirror(mirror(a[1])) == a[1]
    assert book_key(*from_moves("1")[:2]) != book_key(*from_moves("2")[:2])


def test_layers_count_the_positions_up_to_mirror_images() -> None:
    # 7 first stones are 4 up to mirroring, 49 two-stone positions 25; won positions are never in a layer
    assert [len(layer(n)) for n in range(4)] == [1, 4, 25, 121]
    start = from_moves("1212123")  # the second player, to move, wins in column 2: that position is in no layer
    assert len(layer(8, start)) == 6
    for position, mask in layer(8, start):
        assert not has_four(np.uint64(position)) and not has_four(np.uint64(position ^ mask))


def test_every_value_of_a_small_book_is_the_solvers(small_book: tuple[Path, dict[int, int]],
                                                    solver_tables: SolverTables) -> None:
    _, values = small_book
    checked: set[int] = set()

    def walk(moves: str) -> None:
        position, mask, _ = from_moves(moves)
        key = book_key(position, mask)
        if key in checked:
            return
        assert values[key] == exact(moves, solver_tables), moves
        checked.add(key)
        if len(moves) == PLIES:
            return
        for column in "1234567":
            try:
                from_moves(moves + column)
            except ValueError:
                continue  # full, or won by that stone
            walk(moves + column)

    walk(OPENING)
    assert checked == set(values)


def test_generation_goes_on_where_it_was_stopped(small_book: tuple[Path, dict[int, int]], tmp_path: Path,
                                                 capfd: pytest.CaptureFixture[str]) -> None:
    work, _ = small_book
    solved = read_layer(PLIES, work)
    # a generation killed half way: half the lines, the last one cut short
    lines = [f"{key} {score}" for key, score in list(solved.items())[: len(solved) // 2]]
    (tmp_path / f"layer{PLIES}.0.txt").write_text("\n".join(lines) + "\n" + lines[-1][:5])
    start = from_moves(OPENING)
    with pytest.raises(ValueError, match="not complete"):
        build(PLIES, read_layer(PLIES, tmp_path), start)
    assert generate(PLIES, tmp_path, jobs=1, start=start) == 0
    assert read_layer(PLIES, tmp_path) == solved
    total = len(layer(PLIES, start))
    err = capfd.readouterr().err  # the progress line counts what the killed run had done, and ends at 0 left
    assert f"{len(lines)} solved already" in err and f"job 0: {total} of {total} solved" in err
    assert err.rstrip().endswith("about 0s left")


def test_the_book_gives_proven_optimal_moves(small_book: tuple[Path, dict[int, int]], tmp_path: Path,
                                             solver_tables: SolverTables, monkeypatch: pytest.MonkeyPatch) -> None:
    _, values = small_book
    path = tmp_path / "book.npz"
    write_book(values, path)
    loaded = Book.load(path)
    rng = random.Random(3)
    for _ in range(12):  # positions between the opening and the book's last layer
        moves = OPENING
        for _ in range(rng.randrange(PLIES - len(OPENING))):
            options = [c for c in "1234567" if _legal(moves + c)]
            moves += rng.choice(options)
        position, mask, stones = from_moves(moves)
        assert loaded.score(position, mask) == exact(moves, solver_tables)
        column, score = loaded.best_move(position, mask, stones)
        assert score == exact(moves, solver_tables)
        child = moves + str(column + 1)
        won = not _legal(child)  # the move wins at once
        assert score == ((CELLS + 1 - stones) // 2 if won else -exact(child, solver_tables)), moves
    position, mask, stones = from_moves(OPENING + "444")  # the last layer: the book lacks the positions after
    assert loaded.score(position, mask) is not None and loaded.best_move(position, mask, stones) is None

    # master plays the book's move, and says so
    monkeypatch.setattr("bots.engine.connect4.master.shipped_book", lambda: loaded)
    master = Connect4Master("connect4", "master", seed=1)
    state = GAME.start(*OPENING)
    move = master.choose(state)
    assert master.stats()["book"] and master.stats()["score"] == exact(OPENING, solver_tables)
    assert -exact(OPENING + str(move.column + 1), solver_tables) == exact(OPENING, solver_tables)


def test_the_analysis_reads_exact_values_off_the_book(small_book: tuple[Path, dict[int, int]], tmp_path: Path,
                                                     solver_tables: SolverTables,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _, values = small_book
    state = GAME.start(*OPENING)
    score = exact(OPENING, solver_tables)
    assert score > 0  # the side to move wins: the analysis must say so, and when
    without = Analyser("connect4", nodes=1000).value(state)  # too small a budget for the solver this early
    assert not without.exact
    write_book(values, tmp_path / "book.npz")
    loaded = Book.load(tmp_path / "book.npz")
    monkeypatch.setattr("bots.engine.connect4.book.shipped_book", lambda: loaded)
    value = Analyser("connect4", nodes=1000).value(state)
    assert value.exact and value.outcome == "win" and value.score == score
    assert -exact(OPENING + str(value.best.column + 1), solver_tables) == score


def test_the_shipped_book_agrees_with_the_solver(solver_tables: SolverTables) -> None:
    """The book the package ships (once its generation is done), on a sample of its deepest positions."""
    shipped = book_module.shipped_book()
    if shipped is None:
        pytest.skip(f"no book at {book_module.BOOK_FILE} (see docs/ENGINES.md: its generation is under way)")
    rng = random.Random(5)
    for _ in range(8):
        moves = ""
        while len(moves) < 8:
            options = [c for c in "1234567" if _legal(moves + c)]
            moves += rng.choice(options)
        position, mask, _ = from_moves(moves)
        assert shipped.score(position, mask) == exact(moves, solver_tables), moves


def _legal(moves: str) -> bool:
    try:
        from_moves(moves)
    except ValueError:
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


def test_a_killed_generation_stops_its_workers(tmp_path: Path) -> None:
    """``kill`` (SIGTERM) on the generate command ends its worker processes too, instead of leaving them
    solving on their own (they used to go on, orphaned, after the command was gone)."""
    import os
    import signal
    import subprocess
    import sys

    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    # two jobs on the 5-stone layer after "44": positions that take seconds each, so it is still running
    command = subprocess.Popen([sys.executable, "-m", "bots.engine.connect4.book", "generate", "--plies", "5",
                                "--from", "44", "--work", str(tmp_path), "--jobs", "2"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        workers: set[int] = set()

        def started() -> bool:
            workers.clear()
            workers.update(child_pids(command.pid))
            return len(workers) >= 3 or command.poll() is not None

        poll_until(started, timeout=60)  # for the pool (and multiprocessing's resource tracker) to start
        assert command.poll() is None and len(workers) >= 3, "the generation did not start its workers"
        command.send_signal(signal.SIGTERM)
        assert command.wait(timeout=60) != 0
        poll_until(lambda: not any(_alive(pid) for pid in workers), timeout=30)
        assert not [pid for pid in workers if _alive(pid)], "workers outlived the generate command"
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
        for pid in workers:  # a failed run stops what it started all the same
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
