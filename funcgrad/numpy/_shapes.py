"""funcgrad.numpy's shape functions: reshaping, joining, splitting, flipping, tiling and
padding, all linear, so their derivatives move cotangents back into place."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from .._src.core import Array, raw
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._creation import asarray
from ._indexing import take
from ._typing import ArrayLike, Axis, Shape

export = ns.export


def _elements(name: str, arrays) -> list:
    """The arrays a joining function was given, each an array or a scalar: a list or tuple in
    their place is refused, as JAX does (NumPy would read it as one more array)."""
    arrays = list(arrays)
    for position, a in enumerate(arrays):
        if isinstance(a, (list, tuple)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} at "
                            f"position {position}.")
    return arrays


@export(numpy=np.concatenate)
def concatenate(arrays: Sequence[ArrayLike], axis: Axis = 0) -> Array:
    """Differentiable ``numpy.concatenate``."""
    arrays = _elements("concatenate", arrays)
    if axis is None:
        return P.concatenate(*[ravel(a) for a in arrays], axis=0)
    return P.concatenate(*[asarray(a) for a in arrays], axis=axis)


@export(numpy=np.stack)
def stack(arrays: Sequence[ArrayLike], axis: Axis = 0) -> Array:
    """Differentiable ``numpy.stack``."""
    arrays = _elements("stack", arrays)
    if not arrays:
        raise ValueError("stack: need at least one array")
    shapes = {tuple(H.shape(raw(a))) for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    return P.stack(*arrays, axis=axis)


@export(numpy=(np.hstack,))
def hstack(arrays: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.hstack``."""
    arrays = [atleast_1d(a) for a in _elements("hstack", arrays)]
    return concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1)


@export(numpy=(np.vstack,))
def vstack(arrays: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.vstack`` (also ``row_stack``, its old name)."""
    return concatenate([atleast_2d(a) for a in _elements("vstack", arrays)], axis=0)


export(vstack, name="row_stack", wraps=False)


@export(numpy=np.reshape)
def reshape(a: ArrayLike, shape: Shape | None = None, order: str = "C", *,
                   newshape: Shape | None = None) -> Array:
    """Differentiable ``numpy.reshape`` (C order)."""
    if order != "C":
        raise NotImplementedError("funcgrad.numpy.reshape supports order='C' only")
    shape = newshape if shape is None else shape
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return P.reshape(a, H.resolve_shape(shape, H.shape(a)))


@export(numpy=np.transpose)
def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.transpose``."""
    return P.transpose(a, None if axes is None else tuple(axes))


@export(numpy=np.swapaxes)
def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """Differentiable ``numpy.swapaxes``."""
    return P.swapaxes(a, axis1, axis2)


@export(numpy=np.moveaxis)
def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.moveaxis``."""
    return P.moveaxis(a, source, destination)


@export(numpy=np.expand_dims)
def expand_dims(a: ArrayLike, axis: Axis) -> Array:
    """Differentiable ``numpy.expand_dims``."""
    shape = list(H.shape(a))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = len(shape) + len(axes)
    for ax in sorted(x % n for x in axes):
        shape.insert(ax, 1)
    return P.reshape(a, tuple(shape))


@export(numpy=np.squeeze)
def squeeze(a: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.squeeze``."""
    shape = H.shape(a)
    axes = H.normalize_axes(axis, len(shape)) if axis is not None else tuple(i for i, s in enumerate(shape) if s == 1)
    for ax in axes:
        if shape[ax] != 1:
            raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size "
                             f"not equal to one (axis {ax} has size {shape[ax]})")
    return P.reshape(a, tuple(s for i, s in enumerate(shape) if i not in axes))


@export(numpy=np.ravel)
def ravel(a: ArrayLike, order: str = "C") -> Array:
    """Differentiable ``numpy.ravel``."""
    return P.flatten(asarray(a))


@export(numpy=np.broadcast_to)
def broadcast_to(array: ArrayLike, shape: Shape) -> Array:
    """Differentiable ``numpy.broadcast_to``."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return P.broadcast_to(array, shape)


@export(numpy=np.atleast_1d)
def atleast_1d(a: ArrayLike) -> Array:
    """Differentiable ``numpy.atleast_1d``."""
    return P.reshape(a, (1,)) if H.ndim(a) == 0 else a


@export(numpy=np.atleast_2d)
def atleast_2d(a: ArrayLike) -> Array:
    """Differentiable ``numpy.atleast_2d``."""
    n = H.ndim(a)
    return P.reshape(a, (1,) * (2 - n) + tuple(H.shape(a))) if n < 2 else a


# --- rearranging ---------------------------------------------------------------------------


@export(numpy=np.flip)
def flip(m: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.flip``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.flip(fnp.array([1.0, 2.0, 3.0])).tolist()
    [3.0, 2.0, 1.0]
    """
    m = asarray(m)
    axes = H.normalize_axes(axis, H.ndim(m))
    return P.subscript(m, tuple(slice(None, None, -1) if d in axes else slice(None)
                                for d in range(H.ndim(m))))


@export(numpy=np.fliplr)
def fliplr(m: ArrayLike) -> Array:
    """Differentiable ``numpy.fliplr``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fliplr(fnp.array([[1.0, 2.0]])).tolist()
    [[2.0, 1.0]]
    """
    return flip(m, 1)


@export(numpy=np.flipud)
def flipud(m: ArrayLike) -> Array:
    """Differentiable ``numpy.flipud``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.flipud(fnp.array([[1.0], [2.0]])).tolist()
    [[2.0], [1.0]]
    """
    return flip(m, 0)


@export(numpy=np.rot90)
def rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Array:
    """Differentiable ``numpy.rot90``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.rot90(fnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[2.0, 4.0], [1.0, 3.0]]
    """
    m = asarray(m)
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(H.ndim(m)))
    a0, a1 = axes[0] % H.ndim(m), axes[1] % H.ndim(m)
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return P.transpose(flip(m, a1), tuple(perm))
    return flip(P.transpose(m, tuple(perm)), a1)


@export(numpy=np.roll)
def roll(a: ArrayLike, shift: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.roll``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.roll(fnp.array([1.0, 2.0, 3.0]), 1).tolist()
    [3.0, 1.0, 2.0]
    """
    a = asarray(a)
    if axis is None:
        return P.reshape(roll(ravel(a), shift, 0), H.shape(a))
    shifts, axes = np.broadcast_arrays(np.atleast_1d(shift), np.atleast_1d(axis))
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        n = H.shape(a)[ax]
        if n:
            a = take(a, (np.arange(n) - int(s)) % n, int(ax))
    return a


@export(numpy=np.rollaxis)
def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """Differentiable ``numpy.rollaxis``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.rollaxis(fnp.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    n = H.ndim(a)
    axis %= n
    if start < 0:
        start += n
    if axis < start:
        start -= 1
    if axis == start:
        return a
    perm = [d for d in range(n) if d != axis]
    perm.insert(start, axis)
    return P.transpose(a, tuple(perm))


@export(numpy=np.tile)
def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.tile``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tile(fnp.array([1.0, 2.0]), 2).tolist()
    [1.0, 2.0, 1.0, 2.0]
    """
    A = asarray(A)
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    d = builtins.max(H.ndim(A), len(reps))
    shape = (1,) * (d - H.ndim(A)) + tuple(H.shape(A))
    reps = (1,) * (d - len(reps)) + reps
    interleaved = tuple(x for s in shape for x in (1, s))
    grown = P.broadcast_to(P.reshape(A, interleaved), tuple(x for r, s in zip(reps, shape) for x in (r, s)))
    return P.reshape(grown, tuple(r * s for r, s in zip(reps, shape)))


@export(numpy=np.repeat)
def repeat(a: ArrayLike, repeats: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.repeat``.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sum(fnp.repeat(x, [1, 3])))(fnp.zeros(2)).tolist()
    [1.0, 3.0]
    """
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis %= H.ndim(a)
    if np.ndim(repeats) == 0:
        r = int(repeats)
        shape = H.shape(a)
        grown = P.broadcast_to(P.expand_axis(a, axis + 1), shape[:axis + 1] + (r,) + shape[axis + 1:])
        return P.reshape(grown, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])
    return take(a, np.repeat(np.arange(H.shape(a)[axis]), repeats), axis)


@export(numpy=np.pad)
def pad(array: ArrayLike, pad_width: int | Sequence[int] | Sequence[Sequence[int]],
        mode: str = "constant", **kwargs: Any) -> Array:
    """Differentiable ``numpy.pad`` for the modes constant, edge, reflect, symmetric and wrap.

    >>> import funcgrad.numpy as fnp
    >>> fnp.pad(fnp.array([1.0, 2.0]), 1, mode="reflect").tolist()
    [2.0, 1.0, 2.0, 1.0]
    """
    array = asarray(array)
    nd = H.ndim(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (nd, 2))
    if mode == "constant":
        frame = np.pad(np.zeros(H.shape(array), dtype=H.dtype(array)), widths, mode="constant",
                       constant_values=kwargs.get("constant_values", 0))
        inner = tuple(slice(int(b), int(b) + s) for (b, _), s in zip(widths, H.shape(array)))
        return P.index_set(frame, array, template=inner)
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"funcgrad.numpy.pad: mode {mode!r} is not supported; use "
                                  "constant, edge, reflect, symmetric or wrap")
    for ax, (before, after) in enumerate(widths):
        if before or after:
            source = np.pad(np.arange(H.shape(array)[ax]), (int(before), int(after)), mode=mode, **kwargs)
            array = take(array, source, ax)
    return array


def _split_points(n, sections, equal):
    if np.ndim(sections) == 0:
        sections = int(sections)
        if equal and n % sections:
            raise ValueError("array split does not result in an equal division")
        size, extra = divmod(n, sections)
        sizes = [size + 1] * extra + [size] * (sections - extra)
        return list(np.cumsum([0] + sizes))
    return [0] + [int(i) for i in sections] + [n]


def _split(ary, indices_or_sections, axis, equal):
    ary = asarray(ary)
    points = _split_points(H.shape(ary)[axis], indices_or_sections, equal)
    return [(P.slice_axis(ary, axis, start, stop)) for start, stop in zip(points[:-1], points[1:])]


@export(numpy=np.split)
def split(ary: ArrayLike, indices_or_sections: int | Sequence[int], axis: Axis = 0) -> list[Array]:
    """Differentiable ``numpy.split``: a list of arrays.

    >>> import funcgrad.numpy as fnp
    >>> [p.tolist() for p in fnp.split(fnp.array([1.0, 2.0, 3.0, 4.0]), 2)]
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _split(ary, indices_or_sections, axis, True)


@export(numpy=np.array_split)
def array_split(ary: ArrayLike, indices_or_sections: int | Sequence[int],
                axis: Axis = 0) -> list[Array]:
    """Differentiable ``numpy.array_split``.

    >>> import funcgrad.numpy as fnp
    >>> [p.tolist() for p in fnp.array_split(fnp.array([1.0, 2.0, 3.0]), 2)]
    [[1.0, 2.0], [3.0]]
    """
    return _split(ary, indices_or_sections, axis, False)


@export(numpy=np.hsplit)
def hsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """Differentiable ``numpy.hsplit``.

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.hsplit(fnp.ones((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    return _split(ary, indices_or_sections, 1 if H.ndim(ary) > 1 else 0, True)


@export(numpy=np.vsplit)
def vsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """Differentiable ``numpy.vsplit``.

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.vsplit(fnp.ones((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    if H.ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0, True)


@export(numpy=np.dsplit)
def dsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """Differentiable ``numpy.dsplit``.

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.dsplit(fnp.ones((1, 1, 4)), 2)]
    [(1, 1, 2), (1, 1, 2)]
    """
    if H.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2, True)


@export(numpy=np.atleast_3d)
def atleast_3d(a: ArrayLike) -> Array:
    """Differentiable ``numpy.atleast_3d``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.atleast_3d(fnp.ones(3)).shape
    (1, 3, 1)
    """
    shape = H.shape(a)
    new = {0: (1, 1, 1), 1: (1,) + tuple(shape) + (1,), 2: tuple(shape) + (1,)}.get(len(shape))
    return a if new is None else P.reshape(a, new)


@export(numpy=np.dstack)
def dstack(tup: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.dstack``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.dstack([fnp.ones((2, 2)), fnp.ones((2, 2))]).shape
    (2, 2, 2)
    """
    return concatenate([atleast_3d(a) for a in _elements("dstack", tup)], axis=2)


@export(numpy=np.column_stack)
def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.column_stack``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.column_stack([fnp.array([1.0, 2.0]), fnp.array([3.0, 4.0])]).tolist()
    [[1.0, 3.0], [2.0, 4.0]]
    """
    return concatenate([P.reshape(a, (-1, 1)) if H.ndim(a) < 2 else a
                        for a in _elements("column_stack", tup)], axis=1)


@export(numpy=np.meshgrid)
def meshgrid(*xi: ArrayLike, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> tuple[Array, ...]:
    """Differentiable ``numpy.meshgrid``: a tuple of arrays.

    >>> import funcgrad.numpy as fnp
    >>> [g.shape for g in fnp.meshgrid(fnp.ones(2), fnp.ones(3))]
    [(3, 2), (3, 2)]
    """
    n = len(xi)
    outs = []
    for i, x in enumerate(xi):
        shape = [1] * n
        shape[i] = -1
        if indexing == "xy" and n > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        outs.append(P.reshape(x, tuple(H.resolve_shape(shape, H.shape(x)))))
    if not sparse:
        full = np.broadcast_shapes(*[H.shape(o) for o in outs])
        outs = [P.broadcast_to(o, full) for o in outs]
    return tuple(outs)


@export(numpy=np.broadcast_arrays)
def broadcast_arrays(*args: ArrayLike) -> tuple[Array, ...]:
    """Differentiable ``numpy.broadcast_arrays``: a tuple of arrays.

    >>> import funcgrad.numpy as fnp
    >>> [a.shape for a in fnp.broadcast_arrays(fnp.ones((2, 1)), fnp.ones(3))]
    [(2, 3), (2, 3)]
    """
    full = np.broadcast_shapes(*[H.shape(a) for a in args])
    return tuple(P.broadcast_to(a, full) for a in args)


@export(numpy=np.matrix_transpose)
def matrix_transpose(x: ArrayLike) -> Array:
    """Differentiable ``numpy.matrix_transpose``: swaps the last two axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.matrix_transpose(fnp.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    return P.swapaxes(x, -1, -2)


@export(numpy=np.permute_dims)
def permute_dims(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.permute_dims`` (``transpose``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.permute_dims(fnp.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return P.transpose(a, None if axes is None else tuple(axes))


@export(numpy=np.concat)
def concat(arrays: Sequence[ArrayLike], axis: Axis = 0) -> Array:
    """Differentiable ``numpy.concat`` (``concatenate``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.concat([fnp.ones(1), fnp.zeros(1)]).tolist()
    [1.0, 0.0]
    """
    return concatenate(arrays, axis=axis)


@export(numpy=np.unstack)
def unstack(x: ArrayLike, axis: Axis = 0) -> tuple[Array, ...]:
    """Differentiable ``numpy.unstack``: a tuple of the slices along `axis`.

    >>> import funcgrad.numpy as fnp
    >>> [u.tolist() for u in fnp.unstack(fnp.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)]
    [[1.0, 3.0], [2.0, 4.0]]
    """
    x = asarray(x)
    axis %= H.ndim(x)
    return tuple(P.subscript(x, (slice(None),) * axis + (i,)) for i in range(H.shape(x)[axis]))


@export(numpy=np.delete)
def delete(arr: ArrayLike, obj: int | slice | Sequence[int], axis: Axis = None) -> Array:
    """Differentiable ``numpy.delete``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.delete(fnp.array([1.0, 2.0, 3.0]), 1).tolist()
    [1.0, 3.0]
    """
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    keep = np.ones(H.shape(arr)[axis], dtype=bool)
    keep[obj] = False
    return take(arr, np.flatnonzero(keep), axis)


@export(numpy=np.append)
def append(arr: ArrayLike, values: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.append``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.append(fnp.array([1.0]), fnp.array([[2.0, 3.0]])).tolist()
    [1.0, 2.0, 3.0]
    """
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([asarray(arr), asarray(values)], axis=axis)


class _Concatenator:
    """``r_`` and ``c_``: arrays, scalars and slices (``start:stop:step`` as ``arange``,
    a complex step as ``linspace``) joined along the first axis, or as columns."""

    def __init__(self, columns: bool) -> None:
        self.columns = columns

    def __getitem__(self, key) -> Array:
        items = key if isinstance(key, tuple) else (key,)
        parts = []
        for item in items:
            if isinstance(item, str):
                raise NotImplementedError("funcgrad.numpy.r_/c_: string directives ('r', '0,2', ...) "
                                          "are not supported; use concatenate or stack")
            parts.append(asarray(np.r_[item] if isinstance(item, slice) else item))
        if self.columns:
            return column_stack([p if H.ndim(p) else P.reshape(p, (1,)) for p in parts])
        return concatenate([atleast_1d(p) for p in parts], axis=0)


r_ = _Concatenator(columns=False)
r_.__doc__ = """Differentiable ``numpy.r_``: ``r_[a, b, 1:3]`` concatenates along the first axis.

>>> import funcgrad.numpy as fnp
>>> fnp.r_[fnp.array([1.0, 2.0]), 0.5, 0:2].tolist()
[1.0, 2.0, 0.5, 0.0, 1.0]
"""
c_ = _Concatenator(columns=True)
c_.__doc__ = """Differentiable ``numpy.c_``: ``c_[a, b]`` joins 1-d arrays as columns.

>>> import funcgrad.numpy as fnp
>>> fnp.c_[fnp.array([1.0, 2.0]), fnp.array([3.0, 4.0])].tolist()
[[1.0, 3.0], [2.0, 4.0]]
"""


@export(numpy=np.block)
def block(arrays: Any) -> Array:
    """Differentiable ``numpy.block``: nested lists joined along the last axes (the innermost
    list along the last axis), every piece raised to the deepest nesting's rank.

    >>> import funcgrad.numpy as fnp
    >>> fnp.block([[fnp.eye(2), fnp.zeros((2, 1))]]).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    def depth(x):
        if isinstance(x, list):
            if not x:
                raise ValueError("block: lists cannot be empty")
            depths = {depth(item) for item in x}
            if len(depths) != 1:
                raise ValueError("block: list depths are mismatched; nest every piece equally")
            return 1 + depths.pop()
        if isinstance(x, tuple):
            raise TypeError("block: arrays is a tuple; only lists can be used to arrange blocks")
        return 0

    levels = depth(arrays)
    rank = builtins.max(levels, builtins.max(H.ndim(a) for a in _leaves(arrays)))

    def join(x, level):
        if not isinstance(x, list):
            x = asarray(x)
            return P.reshape(x, (1,) * (rank - H.ndim(x)) + tuple(H.shape(x)))
        return concatenate([join(item, level + 1) for item in x], axis=-(levels - level))
    return join(arrays, 0)


def _leaves(nested):
    if isinstance(nested, list):
        for item in nested:
            yield from _leaves(item)
    else:
        yield nested


@export(numpy=np.resize)
def resize(a: ArrayLike, new_shape: Shape) -> Array:
    """Differentiable ``numpy.resize``: `a`'s elements repeated in order to fill `new_shape`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.resize(fnp.array([1.0, 2.0, 3.0]), (2, 2)).tolist()
    [[1.0, 2.0], [3.0, 1.0]]
    """
    flat = ravel(a)
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    total = int(np.prod(shape, dtype=np.int64))
    if H.shape(flat)[0] == 0 or total == 0:
        return P.reshape(P.astype(np.zeros(total), H.dtype(flat)), shape)
    return P.reshape(take(flat, np.arange(total) % H.shape(flat)[0]), shape)


@export(numpy=np.trim_zeros)
def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: Axis = None) -> Array:
    """Differentiable ``numpy.trim_zeros`` of a 1-d array: which zeros to trim is read off its
    values (so the result's length depends on them, and it cannot be vmapped).

    >>> import funcgrad.numpy as fnp
    >>> fnp.trim_zeros(fnp.array([0.0, 1.0, 2.0, 0.0])).tolist()
    [1.0, 2.0]
    """
    values = np.asarray(H.bottom(filt))
    if H.ndim(filt) != 1 or values.ndim != 1:
        raise ValueError("trim_zeros: funcgrad trims 1-d arrays outside vmap only (the result's "
                         "length depends on the values)")
    nonzero = np.flatnonzero(values)
    if nonzero.size == 0:
        return P.getitem(filt, template=(slice(0, 0),))
    start = nonzero[0] if "f" in trim.lower() else 0
    stop = nonzero[-1] + 1 if "b" in trim.lower() else values.size
    return P.getitem(filt, template=(slice(int(start), int(stop)),))
