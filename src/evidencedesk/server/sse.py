"""Server-sent events for a streamed ask: ``delta`` events as the answer is written, then one ``done``.

Each event is ``event: <type>`` and ``data: <json>``: ``{"type": "delta", "text": ...}`` for a piece
of the answer, then ``{"type": "done", "result": ...}`` carrying what the JSON ``/ask`` returns
(validated answer, citations, validation, trace id). A generator that fails mid-stream ends it
with ``{"type": "error", "status": 503, "detail": ...}``. When the client goes away the ask is
cancelled, so the model stops before its next token and the request's queue place is given back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from evidencedesk import AnswerDone, AskEvent, AskStream
from evidencedesk.errors import GenerationError
from evidencedesk.results.ask import AskResult, JSONObject

MEDIA_TYPE = "text/event-stream"


def wants_events(accept: str | None, asked: bool) -> bool:
    """True when the request asks for a stream: ``"stream": true`` or ``Accept: text/event-stream``."""
    return asked or MEDIA_TYPE in (accept or "")


def encode(kind: str, data: JSONObject) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, default=str)}\n\n"


def _next(events: AskStream) -> AskEvent | None:
    try:
        return next(events)
    except StopIteration:
        return None


async def _events(events: AskStream, on_done: Callable[[AskResult], AskResult]) -> AsyncIterator[str]:
    try:
        while True:
            try:
                event = await run_in_threadpool(_next, events)
            except GenerationError as exc:
                yield encode("error", {"type": "error", "status": 503, "detail": f"generator failed: {exc}"})
                return
            if event is None:
                return
            if isinstance(event, AnswerDone):
                result = await run_in_threadpool(on_done, event.result)
                yield encode("done", AnswerDone(result).to_dict())
            else:
                yield encode(event.type, event.to_dict())
    finally:  # also when the client disconnected: stop the model before its next token
        events.cancel()
        events.close()


def event_stream(events: AskStream, on_done: Callable[[AskResult], AskResult]) -> StreamingResponse:
    """The SSE response for ``events``; ``on_done`` stores and completes the final result."""
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(_events(events, on_done), media_type=MEDIA_TYPE, headers=headers)


__all__ = ["MEDIA_TYPE", "encode", "event_stream", "wants_events"]
