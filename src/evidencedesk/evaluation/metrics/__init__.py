"""Ranking metrics, one family per module, one signature: ``fn(qrels, run, k) -> {query id: value}``.

``ndcg`` also takes ``gain`` and returns an ``NDCG`` that names the gain it used. See ``base`` for
the conventions shared with trec_eval (ties, repeats, queries without relevant items).
"""

from evidencedesk.evaluation.metrics.base import RELEVANT, Qrels, Run, mean, ranking
from evidencedesk.evaluation.metrics.hit import hit
from evidencedesk.evaluation.metrics.mrr import mrr
from evidencedesk.evaluation.metrics.ndcg import GAINS, NDCG, ndcg
from evidencedesk.evaluation.metrics.precision import precision
from evidencedesk.evaluation.metrics.recall import recall

__all__ = ["GAINS", "NDCG", "RELEVANT", "Qrels", "Run", "hit", "mean", "mrr", "ndcg", "precision", "ranking", "recall"]
