"""Batching for vmap: a tracer holds a value with one extra axis, ``_bdim``, that the traced
function does not see. Each primitive's batch rule maps batched arguments to a batched result
in one call; the generic rules here serve whole families of primitives."""
from __future__ import annotations

import inspect
import operator
from typing import Any, Sequence

import numpy as np

try:
    from numpy.exceptions import AxisError
except ImportError:  # NumPy < 1.25
    AxisError = np.AxisError

from .core import Array, Primitive, Trace, Tracer, _show, engine, raw, wrap
from .tree_util import tree_flatten, tree_unflatten


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

    def _describe(self) -> str:
        return f"one value per example along axis {self._bdim}: {_show(self._value)}"

    def _no_single_value(self, what: str):
        raise TypeError(
            f"{what} of a value batched by vmap: each example has its own value, so Python "
            "control flow (if, while, and, or) cannot branch on it under vmap. Compute both "
            "branches and choose per example with funcgrad.numpy.where(cond, a, b) (or "
            "funcgrad.lax.cond / select), or call the function in a Python loop instead")

    def __bool__(self) -> bool:
        self._no_single_value("bool()")

    def __int__(self) -> int:
        self._no_single_value("int()")

    def __index__(self) -> int:
        self._no_single_value("Using as an index")

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and np.dtype(dtype).kind in "iub":
            self._no_single_value(f"np.asarray(..., dtype={np.dtype(dtype).name})")
        return super().__array__(dtype, copy)


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


    def process_custom(self, rule: Any, leaves: list, in_def: Any):
        """vmap of a custom call: the same call, one level down, of the vmapped function and
        rules (`rule.batched`); batch axes move to the front first, so every axis is 0 or
        None, and every result is batched along axis 0."""
        axes = []
        moved = []
        for leaf in leaves:
            if type(leaf) is BatchTracer and leaf._trace is self:
                moved.append(wrap(move_to_front(leaf._value, leaf._bdim)))
                axes.append(0)
            else:
                moved.append(wrap(raw(leaf)))
                axes.append(None)
        out = rule.batched(axes, in_def).bind(tree_unflatten(in_def, moved))
        out_leaves, out_def = tree_flatten(out)
        return tree_unflatten(out_def, [BatchTracer(self, raw(o), 0) for o in out_leaves])


def _size(vals, dims) -> int:
    for v, d in zip(vals, dims):
        if d is not None:
            return v.shape[d]
    raise AssertionError("a batch rule was called with no batched argument")


def _ndim(x) -> int:
    return len(x.shape) if hasattr(x, "shape") else np.ndim(x)


def move_to_front(x, dim):
    return x if dim == 0 else engine.moveaxis(x, dim, 0)


def front_or_broadcast(x, dim, size: int):
    """`x` with its batch axis first; an unbatched `x` is broadcast along a new first axis."""
    if dim is None:
        shape = tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
        return engine.broadcast_to(engine.reshape(x, (1,) + shape), (size,) + shape)
    return x if dim == 0 else engine.moveaxis(x, dim, 0)


def batch_by_loop(prim: Primitive, vals, dims, **params):
    """Apply `prim` to each batch element and stack: for functions whose output shape depends
    on the data (nonzero, unique...), where no single vectorised call exists."""
    n = _size(vals, dims)
    outs = []
    for b in range(n):
        args = [v if d is None else engine.take0(move_to_front(v, d), b)
                for v, d in zip(vals, dims)]
        outs.append(prim(*args, **params))
    first = outs[0]
    for o in outs[1:]:
        if (np.shape(o) if not hasattr(o, "shape") else o.shape) != \
                (np.shape(first) if not hasattr(first, "shape") else first.shape):
            raise ValueError(
                f"vmap: {prim.name} gives results of different shapes for different batch "
                "elements (its output shape depends on the data), so they cannot be stacked. "
                "Call it in a Python loop instead of under vmap")
    if prim.multiple_results:
        return tuple(engine.stack([o[k] for o in outs]) for k in range(len(first))), 0
    return engine.stack(outs), 0


def batch_elementwise(prim: Primitive, vals, dims, **params):
    """Broadcasting elementwise functions: batch axes to the front, ranks aligned."""
    if len(vals) == 1:  # the common case, kept short: any batch axis works in place
        return prim(vals[0], **params), dims[0]
    rank = 0
    for v, d in zip(vals, dims):
        r = _ndim(v) - (d is not None)
        if r > rank:
            rank = r
    moved = []
    for v, d in zip(vals, dims):
        if d is None:
            moved.append(v)
            continue
        if d:
            v = engine.moveaxis(v, d, 0)
        shape = v.shape
        missing = rank - (len(shape) - 1)
        if missing:
            v = engine.reshape(v, (shape[0],) + (1,) * missing + tuple(shape[1:]))
        moved.append(v)
    return prim(*moved, **params), 0


def shift_axis(axis, ndim):
    """An `axis` parameter of an unbatched call, re-aimed past a leading batch axis. An axis
    out of range for the example raises what the unbatched call raises (NumPy's AxisError):
    wrapping it onto the batch's shape would silently compute something else."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(checked_axis(a, ndim) + 1 for a in axis)
    return checked_axis(axis, ndim) + 1


def checked_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def batch_axis_param(prim: Primitive, vals, dims, **params):
    """Single-array functions with an ``axis`` parameter (reductions, cumulative ops...);
    ``axis=None`` means every axis."""
    (x,), (d,) = vals, dims
    x = move_to_front(x, d)
    params = dict(params)
    params["axis"] = shift_axis(params.get("axis"), x.ndim - 1)
    return prim(x, **params), 0


def batch_flat_axis(prim: Primitive, vals, dims, **params):
    """Functions where ``axis=None`` means "the flattened array" (argmax, argsort): each
    example is flattened on its own first. An ``axis`` not given takes the default of the
    primitive's forward (``impl``), read from its signature."""
    (x,), (d,) = vals, dims
    x = move_to_front(x, d)
    params = dict(params)
    axis = params["axis"] = params.get("axis", _default_axis(prim))
    if axis is None:
        x = engine.reshape(x, (x.shape[0], -1))
        params["axis"] = 1
    else:
        params["axis"] = shift_axis(axis, x.ndim - 1)
    return prim(x, **params), 0


def _default_axis(prim: Primitive):
    try:
        parameter = inspect.signature(prim.impl).parameters.get("axis")
    except (TypeError, ValueError):  # a builtin without a signature
        parameter = None
    if parameter is None or parameter.default is inspect.Parameter.empty:
        raise TypeError(f"vmap: {prim.name} is batched with batch_flat_axis, which needs "
                        "an `axis` parameter with a default in its forward function")
    return parameter.default


def batch_query(prim: Primitive, vals, dims, **params):
    """Functions of an array's shape or dtype only (shape, ndim, size, result_type): the
    answer is the same for every example, so it is computed once and stays unbatched."""
    probes = []
    for v, d in zip(vals, dims):
        if d is None:
            probes.append(v)
        else:
            shape = tuple(v.shape)
            probes.append(np.zeros(shape[:d] + shape[d + 1:], dtype=v.dtype))
    return prim(*probes, **params), None


def batch_all_axes(prim: Primitive, vals, dims, **params):
    """Whole-array predicates of two arrays (allclose, array_equal, array_equiv): one
    answer per example, each from the function itself, so every such predicate keeps its
    own meaning (tolerances, shape mismatches) without the batch rule knowing which it is."""
    return batch_by_loop(prim, vals, dims, **params)


def batch_first_only(prim: Primitive, vals, dims, **params):
    """Functions elementwise in their first argument whose second is a whole table (isin's
    test elements, searchsorted's sorted array, digitize's bins): vectorised while the table
    is shared; a batch of tables needs one call each."""
    first, *rest = vals
    if any(d is not None for d in dims[1:]):
        return batch_by_loop(prim, vals, dims, **params)
    return prim(first, *rest, **params), dims[0]


def batch_values_second(prim: Primitive, vals, dims, **params):
    """searchsorted(a, v): elementwise in the values `v` while the sorted array is shared."""
    (a, v), (da, dv) = vals, dims
    if da is not None:
        return batch_by_loop(prim, vals, dims, **params)
    return prim(a, v, **params), dv


def batch_keys_first(prim: Primitive, vals, dims, **params):
    """Functions whose first axis lists keys or coordinates (lexsort, ravel_multi_index):
    the batch axis goes second, after the keys."""
    (x,), (d,) = vals, dims
    x = engine.moveaxis(x, d, 1) if d != 1 else x
    return prim(x, **params), 0


def batch_unsupported(prim: Primitive, vals, dims, **params):
    """For functions returning several arrays of data-dependent shapes (nonzero,
    unravel_index's tuple, histogram's pair): there is nothing to stack them into."""
    raise ValueError(
        f"vmap: {prim.name} returns a tuple of arrays whose shapes can differ between batch "
        f"elements, so it cannot be vmapped. Call it in a Python loop over the batch, or use "
        "a fixed-shape alternative (e.g. a mask with where instead of nonzero)")
