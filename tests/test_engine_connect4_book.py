"""Connect Four's openings: our reader of the field's 12-stone book against the package's reference reader and
our own solver, the opening table made in the cache directory, and the moves and values read off them.

The table is made once a run in the run's temporary cache (``XDG_CACHE_HOME``, set by tests/conftest.py).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from bitbully_databases import BitBullyDatabases

from bots.base import TimeBudget
from bots.engine.connect4 import book as book_module
from bots.engine.connect4.book import Book, book_key, layer, mirror, opening_move, opening_table, table_path
from bots.engine.connect4.fieldbook import (
    BOOK_STONES,
    NOT_IN_BOOK,
    field_book,
    field_score,
    huffman_code,
    parent_bound,
    read_field_book,
)
from bots.engine.connect4.master import Connect4Master
from bots.engine.connect4.position import CELLS, HEIGHT, WIDTH, from_moves, has_four, playable, winning_squares
from bots.engine.connect4.solver import SolverTables, held_floor, new_solver_tables, solve, solve_column
from protocol.games import GAMES

GAME = GAMES["connect4"]


@pytest.fixture(scope="module")
def plain_solver() -> SolverTables:
    """The solver alone: every position searched to the end."""
    return new_solver_tables()


@pytest.fixture(scope="module")
def book_solver() -> SolverTables:
    """The solver over the field's book."""
    return new_solver_tables(book=field_book())


def exact(moves: str, tables: SolverTables) -> int:
    position, mask, stones = from_moves(moves)
    score, solved = solve(np.uint64(position), np.uint64(mask), stones, tables, np.inf)
    assert solved
    return int(score)


def random_moves(rng: random.Random, stones: int, can_win_at_once: bool | None = False) -> str:
    """A random game of ``stones`` stones no one has won (by default one where the side to move cannot win at
    once: the positions the field's book holds)."""
    while True:
        moves = ""
        while len(moves) < stones:
            options = [c for c in "1234567" if _legal(moves + c)]
            if not options:
                break
            moves += rng.choice(options)
        if len(moves) < stones:
            continue
        position, mask, _ = from_moves(moves)
        wins = bool(playable(np.uint64(mask)) & winning_squares(np.uint64(position), np.uint64(mask)))
        if can_win_at_once is None or wins == can_win_at_once:
            return moves


def reference_board(moves: str) -> list[list[int]]:
    """The board as bitbully-databases' reader takes it: rows top to bottom, 1 the first player, 2 the second."""
    board = [[0] * WIDTH for _ in range(HEIGHT)]
    heights = [0] * WIDTH
    for index, char in enumerate(moves):
        column = int(char) - 1
        board[HEIGHT - 1 - heights[column]][column] = 1 + index % 2
        heights[column] += 1
    return board


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
    for position, mask in layer(7):
        assert not has_four(np.uint64(position)) and not has_four(np.uint64(position ^ mask))


def test_our_reader_codes_and_finds_positions_as_the_packages_reference_reader() -> None:
    book = field_book()
    assert len(book.keys) == 4_200_899 and book.keys.dtype == np.int32 and book.values.dtype == np.int8
    rng = random.Random(11)
    for _ in range(200):
        moves = random_moves(rng, BOOK_STONES)
        position, mask, _ = from_moves(moves)  # twelve stones: the first player is to move, ``position`` its stones
        board = reference_board(moves)
        for mirrored, reference in ((False, board), (True, BitBullyDatabases._mirror_horiz(board))):
            code = huffman_code(np.uint64(position), np.uint64(mask), mirrored)
            assert code == BitBullyDatabases._to_huffman(reference), moves
        # the reference reader's binary search over our arrays finds the same entry
        pairs = _Pairs(book.keys, book.values)
        stored = BitBullyDatabases._get_book_value(board, pairs, with_distances=True)  # type: ignore[arg-type]
        assert stored is not None, f"{moves}: not in the book, though the side to move cannot win at once"
        assert field_score(book.keys, book.values, np.uint64(position), np.uint64(mask)) == _converted(stored)
    # the package's documented examples: +71 (win in 29 plies) is a score of 1, -88 (loss in 12) of -10
    for board, stored, score in (
            ([[0] * 7, [0, 0, 0, 1, 0, 0, 0], [0, 1, 0, 2, 0, 0, 0], [0, 2, 0, 1, 0, 2, 0], [0, 1, 0, 2, 0, 1, 0],
              [0, 2, 0, 1, 0, 2, 0]], 71, 1),
            ([[0] * 7, [0] * 7, [0, 0, 1, 1, 0, 0, 0], [0, 0, 2, 2, 0, 0, 0], [0, 1, 2, 1, 0, 0, 0],
              [0, 1, 1, 2, 0, 2, 2]], -88, -10)):
        position, mask = _bitboards(board)
        assert _converted(stored) == score
        assert field_score(book.keys, book.values, np.uint64(position), np.uint64(mask)) == score


def test_a_position_the_first_player_wins_at_once_is_not_in_the_book() -> None:
    book = field_book()
    moves = random_moves(random.Random(4), BOOK_STONES, can_win_at_once=True)
    position, mask, _ = from_moves(moves)
    assert field_score(book.keys, book.values, np.uint64(position), np.uint64(mask)) == NOT_IN_BOOK


def test_a_file_that_is_not_the_book_is_refused(tmp_path: Path) -> None:
    short = tmp_path / "short.dat"
    short.write_bytes(b"\x00" * 10)
    with pytest.raises(ValueError, match="12-stone book with distances has 21004495"):
        read_field_book(short)


def test_the_books_scores_agree_with_our_solver(plain_solver: SolverTables, book_solver: SolverTables) -> None:
    """On a sample of 12-stone positions, the book's exact score is what our solver finds searching to the end."""
    rng = random.Random(7)
    for _ in range(12):
        moves = random_moves(rng, BOOK_STONES)
        plain_solver.entries.fill(0)
        assert exact(moves, book_solver) == exact(moves, plain_solver), moves


def test_the_parents_in_the_book_bound_a_13_stone_position_from_below(plain_solver: SolverTables) -> None:
    """The solver's shortcut one stone past the book: a parent is worth at least minus the position its move made,
    so the best of the parents' bounds never exceeds the exact score (found here without the book)."""
    book = field_book()
    rng = random.Random(13)
    informative = 0
    for _ in range(8):
        moves = random_moves(rng, BOOK_STONES + 1)
        position, mask, _ = from_moves(moves)
        bound = parent_bound(book.keys, book.values, np.uint64(position), np.uint64(mask))
        plain_solver.entries.fill(0)
        assert bound <= exact(moves, plain_solver), moves
        informative += bound > -CELLS  # -CELLS: every parent could win at once (none in the book)
    assert informative >= 4


HARD_TWELVE = ("141744577164", "664163221317", "572676542561", "547121421624", "257771314744")
"""12-stone positions of seeded games (benchmarks/connect4_hard.py) whose best column took the most nodes to prove;
on some the solver takes the last column left without searching it, once the book and the search refute the rest."""


def test_the_column_of_a_12_stone_position_keeps_the_books_score(plain_solver: SolverTables,
                                                                 book_solver: SolverTables) -> None:
    """The column the solver picks (exact, and weak where the book says win or draw) makes a position worth
    minus the book's score, solved here to the end without the book."""
    for moves in HARD_TWELVE:
        position, mask, stones = (np.uint64(v) for v in from_moves(moves))
        for weak in (False, True):
            book_solver.entries.fill(0)
            column, score, solved = solve_column(position, mask, int(stones), book_solver, np.inf, weak)
            if weak and score < 0:
                continue  # a weak loss is only a bound: master goes on to the exact solve
            assert solved, moves
            plain_solver.entries.fill(0)
            after_move = exact(moves + str(column + 1), plain_solver)
            if weak:
                assert (after_move < 0, after_move == 0) == (score > 0, score == 0), (moves, column)
            else:
                assert after_move == -score == -exact(moves, plain_solver), (moves, column)


HARD_THIRTEEN = ("4721261235536", "3335514317173", "5471214216246", "2577713147446", "1741464423131")
"""13-stone positions of seeded games and the public sets that took the solver the most nodes (one of them,
``4721261235536``, the draw master at 0.1 s a move once missed)."""


def test_the_column_held_first_holds_its_floor(book_solver: SolverTables) -> None:
    """Master's first step: a column proven to hold at least ``floor``, and bounds that hold the exact score; at
    12 stones (the book's exact score) both bounds are that score."""
    for moves in HARD_TWELVE + HARD_THIRTEEN:
        position, mask, stones = from_moves(moves)
        book_solver.entries.fill(0)
        held, floor, ceiling = held_floor(np.uint64(position), np.uint64(mask), stones, book_solver, np.inf)
        score = exact(moves, book_solver)
        assert held >= 0 and floor <= score <= ceiling, (moves, held, floor, ceiling, score)
        assert -exact(moves + str(held + 1), book_solver) >= floor, moves
        if stones == BOOK_STONES:
            assert floor == ceiling == score, moves


def test_master_short_of_nodes_plays_the_column_it_proved_holds_the_draw(book_solver: SolverTables) -> None:
    """Where the solve does not finish (here a node limit far below the 2.5 million it takes), master plays the
    column it proved holds the draw, not the heuristic search's guess."""
    master = Connect4Master("connect4", "master", seed=1, node_limit=300_000)
    moves = "4721261235536"
    move = master.choose(GAME.start(*moves), TimeBudget(per_move=60.0))
    stats = master.stats()
    assert not stats["solved"] and stats["held"] == 0, stats
    assert exact(moves, book_solver) == 0 == exact(moves + str(move.column + 1), book_solver)


def test_the_opening_table_is_made_in_the_cache_and_agrees_with_the_solver(book_solver: SolverTables,
                                                                            user_cache: Path) -> None:
    table = opening_table()
    assert table_path().is_relative_to(user_cache) and table_path().exists()
    assert len(table) == sum(len(layer(n)) for n in range(book_module.TABLE_STONES + 1))
    rng = random.Random(9)
    for stones in range(book_module.TABLE_STONES + 1):
        moves = random_moves(rng, stones, can_win_at_once=None)
        position, mask, _ = from_moves(moves)
        assert table.score(position, mask) == exact(moves, book_solver), moves
    assert table.best_move(0, 0, 0) == (3, 1)  # the centre, the only first stone that wins (with the 21st)


def test_a_damaged_table_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       book_solver: SolverTables) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(book_module, "TABLE_STONES", 4)  # a small table: quick to make
    path = table_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a table")
    table = book_module.opening_table.__wrapped__()
    assert len(table) == sum(len(layer(n)) for n in range(5))
    assert Book.load(path).keys.tolist() == table.keys.tolist()
    assert not [p for p in path.parent.iterdir() if p != path]  # no temporary file left behind
    assert table.score(*from_moves("4444")[:2]) == exact("4444", book_solver)
    whole = path.read_bytes()
    for cut in (len(whole) // 5, len(whole) - 30):  # a table cut short (a full disk): a zip's own errors
        path.write_bytes(whole[:cut])
        assert book_module.opening_table.__wrapped__().keys.tolist() == table.keys.tolist()
        assert path.read_bytes() == whole


def test_opening_moves_are_proven_optimal_below_twelve_stones(book_solver: SolverTables) -> None:
    rng = random.Random(3)
    for stones in range(BOOK_STONES):
        moves = random_moves(rng, stones, can_win_at_once=None)
        position, mask, _ = from_moves(moves)
        column, score = opening_move(position, mask, stones, book_solver)
        assert score == exact(moves, book_solver), moves
        child = moves + str(column + 1)
        assert score == ((CELLS + 1 - stones) // 2 if not _legal(child) else -exact(child, book_solver)), moves
    assert opening_move(*from_moves("1234567" * 2)[:2], 14, book_solver) is None  # from 12 stones: the solver's
    with pytest.raises(ValueError, match="field's book"):
        opening_move(0, 0, 0, new_solver_tables())


def test_master_plays_the_openings_move_and_says_so(book_solver: SolverTables) -> None:
    """Before 12 stones the openings answer whatever the clock says (milliseconds): even a move with 10 ms left
    on the clock is proven-optimal."""
    master = Connect4Master("connect4", "master", seed=1)
    for moves in ("", "4", "44", "4455", "4455661", "445566121", "4455661213", "12345671234"):
        move = master.choose(GAME.start(*moves), TimeBudget(remaining=0.01))
        stats = master.stats()
        assert stats["book"] and stats["score"] == exact(moves, book_solver)
        child = moves + str(move.column + 1)
        wins = (CELLS + 1 - len(moves)) // 2
        assert stats["score"] == (wins if not _legal(child) else -exact(child, book_solver)), moves


class _Pairs:
    """Our arrays as the reference reader's list of ``(key, value)`` pairs (read on demand, not copied)."""

    def __init__(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.keys, self.values = keys, values

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, index: int) -> tuple[int, int]:
        return int(self.keys[index]), int(self.values[index])


def _converted(stored: int) -> int:
    """A stored value (``±(100 - plies)``, 0 a draw) as the solver's score of a 12-stone position."""
    if stored == 0:
        return 0
    plies = 100 - abs(stored)
    score = (CELLS - BOOK_STONES - plies) // 2 + 1
    return score if stored > 0 else -score


def _bitboards(board: list[list[int]]) -> tuple[int, int]:
    """``(first player's stones, mask)`` of a reference board."""
    first = mask = 0
    for row in range(HEIGHT):
        for column in range(WIDTH):
            stone = board[HEIGHT - 1 - row][column]
            if stone:
                bit = 1 << (7 * column + row)
                mask |= bit
                first |= bit if stone == 1 else 0
    return first, mask


def _legal(moves: str) -> bool:
    try:
        from_moves(moves)
    except ValueError:
        return False
    return True


def test_an_unwritable_cache_still_gives_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(book_module, "TABLE_STONES", 3)
    table = book_module.opening_table.__wrapped__()
    assert len(table) == sum(len(layer(n)) for n in range(4)) and table.best_move(0, 0, 0) == (3, 1)
    said = capsys.readouterr().err
    assert "opening table not kept" in said and "set XDG_CACHE_HOME to a writable folder" in said


def test_a_missing_book_package_is_said_with_its_remedy(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from bots.engine.connect4.fieldbook import book_path

    monkeypatch.setitem(sys.modules, "bitbully_databases", None)  # as if it were not installed
    with pytest.raises(ImportError, match="pip install bitbully-databases"):
        book_path()
