"""StoredChunks: a read-only ``Mapping`` from chunk id to Chunk that reads the store on demand.

Answering needs "does this cited id exist?" and "give me this chunk"; with a million chunks a dict
of all of them costs gigabytes and a long load. This mapping answers both from the store by primary
key and remembers the chunks it has read (up to ``keep``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping

from evidencedesk.documents import Chunk
from evidencedesk.store.contract import StoreProtocol


class StoredChunks(Mapping[str, Chunk]):
    """Chunks by id from ``store`` (either backend)."""

    def __init__(self, store: StoreProtocol, keep: int = 4096) -> None:
        self.store = store
        self.keep = keep
        self._seen: OrderedDict[str, Chunk] = OrderedDict()

    def __getitem__(self, chunk_id: str) -> Chunk:
        hit = self._seen.get(chunk_id)
        if hit is None:
            found = self.store.chunks_by_id([chunk_id]) if isinstance(chunk_id, str) else []
            if not found:
                raise KeyError(chunk_id)
            hit = found[0]
            self._seen[chunk_id] = hit
            if len(self._seen) > self.keep:
                self._seen.popitem(last=False)
        return hit

    def __iter__(self) -> Iterator[str]:
        return iter(self.store.chunk_ids())

    def __len__(self) -> int:
        return int(self.store.chunk_count())
