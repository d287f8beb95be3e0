"""Second-stage rerankers: the protocol, a word-overlap baseline, a cross-encoder, and TwoStage."""

from evidencedesk.retrieval.rerank.base import Reranker, reordered
from evidencedesk.retrieval.rerank.overlap import OverlapReranker
from evidencedesk.retrieval.rerank.two_stage import Ceiling, TwoStage, ceiling


def get_reranker(
    spec: str | None, max_tokens: int = 256, fuse_weight: float = 1.0, min_score: float | None = None
) -> Reranker | None:
    """A reranker from its command-line name: ``none``, ``overlap``, ``cross-encoder`` (the bundled
    ms-marco-MiniLM-L-12-v2) or ``cross-encoder:PATH_OR_NAME``; ``max_tokens``, ``fuse_weight`` and
    ``min_score`` go to a cross-encoder."""
    if spec is None or spec.strip().lower() in ("", "none"):
        return None
    if spec == "overlap":
        return OverlapReranker()
    if spec == "cross-encoder" or spec.startswith("cross-encoder:"):
        from evidencedesk.retrieval.rerank.cross_encoder import CrossEncoderReranker

        model = spec.split(":", 1)[1] if ":" in spec else None
        return CrossEncoderReranker(model or None, max_tokens=max_tokens, fuse_weight=fuse_weight, min_score=min_score)
    raise ValueError(f"rerank: expected none, overlap, cross-encoder or cross-encoder:PATH, got {spec!r}")


__all__ = ["Ceiling", "OverlapReranker", "Reranker", "TwoStage", "ceiling", "get_reranker", "reordered"]
