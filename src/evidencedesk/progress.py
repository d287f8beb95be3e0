"""Progress of long work (ingesting a folder, embedding a corpus): a callback and a meter that gives the
rate and the time left.

A callback is called as ``callback(done, total, label)`` after each step (a file, a block of
embedded chunks); ``total`` is 0 when unknown. Front ends draw it (the CLI's progress bars) or keep
its summary (the service's ingest report). ``timed_into`` adds up the time spent in named stages.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from evidencedesk.json_types import JsonObject

Callback = Callable[[int, int, str], None]


@dataclass
class Meter:
    """Counts steps of a job of ``total`` and says how fast it goes and how long is left.

    ``clock`` gives the time in seconds (``time.perf_counter`` unless a caller, such as a test,
    brings its own); the meter starts at the clock's reading when it is made.
    """

    total: int = 0
    done: int = 0
    callback: Callback | None = None
    clock: Callable[[], float] = time.perf_counter
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def update(self, done: int, total: int | None = None, label: str = "") -> None:
        self.done = done
        if total is not None:
            self.total = total
        if self.callback is not None:
            self.callback(done, self.total, label)

    @property
    def seconds(self) -> float:
        return self.clock() - self.started

    @property
    def rate(self) -> float:
        """Steps per second so far (0 before the first step)."""
        elapsed = self.seconds
        return self.done / elapsed if self.done and elapsed > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        """Estimated seconds to finish; None while unknown."""
        if not self.total or not self.rate:
            return None
        return max(self.total - self.done, 0) / self.rate

    def summary(self) -> JsonObject:
        """``count`` steps done of ``total``, the ``seconds`` they took and the steps ``per_second``."""
        return {"count": self.done, "total": self.total, "seconds": round(self.seconds, 3),
                "per_second": round(self.rate, 2)}  # fmt: skip


@contextmanager
def timed_into(totals: dict[str, float], stage: str, scale: float = 1.0) -> Iterator[None]:
    """Add the time the ``with`` block takes, in seconds times ``scale`` (1000: milliseconds), to
    ``totals[stage]``; a block that raises is counted too."""
    start = time.perf_counter()
    try:
        yield
    finally:
        totals[stage] = totals.get(stage, 0.0) + (time.perf_counter() - start) * scale
