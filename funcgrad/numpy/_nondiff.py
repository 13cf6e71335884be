"""funcgrad.numpy's functions whose results carry no derivative: comparisons, logic, rounding,
arg-functions, searching and counting, and questions about arrays (`shape`, `allclose`)."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from .._src.core import Array, Tracer, raw, wrap
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._typing import ArrayLike

public = ns.public

for _prim in (P.equal, P.not_equal, P.less, P.less_equal, P.greater, P.greater_equal,
              P.logical_and, P.logical_or, P.logical_xor, P.logical_not, P.isnan, P.isfinite,
              P.isinf, P.isneginf, P.isposinf, P.signbit, P.sign, P.floor, P.ceil, P.trunc,
              P.rint, P.fix, P.heaviside, P.nextafter, P.spacing, P.iscomplex, P.isreal,
              P.floor_divide, P.argmax, P.argmin, P.nanargmax, P.nanargmin, P.all, P.any,
              P.count_nonzero, P.argsort, P.argpartition, P.isclose, P.searchsorted, P.digitize,
              P.argwhere, P.flatnonzero, P.unique, P.bincount, P.histogram):
    public(_prim, numpy=getattr(P.np, _prim.name))
public(P.round, numpy=(np.round, np.around))
public(P.around)
nonzero = public(P.nonzero, numpy=np.nonzero)


def _plain_answer(prim):
    """Questions about arrays (allclose, shape...) answer with plain Python values, as
    NumPy's and JAX's do, under every transform too: there they stay primitives (so vmap can
    batch them), whose answer is handed back as it is (a dtype, a tuple of ints, a bool),
    never wrapped into an Array."""
    np_fn = prim.impl

    def ask(*args, **kwargs):
        if builtins.any(isinstance(a, Tracer) for a in args):
            return prim(*args, **kwargs)
        return np_fn(*[raw(a) for a in args], **kwargs)
    ask.__name__ = ask.__qualname__ = prim.name
    ask.__doc__ = f"``numpy.{prim.name}``, answered with a plain Python value (no derivative)."
    ask.primitive = prim
    return ns.export(ask, numpy=np_fn, kind="non-differentiable", wraps=False)


for _prim in (P.allclose, P.array_equal, P.shape, P.ndim, P.size, P.iscomplexobj,
              P.isrealobj, P.isscalar, P.result_type):
    _plain_answer(_prim)


for _prim in (P.bitwise_and, P.bitwise_or, P.bitwise_xor, P.bitwise_not, P.bitwise_count,
              P.left_shift, P.right_shift, P.gcd, P.lcm, P.union1d, P.setdiff1d, P.setxor1d,
              P.packbits, P.unpackbits, P.histogram_bin_edges):
    public(_prim, numpy=getattr(np, _prim.name))
public(P.bitwise_not, name="invert", numpy=np.invert)
public(P.bitwise_not, name="bitwise_invert", numpy=np.bitwise_invert)
public(P.left_shift, name="bitwise_left_shift", numpy=np.bitwise_left_shift)
public(P.right_shift, name="bitwise_right_shift", numpy=np.bitwise_right_shift)
_plain_answer(P.array_equiv)


@ns.export(numpy=np.isin, kind="non-differentiable")
def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False,
         invert: bool = False, *, kind: str | None = None) -> Array:
    """``numpy.isin``, without a derivative."""
    return P.isin(element, test_elements, assume_unique=assume_unique, invert=invert, kind=kind)


@ns.export(numpy=np.lexsort, kind="non-differentiable")
def lexsort(keys: ArrayLike | Sequence[ArrayLike], axis: int = -1) -> Array:
    """``numpy.lexsort`` (the last key sorts first), without a derivative."""
    if isinstance(keys, (tuple, list)):
        return P.lexsort(*keys, axis=axis)
    return P.lexsort(*[P.getitem(keys, template=(k,)) for k in range(P.shape(keys)[0])],
                     axis=axis)


@ns.export(numpy=np.intersect1d, kind="non-differentiable")
def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False,
                return_indices: bool = False) -> Array | tuple[Array, Array, Array]:
    """``numpy.intersect1d``, without a derivative."""
    return P.intersect1d(ar1, ar2, assume_unique=assume_unique, return_indices=return_indices)


def _unique_part(which):
    result_type = type(getattr(np, which)(np.zeros(1)))

    def unique_part(x: ArrayLike) -> Any:
        out = P.unique_parts(x, which=which)
        if not isinstance(out, tuple):
            return wrap(out)
        return result_type(*[wrap(o) for o in out])
    unique_part.__name__ = unique_part.__qualname__ = which
    unique_part.__doc__ = f"``numpy.{which}``, without a derivative."
    ns.export(unique_part, numpy=getattr(np, which), kind="non-differentiable", wraps=False)


for _which in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
    _unique_part(_which)


@ns.export(numpy=np.ravel_multi_index, kind="non-differentiable")
def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str = "raise",
                      order: str = "C") -> Array:
    """``numpy.ravel_multi_index``, without a derivative."""
    return P.ravel_multi_index(*multi_index, shape=tuple(dims), mode=mode, order=order)


@ns.export(numpy=np.unravel_index, kind="non-differentiable")
def unravel_index(indices: ArrayLike, shape: Sequence[int] | int,
                  order: str = "C") -> tuple[Array, ...]:
    """``numpy.unravel_index``, without a derivative."""
    return P.unravel_index(indices, shape=tuple(np.atleast_1d(shape)), order=order)


@ns.export(numpy=np.histogram2d, kind="non-differentiable")
def histogram2d(x: ArrayLike, y: ArrayLike, bins: Any = 10, range: Any = None,
                density: bool | None = None, weights: ArrayLike | None = None
                ) -> tuple[Array, Array, Array]:
    """``numpy.histogram2d``, without a derivative."""
    return P.histogram2d(x, y, bins=bins, range=range, density=density,
                         weights=None if weights is None else raw(weights))


@ns.export(numpy=np.histogramdd, kind="non-differentiable")
def histogramdd(sample: ArrayLike, bins: Any = 10, range: Any = None,
                density: bool | None = None, weights: ArrayLike | None = None
                ) -> tuple[Array, list[Array]]:
    """``numpy.histogramdd``, without a derivative."""
    return P.histogramdd(sample, bins=bins, range=range, density=density,
                         weights=None if weights is None else raw(weights))


def _dtype_of(x):
    return x.dtype if isinstance(x, (Array, np.ndarray, np.generic)) else x


def _dtype_question(np_fn):
    """NumPy's questions about dtypes, with an array standing for its dtype."""
    def ask(*args, **kwargs):
        return np_fn(*[_dtype_of(a) for a in args], **kwargs)
    ask.__name__ = ask.__qualname__ = np_fn.__name__
    ask.__doc__ = f"``numpy.{np_fn.__name__}`` (about dtypes; an array stands for its dtype)."
    ns.export(ask, kind="non-differentiable", wraps=False)


for _fn in (np.can_cast, np.promote_types, np.issubdtype, np.isdtype):
    _dtype_question(_fn)


@ns.export(kind="non-differentiable", wraps=False)
def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """``numpy.broadcast_shapes``: the shape arrays of these shapes broadcast to."""
    return np.broadcast_shapes(*shapes)


@ns.export(kind="non-differentiable", wraps=False)
def iterable(y: Any) -> bool:
    """``numpy.iterable``: whether `y` can be iterated over (an array of rank 0 cannot)."""
    if isinstance(y, Tracer) or hasattr(y, "shape"):
        return len(y.shape) > 0
    return np.iterable(y)


@ns.export(kind="non-differentiable", wraps=False)
def array_repr(arr: ArrayLike, max_line_width: int | None = None, precision: int | None = None,
               suppress_small: bool | None = None) -> str:
    """``numpy.array_repr`` of the array's values."""
    return np.array_repr(np.asarray(raw(arr)), max_line_width, precision, suppress_small)


@ns.export(kind="non-differentiable", wraps=False)
def array_str(a: ArrayLike, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    """``numpy.array_str`` of the array's values."""
    return np.array_str(np.asarray(raw(a)), max_line_width, precision, suppress_small)


@ns.export(kind="non-differentiable", wraps=False)
def einsum_path(subscripts: Any, *operands: Any, optimize: str | bool = "greedy",
                einsum_call: bool = False) -> tuple[list[Any], str]:
    """``numpy.einsum_path``: the contraction order NumPy would choose (read off shapes)."""
    probes = [np.zeros(H.shape(o), H.dtype(o)) if not isinstance(o, (str, list)) else o
              for o in (subscripts,) + operands]
    return np.einsum_path(*probes, optimize=optimize, einsum_call=einsum_call)
