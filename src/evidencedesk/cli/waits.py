"""Progress of the waits a command makes (reading files, embedding chunks) on stderr.

On a terminal each step gets a progress bar that disappears when the command ends. When stderr is not
a terminal (a pipe, a log file, CI) bars would print nothing, so each step prints plain lines instead:
its first report, then at most one line every ``every`` seconds, and its last (``lines=False``, as with
``--json``, prints none). Everything here goes to stderr: stdout stays the command's output.

    with Waits(err_console) as waits:
        desk.step_progress = waits.step
        desk.ingest(folder, progress=waits.step("reading files", "files"))
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console

from evidencedesk.progress import Callback

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

_UNITS = {"embedding chunks": "chunks", "reading files": "files"}


def _duration(seconds: float) -> str:
    seconds = max(int(round(seconds)), 0)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Waits:
    """Hands out one progress callback per step (``step(name)``); draws or prints them on ``console``."""

    def __init__(self, console: Console, *, lines: bool = True, every: float = 5.0) -> None:
        self.console = console
        self.lines = lines
        self.every = every
        self.terminal = console.is_terminal
        self._bar: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> Waits:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def step(self, name: str, unit: str | None = None) -> Callback:
        """A callback ``(done, total, label)`` for the step ``name``, counted in ``unit``."""
        unit = unit or _UNITS.get(name, "")
        if self.terminal:
            return self._bar_step(name, unit)
        if not self.lines:
            return lambda done, total, label: None
        return self._line_step(name, unit)

    def _bar_step(self, name: str, unit: str) -> Callback:
        def update(done: int, total: int, label: str) -> None:
            bar = self._progress()
            task = self._tasks.get(name)
            if task is None:
                task = self._tasks[name] = bar.add_task(name, total=total or None, rate="")
            speed = bar.tasks[task].speed
            rate = f"{speed:.1f} {unit}/s" if speed else ""
            shown = f"{name} · {label[-40:]}" if label else name
            bar.update(task, completed=done, total=total or None, description=shown, rate=rate)
            if total and done >= total:  # a finished step leaves the screen; the last one stops the bar
                bar.remove_task(task)
                del self._tasks[name]
                if not self._tasks:
                    self.close()

        return update

    def _progress(self) -> Progress:
        if self._bar is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[progress.description]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
        return self._bar

    def _line_step(self, name: str, unit: str) -> Callback:
        started = time.perf_counter()
        last = [-1.0]

        def update(done: int, total: int, label: str) -> None:
            now = time.perf_counter()
            finished = bool(total) and done >= total
            if last[0] >= 0 and not finished and now - last[0] < self.every:
                return
            last[0] = now
            elapsed = now - started
            count = f"{done}/{total}" if total else str(done)
            parts = [f"{name}: {count} {unit}".rstrip()]
            if done and elapsed > 0.05:
                parts.append(f"{done / elapsed:.1f}/s")
                if total and not finished:
                    parts.append(f"about {_duration((total - done) * elapsed / done)} left")
            parts.append(f"{_duration(elapsed)} elapsed")
            line = ", ".join(parts) + (f" ({label})" if label and unit != "chunks" else "")
            self.console.print(line, highlight=False, markup=False, soft_wrap=True)

        return update


__all__ = ["Waits"]
