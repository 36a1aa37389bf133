"""The game being watched is analysed first (issue 43, item 11): a waiting game that an address asks for again goes
to the front of that address's line, ahead of the games ``--analyse-finished`` queues by itself, while addresses
are still served in turn; a running analysis says how many positions it has from its start (never "0 of ?")."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from pathlib import Path

from server.io.analysis import FINISHED, AnalysisQueue
from tests.test_fair_share import idle_queue

# A worker that answers like client.runner.analyse: progress once the file named by its argument exists (so a running
# job can be looked at), then an "analysis" naming the game, so the order the queue served the games in is the order
# they were saved in.
WORKER = ("import json, os, sys, time\n"
          "for line in sys.stdin:\n"
          "    r = json.loads(line)\n"
          "    while not os.path.exists(sys.argv[1]):\n"
          "        time.sleep(0.01)\n"
          "    print(json.dumps({'id': r['id'], 'progress': [1, len(r['moves']) + 1]}), flush=True)\n"
          "    print(json.dumps({'id': r['id'], 'analysis': {'game': r['id']}}), flush=True)\n")
RECORD = {"status": "finished", "game": "connect4", "moves": [{"move": "4"}, {"move": "4"}, {"move": "3"}]}


async def test_the_watched_game_is_analysed_before_the_background_games_queued_ahead_of_it(tmp_path: Path) -> None:
    saved: list[str] = []
    gate = tmp_path / "go"
    with concurrent.futures.ThreadPoolExecutor(1) as reads:
        queue = AnalysisQueue(lambda game_id: RECORD, reads, lambda game_id, analysis: saved.append(analysis["game"]),
                              command=[sys.executable, "-c", WORKER, str(gate)])
        for n in range(4):
            queue.request(f"finished{n}", FINISHED)  # --analyse-finished's games, queued before anybody asked
        assert queue.status("finished3")["ahead"] == 3
        queue.request("finished3", "10.0.0.3")  # the replay page showing finished3 asks for it
        assert queue.status("finished3") == {"status": "queued", "done": 0, "total": 0, "ahead": 0}
        assert queue.status("finished0")["ahead"] == 1, "the background games wait behind it"
        queue.start()
        try:
            while queue.jobs["finished3"].state == "queued":
                await asyncio.sleep(0.01)
            running = queue.status("finished3")
            assert running["status"] == "running" and running["total"] == len(RECORD["moves"]) + 1, running
            gate.touch()
            await queue.wait("finished0")
        finally:
            await queue.stop()
    assert saved[:2] == ["finished3", "finished0"]


def test_asking_again_puts_a_game_first_in_its_own_line_and_every_address_keeps_its_turn() -> None:
    queue, reads = idle_queue(per_requester=3)
    with reads:
        queue.request("background", FINISHED)
        queue.request("theirs", "10.0.0.2")
        queue.request("older", "10.0.0.3")
        queue.request("shown", "10.0.0.3")
        queue.request("shown", "10.0.0.3")  # the page asks again while it waits
        assert queue.status("shown")["ahead"] == 1, "the other address's game, then the watched one"
        order = [queue._next().game_id for _ in range(4)]
    assert order == ["theirs", "shown", "older", "background"]


def test_a_game_asked_for_again_moves_only_within_the_asking_addresss_share() -> None:
    queue, reads = idle_queue(per_requester=2)
    with reads:
        queue.request("bg0", FINISHED)
        queue.request("bg1", FINISHED)
        queue.request("a", "10.0.0.3")
        queue.request("b", "10.0.0.3")
        queue.request("bg1", "10.0.0.3")  # the address's line is full: the game stays in the background line
        assert queue.jobs["bg1"].requester == FINISHED and len(queue.lines["10.0.0.3"]) == 2
        queue.request("bg1", FINISHED)  # the background asking again moves nothing
        order = [queue._next().game_id for _ in range(4)]
    assert order == ["a", "b", "bg0", "bg1"]
