"""Which labelled questions a caller may use: a label whose evidence sits only in documents outside the
caller's scope is withheld, since its gold phrases are copies of that hidden text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evidencedesk import Label, Scope
from evidencedesk.documents import Document
from evidencedesk.json_types import JsonObject


def visible_labels(labels: Sequence[Label], documents: Iterable[Document], scope: Scope) -> list[Label]:
    """The labels every gold phrase of which is in a document inside ``scope``, or in no document at all.
    ``documents`` is read once, one document at a time (it may come from the store as it is read)."""
    golds = {g for label in labels for g in label.gold}
    inside: set[Any] = set()  # gold phrases held by a document inside the scope
    outside: set[Any] = set()
    for d in documents:
        found = inside if scope.allows(d.metadata, d.id) else outside
        for g in golds:
            if g not in found and g.held_by(d.text):
                found.add(g)
    return [label for label in labels if all(g in inside or g not in outside for g in label.gold)]


def label_summary(label: Label) -> JsonObject:
    """What the lab's picker shows: never the gold phrases or the expected answer."""
    return {"id": label.id, "question": label.question, "tags": list(label.tags), "answerable": label.answerable}


__all__ = ["label_summary", "visible_labels"]
