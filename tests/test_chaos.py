"""The fault matrix, small (issue 40): benchmarks/chaos.py's harness with three real nodes, PostgreSQL and Redis,
a few games a fault whose two players sit on different nodes, and every invariant checked after each fault
(every move told is stored once and in order, one announcement a ply, one result everyone was told and stored,
one record a game, nothing stuck or stored under two nodes, no move answered with an error stored, no clock
charged for the outage). ``benchmarks/chaos.py`` runs the full size."""

from __future__ import annotations

import random

import pytest

from benchmarks.chaos import FAULTS, cluster, run_fault

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("fault", FAULTS)
async def test_every_invariant_holds_after_the_fault(fault, pg_url, postgres_cluster, redis_server, tmp_path):
    """One fault of the matrix on three games."""
    try:
        with cluster(postgres_cluster, redis_server, pg_url, 3, tmp_path, fault) as nodes:
            outcome = await run_fault(fault, nodes, postgres_cluster, redis_server, pg_url, 3, fault, 90.0,
                                      random.Random(FAULTS.index(fault)))
        assert outcome.violations == [], "\n".join(outcome.violations)
        assert outcome.announced > 0 and outcome.stuck == 0
    finally:
        redis_server.revive()
