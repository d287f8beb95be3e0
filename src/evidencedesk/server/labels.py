"""Which labelled questions a caller may use: a label whose evidence sits only in documents outside the
caller's scope is withheld, since its gold phrases are copies of that hidden text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evidencedesk.documents import Document
from evidencedesk.evaluation.labels import Label
from evidencedesk.retrieval.scope import Scope


def visible_labels(labels: Sequence[Label], documents: Sequence[Document], scope: Scope) -> list[Label]:
    """The labels every gold phrase of which is in a document inside ``scope``, or in no document at all."""
    seen = [d.text for d in documents if scope.allows(d.metadata, d.id)]
    hidden = [d.text for d in documents if not scope.allows(d.metadata, d.id)]
    out = []
    for label in labels:
        ok = all(any(g.held_by(t) for t in seen) or not any(g.held_by(t) for t in hidden) for g in label.gold)
        if ok:
            out.append(label)
    return out


def label_summary(label: Label) -> dict[str, Any]:
    """What the lab's picker shows: never the gold phrases or the expected answer."""
    return {"id": label.id, "question": label.question, "tags": list(label.tags), "answerable": label.answerable}


__all__ = ["label_summary", "visible_labels"]
