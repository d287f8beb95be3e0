"""StringTable: a memory-mapped list of strings (UTF-8 bytes end to end plus an offsets array).

Opening one costs two ``mmap`` calls however many strings it holds; a string is decoded only when
read. A table written sorted answers ``find`` by binary search, so a vocabulary of millions of
terms needs no Python dict in memory.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np


def write_strings(path: str | Path, strings: Iterable[str]) -> int:
    """Write ``path`` (the bytes) and ``path.offsets.npy``; returns how many strings were written."""
    path = Path(path)
    offsets = [0]
    with path.open("wb") as out:
        for s in strings:
            data = s.encode("utf-8")
            out.write(data)
            offsets.append(offsets[-1] + len(data))
    np.save(_offsets_path(path), np.asarray(offsets, dtype=np.int64))
    return len(offsets) - 1


def load_mapped(path: str | Path) -> np.ndarray:
    """A ``.npy`` file memory-mapped read-only, as a plain ndarray view (a ``np.memmap`` pays Python
    overhead on every slice; the view reads the same pages without it)."""
    mapped: np.ndarray = np.load(path, mmap_mode="r").view(np.ndarray)
    return mapped


def _offsets_path(path: Path) -> Path:
    return path.with_name(path.name + ".offsets.npy")


class _Bytes(Sequence[bytes]):
    """The table's entries as bytes (what binary search compares)."""

    def __init__(self, table: StringTable) -> None:
        self.table = table

    def __len__(self) -> int:
        return len(self.table)

    def __getitem__(self, i: int) -> bytes:  # type: ignore[override]
        return self.table.raw(i)


class StringTable(Sequence[str]):
    """Read-only strings from ``write_strings``; ``find`` needs the table to have been written sorted."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        offsets_path = _offsets_path(path)
        if not path.is_file() or not offsets_path.is_file():
            raise ValueError(f"no string table at {path} (expected it and {offsets_path.name})")
        self.offsets = load_mapped(offsets_path)
        size = int(self.offsets[-1])
        if path.stat().st_size != size:
            raise ValueError(f"{path}: {path.stat().st_size} bytes, but its offsets end at {size}")
        # an empty file cannot be memory-mapped
        self.data = np.memmap(path, dtype=np.uint8, mode="r").view(np.ndarray) if size else np.zeros(0, np.uint8)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def raw(self, i: int) -> bytes:
        return self.data[int(self.offsets[i]) : int(self.offsets[i + 1])].tobytes()

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"string table index {i} out of range ({n} entries)")
        return self.raw(i).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def find(self, s: str) -> int | None:
        """The position of ``s`` in a sorted table, or None."""
        key = s.encode("utf-8")
        seq = _Bytes(self)
        i = bisect_left(seq, key)
        return i if i < len(self) and seq[i] == key else None
