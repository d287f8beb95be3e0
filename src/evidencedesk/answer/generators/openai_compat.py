"""A generator that calls any OpenAI-compatible ``/v1/chat/completions`` endpoint over HTTP.

vLLM, Ollama, llama.cpp's server and hosted services all speak this protocol. Configuration comes
from the arguments or the environment (``EVIDENCEDESK_OPENAI_BASE_URL``, ``EVIDENCEDESK_OPENAI_MODEL``,
``EVIDENCEDESK_OPENAI_API_KEY``, falling back to ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``). The API
key is sent as a bearer token and never appears in a repr or an error message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.generators.parse import GenerationError, chat_messages, parse_reply
from evidencedesk.retrieval.candidates import Candidate

ENV_BASE_URL = ("EVIDENCEDESK_OPENAI_BASE_URL", "OPENAI_BASE_URL")
ENV_MODEL = ("EVIDENCEDESK_OPENAI_MODEL",)
ENV_API_KEY = ("EVIDENCEDESK_OPENAI_API_KEY", "OPENAI_API_KEY")


def _from_env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def api_root(base_url: str) -> str:
    """The API root ending in ``/v1`` (or whatever version path the URL already names).

    ``http://host:8000`` becomes ``http://host:8000/v1``; ``http://host:8000/v1`` and
    ``https://example.com/openai/v2`` are kept as given (without a trailing slash).
    """
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}")
    return url if parts.path not in ("", "/") else url + "/v1"


class OpenAIGenerator:
    """Answers through an OpenAI-compatible chat completions endpoint.

    ``model=None`` (and no ``EVIDENCEDESK_OPENAI_MODEL``) asks the server's ``/v1/models`` on first use
    and takes the first model it lists, which suits single-model servers such as llama.cpp's.
    Requests ask for greedy decoding with a fixed seed, but replies are only as repeatable as the
    server: llama.cpp's server, for one, reuses a cached prompt prefix, which can tip a near tie
    in a small model's greedy choice between two identical requests.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 60,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = 0,
    ) -> None:
        url = base_url or _from_env(ENV_BASE_URL)
        if not url:
            raise ValueError(
                "base_url: no OpenAI-compatible endpoint configured; pass base_url or set "
                "EVIDENCEDESK_OPENAI_BASE_URL (or OPENAI_BASE_URL), e.g. http://127.0.0.1:8000/v1"
            )
        if not timeout or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        if not 0.0 <= temperature <= 2.0:
            raise ValueError(f"temperature must be between 0 and 2, got {temperature}")
        self.base_url = api_root(url)
        self.model = model or _from_env(ENV_MODEL)
        self._api_key = api_key or _from_env(ENV_API_KEY)
        self.timeout = float(timeout)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"OpenAIGenerator(base_url={self.base_url!r}, model={self.model!r}, api_key=<{key}>)"

    # -- HTTP -----------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _request(self, method: str, path: str, body: Mapping[str, object] | None = None) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        try:
            with httpx.Client(timeout=self.timeout) as client:
                response = client.request(method, url, json=body, headers=self._headers())
        except httpx.TimeoutException as exc:
            raise GenerationError(f"{url} gave no reply within {self.timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise GenerationError(self._scrub(f"could not reach {url}: {exc}")) from exc
        if response.status_code >= 400:
            detail = " ".join(response.text.split())[:300]
            raise GenerationError(self._scrub(f"{url} answered HTTP {response.status_code}: {detail}"))
        try:
            data = response.json()
        except ValueError as exc:
            raise GenerationError(f"{url} did not answer with JSON") from exc
        if not isinstance(data, dict):
            raise GenerationError(f"{url} answered with JSON that is not an object")
        return data

    def resolve_model(self) -> str:
        """The model name to send: the configured one, else the first one the server lists."""
        if self.model:
            return self.model
        data = self._request("GET", "/models")
        models = [m.get("id") for m in data.get("data") or [] if isinstance(m, dict) and m.get("id")]
        if not models:
            raise GenerationError(f"{self.base_url}/models lists no model; pass model or set EVIDENCEDESK_OPENAI_MODEL")
        self.model = str(models[0])
        return self.model

    def chat(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        """Send chat messages and return the reply's text."""
        body: dict[str, object] = {
            "model": self.resolve_model(),
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": max_tokens or self.max_tokens,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        data = self._request("POST", "/chat/completions", body)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise GenerationError(f"{self.base_url}/chat/completions answered without choices[0].message") from exc
        return content if isinstance(content, str) else ""

    # -- Generator --------------------------------------------------------------------------------

    def generate(self, question: str, context: list[Candidate], prompt: str) -> Generation:
        return parse_reply(self.chat(chat_messages(question, context)))
