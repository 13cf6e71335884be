"""Helpers every layer of funcgrad.numpy shares: shapes, dtypes and axes read off raw values
or tracers, and index templates. Nothing here records an operation."""
from __future__ import annotations

import math

import numpy as np

from .._src.core import Array, Tracer

__all__ = ["ndim", "shape", "dtype", "bottom", "normalize_axes", "keepdims_shape", "count",
           "resolve_shape", "SLOT", "split_index", "build_index", "is_basic", "LETTERS"]


def ndim(x) -> int:
    return len(x.shape) if hasattr(x, "shape") else np.ndim(x)


def shape(x) -> tuple:
    return x.shape if hasattr(x, "shape") else np.shape(x)


def dtype(x) -> np.dtype:
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


def bottom(x):
    """The raw value under every layer of tracing (for decisions made on concrete values)."""
    while isinstance(x, Array):
        x = x._value
    return x


def normalize_axes(axis, rank: int) -> tuple:
    """`axis` (None, an int or a sequence) as a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, (tuple, list)):
        return tuple(a % rank for a in axis) if rank else ()
    return (axis % rank,) if rank else ()


def keepdims_shape(full_shape, axis) -> tuple:
    """The shape a reduction over `axis` has with ``keepdims=True``."""
    if type(axis) is int and full_shape:  # (one axis, the commonest: no set of axes built)
        k = axis % len(full_shape)
        return (*full_shape[:k], 1, *full_shape[k + 1:])
    axes = normalize_axes(axis, len(full_shape))
    return tuple(1 if i in axes else s for i, s in enumerate(full_shape))


def count(x, axis) -> int:
    """How many elements a reduction over `axis` combines into each result."""
    full = shape(x)
    if axis is None:
        return math.prod(full)
    return math.prod(full[a] for a in normalize_axes(axis, len(full)))


def resolve_shape(new_shape, old_shape) -> tuple:
    """`new_shape` with a ``-1`` replaced by the size it stands for."""
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    if -1 in new_shape:
        known = int(np.prod([s for s in new_shape if s != -1], dtype=np.int64))
        total = int(np.prod(old_shape, dtype=np.int64))
        new_shape = tuple(total // known if s == -1 else s for s in new_shape)
    return new_shape


LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# --- index templates: an index as static parts plus the arrays in it ------------------------
class _Slot:
    """Where an index array sits in an index template."""
    __slots__ = ()

    def __repr__(self):
        return "<array>"


SLOT = _Slot()


def split_index(index):
    """An index as (static template, index arrays); arrays become primitive arguments so a
    batch trace can see them. Boolean masks become integer arrays here."""
    if not isinstance(index, tuple):
        index = (index,)
    template = []
    arrays = []
    for item in index:
        kind = type(item)
        if kind is slice or kind is int or item is None or item is Ellipsis:
            template.append(item)  # (the commonest items first: x[:, 0])
            continue
        if isinstance(item, Tracer):
            if np.issubdtype(item.dtype, np.inexact):
                raise IndexError("an index must be integers or booleans, got a float array")
            template.append(SLOT)
            arrays.append(item)
            continue
        if isinstance(item, Array):
            item = item._value
        if isinstance(item, (list, tuple, np.ndarray)) or (isinstance(item, np.generic) and item.dtype == bool):
            arr = np.asarray(item)
            if arr.dtype == bool:
                for nz in np.nonzero(arr):
                    template.append(SLOT)
                    arrays.append(nz)
                continue
            if not np.issubdtype(arr.dtype, np.integer) and arr.size:
                raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                                 f"got {arr.dtype}")
            template.append(SLOT)
            arrays.append(arr.astype(np.intp))
        elif isinstance(item, bool):
            template.append(item)
        elif item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice)):
            template.append(item)
        else:
            raise IndexError(f"funcgrad arrays cannot be indexed by a {type(item).__name__}; use "
                             "ints, slices, None, Ellipsis, integer arrays or boolean masks")
    return tuple(template), tuple(arrays)


def build_index(template, arrays) -> tuple:
    if not arrays:  # basic indexing: the template is the index
        return template
    it = iter(arrays)
    return tuple(next(it) if t is SLOT else t for t in template)


def is_basic(template) -> bool:
    """Whether an index template holds no arrays (basic indexing: a view in NumPy)."""
    return SLOT not in template
