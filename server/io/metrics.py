"""Prometheus metrics at ``/metrics``: what an operator watches.

The serving path only bumps plain integers (no lock, no allocation per message); a custom
collector turns them, and the live gauges read from the server, into metric families when
``/metrics`` is scraped, and ``prometheus_client`` renders the text format. Each metric is
documented in docs/OPERATING.md.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector

from ..core.outbox import Refusal

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
REFUSAL_REASONS = tuple(Refusal)
"""Every reason a quota or throttle refuses a request for (each is always exported, from 0)."""
LOGIN_FAILURES = ("wrong_secret", "throttled", "resume_required", "bad_name", "name_in_use", "not_organiser")


class Histogram:
    """Cumulative bucket counts and a sum, kept with plain numbers."""

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        """Count one observation."""
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sum += value

    def family(self, name: str, doc: str) -> HistogramMetricFamily:
        """The metric family (cumulative buckets, as Prometheus wants them)."""
        running, cumulative = 0, []
        for bound, count in zip((*self.buckets, float("inf")), self.counts, strict=True):
            running += count
            cumulative.append((str(bound) if bound != float("inf") else "+Inf", running))
        return HistogramMetricFamily(name, doc, buckets=cumulative, sum_value=self.sum)


class Metrics:
    """Counters the server bumps, live gauges it reads, and the scrape."""

    def __init__(self, gauges: Callable[[], dict[str, Any]]) -> None:
        self.gauges = gauges
        self.received = 0
        self.sent = 0
        self.moves = 0
        self.logins = 0
        self.errors: Counter[str] = Counter()
        self.games_ended: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter()  # requests refused by a quota or a throttle, by reason
        self.loop_lag = Histogram(LAG_BUCKETS)
        self.last_lag = 0.0
        self.commit = Histogram(COMMIT_BUCKETS)
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(_Collector(self))
        self.registry.register(ProcessCollector(namespace="plyhall", registry=None))

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)

    async def watch_loop(self, interval: float = 0.1) -> None:
        """Measure event-loop lag: how late a timer of ``interval`` seconds fires."""
        while True:
            started = time.perf_counter()
            await asyncio.sleep(interval)
            self.last_lag = max(0.0, time.perf_counter() - started - interval)
            self.loop_lag.observe(self.last_lag)


class _Collector:
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        m = self.metrics
        live = m.gauges()
        yield _gauge("plyhall_connections", "Open WebSocket connections.", live["connections"])
        yield _gauge("plyhall_sessions", "Logged-in connections.", live["sessions"])
        yield _gauge("plyhall_rooms", "Open rooms.", live["rooms"])
        yield _gauge("plyhall_games_running", "Games being played now (paused ones after a restart included).",
                     live["games_running"])
        yield _gauge("plyhall_seeks_waiting", "Seeks waiting for an opponent.", live["seeks"])
        yield _counter("plyhall_ladder_passes", "Ladder pairing passes (and looks for the next pairing time) made.",
                       live.get("ladder_passes", 0))
        yield _counter("plyhall_ladder_candidates", "Candidate opponents the ladder's pairing passes looked at.",
                       live.get("ladder_candidates", 0))
        yield _gauge("plyhall_house_bots_running", "House bot processes running.", live["house_bots"])
        tournaments = GaugeMetricFamily("plyhall_tournaments", "Tournaments by status.", labels=["status"])
        for status, count in sorted(live["tournaments"].items()):
            tournaments.add_metric([status], count)
        yield tournaments
        yield _counter("plyhall_messages_received", "Messages received from clients.", m.received)
        yield _counter("plyhall_messages_sent", "Messages queued for clients.", m.sent)
        yield _counter("plyhall_moves", "Moves accepted (and stored).", m.moves)
        yield _counter("plyhall_logins", "Logins accepted.", m.logins)
        yield _counters("plyhall_logins_failed", "Logins refused, by error code.", "code",
                        ((code, m.errors.get(code, 0)) for code in LOGIN_FAILURES))
        yield _counters("plyhall_errors", "Error replies sent, by error code.", "code", sorted(m.errors.items()))
        yield _counters("plyhall_refusals", "Requests refused by a quota or a throttle, by reason (docs/OPERATING.md "
                        "lists the reasons).", "reason", ((r, m.refusals.get(r, 0)) for r in REFUSAL_REASONS))
        yield _counters("plyhall_games_ended", "Games that ended, by status.", "status", sorted(m.games_ended.items()))
        yield m.loop_lag.family("plyhall_event_loop_lag_seconds", "How late a 100 ms timer fires on the event "
                                                                  "loop (time the loop was busy).")
        yield _gauge("plyhall_event_loop_lag_last_seconds", "The latest event-loop lag measurement.", m.last_lag)
        yield _gauge("plyhall_storage_queue_depth", "Writes waiting for their commit.", live["storage_queued"])
        yield _gauge("plyhall_storage_up", "1 while the database takes writes, 0 while commits fail.",
                     live["storage_up"])
        yield _counter("plyhall_storage_commits", "Group commits done.", live["storage_commits"])
        yield m.commit.family("plyhall_storage_commit_seconds", "Time one group commit took.")
        yield _gauge("plyhall_deposed", "1 once this cluster node was deposed (another node owns its rooms: it "
                     "serves nothing more), else 0.", live.get("deposed", 0))
        cluster = live.get("cluster")
        if cluster is not None:
            yield _gauge("plyhall_cluster_lock_held", "1 while this node's database lock is proven held (checked "
                         "every beat), 0 while it cannot be proven or the node was deposed.",
                         int(cluster["lock"] == "held"))
            yield _counter("plyhall_cluster_lock_retaken", "Times this node's database lock was lost (its connection "
                           "dropped) and taken again before another node adopted its rooms.", cluster["lock_retaken"])
            yield _gauge("plyhall_cluster_epoch", "The fencing token this node writes with (new at every start, "
                         "adoption and re-taking of its lock).", cluster["epoch"] or 0)
        gc_pauses = live.get("gc_pauses")
        if gc_pauses is not None:
            yield gc_pauses.family("plyhall_gc_pause_seconds", "Pauses of the garbage collector's passes (the whole "
                                                               "process waits during each).")


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, value=value)


def _counters(name: str, doc: str, label: str, counts: Iterable[tuple[str, int]]) -> CounterMetricFamily:
    """A counter family with one sample per ``label`` value."""
    family = CounterMetricFamily(name, doc, labels=[label])
    for value, count in counts:
        family.add_metric([value], count)
    return family
