"""Service-only settings, read from their own YAML file (``evidencedesk serve --keys FILE``).

The shared ``evidencedesk.yaml`` (``config.Settings``) says how to chunk, retrieve and answer; this
file says who may ask: API keys and the scope each one may see, whether a request without a key is
served (with the anonymous scope) or refused with 401, which server-side folder ingest may read,
the labels the lab and ``POST /eval`` use, and request, rate and cost limits. Example::

    allow_anonymous: false                  # the default once a keys file is given
    ingest_root: ./docs
    labels: ./my-labels.jsonl               # the lab's questions and POST /eval's (or serve --labels FILE)
    keys:
      - name: support-bot
        key_env: SUPPORT_BOT_KEY            # or key: "..." or key_sha256: "<hex digest>"
        scope: {audiences: [public], tenants: [kestrel]}
        limits: {requests: 60, cost: 120}   # per window_seconds; the default is ``limits`` below
      - name: staff-desk
        key_sha256: "9f86d08..."
        scope: {audiences: [public, staff], tenants: [kestrel]}
        ingest: true
      - name: ops
        key_env: OPS_KEY
        scope: {statuses: null, audiences: null}
        admin: true                         # sees every key's traces and evaluation runs

A key's ``scope`` lists allowed values per field; a missing field keeps the safe default
(``statuses: [current]``, ``audiences: [public]``, any language, tenant and document), and ``null``
allows any value. Without a keys file the service serves anonymous callers the public scope, listens
on loopback only, and refuses to start over a store holding several tenants until the tenants an
anonymous caller may see are named (see ``evidencedesk.server.access.check_startup``).
"""

from __future__ import annotations

import hashlib
import os
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evidencedesk import Scope
from evidencedesk.config import _explain as explain_errors
from evidencedesk.errors import ConfigError

_EXAMPLE_LABELS = Path(__file__).resolve().parents[3] / "examples" / "kestrel" / "labels.jsonl"
GENERATOR_NAMES = ("extractive", "llama-cpp", "openai")


def bundled_labels() -> Path | None:
    """The example corpus's labels file when the package runs from a source checkout, else None."""
    return _EXAMPLE_LABELS if _EXAMPLE_LABELS.is_file() else None


def digest(key: str) -> str:
    """The SHA-256 hex digest of a key; keys are compared as digests, in constant time."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScopeSpec(_Strict):
    """Allowed values per field (``None`` = any value). Defaults: current and public only."""

    statuses: list[str] | None = ["current"]
    audiences: list[str] | None = ["public"]
    langs: list[str] | None = None
    tenants: list[str] | None = None
    doc_ids: list[str] | None = None
    valid_at: date | None = None
    check_validity: bool = True

    def to_scope(self) -> Scope:
        def fs(values: list[str] | None) -> frozenset[str] | None:
            return frozenset(values) if values is not None else None

        return Scope(
            statuses=fs(self.statuses),
            audiences=fs(self.audiences),
            langs=fs(self.langs),
            tenants=fs(self.tenants),
            doc_ids=fs(self.doc_ids),
            valid_at=self.valid_at,
            check_validity=self.check_validity,
        )

    @model_validator(mode="after")
    def _not_empty(self) -> ScopeSpec:
        for name in ("statuses", "audiences", "langs", "tenants", "doc_ids"):
            if getattr(self, name) == []:
                raise ValueError(f"{name}: an empty list would allow nothing; use null to allow any value")
        return self


class LimitSpec(_Strict):
    """Per-key limits on the costly routes (``/ask``, ``/eval``, ``/lab/...``, ``/ingest``) over a sliding
    window: at most ``requests`` calls and ``cost`` units (see ``CostSpec``); past either the answer is
    429 with Retry-After. ``null`` turns that limit off."""

    requests: int | None = Field(120, ge=1)
    cost: int | None = Field(600, ge=1)
    window_seconds: float = Field(60.0, gt=0)


class CostSpec(_Strict):
    """What one call of each limited route costs against a key's ``limits.cost``."""

    ask: int = Field(1, ge=0)
    lab: int = Field(1, ge=0)
    eval: int = Field(20, ge=0)  # scores every labelled question, possibly with several methods
    ingest: int = Field(10, ge=0)  # parses, chunks and rebuilds the index


RESERVED_NAMES = frozenset({"anonymous"})  # a key's name is its rate bucket and its records' owner


class KeySpec(_Strict):
    """One API key: exactly one of ``key`` (the key itself), ``key_env`` (an environment variable
    holding it) or ``key_sha256`` (its hex digest), the scope it may see, and what else it may do."""

    name: str = Field(min_length=1)
    key: str | None = Field(None, min_length=16)
    key_env: str | None = None
    key_sha256: str | None = Field(None, pattern=r"^[0-9a-fA-F]{64}$")
    scope: ScopeSpec = ScopeSpec()
    ingest: bool = False  # may call POST /ingest
    choose_date: bool = False  # may set a request scope's valid_at (look at another day's documents)
    admin: bool = False  # sees every key's traces and evaluation runs (each still checked against its scope)
    limits: LimitSpec | None = None  # None: the service-wide ``limits``

    @model_validator(mode="after")
    def _one_secret(self) -> KeySpec:
        if self.name.strip().lower() in RESERVED_NAMES or self.name != self.name.strip():
            raise ValueError(
                f"key name {self.name!r} is reserved or padded: {', '.join(sorted(RESERVED_NAMES))} names callers "
                "without a key (their rate limits and records), and a name may not start or end with spaces"
            )
        given = [n for n in ("key", "key_env", "key_sha256") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(f"key {self.name!r}: give exactly one of key, key_env, key_sha256 (got {given or 'none'})")
        return self

    def secret_digest(self) -> str:
        """The digest this key is checked against; ``key_env`` is read now and must be set."""
        if self.key_sha256 is not None:
            return self.key_sha256.lower()
        if self.key is not None:
            return digest(self.key)
        value = os.environ.get(self.key_env or "", "")
        if len(value) < 16:
            raise ConfigError(f"key {self.name!r}: environment variable {self.key_env} is unset or under 16 characters")
        return digest(value)


class ServiceSettings(_Strict):
    allow_anonymous: bool = False  # a request without a key: refused with 401 unless this is true
    anonymous_scope: ScopeSpec = ScopeSpec()
    anonymous_limits: LimitSpec | None = None  # None: the service-wide ``limits`` (shared by every anonymous caller)
    anonymous_eval: bool = False  # may a caller without a key run POST /eval?
    anonymous_lab: bool = False  # may a caller without a key re-chunk in the lab (a new index per chunker)?
    keys: list[KeySpec] = []
    ingest_root: Path | None = None  # server-side folders POST /ingest may read; None: path ingest is off
    # labels for the lab and POST /eval (``serve --labels`` overrides it); None: the bundled example's labels,
    # used only over a store holding the example corpus (ServiceState.labels)
    labels: Path | None = None
    generators: list[str] = ["extractive"]  # generators a request may name (built from the shared config)
    max_k: int = Field(50, ge=1, le=1000)
    max_query_chars: int = Field(2000, ge=1)
    max_body_bytes: int = Field(1_000_000, ge=1)  # JSON request bodies (uploads have their own limits)
    max_upload_bytes: int = Field(10_000_000, ge=1)
    max_upload_files: int = Field(200, ge=1)
    max_candidates: int = Field(200, ge=1, le=10_000)  # candidate depth ``/ask`` may fetch before reranking
    max_request_seconds: float = Field(60.0, gt=0)  # every route but /ingest; past it the answer is 408
    # requests that may wait for a local model (llama-cpp) while one runs; past it /ask answers 503 with
    # Retry-After. One model instance serves the whole process.
    model_queue: int = Field(4, ge=0, le=1000)
    lab_cache: int = Field(8, ge=1, le=256)  # re-chunked corpora (with their searchers) kept in memory
    # a request that would hold every chunk in memory (TF-IDF or LSA, BM25 or dense without a usable
    # snapshot, re-chunking in the lab, the size series of /eval) is refused (413) over a store with more
    # chunks than this; BM25 and dense over the snapshot, and PostgreSQL, serve any size
    max_memory_chunks: int = Field(200_000, ge=1)
    limits: LimitSpec = LimitSpec()  # per key, unless the key sets its own
    costs: CostSpec = CostSpec()
    trace_retention: int = Field(10_000, ge=1)  # traces kept (the newest); older ones are deleted

    @model_validator(mode="after")
    def _check(self) -> ServiceSettings:
        names = [k.name for k in self.keys]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"keys: duplicate name(s) {', '.join(dupes)}")
        unknown = [g for g in self.generators if g not in GENERATOR_NAMES]
        if unknown:
            raise ValueError(f"generators: unknown {', '.join(unknown)}; choose from {', '.join(GENERATOR_NAMES)}")
        return self

    def labels_path(self) -> Path | None:
        return self.labels if self.labels is not None else bundled_labels()


def parse_service_settings(data: Any, source: str = "service settings", base: Path | None = None) -> ServiceSettings:
    """Validate a mapping into ServiceSettings (ConfigError naming the key); relative paths are taken from ``base``."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys, got {type(data).__name__}")
    try:
        settings = ServiceSettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(explain_errors(exc, source)) from None
    if base is not None:
        changes = {
            name: base / value
            for name in ("ingest_root", "labels")
            if (value := getattr(settings, name)) is not None and not value.is_absolute()
        }
        settings = settings.model_copy(update=changes)
    for spec in settings.keys:
        spec.secret_digest()  # a key_env that is unset fails at start, not at the first request
    return settings


def no_keys_file() -> ServiceSettings:
    """The settings without a keys file: no keys, anonymous callers get the public scope (and
    ``check_startup`` then allows loopback only and a store of one tenant unless tenants are named)."""
    return ServiceSettings(allow_anonymous=True)


def load_service_settings(path: str | Path | None) -> ServiceSettings:
    """Read the keys file (None: ``no_keys_file()``). Relative paths are relative to the file."""
    if path is None:
        return no_keys_file()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: service settings file not found") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    return parse_service_settings(data, str(path), path.resolve().parent)


__all__ = [
    "GENERATOR_NAMES",
    "CostSpec",
    "KeySpec",
    "LimitSpec",
    "RESERVED_NAMES",
    "ScopeSpec",
    "ServiceSettings",
    "bundled_labels",
    "digest",
    "load_service_settings",
    "no_keys_file",
    "parse_service_settings",
]
