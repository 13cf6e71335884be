"""funcgrad.numpy's gathering and selecting: `x.at[...]` updates, `take`, `select`,
`diagonal`, `tril`... (the `getitem` family of primitives under public names)."""
from __future__ import annotations

import builtins
from typing import Sequence

import numpy as np

from .._src.core import Array, Tracer, raw, wrap
from .._src import batching as B
from .._src.declare import linear
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._creation import asarray, astype
from ._typing import ArrayLike, Axis, DTypeLike

export = ns.export


def _no_duplicates(shape, template, arrays, what, within):
    """Refuse an index that hits an element of the array's first `within` slots (its own
    shape, short of the one slot an out-of-bounds index may be dropped into) twice."""
    if H.is_basic(template):
        return
    probe = np.zeros(shape, dtype=np.int64)
    np.add.at(probe, H.build_index(template, [raw(a) for a in arrays]), 1)
    probe = probe[tuple(slice(0, n) for n in within)]
    if probe.size and probe.max() > 1:
        raise NotImplementedError(
            f"x.at[...].{what}: the index hits some element more than once, and funcgrad "
            "only supports that for set and add; apply the updates one index at a time")


class IndexUpdate:
    """``x.at[index]``: functional, differentiable updates (see `Array.at`), with JAX's
    out-of-bounds modes: a read (`get`) clamps an index outside its axis (mode None or
    "clip") or reads `fill_value` ("fill", "drop"; NaN by default for floats); a write
    drops it (None, "drop", "fill") or clamps it ("clip"). "promise_in_bounds" leaves it
    to NumPy, which raises IndexError. `indices_are_sorted` and `unique_indices` are JAX's
    hints, accepted and not needed.

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.arange(5.0)
    >>> x.at[7].get().item(), x.at[7].get(mode="fill", fill_value=-1.0).item()
    (4.0, -1.0)
    >>> x.at[fnp.array([1, 7])].set(10.0).tolist()
    [0.0, 10.0, 2.0, 3.0, 4.0]
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None, fill_value: ArrayLike | None = None) -> Array:
        return wrap(P.subscript(self.array, self.index, mode=mode, fill_value=fill_value))

    def set(self, values, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None) -> Array:
        return wrap(P.scatter(self.array, self.index, lambda x, template, arrays: P.index_set(
            x, values, *arrays, template=template), mode))

    def add(self, values, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None) -> Array:
        return wrap(P.scatter(self.array, self.index, lambda x, template, arrays: P.index_add(
            x, values, *arrays, template=template), mode))

    def _combine(self, combine, what, mode):
        def update(x, template, arrays):
            _no_duplicates(H.shape(x), template, arrays, what, H.shape(self.array))
            current = P.getitem(x, *arrays, template=template)
            return P.index_set(x, combine(current), *arrays, template=template)
        return wrap(P.scatter(self.array, self.index, update, mode))

    def multiply(self, values, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                 mode: str | None = None) -> Array:
        return self._combine(lambda c: P.multiply(c, values), "multiply", mode)

    def divide(self, values, *, indices_are_sorted: bool = False, unique_indices: bool = False,
               mode: str | None = None) -> Array:
        return self._combine(lambda c: P.divide(c, values), "divide", mode)

    def power(self, values, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: str | None = None) -> Array:
        return self._combine(lambda c: P.power(c, values), "power", mode)

    def min(self, values, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None) -> Array:
        return self._combine(lambda c: P.minimum(c, values), "min", mode)

    def max(self, values, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None) -> Array:
        return self._combine(lambda c: P.maximum(c, values), "max", mode)

    def apply(self, func, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: str | None = None) -> Array:
        """``x`` with ``func`` applied to the indexed elements (a unary function of arrays)."""
        return self._combine(func, "apply", mode)


class At:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return IndexUpdate(self.array, index)


# --- gathering and selecting ---------------------------------------------------------------


@export(numpy=np.take)
def take(a: ArrayLike, indices: ArrayLike, axis: Axis = None, out: None = None,
         mode: str | None = None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.take``; the gradient scatters back (repeats accumulate).

    An index outside the axis reads `fill_value` (NaN for floats) by default, as
    ``jax.numpy.take`` (mode None or "fill"); "clip" and "wrap" are NumPy's, and "raise"
    (NumPy's default) raises IndexError.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sum(fnp.take(x, [0, 0, 2])))(fnp.zeros(3)).tolist()
    [2.0, 0.0, 1.0]
    >>> fnp.take(fnp.arange(3.0), [1, 5]).tolist(), fnp.take(fnp.arange(3.0), [1, 5], mode="clip").tolist()
    ([1.0, nan], [1.0, 2.0])
    """
    a = asarray(a)
    if axis is None:
        a, axis = P.flatten(a), 0
    axis = axis % H.ndim(a)
    if mode == "wrap":
        indices = np.mod(np.asarray(raw(indices)), H.shape(a)[axis])
    gather_mode = {None: "fill", "wrap": "clip", "raise": "promise_in_bounds"}.get(mode, mode)
    return P.subscript(a, (slice(None),) * axis + (indices,), mode=gather_mode,
                       fill_value=fill_value)


# --- picking along an axis: a gather whose index has the result's shape ---------------------
# ``out[..., i, ...] = arr[..., indices[..., i, ...], ...]`` along `axis`; on every other axis
# a position of the result reads its own position of `arr` (torch.gather's rule; NumPy's
# take_along_axis once both are broadcast). With ``keepdims=False`` `indices` and the result
# lack `axis`: one pick per lane (torch.max(x, dim)'s values). The transpose scatter-adds.
def _along_index(indices, axis, keepdims):
    """The advanced index that reads `indices` along `axis` (NumPy's, built without the
    checks of np.take_along_axis's Python wrapper: a microsecond or two on small arrays)."""
    if not keepdims:
        shape = indices.shape
        indices = indices.reshape(shape[:axis] + (1,) + shape[axis:])
    nd = indices.ndim
    return tuple(indices if d == axis else _position(n, nd, d)
                 for d, n in enumerate(indices.shape))


def _position(n: int, nd: int, d: int) -> np.ndarray:
    """``arange(n)`` laid along axis `d` of `nd` (each position reads its own place), made
    once per shape: read-only, shared by every pick (torch.max(x, dim) makes one per call
    forward and one backward; building it was half of `_take_along_impl`'s time)."""
    key = (n, nd, d)
    found = _POSITIONS.get(key)
    if found is None:
        if len(_POSITIONS) > 1024:
            _POSITIONS.clear()
        found = np.arange(n).reshape((n,) + (1,) * (nd - 1 - d))
        found.flags.writeable = False
        _POSITIONS[key] = found
    return found


_POSITIONS: dict = {}


def _take_along_impl(arr, indices, axis, keepdims=True):
    out = np.asarray(arr)[_along_index(indices, axis, keepdims)]
    return out if keepdims else out.reshape(indices.shape)


def _add_along_impl(arr, update, indices, axis, keepdims=True):
    out = np.array(arr, copy=True)
    index = _along_index(indices, axis, keepdims)
    if not keepdims:  # the update lines up with `indices`: it gets the axis back too
        update = np.broadcast_to(update, indices.shape).reshape(index[axis].shape)
    np.add.at(out, index, update)  # repeats accumulate
    return out


def _batch_along(prim, vals, dims, axis, keepdims=True):
    """Every argument gets the batch axis in front (broadcast where it had none)."""
    size = next(H.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    moved = [B.front_or_broadcast(v, d, size) for v, d in zip(vals, dims)]
    return prim(*moved, axis=axis + 1, keepdims=keepdims), 0


take_along = linear(
    "take_along_axis", _take_along_impl,
    lambda ct, out, arr, indices, axis, keepdims=True: add_along(
        P.zeros_like(arr), ct, indices, axis=axis, keepdims=keepdims),
    None, params=("axis", "keepdims"), batch=_batch_along)
add_along = linear(
    "add_along_axis", _add_along_impl,
    lambda ct, out, arr, update, indices, axis, keepdims=True: ct,
    lambda ct, out, arr, update, indices, axis, keepdims=True: take_along(
        ct, indices, axis=axis, keepdims=keepdims),
    None, params=("axis", "keepdims"), batch=_batch_along)


@export(numpy=np.take_along_axis)
def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: Axis = -1,
                    mode: str | None = None, fill_value: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.take_along_axis``.

    An index outside the axis reads `fill_value` (NaN for floats) unless `mode` says
    otherwise, as in ``jax.numpy``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.take_along_axis(fnp.array([[1.0, 2.0], [3.0, 4.0]]), fnp.array([[1], [0]]), 1).tolist()
    [[2.0], [3.0]]
    """
    arr = asarray(arr)
    if axis is None:
        arr, axis = P.flatten(arr), 0
    nd = H.ndim(arr)
    axis = B.checked_axis(axis, nd)        # NumPy's AxisError out of range, never a wrap
    if H.ndim(indices) != nd:
        raise ValueError(f"take_along_axis: indices must have {nd} dimensions like arr, got {H.ndim(indices)}")
    if not isinstance(indices, Tracer):
        indices = np.asarray(raw(indices))
    if mode is not None:
        P._checked_mode(mode, P.GATHER_MODES, "gather")
    bounded = "clip" if mode == "clip" else ("fill" if mode != "promise_in_bounds" else mode)
    _, (indices,), padded = P.bound_index((H.SLOT,), (indices,), (H.shape(arr)[axis],), bounded)
    if padded:
        arr = P.pad_axes(arr, (axis,), P._fill_value(H.dtype(arr), fill_value))
    # NumPy broadcasts the two on every other axis; the primitive wants the result's shape
    arr_shape, index_shape = tuple(H.shape(arr)), tuple(H.shape(indices))
    others = np.broadcast_shapes(arr_shape[:axis] + arr_shape[axis + 1:],
                                 index_shape[:axis] + index_shape[axis + 1:])
    arr_wanted = others[:axis] + arr_shape[axis:axis + 1] + others[axis:]
    index_wanted = others[:axis] + index_shape[axis:axis + 1] + others[axis:]
    if arr_shape != arr_wanted:
        arr = P.broadcast_to(arr, arr_wanted)
    if index_shape != index_wanted:
        indices = P.broadcast_to(indices, index_wanted)
    return take_along(arr, indices, axis=axis)


@export(numpy=np.compress)
def compress(condition: ArrayLike, a: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.compress``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.compress([True, False, True], fnp.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 3.0]
    """
    return take(a, np.flatnonzero(np.asarray(H.bottom(condition))), axis)


@export(numpy=np.extract)
def extract(condition: ArrayLike, arr: ArrayLike) -> Array:
    """Differentiable ``numpy.extract``.

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.array([1.0, -2.0, 3.0])
    >>> fnp.extract(x > 0, x).tolist()
    [1.0, 3.0]
    """
    return take(P.reshape(arr, (-1,)), np.flatnonzero(np.asarray(H.bottom(condition))))


@export(numpy=np.select)
def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
           default: ArrayLike = 0) -> Array:
    """Differentiable ``numpy.select``: the first true condition picks its choice.

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.array([-1.0, 2.0])
    >>> fnp.select([x < 0, x > 0], [-x, x * 10]).tolist()
    [1.0, 20.0]
    """
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = P.where(cond, choice, out)
    return wrap(P.broadcast_to(out, np.broadcast_shapes(*[H.shape(c) for c in condlist],
                                                      *[H.shape(c) for c in choicelist])))


# --- triangles and diagonals ---------------------------------------------------------------


@export(numpy=np.diagonal)
def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """Differentiable ``numpy.diagonal`` (the diagonal becomes the last axis).

    >>> import funcgrad.numpy as fnp
    >>> fnp.diagonal(fnp.array([[1.0, 2.0], [3.0, 4.0]]), 1).tolist()
    [2.0]
    """
    a = P.moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = H.shape(a)[-2:]
    n = builtins.max(0, builtins.min(rows + builtins.min(offset, 0), cols - builtins.max(offset, 0)))
    r = np.arange(n) + builtins.max(-offset, 0)
    c = np.arange(n) + builtins.max(offset, 0)
    return P.subscript(a, (Ellipsis, r, c))


@export(numpy=np.diag)
def diag(v: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.diag``: a 1-d input builds a matrix, a 2-d one gives a diagonal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diag(fnp.array([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if H.ndim(v) == 2:
        return diagonal(v, k)
    if H.ndim(v) != 1:
        raise ValueError("diag: input must be 1-d or 2-d")
    n = H.shape(v)[0] + builtins.abs(k)
    r = np.arange(H.shape(v)[0]) + builtins.max(-k, 0)
    c = np.arange(H.shape(v)[0]) + builtins.max(k, 0)
    zeros = np.zeros((n, n), dtype=H.dtype(v))
    return P.index_add(zeros, v, r, c, template=(H.SLOT, H.SLOT))


@export(numpy=np.diagflat)
def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.diagflat``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diagflat(fnp.array([[1.0], [2.0]])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    return diag(P.flatten(v), k)


@export(numpy=np.trace)
def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1,
          dtype: DTypeLike | None = None, out: None = None) -> Array:
    """Differentiable ``numpy.trace``.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.trace)(fnp.zeros((2, 2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    d = diagonal(a, offset, axis1, axis2)
    if dtype is not None:
        d = astype(d, dtype)
    return P.sum(d, axis=-1)


def _tri_mask(shape, k, lower):
    rows, cols = shape[-2:]
    return np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)


@export(numpy=np.tril)
def tril(m: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.tril``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tril(fnp.ones((2, 2))).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return P.where(_tri_mask(H.shape(m), k, True), m, 0)


@export(numpy=np.triu)
def triu(m: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.triu``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.triu(fnp.ones((2, 2))).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return P.where(_tri_mask(H.shape(m), k, False), m, 0)


@export
def make_diagonal(D: ArrayLike, offset: int = 0, axis1: int = -1, axis2: int = -2) -> Array:
    """autograd's ``make_diagonal``: a stack of diagonal matrices whose diagonals are the last
    axis of `D` (the inverse of ``diagonal(..., axis1=-1, axis2=-2)``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.make_diagonal(fnp.array([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if offset != 0 or {axis1, axis2} != {-1, -2}:
        raise NotImplementedError("make_diagonal supports offset=0, axis1=-1, axis2=-2 only "
                                  "(as autograd's); move axes with moveaxis afterwards")
    n = H.shape(D)[-1]
    return P.where(np.eye(n, dtype=bool), P.expand_axis(D, -1), 0)


# --- NumPy's in-place writers, as functions: a gather of `a` and the new values -------------
def _rewritten(a, values, write) -> Array:
    """NumPy's own writer (``write(positions, value_positions)``, in place on an integer array
    of `a`'s positions) decides where each element comes from, so its rules (cycling values,
    modes, repeated indices: the last write wins) hold exactly; the result is then gathered
    from `a` and `values`, and the gradient scatters back through that gather."""
    a = asarray(a)
    shape, size = H.shape(a), int(np.prod(H.shape(a), dtype=np.int64))
    positions = np.arange(size).reshape(shape)
    sources = [P.flatten(a)]
    if values is not None:
        values = astype(values, H.dtype(a))
        sources.append(P.flatten(values))
        value_positions = size + np.arange(int(np.prod(H.shape(values), dtype=np.int64)))
        positions = write(positions, value_positions.reshape(H.shape(values)))
    else:
        positions = write(positions)
    return P.subscript(P.concatenate(*sources, axis=0), (np.asarray(positions),))


def _not_in_place(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"funcgrad arrays are immutable, so {name} cannot write in place: pass "
                         f"inplace=False to get the updated array back (as jax.numpy.{name})")


@export(numpy=np.put)
def put(a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *,
        inplace: bool = True) -> Array:
    """``numpy.put`` as a function (``inplace=False``, as JAX's): `a` with ``a.flat[ind] = v``;
    differentiable in `a` and `v`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.put(fnp.zeros(4), [0, 2], 5.0, inplace=False).tolist()
    [5.0, 0.0, 5.0, 0.0]
    """
    _not_in_place("put", inplace)
    ind = np.asarray(raw(ind))

    def write(pos, vpos):
        np.put(pos, ind, vpos, mode="raise" if mode is None else mode)
        return pos
    return _rewritten(a, v, write)


@export(numpy=np.put_along_axis)
def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int | None,
                   inplace: bool = True, mode: str | None = None) -> Array:
    """``numpy.put_along_axis`` as a function (``inplace=False``, as JAX's); differentiable
    in `arr` and `values`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.put_along_axis(fnp.zeros((2, 2)), fnp.array([[1], [0]]), 1.0, 1, inplace=False).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    _not_in_place("put_along_axis", inplace)
    indices = np.asarray(raw(indices))

    def write(pos, vpos):
        np.put_along_axis(pos, indices, vpos, axis)
        return pos
    return _rewritten(arr, values, write)


@export(numpy=np.place)
def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Array:
    """``numpy.place`` as a function (``inplace=False``, as JAX's): where `mask` holds, the
    values of `vals` in turn (cycled); differentiable in `arr` and `vals`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.place(fnp.zeros(4), [True, False, True, True], [1.0, 2.0], inplace=False).tolist()
    [1.0, 0.0, 2.0, 1.0]
    """
    _not_in_place("place", inplace)
    mask = np.asarray(raw(mask))

    def write(pos, vpos):
        np.place(pos, mask, vpos)
        return pos
    return _rewritten(arr, vals, write)


@export(numpy=np.fill_diagonal)
def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *,
                  inplace: bool = True) -> Array:
    """``numpy.fill_diagonal`` as a function (``inplace=False``, as JAX's); differentiable in
    `a` and `val`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fill_diagonal(fnp.zeros((2, 2)), 3.0, inplace=False).tolist()
    [[3.0, 0.0], [0.0, 3.0]]
    """
    _not_in_place("fill_diagonal", inplace)

    def write(pos, vpos):
        mask = np.zeros(pos.shape, dtype=bool)
        np.fill_diagonal(mask, True, wrap=wrap)
        np.place(pos, mask, vpos)
        return pos
    return _rewritten(a, val, write)


@export(numpy=np.insert)
def insert(arr: ArrayLike, obj: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """Differentiable ``numpy.insert``: NumPy decides where each value lands.

    >>> import funcgrad.numpy as fnp
    >>> fnp.insert(fnp.array([1.0, 2.0]), 1, 9.0).tolist()
    [1.0, 9.0, 2.0]
    """
    obj = obj if isinstance(obj, slice) else np.asarray(raw(obj))
    return _rewritten(arr, values, lambda pos, vpos: np.insert(pos, obj, vpos, axis))


@export(numpy=np.choose)
def choose(a: ArrayLike, choices: Sequence[ArrayLike], out: None = None,
           mode: str = "raise") -> Array:
    """Differentiable ``numpy.choose``: each element from the choice `a` names there;
    differentiable in the choices.

    >>> import funcgrad.numpy as fnp
    >>> fnp.choose([1, 0], [fnp.array([1.0, 2.0]), fnp.array([3.0, 4.0])]).tolist()
    [3.0, 2.0]
    """
    a = np.asarray(raw(a))
    choices = [asarray(c) for c in choices]
    shape = np.broadcast_shapes(a.shape, *[H.shape(c) for c in choices])
    dtype = np.result_type(*[H.dtype(c) for c in choices])
    stacked = P.stack(*[P.broadcast_to(astype(c, dtype), shape) for c in choices], axis=0)
    index = np.choose(a, [np.full(shape, k) for k in range(len(choices))], mode=mode)
    return P.subscript(stacked, (index,) + tuple(np.indices(shape, sparse=True)))
