"""funcgrad.mutable: PyTorch's mutable, in-place autograd model on funcgrad's primitives.

``import funcgrad.mutable as torch`` behaves, prints and fails as PyTorch 2.x does for the
covered API (tensors, views, in-place ops, hooks, custom Functions, autograd.grad).

Design.
* A `Tensor` holds a NumPy array. Views (basic indexing, view/reshape of contiguous data,
  t, transpose, permute, (un)squeeze, expand, narrow, diagonal, select, split/chunk/unbind)
  are NumPy views of the same buffer and share one version counter with their base; each
  remembers the chain of view ops that made it, so an in-place write into a view can
  rewrite the base's history (``CopySlices``) and the view's grad_fn can be regenerated
  (``AsStridedBackward0``), as PyTorch does.
* Layers, imported one way: graph nodes and versions (`_graph`), the `Tensor`
  (`_tensor`), the op table and views (`_ops`), the backward engine (`_autograd`); the
  torch functions and methods build on them (tests/mutable/test_layering.py holds it).
* Every differentiable op is one declaration in `_ops` (torch name, primitive from
  funcgrad/numpy/_primitives.py, grad_fn class name). Forward is the primitive's ``impl``,
  backward its ``vjps``: nothing is derived twice. What a node saves (and version-checks)
  is what the rules read, from the primitive's one record ``Primitive.reads`` (`_saves`);
  values read only for their shape are kept as shape/dtype stand-ins, so a node that saved
  nothing can run again after its graph was freed, exactly as in PyTorch.
* Higher order (``create_graph=True``): the backward engine evaluates the same rules on
  `GraphTracer` values of a `GraphTrace` (a `funcgrad._src.core.Trace` subclass); each
  primitive a rule applies is recorded as a grad_fn node of the mutable graph.
* The engine is iterative (a ready queue ordered latest-created first, as PyTorch's; a
  node that alone becomes ready runs next without the queue) and frees saved values as it
  goes unless ``retain_graph=True``.
* Hot paths (`_ops.apply1`: a float tensor with a Python number, `_ops.apply2`: two tensors
  of one float dtype, `_ops.inplace1`, views) record the same nodes as the general `apply`,
  spelled out without its generality; tests/mutable/test_fast_paths.py holds them equal.
* Beyond PyTorch: version errors name the op that saved the tensor and the op that
  modified it, with file:line; `mutation_policy` chooses "torch", "strict" or
  "copy-on-write" per block.

>>> import funcgrad.mutable as torch
>>> a = torch.tensor(2.0, requires_grad=True)
>>> b = a.exp()
>>> b
tensor(7.3891, grad_fn=<ExpBackward0>)
>>> b.backward(); a.grad
tensor(7.3891)
"""
from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any, Callable

import math as _math

from . import _device, _dtypes, _format
from . import _methods  # noqa: F401  (attaches Tensor's methods)
from . import _C, accelerator, autograd, backends, cuda, nn, optim, utils
from .autograd import _functions as _autograd_functions
from ._device import device
from ._autograd import STATE
from ._dtypes import (bool_ as bool, complex64, complex128, dtype, float16, float32,  # noqa: A004
                      float64, int8, int16, int32, int64, uint8)
from ._dtypes import EXTRA as _EXTRA_DTYPES
globals().update({_d.name: _d for _d in _EXTRA_DTYPES})  # torch.bfloat16 (with ml_dtypes)
from ._functions import (abs, add, allclose, arange, as_strided, as_tensor, cat, chunk, clamp,
                         clip, clone, concat, contiguous, cos, detach, diagonal, div, empty,
                         empty_like, eq, equal, exp, expand, expm1, eye, flatten, floor_divide,
                         from_numpy, full, full_like, ge, gt, is_inference, is_tensor, isclose, le,
                         linspace,
                         log, log1p, lt, manual_seed, matmul, maximum, minimum, mm,
                         mul, narrow, ne, neg, numel, ones, ones_like, permute, positive, pow,
                         rand, rand_like, randn, randn_like, reciprocal, relu, remainder,
                         reshape, select, sigmoid, sin, split, sqrt, square, squeeze, stack, sub,
                         t, tan, tanh, tensor, transpose, unbind, unsafe_chunk, unsafe_split,
                         unsafe_split_with_sizes, unsqueeze, where, zeros, zeros_like)
from ._grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                         no_grad, set_grad_enabled)
from ._policy import MutationPolicyWarning, mutation_policy
from ._tensor_ops import (_ALIASED, addcdiv, addcmul, atan2, bmm, dot, einsum, gather,
                          index_select, isin, layout, masked_fill, outer, randint, randperm,
                          strided, trace)
from . import linalg, return_types
globals().update(linalg.TOP_LEVEL)  # torch.det, torch.inverse, torch.slogdet, torch.logdet
from ._tensor import Size, Tensor
from ._methods import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, logical_and,  # noqa: E402
                       logical_not, logical_or, logical_xor)
from ._functions import complex_from_parts as complex  # noqa: A004, E402
from .serialization import load, save
from .nn import _ops as _nn_ops  # noqa: E402
from .nn._ops import cdist  # noqa: E402
from .nn.functional import pdist, rrelu, rrelu_  # noqa: E402

argmax, argmin, argsort, cumsum, kthvalue, log_softmax, logsumexp, max, mean, median, min, norm, \
    prod, softmax, sort, std, sum, topk, var = (  # noqa: A001
        _ALIASED[n] for n in ("argmax", "argmin", "argsort", "cumsum", "kthvalue", "log_softmax",
                              "logsumexp", "max", "mean", "median", "min", "norm", "prod",
                              "softmax", "sort", "std", "sum", "topk", "var"))
from ._tensor_ops import split_with_sizes, std_mean, var_mean  # noqa: E402
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
cfloat = complex64
cdouble = complex128
from ._tensor_ops import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, Generator,  # noqa: E402
                          HalfTensor, IntTensor, LongTensor, ShortTensor, all, angle, any,
                          bernoulli, conj,
                          bucketize, count_nonzero, default_generator, erf, imag, real,
                          nanmedian, scatter_reduce, searchsorted, sgn, sign, signbit, unique,
                          unique_consecutive, view_as_complex, view_as_real)


def _inplace_function(name: str) -> Callable:
    def inplace(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return getattr(input, name)(*args, **kwargs)
    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"``torch.{name}(t, ...)`` is ``t.{name}(...)``: in place, as the method."
    return inplace


# torch offers a Tensor's in-place methods as functions too (torch.sin_(x) is x.sin_())
(abs_, clamp_, clip_, cos_, exp_, expm1_, fill_, log_, log1p_, neg_, reciprocal_, relu_,
 sigmoid_, sin_, sqrt_, square_, tan_, tanh_, zero_) = (_inplace_function(n) for n in (
    "abs_", "clamp_", "clip_", "cos_", "exp_", "expm1_", "fill_", "log_", "log1p_", "neg_",
    "reciprocal_", "relu_", "sigmoid_", "sin_", "sqrt_", "square_", "tan_", "tanh_", "zero_"))
from ._pointwise import FUNCTIONS as _POINTWISE, INPLACE_FUNCTIONS as _POINTWISE_INPLACE  # noqa: E402
globals().update(_POINTWISE)  # floor, asin, hypot, lerp, scatter... (one table, _pointwise)
globals().update({_name: _inplace_function(_name) for _name in _POINTWISE_INPLACE})
from ._foreach import FUNCTIONS as _FOREACH  # noqa: E402
globals().update(_FOREACH)  # _foreach_exp, _foreach_add_... (each op tensor by tensor)
__version__ = "2.13.0+funcgrad"
inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e


_WARN_ALWAYS = [False]  # a list so the two functions share one mutable flag


def set_warn_always(b: builtins_bool) -> None:
    """Whether warnings PyTorch gives once per process are given every time (torch's flag;
    ``is_warn_always_enabled`` reads it back).

    >>> import funcgrad.mutable as torch
    >>> torch.set_warn_always(True); torch.is_warn_always_enabled()
    True
    >>> torch.set_warn_always(False)
    """
    _WARN_ALWAYS[0] = builtins_bool(b)


def is_warn_always_enabled() -> builtins_bool:
    """Whether `set_warn_always` is on (off by default).

    >>> import funcgrad.mutable as torch
    >>> torch.is_warn_always_enabled()
    False
    """
    return _WARN_ALWAYS[0]


def is_anomaly_enabled() -> builtins_bool:
    """Whether anomaly detection is on.

    >>> import funcgrad.mutable as torch
    >>> torch.is_anomaly_enabled()
    False
    """
    return STATE.anomaly


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Like ``torch.set_printoptions`` (precision, threshold, edgeitems, linewidth).

    >>> import funcgrad.mutable as torch
    >>> torch.set_printoptions(precision=2)
    >>> torch.tensor([1.2345])
    tensor([1.23])
    >>> torch.set_printoptions(precision=4)
    """
    for name, value in (("PRECISION", precision), ("THRESHOLD", threshold),
                        ("EDGEITEMS", edgeitems), ("LINEWIDTH", linewidth)):
        if value is not None:
            setattr(_format, name, value)


def set_default_dtype(d: dtype) -> None:
    """The dtype of Python floats made into tensors (float32 or float64, as in PyTorch).

    >>> import funcgrad.mutable as torch
    >>> torch.set_default_dtype(torch.float64); torch.tensor(1.5).dtype
    torch.float64
    >>> torch.set_default_dtype(torch.float32)
    """
    d = _dtypes.to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtypes.DEFAULT_FLOAT = d


def set_default_device(device) -> None:
    """Only the CPU is available: ``"cpu"`` (or None) is accepted, others are refused.

    >>> import funcgrad.mutable as torch
    >>> torch.set_default_device("cpu"); torch.get_default_device()
    device(type='cpu')
    """
    _device.check_device(device)


def get_default_device() -> "device":
    """The device new tensors go to: the CPU.

    >>> import funcgrad.mutable as torch
    >>> torch.get_default_device()
    device(type='cpu')
    """
    return _device.cpu


def get_default_dtype() -> dtype:
    """The default float dtype (float32).

    >>> import funcgrad.mutable as torch
    >>> torch.get_default_dtype()
    torch.float32
    """
    return _dtypes.DEFAULT_FLOAT


builtins_bool = type(True)


def threshold(input: Tensor, threshold, value) -> Tensor:
    """``torch.threshold``: `input` where it exceeds `threshold`, else `value`
    (``ThresholdBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.threshold(torch.tensor([-1.0, 2.0]), 0.0, 5.0)
    tensor([5., 2.])
    """
    return nn.functional.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold, value) -> Tensor:
    """``torch.threshold_``: `threshold` in place (``ThresholdBackward1``)."""
    return nn.functional.threshold_(input, threshold, value)


def _foreach_maximum(self, other) -> tuple:
    """``torch._foreach_maximum`` of a list of tensors and a number or a list of numbers."""
    return _nn_ops.foreach_extreme(self, other, True)


def _foreach_minimum(self, other) -> tuple:
    """``torch._foreach_minimum`` of a list of tensors and a number or a list of numbers."""
    return _nn_ops.foreach_extreme(self, other, False)


def _tensor_resize(self: Tensor, *sizes) -> Tensor:
    """``Tensor.resize`` (deprecated in torch, which warns): a copy reshaped to `sizes` through
    ``autograd._functions.Resize`` (same element count), so the gradient is reshaped back."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _autograd_functions.Resize.apply(self, sizes)


def _tensor_resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """``Tensor.resize_as`` (deprecated in torch, which warns): `resize` to `tensor`'s size."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _autograd_functions.Resize.apply(self, tuple(tensor.size()))


Tensor.resize = _tensor_resize
Tensor.resize_as = _tensor_resize_as


def promote_types(a: dtype, b: dtype) -> dtype:
    """``torch.promote_types``: the smallest dtype holding both.

    >>> import funcgrad.mutable as torch
    >>> torch.promote_types(torch.int64, torch.float32)
    torch.float32
    """
    return _dtypes.promote(a, b)


def result_type(a, b) -> dtype:
    """The dtype of an op on `a` and `b` (PyTorch's promotion).

    >>> import funcgrad.mutable as torch
    >>> torch.result_type(torch.tensor([1, 2]), 1.0)
    torch.float32
    """
    return _dtypes.result_type_of((a, b))


__all__ = [name for name in dir() if not name.startswith("_")
           and name not in ("Any", "Callable", "annotations", "builtins_bool", "contextlib", "functools")]
