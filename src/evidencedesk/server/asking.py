"""Asking for a caller: the one recipe behind ``POST /ask`` (whole or streamed),
``/v1/chat/completions``, the lab's ask and the MCP server's ``ask`` tool.

The recipe: check the question's text and the limits on ``k`` and ``candidates`` (the service's own
limits, checked here for every face), narrow the caller's scope by the request's, ask the Desk with
``save=False``, then store the trace for the caller's key with the service's retention and count the
answer in the metrics. A refusal is a ``RequestRefused`` carrying its HTTP status (the service
answers with it; MCP turns it into a tool error); a full model queue is ``ModelBusy`` (503 with
``Retry-After``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from evidencedesk import AnswerDone, AskStream, Scope
from evidencedesk.errors import GenerationError, ModelBusy, RequestRefused
from evidencedesk.results.ask import AskResult
from evidencedesk.server.access import Caller, request_scope
from evidencedesk.server.models import ScopeRequest
from evidencedesk.server.state import ServiceState

Completion = Callable[[AskResult], AskResult]
"""What a face makes of a finished result before its trace is stored (the lab adds its grades)."""


@dataclass(frozen=True)
class AskOrder:
    """One question as a face received it: ``scope`` narrows the caller's (an already narrowed
    ``Scope`` is taken as it is); ``None`` fields take the configured defaults; ``options`` go to
    ``Desk.ask_stream`` as they are (``rerank``, ``budget_tokens``, ``label``, ``over`` ...)."""

    question: str
    scope: ScopeRequest | Scope | None = None
    generator: str | None = None
    method: str | None = None
    k: int | None = None
    candidates: int | None = None
    options: Mapping[str, object] = field(default_factory=dict)


def check_text(state: ServiceState, text: str, what: str) -> str:
    """``text`` when it is not blank and within the service's length limit (400 or 413 otherwise)."""
    limit = state.service.max_query_chars
    if not text.strip():
        raise RequestRefused(400, f"{what}: must not be empty")
    if len(text) > limit:
        raise RequestRefused(413, f"{what}: longer than {limit} characters")
    return text


def check_k(state: ServiceState, k: int) -> int:
    """``k`` within the service's limit (400 otherwise)."""
    if k > state.service.max_k:
        raise RequestRefused(400, f"k: at most {state.service.max_k} here, got {k}")
    return k


def check_candidates(state: ServiceState, candidates: int) -> int:
    """``candidates`` within the service's limit (400 otherwise)."""
    if candidates > state.service.max_candidates:
        raise RequestRefused(400, f"candidates: at most {state.service.max_candidates} here, got {candidates}")
    return candidates


def check_limits(state: ServiceState, k: int | None, candidates: int | None) -> tuple[int, int]:
    """``(k, candidates)`` with the configured defaults filled in, within the service's limits (400)."""
    k = check_k(state, k or state.settings.retrieval.k)
    return k, check_candidates(state, candidates or max(state.settings.retrieval.rerank.candidates, k))


@dataclass
class Asking:
    """An ask under way for one caller: its events, and ``finish`` to keep what it returns."""

    state: ServiceState
    caller: Caller
    scope: Scope
    events: AskStream

    def finish(self, out: AskResult, complete: Completion | None = None) -> AskResult:
        """Complete ``out`` (``complete``), store it as the caller's trace and count it; returns it."""
        if complete is not None:
            out = complete(out)
        self.state.desk.save_trace(out, owner=self.caller.name, keep=self.state.service.trace_retention)
        self.state.metrics.record_ask(out, self.scope.day)
        return out


def start_ask(state: ServiceState, caller: Caller, order: AskOrder) -> Asking:
    """Check ``order`` and start answering it inside the caller's scope (nothing is stored yet)."""
    check_text(state, order.question, "question")
    if isinstance(order.scope, Scope):
        scope = order.scope
    else:
        scope = request_scope(caller, order.scope.model_dump(exclude_unset=True) if order.scope else None)
    k, candidates = check_limits(state, order.k, order.candidates)
    try:
        name = state.generator_name(order.generator)
        state.generator(name)  # built (and its queue sized) before the stream joins that queue
        events = state.desk.ask_stream(
            order.question, scope, generator=name, method=order.method, k=k, candidates=candidates, save=False,
            **order.options,
        )  # fmt: skip
    except ModelBusy as exc:
        raise ModelBusy(f"generator busy: {exc}", exc.retry_after) from None
    except (ImportError, FileNotFoundError, GenerationError) as exc:
        raise RequestRefused(503, f"generator not available: {exc}") from None
    return Asking(state, caller, scope, events)


def drain(events: AskStream) -> AskResult:
    """The final result of a stream read whole."""
    try:
        with events:
            for event in events:
                if isinstance(event, AnswerDone):
                    return event.result
    except GenerationError as exc:
        raise RequestRefused(503, f"generator failed: {exc}") from None
    raise RequestRefused(503, "the generator stopped before it finished its answer")


def ask_for(state: ServiceState, caller: Caller, order: AskOrder, complete: Completion | None = None) -> AskResult:
    """The whole recipe, unstreamed: check, ask, complete, store the trace, count it."""
    asking = start_ask(state, caller, order)
    return asking.finish(drain(asking.events), complete)


__all__ = [
    "AskOrder",
    "Asking",
    "Completion",
    "ask_for",
    "check_candidates",
    "check_k",
    "check_limits",
    "check_text",
    "drain",
    "start_ask",
]
