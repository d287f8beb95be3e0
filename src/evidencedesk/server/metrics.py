"""Service metrics: what a monitor needs to see that answers stay grounded, as JSON or Prometheus text.

Counted since the process started: searches and questions, the zero-hit rate (nothing inside the
scope matched), the abstention rate, the share of answer contexts holding a superseded or expired
chunk (it must stay 0: the scope filters them before ranking), citation validity (the share of
answers whose citations all point at chunks the generator was shown) and latency per stage and per
endpoint (p50, p95 over the most recent ``window`` observations).
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter, deque
from collections.abc import Mapping
from datetime import date
from typing import Any

import numpy as np

from evidencedesk.documents import Metadata
from evidencedesk.results.ask import AskResult

WINDOW = 10_000
QUANTILES = (50, 95)


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def stale(metadata: Mapping[str, object], day: date) -> bool:
    """True for a chunk that is not current, or not valid on ``day``."""
    try:
        meta = Metadata.from_dict(dict(metadata))
    except (ValueError, TypeError, KeyError):
        return True
    return meta.status != "current" or not meta.valid_on(day)


class Metrics:
    """Thread-safe counters and latency windows; ``snapshot()`` is the JSON, ``prometheus()`` the text."""

    def __init__(self, window: int = WINDOW) -> None:
        if window < 1:
            raise ValueError(f"window: must be at least 1, got {window}")
        self.window = window
        self.started = time.time()
        self._lock = threading.Lock()
        self.queries: Counter[str] = Counter()
        self.zero_hits = 0
        self.asks = 0
        self.abstained = 0
        self.stale_contexts = 0
        self.answered = 0
        self.valid_citations = 0
        self.requests: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self._latency: dict[str, deque[float]] = {}

    def _observe(self, name: str, ms: float) -> None:
        self._latency.setdefault(name, deque(maxlen=self.window)).append(float(ms))

    def record_request(self, endpoint: str, status: int, ms: float) -> None:
        with self._lock:
            self.requests[endpoint] += 1
            if status >= 500:
                self.errors[endpoint] += 1
            self._observe(f"http:{endpoint}", ms)

    def record_search(self, n_results: int, ms: float) -> None:
        with self._lock:
            self.queries["search"] += 1
            self.zero_hits += n_results == 0
            self._observe("search", ms)

    def record_ask(self, result: AskResult, day: date | None = None) -> None:
        """Count one answered question from what ``Desk.ask`` returned."""
        day = day or date.today()
        context = result.context_candidates
        shown = {c.chunk_id for c in context}
        with self._lock:
            self.queries["ask"] += 1
            self.asks += 1
            self.zero_hits += not result.retrieved
            self.stale_contexts += any(stale(c.metadata, day) for c in context)
            if result.abstained:
                self.abstained += 1
            else:
                self.answered += 1
                self.valid_citations += bool(result.citations) and set(result.citations) <= shown
            for stage, ms in result.timings.items():
                self._observe(stage, ms)

    def _quantiles(self) -> dict[str, dict[str, float | int]]:
        out: dict[str, dict[str, float | int]] = {}
        for name, values in sorted(self._latency.items()):
            arr = np.fromiter(values, dtype=float, count=len(values))
            qs = np.percentile(arr, QUANTILES) if len(arr) else [math.nan] * len(QUANTILES)
            out[name] = {"n": len(arr), **{f"p{q}": float(v) for q, v in zip(QUANTILES, qs, strict=True)}}
        return out

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            total = sum(self.queries.values())
            latency = self._quantiles()
            return {
                "uptime_s": time.time() - self.started,
                "queries": {"total": total, **dict(self.queries)},
                "zero_hit_rate": _rate(self.zero_hits, total),
                "abstention_rate": _rate(self.abstained, self.asks),
                "stale_context_rate": _rate(self.stale_contexts, self.asks),
                "citation_validity": _rate(self.valid_citations, self.answered),
                "counts": {
                    "zero_hits": self.zero_hits,
                    "asks": self.asks,
                    "abstained": self.abstained,
                    "stale_contexts": self.stale_contexts,
                    "answered": self.answered,
                    "valid_citations": self.valid_citations,
                },
                "latency_ms": {k: v for k, v in latency.items() if not k.startswith("http:")},
                "requests": {
                    endpoint: {"count": n, "errors": self.errors[endpoint], **latency.get(f"http:{endpoint}", {})}
                    for endpoint, n in sorted(self.requests.items())
                },
            }

    def prometheus(self) -> str:
        """The snapshot in the Prometheus text exposition format (version 0.0.4)."""
        snap = self.snapshot()
        reqs = snap["requests"]
        quantiles = [(q, f"0.{q}") for q in QUANTILES]
        families: list[tuple[str, str, str, list[tuple[str, float | None]]]] = [
            ("queries_total", "counter", "Searches and questions served.",
             [(f'kind="{k}"', v) for k, v in snap["queries"].items() if k != "total"]),
            ("zero_hit_ratio", "gauge", "Share of queries with nothing inside the scope.",
             [("", snap["zero_hit_rate"])]),
            ("abstention_ratio", "gauge", "Share of questions answered with an abstention.",
             [("", snap["abstention_rate"])]),
            ("stale_context_ratio", "gauge", "Share of contexts holding a superseded or expired chunk (must be 0).",
             [("", snap["stale_context_rate"])]),
            ("citation_validity_ratio", "gauge", "Share of answers whose citations were all shown.",
             [("", snap["citation_validity"])]),
            ("stage_latency_ms", "summary", "Latency per stage in milliseconds.",
             [(f'stage="{s}",quantile="{qs}"', v[f"p{q}"]) for s, v in snap["latency_ms"].items()
              for q, qs in quantiles]),
            ("requests_total", "counter", "HTTP requests per endpoint.",
             [(f'endpoint="{e}"', v["count"]) for e, v in reqs.items()]),
            ("request_errors_total", "counter", "HTTP 5xx responses per endpoint.",
             [(f'endpoint="{e}"', v["errors"]) for e, v in reqs.items()]),
            ("request_latency_ms", "summary", "HTTP request latency per endpoint in milliseconds.",
             [(f'endpoint="{e}",quantile="{qs}"', v.get(f"p{q}")) for e, v in reqs.items() for q, qs in quantiles]),
        ]  # fmt: skip
        lines: list[str] = []
        for name, kind, help_, samples in families:
            lines += [f"# HELP evidencedesk_{name} {help_}", f"# TYPE evidencedesk_{name} {kind}"]
            for labels, value in samples:
                shown = "NaN" if value is None or math.isnan(value) else repr(float(value))
                lines.append(f"evidencedesk_{name}{{{labels}}} {shown}" if labels else f"evidencedesk_{name} {shown}")
        return "\n".join(lines) + "\n"


__all__ = ["Metrics", "stale"]
