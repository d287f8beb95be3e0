"""Shared helpers of the reliability suites: counts for the summary, a hang guard, versioned corpora."""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from evidencedesk.store import Store

# How many inputs, trials and requests each check ran; printed at the end of the session.
COUNTS: Counter[str] = Counter()


class Hang(BaseException):
    """Raised by ``time_limit`` when one input runs past its limit (a BaseException so no handler swallows it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail with Hang when the block runs longer than ``seconds`` (main thread only, via SIGALRM)."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def versioned_doc(i: int, version: int, parts: int = 3) -> str:
    """A Markdown policy whose every chunk carries the marker ``vmark<version>``."""
    marker = f"vmark{version}"
    sections = "\n\n".join(
        f"## Part {j}\n\n"
        + " ".join(f"{marker} policy {i} part {j} rule {k} covers refunds and {marker}." for k in range(6))
        for j in range(parts)
    )
    return f"---\nid: doc-{i:03d}\nstatus: current\nversion: {version}\n---\n\n# {marker} policy {i}\n\n{sections}\n"


def write_versioned(folder: Path, version: int, n_docs: int, parts: int = 3) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n_docs):
        (folder / f"doc-{i:03d}.md").write_text(versioned_doc(i, version, parts), encoding="utf-8")


def marker_of(text: str) -> str | None:
    """The single ``vmarkN`` marker in a chunk's text (None when it has none; an error when it mixes)."""
    found = {w.strip(".,:;#") for w in text.split() if w.startswith("vmark")}
    if len(found) > 1:
        raise AssertionError(f"one chunk holds two versions: {sorted(found)}")
    return found.pop() if found else None


def chunk_sets(store: Path) -> dict[str, set[tuple[str, str]]]:
    """Per document id, the set of (chunk id, text) the store holds."""
    out: dict[str, set[tuple[str, str]]] = {}
    with Store(store) as s:
        for c in s.chunks():
            out.setdefault(c.doc_id, set()).add((c.id, c.text))
    return out


def snapshot(store: Path) -> dict[str, Any]:
    """Documents and chunks of a store, without build ids or timestamps."""
    with Store(store) as s:
        docs = sorted((d.to_dict() for d in s.documents()), key=lambda d: d["id"])
        chunks = sorted((c.to_dict() for c in s.chunks()), key=lambda c: c["id"])
    return {"documents": docs, "chunks": chunks}
