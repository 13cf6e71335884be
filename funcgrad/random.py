"""Random numbers as JAX's ``jax.random`` gives them: explicit keys, split and folded with
the Threefry-2x32 hash, and samples drawn from a key's bits exactly as JAX draws them (JAX's
default configuration: 32-bit samples, partitionable Threefry), so a program seeded the same
way sees the same numbers.

A key is data, not state: the same key always gives the same sample; `split` makes new
keys. Keys are pytrees over their words, so ``vmap`` maps over a batch of keys and ``jit``
takes them as arguments (every draw is one non-differentiable primitive, `random_p`). Samples default to float64 arrays holding JAX's default float32 draws (funcgrad
computes in float64); ``dtype=float32`` gives JAX's values in float32, and ``float64``
JAX's 64-bit draws (what JAX gives with ``jax_enable_x64``).

>>> import funcgrad.random as random
>>> key = random.key(0)
>>> key, subkey = random.split(key)
>>> [round(v, 6) for v in random.normal(subkey, (3,)).tolist()]
[-2.442456, -2.035681, 0.205544]
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from . import numpy as fnp
from ._src.batching import batch_by_loop
from ._src.core import Array, Tracer, wrap
from ._src.declare import nondiff
from ._src.tree_util import register_pytree_node

__all__ = ["KeyArray", "PRNGKey", "bernoulli", "fold_in", "key", "key_data", "normal",
           "split", "uniform", "wrap_key_data"]

_U32 = np.uint32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # Threefry's key-schedule constant


# --- the hash -----------------------------------------------------------------------------
def _rotate_left(v: np.ndarray, r: int) -> np.ndarray:
    return (v << _U32(r)) | (v >> _U32(32 - r))


def _threefry2x32(k0, k1, x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 with 20 rounds: the pair of 32-bit words (x0, x1) hashed under the key
    (k0, k1), elementwise over the arrays (arithmetic modulo 2**32)."""
    ks = (_U32(k0), _U32(k1), _U32(k0) ^ _U32(k1) ^ _U32(_PARITY))
    x0 = x0.astype(_U32) + ks[0]
    x1 = x1.astype(_U32) + ks[1]
    with np.errstate(over="ignore"):
        for block in range(5):
            for r in _ROTATIONS[block % 2]:
                x0 = x0 + x1
                x1 = _rotate_left(x1, r) ^ x0
            x0 = x0 + ks[(block + 1) % 3]
            x1 = x1 + ks[(block + 2) % 3] + _U32(block + 1)
    return x0, x1


def _counters(shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit counter over the positions of `shape` (row-major), as (high, low) words."""
    count = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return (count >> np.uint64(32)).astype(_U32), (count & np.uint64(0xFFFFFFFF)).astype(_U32)


# --- keys ---------------------------------------------------------------------------------
class KeyArray:
    """Keys (JAX's ``key<fry>`` arrays): each two 32-bit words, `shape` not counting them.
    Iterate, index and unpack them as arrays of keys.

    >>> random_key = key(0)
    >>> random_key.shape, key_data(random_key).tolist()
    ((), [0, 0])
    """

    __slots__ = ("_data",)

    def __init__(self, data: Any) -> None:
        # uint32 words (..., 2): concrete, or traced when a transform maps over the keys
        self._data = data if isinstance(data, Array) else np.asarray(data, dtype=_U32)

    @property
    def shape(self) -> tuple:
        return self._data.shape[:-1]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (KeyArray(row) for row in self._data)

    def __getitem__(self, index: Any) -> KeyArray:
        if not isinstance(index, tuple):
            index = (index,)
        return KeyArray(self._data[index + (Ellipsis,) if Ellipsis not in index else index])

    def reshape(self, *shape: Any) -> KeyArray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return KeyArray(self._data.reshape(tuple(shape) + (2,)))

    def __eq__(self, other: Any) -> Any:
        if not isinstance(other, KeyArray):
            return NotImplemented
        return fnp.all(fnp.asarray(self._data) == fnp.asarray(other._data), axis=-1)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{self._data}"


register_pytree_node(KeyArray, lambda k: ((k._data,), None),
                     lambda _, children: KeyArray(children[0]))


def _raw_key(k: Any, what: str = "key") -> Any:
    """The uint32 words of `k` (a typed key array or a legacy ``PRNGKey``, uint32[..., 2]):
    a NumPy array, or a traced array under a transform."""
    data = k._data if isinstance(k, KeyArray) else k
    if isinstance(data, Tracer):
        dtype, shape = data.dtype, tuple(data.shape)
    else:
        data = np.asarray(data._value if isinstance(data, Array) else data)
        dtype, shape = data.dtype, data.shape
    if dtype != _U32 or len(shape) < 1 or shape[-1] != 2:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected {what} to be a key "
                        f"from random.key or random.PRNGKey, got an array of shape "
                        f"{shape} and dtype {dtype}. Make one with random.key(seed)")
    return data


def _like(k: Any, data: Any) -> Any:
    """New key words in the form of `k`: typed keys stay typed, legacy keys stay arrays."""
    return KeyArray(data) if isinstance(k, KeyArray) else wrap(data)


def _seed_words(seed: Any) -> np.ndarray:
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}") from None
    return np.array([0, seed & 0xFFFFFFFF], dtype=_U32)  # JAX's default: a 32-bit seed


def key(seed: Any) -> KeyArray:
    """A typed key from an integer seed (JAX keeps the low 32 bits by default).

    >>> key_data(key(42)).tolist()
    [0, 42]
    """
    return KeyArray(_seed_words(seed))


def PRNGKey(seed: Any) -> Array:
    """A legacy key: the seed's two 32-bit words as a uint32 array.

    >>> PRNGKey(0).tolist()
    [0, 0]
    """
    return fnp.asarray(_seed_words(seed))


def key_data(keys: Any) -> Array:
    """The uint32 words under `keys` (shape ``keys.shape + (2,)``).

    >>> key_data(split(key(0))).shape
    (2, 2)
    """
    return wrap(_raw_key(keys, "keys"))


def wrap_key_data(data: Any) -> KeyArray:
    """Typed keys over uint32 words of shape ``(..., 2)``.

    >>> wrap_key_data(key_data(key(7))).shape
    ()
    """
    return KeyArray(_raw_key(data, "key data"))


def _single(k: Any, fn: str) -> Any:
    data = _raw_key(k)
    if tuple(data.shape) != (2,):
        raise TypeError(f"{fn} accepts a single key, but was given a key array of shape "
                        f"{tuple(data.shape)[:-1]} != (). Use jax.vmap for batching.")
    return data


# --- the draws, on a concrete key's two words ----------------------------------------------
def _split_words(words: np.ndarray, shape: tuple) -> np.ndarray:
    hi, lo = _counters(shape)
    b0, b1 = _threefry2x32(words[0], words[1], hi, lo)
    return np.stack([b0, b1], axis=-1)


def _fold_in_words(words: np.ndarray, seed: tuple) -> np.ndarray:
    b0, b1 = _threefry2x32(words[0], words[1], np.array(seed[:1], _U32),
                           np.array(seed[1:], _U32))
    return np.concatenate([b0, b1])


def _bits(words: np.ndarray, width: int, shape: tuple) -> np.ndarray:
    """`width`-bit random words of `shape`, as JAX's partitionable Threefry draws them: the
    key hashes each position's 64-bit counter."""
    hi, lo = _counters(shape)
    b0, b1 = _threefry2x32(words[0], words[1], hi, lo)
    if width == 64:
        return (b0.astype(np.uint64) << np.uint64(32)) | b1.astype(np.uint64)
    return b0 ^ b1


_FLOATS = {np.dtype(np.float32): (32, 23, np.uint32, 0x3F800000),
           np.dtype(np.float64): (64, 52, np.uint64, 0x3FF0000000000000)}


def _unit_floats(words: np.ndarray, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Floats in [0, 1): a word's top mantissa bits under the exponent of 1, minus 1."""
    width, mantissa, uint, one = _FLOATS[dtype]
    bits = _bits(words, width, shape).astype(uint)
    return ((bits >> uint(width - mantissa)) | uint(one)).view(dtype) - dtype.type(1)


def _fused(a: np.ndarray, b: Any, c: Any, dtype: np.dtype) -> np.ndarray:
    """``a * b + c`` rounded once to `dtype`, as the fused multiply-add JAX's compiled code
    uses (float32 products are exact in float64; float64 ones are rounded twice)."""
    wide = np.float64 if dtype == np.float32 else np.longdouble
    return (a.astype(wide) * np.asarray(b, wide) + np.asarray(c, wide)).astype(dtype)


def _uniform_words(words, shape, draw, out, minval, maxval):
    lo, hi = np.asarray(minval, dtype=draw), np.asarray(maxval, dtype=draw)
    values = np.maximum(lo, _fused(_unit_floats(words, shape, draw), (hi - lo).astype(draw),
                                   lo, draw))
    return np.broadcast_to(values, shape).astype(out)


# Giles' single-precision approximation of erfinv (as XLA evaluates it for JAX's float32
# normal samples), in w = -log(1 - x**2): one polynomial below w = 5, one above in sqrt(w)
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erfinv32(x: np.ndarray) -> np.ndarray:
    f32 = np.float32
    w = -np.log1p(-(x * x))
    central = w < f32(5)
    t = np.where(central, w - f32(2.5), np.sqrt(w) - f32(3)).astype(f32)
    p = np.where(central, f32(_ERFINV_CENTRAL[0]), f32(_ERFINV_TAIL[0]))
    for a, b in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
        p = _fused(p, t, np.where(central, f32(a), f32(b)), np.dtype(f32))
    return np.where(np.abs(x) == 1, np.copysign(f32(np.inf), x), p * x).astype(f32)


def _erfinv64(x: np.ndarray) -> np.ndarray:
    """erfinv in float64: Newton's method on erf from the float32 approximation."""
    erf = np.vectorize(math.erf, otypes=[np.float64])
    y = _erfinv32(x.astype(np.float32)).astype(np.float64)
    finite = np.isfinite(y)
    for _ in range(3):
        step = (erf(np.where(finite, y, 0.0)) - x) * (math.sqrt(math.pi) / 2) * \
            np.exp(np.where(finite, y * y, 0.0))
        y = np.where(finite, y - step, y)
    return y


def _normal_words(words, shape, draw, out):
    lo = np.nextafter(draw.type(-1), draw.type(0))
    u = np.maximum(lo, _fused(_unit_floats(words, shape, draw), draw.type(1) - lo, lo, draw))
    inverse = _erfinv32(u) if draw == np.float32 else _erfinv64(u)
    return (draw.type(math.sqrt(2)) * inverse).astype(draw).astype(out)


def _bernoulli_words(words, p, shape):
    return _unit_floats(words, shape, np.dtype(np.float32)) < np.asarray(p, np.float32)


_DRAWS = {"split": _split_words, "fold_in": _fold_in_words, "uniform": _uniform_words,
          "normal": _normal_words, "bernoulli": _bernoulli_words}


def _draw_impl(words: np.ndarray, draw: str, args: tuple) -> np.ndarray:
    return _DRAWS[draw](words, *args)


# Every draw from a key, as one primitive: under vmap it draws key by key (each key its own
# numbers, as JAX), under jit it is recorded and replayed on the key it is given
random_p = nondiff("random", _draw_impl, batch=batch_by_loop, params=("draw", "args"),
                   doc="Random words or samples from one key's two uint32 words.")


def _draw(k: Any, fn: str, args: tuple) -> Any:
    words = _single(k, fn)
    if isinstance(words, Tracer):
        return random_p(words, draw=fn, args=args)
    return _draw_impl(words, fn, args)


def _scalar(value: Any, what: str) -> Any:
    """A parameter of the draw: a number or an array, concrete."""
    if isinstance(value, Tracer):
        raise TypeError(f"funcgrad.random: {what} must be concrete (it is traced by a "
                        "transform); pass a number or array")
    value = np.asarray(value._value if isinstance(value, Array) else value)
    return value.item() if value.ndim == 0 else value


def split(k: Any, num: int | Sequence[int] = 2) -> Any:
    """`num` new keys (a shape, if a tuple) from `k`, independent of it and of each other.

    >>> key_data(split(key(0), 3))[2].tolist()
    [4146024105, 2718843009]
    """
    shape = tuple(num) if isinstance(num, (tuple, list)) else (int(num),)
    return _like(k, _draw(k, "split", (shape,)))


def fold_in(k: Any, data: Any) -> Any:
    """A new key from `k` and an integer `data` (the same pair gives the same key).

    >>> key_data(fold_in(key(0), 3)).tolist()
    [2467461003, 3840466878]
    """
    seed = tuple(int(w) for w in _seed_words(_scalar(data, "fold_in's data")))
    return _like(k, _draw(k, "fold_in", (seed,)))


def _shape_of(shape: Any, fn: str) -> tuple:
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{fn}: shape must be a sequence of ints, got {shape!r}") from None


def _draw_dtype(dtype: Any, fn: str) -> tuple[np.dtype, np.dtype]:
    """(the dtype JAX draws in, the dtype returned): by default JAX's float32 draws, returned
    as funcgrad's float64."""
    if dtype is None:
        return np.dtype(np.float32), np.dtype(np.float64)
    dtype = np.dtype(dtype)
    if dtype not in _FLOATS:
        raise ValueError(f"dtype argument to `{fn}` must be a float dtype, got {dtype}")
    return dtype, dtype


def uniform(k: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Array:
    """Samples uniform on ``[minval, maxval)``.

    >>> round(uniform(key(0)).item(), 6)
    0.947667
    """
    draw, out = _draw_dtype(dtype, "uniform")
    args = (_shape_of(shape, "uniform"), draw, out, _scalar(minval, "minval"),
            _scalar(maxval, "maxval"))
    return wrap(_draw(k, "uniform", args))


def normal(k: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard normal samples: ``sqrt(2) * erfinv(u)`` for `u` uniform on (-1, 1).

    >>> round(normal(key(0)).item(), 5)
    1.62264
    """
    draw, out = _draw_dtype(dtype, "normal")
    return wrap(_draw(k, "normal", (_shape_of(shape, "normal"), draw, out)))


def bernoulli(k: Any, p: Any = 0.5, shape: Sequence[int] | None = None) -> Array:
    """Booleans, True with probability `p`.

    >>> bernoulli(key(0), 0.5, (4,)).tolist()
    [False, False, True, True]
    """
    p = _scalar(p, "p")
    shape = np.shape(p) if shape is None else _shape_of(shape, "bernoulli")
    return wrap(_draw(k, "bernoulli", (p, shape)))
