"""PyTorch's CPU random generator (MT19937) and its distributions, reproduced bit for bit.

PyTorch seeds a Mersenne Twister the standard way (the low 32 bits of the seed) and draws
from it as follows, which is what every function here reproduces:

* uniform: 24 random bits per float32 value, 53 (of a 64-bit draw made of two 32-bit
  words, first word high) per float64, scaled into [from, to) by a fused multiply-add;
* normal: Box-Muller; fewer than 16 values one at a time from 53-bit uniforms (a cached
  second value serves the next call), 16 or more in blocks of 16 from the tensor's own
  uniforms (a last partial block redraws the final 16);
* integers: ``random() % range + low`` (a 64-bit draw when the range needs it);
* randperm: a Fisher-Yates walk, each swap ``random() % (n - i)``;
* bernoulli: a 53-bit uniform below ``p``.

float32 normals in blocks follow PyTorch's AVX2 kernel (what it runs on x86-64 CPUs with
AVX2): Cephes' single-precision log and sincos polynomials, evaluated step by step in
float32 with the multiply-adds its compiler fuses, so those values are bit-exact too.

>>> from funcgrad.mutable import _random
>>> _ = _random.manual_seed(0)
>>> _random.randperm(5).tolist()
[4, 0, 1, 3, 2]
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Generator", "manual_seed", "initial_seed", "default_generator", "uniform", "normal",
           "randint", "randperm", "bernoulli", "random63", "fma", "exponential", "cauchy",
           "geometric", "log_normal", "random_values", "random_between", "FLOAT_DIGITS"]

_U64 = np.uint64


class Generator:
    """``torch.Generator``: an MT19937 stream, seeded as PyTorch seeds its CPU generator.

    >>> from funcgrad.mutable._random import Generator
    >>> g = Generator().manual_seed(0)
    >>> g.initial_seed()
    0
    """

    __slots__ = ("bits", "seed", "cached_normal")

    def __init__(self, device: str = "cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"Device type {str(device).upper()} is not supported by "
                               "funcgrad.mutable (CPU only)")
        self.reseed(67280421310721)

    def reseed(self, seed: int) -> None:
        self.bits = np.random.MT19937()
        self.bits._legacy_seeding(seed & 0xFFFFFFFF)
        self.seed = seed
        self.cached_normal = None

    def manual_seed(self, seed: int) -> "Generator":
        """Reseed; returns the generator (as PyTorch)."""
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise RuntimeError(f"Overflow when unpacking long long")
        self.reseed(seed & 0xFFFFFFFFFFFFFFFF)
        return self

    def initial_seed(self) -> int:
        """The seed last given."""
        return self.seed

    @property
    def device(self) -> str:
        return "cpu"

    def raw32(self, n: int) -> np.ndarray:
        """`n` 32-bit draws, as uint64."""
        return self.bits.random_raw(n).astype(_U64) if n else np.zeros(0, _U64)

    def raw64(self, n: int) -> np.ndarray:
        """`n` 64-bit draws, each two 32-bit draws with the first in the high half."""
        raw = self.raw32(2 * n)
        return (raw[0::2] << _U64(32)) | raw[1::2]

    def unit(self, n: int, float64: bool) -> np.ndarray:
        """`n` uniforms on [0, 1): float64 values holding 24 or 53 random bits."""
        if float64:
            return (self.raw64(n) & _U64((1 << 53) - 1)) * (2.0 ** -53)
        return (self.raw32(n) & _U64((1 << 24) - 1)) * (2.0 ** -24)

    def uniform(self, n: int, float64: bool) -> np.ndarray:
        u = self.unit(n, float64)
        return u if float64 else u.astype(np.float32)


default_generator = Generator()
_GEN = default_generator  # the name older code uses


def _gen(generator) -> Generator:
    return default_generator if generator is None else generator


def manual_seed(seed: int) -> Generator:
    """Seed the default generator as ``torch.manual_seed`` does; returns it."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    """The default generator's seed."""
    return default_generator.seed


def fma(a, b, c):
    """``a * b + c`` in float64 rounded once, as the fused multiply-add PyTorch's AVX2 kernels
    compile to: the product's rounding error (Dekker's split) is added back before the last
    rounding. (Also used by funcgrad.mutable.optim for PyTorch's update arithmetic.)

    >>> from funcgrad.mutable._random import fma
    >>> float(fma(0.1, 10.0, -1.0))
    5.551115123125783e-17
    """
    a = np.asarray(a, np.float64)
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split - (a * split - a)
    al = a - ah
    bh = b * split - (b * split - b)
    bl = b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + err)


def _count(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def uniform(shape, np_dtype, low: float = 0.0, high: float = 1.0, generator=None) -> np.ndarray:
    """Values on [low, high) as ``Tensor.uniform_(low, high)`` draws them."""
    np_dtype = np.dtype(np_dtype)
    u = _gen(generator).unit(_count(shape), np_dtype == np.float64)
    if low != 0.0 or high != 1.0:
        # in the tensor's dtype: ``u * (high - low) + low`` as one fused multiply-add (for
        # float32 the product is exact in float64, so one rounding to float32 is the fma's)
        lo, hi = np_dtype.type(low), np_dtype.type(high)
        u = fma(u, hi - lo, lo) if np_dtype == np.float64 else u * float(hi - lo) + float(lo)
    return u.astype(np_dtype).reshape(shape)


def _fma32(a, b, c):
    """float32 ``a * b + c`` rounded once (the float32 product is exact in float64)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + c).astype(np.float32)


_F = np.float32


def _log32(x: np.ndarray) -> np.ndarray:
    """Natural log of positive float32 values as PyTorch's AVX2 kernel computes it: split
    off the exponent, then Cephes' degree-9 polynomial on the mantissa."""
    bits = np.maximum(x, _F(1.17549435e-38)).view(np.int32)
    e = ((bits.view(np.uint32) >> 23).astype(np.int32) - 127).astype(_F) + _F(1)
    m = ((bits & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(_F)  # in [0.5, 1)
    small = m < _F(0.707106781186547524)
    m = (m - _F(1)) + np.where(small, m, _F(0))
    e = e - np.where(small, _F(1), _F(0))
    z = m * m
    y = _F(7.0376836292e-2)
    for coef in (-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
                 -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1):
        y = _fma32(y, m, _F(coef))
    y = _fma32(y * m, z, e * _F(-2.12194440e-4))
    y = _fma32(-z, _F(0.5), y)
    return _fma32(e, _F(0.693359375), m + y)


def _sincos32(x: np.ndarray) -> tuple:
    """sin and cos of non-negative float32 values as PyTorch's AVX2 kernel computes them:
    reduce by multiples of pi/4 in three parts, then Cephes' two polynomials."""
    octant = ((np.abs(x) * _F(1.27323954473516)).astype(np.int32) + 1) & np.int32(~1)
    y = octant.astype(_F)
    r = _fma32(y, _F(-0.78515625), np.abs(x))
    r = _fma32(y, _F(-2.4187564849853515625e-4), r)
    r = _fma32(y, _F(-3.77489497744594108e-8), r)
    z = r * r
    cos_poly = _fma32(_F(2.443315711809948e-5), z, _F(-1.388731625493765e-3))
    cos_poly = _fma32(cos_poly, z, _F(4.166664568298827e-2)) * z
    cos_poly = _fma32(cos_poly, z, -(z * _F(0.5))) + _F(1)
    sin_poly = _fma32(_F(-1.9515295891e-4), z, _F(8.3321608736e-3))
    sin_poly = _fma32(sin_poly, z, _F(-1.6666654611e-1)) * z
    sin_poly = _fma32(sin_poly, r, r)
    near_zero = (octant & 2) == 0
    sin = np.where(near_zero, sin_poly, cos_poly)
    cos = np.where(near_zero, cos_poly, sin_poly)
    sin = np.where((octant & 4) != 0, -sin, sin)
    cos = np.where((~(octant - 2) & 4) != 0, -cos, cos)
    return sin, cos


def _fill16(blocks: np.ndarray, mean: float, std: float) -> None:
    """Box-Muller on rows of 16 uniforms, in place: in each row the first 8 give radii,
    the last 8 angles (rows are independent, so all of them go in one pass)."""
    head, tail = blocks[:, :8], blocks[:, 8:16]
    if blocks.dtype == np.float32:
        radius = np.sqrt(_F(-2) * _log32(_F(1) - head))
        sin, cos = _sincos32(_F(2.0 * math.pi) * tail)
    else:
        # PyTorch's double kernel calls the C library's log, sin and cos one value at a
        # time; NumPy's own SIMD versions (on AVX-512 machines) can differ in the last bit.
        radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - head))
        theta = 2.0 * math.pi * tail
        sin, cos = _libm(math.sin, theta), _libm(math.cos, theta)
    first, second = radius * cos, radius * sin
    if mean != 0.0 or std != 1.0:
        # one fused multiply-add (float32: exact product in float64, one rounding)
        first = fma(first, std, mean).astype(blocks.dtype)
        second = fma(second, std, mean).astype(blocks.dtype)
    head[...], tail[...] = first, second


def _libm(function, values: np.ndarray) -> np.ndarray:
    """`function` (from `math`, i.e. the C library) applied value by value."""
    return np.array([function(v) for v in values.ravel().tolist()]).reshape(values.shape)


def normal(shape, np_dtype, mean: float = 0.0, std: float = 1.0, generator=None) -> np.ndarray:
    """Normal values as ``torch.randn`` / ``Tensor.normal_(mean, std)`` draw them."""
    gen = _gen(generator)
    np_dtype = np.dtype(np_dtype)
    n = _count(shape)
    if n >= 16:
        if np_dtype == np.float32:
            mean, std = float(np.float32(mean)), float(np.float32(std))
        data = gen.uniform(n, np_dtype == np.float64).astype(np_dtype)
        _fill16(data[:n - n % 16].reshape(-1, 16), mean, std)
        if n % 16:
            data[n - 16:] = gen.uniform(16, np_dtype == np.float64).astype(np_dtype)
            _fill16(data[n - 16:].reshape(1, 16), mean, std)
        return data.reshape(shape)
    return _normals_one_by_one(gen, n, mean, std).astype(np_dtype).reshape(shape)


def _normals_one_by_one(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """`n` float64 normals drawn one at a time (Box-Muller on two 53-bit uniforms; the second
    value is cached for the next draw), as PyTorch's scalar normal_distribution<double>."""
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        if gen.cached_normal is not None:
            out[i] = fma(gen.cached_normal, std, mean)
            gen.cached_normal = None
            continue
        u1, u2 = gen.unit(2, True)
        radius = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        gen.cached_normal = radius * math.sin(theta)
        out[i] = fma(radius * math.cos(theta), std, mean)
    return out


# --- Tensor.random_, exponential_, cauchy_, geometric_, log_normal_ ------------------------------------
# PyTorch's CPU kernels draw one value at a time, in double precision from a 53-bit uniform u
# (C library log1p, tan, log, exp, taken here value by value), then cast to the tensor's dtype.
def exponential(shape, np_dtype, lambd: float, generator=None) -> np.ndarray:
    """``-1 / lambd * log1p(-u)``."""
    u = _gen(generator).unit(_count(shape), True)
    return ((-1.0 / lambd) * _libm(math.log1p, -u)).astype(np_dtype).reshape(shape)


def cauchy(shape, np_dtype, median: float, sigma: float, generator=None) -> np.ndarray:
    """``median + sigma * tan(pi * (u - 0.5))`` (one fused multiply-add)."""
    u = _gen(generator).unit(_count(shape), True)
    return fma(sigma, _libm(math.tan, math.pi * (u - 0.5)), median).astype(np_dtype).reshape(shape)


def geometric(shape, np_dtype, p: float, generator=None) -> np.ndarray:
    """``ceil(log(u) / log1p(-p))``: the number of trials to the first success."""
    u = _gen(generator).unit(_count(shape), True)
    return np.ceil(_libm(math.log, u) / math.log1p(-p)).astype(np_dtype).reshape(shape)


def log_normal(shape, np_dtype, mean: float, std: float, generator=None) -> np.ndarray:
    """``exp`` of normals drawn one at a time (whatever the count)."""
    values = _normals_one_by_one(_gen(generator), _count(shape), mean, std)
    return _libm(math.exp, values).astype(np_dtype).reshape(shape)


# bits of the significand of each float dtype: the range ``random_()`` draws from is [0, 2**digits]
FLOAT_DIGITS = {np.dtype(np.float16): 11, np.dtype(np.float32): 24, np.dtype(np.float64): 53}
_WIDE = (np.dtype(np.float64), np.dtype(np.int64))  # random_() draws 64 bits for these


def random_values(shape, np_dtype, generator=None) -> np.ndarray:
    """``Tensor.random_()``: integers from 0 to the dtype's largest (2**digits for a float
    dtype, whose integers are exact up to there; 0 or 1 for bool)."""
    gen = _gen(generator)
    np_dtype = np.dtype(np_dtype)
    n = _count(shape)
    raw = gen.raw64(n) if np_dtype in _WIDE else gen.raw32(n)
    if np_dtype == np.bool_:
        return (raw & _U64(1)).astype(np.bool_).reshape(shape)
    if np_dtype in FLOAT_DIGITS:
        span = (1 << FLOAT_DIGITS[np_dtype]) + 1
    else:
        span = int(np.iinfo(np_dtype).max) + 1
    return (raw % _U64(span)).astype(np_dtype).reshape(shape)


def _representable(low: int, high: int, np_dtype) -> tuple:
    """PyTorch's bounds of random_(low, high) for a float dtype: where ``low + 1`` or
    ``high - 1`` rounds past the bound in that dtype, the bound moves inward by the dtype's
    spacing there."""
    digits = FLOAT_DIGITS[np_dtype]
    up = int(np_dtype.type(low + 1))
    if up < low:
        low = up + (1 << ((abs(low + 1).bit_length() - 1) - digits + 1))
    down = int(np_dtype.type(high - 1))
    if down >= high:
        high = down - (1 << ((abs(high - 1).bit_length() - 1) - digits + 1))
    return low, high


def random_between(shape, np_dtype, low: int, high: int, generator=None) -> np.ndarray:
    """``Tensor.random_(low, high)``: ``draw % (high - low) + low``, a 64-bit draw when the
    span needs it (and the dtype holds it)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype in FLOAT_DIGITS:
        low, high = _representable(low, high, np_dtype)
    span = high - low
    gen = _gen(generator)
    n = _count(shape)
    wide = span >= (1 << 32) and np_dtype in (np.dtype(np.int64), np.dtype(np.float64),
                                               np.dtype(np.float32))
    raw = gen.raw64(n) if wide else gen.raw32(n)
    return ((raw % _U64(span)).astype(np.int64) + low).astype(np_dtype).reshape(shape)


def randint(low: int, high: int, shape, generator=None) -> np.ndarray:
    """int64 values on [low, high) as ``torch.randint`` draws them."""
    span = high - low
    if span <= 0:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    gen = _gen(generator)
    n = _count(shape)
    raw = gen.raw64(n) if span >= (1 << 32) else gen.raw32(n)
    return ((raw % _U64(span)).astype(np.int64) + low).reshape(shape)


def randperm(n: int, generator=None) -> np.ndarray:
    """A permutation of range(n) as ``torch.randperm`` draws it (int64)."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    gen = _gen(generator)
    perm = np.arange(n, dtype=np.int64)
    if n > 1:
        draws = gen.raw32(n - 1)
        for i in range(n - 1):
            j = i + int(draws[i]) % (n - i)
            perm[i], perm[j] = perm[j], perm[i]
    return perm


def bernoulli(shape, p: float, np_dtype, generator=None) -> np.ndarray:
    """1 with probability `p`, else 0, as ``Tensor.bernoulli_(p)`` draws them."""
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    u = _gen(generator).unit(_count(shape), True)
    return (u < p).astype(np_dtype).reshape(shape)


def random63(generator=None) -> int:
    """``torch.empty((), dtype=torch.int64).random_()``: a 64-bit draw modulo 2**63."""
    return int(_gen(generator).raw64(1)[0] % _U64(1 << 63))
