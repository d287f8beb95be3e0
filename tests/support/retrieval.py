"""Test vectors and corpora for retrieval tests.

FARE_CHUNKS and FARE_QUERIES are six synthetic fare-rule chunks (c2 is last year's superseded
baggage rule) and five labelled queries from the spec's worked example.
"""

from __future__ import annotations

import ast
import json
import random
from datetime import date

import pytest

from evidencedesk.documents import Chunk, Location, Metadata
from tests.support.paths import KESTREL, SEEDS


def _spec_fare_rules() -> tuple[dict[str, tuple[str, str]], list[tuple[str, str]]]:
    """The spec's six synthetic fare-rule chunks and five queries, read from the spec itself.

    Its worked numbers (TF-IDF recall@1 0.60, recall@3 0.80; BM25 0.80 and 0.80) are properties of these
    exact strings, so the tests read them from ``shared/seeds`` instead of keeping a copy in the project.
    """
    for path in sorted(SEEDS.glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        at = text.find("CHUNKS = {")
        if at < 0:
            continue
        chunks_src = text[at + len("CHUNKS = ") : text.index("\n}", at) + 2]
        q_at = text.index("QUERIES = [", at)
        queries_src = text[q_at + len("QUERIES = ") : text.index(")]", q_at) + 2]
        chunks = ast.literal_eval(chunks_src)
        return {k: (v[0], v[1]) for k, v in chunks.items()}, [tuple(q) for q in ast.literal_eval(queries_src)]
    return {}, []


FARE_CHUNKS, FARE_QUERIES = _spec_fare_rules()


# Queries aimed at text the default scope must never show: staff-only notes, superseded and draft policies.
ATTACK_QUERIES = [
    "goodwill refund store manager GW-LATE internal discount code",
    "INTERNAL STAFF ONLY do not quote restocking fee waiver area manager sign-off",
    "return within 60 days store credit 10 business days bikes ridden up to 100 km",
    "loyalty points for every taka spent",
    "expired rule seventy-seven days zebra clause",
]


def chunk(cid: str, text: str, doc_id: str | None = None, **meta: object) -> Chunk:
    """A chunk with the given metadata fields (the rest default)."""
    return Chunk(cid, doc_id or cid.split(":")[0], text, metadata=Metadata(**meta), location=Location(("T",), 1, 2))


def fare_chunks() -> list[Chunk]:
    if not FARE_CHUNKS:
        pytest.skip(f"the spec's fare-rule example is not in {SEEDS}")
    return [chunk(f"{cid}:c0", text, cid, status=status) for cid, (status, text) in FARE_CHUNKS.items()]


def _expired() -> list[Chunk]:
    """Current, public chunks whose validity ended (or has not begun): the date check must hide them."""
    return [
        chunk("kc-expired:c0", "Expired rule: returns within seventy-seven days under the zebra clause.",
              status="current", valid_from=date(2019, 1, 1), valid_to=date(2020, 12, 31)),
        chunk("kc-future:c0", "Future rule: the zebra clause extends returns to ninety days.",
              status="current", valid_from=date(2099, 1, 1)),
    ]  # fmt: skip


def kestrel_chunks() -> list[Chunk] | None:
    """The bundled example corpus, parsed and chunked by the real pipeline, plus two out-of-date chunks."""
    docs_dir = KESTREL / "docs"
    if not docs_dir.is_dir() or not any(docs_dir.iterdir()):
        return None
    from evidencedesk.chunking import chunk_document
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.ingest import parse_folder

    docs = parse_folder(docs_dir).documents
    chunks = [c for d in docs for c in chunk_document(d, ChunkingConfig())]
    return chunks + _expired() if chunks else None


def kestrel_questions() -> list[str]:
    path = KESTREL / "labels.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


WORDS = [
    "refund",
    "return",
    "bike",
    "helmet",
    "warranty",
    "battery",
    "charge",
    "service",
    "staff",
    "discount",
    "code",
    "manager",
    "window",
    "days",
    "delivery",
    "payment",
    "card",
    "gift",
    "voucher",
    "loyalty",
    "points",
    "recall",
    "fork",
    "brake",
    "tyre",
    "size",
    "frame",
    "store",
    "hours",
]


def generated_corpus(n_docs: int = 40, seed: int = 7) -> list[Chunk]:
    """Random chunks with random metadata (every status, audience and validity case)."""
    rng = random.Random(seed)
    out = []
    for d in range(n_docs):
        status = rng.choice(["current", "current", "superseded", "draft"])
        audience = rng.choice(["public", "public", "staff"])
        valid_to = rng.choice([None, None, date(2020, 1, 1), date(2099, 1, 1)])
        for n in range(rng.randint(1, 3)):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 15)))
            out.append(chunk(f"g{d}:c{n}", text, f"g{d}", status=status, audience=audience, valid_to=valid_to))
    return out
