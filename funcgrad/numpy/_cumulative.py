"""funcgrad.numpy's running totals and differences: `cumsum`, `cumprod`, `diff`, `gradient`,
`trapezoid`..."""
from __future__ import annotations

import builtins

import numpy as np

from .._src.core import Array
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._creation import asarray, astype
from ._shapes import concatenate, ravel
from ._typing import ArrayLike, Axis, DTypeLike

export = ns.export


def _cumulative(prim, np_fn, name, fill=None):
    def cumulative(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None,
                   out: None = None) -> Array:
        if out is not None:
            raise TypeError(f"funcgrad.numpy.{name}: out= is not supported (arrays are immutable)")
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        if fill is not None:
            a = P.where(P.isnan(a), fill, a)
        if axis is None:
            a, axis = ravel(a), 0
        return prim(a, axis=axis)
    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = f"Differentiable ``numpy.{name}`` (``axis=None`` flattens first)."
    cumulative.primitive = prim
    return export(cumulative, numpy=np_fn)


cumsum = _cumulative(P.cumsum, np.cumsum, "cumsum")
cumprod = _cumulative(P.cumprod, np.cumprod, "cumprod")
nancumsum = _cumulative(P.cumsum, np.nancumsum, "nancumsum", fill=0)
nancumprod = _cumulative(P.cumprod, np.nancumprod, "nancumprod", fill=1)


@export(numpy=np.diff)
def diff(a: ArrayLike, n: int = 1, axis: Axis = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.diff``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diff(fnp.array([1.0, 4.0, 9.0])).tolist()
    [3.0, 5.0]
    """
    a = asarray(a)
    parts = []
    for extra in (prepend, append):
        if extra is not None:
            shape = list(H.shape(a))
            shape[axis] = 1
            extra = asarray(extra)
            if H.ndim(extra) == 0:
                extra = P.broadcast_to(extra, tuple(shape))
            parts.append(extra)
        else:
            parts.append(None)
    if prepend is not None or append is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    for _ in range(n):
        a = P.slice_axis(a, axis, 1) - P.slice_axis(a, axis, None, -1)
    return a


@export(numpy=np.ediff1d)
def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
            to_begin: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.ediff1d``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.ediff1d(fnp.array([1.0, 2.0, 4.0])).tolist()
    [1.0, 2.0]
    """
    d = diff(ravel(ary))
    parts = [ravel(to_begin)] if to_begin is not None else []
    parts.append(d)
    if to_end is not None:
        parts.append(ravel(to_end))
    return concatenate(parts) if len(parts) > 1 else d


@export(numpy=np.gradient)
def gradient(f: ArrayLike, *varargs: float, axis: Axis = None,
             edge_order: int = 1) -> Array | tuple[Array, ...]:
    """Differentiable ``numpy.gradient`` with scalar (uniform) spacings.

    >>> import funcgrad.numpy as fnp
    >>> fnp.gradient(fnp.array([1.0, 2.0, 4.0, 7.0])).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    f = asarray(f)
    axes = tuple(range(H.ndim(f))) if axis is None else H.normalize_axes(axis, H.ndim(f))
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    else:
        spacing = list(varargs)
    if builtins.any(np.ndim(h) != 0 for h in spacing):
        raise NotImplementedError("funcgrad.numpy.gradient supports scalar spacings only; "
                                  "for coordinate arrays, differentiate with diff() yourself")
    if edge_order not in (1, 2):
        raise ValueError("gradient: edge_order must be 1 or 2")
    outs = []
    for ax, h in zip(axes, spacing):
        s = lambda start=None, stop=None: P.slice_axis(f, ax, start, stop)  # noqa: E731
        inner = (s(2, None) - s(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first = (s(1, 2) - s(0, 1)) / h
            last = (s(-1, None) - s(-2, -1)) / h
        else:
            first = (-1.5 * s(0, 1) + 2.0 * s(1, 2) - 0.5 * s(2, 3)) / h
            last = (0.5 * s(-3, -2) - 2.0 * s(-2, -1) + 1.5 * s(-1, None)) / h
        outs.append(concatenate([first, inner, last], axis=ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


@export(numpy=np.trapezoid)
def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: Axis = -1) -> Array:
    """Differentiable ``numpy.trapezoid`` (in `y` and in the sample points `x`).

    >>> import funcgrad.numpy as fnp
    >>> fnp.trapezoid(fnp.array([1.0, 2.0, 3.0])).item()
    4.0
    """
    y = asarray(y)
    mids = (P.slice_axis(y, axis, 1) + P.slice_axis(y, axis, None, -1)) / 2.0
    widths = dx if x is None else diff(x, axis=axis if H.ndim(x) > 1 else -1)
    if x is not None and H.ndim(x) == 1 and H.ndim(y) > 1:
        shape = [1] * H.ndim(y)
        shape[axis] = -1
        widths = P.reshape(widths, tuple(H.resolve_shape(shape, (H.shape(x)[0] - 1,))))
    return P.sum(mids * widths, axis=axis)


def _cumulative_with_initial(prim, name, initial):
    def cumulative(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
                   include_initial: bool = False) -> Array:
        x = asarray(x)
        if axis is None:
            if H.ndim(x) > 1:
                raise ValueError(f"{name}: axis must be given for an array of {H.ndim(x)} "
                                 "dimensions (as NumPy's)")
            x, axis = (ravel(x), 0)
        if dtype is not None:
            x = astype(x, dtype)
        axis = axis % builtins.max(H.ndim(x), 1)
        out = prim(x, axis=axis)
        if include_initial:
            shape = list(H.shape(out))
            shape[axis] = 1
            out = P.concatenate(np.full(shape, initial, dtype=H.dtype(out)), out, axis=axis)
        return out
    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = (f"Differentiable ``numpy.{name}`` (the Array API's cumulative "
                          f"function: ``include_initial`` prepends {initial}).")
    cumulative.primitive = prim
    return export(cumulative, numpy=getattr(np, name))


cumulative_sum = _cumulative_with_initial(P.cumsum, "cumulative_sum", 0)
cumulative_prod = _cumulative_with_initial(P.cumprod, "cumulative_prod", 1)
