"""The two measurements every benchmark here makes: a median time and a peak of memory."""
from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Callable

import numpy as np


def median_time(fn: Callable[[], object], repeat: int, number: int = 1) -> float:
    """Median seconds per call of `fn` over `repeat` rounds of `number` calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return float(np.median(times))


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes allocated (as tracemalloc sees them, NumPy's buffers included) during `fn()`."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
