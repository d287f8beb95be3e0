"""Fuzzing the input surfaces: parsers, front matter, labels, config and queries.

Every input either works or raises the project's own error (IngestError, LabelError, ConfigError or
a ValueError naming the field); nothing else escapes, and no input runs past its time limit.
"""

from __future__ import annotations

import json
import string
import warnings
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from fpdf import FPDF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidencedesk.config import ConfigError, Settings, load_settings
from evidencedesk.documents import Document
from evidencedesk.evaluation.labels import Label, LabelError, LabelWarning, load_labels
from evidencedesk.ingest import IngestError, parse_html, parse_markdown, parse_pdf, parse_text
from evidencedesk.ingest.sync import ingest_folder
from tests.support.reliability import COUNTS, time_limit

LIMIT_S = 20.0  # one input may take at most this long (a hang, not a slow machine)
FUZZ = settings(
    max_examples=60,
    deadline=timedelta(seconds=10),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)

# -- strategies ---------------------------------------------------------------------------------------
nasty_chars = st.sampled_from(list("\x00\x01\x07\x1b\u200b\u202e\ufeff\ud7ff\U0001f600\\*+?[](){}^$|.#-:>`\t\r\n"))
nasty_text = st.text(alphabet=st.one_of(st.characters(), nasty_chars), max_size=400)
html_garbage = st.lists(
    st.sampled_from(
        [
            "<html>",
            "<body>",
            "</div>",
            "<h1>",
            "<h2 ",
            "<script>",
            "</script>",
            "<p>",
            "&amp;",
            "&#0;",
            "&#x110000;",
            "<!--",
            "-->",
            "<![CDATA[",
            "<meta charset=latin1>",
            "<title>",
            "</title>",
            "<table><tr><td>",
            "\x00",
            "word",
        ]
    ),
    max_size=60,
).map("".join)
yaml_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30), st.dates()
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
front_keys = st.sampled_from(
    ["id", "title", "version", "status", "valid_from", "valid_to", "audience", "lang", "tenant", "supersedes", "tags"]
)
front_matter = st.one_of(
    st.dictionaries(front_keys | st.text(max_size=8), yaml_values, max_size=8).map(
        lambda d: yaml.safe_dump(d, allow_unicode=True)
    ),
    nasty_text,
    st.sampled_from(
        [
            "id: [unclosed",
            "id: {a: 1",
            "- just\n- a list",
            "!!python/object:os.system 'x'",
            "&a [*a]",
            "a: &x 1\nb: *y",
            'id: "\\ud800"',
            ": :",
            "\t- bad indent",
        ]
    ),
)


def markdown_with(front: str, body: str, close: bool) -> str:
    return f"---\n{front}\n" + ("---\n" if close else "") + body


markdown_docs = st.builds(markdown_with, front_matter, nasty_text, st.booleans()).map(
    lambda s: s.encode("utf-8", "surrogatepass")
)
huge_lines = st.integers(1, 400_000).map(lambda n: b"# T\n\n" + b"x" * n + b"\n")
random_bytes = st.one_of(st.binary(max_size=2000), huge_lines, nasty_text.map(lambda s: s.encode("utf-8", "replace")))


def _pdf() -> bytes:
    pdf = FPDF()
    pdf.set_title("Fuzz")
    pdf.set_font("Helvetica", size=12)
    for n in range(2):
        pdf.add_page()
        pdf.multi_cell(0, 8, text=f"Page {n} says returns are accepted within 30 days.")
    return bytes(pdf.output())


GOOD_PDF = _pdf()
broken_pdfs = st.one_of(
    st.integers(0, len(GOOD_PDF)).map(lambda n: GOOD_PDF[:n]),
    st.tuples(st.integers(0, len(GOOD_PDF) - 1), st.binary(min_size=1, max_size=16)).map(
        lambda t: GOOD_PDF[: t[0]] + t[1] + GOOD_PDF[t[0] + len(t[1]) :]
    ),
    st.binary(max_size=500).map(lambda b: b"%PDF-1.7\n" + b),
)


def check_parse(parser: object, raw: bytes, rel: str) -> None:
    COUNTS["fuzz: parser inputs"] += 1
    try:
        with time_limit(LIMIT_S):
            doc = parser(raw, rel)  # type: ignore[operator]
    except IngestError as exc:
        assert exc.path == rel and exc.reason, exc
        assert str(exc).startswith(rel)
        return
    assert isinstance(doc, Document) and doc.path == rel and doc.text.strip()


# -- parsers ------------------------------------------------------------------------------------------
@FUZZ
@given(raw=st.one_of(markdown_docs, random_bytes))
def test_markdown_parser_takes_any_bytes(raw: bytes) -> None:
    check_parse(parse_markdown, raw, "fuzz/doc.md")


@FUZZ
@given(raw=random_bytes)
def test_text_parser_takes_any_bytes(raw: bytes) -> None:
    check_parse(parse_text, raw, "fuzz/doc.txt")


@FUZZ
@given(raw=st.one_of(html_garbage.map(lambda s: s.encode()), random_bytes))
def test_html_parser_takes_any_bytes(raw: bytes) -> None:
    check_parse(parse_html, raw, "fuzz/page.html")


@FUZZ
@given(raw=st.one_of(broken_pdfs, st.binary(max_size=300)))
def test_pdf_parser_takes_truncated_and_corrupted_pdfs(raw: bytes) -> None:
    check_parse(parse_pdf, raw, "fuzz/file.pdf")


def test_the_untouched_pdf_parses() -> None:  # the seed of the PDF fuzzing is itself a good PDF
    assert "30 days" in parse_pdf(GOOD_PDF, "good.pdf").text


# -- labels -------------------------------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
label_keys = st.sampled_from(["id", "question", "tags", "answerable", "gold", "answer", "reason", "evidence", "grade"])
label_like = st.dictionaries(label_keys, json_values, max_size=8).map(json.dumps)
label_lines = st.lists(st.one_of(label_like, json_values.map(json.dumps), nasty_text), max_size=6)


@FUZZ
@given(lines=label_lines, raw=st.one_of(st.none(), st.binary(max_size=200)))
def test_labels_loader_takes_any_lines(tmp_path: Path, lines: list[str], raw: bytes | None) -> None:
    COUNTS["fuzz: labels files"] += 1
    path = tmp_path / "labels.jsonl"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    # unknown fields are a documented LabelWarning, not a failure; any other warning is still an error
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error")
        warnings.simplefilter("always", LabelWarning)
        try:
            with time_limit(LIMIT_S):
                labels = load_labels(path)
        except LabelError as exc:
            assert str(path) in str(exc)
            return
    assert all(issubclass(w.category, LabelWarning) and str(path) in str(w.message) for w in caught)
    assert all(isinstance(x, Label) for x in labels)


# -- config -------------------------------------------------------------------------------------------
config_keys = st.sampled_from(
    [
        "store",
        "chunker",
        "retrieval",
        "context",
        "generator",
        "scope",
        "name",
        "size",
        "overlap",
        "k",
        "legs",
        "method",
        "fusion",
        "budget_tokens",
    ]
)
config_docs = st.one_of(
    st.recursive(
        yaml_scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(config_keys | st.text(max_size=6), inner, max_size=4)
        ),
        max_leaves=14,
    ).map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
    front_matter,
)


@FUZZ
@given(text=config_docs, raw=st.one_of(st.none(), st.binary(max_size=200)))
def test_config_loader_takes_any_yaml(tmp_path: Path, text: str, raw: bytes | None) -> None:
    COUNTS["fuzz: config files"] += 1
    path = tmp_path / "evidencedesk.yaml"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        with time_limit(LIMIT_S):
            loaded = load_settings(path)
    except ConfigError as exc:
        assert str(path) in str(exc)
        return
    assert isinstance(loaded, Settings)


# -- queries ------------------------------------------------------------------------------------------
queries = st.one_of(
    nasty_text,
    st.just(""),
    st.text(alphabet=string.punctuation, max_size=50),
    st.integers(1, 50_000).map(lambda n: "refund " * (n // 7) + "x" * (n % 7)),
    st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zs", "Mn"]), max_size=40),
)


@pytest.fixture(scope="module")
def searchers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.retrieval.factory import make_searcher
    from evidencedesk.store import Store
    from tests.support.reliability import write_versioned

    root = tmp_path_factory.mktemp("query-fuzz")
    write_versioned(root / "docs", 1, 6)
    with Store(root / "store") as s:
        ingest_folder(s, root / "docs", ChunkingConfig(name="structure", size=60))
        chunks = s.chunks()
    out = {m: make_searcher(m, chunks) for m in ("bm25", "tfidf", "lsa")}
    out["dense"] = make_searcher("dense", chunks, cache_path=root / "store" / "embeddings.sqlite")
    return out


@pytest.mark.parametrize("method", ["bm25", "tfidf", "lsa", "dense"])
def test_queries_never_break_a_searcher(searchers: dict[str, object], method: str) -> None:
    searcher = searchers[method]

    @settings(FUZZ, max_examples=40 if method == "dense" else 80)
    @given(query=queries, k=st.integers(1, 60))
    def run(query: str, k: int) -> None:
        COUNTS[f"fuzz: queries ({method})"] += 1
        try:
            with time_limit(LIMIT_S):
                hits = searcher.search(query, k)  # type: ignore[attr-defined]
        except ValueError as exc:
            assert "query" in str(exc) or "k" in str(exc), exc
            return
        assert len(hits) <= k
        assert len({h.chunk.id for h in hits}) == len(hits)

    run()
