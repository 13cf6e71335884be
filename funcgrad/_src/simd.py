"""Which of NumPy's float64 functions run with SIMD on this machine, for the formulas that
choose by it.

NumPy computes float64 sin and cos one value at a time (the C library's), but tan with SIMD
(Intel's SVML) on Linux where the CPU has AVX512_SKX: about nine times faster (4M values:
34 ms against 3.8). jit then computes sin and cos of one array together through tan
(`jit._Program._fuse_sin_cos`), and sin's and cos's rules their slopes
(`funcgrad.numpy._primitives`, "sin's and cos's slopes").
"""
from __future__ import annotations

import sys

try:
    from numpy._core._multiarray_umath import __cpu_features__ as _CPU_FEATURES
except ImportError:  # (NumPy 1)
    from numpy.core._multiarray_umath import __cpu_features__ as _CPU_FEATURES

__all__ = ["FAST_TAN"]

#: NumPy's float64 tan is SIMD here (read at each use, so tests can turn it on and off).
#: NumPy links Intel's SVML into its Linux x86-64 builds only.
FAST_TAN = sys.platform.startswith("linux") and bool(_CPU_FEATURES.get("AVX512_SKX"))
