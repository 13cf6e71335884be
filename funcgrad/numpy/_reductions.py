"""funcgrad.numpy's reductions: `sum`, `mean`, `prod`, `max`, `min`, `var`, `std`, `ptp` and
their NaN-skipping twins."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._src.core import Array
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._creation import asarray, astype
from ._typing import ArrayLike, Axis, DTypeLike

export = ns.export


def _reduction(prim, np_fn, name):
    def reduce(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
               keepdims: bool = False, **unsupported: Any) -> Array:
        if out is not None or unsupported:
            raise TypeError(f"funcgrad.numpy.{name}: the out= and where= arguments are not "
                            "supported (arrays are immutable); use the returned value")
        if isinstance(axis, list):
            axis = tuple(axis)
        if dtype is not None:
            a = astype(a, dtype)
        elif not isinstance(a, Array):  # (an Array, traced or not, is used as it is)
            a = asarray(a)  # lists of traced values too
        out = prim(a, axis=axis, keepdims=keepdims)
        return out if isinstance(out, Array) else Array(out)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"Differentiable ``numpy.{name}`` with ``axis`` and ``keepdims``."
    reduce.primitive = prim
    return export(reduce, numpy=np_fn, wraps=False)  # (it wraps its one result itself)


sum = _reduction(P.sum, np.sum, "sum")
mean = _reduction(P.mean, np.mean, "mean")
prod = _reduction(P.prod, np.prod, "prod")


def _chooser(prim, np_fns, name):
    def reduce(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
               **unsupported: Any) -> Array:
        if out is not None or unsupported:
            raise TypeError(f"funcgrad.numpy.{name}: out=, initial= and where= are not supported")
        if isinstance(axis, list):
            axis = tuple(axis)
        out = prim(a if isinstance(a, Array) else asarray(a), axis=axis, keepdims=keepdims)
        return out if isinstance(out, Array) else Array(out)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"Differentiable ``numpy.{name}``; where several elements tie for the "
                      "extremum, the slope is shared equally among them.")
    reduce.primitive = prim
    return export(reduce, numpy=np_fns, wraps=False)  # (as `_reduction`'s)


max = _chooser(P.max, (np.max, np.amax), "max")
min = _chooser(P.min, (np.min, np.amin), "min")
export(max, name="amax", wraps=False)
export(min, name="amin", wraps=False)


@export(numpy=np.var)
def var(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
        ddof: float = 0, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.var`` (``ddof`` as in NumPy)."""
    if out is not None:
        raise TypeError("funcgrad.numpy.var: out= is not supported")
    if isinstance(axis, list):
        axis = tuple(axis)
    a = asarray(a) if dtype is None else astype(a, dtype)
    centered = a - P.mean(a, axis=axis, keepdims=True)
    n = H.count(a, axis)
    return P.sum(centered * centered, axis=axis, keepdims=keepdims) / builtins.max(n - ddof, 0)


@export(numpy=np.std)
def std(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
        ddof: float = 0, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.std``; its slope is undefined (NaN) where the spread of several
    values is zero. Over one value (a scalar, say) the spread is identically zero, and so is
    its slope, as in autograd.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.jvp(fnp.std, (2.0,), (1.0,))[1].item()
    0.0
    """
    spread = var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)
    if H.count(asarray(a), axis) == 1:
        return spread  # identically 0, where sqrt's slope would be infinite
    return P.sqrt(spread)


def _nan_reduction(name, np_fn, compute):
    def reduce(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
               keepdims: bool = False, **kwargs: Any) -> Array:
        if out is not None:
            raise TypeError(f"funcgrad.numpy.{name}: out= is not supported")
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        if isinstance(axis, list):
            axis = tuple(axis)
        return compute(a, axis, keepdims, **kwargs)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"Differentiable ``numpy.{name}``: NaNs are left out, and receive a zero "
                      "gradient.")
    return export(reduce, numpy=np_fn)


def _nanmax(a, axis, keepdims, fill, prim):
    out = prim(P.nan_fill(a, fill), axis=axis, keepdims=keepdims)
    all_nan = P.logical_not(P.any(P.logical_not(P.isnan(a)), axis=axis, keepdims=keepdims))
    return P.where(all_nan, np.nan, out)


def _nanvar(a, axis, keepdims, ddof=0):
    valid = P.logical_not(P.isnan(a))
    safe = P.where(valid, a, 0)  # the double-where recipe: NaNs never reach a derivative
    n = P.valid_count(a, axis, True)
    centered = P.where(valid, safe - P.sum(safe, axis=axis, keepdims=True) / n, 0)
    ss = P.sum(centered * P.conj_if_complex(centered), axis=axis, keepdims=keepdims)
    return P.real(ss) / (P.valid_count(a, axis, keepdims) - ddof)


_nan_reduction("nansum", np.nansum, lambda a, axis, kd: P.sum(P.nan_fill(a, 0), axis=axis, keepdims=kd))
_nan_reduction("nanprod", np.nanprod, lambda a, axis, kd: P.prod(P.nan_fill(a, 1), axis=axis, keepdims=kd))
_nan_reduction("nanmean", np.nanmean, lambda a, axis, kd: P.sum(P.nan_fill(a, 0), axis=axis, keepdims=kd)
               / P.valid_count(a, axis, kd))
_nan_reduction("nanmax", np.nanmax, lambda a, axis, kd: _nanmax(a, axis, kd, -np.inf, P.max))
_nan_reduction("nanmin", np.nanmin, lambda a, axis, kd: _nanmax(a, axis, kd, np.inf, P.min))
_nan_reduction("nanvar", np.nanvar, _nanvar)
_nan_reduction("nanstd", np.nanstd, lambda a, axis, kd, ddof=0: P.sqrt(_nanvar(a, axis, kd, ddof)))


@export(numpy=np.ptp)
def ptp(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.ptp``: ``max - min`` (ties share the slope).

    >>> import funcgrad.numpy as fnp
    >>> fnp.ptp(fnp.array([3.0, -1.0, 2.0])).item()
    4.0
    """
    return P.max(a, axis=axis, keepdims=keepdims) - P.min(a, axis=axis, keepdims=keepdims)
