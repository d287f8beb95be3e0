"""``POST /v1/chat/completions`` and ``GET /v1/models``: the service in the OpenAI chat wire format.

Any OpenAI client (the ``openai`` package, Open WebUI, LibreChat) can point its base URL at
``http://HOST:PORT/v1`` and use an evidencedesk API key as its API key. The last message must come
from the user: its text is the question, answered exactly as ``POST /ask`` answers it (same key,
same scope, same rate limit, same stored trace). Earlier messages and sampling options
(``temperature``, ``max_tokens`` ...) do not change the answer: it comes from the documents only.

The answer text keeps its citation markers (``[DOC:cN]`` after each sentence) and ends with a
``Sources:`` list naming each cited chunk's file and place in it (headings, lines, pages), since
chat front ends show the text only. The response's extra ``evidencedesk`` object carries the trace
id, whether the answer abstained and why, and each cited chunk with its document, title and
location. An abstention is an ordinary answer. With ``stream: true`` the answer is sent as
server-sent events once it has been made and checked (unsupported sentences are dropped before
anything is sent, and the request's time limit applies as on ``/ask``): the role, one chunk per
line of the answer, a last chunk with ``finish_reason: "stop"`` and the ``evidencedesk`` object,
then ``data: [DONE]``.

Every error on these routes, a refused key included, is in OpenAI's shape:
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, JsonValue
from starlette.exceptions import HTTPException as StarletteHTTPException

from evidencedesk.errors import ConfigError, EvidencedeskError, ModelBusy, RequestRefused, http_status
from evidencedesk.results.ask import AskResult
from evidencedesk.server.access import Caller
from evidencedesk.server.asking import AskOrder, ask_for
from evidencedesk.server.deps import CallerDep, StateDep
from evidencedesk.server.models import Method, ScopeRequest
from evidencedesk.server.state import ServiceState

MODEL = "evidencedesk"  # the configured generator; ``evidencedesk-NAME`` picks an enabled one by name
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
    503: "service_unavailable_error",
}


class OpenAIError(Exception):
    """A refusal to answer in OpenAI's error shape."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code


def error_body(status: int, message: str, param: str | None = None, code: str | None = None) -> dict[str, JsonValue]:
    """``{"error": {...}}`` as OpenAI's API writes it."""
    kind = ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def error_response(
    status: int,
    message: str,
    param: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(error_body(status, message, param, code), status, headers=dict(headers or {}))


def _validation_message(errors: Any) -> tuple[str, str | None]:
    """The first validation error as a sentence, and the request field it names (``messages[0].role``)."""
    first = next(iter(errors), None)
    if not isinstance(first, Mapping):
        return "invalid request body", None
    loc = [p for p in first.get("loc", ()) if p != "body"]
    param = ""
    for part in loc:
        param += f"[{part}]" if isinstance(part, int) else (f".{part}" if param else str(part))
    text = str(first.get("msg", "invalid value"))
    return (f"{param}: {text}" if param else text), (param or None)


_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded"}


class OpenAIRoute(APIRoute):
    """A route whose every refusal, from its dependencies (the API key, the rate limit) and its body
    validation included, is answered in OpenAI's error shape instead of FastAPI's ``{"detail": ...}``."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def respond(request: Request) -> Response:
            try:
                return await handler(request)
            except OpenAIError as exc:
                return error_response(exc.status, exc.message, exc.param, exc.code)
            except StarletteHTTPException as exc:
                return error_response(exc.status_code, str(exc.detail), None, _CODES.get(exc.status_code), exc.headers)
            except RequestValidationError as exc:
                message, param = _validation_message(exc.errors())
                return error_response(400, message, param)
            except (EvidencedeskError, ValueError) as exc:  # the status errors.ERROR_TABLE gives it, as elsewhere
                status = http_status(exc)
                message = exc.message if isinstance(exc, RequestRefused) else str(exc)
                headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
                if isinstance(exc, ModelBusy):
                    headers = {"Retry-After": str(exc.retry_after)}
                return error_response(status, message, None, _CODES.get(status), headers)

        return respond


router = APIRouter(tags=["openai"], route_class=OpenAIRoute)


class ChatMessage(BaseModel):
    """One message; ``content`` is a string or a list of parts of which only ``text`` parts are read."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """The OpenAI chat request. Unknown fields (``temperature``, ``user`` ...) are accepted and not used;
    ``scope``, ``method`` and ``k`` are evidencedesk's own (``extra_body`` in the ``openai`` client)."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[ChatMessage]
    stream: bool = False
    n: int | None = Field(None, description="Only 1 (one answer per question).")
    scope: ScopeRequest | None = Field(None, description="Narrows the key's scope, as on /ask.")
    method: Method | None = Field(None, description="Retrieval method (default: the configured one).")
    k: int | None = Field(None, ge=1, description="Chunks passed to the context (default: the configured k).")


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = Field(None, description="The request field at fault (``messages[1].role``), if one is.")
    code: str | None = Field(None, description="``invalid_api_key``, ``model_not_found``, ``rate_limit_exceeded``.")


class ErrorOut(BaseModel):
    """OpenAI's error shape."""

    error: ErrorDetail


class CitationOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    chunk_id: str
    doc_id: str
    title: str
    source: str = Field(description="The document's file.")
    location: str


class ExtraOut(BaseModel):
    """evidencedesk's own part of a completion (and of the last chunk of a stream)."""

    trace_id: str
    abstained: bool
    abstain_reason: str
    citations: list[CitationOut] = Field(description="Each cited chunk, in the order of its first marker.")


class AnswerMessage(BaseModel):
    role: Literal["assistant"]
    content: str = Field(
        description="The answer with a [chunk id] marker after each sentence and a closing 'Sources:' list "
        "(each cited chunk's file and place in it), or the abstention."
    )
    refusal: None = None


class ChoiceOut(BaseModel):
    index: int
    message: AnswerMessage
    finish_reason: Literal["stop"]
    logprobs: None = None


class ChatCompletionOut(BaseModel):
    """A ``chat.completion``; with ``stream: true``, ``chat.completion.chunk`` server-sent events instead."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[ChoiceOut]
    evidencedesk: ExtraOut


class ModelOut(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[ModelOut]


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "Bad input: no messages, a last message not the user's, a bad field."},
    401: {"model": ErrorOut, "description": "No key (when anonymous access is off), or a malformed or unknown key."},
    403: {"model": ErrorOut, "description": "A scope the key may not ask for."},
    404: {"model": ErrorOut, "description": "An unknown model (code model_not_found)."},
    429: {"model": ErrorOut, "description": "The key's rate or cost limit (Retry-After says when to retry)."},
    # a malformed body is a 400 here too (never FastAPI's 422), so no 422 is listed
    "4XX": {"model": ErrorOut, "description": "Any other refusal, in the same shape."},
}


def model_ids(state: ServiceState) -> list[str]:
    """``evidencedesk`` (the configured generator) and ``evidencedesk-NAME`` for each enabled generator."""
    return [MODEL] + [f"{MODEL}-{name}" for name in state.service.generators]


def generator_for(state: ServiceState, model: str) -> str:
    """The enabled generator a model id names (404 ``model_not_found`` for any other id)."""
    known = model_ids(state)
    if model not in known:
        raise OpenAIError(
            404, f"model {model!r} does not exist here; choose from {', '.join(known)}", "model", "model_not_found"
        )
    try:
        return state.generator_name(None if model == MODEL else model.removeprefix(f"{MODEL}-"))
    except ConfigError as exc:
        raise OpenAIError(400, str(exc), "model") from None


def _text(message: ChatMessage, where: str) -> str:
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    parts = []
    for i, part in enumerate(message.content):
        if part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise OpenAIError(400, f"{where}.content[{i}]: only text parts are read here", f"{where}.content")
        parts.append(part["text"])
    return "\n".join(parts)


def question_of(messages: list[ChatMessage]) -> str:
    """The text of the last message, which must be the user's (400 naming the field otherwise)."""
    if not messages:
        raise OpenAIError(400, "messages: must hold at least one message (the question, from the user)", "messages")
    where = f"messages[{len(messages) - 1}]"
    last = messages[-1]
    if last.role != "user":
        raise OpenAIError(
            400, f"{where}.role: the last message must come from the user (it is the question), got {last.role!r}",
            f"{where}.role",
        )  # fmt: skip
    text = _text(last, where)
    if not text.strip():
        raise OpenAIError(400, f"{where}.content: the question must not be empty", f"{where}.content")
    return text


def message_text(result: AskResult) -> str:
    """The message text: the answer, then a ``Sources:`` line per citation with its file and place
    (chat front ends show only the text, never the ``evidencedesk`` object)."""
    cited = [(cid, w) for cid in result.citations if (w := result.sources.get(cid)) is not None and w.source]
    if not cited:
        return result.answer
    lines = [f"- [{cid}] {where.source}: {where.location or '(top)'}" for cid, where in cited]
    return result.answer.rstrip() + "\n\nSources:\n" + "\n".join(lines)


def extra(result: AskResult) -> dict[str, JsonValue]:
    """The ``evidencedesk`` object of a completion (``ExtraOut``): the trace, the abstention and the citations."""
    cited: list[JsonValue] = [dict(c) for c in result.cited()]
    return {
        "trace_id": result.trace_id,
        "abstained": result.abstained,
        "abstain_reason": result.abstain_reason,
        "citations": cited,
    }


def completion(result: AskResult, model: str, created: int) -> dict[str, JsonValue]:
    """A ``chat.completion`` object (``ChatCompletionOut``) for one answer (``Desk.ask``'s result)."""
    return {
        "id": f"chatcmpl-{result.trace_id}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": message_text(result), "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "evidencedesk": extra(result),
    }


def _chunk(
    ident: str, model: str, created: int, delta: dict[str, JsonValue], finish: str | None
) -> dict[str, JsonValue]:
    return {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


def _sse(data: Mapping[str, JsonValue]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def stream_events(result: AskResult, model: str, created: int) -> Iterator[str]:
    """The server-sent events of one answer: the role, the checked answer line by line, the last chunk
    with the ``evidencedesk`` object, then ``[DONE]``."""
    ident = f"chatcmpl-{result.trace_id}"
    yield _sse(_chunk(ident, model, created, {"role": "assistant", "content": ""}, None))
    for line in message_text(result).splitlines(keepends=True):
        yield _sse(_chunk(ident, model, created, {"content": line}, None))
    last = _chunk(ident, model, created, {}, "stop")
    last["evidencedesk"] = extra(result)
    yield _sse(last)
    yield "data: [DONE]\n\n"


def answer(state: ServiceState, caller: Caller, body: ChatRequest, question: str, generator: str) -> AskResult:
    """The answer as ``POST /ask`` makes it (``server.asking``): the same checks and limits, the trace
    stored for the caller's key and the answer counted in the metrics."""
    return ask_for(state, caller, AskOrder(question, body.scope, generator, body.method, body.k))


@router.post(
    "/v1/chat/completions",
    response_model=None,
    responses={
        200: {"model": ChatCompletionOut, "content": {"text/event-stream": {}}, "description": "The answer."},
        **ERRORS,
    },
)
def chat_completions(body: ChatRequest, state: StateDep, caller: CallerDep) -> Response:
    """Answer the last user message from the documents inside the key's scope, as ``POST /ask`` does."""
    generator = generator_for(state, body.model)
    if body.n not in (None, 1):
        raise OpenAIError(400, f"n: only 1 answer per question, got {body.n}", "n")
    question = question_of(body.messages)
    # the answer is made (and checked) before the first byte, streamed or not: the request's time limit
    # applies to it, a failure is an HTTP status, and no sentence the validation drops is ever sent
    result = answer(state, caller, body, question, generator)
    created = int(time.time())
    if body.stream:
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream_events(result, body.model, created), media_type="text/event-stream",
                                 headers=headers)  # fmt: skip
    return JSONResponse(completion(result, body.model, created))


@router.get("/v1/models", response_model=None, responses={200: {"model": ModelList}, 401: ERRORS[401]})
def list_models(state: StateDep, caller: CallerDep) -> Response:
    """The model ids ``/v1/chat/completions`` accepts: one per enabled generator, and ``evidencedesk``."""
    del caller  # a key is checked as on every data route
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "evidencedesk"} for name in model_ids(state)]
    return JSONResponse({"object": "list", "data": data})


__all__ = ["MODEL", "OpenAIError", "OpenAIRoute", "completion", "error_body", "message_text", "model_ids", "router"]
