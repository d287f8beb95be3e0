"""Streaming an answer: the events ``Desk.ask_stream`` yields, and the iterator that carries them.

The contract, for every generator:

* zero or more :class:`AnswerDelta` events, each a piece of the answer text in order, then
* exactly one :class:`AnswerDone` whose ``result`` is exactly what ``Desk.ask`` returns for the same
  call (the validated answer, citations, validation, trace id ...).

A generator that writes token by token (a local language model) yields its text as it comes; the
deltas are the text as written, with passage numbers already turned into chunk ids. Validation runs
after the last token, so ``AnswerDone.result.answer`` is the answer to keep: it differs from the
joined deltas when validation dropped an unsupported sentence or replaced the answer by an
abstention. A generator that cannot stream (the extractive one) yields its validated answer as one
delta.

Closing the iterator (``close()``, leaving a ``with`` block, or dropping it) stops generation: the
model is not asked for another token, and no trace is stored. ``cancel()`` does the same from
another thread while a ``next()`` is running (the service calls it when a client disconnects); the
iteration then ends without an ``AnswerDone``. What the stream holds (a place in a local model's
request queue) is given back when it ends, fails or is closed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal

from evidencedesk.results.ask import AskResult, JSONObject


@dataclass(frozen=True)
class AnswerDelta:
    """A piece of the answer text, in the order written."""

    text: str
    type: Literal["delta"] = field(default="delta", init=False)

    def to_dict(self) -> JSONObject:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True)
class AnswerDone:
    """The last event: ``result`` is exactly what ``Desk.ask`` returns (answer, citations, validation, trace id)."""

    result: AskResult
    type: Literal["done"] = field(default="done", init=False)

    def to_dict(self) -> JSONObject:
        return {"type": self.type, "result": self.result.to_dict()}


AskEvent = AnswerDelta | AnswerDone


class AskStream(Iterator[AskEvent], AbstractContextManager["AskStream"]):
    """The events of one ask. Iterate it, or use it as a context manager so that leaving stops generation."""

    def __init__(
        self, events: Iterator[AskEvent], stop: threading.Event, on_close: Callable[[], None] | None = None
    ) -> None:
        self._events = events
        self._stop = stop
        self._on_close = on_close

    def __iter__(self) -> AskStream:
        return self

    def __next__(self) -> AskEvent:
        try:
            return next(self._events)
        except BaseException:  # the end, an error, or a stop: whatever the stream held is given back
            self._release()
            raise

    def _release(self) -> None:
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    def cancel(self) -> None:
        """Ask generation to stop before its next token; safe to call from any thread."""
        self._stop.set()

    def close(self) -> None:
        """Stop generation and end the stream (no ``AnswerDone`` follows)."""
        self._stop.set()
        close = getattr(self._events, "close", None)
        try:
            if callable(close):
                close()
        except ValueError:  # a next() is running in another thread: it sees the stop flag instead
            return
        self._release()

    def __del__(self) -> None:
        self._release()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


__all__ = ["AnswerDelta", "AnswerDone", "AskEvent", "AskStream"]
