"""The command line's manners, as real ``plyhall`` processes: results kept on Ctrl-C, a word while engines warm up,
one line per mistake with the fix, and words that fit what the user did."""

from __future__ import annotations

import signal
import subprocess

from tests.helpers import plyhall, stop


def read_err_until(proc: subprocess.Popen, text: str) -> str:
    """``proc``'s standard error, line by line, until a line says ``text`` (the test fails if it ends first)."""
    lines = []
    while line := proc.stderr.readline():
        lines.append(line)
        if text in line:
            return "".join(lines)
    out, err = stop(proc)
    raise AssertionError(f"never said {text!r}: {''.join(lines)}{err}")


def test_ctrl_c_in_a_match_prints_the_results_so_far():
    proc = plyhall("match", "--game", "connect4", "random", "random", "--games", "100000", "--seed", "1")
    try:
        read_err_until(proc, "1/100000")  # a game is over
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        stop(proc)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "of 100000 games: the results so far" in err, err
    played = int(err.split("interrupted after ")[1].split(" ")[0])
    assert played >= 1 and f"connect4: A = random, B = random, {played} games, seed 1" in out, out
    assert "A  random" in out and "95% interval" in out


def test_a_match_says_it_warms_up_the_master_engine_and_ctrl_c_acts_during_it():
    proc = plyhall("match", "--game", "santorini", "master", "random", "--games", "2")
    try:
        read_err_until(proc, "warming up the santorini master engine…")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # a bound for a hang only: numba's compile is never waited for
    finally:
        stop(proc)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "interrupted after 0 of 2 games" in err or "the results so far" in err, err
