"""Route dependencies: the shared state, the calling key (documented in OpenAPI), and the request scope."""

from __future__ import annotations

from typing import Annotated, NoReturn

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from evidencedesk.retrieval.scope import Scope
from evidencedesk.server.access import Caller, parse_credentials, request_scope
from evidencedesk.server.limits import route_cost, too_many
from evidencedesk.server.models import ScopeRequest
from evidencedesk.server.state import ServiceState

_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key from the service settings.")
_bearer = HTTPBearer(auto_error=False, description="The same API key as a bearer token.")


def get_state(request: Request) -> ServiceState:
    return request.app.state.service  # type: ignore[no-any-return]


def refuse(status: int, message: str) -> NoReturn:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    raise HTTPException(status, message, headers=headers)


def get_caller(
    request: Request,
    state: Annotated[ServiceState, Depends(get_state)],
    api_key: Annotated[str | None, Security(_api_key)] = None,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None,
) -> Caller:
    """The caller of this request: 401 for an unknown, blank or malformed key (read from the raw
    headers, so a malformed one is never taken for "no key"), or for no key when anonymous access is
    off; 429 with Retry-After when a limited route would pass the caller's rate or cost limit."""
    presented = parse_credentials(request.headers.get("x-api-key"), request.headers.get("authorization"))
    caller = state.keys.identify(presented)
    cost = route_cost(request.method, request.url.path, state.service.costs)
    if cost is not None:
        wait = state.limiter.charge(caller.name, caller.limits, cost)
        if wait is not None:
            raise too_many(wait, caller.limits)
    return caller


def scope_for(caller: Caller, requested: ScopeRequest | None) -> Scope:
    """The caller's scope narrowed by the request's: a malformed scope raises ValueError (400), a refused
    one AccessError (403), both answered by the service's one error handler."""
    return request_scope(caller, requested.model_dump(exclude_unset=True) if requested is not None else None)


def check_text(state: ServiceState, text: str, what: str) -> str:
    limit = state.service.max_query_chars
    if not text.strip():
        refuse(400, f"{what}: must not be empty")
    if len(text) > limit:
        refuse(413, f"{what}: longer than {limit} characters")
    return text


def check_k(state: ServiceState, k: int) -> int:
    if k > state.service.max_k:
        refuse(400, f"k: at most {state.service.max_k} here, got {k}")
    return k


def check_candidates(state: ServiceState, candidates: int) -> int:
    if candidates > state.service.max_candidates:
        refuse(400, f"candidates: at most {state.service.max_candidates} here, got {candidates}")
    return candidates


StateDep = Annotated[ServiceState, Depends(get_state)]
CallerDep = Annotated[Caller, Depends(get_caller)]

__all__ = [
    "CallerDep",
    "StateDep",
    "check_candidates",
    "check_k",
    "check_text",
    "get_caller",
    "get_state",
    "refuse",
    "scope_for",
]
