"""funcgrad.numpy's array creation and casts: `array`, `asarray`, `astype`, `full`, and the
constant makers (`zeros`, `arange`, `eye`...), whose results carry no derivative."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._src.core import Array, Tracer, raw
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from .._src.transforms import stop_gradient
from ._typing import ArrayLike, DTypeLike, Shape

export = ns.export


@export
def astype(x: ArrayLike, dtype: DTypeLike) -> Array:
    """``x.astype(dtype)``; a cast to an integer or bool dtype carries no derivative."""
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.inexact):
        x = stop_gradient(x)
    return P.astype(x, dtype)


# --- array creation (constants) ------------------------------------------------------------


@export(numpy=(np.array,))
def array(object: ArrayLike, dtype: DTypeLike | None = None, copy: bool = True,
          ndmin: int = 0) -> Array:
    """An `Array` from nested lists, NumPy arrays or Arrays; traced entries stay traced."""
    if isinstance(object, Tracer):
        out = object if dtype is None else astype(object, dtype)
        return out
    if object is None:  # NumPy would make an object array, which no funcgrad Array can be
        raise ValueError("None is not a valid value for funcgrad.numpy.array (as in JAX); "
                         "pass numbers or arrays")
    if isinstance(object, (list, tuple)) and _contains_tracer(object):
        rows = [array(o, dtype) for o in object]
        if len({H.shape(r) for r in rows}) > 1:
            raise ValueError(_ragged(object, [H.shape(r) for r in rows]))
        return P.stack(*rows, axis=0)
    try:
        value = np.array(raw(object) if isinstance(object, Array) else object, dtype=dtype,
                         copy=copy, ndmin=ndmin)
    except ValueError as err:
        if "inhomogeneous" not in str(err):
            raise
        raise ValueError(_ragged(object, None)) from err
    return Array(value)


def _ragged(object, shapes) -> str:
    found = f" (its entries have shapes {shapes})" if shapes else ""
    return (f"array() got a ragged nested sequence{found}: every entry at one depth must have "
            "the same length. Pad the entries to one shape, or keep them in a list (a pytree) "
            "instead of one array.")


def _contains_tracer(seq):
    return builtins.any(isinstance(o, Tracer) or (isinstance(o, (list, tuple)) and _contains_tracer(o))
                        for o in seq)


@export(numpy=np.asarray)
def asarray(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    """Like `array`, copying only where the caller could write into the buffer later.

    An `Array` is returned as it is and a read-only NumPy array is wrapped without a copy;
    a writable NumPy array is copied, because an `Array` never changes."""
    if isinstance(a, Array) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    aliasable = isinstance(a, np.ndarray) and a.flags.writeable
    return array(a, dtype=dtype, copy=True if aliasable else None)


def _constant(np_fn, name):
    def make(*args, **kwargs):
        return Array(np_fn(*[raw(a) for a in args], **kwargs))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}`` as a constant `Array` (no derivative flows into it)."
    return export(make, numpy=np_fn, kind="constant")


for _name in ("zeros", "ones", "empty", "arange", "logspace", "eye",
              "identity", "tri", "indices"):
    _constant(getattr(np, _name), _name)


def _like(np_fn, name):
    def make(a: ArrayLike, *args: ArrayLike, dtype: DTypeLike | None = None,
             **kwargs: Any) -> Array:
        return Array(np_fn(np.empty(H.shape(a), dtype=H.dtype(a) if dtype is None else dtype),
                           *[raw(x) for x in args], **kwargs))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}``: a constant `Array` shaped like `a`."
    return export(make, numpy=np_fn, kind="constant")


for _name in ("zeros_like", "ones_like", "empty_like"):
    _like(getattr(np, _name), _name)


def _constant_tuple(np_fn, name):
    def make(*args, **kwargs):
        return tuple(Array(a) for a in np_fn(*[raw(a) for a in args], **kwargs))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}``: a tuple of constant index `Array`s."
    return export(make, numpy=np_fn, kind="constant")


for _name in ("tril_indices", "triu_indices", "diag_indices"):
    _constant_tuple(getattr(np, _name), _name)


@export(numpy=np.full)
def full(shape: Shape, fill_value: ArrayLike, dtype: DTypeLike | None = None,
         order: str = "C") -> Array:
    """``numpy.full``, differentiable in `fill_value` (its gradient sums the cotangent).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda v: fnp.sum(fnp.full((2, 3), v)))(1.0).item()
    6.0
    """
    value = asarray(fill_value) if dtype is None else astype(fill_value, dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return P.broadcast_to(value, shape)


@export(numpy=np.full_like)
def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None,
              shape: Shape | None = None) -> Array:
    """``numpy.full_like``, differentiable in `fill_value` (not in `a`, whose values are unused).

    >>> import funcgrad.numpy as fnp
    >>> fnp.full_like(fnp.zeros(2), 7.0).tolist()
    [7.0, 7.0]
    """
    dtype = H.dtype(a) if dtype is None else dtype
    return full(H.shape(a) if shape is None else shape, fill_value, dtype)


@export(numpy=np.copy)
def copy(a: ArrayLike, order: str = "K", subok: bool = False) -> Array:
    """``numpy.copy``; arrays are immutable, so this is the identity (slope 1).

    >>> import funcgrad.numpy as fnp
    >>> fnp.copy([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    return asarray(a)


@export(numpy=np.linspace)
def linspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: DTypeLike | None = None,
             axis: int = 0) -> Array | tuple[Array, Array]:
    """``numpy.linspace``, differentiable in `start` and `stop` (each point is
    ``start + (stop - start) * t`` for fixed fractions ``t``).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda b: fnp.sum(fnp.linspace(0.0, b, 5)))(2.0).item()
    2.5
    """
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return np.linspace(raw(start), raw(stop), num, endpoint, retstep, dtype, axis)
    start, stop = asarray(start), asarray(stop)
    div = (num - 1 if endpoint else num) if num > 1 else 1
    kind = np.result_type(H.dtype(start), H.dtype(stop))
    kind = kind if np.issubdtype(kind, np.inexact) else np.dtype(np.float64)
    fractions = (np.arange(num) / div).astype(kind)
    if endpoint and num > 1:
        fractions[-1] = 1.0
    span = stop - start
    lead = np.broadcast_shapes(H.shape(start), H.shape(stop))
    out = P.reshape(start, (1,) + H.shape(start)) + P.reshape(span, (1,) + H.shape(span)) * \
        fractions.reshape((num,) + (1,) * len(lead))
    if axis % (len(lead) + 1):
        out = P.moveaxis(out, 0, axis)
    if dtype is not None:
        out = astype(out, dtype)
    return (out, span / div) if retstep else out



for _name in ("bartlett", "blackman", "hamming", "hanning", "kaiser"):
    _constant(getattr(np, _name), _name)


def _from_shape(np_fn, name):
    """NumPy's index constructors read off an array's shape (its values are never used)."""
    def make(arr: ArrayLike, *args: Any, **kwargs: Any) -> tuple[Array, ...]:
        return tuple(Array(a) for a in np_fn(np.empty(H.shape(arr), dtype=bool), *args, **kwargs))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}``: a tuple of constant index `Array`s from `arr`'s shape."
    return export(make, numpy=np_fn, kind="constant")


for _name in ("tril_indices_from", "triu_indices_from", "diag_indices_from"):
    _from_shape(getattr(np, _name), _name)
_constant_tuple(np.mask_indices, "mask_indices")
_constant_tuple(np.ix_, "ix_")


@export(numpy=np.frombuffer, kind="constant")
def frombuffer(buffer: Any, dtype: DTypeLike = float, count: int = -1, offset: int = 0) -> Array:
    """``numpy.frombuffer`` as a constant `Array` (a copy: funcgrad arrays own their data)."""
    return Array(np.frombuffer(buffer, dtype, count, offset).copy())


@export(numpy=np.fromfile, kind="constant")
def fromfile(file: Any, dtype: DTypeLike = float, count: int = -1, sep: str = "",
             offset: int = 0) -> Array:
    """``numpy.fromfile`` as a constant `Array`."""
    return Array(np.fromfile(file, dtype, count, sep, offset))


@export(numpy=np.fromiter, kind="constant")
def fromiter(iterable: Any, dtype: DTypeLike, count: int = -1) -> Array:
    """``numpy.fromiter`` as a constant `Array`."""
    return Array(np.fromiter(iterable, dtype, count))


@export(numpy=np.fromstring, kind="constant")
def fromstring(string: str, dtype: DTypeLike = float, count: int = -1, *, sep: str) -> Array:
    """``numpy.fromstring`` (text with a separator) as a constant `Array`."""
    return Array(np.fromstring(string, dtype, count, sep=sep))


@export(numpy=np.from_dlpack, kind="constant")
def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """``numpy.from_dlpack`` as a constant `Array` (a copy)."""
    return Array(np.array(np.from_dlpack(x), copy=True))


@export(numpy=np.geomspace)
def geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
              dtype: DTypeLike | None = None, axis: int = 0) -> Array:
    """``numpy.geomspace``, differentiable in `start` and `stop`: each point is
    ``start * (stop / start) ** t`` for fixed fractions ``t`` (real values of one sign).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.geomspace(1.0, 8.0, 4).tolist()
    [1.0, 2.0, 4.0, 8.0]
    """
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return np.geomspace(raw(start), raw(stop), num, endpoint, dtype, axis)
    start, stop = asarray(start), asarray(stop)
    if np.result_type(H.dtype(start), H.dtype(stop)).kind == "c":
        raise NotImplementedError("funcgrad.numpy.geomspace: complex endpoints are not "
                                  "supported; pass real endpoints of one sign")
    div = (num - 1 if endpoint else num) if num > 1 else 1
    kind = np.result_type(H.dtype(start), H.dtype(stop), np.float16)
    kind = kind if kind.kind == "f" else np.dtype(np.float64)
    start, stop = P.astype(start, kind), P.astype(stop, kind)
    lead = np.broadcast_shapes(H.shape(start), H.shape(stop))
    fractions = (np.arange(num) / div).astype(kind).reshape((num,) + (1,) * len(lead))
    ratio = P.reshape(stop / start, (1,) + H.shape(stop / start))
    out = P.reshape(start, (1,) + H.shape(start)) * P.power(ratio, fractions)
    if endpoint and num > 1:  # the last point is `stop` itself, as in NumPy
        last = np.arange(num).reshape((num,) + (1,) * len(lead)) == num - 1
        out = P.where(last, P.broadcast_to(stop, lead), out)
    if axis % (len(lead) + 1):
        out = P.moveaxis(out, 0, axis)
    return out if dtype is None else astype(out, dtype)


@export(numpy=np.save, kind="non-differentiable", wraps=False)
def save(file: Any, arr: ArrayLike, allow_pickle: bool = True) -> None:
    """``numpy.save`` of the array's values (read back with `load`)."""
    np.save(file, np.asarray(raw(arr)), allow_pickle=allow_pickle)


@export(numpy=np.savez, kind="non-differentiable", wraps=False)
def savez(file: Any, *args: ArrayLike, **kwds: ArrayLike) -> None:
    """``numpy.savez`` of the arrays' values."""
    np.savez(file, *[np.asarray(raw(a)) for a in args],
             **{k: np.asarray(raw(v)) for k, v in kwds.items()})


@export(numpy=np.load, kind="constant", wraps=False)
def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``numpy.load``: a saved array as a constant `Array` (an ``.npz`` archive comes back as
    NumPy's mapping of arrays, as in JAX)."""
    out = np.load(file, *args, **kwargs)
    return Array(out) if isinstance(out, np.ndarray) else out


def _as_array(name: str, what: str):
    def convert(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
        return asarray(a, dtype)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = (f"Differentiable ``numpy.{name}``: `asarray` ({what}).\n\n"
                       f">>> import funcgrad.numpy as fnp\n>>> fnp.{name}([1.0, 2.0]).tolist()\n"
                       "[1.0, 2.0]")
    return export(convert, numpy=getattr(np, name))


_as_array("asanyarray", "funcgrad has one array class")
_as_array("ascontiguousarray", "funcgrad arrays are always C-contiguous")
_as_array("asfortranarray", "funcgrad keeps C order; the values are the same")


@export(numpy=np.asarray_chkfinite)
def asarray_chkfinite(a: ArrayLike, dtype: DTypeLike | None = None, order: str | None = None) -> Array:
    """Differentiable ``numpy.asarray_chkfinite``: `asarray`, refusing NaN and infinity.

    >>> import funcgrad.numpy as fnp
    >>> fnp.asarray_chkfinite([1.0, fnp.inf])
    Traceback (most recent call last):
    ...
    ValueError: array must not contain infs or NaNs
    """
    a = asarray(a, dtype)
    if not np.all(np.isfinite(np.asarray(H.bottom(a)))):
        raise ValueError("array must not contain infs or NaNs")
    return a
