"""The shape of a snapshot's ``manifest.json``: the build it holds, how it was tokenised and scored, and
its segments in order (each with its tombstone file when rows were deleted)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    from evidencedesk.index.ann import AnnParams


class SegmentEntry(TypedDict):
    """One segment as the manifest lists it: its folder, rows, tombstone file (None: no row deleted)."""

    name: str
    rows: int
    deleted: str | None
    n_deleted: int


class BM25Params(TypedDict):
    k1: float
    b: float


class DenseInfo(TypedDict):
    """The vectors of a snapshot: the embedder's name, their width, and whether segments carry a graph."""

    model_name: str
    dim: int
    ann: bool


class Manifest(TypedDict):
    """``manifest.json`` (format ``snapshot.FORMAT``); ``labels`` holds what the writer asked to keep."""

    format: int
    created_at: str
    build_id: int | None
    tokenizer: dict[str, object]
    contextual: bool
    bm25: BM25Params
    dense: DenseInfo | None
    ann: bool
    ann_params: AnnParams
    labels: dict[str, object]
    generation: int
    next_segment: int
    segments: list[SegmentEntry]


def as_manifest(data: Mapping[str, Any]) -> Manifest:
    """``data`` (a manifest ``read_manifest`` checked the format of) typed as the manifest it is."""
    return cast(Manifest, data)


__all__ = ["BM25Params", "DenseInfo", "Manifest", "SegmentEntry", "as_manifest"]
