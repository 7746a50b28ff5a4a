"""Prometheus metrics (`/metrics`, text format): requests, blocks per defense and stage,
upstream errors, and the time spent in the upstream and in the defenses. Under several
worker processes (`PROMETHEUS_MULTIPROC_DIR` set, as `serve --workers N` does), every worker
writes its values there and any worker's `/metrics` sums them all."""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    """One registry per app, so two gateways in a process (tests) keep their own counts."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "paperplug_gateway_requests",
            "Requests by endpoint and status",
            ["endpoint", "status"],
            registry=self.registry,
        )
        self.blocked = Counter(
            "paperplug_gateway_blocked",
            "Payloads blocked by defense and stage",
            ["defense", "stage"],
            registry=self.registry,
        )
        self.upstream_errors = Counter(
            "paperplug_gateway_upstream_errors",
            "Upstream failures by kind",
            ["kind"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "paperplug_gateway_request_seconds",
            "Whole request, as the client sees it",
            ["stream"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.defense_time = Histogram(
            "paperplug_gateway_defense_seconds",
            "Time in one stage's defenses per check",
            ["stage"],
            buckets=BUCKETS,
            registry=self.registry,
        )

    def render(self) -> bytes:
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            return generate_latest(self.registry)
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return generate_latest(registry)
