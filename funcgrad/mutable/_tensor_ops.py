"""torch functions beyond arithmetic: softmax family, norms and moments, sorting and
selecting along a dim (gather, index_select, sort, topk, median, kthvalue), einsum, bmm,
outer, dot, addcmul/addcdiv and the in-place random fills. Each is a declaration in the op
table over a primitive (funcgrad.numpy's or `_prims`'), so backward and create_graph follow."""
from __future__ import annotations

import builtins
import warnings
from typing import Sequence

import numpy as np

from ..numpy import _helpers as H
from ..numpy import _indexing as NI
from ..numpy import _primitives as NP
from . import _dtypes as D
from . import _functions as F
from . import _methods  # noqa: F401  (Tensor's basic methods first: some are replaced here)
from . import _ops as O
from . import _prims as P
from . import _random
from . import return_types
from ._functions import _dim, _dims, matmul, mul, reshape, sum, unsqueeze
from ._device import check_device
from ._graph import Node, node_class
from ._ops import OpNode, apply, inplace
from .._src.declare import elementwise, linear, primitive
from ._tensor import Tensor
from ..scipy.special import erf_p

__all__ = ["real", "imag", "conj", "angle", "sign", "sgn", "erf", "bernoulli", "Generator",
           "default_generator", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "searchsorted",
           "bucketize", "count_nonzero", "unique", "unique_consecutive", "scatter_reduce",
           "nanmedian", "all", "any", "signbit", "repeat", "masked_fill", "trace", "atan2", "isin", "randint", "randperm", "softmax", "log_softmax", "logsumexp", "norm", "var", "std", "var_mean", "std_mean",
           "cumsum", "sort", "argsort", "topk", "median", "kthvalue", "gather", "index_select",
           "einsum", "bmm", "outer", "dot", "addcmul", "addcdiv", "view_as_real", "view_as_complex"]

_decl = O._decl
SOFTMAX = _decl("softmax", P.softmax_p, "SoftmaxBackward0", saves_out=True,
                result="same")
LOG_SOFTMAX = _decl("log_softmax", P.log_softmax_p, "LogSoftmaxBackward0",
                    saves_out=True, result="same")
LOGSUMEXP = _decl("logsumexp", P.logsumexp_p, "LogsumexpBackward0",
                  saves_out=True, result="same")
VECTOR_NORM = _decl("linalg_vector_norm", P.vector_norm_p, "LinalgVectorNormBackward0", saves_out=True, result="real")
VAR = _decl("var", P.var_p, "VarBackward0", result="real")
STD = _decl("std", P.std_p, "StdBackward0", saves_out=True, result="real")
VAR_MEAN = _decl("var_mean", P.var_p, "VarMeanBackward0", result="real")
STD_MEAN = _decl("std_mean", P.std_p, "StdMeanBackward0", saves_out=True,
                 result="real")
MEAN_OF_VAR = _decl("var_mean_mean", NP.mean, "VarMeanBackward0", result="same")
MEAN_OF_STD = _decl("std_mean_mean", NP.mean, "StdMeanBackward0", result="same")
CUMSUM = _decl("cumsum", NP.cumsum, "CumsumBackward0", result="same")
ADDCMUL = _decl("addcmul", P.addcmul_p, "AddcmulBackward0")
ADDCDIV = _decl("addcdiv", P.addcdiv_p, "AddcdivBackward0")
BMM = _decl("bmm", NP.matmul, "BmmBackward0")
DOT = _decl("dot_fn", NP.matmul, "DotBackward0")
_PICKS = (("Gather", 0), ("Sort", 0), ("Topk", 0), ("Max", 0), ("Min", 0), ("Median", 1),
          ("Nanmedian", 1), ("Kthvalue", 0))


class _PickNode(OpNode):
    """A pick along a dim (gather, max(dim), sort...): PyTorch's saved dim (an int) and
    indices (a tensor, freed with the graph)."""

    __slots__ = ()

    @property
    def _saved_dim(self) -> int:
        return self._params["axis"]

    @property
    def _saved_indices(self) -> Tensor:
        self._check_alive()
        return Tensor._wrap(self._vals[1].astype(np.int64))

    _saved_index = _saved_indices  # (gather's name)


# picking along a dim: funcgrad.numpy's take_along_axis primitive, named as PyTorch names each
_PICKING = {name: _decl(name.lower() + "_along", NI.take_along, f"{name}Backward{n}",
                        result="same", node_base=_PickNode) for name, n in _PICKS}
# and as an advanced index (getitem), where the index does not line up with the input's dims
_SELECTING = {name: _decl(name.lower(), NP.getitem, f"{name}Backward{n}", ((),), result="same")
              for name, n in _PICKS + (("IndexSelect", 0),)}


def _float_input(name: str, x: Tensor) -> None:
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise RuntimeError(f"{name}(): input dtype should be either floating point or complex. "
                           f"Got {O._scalar_name(x._dtype)} instead.")


def _cast(x: Tensor, dtype) -> Tensor:
    return x if dtype is None or x._dtype is dtype else x.to(dtype)


# --- softmax family ------------------------------------------------------------------------------
def softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """``torch.softmax`` along `dim` (grad_fn ``SoftmaxBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.softmax(torch.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    x = _cast(input, dtype)
    if x._dtype.category < 2:
        raise RuntimeError('"softmax_lastdim_kernel_impl" not implemented for '
                           f"'{O._scalar_name(x._dtype)}'")
    return apply(SOFTMAX, (x,), {"axis": _softmax_dim(dim, x._data.ndim)})


def log_softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """``torch.log_softmax`` along `dim` (grad_fn ``LogSoftmaxBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.log_softmax(torch.tensor([0.0, 0.0]), 0)
    tensor([-0.6931, -0.6931])
    """
    x = _cast(input, dtype)
    if x._dtype.category < 2:
        raise RuntimeError('"log_softmax_lastdim_kernel_impl" not implemented for '
                           f"'{O._scalar_name(x._dtype)}'")
    return apply(LOG_SOFTMAX, (x,), {"axis": _softmax_dim(dim, x._data.ndim)})


def _softmax_dim(dim, ndim: int) -> int:
    if dim is None:  # PyTorch's legacy implicit choice (with a warning there)
        dim = 0 if ndim in (0, 1, 3) else 1
    return _dim(dim, builtins.max(ndim, 1)) if ndim else None


def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over `dim`, computed stably.

    >>> import funcgrad.mutable as torch
    >>> torch.logsumexp(torch.tensor([0.0, 0.0]), 0)
    tensor(0.6931)
    """
    x = input if input._dtype.category >= 2 else input.to(D.DEFAULT_FLOAT)
    return apply(LOGSUMEXP, (x,), {"axis": _dims(dim, x._data.ndim), "keepdims": keepdim})


# --- norms and moments ---------------------------------------------------------------------------
def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """``torch.norm``: the vector p-norm over `dim` (all elements by default).

    >>> import funcgrad.mutable as torch
    >>> torch.norm(torch.tensor([3.0, 4.0]))
    tensor(5.)
    """
    x = _cast(input, dtype)
    if p == "fro" or p is None:
        p = 2.0
    if isinstance(p, str):
        raise NotImplementedError(f"torch.norm with p={p!r} is not supported by funcgrad.mutable")
    return vector_norm(x, p, dim, keepdim)


def vector_norm(x: Tensor, ord=2.0, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``torch.linalg.vector_norm`` (grad_fn ``LinalgVectorNormBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.vector_norm(torch.tensor([3.0, -4.0]), 1)
    tensor(7.)
    """
    x = _cast(x, dtype)
    _float_input("linalg.vector_norm", x)
    axis = _dims(dim, x._data.ndim)
    return apply(VECTOR_NORM, (x,), {"ord": float(ord), "axis": axis, "keepdims": keepdim})


def _correction(dim, unbiased, correction):
    if isinstance(dim, bool):  # torch.var(x, False): the old (input, unbiased) signature
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


def var(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """``torch.var`` with Bessel's correction by default (grad_fn ``VarBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.var(torch.tensor([1.0, 2.0, 3.0]))
    tensor(1.)
    """
    dim, correction = _correction(dim, unbiased, correction)
    _float_input("var", input)
    return apply(VAR, (input,), {"axis": _dims(dim, input._data.ndim),
                                 "correction": correction, "keepdims": keepdim})


def std(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """``torch.std`` with Bessel's correction by default (grad_fn ``StdBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.std(torch.tensor([1.0, 3.0]))
    tensor(1.4142)
    """
    dim, correction = _correction(dim, unbiased, correction)
    _float_input("std", input)
    return apply(STD, (input,), {"axis": _dims(dim, input._data.ndim),
                                 "correction": correction, "keepdims": keepdim})


class _PairBackward(Node):
    """torch's one node for the two results of var_mean / std_mean: each output's gradient
    runs through the node recorded for it, and the input's two gradients add."""

    __slots__ = ("_parts",)
    _nout = 2

    def _apply(self, cts, graph):
        total = None
        for part, ct in zip(self._parts, cts):
            if ct is None:
                continue
            g = part._apply([ct], graph)[0]
            if g is not None:
                total = g if total is None else total + g
        return [total]

    def _release(self) -> None:
        for part in self._parts:
            part._release()

    def _check_alive(self) -> None:
        for part in self._parts:
            part._check_alive()

    def _saved_values(self) -> list:
        return [v for part in self._parts for v in part._saved_values()]

    def _output_specs(self) -> list:
        return [part._output_specs()[0] for part in self._parts]

    def __getattr__(self, name: str):
        return getattr(self._parts[0], name)  # _saved_self, _saved_dim...


def _one_node(name: str, first: Tensor, second: Tensor, base: type = _PairBackward) -> tuple:
    """Make `first` and `second` outputs 0 and 1 of one node, as torch records them (a
    `base` subclass of `_PairBackward` for another way of joining the parts' gradients)."""
    parts = (first._grad_fn, second._grad_fn)
    if parts[0] is None or parts[1] is None:
        return first, second
    cls = node_class(name, base)
    node = cls.__new__(cls)
    node._init(parts[0]._next)
    node._parts = parts
    first._grad_fn, first._nr = node, 0
    second._grad_fn, second._nr = node, 1
    return first, second


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``(var, mean)`` as one call (both with grad_fn ``VarMeanBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.var_mean(torch.tensor([1.0, 3.0]))
    (tensor(2.), tensor(2.))
    """
    dim, correction = _correction(dim, unbiased, correction)
    axis = _dims(dim, input._data.ndim)
    v = apply(VAR_MEAN, (input,), {"axis": axis, "correction": correction, "keepdims": keepdim})
    return _one_node("VarMeanBackward0", v,
                     apply(MEAN_OF_VAR, (input,), {"axis": axis, "keepdims": keepdim}))


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``(std, mean)`` as one call (both with grad_fn ``StdMeanBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.std_mean(torch.tensor([1.0, 3.0]))
    (tensor(1.4142), tensor(2.))
    """
    dim, correction = _correction(dim, unbiased, correction)
    axis = _dims(dim, input._data.ndim)
    s = apply(STD_MEAN, (input,), {"axis": axis, "correction": correction, "keepdims": keepdim})
    return _one_node("StdMeanBackward0", s,
                     apply(MEAN_OF_STD, (input,), {"axis": axis, "keepdims": keepdim}))


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running sum along `dim` (integers sum to int64, as in PyTorch).

    >>> import funcgrad.mutable as torch
    >>> torch.cumsum(torch.tensor([1.0, 2.0, 3.0]), 0)
    tensor([1., 3., 6.])
    """
    x = _cast(input, dtype)
    if dtype is None and x._dtype.category < 2:
        x = x.to(D.int64)
    if x._data.ndim == 0:
        return apply(O.CLONE, (x,))
    return apply(CUMSUM, (x,), {"axis": _dim(dim, x._data.ndim)})


# --- selecting along a dim ---------------------------------------------------------------------------
def _along(name: str, x: Tensor, dim: int, index: np.ndarray, keep: bool = True) -> Tensor:
    """``x`` read at `index` along `dim` (other dims by position); `keep`: `index` still has
    the `dim` axis (else it was reduced away)."""
    if x._data.ndim and index.ndim == x._data.ndim - (not keep):
        return apply(_PICKING[name], (x, index), {"axis": dim, "keepdims": keep})
    items = []
    nd = index.ndim
    for d in range(x._data.ndim):
        if d == dim:
            items.append(index)
            continue
        od = d if keep or d < dim else d - 1
        shape = [1] * nd
        shape[od] = index.shape[od]
        items.append(np.arange(index.shape[od]).reshape(shape))
    if not items:  # a 0-d tensor
        return apply(_SELECTING[name], (x,), {"template": (Ellipsis,)})
    template, arrays = H.split_index(tuple(items))
    return apply(_SELECTING[name], (x,) + tuple(arrays), {"template": template})


def _index_array(index, name: str) -> np.ndarray:
    data = index._data if isinstance(index, Tensor) else np.asarray(index)
    if data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    return data.astype(np.intp)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (grad_fn ``GatherBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.gather(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, torch.tensor([[1], [0]]))
    tensor([[2.],
            [3.]])
    """
    idx = _index_array(index, "gather")
    nd = builtins.max(input._data.ndim, 1)
    if idx.ndim != input._data.ndim and not (idx.ndim <= 1 and input._data.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    d = _dim(dim, nd)
    for k, (a, b) in enumerate(zip(idx.shape, input._data.shape)):
        if k != d and a > b:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be no larger than self "
                               f"{list(input._data.shape)} apart from dimension {d}")
    size = input._data.shape[d] if input._data.ndim else 1
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise RuntimeError(f"index {int(idx.max() if idx.max() >= size else idx.min())} is out "
                           f"of bounds for dimension {d} with size {size}")
    return _along("Gather", input, d, idx % builtins.max(size, 1))


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices at `index` along `dim` (grad_fn ``IndexSelectBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.index_select(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, torch.tensor([1]))
    tensor([[2.],
            [4.]])
    """
    idx = _index_array(index, "index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _dim(dim, builtins.max(input._data.ndim, 1))
    size = input._data.shape[d] if input._data.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError(f"index out of range in self")
    template, arrays = H.split_index((slice(None),) * d + (idx.reshape(-1),))
    return apply(_SELECTING["IndexSelect"], (input,) + tuple(arrays), {"template": template})


def _sorted_indices(data: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    if data.dtype == np.bool_:
        data = data.astype(np.int8)
    if descending:
        # stable and descending: sort the reversed array ascending, then flip back
        flipped = np.flip(data, axis=dim)
        idx = np.argsort(flipped, axis=dim, kind="stable")
        idx = data.shape[dim] - 1 - np.flip(idx, axis=dim)
        return idx
    return np.argsort(data, axis=dim, kind="stable")


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """``(values, indices)`` sorted along `dim` (grad_fn ``SortBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.sort(torch.tensor([3.0, 1.0, 2.0])).indices
    tensor([1, 2, 0])
    """
    if input._data.ndim == 0:
        return return_types.sort(_along("Sort", input, 0, np.zeros((), np.intp)),
                                 Tensor._wrap(np.zeros((), np.int64)))
    d = _dim(dim, input._data.ndim)
    idx = _sorted_indices(input._data, d, descending)
    return return_types.sort(_along("Sort", input, d, idx), Tensor._wrap(idx.astype(np.int64)))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """Indices that sort `input` along `dim`.

    >>> import funcgrad.mutable as torch
    >>> torch.argsort(torch.tensor([3.0, 1.0, 2.0]))
    tensor([1, 2, 0])
    """
    return sort(input, dim, descending, stable).indices


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The `k` largest (or smallest) along `dim`, as ``(values, indices)``.

    >>> import funcgrad.mutable as torch
    >>> torch.topk(torch.tensor([1.0, 5.0, 3.0]), 2).values
    tensor([5., 3.])
    """
    d = _dim(dim, builtins.max(input._data.ndim, 1))
    size = input._data.shape[d] if input._data.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    data = input._data if input._data.ndim else input._data.reshape(1)
    idx = _sorted_indices(data, d, largest)
    idx = np.take(idx, np.arange(k), axis=d)
    if not input._data.ndim:
        idx = idx.reshape(())
    return return_types.topk(_along("Topk", input, d, idx), Tensor._wrap(idx.astype(np.int64)))


def _reduced_pick(name: str, kind, input: Tensor, dim: int, keepdim: bool, pick) -> tuple:
    """(values, indices) of a pick along `dim`; `pick(data, d)` gives indices, dim kept."""
    if input._data.ndim == 0:
        idx = np.zeros((), np.intp)
        return kind(_along(name, input, 0, idx), Tensor._wrap(np.zeros((), np.int64)))
    d = _dim(dim, input._data.ndim)
    if input._data.shape[d] == 0:
        raise IndexError(f"{name.lower()}(): Expected reduction dim {d} to have non-zero size.")
    idx = pick(input._data, d)
    if not keepdim:
        idx = idx.reshape(idx.shape[:d] + idx.shape[d + 1:])
    values = _along(name, input, d, idx, keep=keepdim)
    return kind(values, Tensor._wrap(idx.astype(np.int64)))


# --- full reductions choosing one value: the slope is shared among the elements equal to it,
# NaNs counting as equal to a NaN result (torch's rule; NumPy's equality would give 0/0) -----------
def _ties_vjp(ct, out, x):
    hits = NP.logical_or(NP.equal(x, out), NP.logical_and(NP.isnan(x), NP.isnan(out)))
    hits = NP.astype(hits, H.dtype(x))
    return ct * hits / NP.sum(hits)


def _lower_median(x):
    flat = np.sort(np.ravel(x))
    return flat[(flat.size - 1) // 2]  # torch's median is the lower of the two middle values


def _median_impl(x):
    flat = np.ravel(x)
    return np.asarray(np.nan, x.dtype) if np.isnan(flat).any() else _lower_median(flat)


def _nanmedian_impl(x):
    flat = np.ravel(x)
    kept = flat[~np.isnan(flat)]
    return np.asarray(np.nan, x.dtype) if kept.size == 0 else _lower_median(kept)


max_all_p = primitive("max_all", lambda x: np.max(x), vjps=(_ties_vjp,))
min_all_p = primitive("min_all", lambda x: np.min(x), vjps=(_ties_vjp,))
median_all_p = primitive("median_all", _median_impl, vjps=(_ties_vjp,))
nanmedian_all_p = primitive("nanmedian_all", _nanmedian_impl, vjps=(_ties_vjp,))
MAX_ALL = _decl("max_all", max_all_p, "MaxBackward1", saves_out=True,
                result="same")
MIN_ALL = _decl("min_all", min_all_p, "MinBackward1", saves_out=True,
                result="same")
MEDIAN_ALL = _decl("median", median_all_p, "MedianBackward0", saves_out=True,
                   result="same")
NANMEDIAN_ALL = _decl("nanmedian", nanmedian_all_p, "NanmedianBackward0",
                      saves_out=True, result="same")


def _reduce_all(op, name: str, input: Tensor) -> Tensor:
    if input._data.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return apply(op, (input,), {})


def max(input: Tensor, dim=None, keepdim: bool = False):
    """Largest element; along `dim` ``(values, indices)`` whose gradient goes to the index
    returned (grad_fn ``MaxBackward0``); with a tensor, `maximum`.

    >>> import funcgrad.mutable as torch
    >>> torch.max(torch.tensor([[1.0, 7.0], [4.0, 2.0]]), 1)
    torch.return_types.max(
    values=tensor([7., 4.]),
    indices=tensor([1, 0]))
    """
    if isinstance(dim, Tensor):
        return F.maximum(input, dim)
    if dim is None:
        return _reduce_all(MAX_ALL, "max", input)
    return max_along(input, dim, keepdim)


def min(input: Tensor, dim=None, keepdim: bool = False):
    """Smallest element, or ``(values, indices)`` along `dim` (see `max`).

    >>> import funcgrad.mutable as torch
    >>> torch.min(torch.tensor([4.0, 2.0, 3.0]), 0).indices
    tensor(1)
    """
    if isinstance(dim, Tensor):
        return F.minimum(input, dim)
    if dim is None:
        return _reduce_all(MIN_ALL, "min", input)
    return min_along(input, dim, keepdim)


def max_along(input: Tensor, dim: int, keepdim: bool = False):
    """``torch.max(input, dim)``: values and the index of the first maximum (NumPy's argmax,
    as PyTorch's, gives the first NaN); the gradient goes to that index alone (grad_fn
    ``MaxBackward0``)."""
    return _reduced_pick("Max", return_types.max, input, dim, keepdim,
                         lambda a, d: a.argmax(axis=d, keepdims=True))


def min_along(input: Tensor, dim: int, keepdim: bool = False):
    """``torch.min(input, dim)`` (see `max_along`)."""
    return _reduced_pick("Min", return_types.min, input, dim, keepdim,
                         lambda a, d: a.argmin(axis=d, keepdims=True))


def median(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median of all elements, or ``(values, indices)`` along `dim`.

    >>> import funcgrad.mutable as torch
    >>> torch.median(torch.tensor([1.0, 4.0, 2.0, 3.0]))
    tensor(2.)
    """
    if dim is None:
        if input._data.size == 0:
            return Tensor._wrap(np.asarray(np.nan, input._data.dtype))
        return apply(MEDIAN_ALL, (input,), {})

    def pick(a, d):
        idx = np.argsort(a, axis=d, kind="stable")
        idx = np.take(idx, [(a.shape[d] - 1) // 2], axis=d)
        if a.dtype.kind != "f":
            return idx
        nan = np.isnan(a)  # a lane with a NaN gives its first NaN, as PyTorch
        return np.where(nan.any(axis=d, keepdims=True), nan.argmax(axis=d, keepdims=True), idx)
    return _reduced_pick("Median", return_types.median, input, dim, keepdim, pick)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The `k`-th smallest along `dim`, as ``(values, indices)``.

    >>> import funcgrad.mutable as torch
    >>> torch.kthvalue(torch.tensor([3.0, 1.0, 2.0]), 2).values
    tensor(2.)
    """
    def pick(a, d):
        if not 1 <= k <= a.shape[d]:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
        return np.take(np.argsort(a, axis=d, kind="stable"), [k - 1], axis=d)
    return _reduced_pick("Kthvalue", return_types.kthvalue, input, dim, keepdim, pick)


# --- products -------------------------------------------------------------------------------------
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-d tensors (grad_fn ``BmmBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.bmm(torch.ones(2, 1, 3), torch.ones(2, 3, 1)).shape
    torch.Size([2, 1, 1])
    """
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, n, k), (b2, k2, m) = input._data.shape, mat2._data.shape
    if b != b2 or k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{b2}, {k2}].")
    if input._dtype is not mat2._dtype:
        raise RuntimeError(f"expected scalar type {O._scalar_name(input._dtype)} but found "
                           f"{O._scalar_name(mat2._dtype)}")
    return apply(BMM, (input, mat2))


def dot(input: Tensor, other: Tensor) -> Tensor:
    """Inner product of two 1-d tensors (grad_fn ``DotBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.dot(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{other._data.ndim}D tensors")
    return matmul(input, other)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-d tensors (as PyTorch: a column times a row, ``MulBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
    tensor([[3., 4.],
            [6., 8.]])
    """
    return mul(reshape(input, (-1, 1)), vec2)


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation: each operand laid out over all the equation's letters, multiplied
    with broadcasting, summed over the letters not in the output.

    >>> import funcgrad.mutable as torch
    >>> torch.einsum("ij,j->i", torch.ones(2, 3), torch.tensor([1.0, 2.0, 3.0]))
    tensor([6., 6.])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    terms, out = _expand_ellipsis(terms, out if arrow else None, operands)
    if not arrow:
        counts: dict = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    letters = list(out)
    for t in terms:
        for c in t:
            if c not in letters:
                letters.append(c)
    laid = []
    for term, x in zip(terms, operands):
        if len(term) != x._data.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(term)}) does not match the number of dimensions "
                               f"({x._data.ndim}) for operand {len(laid)} and no ellipsis was "
                               "given")
        x, term = _diagonals(x, term)
        order = sorted(range(len(term)), key=lambda i: letters.index(term[i]))
        x = x.permute(*order) if order != list(range(len(order))) else x
        present = [term[i] for i in order]
        shape = [x._data.shape[present.index(c)] if c in present else 1 for c in letters]
        laid.append(x.reshape(shape))
    result = laid[0]
    for x in laid[1:]:
        result = result * x
    contracted = tuple(range(len(out), len(letters)))
    if contracted:
        result = sum(result, contracted)
    elif len(laid) == 1:
        result = result.clone() if result._base is None and result is operands[0] else result
    return result


def _expand_ellipsis(terms, out, operands):
    """Replace ``...`` by fresh capital letters, right-aligned across operands."""
    if not builtins.any("..." in t for t in terms) and (out is None or "..." not in out):
        return terms, out
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in "".join(terms) + (out or "")]
    width = 0
    for t, x in zip(terms, operands):
        if "..." in t:
            width = builtins.max(width, x._data.ndim - (len(t) - 3))
    dots = "".join(free[:width])
    new_terms = []
    for t, x in zip(terms, operands):
        if "..." in t:
            n = x._data.ndim - (len(t) - 3)
            t = t.replace("...", dots[width - n:])
        new_terms.append(t)
    if out is None:
        return new_terms, None  # implicit output: the broadcast letters sort first (capitals)
    return new_terms, out.replace("...", dots)


def _diagonals(x: Tensor, term: str):
    """Repeated letters in one operand (``"ii"``) take the diagonal."""
    while len(set(term)) != len(term):
        for i, c in enumerate(term):
            j = term.find(c, i + 1)
            if j >= 0:
                x = x.diagonal(0, i, j)  # the diagonal goes last
                term = term[:i] + term[i + 1:j] + term[j + 1:] + c
                break
    return x, term


# --- addcmul / addcdiv ------------------------------------------------------------------------------
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2`` (grad_fn ``AddcmulBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.addcmul(torch.ones(2), torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), value=2)
    tensor([ 7., 17.])
    """
    return apply(ADDCMUL, (input, tensor1, tensor2), {"value": value})


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2`` (grad_fn ``AddcdivBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.addcdiv(torch.ones(2), torch.tensor([1.0, 2.0]), torch.tensor([4.0, 4.0]))
    tensor([1.2500, 1.5000])
    """
    return apply(ADDCDIV, (input, tensor1, tensor2), {"value": value})


def _addcmul_(self: Tensor, tensor1, tensor2, *, value=1) -> Tensor:
    return inplace(ADDCMUL, self, (tensor1, tensor2), {"value": value})


def _addcdiv_(self: Tensor, tensor1, tensor2, *, value=1) -> Tensor:
    return inplace(ADDCDIV, self, (tensor1, tensor2), {"value": value})


# --- more elementwise and shape ops -----------------------------------------------------------
REPEAT = _decl("repeat", P.repeat_p, "RepeatBackward0", result="same")
MASKED_FILL = _decl("masked_fill", P.masked_fill_p, "MaskedFillBackward0",
                    result="same")
TRACE = _decl("trace", P.trace_p, "TraceBackward0", result="same")
ATAN2 = _decl("atan2", NP.arctan2, "Atan2Backward0", result="float")


def repeat(input: Tensor, *sizes) -> Tensor:
    """The tensor tiled `sizes` times along each dim (grad_fn ``RepeatBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.tensor([1.0, 2.0]).repeat(2)
    tensor([1., 2., 1., 2.])
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return apply(REPEAT, (input,), {"repeats": sizes})


def _mask_array(mask, name: str) -> np.ndarray:
    data = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if data.dtype != np.bool_:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{D.from_numpy_dtype(data.dtype)}")
    return data


def _fill_value(self: Tensor, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return value if value._dtype is self._dtype else value.to(self._dtype)
    return value


def masked_fill(input: Tensor, mask, value) -> Tensor:
    """`value` where `mask` is True (grad_fn ``MaskedFillBackward0``).

    >>> import funcgrad.mutable as torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> x.masked_fill(x > 1, 0.0)
    tensor([1., 0.])
    """
    m = _mask_array(mask, "masked_fill_")
    return apply(MASKED_FILL, (input, _fill_value(input, value)), {"mask": m})


def _masked_fill_(self: Tensor, mask, value) -> Tensor:
    m = _mask_array(mask, "masked_fill_")
    return inplace(MASKED_FILL, self, (_fill_value(self, value),), {"mask": m})


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a matrix (grad_fn ``TraceBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.trace(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    return apply(TRACE, (input,))


def atan2(input: Tensor, other) -> Tensor:
    """Elementwise ``atan2(input, other)`` (grad_fn ``Atan2Backward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.atan2(torch.tensor([1.0]), torch.tensor([1.0]))
    tensor([0.7854])
    """
    return apply(ATAN2, (input, other))


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element is among `test_elements` (a bool tensor).

    >>> import funcgrad.mutable as torch
    >>> torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2]))
    tensor([False,  True, False])
    """
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return Tensor._wrap(np.isin(a, b, invert=invert))


def view_as(input: Tensor, other: Tensor) -> Tensor:
    """A view with `other`'s shape (grad_fn ``ViewBackward0``)."""
    return F.view(input, tuple(other._data.shape))


def _new_filled(fill):
    def method(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False,
               **kwargs) -> Tensor:
        if fill is None:  # new_full(size, fill_value)
            size, value = size[0], size[1] if len(size) > 1 else kwargs["fill_value"]
        else:
            value = fill
        return F.full(F._shape_arg(size), value, dtype=dtype or self._dtype, device=device,
                      requires_grad=requires_grad)
    return method


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Views of consecutive pieces of the given sizes along `dim`."""
    return F.split(input, list(split_sizes), dim)


# --- random integers ---------------------------------------------------------------------------------
def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Uniform integers in ``[low, high)`` (int64 unless `dtype`).

    >>> import funcgrad.mutable as torch
    >>> torch.randint(0, 3, (4,)).dtype
    torch.int64
    """
    if size is None:
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    check_device(device)
    values = _random.randint(low, high, F._shape_arg(size), generator)
    return Tensor._wrap(values.astype(D.to_dtype(dtype).np if dtype is not None else np.int64))


def randperm(n: int, *, generator=None, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1``.

    >>> import funcgrad.mutable as torch
    >>> sorted(torch.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    check_device(device)
    order = _random.randperm(n, generator)
    return Tensor._wrap(order.astype(D.to_dtype(dtype).np if dtype is not None else np.int64))


# --- in-place random fills --------------------------------------------------------------------------
NORMAL_ = _decl("normal_", None, "NormalBackward0")
UNIFORM_ = _decl("uniform_", None, "UniformBackward0")


def _normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    values = _random.normal(self._data.shape, self._data.dtype, mean, std, generator)
    return inplace(NORMAL_, self, (), compute=lambda s: values)


def _uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    values = _random.uniform(self._data.shape, self._data.dtype, a, b, generator)
    return inplace(UNIFORM_, self, (), compute=lambda s: values)


def _bernoulli_draws(shape, probs, np_dtype, generator) -> np.ndarray:
    """1 where a float64 uniform falls below the probability."""
    flat = np.ravel(np.broadcast_to(np.asarray(probs, np.float64), shape))
    if flat.size and not ((flat >= 0) & (flat <= 1)).all():
        raise RuntimeError("bernoulli_ expects p to be in [0, 1]")
    unit = _random._gen(generator).unit(flat.size, True)
    return (unit < flat).reshape(shape).astype(np_dtype)


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """Ones with probability `input` (or `p`); draws from the torch-seeded generator, though
    not PyTorch's exact bits (its kernel draws through MKL).

    >>> import funcgrad.mutable as torch
    >>> torch.bernoulli(torch.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    probs = input._data if p is None else p
    return Tensor._wrap(_bernoulli_draws(input._data.shape, probs, input._data.dtype, generator))


def _bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    probs = p._data if isinstance(p, Tensor) else p
    values = _bernoulli_draws(self._data.shape, probs, self._data.dtype, generator)
    op = BERNOULLI_TENSOR_ if isinstance(p, Tensor) else BERNOULLI_
    return inplace(op, self, (), compute=lambda s: values)


BERNOULLI_ = _decl("bernoulli_", None, "BernoulliBackward2")  # (p a number)
BERNOULLI_TENSOR_ = _decl("bernoulli_tensor_", None, "BernoulliBackward1")  # (p a tensor)


# --- complex parts, sign, erf ---------------------------------------------------------------------
def _angle_slope(out, x):
    """d angle / dx: zero on the reals; on complex numbers the derivative of
    ``atan2(imag, real)`` written as one complex factor (funcgrad's convention)."""
    if not np.iscomplexobj(H.dtype(x).type(0)):
        return NP.zeros_like(x)
    return NP.divide(-1j, x)


angle_p = elementwise("angle", lambda x: np.angle(x).astype(
    np.real(np.zeros((), np.result_type(x))).dtype if np.iscomplexobj(x) else np.result_type(x)),
    _angle_slope)
# torch records a node for sign (its gradient is zero); funcgrad.numpy's sign is not differentiable
sign_p = elementwise("sign", np.sign, lambda out, x: NP.zeros_like(x))
sgn_p = elementwise("sgn", lambda z: np.where(z == 0, 0, z / np.where(z == 0, 1, np.abs(z))),
                    lambda out, z: NP.zeros_like(z))
REAL = _decl("real", NP.real, "SelectBackward0", result="keep", is_view=True)
IMAG = _decl("imag", NP.imag, "SelectBackward0", result="keep", is_view=True)
CONJ = _decl("conj", NP.conjugate, "ConjBackward0", result="same")
ANGLE = _decl("angle", angle_p, "AngleBackward0", result="keep")
SIGN = _decl("sign", sign_p, "SignBackward0", result="same")
SGN = _decl("sgn", sgn_p, "SgnBackward0", saves_out=True, result="same")
ERF = _decl("erf", erf_p, "ErfBackward0", result="float")


def _complex_part(op, input: Tensor) -> Tensor:
    """A real view of the real or imaginary parts of a complex tensor (same storage)."""
    out = O.view_op(op, input, {})
    out._dtype = D.from_numpy_dtype(out._data.dtype)
    return out


def real(input: Tensor) -> Tensor:
    """The real parts of a complex tensor, as a view; a real tensor itself.

    >>> import funcgrad.mutable as torch
    >>> torch.real(torch.tensor([1 + 2j]))
    tensor([1.])
    """
    return _complex_part(REAL, input) if input._dtype.is_complex else input


def imag(input: Tensor) -> Tensor:
    """The imaginary parts of a complex tensor, as a view.

    >>> import funcgrad.mutable as torch
    >>> torch.imag(torch.tensor([1 + 2j]))
    tensor([2.])
    """
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _complex_part(IMAG, input)


def _as_real_impl(z: np.ndarray) -> np.ndarray:
    """A complex array's (real, imag) pairs as a last dimension of 2: a view of its storage."""
    part = z.real
    return np.lib.stride_tricks.as_strided(part, shape=z.shape + (2,),
                                           strides=z.strides + (part.itemsize,),
                                           writeable=z.flags.writeable)


def _as_complex_impl(x: np.ndarray) -> np.ndarray:
    """The pairs of a last dimension of 2 as complex numbers: a view when that dimension is
    contiguous (view_as_complex checks it is; a cotangent may be a fresh copy)."""
    if x.strides[-1] != x.itemsize:
        x = np.ascontiguousarray(x)
    return x.view(np.complex64 if x.dtype == np.float32 else np.complex128)[..., 0]


# Transposes in funcgrad's convention (as real and imag): the conjugates of torch's formulas
_as_real_p = linear("view_as_real", _as_real_impl,
                    lambda ct, out, z: NP.conjugate(_as_complex_p(ct)))
_as_complex_p = linear("view_as_complex", _as_complex_impl,
                       lambda ct, out, x: _as_real_p(NP.conjugate(ct)))
VIEW_AS_REAL = _decl("view_as_real", _as_real_p, "ViewAsRealBackward0", result="keep",
                     is_view=True)
VIEW_AS_COMPLEX = _decl("view_as_complex", _as_complex_p, "ViewAsComplexBackward0",
                        result="keep", is_view=True)
O._VIEW_BY_IMPL[_as_real_impl] = VIEW_AS_REAL
O._VIEW_BY_IMPL[_as_complex_impl] = VIEW_AS_COMPLEX


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's real and imaginary parts as a last dimension of size 2, sharing
    its storage (grad_fn ``ViewAsRealBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.view_as_real(torch.tensor([1 + 2j, 3 - 4j]))
    tensor([[ 1.,  2.],
            [ 3., -4.]])
    """
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _complex_part(VIEW_AS_REAL, input)


def view_as_complex(input: Tensor) -> Tensor:
    """A float tensor whose last dimension has size 2 (stride 1) read as complex numbers,
    sharing its storage (grad_fn ``ViewAsComplexBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.view_as_complex(torch.tensor([[1.0, 2.0], [3.0, -4.0]]))
    tensor([1.+2.j, 3.-4.j])
    """
    if input._dtype not in (D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           "tensors, but got a tensor of scalar type: "
                           f"{O._scalar_name(input._dtype)}")
    data = input._data
    if data.ndim == 0 or data.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if data.strides[-1] != data.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if builtins.any(st % (2 * data.itemsize) for st in data.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return _complex_part(VIEW_AS_COMPLEX, input)


def conj(input: Tensor) -> Tensor:
    """Complex conjugate (grad_fn ``ConjBackward0``); a real tensor itself.

    >>> import funcgrad.mutable as torch
    >>> torch.conj(torch.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    return apply(CONJ, (input,), {}) if input._dtype.is_complex else input


def angle(input: Tensor) -> Tensor:
    """Argument of each element (pi for negative reals, 0 otherwise), always real.

    >>> import funcgrad.mutable as torch
    >>> torch.angle(torch.tensor([-1.0, 2.0]))
    tensor([3.1416, 0.0000])
    """
    x = input if input._dtype.category >= 2 else input.to(D.DEFAULT_FLOAT)
    return apply(ANGLE, (x,), {})


def sign(input: Tensor) -> Tensor:
    """-1, 0 or 1 by sign; its gradient is zero (grad_fn ``SignBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.sign(torch.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    if input._dtype.is_complex:
        raise RuntimeError("Unlike NumPy, torch.sign is not intended to support complex numbers. "
                           "Please use torch.sgn instead.")
    return apply(SIGN, (input,), {})


def sgn(input: Tensor) -> Tensor:
    """``z / |z|`` (0 at 0); for real tensors the sign.

    >>> import funcgrad.mutable as torch
    >>> torch.sgn(torch.tensor([3 + 4j]))
    tensor([0.6000+0.8000j])
    """
    return apply(SGN, (input,), {})


def erf(input: Tensor) -> Tensor:
    """The error function (grad_fn ``ErfBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.erf(torch.tensor([0.5]))
    tensor([0.5205])
    """
    x = input if input._dtype.category >= 2 else input.to(D.DEFAULT_FLOAT)
    return apply(ERF, (x,), {})


# --- legacy typed constructors (torch.FloatTensor ...), Tensor.new, Tensor.type -----------------
class tensortype(type):
    """The class of ``torch.FloatTensor`` and kin: calling one builds a tensor of its dtype,
    ``isinstance(t, torch.FloatTensor)`` asks whether `t` is a float32 tensor."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj._dtype is cls.dtype

    def __call__(cls, *args, device=None):
        check_device(device)
        return _legacy_new(cls.dtype, args)

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_new(dt, args) -> Tensor:
    """``torch.FloatTensor(...)`` / ``t.new(...)``: sizes give an uninitialised (zeroed)
    tensor, a sequence gives its data, a tensor of the same dtype gives itself."""
    if not args:
        return F.empty(0, dtype=dt)
    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0]._dtype is not dt:
            raise TypeError(f"expected {dt.tensor_type} (got {args[0]._dtype.tensor_type})")
        return args[0]
    if builtins.all(isinstance(a, int) and not isinstance(a, bool) for a in args) or (
            len(args) == 1 and isinstance(args[0], F.Size)):
        return F.empty(*args, dtype=dt)
    if len(args) == 1:
        return F.tensor(args[0], dtype=dt)
    raise TypeError(f"new(): invalid arguments {args!r}")


LEGACY_TYPES = {d.tensor_type: tensortype(d.tensor_type, (), {"dtype": d, "is_sparse": False})
                for d in D.ALL}
FloatTensor = LEGACY_TYPES["FloatTensor"]
DoubleTensor = LEGACY_TYPES["DoubleTensor"]
HalfTensor = LEGACY_TYPES["HalfTensor"]
LongTensor = LEGACY_TYPES["LongTensor"]
IntTensor = LEGACY_TYPES["IntTensor"]
ShortTensor = LEGACY_TYPES["ShortTensor"]
CharTensor = LEGACY_TYPES["CharTensor"]
ByteTensor = LEGACY_TYPES["ByteTensor"]
BoolTensor = LEGACY_TYPES["BoolTensor"]


def _new(self: Tensor, *args, device=None) -> Tensor:
    check_device(device)
    return _legacy_new(self._dtype, args)


def _type(self: Tensor, dtype=None, non_blocking: bool = False, **kwargs):
    if dtype is None:
        return "torch." + self._dtype.tensor_type
    if isinstance(dtype, tensortype):
        dtype = dtype.dtype
    elif isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        if name not in LEGACY_TYPES or dtype.startswith("torch.cuda"):
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = LEGACY_TYPES[name].dtype
    return self.to(dtype)


def _type_as(self: Tensor, other: Tensor) -> Tensor:
    return self.to(other._dtype)


def _volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


class layout:
    """``torch.layout``: how a tensor's elements are stored. Every tensor here is dense and
    strided (``torch.strided``); sparse layouts do not exist in funcgrad.mutable.

    >>> import funcgrad.mutable as torch
    >>> torch.ones(2).layout, torch.ones(2).layout is torch.strided
    (torch.strided, True)
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickled as the module's global of that name: the same object


strided = layout("strided")


def _layout(self: Tensor) -> layout:
    return strided


def _storage_offset(self: Tensor) -> int:
    """Where the tensor's first element sits in its storage, in elements of its dtype."""
    return F._storage_geometry(self._data)[0]


def _view_func(self: Tensor, new_base) -> Tensor | None:
    """This view made again the same way from `new_base`, a tensor laid out as the view's base
    (same sizes, strides and storage offset; else None, and None for a tensor that is no
    view): its view ops replayed when it was made with view replay on (or it changes the
    dtype), else one ``as_strided`` with the view's own sizes, strides and offset."""
    if not isinstance(new_base, Tensor):
        raise TypeError("_view_func(): argument 'new_base' (position 1) must be Tensor, not "
                        f"{type(new_base).__name__}")
    base = self._base
    if base is None or new_base.shape != base.shape or new_base.stride() != base.stride() \
            or _storage_offset(new_base) != _storage_offset(base):
        return None
    info = self._view
    if info.replay or base._data.dtype.kind != self._data.dtype.kind:
        return O._replay_tensor(new_base, info.chain)
    return F.as_strided(new_base, self.shape, self.stride(), _storage_offset(self))


def _rev_view_func_unsafe(self: Tensor, new_view) -> Tensor:
    """The inverse of `_view_func`: from `new_view`, a tensor laid out as this view and
    sharing its storage (``view.detach()``), a view of it laid out as this view's base (its
    sizes, strides and storage offset; the dtype converted back first when the view changed
    it, as view_as_real / view_as_complex do)."""
    if not isinstance(new_view, Tensor):
        raise TypeError("_rev_view_func_unsafe(): argument 'new_view' (position 1) must be "
                        f"Tensor, not {type(new_view).__name__}")
    base = self._base
    if base is None:
        raise RuntimeError("_rev_view_func_unsafe() is only defined for a view (this tensor "
                           "has no _base)")
    if F._memory_owner(new_view._data) is not F._memory_owner(self._data):
        # reading another storage with the base's geometry would give values that are not
        # the base's (torch inverts some view ops one by one there): refused, not guessed
        raise NotImplementedError(
            "_rev_view_func_unsafe() is supported for a tensor sharing this view's storage "
            "(such as view.detach()); for another tensor, apply the inverse view ops to it "
            "yourself")
    t = new_view
    if base._data.dtype.kind == "c" and t._data.dtype.kind != "c":
        t = view_as_complex(t)
    elif base._data.dtype.kind != "c" and t._data.dtype.kind == "c":
        t = view_as_real(t)
    return F.as_strided(t, base.shape, base.stride(), _storage_offset(base))


Tensor.storage_offset = _storage_offset
Tensor._view_func = _view_func
Tensor._view_func_unsafe = _view_func
Tensor._rev_view_func_unsafe = _rev_view_func_unsafe
Tensor.real = property(real)
Tensor.imag = property(imag)
Tensor.volatile = property(_volatile)
Tensor.layout = property(_layout)
Generator = _random.Generator
default_generator = _random.default_generator


# --- searching and counting (integer results, no gradient) ----------------------------------------
def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side=None, sorter=None) -> Tensor:
    """Insertion points of `input` into the last dim of `sorted_sequence`.

    >>> import funcgrad.mutable as torch
    >>> torch.searchsorted(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.5, 0.0]))
    tensor([2, 0])
    """
    side = side or ("right" if right else "left")
    seq = sorted_sequence._data
    if sorter is not None:
        seq = np.take_along_axis(seq, np.asarray(sorter._data), axis=-1)
    vals = input._data if isinstance(input, Tensor) else np.asarray(input)
    if seq.ndim <= 1:
        found = np.searchsorted(seq, vals, side=side)
    else:
        rows = seq.reshape(-1, seq.shape[-1])
        found = np.stack([np.searchsorted(r, v, side=side)
                          for r, v in zip(rows, vals.reshape(len(rows), -1))]).reshape(vals.shape)
    return Tensor._wrap(np.asarray(found, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each element among 1-D `boundaries` (``right`` closes buckets on the left).

    >>> import funcgrad.mutable as torch
    >>> torch.bucketize(torch.tensor([0.5, 2.0]), torch.tensor([1.0, 2.0, 3.0]))
    tensor([0, 1])
    """
    vals = input._data if isinstance(input, Tensor) else np.asarray(input)
    found = np.searchsorted(boundaries._data, vals, side="right" if right else "left")
    return Tensor._wrap(np.asarray(found, np.int32 if out_int32 else np.int64))


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """How many elements are not zero, over `dim` (all by default).

    >>> import funcgrad.mutable as torch
    >>> torch.count_nonzero(torch.tensor([0.0, 1.0, 2.0]))
    tensor(2)
    """
    axis = None if dim is None else _dims(dim, input._data.ndim)
    return Tensor._wrap(np.asarray(np.count_nonzero(input._data, axis=axis), np.int64))


class _NoDerivative(O.NotImplementedNode):
    """A node torch records for an op it cannot differentiate (``Unique2Backward0`` ...):
    backward through it raises NotImplementedError naming the op."""

    __slots__ = ()
    _display = None

    def _apply(self, cts, graph):
        raise NotImplementedError(f"the derivative for '{self._aten}' is not implemented.")


def _unique_values(x, sorted=True, dim=None, consecutive=False):
    return _unique_parts(x, dim, consecutive)[0]


def _unique_parts(x, dim, consecutive):
    """(values, inverse, counts) as torch.unique / unique_consecutive compute them."""
    if consecutive:
        moved = np.moveaxis(x, dim, 0) if dim is not None else np.ravel(x)
        if len(moved) == 0:
            return x, np.zeros(0, np.int64), np.zeros(0, np.int64)
        flat = moved.reshape(len(moved), -1)
        starts = np.concatenate([[True], (flat[1:] != flat[:-1]).any(axis=1)])
        inverse = np.cumsum(starts) - 1
        counts = np.diff(np.append(np.flatnonzero(starts), len(moved)))
        values = moved[starts]
        if dim is not None:
            values = np.moveaxis(values, 0, dim)
        return values, inverse.reshape(x.shape if dim is None else len(moved)), counts
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    return values, inverse.reshape(x.shape if dim is None else -1), counts


# the values a unique op returns are recorded (they require grad) but have no derivative
unique_p = primitive("unique", _unique_values, params=("sorted", "dim", "consecutive"),
                     vjps=(lambda ct, out, x, **params: None,))


def _no_derivative(name: str, aten: str, grad_fn: str):
    op = _decl(name, unique_p, grad_fn, result="same", node_base=_NoDerivative)
    op.node_cls._aten = aten
    return op


UNIQUE = _no_derivative("unique", "_unique2", "Unique2Backward0")
UNIQUE_DIM = _no_derivative("unique_dim", "unique_dim", "UniqueDimBackward0")
UNIQUE_CONSECUTIVE = _no_derivative("unique_consecutive", "unique_consecutive",
                                    "UniqueConsecutiveBackward0")


def _unique(op, input: Tensor, dim, consecutive, return_inverse, return_counts):
    if dim is not None:
        dim = _dim(dim, input._data.ndim)
    _, inverse, counts = _unique_parts(input._data, dim, consecutive)
    values = apply(op, (input,), {"sorted": True, "dim": dim, "consecutive": consecutive})
    extra = ([Tensor._wrap(np.asarray(inverse, np.int64))] if return_inverse else []) + (
        [Tensor._wrap(np.asarray(counts, np.int64))] if return_counts else [])
    return (values, *extra) if extra else values


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim=None):
    """The distinct values (sorted), optionally with each element's index among them and
    their counts; the values require grad but have no derivative, as in torch.

    >>> import funcgrad.mutable as torch
    >>> torch.unique(torch.tensor([3, 1, 3]), return_counts=True)
    (tensor([1, 3]), tensor([1, 2]))
    """
    return _unique(UNIQUE if dim is None else UNIQUE_DIM, input, dim, False, return_inverse,
                   return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along `dim`).

    >>> import funcgrad.mutable as torch
    >>> torch.unique_consecutive(torch.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    return _unique(UNIQUE_CONSECUTIVE, input, dim, True, return_inverse, return_counts)


# --- scatter_reduce ------------------------------------------------------------------------------
def _scatter_index(index: np.ndarray, dim: int) -> tuple:
    """The advanced index sending element ``i`` of `index`'s shape to ``index[i]`` along `dim`."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _gather(t, where: tuple):
    """``t[where]`` for an advanced index, as a differentiable primitive."""
    return NP.getitem(t, *where, template=(H.SLOT,) * len(where))


def _scatter_add(base, update, where: tuple):
    """`base` plus `update` scattered (and summed) at `where`, as a differentiable primitive."""
    return NP.index_add(base, update, *where, template=(H.SLOT,) * len(where))


def _scatter_src(src, index: np.ndarray):
    return src[tuple(slice(0, n) for n in index.shape)]


_SCATTER_START = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}
_SCATTER_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
                  "amin": np.minimum}


def _scatter_counts(shape, index, dim, include_self) -> np.ndarray:
    counts = np.zeros(shape, np.int64)
    np.add.at(counts, _scatter_index(index, dim), 1)
    return counts + (1 if include_self else 0)


def _scatter_reduce_impl(x, src, dim, index, reduce, include_self):
    where = _scatter_index(index, dim)
    out = np.array(x, copy=True)
    if not include_self:
        start = _SCATTER_START[reduce]
        if out.dtype.kind in "iub" and not np.isfinite(start):
            start = np.iinfo(out.dtype).min if start < 0 else np.iinfo(out.dtype).max
        out[where] = start
    _SCATTER_UFUNC[reduce].at(out, where, _scatter_src(src, index))
    if reduce == "mean":
        counts = np.maximum(_scatter_counts(out.shape, index, dim, include_self), 1)
        hit = _scatter_counts(out.shape, index, dim, False) > 0
        if out.dtype.kind in "iu":
            out = np.where(hit, out // counts, out)
        else:
            out = np.where(hit, out / counts, out).astype(out.dtype)
    return out


class _ErrorNode(OpNode):
    """torch's ``Error`` node (printed ``torch::autograd::Error``): its backward raises."""

    __slots__ = ()
    _display = "torch::autograd::Error"


def _refusing_twice(message: str):
    """An identity primitive whose derivative raises `message`: put on a gradient that is
    right but whose own derivative would not be (torch's DelayedError); recorded under
    create_graph as torch's ``Error`` node."""
    def refuse(ct, out, x):
        raise RuntimeError(message)
    prim = primitive("Error", lambda x: x, vjps=(refuse,))
    O._GENERIC[prim] = O.Op("Error", prim, "Error", [()], result="keep", node_base=_ErrorNode)
    return prim


def _scatter_vjps(prim: list, refusal):
    """The rules of scatter_reduce (and index_reduce, through its own primitive `prim[0]`);
    `refusal` marks a 'prod' gradient of src whose second derivative would be wrong."""
    def shares(ct, out, x, src, dim, index, reduce, include_self):
        """(slope into x, slope into each scattered element of src) before the gather."""
        where = _scatter_index(index, dim)
        hit = _scatter_counts(H.shape(x), index, dim, False) > 0
        kept = np.logical_or(~hit, include_self)  # x's elements that took part
        if reduce == "sum":
            return NP.where(kept, ct, 0.0), ct
        if reduce == "mean":
            counts = np.maximum(_scatter_counts(H.shape(x), index, dim, include_self), 1)
            return NP.where(kept, ct / counts, 0.0), ct / counts
        # amax / amin
        dt = H.dtype(x)
        on_x = NP.astype(NP.logical_and(NP.equal(x, out), kept), dt)
        src_part = _scatter_src(src, index)
        on_src = NP.astype(NP.equal(src_part, _gather(out, where)), dt)
        count = on_x + _scatter_add(NP.zeros_like(on_x), on_src, where)
        return ct * on_x / count, ct / count

    def prod_x(ct, out, x, src, dim, index, include_self):
        # x's slope is the product of its slot's src factors, taken as a product (never
        # out / x, which a zero in x would break); untouched elements pass ct through
        hit = _scatter_counts(H.shape(x), index, dim, False) > 0
        kept = np.logical_or(~hit, include_self)
        factors = prim[0](NP.ones_like(x), src, dim=dim, index=index, reduce="prod",
                          include_self=True)
        return NP.where(kept, ct * factors, 0.0)

    def prod_src(ct, out, x, src, dim, index, include_self):
        # the product of the other factors of a slot: out / factor for a nonzero factor; for
        # the slot's only zero factor, the slot's product with that factor read as 1; 0 for a
        # zero factor beside another zero (whose second derivative is then refused, as torch)
        where = _scatter_index(index, dim)
        src_part = _scatter_src(src, index)
        zero = NP.equal(src_part, 0)
        dt = H.dtype(src)
        zeros_in_slot = _gather(_scatter_add(NP.zeros_like(out), NP.astype(zero, dt), where),
                                where)
        alone = NP.logical_and(zero, NP.equal(zeros_in_slot, 1))
        masked = prim[0](x, NP.where(zero, 1.0, src_part), dim=dim, index=index,
                         reduce="prod", include_self=include_self)
        per = NP.where(alone, _gather(ct * masked, where),
                       NP.where(zero, 0.0,
                                _gather(ct * out, where) / NP.where(zero, 1.0, src_part)))
        # (an integer conversion reads a traced count's value; it carries no derivative)
        if (np.asarray(zeros_in_slot, dtype=np.int64) > 1).any():
            per = refusal(per)
        return per

    def vjp_x(ct, out, x, src, dim, index, reduce, include_self):
        if reduce == "prod":
            return prod_x(ct, out, x, src, dim, index, include_self)
        return shares(ct, out, x, src, dim, index, reduce, include_self)[0]

    def vjp_src(ct, out, x, src, dim, index, reduce, include_self):
        if reduce == "prod":
            per = prod_src(ct, out, x, src, dim, index, include_self)
        else:
            where = _scatter_index(index, dim)
            per = _gather(shares(ct, out, x, src, dim, index, reduce, include_self)[1], where)
            if reduce in ("amax", "amin"):
                per = per * NP.astype(NP.equal(_scatter_src(src, index), _gather(out, where)),
                                      H.dtype(src))
        if tuple(H.shape(src)) == tuple(index.shape):
            return per
        full = NP.zeros_like(src)
        return NP.index_add(full, per, template=tuple(slice(0, n) for n in index.shape))

    return vjp_x, vjp_src


def scatter_reduce_primitive(name: str, caller: str, operand: str):
    """A scatter_reduce primitive named `name`; its 'prod' double-backward refusal names
    `caller` and its src argument `operand`, as torch's message does."""
    prim: list = []
    refusal = _refusing_twice(f"{caller}(): Double backward is unsupported for {operand} when "
                              f">1 zeros in {operand} are scattered to the same position in "
                              f"self")
    prim.append(primitive(name, _scatter_reduce_impl, nargs=2,
                          params=("dim", "index", "reduce", "include_self"),
                          vjps=_scatter_vjps(prim, refusal)))
    return prim[0]


scatter_reduce_p = scatter_reduce_primitive("scatter_reduce", "scatter_reduce", "src")
SCATTER_REDUCE = _decl("scatter_reduce", scatter_reduce_p, "ScatterReduceBackward0", saves_out=True)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduce `src` into a copy of `input` at `index` along `dim` with "sum", "prod", "mean",
    "amax" or "amin" (ties share the gradient, as in torch).

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(2).scatter_reduce(0, torch.tensor([0, 1, 0]), torch.ones(3), "sum")
    tensor([2., 1.])
    """
    if reduce not in _SCATTER_UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    idx = index._data
    if idx.dtype != np.int64:
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    dim = _dim(dim, builtins.max(input._data.ndim, 1))
    if src._dtype is not input._dtype:
        raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype")
    return apply(SCATTER_REDUCE, (input, src), {"dim": dim, "index": idx, "reduce": reduce,
                                                "include_self": bool(include_self)})


def _scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
    dim = _dim(dim, builtins.max(self._data.ndim, 1))
    return inplace(SCATTER_REDUCE, self, (src,), {"dim": dim, "index": index._data,
                                                  "reduce": reduce,
                                                  "include_self": bool(include_self)})


def nanmedian(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median ignoring NaNs (NaN only when all are NaN).

    >>> import funcgrad.mutable as torch
    >>> torch.nanmedian(torch.tensor([1.0, float("nan"), 3.0, 2.0]))
    tensor(2.)
    """
    if dim is None:
        return _reduce_all(NANMEDIAN_ALL, "nanmedian", input)

    def pick(a, d):
        idx = np.argsort(a, axis=d, kind="stable")  # NaNs sort last
        k = np.sum(~np.isnan(a), axis=d, keepdims=True)
        return np.take_along_axis(idx, np.maximum(k - 1, 0) // 2, axis=d)
    return _reduced_pick("Nanmedian", return_types.nanmedian, input, dim, keepdim, pick)


def signbit(input: Tensor) -> Tensor:
    """Whether the sign bit is set (negative numbers and -0.0), as a bool tensor.

    >>> import funcgrad.mutable as torch
    >>> torch.signbit(torch.tensor([-1.0, 0.0, -0.0]))
    tensor([ True, False,  True])
    """
    return Tensor._wrap(np.signbit(input._data))


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether every element (along `dim`) is true, as a bool tensor.

    >>> import funcgrad.mutable as torch
    >>> torch.all(torch.tensor([1.0, 0.0]))
    tensor(False)
    """
    return input.all(dim, keepdim) if dim is not None else input.all()


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether some element (along `dim`) is true, as a bool tensor.

    >>> import funcgrad.mutable as torch
    >>> torch.any(torch.tensor([1.0, 0.0]))
    tensor(True)
    """
    return input.any(dim, keepdim) if dim is not None else input.any()


def _norm_method(self: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    return norm(self, p, dim, keepdim, dtype)


_METHODS = {
    "softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp, "norm": _norm_method,
    "var": var, "std": std, "cumsum": cumsum, "sort": sort, "argsort": argsort, "topk": topk,
    "median": median, "kthvalue": kthvalue, "gather": gather, "index_select": index_select,
    "bmm": bmm, "outer": outer, "dot": dot, "addcmul": addcmul, "addcdiv": addcdiv,
    "addcmul_": _addcmul_, "addcdiv_": _addcdiv_, "normal_": _normal_, "uniform_": _uniform_,
    "repeat": repeat, "masked_fill": masked_fill, "masked_fill_": _masked_fill_, "trace": trace,
    "atan2": atan2, "arctan2": atan2, "view_as": view_as, "new_zeros": _new_filled(0),
    "new_ones": _new_filled(1), "new_empty": _new_filled(0), "new_full": _new_filled(None),
    "split_with_sizes": split_with_sizes, "isin": isin, "bernoulli": bernoulli,
    "bernoulli_": _bernoulli_, "conj": conj, "angle": angle, "sign": sign, "sgn": sgn, "erf": erf,
    "new": _new, "type": _type, "type_as": _type_as, "count_nonzero": count_nonzero,
    "unique": unique, "unique_consecutive": unique_consecutive,
    "scatter_reduce": scatter_reduce, "scatter_reduce_": _scatter_reduce_, "nanmedian": nanmedian,
    "signbit": signbit,
}


def with_aliases(fn):
    """`fn` also taking NumPy's ``axis=``/``keepdims=`` for ``dim=``/``keepdim=``, as torch's
    argument parser does."""
    def aliased(*args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    aliased.__name__ = aliased.__qualname__ = fn.__name__
    aliased.__doc__ = fn.__doc__
    aliased.__wrapped__ = fn
    return aliased


_METHODS.update({"max": max, "min": min, "sum": F.sum, "mean": F.mean, "prod": F.prod,
                 "argmax": F.argmax, "argmin": F.argmin})
_ALIASED = {name: with_aliases(fn) for name, fn in _METHODS.items()
            if name in ("softmax", "log_softmax", "logsumexp", "norm", "var", "std", "cumsum",
                        "sort", "argsort", "topk", "median", "kthvalue", "gather", "index_select",
                        "max", "min", "sum", "mean", "prod", "argmax", "argmin")}
_METHODS.update(_ALIASED)
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, F.as_method(_fn))
