"""Maximal marginal relevance: re-order candidates so the top k are relevant but not repetitive.

Step by step it picks the candidate with the highest ``lambda_ * relevance - (1 - lambda_) *
(its highest similarity to any candidate already picked)`` (Carbonell and Goldstein, 1998).

Relevance is the cosine between ``query_vec`` and the candidates' ``vectors`` when both are given,
else the candidates' own scores min-max normalised to [0, 1]. Chunk-to-chunk similarity is
``similarity(a, b)`` when given, else the cosine of ``vectors``, else the TF-IDF cosine of the
candidates' texts. Ties go to the candidate that came first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Part
from evidencedesk.retrieval.row_searcher import check_k
from evidencedesk.text.words import token_pattern

Similarity = Callable[[Chunk, Chunk], float]
Vectors = np.ndarray | Mapping[str, np.ndarray]


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)
    return unit


def _matrix(candidates: Sequence[Candidate], vectors: Vectors) -> np.ndarray:
    if isinstance(vectors, Mapping):
        missing = [c.chunk.id for c in candidates if c.chunk.id not in vectors]
        if missing:
            raise ValueError(f"vectors: no vector for chunk(s) {', '.join(missing[:5])}")
        m = np.array([np.asarray(vectors[c.chunk.id], dtype=np.float64) for c in candidates])
    else:
        m = np.asarray(vectors, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != len(candidates):
        raise ValueError(f"vectors: expected one row per candidate ({len(candidates)}), got shape {m.shape}")
    return _unit(m)


def text_similarity(chunks: Sequence[Chunk]) -> np.ndarray:
    """Pairwise TF-IDF cosine of the chunks' texts (fitted on these texts only)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        x = TfidfVectorizer(token_pattern=token_pattern()).fit_transform([c.text for c in chunks])
    except ValueError:  # no words in any text
        return np.zeros((len(chunks), len(chunks)))
    similarity: np.ndarray = (x @ x.T).toarray()
    return similarity


def _relevance(candidates: Sequence[Candidate], query_vec: np.ndarray | None, unit: np.ndarray | None) -> np.ndarray:
    if query_vec is not None:
        if unit is None:
            raise ValueError("query_vec: needs vectors for the candidates too")
        q = np.asarray(query_vec, dtype=np.float64).ravel()
        if q.shape[0] != unit.shape[1]:
            raise ValueError(f"query_vec: dimension {q.shape[0]} does not match the vectors' {unit.shape[1]}")
        norm = float(np.linalg.norm(q))
        return unit @ (q / norm) if norm > 0 else np.zeros(len(candidates))
    scores = np.array([float(c.score) for c in candidates])
    lo, hi = scores.min(), scores.max()
    return (scores - lo) / (hi - lo) if hi > lo else np.ones(len(candidates))


def mmr(
    candidates: Sequence[Candidate],
    k: int = 10,
    lambda_: float = 0.5,
    *,
    query_vec: np.ndarray | None = None,
    vectors: Vectors | None = None,
    similarity: Similarity | None = None,
    source: str = "mmr",
) -> list[Candidate]:
    """The best ``k`` candidates by maximal marginal relevance, numbered from 1.

    Each result's score is its marginal value when picked; ``parts`` keep where it came from.
    """
    k = check_k(k)
    if not 0 <= lambda_ <= 1:
        raise ValueError(f"lambda_: must be between 0 and 1, got {lambda_!r}")
    if not candidates:
        return []
    unit = _matrix(candidates, vectors) if vectors is not None else None
    relevance = _relevance(candidates, query_vec, unit)
    if similarity is not None:
        chunks = [c.chunk for c in candidates]
        sim = np.array([[float(similarity(a, b)) for b in chunks] for a in chunks])
    elif unit is not None:
        sim = unit @ unit.T
    else:
        sim = text_similarity([c.chunk for c in candidates])

    n = len(candidates)
    picked: list[tuple[int, float]] = []
    free = np.ones(n, dtype=bool)
    closest = np.full(n, -np.inf)  # each candidate's highest similarity to anything picked so far
    for _ in range(min(k, n)):
        redundancy = np.where(np.isfinite(closest), closest, 0.0)
        value = lambda_ * relevance - (1 - lambda_) * redundancy
        value[~free] = -np.inf
        best = int(np.argmax(value))  # the first maximum: ties go to the earlier candidate
        picked.append((best, float(value[best])))
        free[best] = False
        closest = np.maximum(closest, sim[:, best])

    out = []
    for rank, (i, picked_value) in enumerate(picked, 1):
        c = candidates[i]
        parts = c.parts or (Part(c.source, c.rank, float(c.score)),)
        out.append(Candidate(c.chunk, picked_value, rank, source, parts))
    return out
