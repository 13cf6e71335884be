"""Tensor's operators, methods, in-place variants and indexing, attached to the class."""
from __future__ import annotations

import re
import warnings
from builtins import max as builtins_max
from builtins import min as builtins_min

import numpy as np

from ..numpy import _helpers as H
from ..numpy import _primitives as NP
from . import _dtypes as D
from . import _functions as F
from . import _ops as O
from ._graph import INFERENCE_INPLACE, STATE, Saved, freed_error
from ._device import NO_CUDA
from ._ops import apply1, apply2, inplace, inplace1
from ._tensor import Tensor


# --- indexing --------------------------------------------------------------------------------
def _dims_taken(item) -> int:
    """How many dimensions of the indexed tensor an index item consumes."""
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, (Tensor, np.ndarray, list)):
        arr = item._data if isinstance(item, Tensor) else np.asarray(item)
        return arr.ndim if arr.dtype == bool else 1
    return 1


def _index_dim(shape, before, after) -> int:
    """The first dimension an index array applies to; after an Ellipsis, count from the end."""
    if any(i is Ellipsis for i in before):
        return len(shape) - 1 - sum(_dims_taken(i) for i in after)
    return sum(1 for i in before if i is not None and i is not Ellipsis and not isinstance(i, bool))


def _check_array_bounds(shape, before, arr, after=()) -> None:
    arr = np.asarray(arr)
    if arr.dtype == bool and arr.ndim:
        dim = sum(1 for i in before if i is not None and i is not Ellipsis and not isinstance(i, bool))
        if any(i is Ellipsis for i in before):
            dim = len(shape) - arr.ndim - sum(_dims_taken(i) for i in after)
        for k, size in enumerate(arr.shape):
            if dim + k < len(shape) and size != shape[dim + k]:
                raise IndexError(f"The shape of the mask {list(arr.shape)} at index {k} does not "
                                 f"match the shape of the indexed tensor {list(shape)} at index "
                                 f"{dim + k}")
        return
    if arr.dtype.kind not in "iu" or arr.size == 0:
        return
    dim = _index_dim(shape, before, after)
    if not 0 <= dim < len(shape):
        return
    bad = arr[(arr >= shape[dim]) | (arr < -shape[dim])]
    if bad.size:
        # PyTorch's message numbers the index arrays, not the tensor's dimensions
        nth = sum(_dims_taken(i) for i in before if isinstance(i, (Tensor, np.ndarray, list)))
        raise IndexError(f"index {bad.flat[0]} is out of bounds for dimension {nth} with size "
                         f"{shape[dim]}")


def _list_as_tuple(index):
    """PyTorch (like old NumPy) reads a list holding a list, tuple, slice, tensor, None or
    Ellipsis as a tuple index: ``x[[slice(None), [2, 3]]]`` is ``x[:, [2, 3]]``."""
    if isinstance(index, list) and any(isinstance(i, (list, tuple, slice, Tensor)) or i is None
                                       or i is Ellipsis for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. "
                      "In pytorch 2.9 this will be interpreted as tensor index, "
                      "x[torch.tensor(seq)], which will result either in an error or a "
                      "different result", UserWarning, stacklevel=3)
        return tuple(index)
    return index


def _convert_index(index, shape=()):
    """Tensors in an index become ints (0-d integer) or arrays; report if any is advanced."""
    index = _list_as_tuple(index)
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(list(i) if isinstance(i, range) else i for i in items)  # a range is a list
    out = []
    advanced = False
    for k, item in enumerate(items):
        if isinstance(item, Tensor):
            if item._dtype is D.bool_ and item._data.ndim == 0:
                item = bool(item._data)  # like Python True / False
                advanced = True
            elif item._dtype.category == 1 and item._data.ndim == 0:
                item = int(item._data)
            elif item._dtype.category >= 2:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            else:
                item = item._data
                advanced = True
            if advanced:
                _check_array_bounds(shape, out, item, items[k + 1:])
        elif isinstance(item, (list, np.ndarray)) or isinstance(item, bool):
            advanced = True
            if isinstance(item, list):
                arr = np.asarray(item)
                if arr.dtype.kind == "f" and arr.size:
                    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
                _check_array_bounds(shape, out, arr, items[k + 1:])
        elif isinstance(item, slice):
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
        elif item is None or item is Ellipsis or isinstance(item, (int, np.integer)):
            pass
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(item).__name__})")
        out.append(item)
    return tuple(out), advanced


def _basic_op(items):
    for item in reversed(items):
        if item is Ellipsis:
            continue
        if item is None:
            return O.UNSQUEEZE_IDX
        if isinstance(item, slice):
            return O.SLICE
        return O.SELECT
    return O.ALIAS


def _check_bounds(shape, items):
    if not shape and any(isinstance(i, (int, np.integer, slice)) for i in items):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if sum(1 for i in items if i is not None and i is not Ellipsis) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim = len(shape) - sum(1 for i in items if i is not None and i is not Ellipsis) + dim
            continue
        if item is None:
            continue
        if isinstance(item, (int, np.integer)):
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            if not -shape[dim] <= item < shape[dim]:
                raise IndexError(f"index {item} is out of bounds for dimension {dim} with size "
                                 f"{shape[dim]}")
        dim += 1


def _full(item: slice, size: int) -> bool:
    """Whether a slice keeps a whole dimension as written (PyTorch skips such a slice inside a
    tuple index: ``x[:, 1]`` records only SelectBackward0; ``x[-3:, 1]`` records both)."""
    return (item.start is None or item.start == 0) and (item.step is None or item.step == 1) \
        and (item.stop is None or item.stop >= size)


_FULL = slice(None)


def _at(dim: int, item) -> dict:
    # (a trailing Ellipsis keeps a 0-d result a view, and lets view_op take the data as is)
    return {"template": (_FULL,) * dim + (item, Ellipsis)}


def _zero_dim_error(item) -> IndexError:
    if type(item) is slice:
        return IndexError("slice() cannot be applied to a 0-dim tensor.")
    return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                      "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


def getitem(self: Tensor, index) -> Tensor:
    kind = type(index)
    if kind is int or kind is slice:
        # a lone int or slice: one select or slice view (PyTorch records a lone slice even
        # when it keeps everything)
        shape = self._data.shape
        if not shape:
            raise _zero_dim_error(index)
        if kind is int:
            if not -shape[0] <= index < shape[0]:
                _check_bounds(shape, (index,))  # PyTorch's message
            return O.view_op(O.SELECT, self, {"template": (index, Ellipsis)},
                             self._data[index, ...])
        if index.step is not None and index.step <= 0:
            raise ValueError("step must be greater than zero")
        return O.view_op(O.SLICE, self, {"template": (index, Ellipsis)}, self._data[index, ...])
    if kind is tuple and index and all(type(i) is int or type(i) is slice for i in index):
        # ints and slices only: PyTorch's chain, one view per item that does something
        shape = self._data.shape
        if not shape:
            raise _zero_dim_error(index[0])
        if len(index) > len(shape):
            raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
        out, dim = self, 0
        for k, item in enumerate(index):
            size = shape[k]
            if type(item) is int:
                if not -size <= item < size:
                    raise IndexError(f"index {item} is out of bounds for dimension {k} with "
                                     f"size {size}")
                params = _at(dim, item)
                out = O.view_op(O.SELECT, out, params, out._data[params["template"]])
                continue
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            if not _full(item, size):
                params = _at(dim, item)
                out = O.view_op(O.SLICE, out, params, out._data[params["template"]])
            dim += 1
        return out if out is not self else O.view_op(O.ALIAS, self, {"template": (Ellipsis,)})
    return _index_chain(self, _convert_index(index, self._data.shape)[0])


def _index_chain(self: Tensor, items: tuple) -> Tensor:
    """PyTorch's order for an index: each int a select, each slice that does something a
    slice, each None (and Python bool) an unsqueeze, left to right; then one IndexBackward0
    for the index arrays (a Python bool is a one-element mask over its new dim); nothing at
    all is an alias."""
    shape = self._data.shape
    taken = sum(_dims_taken(i) for i in items)
    if not shape:
        for item in items:
            if isinstance(item, (int, np.integer, slice)) and not isinstance(item, bool):
                raise _zero_dim_error(item)
    if taken > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    out, dim, src = self, 0, 0  # dim counts the view's dims, src the indexed tensor's
    picks: list = []  # what the final index takes along each of the view's dims
    for k, item in enumerate(items):
        if item is Ellipsis:
            skip = len(shape) - taken
            dim, src = dim + skip, src + skip
            picks.extend([slice(None)] * skip)
        elif item is None or isinstance(item, bool):
            out = O.view_op(O.UNSQUEEZE_IDX, out, _at(dim, None))
            picks.append(slice(None) if item is None else np.array([item]))
            dim += 1
        elif isinstance(item, (int, np.integer)):
            size = shape[src]
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {k} with size "
                                 f"{size}")
            out = O.view_op(O.SELECT, out, _at(dim, int(item)))
            src += 1
        elif isinstance(item, slice):
            if not _full(item, shape[src]):
                out = O.view_op(O.SLICE, out, _at(dim, item))
            picks.append(slice(None))
            dim, src = dim + 1, src + 1
        else:
            arr = np.asarray(item)
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int64)  # an empty list
            n = arr.ndim if arr.dtype == bool else 1
            picks.append(arr)
            dim, src = dim + n, src + n
    while picks and type(picks[-1]) is slice:
        picks.pop()
    if not picks:
        return out if out is not self else O.view_op(O.ALIAS, self, {"template": (Ellipsis,)})
    template, arrays = H.split_index(tuple(picks))
    res = O.apply(INDEX, (out,) + tuple(arrays), {"template": template})
    if type(res._grad_node) is INDEX.node_cls:
        res._grad_node._extra = {"indices": tuple(
            None if type(p) is slice else
            Tensor._wrap(p if p.dtype == bool else p.astype(np.int64)) for p in picks)}
    return res


class _IndexNode(O.OpNode):
    """IndexBackward0 with PyTorch's ``_saved_indices`` / ``_raw_saved_indices``."""

    __slots__ = ("_extra",)

    @property
    def _saved_indices(self) -> tuple:
        if self._freed:
            raise freed_error()
        return self._extra["indices"]

    @property
    def _raw_saved_indices(self) -> tuple:
        if self._freed:
            raise freed_error()
        raw = self._extra.get("raw")
        if raw is None:
            raw = self._extra["raw"] = tuple(
                O.SavedTensor(None if t is None else Saved(t._data, t._vc, t), self)
                for t in self._extra["indices"])
        return raw


INDEX = O.Op("index", NP.getitem, "IndexBackward0", ((),), result="same", node_base=_IndexNode)


def setitem(self: Tensor, index, value) -> None:
    index = _list_as_tuple(index)
    items = index if isinstance(index, tuple) else (index,)
    if any(item is False for item in items):
        return  # selects nothing: PyTorch writes nothing and keeps the version
    # Python True in an assignment is a new axis of size 1 (a view), as in PyTorch
    items = tuple(None if item is True else item for item in items)
    items, advanced = _convert_index(items, self._data.shape)
    if not advanced and all(i == slice(None) or i is Ellipsis for i in items):
        region = self  # a full slice writes into the tensor itself
        if isinstance(value, Tensor):
            copy_(region, _strip_leading_ones(value, region._data.ndim))
        else:
            fill_(region, value)
        return
    if not advanced:
        _check_bounds(self._data.shape, items)
        region = O.view_op(_basic_op(items), self, {"template": items})
        if isinstance(value, Tensor):
            value = _strip_leading_ones(value, region._data.ndim)
            copy_(region, value)
        else:
            fill_(region, value)
        return
    if any(type(i) is int for i in items) and not any(i is None or i is Ellipsis for i in items):
        # as in getitem, PyTorch applies integer indices first: the write goes into a view
        basic = tuple(i if type(i) is int else slice(None) for i in items)
        self = O.view_op(O.SELECT, self, {"template": basic})
        items = tuple(i for i in items if type(i) is not int)
    template, arrays = H.split_index(items)
    if isinstance(value, Tensor):
        value = value if value._dtype is self._dtype else value.to(self._dtype)
    inplace(O.INDEX_PUT, self, (value,) + tuple(arrays), {"template": template})


def _check_expand(shape, target) -> None:
    lead = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        if lead < 0 or (shape[i] != 1 and shape[i] != target[i + lead]):
            if lead < 0:
                break
            raise RuntimeError(F.expand_message(target, shape, i + lead, shape[i]))


def _strip_leading_ones(value: Tensor, ndim: int) -> Tensor:
    """As PyTorch's item assignment: extra leading size-1 dimensions of the value are dropped."""
    shape = value._data.shape
    k = 0
    while len(shape) - k > ndim and shape[k] == 1:
        k += 1
    return value if k == 0 else F.reshape(value, shape[k:])


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    src_t = src if isinstance(src, Tensor) else F.tensor(src)
    if src_t._dtype is not self._dtype:  # copy_ converts (float -> int truncates)
        src_t = F._to(src_t, self._dtype)
    _check_expand(src_t._data.shape, self._data.shape)
    return inplace(O.COPY, self, (src_t,),
                   compute=lambda s, v: np.broadcast_to(np.asarray(v).astype(s.dtype), s.shape))


def fill_(self: Tensor, value) -> Tensor:
    if isinstance(value, Tensor):
        scalar = value._data.copy()  # read before the write: value may alias self
        return inplace(O.COPY, self, (value,), check_overlap=False,
                       compute=lambda s, v: np.broadcast_to(scalar.astype(s.dtype), s.shape))
    return inplace(O.FILL, self, (), compute=lambda s: np.full(s.shape, value, dtype=s.dtype))


def zero_(self: Tensor) -> Tensor:
    return inplace(O.ZERO, self, (), compute=lambda s: np.zeros(s.shape, dtype=s.dtype))


# --- operators -----------------------------------------------------------------------------
def _rsub(self, other):
    return F.sub(other, self)


def _rdiv(self, other):
    return F.div(other, self)


def _rpow(self, other):
    return F.pow(other, self)


def _rmatmul(self, other):
    return F.matmul(other, self)


def _iadd(self, other):
    return inplace(O.ADD, self, (other,))


def _isub(self, other):
    F.check_sub(self, other)
    return inplace(O.SUB, self, (other,))


def _imul(self, other):
    return inplace(O.MUL, self, (other,))


def _idiv(self, other):
    return inplace(O.DIV, self, (other,))


def _inplace_binary(op):
    def method(self, other, *, alpha=1):
        if alpha != 1:
            other = other * alpha
        if type(other) is float:
            return inplace1(op, self, other)
        return inplace(op, self, (other,))
    method.__name__ = op.name + "_"
    return method


def _checked(check, method):
    """`method` after `check(self, other)` (PyTorch's refusals that NumPy would not make)."""
    def checked(self, other, **kwargs):
        check(self, other)
        return method(self, other, **kwargs)
    checked.__name__ = method.__name__
    return checked


def _inplace_unary(op):
    def method(self):
        return inplace1(op, self)
    method.__name__ = op.name + "_"
    return method


def _pow_(self, exponent):
    return inplace(O.POW_T if isinstance(exponent, Tensor) else O.POW, self, (exponent,))


def _floor_divide_(self, other):
    F._check_divisor("div_floor_cpu", self, other)
    return inplace(O.FLOOR_DIVIDE, self, (other,))


def _remainder_(self, other):
    F._check_divisor("remainder_cpu", self, other)
    return inplace(O.REMAINDER_T if isinstance(other, Tensor) else O.REMAINDER, self, (other,))


def _rfloordiv(self, other):
    return F.floor_divide(other, self)


def _rmod(self, other):
    return F.remainder(other, self)


def _clamp_(self, min=None, max=None):
    op = O.CLAMP_T if isinstance(min, Tensor) or isinstance(max, Tensor) else O.CLAMP
    return inplace(op, self, (min, max))


def _detach_(self):
    if self._base is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
            "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
            "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
            "function in torch/optim/optimizer.py as the solution.")
    self._grad_fn = None
    self._rg = False
    if type(self._data) is not np.ndarray:
        O.drop_tangent(self)
    return self


def _resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """Resize in place: the first elements (flat order) kept, new ones zero."""
    if STATE.grad_enabled and self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = F._shape_arg(sizes)
    if tuple(shape) == tuple(self._data.shape):
        return self  # no change, no version bump (as torch)
    new = np.zeros(shape, self._data.dtype)
    keep = builtins_min(new.size, self._data.size)
    new.reshape(-1)[:keep] = self._data.reshape(-1)[:keep]
    self._data = new
    self._vc.value += 1
    return self


def _resize_as_(self: Tensor, other: Tensor, memory_format=None) -> Tensor:
    return _resize_(self, *other._data.shape)


def _set_(self: Tensor, source=None) -> Tensor:
    """Make `self` use `source`'s storage (an empty one by default): a fresh leaf slot, so
    graphs recorded before no longer reach it."""
    if STATE.grad_enabled and self.requires_grad and self._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    data = np.zeros(0, self._data.dtype) if source is None else source._data
    self._data = data
    if source is not None:
        self._dtype = source._dtype
    self._acc = None
    self._vc.value += 1
    return self


# --- in-place views: the tensor itself becomes the view ----------------------------------------
_TRANSPOSE_ = O.Op("transpose_", NP.swapaxes, "TransposeBackward1", result="same", is_view=True)
_T_ = O.Op("t_", NP.transpose, "TBackward1", result="same", is_view=True)
_UNSQUEEZE_ = O.Op("unsqueeze_", NP.reshape, "UnsqueezeBackward1", result="same", is_view=True)
_SQUEEZE_ = O.Op("squeeze_", NP.reshape, "SqueezeBackward3", result="same", is_view=True)
_SQUEEZE_DIM_ = O.Op("squeeze_dim_", NP.reshape, "SqueezeBackward4", result="same",
                     is_view=True)
_SQUEEZE_DIMS_ = O.Op("squeeze_dims_", NP.reshape, "SqueezeBackward5", result="same",
                      is_view=True)


def _become_view(self: Tensor, op, params: dict) -> Tensor:
    """``x.transpose_(...)`` and kin: `self` takes the view's data and history (its node
    named as PyTorch names the in-place variant); a view stays a view of its base, with the
    view op added to its chain; the version counter is bumped."""
    if self._vc.inference and not STATE.inference:
        raise RuntimeError(INFERENCE_INPLACE)
    O.check_inplace(self)
    out = O.view_op(op, self, params)
    self._data = out._data
    if out._fw_grad is not None:  # a dual tensor: its tangent takes the same view
        self._fw_grad = out._fw_grad
    self._vc.value += 1
    if self._base is not None:
        if STATE.grad_enabled:
            chain = self._view.chain
            self._view = out._view
            self._view.version = self._vc.value
            if self._base._data.dtype.kind != self._data.dtype.kind:
                # PyTorch 2.13 replays a view of another dtype (view_as_real...) without the
                # in-place view ops applied to it since: its gradient ignores them (a known
                # bug its own test pins down: test_autograd_inplace_views_cross_dtype)
                self._view.chain = chain
        else:  # as PyTorch, the view keeps how it was made (its creation meta); its grad_fn
            self._view.chain = out._view.chain  # is made again from the base when read
    if out._grad_fn is not None:
        self._grad_fn, self._nr = out._grad_fn, out._nr
    return self


_AS_STRIDED_ = O.Op("as_strided_", F.AS_STRIDED.prim, "AsStridedBackward1", result="same",
                   is_view=True)


def _as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    return _become_view(self, _AS_STRIDED_, F.as_strided_params(self, size, stride, storage_offset))


def _transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    nd = builtins_max(self._data.ndim, 1)
    return _become_view(self, _TRANSPOSE_, {"axis1": F._dim(dim0, nd), "axis2": F._dim(dim1, nd)})


def _t_(self: Tensor) -> Tensor:
    nd = self._data.ndim
    if nd > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _become_view(self, _T_, {"axes": None})


def _unsqueeze_(self: Tensor, dim: int) -> Tensor:
    shape = list(self._data.shape)
    shape.insert(F._dim(dim, len(shape) + 1), 1)
    return _become_view(self, _UNSQUEEZE_, {"shape": tuple(shape)})


def _squeeze_(self: Tensor, dim=None) -> Tensor:
    shape = self._data.shape
    if dim is None:
        return _become_view(self, _SQUEEZE_, {"shape": tuple(s for s in shape if s != 1)})
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = {F._dim(d, len(shape)) for d in dims}
    new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    op = _SQUEEZE_DIMS_ if isinstance(dim, (tuple, list)) else _SQUEEZE_DIM_
    return _become_view(self, op, {"shape": new})


def _new_tensor(self, data, dtype=None, requires_grad=False):
    return F.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _cast(dt):
    def method(self):
        return F._to(self, dt)
    return method


def _dunder_eq(self, other):
    return F.eq(self, other)


_METHODS = {
    "__add__": F.add, "__radd__": F.add, "__sub__": F.sub, "__rsub__": _rsub,
    "__mul__": F.mul, "__rmul__": F.mul, "__truediv__": F.div, "__rtruediv__": _rdiv,
    "__pow__": F.pow, "__rpow__": _rpow, "__matmul__": F.matmul, "__rmatmul__": _rmatmul,
    "__neg__": F.neg, "__abs__": F.abs, "__iadd__": _iadd, "__isub__": _isub,
    "__imul__": _imul, "__itruediv__": _idiv, "__ipow__": _pow_, "__pos__": F.positive,
    "__floordiv__": F.floor_divide, "__rfloordiv__": _rfloordiv, "__mod__": F.remainder,
    "__rmod__": _rmod, "__ifloordiv__": _floor_divide_, "__imod__": _remainder_,
    "floor_divide": F.floor_divide, "remainder": F.remainder, "positive": F.positive,
    "floor_divide_": _floor_divide_, "remainder_": _remainder_,
    "__eq__": F.eq, "__ne__": F.ne, "__lt__": F.lt, "__le__": F.le, "__gt__": F.gt,
    "__ge__": F.ge, "__getitem__": getitem, "__setitem__": setitem,
    "add": F.add, "sub": F.sub, "mul": F.mul, "div": F.div, "pow": F.pow, "neg": F.neg,
    "exp": F.exp, "log": F.log, "sqrt": F.sqrt, "sin": F.sin, "cos": F.cos, "tan": F.tan,
    "tanh": F.tanh, "sigmoid": F.sigmoid, "relu": F.relu, "abs": F.abs, "log1p": F.log1p,
    "expm1": F.expm1, "reciprocal": F.reciprocal, "square": F.square, "clamp": F.clamp,
    "clip": F.clamp, "maximum": F.maximum, "minimum": F.minimum, "matmul": F.matmul,
    "mm": F.matmul, "sum": F.sum, "mean": F.mean, "prod": F.prod, "max": F.max, "min": F.min,
    "argmax": F.argmax, "argmin": F.argmin, "clone": F.clone, "detach": F.detach,
    "view": F.view, "reshape": F.reshape, "flatten": F.flatten, "contiguous": F.contiguous,
    "t": F.t, "transpose": F.transpose, "permute": F.permute, "unsqueeze": F.unsqueeze,
    "squeeze": F.squeeze, "expand": F.expand, "expand_as": F.expand_as, "narrow": F.narrow,
    "select": F.select, "diagonal": F.diagonal, "split": F.split, "chunk": F.chunk,
    "unfold": F.unfold,
    "unsafe_split": F.unsafe_split, "unsafe_chunk": F.unsafe_chunk,
    "unsafe_split_with_sizes": F.unsafe_split_with_sizes,
    "unbind": F.unbind, "to": F._to, "eq": F.eq, "ne": F.ne, "lt": F.lt, "le": F.le,
    "gt": F.gt, "ge": F.ge, "copy_": copy_, "fill_": fill_, "zero_": zero_,
    "resize_": _resize_, "resize_as_": _resize_as_, "set_": _set_,
    "transpose_": _transpose_, "swapdims_": _transpose_, "swapaxes_": _transpose_, "t_": _t_,
    "unsqueeze_": _unsqueeze_, "squeeze_": _squeeze_, "as_strided": F.as_strided,
    "as_strided_": _as_strided_,
    "add_": _inplace_binary(O.ADD), "sub_": _checked(F.check_sub, _inplace_binary(O.SUB)),
    "mul_": _inplace_binary(O.MUL), "div_": _inplace_binary(O.DIV), "pow_": _pow_,
    "neg_": _inplace_unary(O.NEG), "abs_": _inplace_unary(O.ABS), "exp_": _inplace_unary(O.EXP),
    "sqrt_": _inplace_unary(O.SQRT), "log_": _inplace_unary(O.LOG),
    "sigmoid_": _inplace_unary(O.SIGMOID), "tanh_": _inplace_unary(O.TANH),
    "relu_": _inplace_unary(O.RELU), "sin_": _inplace_unary(O.SIN),
    "cos_": _inplace_unary(O.COS), "tan_": _inplace_unary(O.TAN),
    "log1p_": _inplace_unary(O.LOG1P), "expm1_": _inplace_unary(O.EXPM1),
    "reciprocal_": _inplace_unary(O.RECIPROCAL), "square_": _inplace_unary(O.SQUARE),
    "clamp_": _clamp_, "clip_": _clamp_, "detach_": _detach_,
    "new_tensor": _new_tensor, "float": _cast(D.float32), "double": _cast(D.float64),
    "long": _cast(D.int64), "int": _cast(D.int32), "bool": _cast(D.bool_),
    "half": _cast(D.float16), "equal": F.equal, "allclose": F.allclose,
    "zeros_like": F.zeros_like, "ones_like": F.ones_like,
}
_OPERANDS = (Tensor, int, float, bool, complex, np.generic, np.ndarray)

# methods whose arguments PyTorch's parser checks against several signatures
_OVERLOADS = {"narrow": " * (int dim, Tensor start, int length)\n * (int dim, int start, int length)\n",
              "pow": " * (Tensor exponent)\n * (Number exponent)\n"}


def _parsed_arguments(name: str, fn):
    """A method whose missing arguments are reported as PyTorch's argument parser does."""
    def method(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except TypeError as exc:
            # only a failure to bind the call itself (raised here or in an out= wrapper, not
            # deeper) is rewritten
            tb = exc.__traceback__.tb_next
            while tb is not None and tb.tb_frame.f_code is F.OUT_WRAPPER_CODE:
                tb = tb.tb_next
            if tb is not None or "required positional" not in str(exc):
                raise
            if name in _OVERLOADS:
                got = ", ".join(type(a).__name__ for a in args)
                raise TypeError(f"{name}() received an invalid combination of arguments - got "
                                f"({got}), but expected one of:\n{_OVERLOADS[name]}") from None
            missing = re.findall(r"'(\w+)'", str(exc).split(":", 1)[1])
            # (PyTorch's wording, plural ending included)
            ending = "s" if len(missing) == 1 else ""
            raise TypeError(f"{name}() missing {len(missing)} required positional argument"
                            f"{ending}: " + ", ".join(f'"{m}"' for m in missing)) from None
    method.__name__ = name
    method.__doc__ = fn.__doc__
    return method


_PARSED = ("unsqueeze", "transpose", "narrow", "select", "chunk", "mul", "pow")
for _name in _PARSED:
    _METHODS[_name] = _parsed_arguments(_name, _METHODS[_name])


def _operator(fn):
    """A binary dunder: unknown operand types give Python's own TypeError."""
    def method(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return fn(self, other)
    method.__name__ = getattr(fn, "__name__", "operator")
    return method


def _fast_binary(op, general):
    """The hot dunders: with a Python float straight to `apply1`, with a tensor to `apply2`."""
    def method(self, other):
        if self._dtype.is_floating_point:  # (other dtypes: the general function's checks)
            if type(other) is float or type(other) is int:
                return apply1(op, self, other)
            if type(other) is Tensor and other._dtype is self._dtype:
                return apply2(op, self, other)
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return general(self, other)
    method.__name__ = general.__name__
    return method


_FAST = {"__add__": O.ADD, "__radd__": O.ADD, "__mul__": O.MUL, "__rmul__": O.MUL,
         "__sub__": O.SUB, "__truediv__": O.DIV}
for _name, _fn in _METHODS.items():
    _fn = F.as_method(_fn)
    if _name in _FAST:
        _fn = _fast_binary(_FAST[_name], _fn)
    elif _name.startswith("__") and _name not in ("__getitem__", "__setitem__", "__neg__",
                                                  "__abs__", "__pos__"):
        _fn = _operator(_fn)
    setattr(Tensor, _name, _fn)
def _logical(np_fn):
    def method(self, other):
        b = other._data if isinstance(other, Tensor) else other
        dt = D.result_type_of((self, other))
        return Tensor._wrap(np.asarray(np_fn(self._data, b)).astype(dt.np))
    return method


def _invert(self):
    if self._dtype is D.bool_:
        return Tensor._wrap(np.logical_not(self._data))
    return Tensor._wrap(np.invert(self._data))


# --- logical and bitwise functions: no gradient; their in-place forms keep grad_fn --------------
def _raw(x):
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def logical_and(input: Tensor, other) -> Tensor:
    """Elementwise ``input and other`` (nonzero is true): a bool tensor, no gradient.

    >>> import funcgrad.mutable as torch
    >>> torch.logical_and(torch.tensor([0.0, 2.0, 3.0]), torch.tensor([1, 0, 4]))
    tensor([False, False,  True])
    """
    return Tensor._wrap(np.asarray(np.logical_and(input._data, _raw(other))))


def logical_or(input: Tensor, other) -> Tensor:
    """Elementwise ``input or other`` (nonzero is true): a bool tensor."""
    return Tensor._wrap(np.asarray(np.logical_or(input._data, _raw(other))))


def logical_xor(input: Tensor, other) -> Tensor:
    """Elementwise exclusive or of truth values: a bool tensor."""
    return Tensor._wrap(np.asarray(np.logical_xor(input._data, _raw(other))))


def logical_not(input: Tensor) -> Tensor:
    """Elementwise ``not input`` (zero is false): a bool tensor, for any dtype."""
    return Tensor._wrap(np.asarray(np.logical_not(input._data)))


def _bitwise(np_fn, name: str):
    def fn(input: Tensor, other=None) -> Tensor:
        operands = (input,) if other is None else (input, other)
        dt = D.result_type_of(operands)
        if dt.is_floating_point or dt.is_complex:
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{O._scalar_name(dt)}'")
        args = [np.asarray(_raw(x)).astype(dt.np) for x in operands]
        return Tensor._wrap(np.asarray(np_fn(*args)).astype(dt.np))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of integer or bool tensors (torch's error for floats)."
    return fn


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")
bitwise_not = _bitwise(np.invert, "bitwise_not")


def _written_in_place(fn):
    """``x.<fn>_(...)``: the result cast to x's dtype and written into x, its version bumped;
    as in PyTorch these functions have no derivative, so x's history is left as it is (and a
    leaf that requires grad may be written: torch allows it)."""
    def method(self: Tensor, *args) -> Tensor:
        if self._vc.inference and not STATE.inference:
            raise RuntimeError(INFERENCE_INPLACE)
        result = fn(self, *args)._data
        np.copyto(self._data, result.astype(self._data.dtype, copy=False))
        self._vc.value += 1
        return self
    method.__name__ = fn.__name__ + "_"
    return method


def _all(self, dim=None, keepdim=False):
    return Tensor._wrap(np.asarray(np.all(self._data, axis=dim, keepdims=keepdim)))


def _any(self, dim=None, keepdim=False):
    return Tensor._wrap(np.asarray(np.any(self._data, axis=dim, keepdims=keepdim)))


for _name, _fn in {"__and__": _logical(np.bitwise_and), "__or__": _logical(np.bitwise_or),
                   "__xor__": _logical(np.bitwise_xor), "__rand__": _logical(np.bitwise_and),
                   "__ror__": _logical(np.bitwise_or), "__invert__": _invert, "all": _all, "any": _any,
                   "logical_not": logical_not, "logical_and": logical_and,
                   "logical_or": logical_or, "logical_xor": logical_xor,
                   "bitwise_and": bitwise_and, "bitwise_or": bitwise_or,
                   "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not}.items():
    setattr(Tensor, _name, _fn)
    if _name[0] != "_" and _name not in ("all", "any"):
        setattr(Tensor, _name + "_", _written_in_place(_fn))
Tensor.__hash__ = lambda self: id(self)
Tensor.T = property(lambda self: F.permute(self, tuple(reversed(range(self.dim())))))


def _matrices_only(self: Tensor, what: str) -> None:
    if self.dim() < 2:
        raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of "
                           f"matrices. Got {self.dim()}-D tensor.")


def _mT(self: Tensor) -> Tensor:
    _matrices_only(self, "mT")
    return F.transpose(self, -2, -1)


def _mH(self: Tensor) -> Tensor:
    _matrices_only(self, "mH")
    return F.transpose(self, -2, -1).conj()


def _adjoint(self: Tensor) -> Tensor:
    _matrices_only(self, "adjoint()")
    return F.transpose(self, -2, -1).conj()


def _H(self: Tensor) -> Tensor:
    if self.dim() != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor.")
    return F.transpose(self, -2, -1).conj()


Tensor.mT = property(_mT)
Tensor.mH = property(_mH)
Tensor.H = property(_H)
Tensor.adjoint = _adjoint


def _cpu(self, memory_format=None) -> Tensor:
    return self


def _cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
    raise AssertionError(NO_CUDA)


Tensor.cpu = _cpu
Tensor.cuda = _cuda
