"""Batching for vmap: a tracer holds a value with one extra axis, ``_bdim``, that the traced
function does not see. Each primitive's batch rule maps batched arguments to a batched result
in one call; the generic rules here serve whole families of primitives."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .core import Array, Primitive, Trace, Tracer, engine


class BatchTracer(Tracer):
    __slots__ = ("_bdim",)

    def __init__(self, trace: "BatchTrace", value: Any, bdim: int) -> None:
        self._trace = trace
        self._value = value
        self._bdim = bdim

    @property
    def shape(self) -> tuple[int, ...]:
        shape = self._value.shape
        return shape[: self._bdim] + shape[self._bdim + 1:]


class BatchTrace(Trace):
    __slots__ = ("size",)
    name = "vmap"

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def process(self, prim: Primitive, args: Sequence[Any], params: dict):
        vals = []
        dims = []
        for a in args:
            if type(a) is BatchTracer and a._trace is self:
                vals.append(a._value)
                dims.append(a._bdim)
            else:
                vals.append(a._value if type(a) is Array else a)
                dims.append(None)
        rule = prim.batch or batch_by_loop
        out, out_dim = rule(prim, vals, dims, **params)
        if prim.multiple_results:
            dims_out = out_dim if isinstance(out_dim, (tuple, list)) else [out_dim] * len(out)
            return tuple(o if d is None else BatchTracer(self, o, d)
                         for o, d in zip(out, dims_out))
        if out_dim is None:
            return out
        return BatchTracer(self, out, out_dim)


def _size(vals, dims) -> int:
    for v, d in zip(vals, dims):
        if d is not None:
            return v.shape[d]
    raise AssertionError("a batch rule was called with no batched argument")


def move_to_front(x, dim):
    return x if dim == 0 else engine.moveaxis(x, dim, 0)


def batch_by_loop(prim: Primitive, vals, dims, **params):
    """The fallback: apply `prim` to each batch element and stack. Correct, not fast."""
    n = _size(vals, dims)
    outs = []
    for b in range(n):
        args = [v if d is None else engine.take0(move_to_front(v, d), b) for v, d in zip(vals, dims)]
        outs.append(prim(*args, **params))
    if prim.multiple_results:
        return tuple(engine.stack([o[k] for o in outs]) for k in range(len(outs[0]))), 0
    return engine.stack(outs), 0


def batch_elementwise(prim: Primitive, vals, dims, **params):
    """Broadcasting elementwise functions: batch axes to the front, ranks aligned."""
    rank = max(np.ndim(v) - (d is not None) for v, d in zip(vals, dims))
    moved = []
    for v, d in zip(vals, dims):
        if d is None:
            moved.append(v)
            continue
        v = move_to_front(v, d)
        missing = rank - (v.ndim - 1)
        if missing:
            v = engine.reshape(v, (v.shape[0],) + (1,) * missing + tuple(v.shape[1:]))
        moved.append(v)
    return prim(*moved, **params), 0


def _shift_axis(axis, ndim):
    """An `axis` parameter of an unbatched call, re-aimed past a leading batch axis."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple((a % ndim) + 1 for a in axis)
    return (axis % ndim) + 1


def batch_axis_param(prim: Primitive, vals, dims, **params):
    """Single-array functions with an ``axis`` parameter (reductions, cumulative ops...)."""
    (x,), (d,) = vals, dims
    x = move_to_front(x, d)
    params = dict(params)
    params["axis"] = _shift_axis(params.get("axis"), x.ndim - 1)
    return prim(x, **params), 0
