"""Connect Four knowledge: open windows of four and odd/even threats.

The evaluation is the classic one from course projects. Every line of four
squares (a *window*, 69 of them) that the opponent has not blocked is worth 1
per stone of ours and 0.5 per empty square; the opponent's open windows count
against us. On top of that come *threats*, empty squares that would complete
four: the first player profits from threats on odd rows (1, 3, 5 counted from
the bottom), the second player from threats on even rows, since zugzwang at
the end of the game lets each side force those squares. Threats that can be
played at once count far more: the player to move wins with one of its own,
and loses to two of the opponent's.
"""

from __future__ import annotations

from protocol.games.connect4 import HEIGHT, WIDTH, C4State, Drop

from .base import Evaluator

STONE_POINTS = 1.0
EMPTY_POINTS = 0.5
GOOD_THREAT_POINTS = 6.0
"""A threat on a row of the owner's parity (odd rows for the first player, even for the second)."""
OTHER_THREAT_POINTS = 2.0
WIN_NEXT_MOVE_POINTS = 200.0
"""The player to move has a threat it can play at once: it wins next move."""


def _windows() -> tuple[tuple[int, int, int, int], ...]:
    windows = []
    for row in range(HEIGHT):
        for col in range(WIDTH):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                end_col, end_row = col + 3 * dc, row + 3 * dr
                if 0 <= end_col < WIDTH and 0 <= end_row < HEIGHT:
                    windows.append(tuple((row + k * dr) * WIDTH + col + k * dc for k in range(4)))
    return tuple(windows)  # type: ignore[return-value]


WINDOWS = _windows()
"""Every line of four squares on the board, as square indices."""


def first_player(state: C4State) -> int:
    """The seat that dropped the first stone (equal stone counts mean it is to move again)."""
    seat0, seat1 = state.board.count(1), state.board.count(2)
    return state.to_move if seat0 == seat1 else 1 - state.to_move


class Connect4Evaluator(Evaluator):
    """Open windows of four, plus threats weighted by row parity."""

    game_id = "connect4"

    def evaluate(self, state: C4State, seat: int) -> float:
        """Windows and threats of ``seat`` minus the opponent's."""
        board = state.board
        stones = (seat + 1, 2 - seat)
        score = 0.0
        threats: tuple[set[int], set[int]] = (set(), set())
        for window in WINDOWS:
            cells = [board[sq] for sq in window]
            for side, stone in enumerate(stones):
                other = stones[1 - side]
                if other in cells:
                    continue
                count = cells.count(stone)
                points = STONE_POINTS * count + EMPTY_POINTS * (4 - count)
                score += points if side == 0 else -points
                if count == 3:
                    threats[side].add(window[cells.index(0)])
        first = first_player(state)
        playable = [0, 0]  # threats on a square a stone would drop onto now, per side
        for side, squares in enumerate(threats):
            owner = seat if side == 0 else 1 - seat
            # rows counted from 1: the first player wants odd rows (index 0, 2, 4)
            good_parity = 0 if owner == first else 1
            for square in squares:
                points = GOOD_THREAT_POINTS if (square // WIDTH) % 2 == good_parity else OTHER_THREAT_POINTS
                score += points if side == 0 else -points
                if square < WIDTH or board[square - WIDTH]:
                    playable[side] += 1
        # Playable threats decide the next two moves: the player to move wins with
        # one of its own; failing that, it can block only one of the opponent's.
        mover = 0 if state.to_move == seat else 1
        if playable[mover]:
            score += WIN_NEXT_MOVE_POINTS if mover == 0 else -WIN_NEXT_MOVE_POINTS
        elif playable[1 - mover] >= 2:
            score += WIN_NEXT_MOVE_POINTS / 2 if mover == 1 else -WIN_NEXT_MOVE_POINTS / 2
        return score

    def order_moves(self, state: C4State, moves: list[Drop]) -> list[Drop]:
        """Centre columns first: they lie in the most windows."""
        return sorted(moves, key=lambda move: abs(move.column - WIDTH // 2))
