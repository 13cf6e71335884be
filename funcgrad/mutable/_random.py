"""torch.manual_seed / rand / randn: PyTorch's CPU generator (MT19937), reproduced bit for bit.

PyTorch seeds a Mersenne Twister the standard way, takes 24 random bits per float32 and 53
per float64, and turns uniforms into normals with Box-Muller: one value at a time (with a
cached second value) for fewer than 16 elements, in blocks of 16 otherwise.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["manual_seed", "uniform", "normal", "initial_seed"]


class _Generator:
    __slots__ = ("bits", "seed", "cached_normal")

    def __init__(self, seed: int) -> None:
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        self.bits = np.random.MT19937()
        self.bits._legacy_seeding(seed & 0xFFFFFFFF)
        self.seed = seed
        self.cached_normal = None

    def raw32(self, n: int) -> np.ndarray:
        return self.bits.random_raw(n).astype(np.uint64) if n else np.zeros(0, np.uint64)

    def uniform(self, n: int, float64: bool) -> np.ndarray:
        if float64:
            raw = self.raw32(2 * n)
            r64 = (raw[0::2] << np.uint64(32)) | raw[1::2]
            return (r64 & np.uint64((1 << 53) - 1)) * (2.0 ** -53)
        raw = self.raw32(n)
        return ((raw & np.uint64((1 << 24) - 1)) * (2.0 ** -24)).astype(np.float32)


_GEN = _Generator(67280421310721)


def manual_seed(seed: int) -> _Generator:
    """Seed the generator as ``torch.manual_seed`` does (same stream as PyTorch on CPU)."""
    _GEN.reseed(int(seed))
    return _GEN


def initial_seed() -> int:
    return _GEN.seed


def uniform(shape, np_dtype) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    return _GEN.uniform(n, np_dtype == np.float64).astype(np_dtype).reshape(shape)


def _fill16(block: np.ndarray) -> None:
    u1 = block.dtype.type(1) - block[:8]
    u2 = block[8:16]
    radius = np.sqrt(block.dtype.type(-2) * np.log(u1))
    theta = block.dtype.type(2.0 * math.pi) * u2
    block[:8], block[8:16] = radius * np.cos(theta), radius * np.sin(theta)


def normal(shape, np_dtype) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    if n >= 16:
        data = _GEN.uniform(n, np_dtype == np.float64).astype(np_dtype)
        for i in range(0, n - 15, 16):
            _fill16(data[i:i + 16])
        if n % 16:
            data[n - 16:] = _GEN.uniform(16, np_dtype == np.float64).astype(np_dtype)
            _fill16(data[n - 16:])
        return data.reshape(shape)
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        if _GEN.cached_normal is not None:
            out[i] = _GEN.cached_normal
            _GEN.cached_normal = None
            continue
        u1, u2 = _GEN.uniform(2, True)
        radius = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        _GEN.cached_normal = radius * math.sin(theta)
        out[i] = radius * math.cos(theta)
    return out.astype(np_dtype).reshape(shape)
