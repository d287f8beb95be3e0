"""Second-stage rerankers: the protocol, a word-overlap baseline, a cross-encoder, and TwoStage."""

from evidencedesk.retrieval.rerank.base import Reranker, reordered
from evidencedesk.retrieval.rerank.overlap import OverlapReranker
from evidencedesk.retrieval.rerank.two_stage import Ceiling, TwoStage, ceiling


def get_reranker(spec: str | None) -> Reranker | None:
    """A reranker from its command-line name: ``none``, ``overlap`` or ``cross-encoder:PATH_OR_NAME``."""
    if spec is None or spec.strip().lower() in ("", "none"):
        return None
    if spec == "overlap":
        return OverlapReranker()
    if spec.startswith("cross-encoder:"):
        from evidencedesk.retrieval.rerank.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(spec.split(":", 1)[1])
    raise ValueError(f"rerank: expected none, overlap or cross-encoder:PATH, got {spec!r}")


__all__ = ["Ceiling", "OverlapReranker", "Reranker", "TwoStage", "ceiling", "get_reranker", "reordered"]
