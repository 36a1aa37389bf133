"""The analysis worker's lines (client/runner/analyse.py), run in this process: one JSON request a line in, progress
and one analysis or error out, the worker going on after a bad request. The server and ``plyhall analyse`` run it as
a process in the slow tests (tests/test_analysis.py); this keeps its protocol in the fast tier."""

from __future__ import annotations

import io
import json

import pytest

from client.runner import analyse as worker


def answers(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *lines: str) -> list[dict]:
    """What the worker says to ``lines`` on its standard input (its priority left alone: this is the test's
    process)."""
    monkeypatch.setattr(worker.os, "nice", lambda _: 0)
    monkeypatch.setattr(worker.sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
    assert worker.main() == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_request_gets_its_progress_and_its_analysis(monkeypatch, capsys) -> None:
    request = {"id": 7, "game": "magnetic-cave", "moves": ["a1", "h1"], "nodes": 2000}
    said = answers(monkeypatch, capsys, json.dumps(request))
    assert all(line["id"] == 7 for line in said)
    progress = [line["progress"] for line in said if "progress" in line]
    assert progress and progress[-1][0] == progress[-1][1] and progress == sorted(progress)
    assert "analysis" in said[-1] and [m["move"] for m in said[-1]["analysis"]["moves"]] == ["a1", "h1"]


def test_bad_requests_are_answered_and_the_worker_goes_on(monkeypatch, capsys) -> None:
    good = json.dumps({"id": "last", "game": "connect4", "moves": ["4"], "nodes": 1000})
    said = answers(monkeypatch, capsys, "not json", "", "[1, 2]", json.dumps({"id": 3, "game": "chess", "moves": []}),
                   json.dumps({"id": 4, "game": "connect4", "moves": ["9"]}), good)
    errors = [(line["id"], line["error"]) for line in said if "error" in line]
    assert [ident for ident, _ in errors] == [None, None, 3, 4]
    assert errors[0][1].startswith("not a JSON request") and errors[1][1] == "a request is a JSON object"
    assert "chess" in errors[2][1]
    assert said[-1]["id"] == "last" and "analysis" in said[-1]
