"""BuildCache: a small LRU map whose values are built once per key, even under concurrent requests."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BuildCache(Generic[V]):
    """``get(key, build)`` returns the cached value or builds it; one builder per key at a time."""

    def __init__(self, size: int, dispose: Callable[[V], None] | None = None) -> None:
        if size < 1:
            raise ValueError(f"size: must be at least 1, got {size}")
        self.size = size
        self._dispose = dispose
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, build: Callable[[], V]) -> V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            key_lock = self._building.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]
            value = build()
            with self._lock:
                self._items[key] = value
                self._items.move_to_end(key)
                evicted = [self._items.popitem(last=False)[1] for _ in range(len(self._items) - self.size)]
                self._building.pop(key, None)
            self._drop(evicted)
            return value

    def clear(self) -> None:
        with self._lock:
            evicted = list(self._items.values())
            self._items.clear()
        self._drop(evicted)

    def _drop(self, values: list[V]) -> None:
        if self._dispose is not None:
            for value in values:
                self._dispose(value)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


__all__ = ["BuildCache"]
