"""A deterministic generator of policy-like Markdown documents with metadata, built from SciFact text.

Every document has front matter (status, audience, language, tenant, validity dates, version) and
``sections`` sections of 2-4 consecutive sentences of one SciFact abstract plus one sentence from
another, under a heading naming the source article. The structure chunker turns each section into
one chunk, so ``n_docs * sections`` is the chunk count. The same arguments always give the same files.

Metadata is spread so that a filter on one tenant keeps 10% of the chunks: ten tenants in turn;
status current for 85%, audience public for 70%, validity from a date in 2020-2025, a quarter of
the documents with an end date.

The heading's source title also lets ``DerivedVectors`` give each chunk a vector made from the real
MiniLM embedding of its source article plus seeded noise (see bench/scale.py).

    python bench/corpus_gen.py OUT_DIR --docs 1000 [--sections 10]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np

TENANTS = [f"t{n}" for n in range(10)]
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")


@dataclass(frozen=True)
class Source:
    """One SciFact article: its title and sentences."""

    doc_id: str
    title: str
    sentences: tuple[str, ...]


def load_sources(scifact: Path) -> list[Source]:
    out = []
    with gzip.open(scifact / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            sentences = tuple(s.strip() for s in _SENTENCE.split(d["text"]) if len(s.split()) >= 4)
            if len(sentences) >= 2:
                out.append(Source(d["_id"], d["title"].strip(), sentences))
    return out


def _document(n: int, sources: list[Source], sections: int) -> str:
    rng = random.Random(n)
    start = date(2020, 1, 1) + timedelta(days=rng.randrange(6 * 365))
    meta = {
        "id": f"p{n:07d}",
        "title": f"Policy P-{n:07d}: {sources[rng.randrange(len(sources))].title}",
        "version": rng.randint(1, 9),
        "status": "current" if rng.random() < 0.85 else "superseded",
        "valid_from": start.isoformat(),
        "audience": "public" if rng.random() < 0.7 else "staff",
        "lang": "en",
        "tenant": TENANTS[n % len(TENANTS)],
    }
    if rng.random() < 0.25:
        meta["valid_to"] = (start + timedelta(days=rng.randrange(200, 1500))).isoformat()
    lines = ["---", *(f"{k}: {json.dumps(v) if isinstance(v, str) else v}" for k, v in meta.items()), "---", ""]
    lines += [f"# {meta['title']}", ""]
    for _ in range(sections):
        src = sources[rng.randrange(len(sources))]
        other = sources[rng.randrange(len(sources))]
        take = min(len(src.sentences), rng.randint(2, 4))
        first = rng.randrange(len(src.sentences) - take + 1)
        body = [*src.sentences[first : first + take], other.sentences[rng.randrange(len(other.sentences))]]
        lines += [f"## {src.title}", "", " ".join(body), ""]
    return "\n".join(lines)


def generate(out: Path, sources: list[Source], n_docs: int, sections: int = 10, first: int = 0) -> int:
    """Write documents ``first`` to ``first + n_docs - 1`` into ``out`` (100 per sub-folder); returns
    the number written."""
    for n in range(first, first + n_docs):
        folder = out / f"{n // 100:05d}"
        if n % 100 == 0 or n == first:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"p{n:07d}.md").write_text(_document(n, sources, sections), encoding="utf-8")
    return n_docs


class DerivedVectors:
    """Chunk vectors near the real embedding of each chunk's source article (its section heading).

    ``bases`` maps a SciFact title to its unit MiniLM vector. A chunk gets
    ``normalise(0.8 * base + 0.2 * document base + noise)``, the noise picked from a seeded bank by a
    hash of the chunk id, so vectors cluster like real near-duplicate passages and are repeatable.
    """

    def __init__(self, bases: dict[str, np.ndarray], noise: float = 0.03, bank: int = 1 << 16, seed: int = 0) -> None:
        self.bases = bases
        self.dim = len(next(iter(bases.values())))
        rng = np.random.default_rng(seed)
        self.bank = rng.normal(0.0, noise, size=(bank, self.dim)).astype(np.float32)
        self.fallback = np.full(self.dim, 1.0 / np.sqrt(self.dim), dtype=np.float32)

    def __call__(self, chunks: Sequence[Any]) -> np.ndarray:
        out = np.empty((len(chunks), self.dim), dtype=np.float32)
        for n, c in enumerate(chunks):
            path = c.location.heading_path
            base = self.bases.get(path[-1] if path else "", self.fallback)
            doc = self.bases.get(c.title.split(": ", 1)[-1], self.fallback) if c.title else self.fallback
            h = int.from_bytes(hashlib.blake2b(c.id.encode("utf-8"), digest_size=8).digest(), "little")
            out[n] = 0.8 * base + 0.2 * doc + self.bank[h % len(self.bank)]
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--sections", type=int, default=10)
    ap.add_argument("--scifact", type=Path, default=Path(__file__).resolve().parents[2] / "shared/datasets/scifact")
    args = ap.parse_args()
    n = generate(args.out, load_sources(args.scifact), args.docs, args.sections)
    print(f"wrote {n} documents to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
