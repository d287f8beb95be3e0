"""Route dependencies: the shared state, the calling key (documented in OpenAPI), and the request scope."""

from __future__ import annotations

from typing import Annotated, NoReturn

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from evidencedesk import Scope
from evidencedesk.server.access import AccessError, Caller, parse_credentials, request_scope
from evidencedesk.server.asking import check_candidates, check_k, check_text  # the limits, checked in one place
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


def _one(request: Request, header: str) -> str | None:
    """The value of a header sent once (or repeated with one value); AccessError(401) for different values,
    so a request never passes with whichever of two keys a proxy or framework happens to read."""
    values = request.headers.getlist(header)
    if len(set(values)) > 1:
        raise AccessError(401, f"the {header} header is sent {len(values)} times with different values")
    return values[0] if values else None


def get_caller(
    request: Request,
    state: Annotated[ServiceState, Depends(get_state)],
    api_key: Annotated[str | None, Security(_api_key)] = None,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None,
) -> Caller:
    """The caller of this request: 401 for an unknown, blank or malformed key (read from the raw
    headers, so a malformed one is never taken for "no key"), or for no key when anonymous access is
    off; 429 with Retry-After when a limited route would pass the caller's rate or cost limit."""
    presented = parse_credentials(_one(request, "x-api-key"), _one(request, "authorization"))
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
