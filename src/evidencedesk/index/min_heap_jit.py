"""A fixed-size min-heap of scores for the compiled kernels: the k best seen so far, worst on top.

Module level, so numba's on-disk cache finds it again in the next process.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def replace_min(heap: Any, size: int, value: float | np.floating[Any]) -> None:
    """Put ``value`` in place of the smallest of ``heap[:size]`` (a min-heap) and restore the order."""
    heap[0] = value
    i = 0
    while True:
        low = i
        left = 2 * i + 1
        right = left + 1
        if left < size and heap[left] < heap[low]:
            low = left
        if right < size and heap[right] < heap[low]:
            low = right
        if low == i:
            return
        heap[i], heap[low] = heap[low], heap[i]
        i = low
