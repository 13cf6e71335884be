"""funcgrad.numpy's statistics and sorting: `average`, `quantile`, `median`, `cov`,
`corrcoef`, `sort`, `partition`."""
from __future__ import annotations


import numpy as np

from .._src.core import Array, Tracer, raw
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._creation import asarray
from ._indexing import diagonal, take_along_axis
from ._shapes import atleast_2d, concatenate, ravel
from ._typing import ArrayLike, Axis

export = ns.export


@export(numpy=np.average)
def average(a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None,
            returned: bool = False, *, keepdims: bool = False) -> Array | tuple[Array, Array]:
    """Differentiable ``numpy.average`` (in `a` and in `weights`).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda w: fnp.average(fnp.array([1.0, 3.0]), weights=w))(fnp.array([1.0, 1.0])).tolist()
    [-0.5, 0.5]
    """
    a = asarray(a)
    if isinstance(axis, list):
        axis = tuple(axis)
    if weights is None:
        avg = P.mean(a, axis=axis, keepdims=keepdims)
        total = np.asarray(H.count(a, axis), dtype=H.dtype(avg))
        total = np.broadcast_to(total, H.shape(avg))
    else:
        w = asarray(weights)
        if H.ndim(w) != H.ndim(a):
            if axis is None or not isinstance(axis, int) or H.ndim(w) != 1:
                raise TypeError("average: 1-D weights need an int axis; otherwise weights "
                                "must have the shape of a")
            shape = [1] * H.ndim(a)
            shape[axis] = H.shape(w)[0]
            w = P.reshape(w, tuple(shape))
        total = P.sum(P.broadcast_to(w, H.shape(a)), axis=axis, keepdims=keepdims)
        avg = P.sum(a * w, axis=axis, keepdims=keepdims) / total
    return (avg, total) if returned else avg


@export(numpy=np.sort)
def sort(a: ArrayLike, axis: Axis = -1, kind: str | None = None, order: str | None = None, *,
         stable: bool | None = None) -> Array:
    """Differentiable ``numpy.sort``: the gradient flows back through the permutation
    (tied elements each keep their own slot, in stable-sort order).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sort(x)[0])(fnp.array([3.0, 1.0, 2.0])).tolist()
    [0.0, 1.0, 0.0]
    """
    if order is not None:
        raise NotImplementedError("funcgrad.numpy.sort: order= (structured arrays) is not supported")
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return take_along_axis(a, P.argsort(a, axis=axis, kind="stable"), axis)


@export(numpy=np.partition)
def partition(a: ArrayLike, kth: ArrayLike, axis: Axis = -1, kind: str = "introselect",
              order: str | None = None) -> Array:
    """Differentiable ``numpy.partition``, through ``numpy.argpartition``'s permutation (the
    element at each `kth` is NumPy's; the others are ordered as argpartition leaves them).

    >>> import funcgrad.numpy as fnp
    >>> fnp.partition(fnp.array([3.0, 1.0, 2.0]), 1)[1].item()
    2.0
    """
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return take_along_axis(a, P.argpartition(a, kth=kth, axis=axis), axis)


def _quantile(a, q, axis, keepdims, method, skip_nan):
    if method != "linear":
        raise NotImplementedError(f"funcgrad.numpy quantiles support method='linear' only, got {method!r}")
    if isinstance(q, Tracer):
        raise TypeError("quantile/percentile: q must be a constant (no derivative flows into q)")
    q = np.asarray(raw(q), dtype=np.float64)
    if np.any((q < 0) | (q > 1)):
        raise ValueError("quantiles must be in the range [0, 1] (percentiles in [0, 100])")
    a = asarray(a)
    shape = H.shape(a)
    if axis is None:
        axes = tuple(range(len(shape)))
    else:
        axes = H.normalize_axes(axis, len(shape))
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    moved = P.reshape(P.transpose(a, rest + axes), tuple(shape[i] for i in rest) + (-1,))
    if H.shape(moved)[-1] == 0:
        raise ValueError("quantile of an empty axis is undefined (NumPy returns NaN with a "
                         "warning; funcgrad refuses, so no NaN gradient appears silently)")
    ordered = sort(moved, axis=-1)  # NaNs sort last
    n = H.shape(moved)[-1]
    count = P.valid_count(moved, -1, False) if skip_nan else np.full(H.shape(moved)[:-1], n)
    pos = P.reshape(q, q.shape + (1,) * (len(H.shape(moved)) - 1)) * (count - 1)
    lo = P.clip(P.floor(pos), 0, n - 1)
    hi = P.clip(P.ceil(pos), 0, n - 1)
    frac = pos - lo
    lead = q.shape + tuple(H.shape(moved)[:-1])
    ordered = P.broadcast_to(P.reshape(ordered, (1,) * q.ndim + tuple(H.shape(ordered))),
                           lead + (n,))
    pick = lambda i: take_along_axis(ordered, P.expand_axis(P.astype(i, np.intp), -1), -1)  # noqa: E731
    lo_v = P.reshape(pick(lo), lead)
    hi_v = P.reshape(pick(hi), lead)
    out = lo_v + (hi_v - lo_v) * P.astype(frac, H.dtype(lo_v))
    if skip_nan:
        out = P.where(P.equal(count, 0), np.nan, out)
    if keepdims:
        out = P.reshape(out, q.shape + H.keepdims_shape(shape, axis))
    return out


def _quantile_fn(name, np_fn, scale, skip_nan, fixed_q=None):
    def quantile_fn(a: ArrayLike, q: ArrayLike | None = None, axis: Axis = None, out: None = None,
                    overwrite_input: bool = False, method: str = "linear",
                    keepdims: bool = False) -> Array:
        if out is not None:
            raise TypeError(f"funcgrad.numpy.{name}: out= is not supported")
        if isinstance(q, Tracer):
            raise TypeError(f"{name}: q must be a constant (no derivative flows into q); "
                            "apply funcgrad.stop_gradient to it")
        qq = fixed_q if fixed_q is not None else np.asarray(raw(q), dtype=np.float64) / scale
        return _quantile(a, qq, axis, keepdims, method, skip_nan)
    if fixed_q is not None:
        def median_fn(a: ArrayLike, axis: Axis = None, out: None = None,
                      overwrite_input: bool = False, keepdims: bool = False) -> Array:
            return quantile_fn(a, None, axis, out, overwrite_input, "linear", keepdims)
        fn = median_fn
    else:
        fn = quantile_fn
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Differentiable ``numpy.{name}`` (method 'linear'): the gradient reaches the "
                  "one or two order statistics it interpolates" + (", NaNs skipped." if skip_nan else "."))
    return export(fn, numpy=np_fn)


_quantile_fn("quantile", np.quantile, 1.0, False)
_quantile_fn("percentile", np.percentile, 100.0, False)
_quantile_fn("median", np.median, 1.0, False, fixed_q=0.5)
_quantile_fn("nanquantile", np.nanquantile, 1.0, True)
_quantile_fn("nanpercentile", np.nanpercentile, 100.0, True)
_quantile_fn("nanmedian", np.nanmedian, 1.0, True, fixed_q=0.5)


@export(numpy=np.cov)
def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: float | None = None) -> Array:
    """Differentiable ``numpy.cov`` (no frequency or analytic weights).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cov(fnp.array([[0.0, 2.0], [1.0, 3.0]])).tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    x = atleast_2d(m)
    if not rowvar and H.shape(x)[0] != 1:
        x = P.transpose(x)
    if y is not None:
        y = atleast_2d(y)
        if not rowvar and H.shape(y)[0] != 1:
            y = P.transpose(y)
        x = concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    centered = x - P.mean(x, axis=1, keepdims=True)
    c = P.matmul(centered, P.conj_if_complex(P.transpose(centered))) / (H.shape(x)[1] - ddof)
    return P.reshape(c, ()) if H.shape(c) == (1, 1) else c


@export(numpy=np.corrcoef)
def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True) -> Array:
    """Differentiable ``numpy.corrcoef``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.corrcoef(fnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar)
    if H.ndim(c) == 0:
        return c / c
    d = P.sqrt(P.real(diagonal(c)))
    return c / P.reshape(d, (-1, 1)) / P.reshape(d, (1, -1))


@export(numpy=np.sort_complex)
def sort_complex(a: ArrayLike) -> Array:
    """Differentiable ``numpy.sort_complex``: sorted by real part, then imaginary part, along
    the last axis; the result is complex.

    >>> import funcgrad.numpy as fnp
    >>> fnp.sort_complex(fnp.array([2.0, 1j, 1.0])).tolist()
    [1j, (1+0j), (2+0j)]
    """
    a = asarray(a)
    dtype = np.result_type(H.dtype(a), np.complex64)
    order = P.lexsort(P.imag(a), P.real(a), axis=-1)
    return take_along_axis(P.astype(a, dtype), order, -1)
