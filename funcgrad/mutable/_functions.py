"""torch functions and Tensor methods, each a thin call into the op table (`_ops`)."""
from __future__ import annotations

import builtins
import functools
import math
import numbers
import warnings
from typing import Any, Sequence

import numpy as np

from .._src.declare import linear, primitive
from ..numpy import _helpers as H
from ..numpy import _primitives as NP
from . import _dtypes as D
from . import _ops as O
from . import _prims as P
from . import _random
from ._graph import STATE, Node, Version, freed_error, node_class
from ._device import check_device, device
from ._ops import apply, apply1, apply2, view_op
from ._tensor import _C_NAMES, Size, Tensor, _scalar_name, is_traced

__all__ = ["tensor"]


# --- creation -------------------------------------------------------------------------------
# --- PyTorch's extra saved attributes of a node (``_saved_weight``, ``_saved_output_size``) -----
class ExtraNode(O.OpNode):
    """An op node that also answers some of PyTorch's ``_saved_*`` attributes that are not a
    parameter of its primitive: values the recording function hands over (`stash`)."""

    __slots__ = ("_extra",)


def _read_extra(node: ExtraNode, name: str, tensor: bool):
    try:
        extra = node._extra
    except AttributeError:
        extra = None
    if extra is None or name not in extra:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    if tensor and node._freed:  # a saved tensor goes with the graph, as PyTorch's
        raise freed_error()
    return extra[name]


def extra_node(*names: str, tensors: Sequence[str] = ()) -> type:
    """A base for an op's node class answering the attributes `names` (those in `tensors`
    are saved tensors: unreadable once the graph is freed)."""
    ns: dict = {"__slots__": ()}
    for name in names:
        ns[name] = property(functools.partial(_read_extra, name=name, tensor=name in tensors))
    return type("ExtraNode_" + "_".join(n.replace("_saved_", "") for n in names),
                (ExtraNode,), ns)


def stash(out, **values) -> None:
    """Give the node that made `out` (when one was recorded) its extra attributes."""
    node = out._grad_node if isinstance(out, Tensor) else None
    if isinstance(node, ExtraNode):
        node._extra = values


def _infer(data):
    """NumPy array with PyTorch's default dtypes (Python floats -> float32)."""
    if isinstance(data, Tensor):
        return data._data.copy()
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat(data)):
        data = _tolist(data)
    if isinstance(data, np.generic):
        return np.array(data)  # a NumPy scalar keeps its own dtype, as in PyTorch
    if isinstance(data, (list, tuple)):
        _check_ragged(data)
        if any(isinstance(leaf, np.generic) for leaf in _flat(data)):
            return np.array(data, dtype=_sequence_dtype(data).np)
    arr = np.array(data)
    if arr.dtype == np.float64 and not isinstance(data, np.ndarray):
        arr = arr.astype(D.DEFAULT_FLOAT.np)
    elif arr.dtype.kind in "iu" and not isinstance(data, np.ndarray):
        arr = arr.astype(np.int64)
    elif arr.dtype == np.complex128 and not isinstance(data, np.ndarray):
        arr = arr.astype(np.complex64)
    elif arr.dtype == object:
        raise TypeError(f"could not infer a dtype from {type(data).__name__}")
    return arr


def _sequence_dtype(data) -> D.dtype:
    """PyTorch's dtype for a nested sequence holding NumPy scalars: NumPy scalars count with
    their own dtype, Python numbers with the default ones, all promoted together."""
    found = None
    for leaf in _flat(data):
        if isinstance(leaf, np.generic):
            dt = D.from_numpy_dtype(leaf.dtype)
        elif isinstance(leaf, bool):
            dt = D.bool_
        elif isinstance(leaf, int):
            dt = D.int64
        elif isinstance(leaf, complex):
            dt = D.complex64
        else:
            dt = D.DEFAULT_FLOAT
        found = dt if found is None else D.promote(found, dt)
    return found


def _check_ragged(data) -> None:
    """PyTorch's errors for nested lists of uneven lengths or of strings."""
    for leaf in _flat(data):
        if isinstance(leaf, str):
            raise TypeError("new(): invalid data type 'str'")
    level = [data]
    dim = 0
    while level:
        lengths = {len(x) if isinstance(x, (list, tuple)) else None for x in level}
        if len(lengths) > 1:
            first = level[0]
            expected = len(first) if isinstance(first, (list, tuple)) else None
            for x in level:
                got = len(x) if isinstance(x, (list, tuple)) else None
                if got != expected:
                    if got is None:
                        raise TypeError("not a sequence")
                    if expected is None or got is None:
                        raise ValueError(f"expected sequence of length {expected} at dim {dim} "
                                         f"(got {got})")
                    raise ValueError(f"expected sequence of length {expected} at dim {dim} "
                                     f"(got {got})")
        if lengths == {None}:
            return
        level = [y for x in level if isinstance(x, (list, tuple)) for y in x]
        dim += 1


def _flat(data):
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(d)
        else:
            yield d


def _tolist(data):
    if isinstance(data, Tensor):
        return data.item() if data._data.ndim == 0 else data._data.tolist()
    if isinstance(data, (list, tuple)):
        return [_tolist(d) for d in data]
    return data


def tensor(data: Any, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (floats default to float32).

    >>> import funcgrad.mutable as torch
    >>> torch.tensor([[1, 2]]), torch.tensor(2.0, requires_grad=True)
    (tensor([[1, 2]]), tensor(2., requires_grad=True))
    """
    check_device(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    if dtype is not None and not isinstance(data, Tensor):
        if isinstance(data, (list, tuple)):
            if any(isinstance(d, Tensor) for d in _flat(data)):
                data = _tolist(data)
            _check_ragged(data)
        arr = np.array(data, dtype=D.to_dtype(dtype).np)  # no detour through float32
    else:
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        arr = _infer(data)
        if dtype is not None:
            arr = arr.astype(D.to_dtype(dtype).np)
    t = Tensor._wrap(np.array(arr, copy=True))
    if requires_grad:
        _require_grad(t)
    return t


def _require_grad(t: Tensor) -> Tensor:
    if not (t._dtype.is_floating_point or t._dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t._rg = True
    return t


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """`data` as a tensor, without a copy when it already is one of that dtype.

    >>> import funcgrad.mutable as torch
    >>> torch.as_tensor([1, 2], dtype=torch.float64)
    tensor([1., 2.], dtype=torch.float64)
    """
    check_device(device)
    if isinstance(data, Tensor) and (dtype is None or D.to_dtype(dtype) is data._dtype):
        return data
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing `array`'s memory.

    >>> import funcgrad.mutable as torch
    >>> torch.from_numpy(__import__('numpy').array([1.0, 2.0]))
    tensor([1., 2.], dtype=torch.float64)
    """
    return Tensor._wrap(array)


def _shape_arg(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        return tuple(size[0])
    return tuple(map(int, size))


def _filled(fill, size, dtype, requires_grad, default=None, name="zeros") -> Tensor:
    dt = D.to_dtype(dtype) if dtype is not None else (default or D.DEFAULT_FLOAT)
    if any(int(n) < 0 for n in _shape_arg(size)):
        raise RuntimeError(f"{name}: Dimension size must be non-negative.")
    t = Tensor._wrap(np.full(_shape_arg(size), fill, dtype=dt.np))
    return _require_grad(t) if requires_grad else t


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (float32 unless `dtype`).

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(2)
    tensor([0., 0.])
    """
    check_device(device)
    return _filled(0, size, dtype, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (float32 unless `dtype`).

    >>> import funcgrad.mutable as torch
    >>> torch.ones(2, dtype=torch.int32)
    tensor([1, 1], dtype=torch.int32)
    """
    check_device(device)
    return _filled(1, size, dtype, requires_grad, name="ones")


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of `size` filled with `fill_value`.

    >>> import funcgrad.mutable as torch
    >>> torch.full((2,), 7)
    tensor([7, 7])
    """
    check_device(device)
    default = D.bool_ if isinstance(fill_value, bool) else (
        D.int64 if isinstance(fill_value, int) else D.DEFAULT_FLOAT)
    return _filled(fill_value, (tuple(size),), dtype, requires_grad, default)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (here: zeros).

    >>> import funcgrad.mutable as torch
    >>> torch.empty(2).shape
    torch.Size([2])
    """
    check_device(device)
    return _filled(0, size, dtype, requires_grad)


def _like(fill, x, dtype, requires_grad):
    dt = D.to_dtype(dtype) if dtype is not None else x._dtype
    t = Tensor._wrap(np.full(x._data.shape, fill, dtype=dt.np))
    if requires_grad:
        _require_grad(t)
    return t


def zeros_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Zeros shaped (and typed) as `input`.

    >>> import funcgrad.mutable as torch
    >>> torch.zeros_like(torch.tensor([1, 2]))
    tensor([0, 0])
    """
    check_device(device)
    return _like(0, input, dtype, requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Ones shaped (and typed) as `input`.

    >>> import funcgrad.mutable as torch
    >>> torch.ones_like(torch.tensor([1.5, 2.0]))
    tensor([1., 1.])
    """
    check_device(device)
    return _like(1, input, dtype, requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Like `empty`, shaped as `input`.

    >>> import funcgrad.mutable as torch
    >>> torch.empty_like(torch.ones(2, 2)).shape
    torch.Size([2, 2])
    """
    check_device(device)
    return _like(0, input, dtype, requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`fill_value` shaped as `input`.

    >>> import funcgrad.mutable as torch
    >>> torch.full_like(torch.zeros(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    check_device(device)
    return _like(fill_value, input, dtype, requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """Uniform values shaped as `input`.

    >>> import funcgrad.mutable as torch
    >>> torch.rand_like(torch.zeros(2, 3)).shape
    torch.Size([2, 3])
    """
    check_device(device)
    return rand(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad,
                generator=generator)


def randn_like(input, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """Normal values shaped as `input`.

    >>> import funcgrad.mutable as torch
    >>> torch.randn_like(torch.zeros(2, 3)).shape
    torch.Size([2, 3])
    """
    check_device(device)
    return randn(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad,
                 generator=generator)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``torch.arange``: int64 for integer arguments, float32 otherwise.

    >>> import funcgrad.mutable as torch
    >>> torch.arange(3)
    tensor([0, 1, 2])
    >>> torch.arange(0, 1, 0.25)
    tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    check_device(device)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt = D.to_dtype(dtype) if dtype is not None else (D.int64 if ints else D.DEFAULT_FLOAT)
    if ints:
        data = np.arange(start, end, step).astype(dt.np)
    else:
        n = int(np.ceil((end - start) / step))
        data = (start + step * np.arange(n, dtype=np.float64)).astype(dt.np)
    t = Tensor._wrap(data)
    if requires_grad:
        _require_grad(t)
    return t


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end`.

    >>> import funcgrad.mutable as torch
    >>> torch.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    check_device(device)
    dt = D.to_dtype(dtype) if dtype is not None else D.DEFAULT_FLOAT
    if dt.is_floating_point and steps > 1:
        data = _linspace_as_torch(start, end, steps, dt.np)
    else:
        data = np.linspace(start, end, steps).astype(dt.np)
    t = Tensor._wrap(data)
    return _require_grad(t) if requires_grad else t


def _linspace_as_torch(start, end, steps: int, np_dtype) -> np.ndarray:
    """PyTorch's CPU linspace, bit for bit: the step computed in the dtype, the first half
    counted up from `start` and the second down from `end`, each value one fused
    multiply-add (a product exact in a wider type, then one rounding)."""
    kind = np.dtype(np_dtype).type
    s, e = kind(start), kind(end)
    step = kind(kind(e - s) / kind(steps - 1))
    i = np.arange(steps, dtype=np.float64)
    if np.dtype(np_dtype).itemsize < 8:  # the product is exact in float64: one rounding
        low = (np.float64(s) + np.float64(step) * i).astype(np_dtype)
        high = (np.float64(e) - np.float64(step) * (steps - 1 - i)).astype(np_dtype)
    else:
        low = _random.fma(step, i, s)
        high = _random.fma(-step, steps - 1 - i, e)
    return np.where(i < steps // 2, low, high)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Identity matrix.

    >>> import funcgrad.mutable as torch
    >>> torch.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    check_device(device)
    dt = D.to_dtype(dtype) if dtype is not None else D.DEFAULT_FLOAT
    t = Tensor._wrap(np.eye(n, m, dtype=dt.np))
    return _require_grad(t) if requires_grad else t


def manual_seed(seed: int):
    """Seed the random generator; `rand`/`randn` then give PyTorch's CPU values.

    >>> import funcgrad.mutable as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.rand(2)
    tensor([0.4963, 0.7682])
    """
    return _random.manual_seed(seed)


def rand(*size, dtype=None, device=None, requires_grad: bool = False, generator=None) -> Tensor:
    """Uniform on [0, 1), the same stream as PyTorch's CPU generator.

    >>> import funcgrad.mutable as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.rand(3)
    tensor([0.4963, 0.7682, 0.0885])
    """
    check_device(device)
    dt = D.to_dtype(dtype) if dtype is not None else D.DEFAULT_FLOAT
    t = Tensor._wrap(_random.uniform(_shape_arg(size), dt.np, generator=generator))
    return _require_grad(t) if requires_grad else t


def randn(*size, dtype=None, device=None, requires_grad: bool = False, generator=None) -> Tensor:
    """Standard normal, the same stream as PyTorch's CPU generator.

    >>> import funcgrad.mutable as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.randn(3)
    tensor([ 1.5410, -0.2934, -2.1788])
    """
    check_device(device)
    dt = D.to_dtype(dtype) if dtype is not None else D.DEFAULT_FLOAT
    shape = _shape_arg(size)
    if dt.is_complex:  # real and imaginary parts interleaved, each of variance 1/2 (PyTorch's)
        part = np.float32 if dt.np == np.complex64 else np.float64
        pairs = _random.normal(shape + (2,), part, std=1 / math.sqrt(2), generator=generator)
        t = Tensor._wrap(np.ascontiguousarray(pairs).view(dt.np).reshape(shape))
    else:
        t = Tensor._wrap(_random.normal(shape, dt.np, generator=generator))
    return _require_grad(t) if requires_grad else t


# --- out= ---------------------------------------------------------------------------------------
def _tensors_in(args) -> list:
    found = []
    for a in args:
        if isinstance(a, Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(_tensors_in(a))
    return found


def write_out(name: str, result: Tensor, out: Tensor, inputs) -> Tensor:
    """Store `result` into the caller's `out` tensor as torch's ``out=`` variants do: refused
    where autograd would have to see it, resized (with torch's warning) when its shape differs,
    never cast to a lower dtype category."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if any(type(t._data) is O.DualArray for t in (out, *inputs)):
        raise RuntimeError(f"Trying to use forward AD with {name}_out that does not support it "
                           "because it is an out= function")
    if STATE.grad_enabled and (out.requires_grad or any(t.requires_grad for t in inputs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    rdt, odt = result._dtype, out._dtype
    if rdt.category > odt.category or (rdt.category == 2 and odt.category < 2):
        raise RuntimeError(f"result type {O._scalar_name(rdt)} can't be cast to the desired "
                           f"output type {O._scalar_name(odt)}")
    shape = tuple(result._data.shape)
    if tuple(out._data.shape) != shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(shape)
    prev = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        out.copy_(result)
    finally:
        STATE.grad_enabled = prev
    return out


def out_variant(fn):
    """`fn` also taking torch's keyword ``out=`` (see `write_out`)."""
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        if out is None:
            return result
        return write_out(fn.__name__, result, out, _tensors_in(args) + _tensors_in(
            kwargs.values()))
    return with_out


# the wrapper's code: a call that failed to bind inside it failed at the caller's call
OUT_WRAPPER_CODE = out_variant(lambda: None).__code__


def as_method(fn):
    """A torch function as a Tensor method: without the ``out=`` wrapper (methods take no
    ``out=``; one Python frame less on the hot path)."""
    if getattr(fn, "__code__", None) is OUT_WRAPPER_CODE:
        return fn.__wrapped__
    return fn


# --- arithmetic --------------------------------------------------------------------------------
def _t(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return tensor(x)


@out_variant
def add(input, other, *, alpha=1) -> Tensor:
    """Elementwise sum, PyTorch's type promotion; ``alpha`` scales `other`.

    >>> import funcgrad.mutable as torch
    >>> torch.add(torch.tensor([1.0, 2.0]), 1, alpha=2)
    tensor([3., 4.])
    """
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    if not isinstance(input, Tensor):
        input, other = other, input
    if type(other) is float:
        return apply1(O.ADD, input, other)
    return apply2(O.ADD, input, other)


@out_variant
def sub(input, other, *, alpha=1) -> Tensor:
    """Elementwise difference; ``alpha`` scales `other`.

    >>> import funcgrad.mutable as torch
    >>> torch.sub(torch.tensor([1.0, 2.0]), torch.tensor([0.5, 0.5]))
    tensor([0.5000, 1.5000])
    """
    check_sub(input, other)
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    if not isinstance(input, Tensor):
        return apply(O.RSUB, (input, other))
    return apply2(O.SUB, input, other)


def _is_bool(x) -> bool:
    return type(x) is bool or (isinstance(x, Tensor) and x._dtype is D.bool_)


def check_sub(input, other) -> None:
    """PyTorch refuses subtraction with bools (a Python bool counts as a bool tensor)."""
    if _is_bool(input) or _is_bool(other):
        if _is_bool(input) and _is_bool(other):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@out_variant
def mul(input, other) -> Tensor:
    """Elementwise product (grad_fn ``MulBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.mul(torch.tensor([1.0, 2.0], requires_grad=True), 3)
    tensor([3., 6.], grad_fn=<MulBackward0>)
    """
    if not isinstance(input, Tensor):
        input, other = other, input
    if type(other) is float:
        return apply1(O.MUL, input, other)
    return apply2(O.MUL, input, other)


def _div_mode_impl(x, y, rounding_mode):
    if rounding_mode is None:
        return np.true_divide(x, y)
    if rounding_mode == "floor":
        return np.floor_divide(x, y)  # Python's floor division, exact for integers
    q = np.true_divide(x, y)
    if np.result_type(x, y).kind in "iu":
        return (np.trunc(q)).astype(np.result_type(x, y))
    return np.trunc(q)


def _div_mode_vjp_x(ct, out, x, y, rounding_mode):
    if rounding_mode is None:
        return ct / y
    return NP.zeros_like(ct)  # a rounded quotient is piecewise constant


def _div_mode_vjp_y(ct, out, x, y, rounding_mode):
    if rounding_mode is None:
        return -ct * x / (y * y)
    return NP.zeros_like(ct)


# torch.div with rounding_mode given (None included): one node, DivBackward2, that keeps the
# mode (``grad_fn._saved_rounding_mode``)
div_mode_p = primitive("div_rounding", _div_mode_impl, nargs=2, params=("rounding_mode",),
                       vjps=(_div_mode_vjp_x, _div_mode_vjp_y))
DIV_TRUE = O._decl("div_mode_true", div_mode_p, "DivBackward2", result="float",
                   scalar_edge=True)
DIV_ROUNDED = O._decl("div_mode_rounded", div_mode_p, "DivBackward2", scalar_edge=True)
_NO_MODE = object()  # rounding_mode not given (DivBackward0), unlike rounding_mode=None


def _div_mode_op(rounding_mode) -> O.Op:
    if rounding_mode is None:
        return DIV_TRUE
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    return DIV_ROUNDED


@out_variant
def div(input, other, *, rounding_mode=_NO_MODE) -> Tensor:
    """True division (integers give float32); ``rounding_mode`` 'floor' or 'trunc'.

    >>> import funcgrad.mutable as torch
    >>> torch.div(torch.tensor([1, 2]), 2)
    tensor([0.5000, 1.0000])
    >>> torch.div(torch.tensor([-3.0, 3.0]), 2, rounding_mode='floor')
    tensor([-2.,  1.])
    """
    if rounding_mode is not _NO_MODE:
        return apply(_div_mode_op(rounding_mode), (_t(input), other),
                     {"rounding_mode": rounding_mode})
    if not isinstance(input, Tensor):
        # PyTorch computes scalar / tensor as reciprocal(tensor) * scalar
        return apply1(O.MUL, apply1(O.RECIPROCAL, other), float(input))
    return apply2(O.DIV, input, other)


@out_variant
def pow(input, exponent) -> Tensor:
    """``input ** exponent``: PowBackward0 (scalar exponent), 1 (tensor), 2 (scalar base).

    >>> import funcgrad.mutable as torch
    >>> torch.pow(torch.tensor([2.0, 3.0], requires_grad=True), 2)
    tensor([4., 9.], grad_fn=<PowBackward0>)
    """
    if not isinstance(input, Tensor):
        return apply(O.RPOW, (input, exponent))
    if isinstance(exponent, Tensor):
        return apply2(O.POW_T, input, exponent)
    return apply1(O.POW, input, exponent)


def _check_divisor(kernel: str, input, other) -> None:
    """PyTorch's errors for integer division by zero and for bool operands."""
    dt = D.result_type_of((input, other))
    if dt is D.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if dt.category == 1:
        divisor = other._data if isinstance(other, Tensor) else other
        if np.any(np.asarray(divisor) == 0):
            raise RuntimeError("ZeroDivisionError")


@out_variant
def floor_divide(input, other) -> Tensor:
    """``input // other``, rounded toward minus infinity. PyTorch has no derivative for it:
    the result requires grad, and backward through it fails.

    >>> import funcgrad.mutable as torch
    >>> torch.floor_divide(torch.tensor([7, -7]), 2)
    tensor([ 3, -4])
    >>> torch.tensor([3.5], requires_grad=True) // 2
    tensor([1.], grad_fn=<NotImplemented>)
    """
    _check_divisor("div_floor_cpu", input, other)
    return apply(O.FLOOR_DIVIDE, (input, other))


@out_variant
def remainder(input, other) -> Tensor:
    """``input % other``, with the sign of `other` (Python's modulo).

    >>> import funcgrad.mutable as torch
    >>> torch.remainder(torch.tensor([-7.0, 7.0], requires_grad=True), 2)
    tensor([1., 1.], grad_fn=<RemainderBackward0>)
    """
    _check_divisor("remainder_cpu", input, other)
    if not isinstance(input, Tensor):
        return apply(O.RREMAINDER, (input, other))
    return apply(O.REMAINDER_T if isinstance(other, Tensor) else O.REMAINDER, (input, other))


def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (an error for bool tensors, as in PyTorch).

    >>> import funcgrad.mutable as torch
    >>> x = torch.tensor([1.0]); torch.positive(x) is x
    True
    """
    if input._dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@out_variant
def neg(input) -> Tensor:
    """``-input``.

    >>> import funcgrad.mutable as torch
    >>> torch.neg(torch.tensor([1.0, -2.0]))
    tensor([-1.,  2.])
    """
    return apply1(O.NEG, input)


def _unary(op):
    def fn(input: Tensor) -> Tensor:
        return apply1(op, input)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"``torch.{op.name}``: grad_fn {op.node_cls.__name__}."
    return out_variant(fn)


exp = _unary(O.EXP)
log = _unary(O.LOG)
sqrt = _unary(O.SQRT)
sin = _unary(O.SIN)
cos = _unary(O.COS)
tan = _unary(O.TAN)
tanh = _unary(O.TANH)
sigmoid = _unary(O.SIGMOID)
_relu = _unary(O.RELU)


def relu(input: Tensor) -> Tensor:
    if input._dtype is D.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _relu(input)
_abs_real = _unary(O.ABS)


@out_variant
def abs(input: Tensor) -> Tensor:
    """``|input|``; complex numbers give their (real) modulus.

    >>> import funcgrad.mutable as torch
    >>> torch.abs(torch.tensor([3 + 4j]))
    tensor([5.])
    """
    if input._dtype.is_complex:
        return apply(O.ABS_COMPLEX, (input,))
    return _abs_real(input)
log1p = _unary(O.LOG1P)
expm1 = _unary(O.EXPM1)
reciprocal = _unary(O.RECIPROCAL)
@out_variant
def square(input: Tensor) -> Tensor:
    """``input ** 2`` (grad_fn ``PowBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.square(torch.tensor([3.0]))
    tensor([9.])
    """
    return pow(input, 2)


@out_variant
def clamp(input, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]``; inside the range (ends included) the slope is 1.

    >>> import funcgrad.mutable as torch
    >>> torch.clamp(torch.tensor([-1.0, 0.5, 2.0]), min=0, max=1)
    tensor([0.0000, 0.5000, 1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    # (torch names the node by its overload: ClampBackward0 when a bound is a tensor)
    op = O.CLAMP_T if isinstance(min, Tensor) or isinstance(max, Tensor) else O.CLAMP
    return apply(op, (input, min, max))


clip = clamp


@out_variant
def maximum(input, other) -> Tensor:
    """Elementwise maximum; ties share the slope.

    >>> import funcgrad.mutable as torch
    >>> torch.maximum(torch.tensor([1.0, 5.0]), torch.tensor([3.0, 2.0]))
    tensor([3., 5.])
    """
    return apply2(O.MAXIMUM, input, other)


@out_variant
def minimum(input, other) -> Tensor:
    """Elementwise minimum; ties share the slope.

    >>> import funcgrad.mutable as torch
    >>> torch.minimum(torch.tensor([1.0, 5.0]), torch.tensor([3.0, 2.0]))
    tensor([1., 2.])
    """
    return apply2(O.MINIMUM, input, other)


@out_variant
def matmul(input, other) -> Tensor:
    """``torch.matmul``, with the grad_fn PyTorch shows for each case (Mm, Mv, Dot...).

    >>> import funcgrad.mutable as torch
    >>> torch.matmul(torch.ones(2, 3, requires_grad=True), torch.ones(3))
    tensor([3., 3.], grad_fn=<MvBackward0>)
    """
    a, b = input._data.ndim, other._data.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    da, db = input._dtype, other._dtype
    if da is not db:
        if a == 1 and b == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{O._scalar_name(da)} and {O._scalar_name(db)}")
        if a == 2 and b == 1:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                               f"{O._scalar_name(db)}, {O._scalar_name(da)}, and {O._scalar_name(db)}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_C_NAMES[da.name]} != {_C_NAMES[db.name]}")
    ka = input._data.shape[-1]
    kb = other._data.shape[0] if b == 1 else other._data.shape[-2]
    if ka != kb:
        if a == 2 and b == 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({input._data.shape[0]}x{ka} and {kb}x{other._data.shape[1]})")
        if a == 1 and b == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{ka}] and src "
                               f"[{kb}] to have the same number of elements, but got {ka} and "
                               f"{kb} elements respectively")
        raise RuntimeError(f"size mismatch, got input ({ka}), mat ({kb}), vec ({kb})"
                           if b == 1 else "shapes cannot be multiplied")
    if a == 1 and b == 2:
        # as PyTorch: unsqueeze, mm, squeeze (so the saved operand is the [1, n] view)
        row = apply(O.MATMUL, (unsqueeze(input, 0), other))
        return apply(_SQUEEZE4, (row,), {"shape": row._data.shape[1:]})  # not a view
    op = _MATMUL_OPS.get((builtins.min(a, 3), builtins.min(b, 3)), _MATMUL_OPS["nd"])
    return apply2(op, input, other)


_SQUEEZE4 = O._decl("squeeze_matmul", NP.reshape, "SqueezeBackward4", result="same")


_MATMUL_OPS = {(2, 2): O.MATMUL,
               (2, 1): O._decl("mv", NP.matmul, "MvBackward0"),
               (1, 1): O._decl("dot", NP.matmul, "DotBackward0"),
               (1, 2): O._decl("vm", NP.matmul, "SqueezeBackward4"),
               "nd": O._decl("bmm", NP.matmul, "UnsafeViewBackward0")}
mm = matmul


def _dims(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(_dim(d, ndim) for d in dim) if ndim else ()
    return _dim(dim, ndim) if ndim else None


@out_variant
def sum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """``torch.sum``; integers and bools sum to int64 as in PyTorch.

    >>> import funcgrad.mutable as torch
    >>> torch.sum(torch.tensor([[1, 2], [3, 4]]), 0)
    tensor([4, 6])
    >>> torch.tensor([True, True]).sum()
    tensor(2)
    """
    x = input if dtype is None else input.to(dtype)
    if x._dtype.category < 2 and dtype is None:
        x = x.to(D.int64)
    if dim is None:
        return apply1(O.SUM, x, params={"axis": None, "keepdims": False})
    return apply1(O.SUM_DIM, x, params={"axis": _dims(dim, x._data.ndim), "keepdims": keepdim})


@out_variant
def mean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """Mean over all elements, or over `dim` (``keepdim`` as in PyTorch).

    >>> import funcgrad.mutable as torch
    >>> torch.mean(torch.tensor([[1.0, 2.0], [3.0, 5.0]]), 1)
    tensor([1.5000, 4.0000])
    """
    x = input if dtype is None else input.to(dtype)
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {O._scalar_name(x._dtype)}")
    if dim is None:
        return apply1(O.MEAN, x, params={"axis": None, "keepdims": False})
    return apply1(O.MEAN_DIM, x, params={"axis": _dims(dim, x._data.ndim), "keepdims": keepdim})


@out_variant
def prod(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """Product over all elements or over `dim`; with `dtype`, the input is converted first
    (the gradient flows back through the conversion, in the input's dtype).

    >>> import funcgrad.mutable as torch
    >>> torch.prod(torch.tensor([2.0, 3.0, 4.0]))
    tensor(24.)
    """
    if dtype is not None:
        input = input.to(dtype)
    # (torch names the node by its overload: ProdBackward1 along a dim)
    return apply(O.PROD if dim is None else O.PROD_DIM, (input,),
                 {"axis": _dims(dim, input._data.ndim), "keepdims": keepdim})


def max(input, dim=None, keepdim=False):
    """Largest element, or ``(values, indices)`` along `dim`; with a tensor, `maximum`.

    >>> import funcgrad.mutable as torch
    >>> torch.max(torch.tensor([1.0, 7.0, 3.0]))
    tensor(7.)
    >>> torch.max(torch.tensor([[1.0, 7.0], [4.0, 2.0]]), 1).indices
    tensor([1, 0])
    """
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    if dim is None:
        return apply(O.MAX, (input,), {"axis": None, "keepdims": False})
    values = apply(O.MAX, (input,), {"axis": dim, "keepdims": keepdim})
    indices = Tensor._wrap(np.argmax(input._data, axis=dim).astype(np.int64))
    if keepdim:
        indices = Tensor._wrap(np.expand_dims(indices._data, dim))
    return _MinMax(values, indices)


def min(input, dim=None, keepdim=False):
    """Smallest element, or ``(values, indices)`` along `dim`.

    >>> import funcgrad.mutable as torch
    >>> torch.min(torch.tensor([4.0, 2.0, 3.0]))
    tensor(2.)
    """
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    if dim is None:
        return apply(O.MIN, (input,), {"axis": None, "keepdims": False})
    values = apply(O.MIN, (input,), {"axis": dim, "keepdims": keepdim})
    indices = Tensor._wrap(np.argmin(input._data, axis=dim).astype(np.int64))
    if keepdim:
        indices = Tensor._wrap(np.expand_dims(indices._data, dim))
    return _MinMax(values, indices)


class _MinMax(tuple):
    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


def argmax(input, dim=None, keepdim=False) -> Tensor:
    """Index of the largest element (int64).

    >>> import funcgrad.mutable as torch
    >>> torch.argmax(torch.tensor([1.0, 7.0, 3.0]))
    tensor(1)
    """
    return Tensor._wrap(np.asarray(np.argmax(input._data, axis=dim, keepdims=keepdim), np.int64))


def argmin(input, dim=None, keepdim=False) -> Tensor:
    """Index of the smallest element (int64).

    >>> import funcgrad.mutable as torch
    >>> torch.argmin(torch.tensor([1.0, 7.0, -3.0]))
    tensor(2)
    """
    return Tensor._wrap(np.asarray(np.argmin(input._data, axis=dim, keepdims=keepdim), np.int64))


@out_variant
def where(condition, input, other) -> Tensor:
    """``input`` where `condition`, else ``other``.

    >>> import funcgrad.mutable as torch
    >>> torch.where(torch.tensor([True, False]), torch.tensor([1.0, 2.0]), torch.tensor([9.0, 9.0]))
    tensor([1., 9.])
    """
    cond = condition._data if isinstance(condition, Tensor) else condition
    dt = D.result_type_of((input, other))
    out = apply(O.WHERE, (cond, input, other))
    return out if out._dtype is dt else out.to(dt)


@out_variant
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along `dim` (grad_fn ``CatBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.cat([torch.ones(1), torch.zeros(2)])
    tensor([1., 0., 0.])
    """
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dt = D.result_type_of(tensors)  # (legacy empty tensors take part in the promotion)
    tensors = [t if t._dtype is dt else t.to(dt) for t in tensors]
    if any(t._data.shape == (0,) for t in tensors):
        shaped = next((t for t in tensors if not _legacy_empty(t)), None)
        if shaped is not None and shaped._data.ndim > 1:
            # PyTorch still accepts a 1-d empty tensor beside tensors of other ranks (and
            # gives it an empty gradient): read it as empty along `dim`, others' shape
            shape = shaped._data.shape
            axis = _dim(dim, len(shape))
            empty = shape[:axis] + (0,) + shape[axis + 1:]
            tensors = [reshape(t, empty) if _legacy_empty(t) else t for t in tensors]
    try:
        return apply(O.CAT, tuple(tensors), {"axis": dim})
    except (RuntimeError, ValueError, IndexError):
        _cat_check(tensors, dim)  # torch's message for what is wrong, if it is the shapes
        raise


def _cat_check(tensors: list, dim: int) -> None:
    """Raise torch's error for tensors that cannot be concatenated along `dim`."""
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    shape = tensors[0]._data.shape
    axis = _dim(dim, len(shape))
    for i, t in enumerate(tensors):
        other = t._data.shape
        if len(other) != len(shape):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(shape)} "
                               f"and {len(other)}")
        for d, (want, got) in enumerate(zip(shape, other)):
            if d != axis and want != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {axis}. "
                                   f"Expected size {want} but got size {got} for tensor number "
                                   f"{i} in the list.")


def _legacy_empty(t: Tensor) -> bool:
    return t._data.shape == (0,)


concat = cat


@out_variant
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stack along a new `dim`.

    >>> import funcgrad.mutable as torch
    >>> torch.stack([torch.ones(2), torch.zeros(2)]).shape
    torch.Size([2, 2])
    """
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t._data.shape)} at entry {i}")
    dt = D.result_type_of(tensors)
    tensors = [t if t._dtype is dt else t.to(dt) for t in tensors]
    return apply(STACK, tuple(tensors), {"axis": _dim(dim, len(shape) + 1)})


def _stack_t(k):
    def transpose_k(ct, out, *xs, axis=0):
        index = (slice(None),) * axis + (k,)  # stack() passes a non-negative axis
        return NP.getitem(ct, template=index)
    return transpose_k


class _StackRules(tuple):
    """Stacking is variadic: its k-th transpose (select k along the new axis) is made on demand."""

    def __getitem__(self, k):
        return _stack_t(k)


stack_p = linear("stack", lambda *xs, axis=0: np.stack(xs, axis=axis), nargs=-1, batch=None)
stack_p.vjps = _StackRules()
STACK = O._decl("stack", stack_p, "StackBackward0", [()] * 64)


# --- memory formats: the order a tensor's elements are laid out in memory -------------------
class memory_format:
    """``torch.memory_format``: contiguous_format (row-major), channels_last (NHWC order for a
    4-d NCHW tensor), channels_last_3d (NDHWC, 5-d) and preserve_format (keep the input's)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return "torch." + self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def _channels_last_order(fmt: memory_format, ndim: int) -> tuple:
    """The dimension order (outermost first) `fmt` lays an `ndim`-d tensor out in."""
    rank = 4 if fmt is channels_last else 5
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use "
                           f"{'channels_last' if rank == 4 else 'channels_last_3d'} format")
    return (0,) + tuple(range(2, ndim)) + (1,)


def _in_layout(data: np.ndarray, fmt: memory_format) -> np.ndarray:
    """A copy of `data` (same shape and values) laid out in memory as `fmt` says."""
    if fmt is preserve_format:
        return data.copy(order="K")
    if fmt is contiguous_format:
        return np.ascontiguousarray(data)
    order = _channels_last_order(fmt, data.ndim)
    return np.ascontiguousarray(data.transpose(order)).transpose(np.argsort(order))


def _has_layout(data: np.ndarray, fmt: memory_format) -> bool:
    """Whether `data` is laid out densely in `fmt`'s order (sizes 1 and 0 ignored, as torch)."""
    if fmt is preserve_format:
        return True
    if fmt is contiguous_format:
        return bool(data.flags.c_contiguous)
    order = _channels_last_order(fmt, data.ndim)
    expected = 1
    for d in reversed(order):
        if data.shape[d] != 1 and data.strides[d] // data.itemsize != expected:
            return False
        expected *= data.shape[d]
    return True


def clone(input, *, memory_format=None) -> Tensor:
    """A copy with its own storage and version counter (grad_fn ``CloneBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.clone(torch.tensor([1.0], requires_grad=True))
    tensor([1.], grad_fn=<CloneBackward0>)
    """
    out = apply(O.CLONE, (input,))
    if not is_traced(out) and (out._data is input._data
                               or np.shares_memory(out._data, input._data)):
        out._data = out._data.copy()
    if memory_format is not None and not is_traced(out):
        out._data = _in_layout(out._data, memory_format)
    return out


def detach(input) -> Tensor:
    """A tensor sharing storage and version counter, without history.

    >>> import funcgrad.mutable as torch
    >>> torch.detach(torch.tensor([1.0], requires_grad=True) * 2)
    tensor([2.])
    """
    if is_traced(input):
        return O.traced_detach(input)
    out = Tensor._wrap(input._data)
    out._vc = input._vc
    return out


# --- comparisons (no gradient) --------------------------------------------------------------------
def _compare(np_fn):
    def fn(input, other):
        a = input._data if isinstance(input, Tensor) else input
        b = other._data if isinstance(other, Tensor) else other
        return Tensor._wrap(np.asarray(np_fn(a, b)))
    return fn


eq, ne, lt, le, gt, ge = (_compare(f) for f in (np.equal, np.not_equal, np.less, np.less_equal,
                                                  np.greater, np.greater_equal))
for _fn, _name, _out in ((eq, "eq", "tensor([False,  True])"), (ne, "ne", "tensor([ True, False])"),
                         (lt, "lt", "tensor([ True, False])"), (le, "le", "tensor([True, True])"),
                         (gt, "gt", "tensor([False, False])"), (ge, "ge", "tensor([False,  True])")):
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__doc__ = (f"Elementwise comparison ``torch.{_name}`` (bool result, no gradient).\n\n"
                   f"    >>> import funcgrad.mutable as torch\n"
                   f"    >>> torch.{_name}(torch.tensor([1, 2]), 2)\n    {_out}\n    ")


def equal(input, other) -> bool:
    """True when shapes and all values are equal.

    >>> import funcgrad.mutable as torch
    >>> torch.equal(torch.ones(2), torch.ones(2))
    True
    """
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True when all values are close (``rtol``, ``atol``).

    >>> import funcgrad.mutable as torch
    >>> torch.allclose(torch.tensor([1.0]), torch.tensor([1.0 + 1e-9]))
    True
    """
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """Elementwise closeness.

    >>> import funcgrad.mutable as torch
    >>> torch.isclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))
    tensor([ True, False])
    """
    return Tensor._wrap(np.isclose(input._data, other._data, rtol=rtol, atol=atol,
                                   equal_nan=equal_nan))


def is_tensor(obj) -> bool:
    """Whether `obj` is a tensor.

    >>> import funcgrad.mutable as torch
    >>> torch.is_tensor(torch.zeros(1)), torch.is_tensor([0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def complex_from_parts(real: Tensor, imag: Tensor) -> Tensor:
    """A complex tensor from its real and imaginary parts (both float32 or both float64),
    differentiable in both: ``real + 1j * imag`` in the matching complex dtype.

    >>> import funcgrad.mutable as torch
    >>> torch.complex(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0]))
    tensor([1.+3.j, 2.-1.j])
    """
    if not (isinstance(real, Tensor) and isinstance(imag, Tensor)):
        raise TypeError("complex(): argument 'real' and 'imag' must be Tensor")
    # (named apart from the builtin `complex`, which this module uses; torch.complex is this)
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_scalar_name(real.dtype)} but got "
                           f"scalar type {_scalar_name(imag.dtype)} for second argument")
    if real.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_scalar_name(real.dtype)} and {_scalar_name(imag.dtype)}")
    return apply(COMPLEX, (real, imag))


COMPLEX = O._decl("complex", P.complex_p, "ComplexBackward0", result="keep")


def is_inference(input: Tensor) -> bool:
    """Whether `input` is an inference tensor (made in ``torch.inference_mode()``).

    >>> import funcgrad.mutable as torch
    >>> with torch.inference_mode():
    ...     made_inside = torch.ones(2)
    >>> torch.is_inference(made_inside), torch.is_inference(torch.ones(2))
    (True, False)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()


def numel(input) -> int:
    """Number of elements.

    >>> import funcgrad.mutable as torch
    >>> torch.numel(torch.zeros(2, 3))
    6
    """
    return input._data.size


# --- shape ops and views ----------------------------------------------------------------------------
def _resolve(shape, old_size: int) -> tuple:
    shape = tuple(map(int, shape))
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or old_size % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {old_size}")
        shape = tuple(old_size // known if s == -1 else s for s in shape)
    if math.prod(shape) != old_size:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {old_size}")
    return shape


def _view_data(data: np.ndarray, shape: tuple):
    """A view with `shape`, or None when the strides do not allow one."""
    v = data.view()
    try:
        v.shape = shape
    except AttributeError:
        return None
    return v


def view(input, *shape) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        raise NotImplementedError("view(dtype) is not supported")
    shape = _resolve(_shape_arg(shape), input._data.size)
    if is_traced(input):
        return view_op(O.VIEW, input, {"shape": shape})  # (a traced value has no strides)
    data = _view_data(input._data, shape)
    if data is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return view_op(O.VIEW, input, {"shape": shape}, data)


def reshape(input, *shape) -> Tensor:
    """A view when the strides allow (``ViewBackward0``), else a copy.

    >>> import funcgrad.mutable as torch
    >>> torch.reshape(torch.arange(6), (2, 3))
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    shape = _resolve(_shape_arg(shape), input._data.size)
    if is_traced(input):
        return view_op(O.VIEW, input, {"shape": shape})
    data = _view_data(input._data, shape)
    if data is not None:
        return view_op(O.VIEW, input, {"shape": shape}, data)
    copied = clone(input)
    return apply(O.UNSAFE_VIEW, (copied,), {"shape": shape})


def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Flatten dimensions `start_dim`..`end_dim` into one.

    >>> import funcgrad.mutable as torch
    >>> torch.flatten(torch.zeros(2, 3, 4), 1).shape
    torch.Size([2, 12])
    """
    shape = input._data.shape
    if not shape:
        return reshape(input, 1)
    s, e = start_dim % len(shape), end_dim % len(shape)
    if s == e:
        return input
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def contiguous(input, memory_format=None) -> Tensor:
    """`input` itself if contiguous, else a contiguous copy.

    >>> import funcgrad.mutable as torch
    >>> torch.ones(2, 3).t().contiguous().is_contiguous()
    True
    """
    fmt = contiguous_format if memory_format is None else memory_format
    if is_traced(input) or _has_layout(input._data, fmt):
        return input  # (a traced value has no layout)
    return clone(input, memory_format=fmt)


def t(input) -> Tensor:
    """Transpose a <= 2-d tensor: a view (``TBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.t(torch.tensor([[1, 2], [3, 4]]))
    tensor([[1, 3],
            [2, 4]])
    """
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return view_op(O.T_OP, input, {"axes": None})


def _dim(dim: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def transpose(input, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions: a view (``TransposeBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.transpose(torch.zeros(2, 3, 4), 0, 2).shape
    torch.Size([4, 3, 2])
    """
    nd = builtins.max(input._data.ndim, 1)
    dim0, dim1 = _dim(dim0, nd), _dim(dim1, nd)
    return view_op(O.TRANSPOSE, input, {"axis1": dim0 % nd, "axis2": dim1 % nd})


swapaxes = transpose


def permute(input, *dims) -> Tensor:
    """Reorder dimensions: a view (``PermuteBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.permute(torch.zeros(2, 3, 4), (2, 0, 1)).shape
    torch.Size([4, 2, 3])
    """
    dims = _shape_arg(dims)
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return view_op(O.PERMUTE, input, {"axes": tuple(d % nd for d in dims)})


def unsqueeze(input, dim: int) -> Tensor:
    """Insert a size-1 dimension at `dim`: a view.

    >>> import funcgrad.mutable as torch
    >>> torch.unsqueeze(torch.tensor([1, 2]), 1)
    tensor([[1],
            [2]])
    """
    shape = list(input._data.shape)
    dim = _dim(dim, len(shape) + 1)
    shape.insert(dim, 1)
    return view_op(O.UNSQUEEZE, input, {"shape": tuple(shape)}, input._data.reshape(shape))


def squeeze(input, dim=None) -> Tensor:
    """Drop size-1 dimensions (all, or `dim`): a view.

    >>> import funcgrad.mutable as torch
    >>> torch.squeeze(torch.zeros(1, 2, 1)).shape
    torch.Size([2])
    """
    shape = input._data.shape
    if dim is not None:
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            _dim(d, len(shape))
    if dim is None:
        new = tuple(s for s in shape if s != 1)
        op = O.SQUEEZE
    else:
        dims = {d % builtins.max(len(shape), 1) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
        op = O.SQUEEZE_DIM
    return view_op(op, input, {"shape": new}, input._data.reshape(new))


def expand(input, *sizes) -> Tensor:
    """Broadcast size-1 dimensions without copying: a view (``ExpandBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.tensor([[1], [2]]).expand(2, 3)
    tensor([[1, 1, 1],
            [2, 2, 2]])
    """
    sizes = _shape_arg(sizes)
    old = input._data.shape
    lead = len(sizes) - len(old)
    if lead < 0:
        raise RuntimeError(f"expand(torch.{input._dtype.tensor_type}{{{list(old)}}}, "
                           f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) "
                           f"must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(old)})")
    shape = tuple(old[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    for i in range(len(old) - 1, -1, -1):
        if old[i] != 1 and old[i] != shape[i + lead]:
            raise RuntimeError(expand_message(shape, old, i + lead, old[i]))
    return view_op(O.EXPAND, input, {"shape": shape}, O.expand_impl(input._data, shape),
                   replay_fn=O.expand_impl)


def expand_message(target, sizes, dim, existing) -> str:
    return (f"The expanded size of the tensor ({target[dim]}) must match the existing size "
            f"({existing}) at non-singleton dimension {dim}.  Target sizes: {list(target)}.  "
            f"Tensor sizes: {list(sizes)}")


def expand_as(input, other) -> Tensor:
    return expand(input, *other.shape)


def narrow(input, dim: int, start: int, length: int) -> Tensor:
    """`length` elements of `dim` from `start`: a view (``SliceBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.narrow(torch.arange(5), 0, 1, 3)
    tensor([1, 2, 3])
    """
    dim = _dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    template = (slice(None),) * dim + (slice(start, start + length),)
    return view_op(O.NARROW, input, {"template": template})


def select(input, dim: int, index: int) -> Tensor:
    """Index `index` of `dim`, removing the dimension: a view (``SelectBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.select(torch.tensor([[1, 2], [3, 4]]), 1, 0)
    tensor([1, 3])
    """
    dim = dim % input._data.ndim
    template = (slice(None),) * dim + (index,)
    return view_op(O.SELECT, input, {"template": template})


def _diagonal_impl(x, offset=0, dim1=0, dim2=1):
    return np.lib.stride_tricks.as_strided(
        x[_diag_start(x.shape, offset, dim1, dim2)], shape=_diag_shape(x.shape, offset, dim1, dim2),
        strides=_diag_strides(x.strides, dim1, dim2), writeable=x.flags.writeable)


def _diag_start(shape, offset, d1, d2):
    idx = [slice(None)] * len(shape)
    idx[d1] = slice(builtins.max(-offset, 0), None)
    idx[d2] = slice(builtins.max(offset, 0), None)
    return tuple(idx)


def _diag_shape(shape, offset, d1, d2):
    n = builtins.max(builtins.min(shape[d1] - builtins.max(-offset, 0),
                                  shape[d2] - builtins.max(offset, 0)), 0)
    return tuple(s for i, s in enumerate(shape) if i not in (d1, d2)) + (n,)


def _diag_strides(strides, d1, d2):
    return tuple(s for i, s in enumerate(strides) if i not in (d1, d2)) + (strides[d1] + strides[d2],)


def _diagonal_t(ct, out, x, offset=0, dim1=0, dim2=1):
    return _diagonal_scatter_p(ct, shape=tuple(H.shape(x)), offset=offset, dim1=dim1, dim2=dim2)


def _diagonal_scatter_impl(ct, shape, offset=0, dim1=0, dim2=1):
    full = np.zeros(shape, np.result_type(ct))
    _diagonal_impl(full, offset, dim1, dim2)[...] = ct
    return full


# the transpose of taking a diagonal, itself a primitive so create_graph can go through it
_diagonal_scatter_p = linear(
    "diagonal_scatter", _diagonal_scatter_impl,
    lambda ct, out, g, shape, offset=0, dim1=0, dim2=1: _diagonal_p(ct, offset=offset, dim1=dim1,
                                                                     dim2=dim2),
    params=("shape", "offset", "dim1", "dim2"))


_diagonal_p = linear("diagonal", _diagonal_impl, _diagonal_t, params=("offset", "dim1", "dim2"))
O._VIEW_BY_IMPL[_diagonal_impl] = O._decl("diagonal", _diagonal_p, "DiagonalBackward0",
                                          result="same", is_view=True)


# --- unfold: windows of `size` every `step` along a dim, as a new last dim (a view) ----------
def _unfold_impl(x, dimension, size, step):
    shape = list(x.shape)
    strides = list(x.strides)
    count = (shape[dimension] - size) // step + 1
    shape[dimension], strides[dimension] = count, strides[dimension] * step
    return np.lib.stride_tricks.as_strided(x, shape=tuple(shape) + (size,),
                                           strides=tuple(strides) + (x.strides[dimension],),
                                           writeable=x.flags.writeable)


def _unfold_windows(n: int, dimension_size: int, size: int, step: int) -> np.ndarray:
    """The source index of each window element: (windows, size)."""
    return np.arange(n)[:, None] * step + np.arange(size)[None, :]


def _unfold_backward_impl(ct, shape, dimension, size, step):
    # each window's gradient added back where it came from (windows may overlap)
    g = np.zeros(shape, np.result_type(ct))
    moved = np.moveaxis(g, dimension, -1)
    windows = _unfold_windows(ct.shape[dimension], shape[dimension], size, step)
    np.add.at(moved, (Ellipsis, windows), np.moveaxis(ct, dimension, -2))
    return g


# the transpose of unfold, itself a primitive so create_graph can go through it
_unfold_backward_p = linear(
    "unfold_backward", _unfold_backward_impl,
    lambda ct, out, g, shape, dimension, size, step: _unfold_p(ct, dimension=dimension,
                                                               size=size, step=step),
    params=("shape", "dimension", "size", "step"))
_unfold_p = linear("unfold", _unfold_impl,
                   lambda ct, out, x, dimension, size, step: _unfold_backward_p(
                       ct, shape=tuple(H.shape(x)), dimension=dimension, size=size, step=step),
                   params=("dimension", "size", "step"))
O._VIEW_BY_IMPL[_unfold_impl] = O._decl("unfold", _unfold_p, "UnfoldBackward0", result="same",
                                        is_view=True)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``Tensor.unfold``: every window of `size` elements, `step` apart, along `dimension`,
    as a new last dim; a view (``UnfoldBackward0``; overlapping windows' gradients add).

    >>> import funcgrad.mutable as torch
    >>> torch.arange(5.0).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    nd = input._data.ndim
    d = _dim(dimension, builtins.max(nd, 1))
    length = input._data.shape[d] if nd else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if nd == 0:
        return input.reshape(1) if size == 1 else input
    return view_op(O.OPS["unfold"], input, {"dimension": d, "size": int(size),
                                            "step": int(step)})


# --- as_strided: a view of the storage itself, at given sizes, strides and offset --------------------
def _memory_owner(x: np.ndarray) -> np.ndarray:
    """The array owning the memory `x` lies in (through as_strided's wrapper objects too)."""
    while True:
        base = x.base
        if isinstance(base, np.ndarray):
            x = base
        elif isinstance(getattr(base, "base", None), np.ndarray):
            x = base.base
        else:
            return x


def _storage_geometry(x: np.ndarray) -> tuple:
    """(offset of `x`'s first element, `x`'s strides, the storage's size): PyTorch's storage
    view of `x`, in elements of its dtype."""
    owner = _memory_owner(x)
    unit = x.itemsize
    start = x.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return start // unit, tuple(s // unit for s in x.strides), owner.nbytes // unit


def _as_strided_impl(x, size, stride, storage_offset=None, geometry=None):
    owner = _memory_owner(x)
    offset, _, _ = _storage_geometry(x)
    offset = offset if storage_offset is None else storage_offset
    if 0 in tuple(size):
        # an empty view reads nothing: torch accepts any offset, NumPy only one inside the buffer
        offset = builtins.min(offset, owner.nbytes // x.itemsize)
    return np.ndarray(tuple(size), x.dtype, buffer=owner, offset=offset * x.itemsize,
                      strides=tuple(s * x.itemsize for s in stride))


def _storage_positions(size, stride, offset: int) -> np.ndarray:
    """The storage element each element of a (size, stride, offset) view reads."""
    pos = np.full(tuple(size), offset, np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        pos += (np.arange(n) * st).reshape((n,) + (1,) * (len(size) - k - 1))
    return pos


def _as_strided_t(ct, out, x, size, stride, storage_offset=None, geometry=None):
    """Each storage element's gradient is the sum over the view's elements reading it; an
    element of `x` gets the gradient of the storage element it is, shared equally among the
    elements of `x` that are that same storage element (an expanded `x`): as torch, so that
    x's own backward (expand's sum) gives the storage element's gradient once, not once per
    alias."""
    x_offset, x_strides, n = geometry
    offset = x_offset if storage_offset is None else storage_offset
    storage = NP.index_add(np.zeros(n, H.dtype(ct)), ct, _storage_positions(size, stride, offset),
                           template=(H.SLOT,))
    x_positions = _storage_positions(H.shape(x), x_strides, x_offset)
    aliases = np.bincount(x_positions.reshape(-1), minlength=n)
    if aliases.max(initial=0) > 1:
        share = (1.0 / np.maximum(aliases, 1)).astype(H.dtype(ct))
        storage = storage * share
    return NP.getitem(storage, x_positions, template=(H.SLOT,))


_as_strided_p = linear("as_strided", _as_strided_impl, _as_strided_t,
                       params=("size", "stride", "storage_offset", "geometry"))
AS_STRIDED = O._decl("as_strided", _as_strided_p, "AsStridedBackward0", result="same",
                     is_view=True)
O._VIEW_BY_IMPL[_as_strided_impl] = AS_STRIDED


def as_strided_params(input: Tensor, size, stride, storage_offset) -> dict:
    """as_strided's checked parameters (PyTorch's errors)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    geometry = _storage_geometry(input._data)
    offset = geometry[0] if storage_offset is None else int(storage_offset)
    needed = 0 if 0 in size else offset + 1 + builtins.sum((n - 1) * st for n, st in zip(size, stride))
    if needed > geometry[2]:
        unit = input._data.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{offset}, and itemsize {unit} requiring a storage size of "
                           f"{needed * unit} are out of bounds for storage of size "
                           f"{geometry[2] * unit}")
    return {"size": size, "stride": stride, "storage_offset": storage_offset,
            "geometry": geometry}


def as_strided(input, size, stride, storage_offset=None) -> Tensor:
    """A view of `input`'s storage with the given sizes and strides (in elements), starting
    at `storage_offset` (by default where `input` starts): ``AsStridedBackward0``.

    >>> import funcgrad.mutable as torch
    >>> torch.arange(4.0).as_strided((2, 2), (1, 1), 1)
    tensor([[1., 2.],
            [2., 3.]])
    """
    return view_op(AS_STRIDED, input, as_strided_params(input, size, stride, storage_offset))


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal (with `offset`) of two dimensions: a view (``DiagonalBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.diagonal(torch.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    nd = input._data.ndim
    dim1, dim2 = _dim(dim1, nd), _dim(dim2, nd)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return view_op(O.OPS["diagonal"], input, {"offset": offset, "dim1": dim1, "dim2": dim2})


class _SplitBackward(Node):
    """One node for all pieces of split/chunk/unbind (PyTorch's SplitBackward0...): each
    piece's gradient is added into its place, with the table primitive `index_add` (so
    create_graph records it like any rule)."""

    __slots__ = ("_nout", "_templates", "_shape", "_dtype")

    def _apply(self, cts, graph):
        if graph.create_graph:
            return [self._joined(cts)]
        g = np.zeros(self._shape, self._dtype)
        for ct, tpl in zip(cts, self._templates):
            if ct is not None:
                g = NP.index_add(g, ct, template=tpl)
        return [g]

    def _output_specs(self) -> list:
        stand = np.broadcast_to(np.zeros((), self._dtype), self._shape)
        return [(stand[tpl].shape, self._dtype) for tpl in self._templates]

    def _joined(self, cts) -> Tensor:
        """Under create_graph (gradients are tensors, grad mode on), the pieces' gradients
        joined as PyTorch's backward joins them, missing ones as zeros: stacked for unbind,
        concatenated for split and chunk (recorded as StackBackward0 / CatBackward0)."""
        zeros = np.zeros(self._shape, self._dtype)
        parts = [ct if ct is not None else Tensor._wrap(zeros[tpl].copy())
                 for ct, tpl in zip(cts, self._templates)]
        last = self._templates[0][-1]
        axis = len(self._templates[0]) - 1
        if isinstance(last, (int, np.integer)):
            return stack(parts, axis)
        return cat(parts, axis)


def _pieces(input, templates, name) -> tuple:
    outs = []
    cls = node_class(name, _SplitBackward)
    node = None
    if STATE.grad_enabled and input.requires_grad:
        node = cls.__new__(cls)
        node._init((O.edge_of(input),))
        node._nout = len(templates)
        node._templates = templates
        node._shape = input._data.shape
        node._dtype = input._data.dtype
    prev = STATE.grad_enabled
    for k, tpl in enumerate(templates):
        STATE.grad_enabled = False
        try:
            piece = view_op(O.SLICE, input, {"template": tpl})
        finally:
            STATE.grad_enabled = prev
        piece._view.no_grad = not prev  # (made with grad off above, to record one node)
        piece._view.multi = True
        if node is not None:
            piece._grad_fn = node
            piece._nr = k
            piece._rg = True
        outs.append(piece)
    return tuple(outs)


def split(input, split_size_or_sections, dim: int = 0) -> tuple:
    """Views of consecutive chunks of `dim` (one ``SplitBackward0`` node).

    >>> import funcgrad.mutable as torch
    >>> torch.split(torch.arange(5), 2)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    return _pieces(input, *_split_templates(input, split_size_or_sections, dim))


def unsafe_split(input, split_size_or_sections, dim: int = 0) -> tuple:
    """`split` whose pieces are not views: each has its own version counter, and may be
    written in place (one ``UnsafeSplitBackward0`` or ``UnsafeSplitWithSizesBackward0`` node;
    the pieces still share the input's storage, as in PyTorch).

    >>> import funcgrad.mutable as torch
    >>> a, b = torch.unsafe_split(torch.arange(4.0), 2)
    >>> a._is_view(), b.add_(1)
    (False, tensor([3., 4.]))
    """
    templates, name = _split_templates(input, split_size_or_sections, dim)
    pieces = _pieces(input, templates, "Unsafe" + name)
    for piece in pieces:
        piece._base = None
        piece._view = None
        piece._vc = Version()
    return pieces


def unsafe_split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:
    """`unsafe_split` into pieces of the given sizes (``UnsafeSplitWithSizesBackward0``).

    >>> import funcgrad.mutable as torch
    >>> [p.shape[0] for p in torch.unsafe_split_with_sizes(torch.zeros(5), [2, 3])]
    [2, 3]
    """
    return unsafe_split(input, list(split_sizes), dim)


def unsafe_chunk(input, chunks: int, dim: int = 0) -> tuple:
    """`chunk` whose pieces are not views (``UnsafeSplitBackward0``), as `unsafe_split`.

    >>> import funcgrad.mutable as torch
    >>> len(torch.unsafe_chunk(torch.zeros(5), 2))
    2
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[_dim(dim, input._data.ndim)]
    return unsafe_split(input, -(-n // chunks), dim)


def _split_templates(input, split_size_or_sections, dim: int) -> tuple:
    """The index templates of `split`'s pieces, and its node's name."""
    dim = _dim(dim, input._data.ndim)
    n = input._data.shape[dim]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        if size == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        bounds = [(i, builtins.min(i + size, n)) for i in range(0, n, size or 1)] or [(0, 0)]
        name = "SplitBackward0"
    else:
        if builtins.sum(split_size_or_sections) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={list(split_size_or_sections)}")
        bounds, start = [], 0
        for s in split_size_or_sections:
            bounds.append((start, start + s))
            start += s
        name = "SplitWithSizesBackward0"
    templates = [(slice(None),) * dim + (slice(a, b),) for a, b in bounds]
    return templates, name


def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """`chunks` nearly equal views along `dim`.

    >>> import funcgrad.mutable as torch
    >>> torch.chunk(torch.arange(4), 2)
    (tensor([0, 1]), tensor([2, 3]))
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[_dim(dim, input._data.ndim)]
    size = -(-n // chunks)
    return split(input, size, dim)


def unbind(input, dim: int = 0) -> tuple:
    """Views of each index of `dim` (one ``UnbindBackward0`` node).

    >>> import funcgrad.mutable as torch
    >>> torch.unbind(torch.tensor([[1, 2], [3, 4]]))
    (tensor([1, 2]), tensor([3, 4]))
    """
    dim = _dim(dim, input._data.ndim)
    if input._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    templates = [(slice(None),) * dim + (i,) for i in range(input._data.shape[dim])]
    return _pieces(input, templates, "UnbindBackward0")


def _to(input, *args, **kwargs) -> Tensor:
    dtype = kwargs.get("dtype")
    check_device(kwargs.get("device"))
    for a in args:
        if isinstance(a, D.dtype) or (isinstance(a, type) and a in (float, int, bool)):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, device)):
            check_device(a)
    fmt = kwargs.get("memory_format")
    if fmt is not None and fmt is not preserve_format and not is_traced(input) \
            and not _has_layout(input._data, fmt):
        # a new layout is a copy (ToCopyBackward0 in torch), in the dtype asked for
        dt = input._dtype if dtype is None else D.to_dtype(dtype)
        out = apply(O.TO_COPY, (input,), {"dtype": dt.np})
        if not is_traced(out):
            out._data = _in_layout(out._data, fmt)
        return out
    if dtype is None:
        return input
    dt = D.to_dtype(dtype)
    if dt is input._dtype and not kwargs.get("copy"):
        return input
    if input.requires_grad and not (dt.is_floating_point or dt.is_complex):
        return Tensor._wrap(input._data.astype(dt.np))
    return apply(O.TO_COPY, (input,), {"dtype": dt.np})



# examples for the generated one-argument functions
abs.__doc__ = """``torch.abs``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.abs(torch.tensor([-0.5], requires_grad=True))
    tensor([0.5000], grad_fn=<AbsBackward0>)
    """
cos.__doc__ = """``torch.cos``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.cos(torch.tensor([0.5], requires_grad=True))
    tensor([0.8776], grad_fn=<CosBackward0>)
    """
exp.__doc__ = """``torch.exp``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.exp(torch.tensor([0.5], requires_grad=True))
    tensor([1.6487], grad_fn=<ExpBackward0>)
    """
expm1.__doc__ = """``torch.expm1``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.expm1(torch.tensor([0.5], requires_grad=True))
    tensor([0.6487], grad_fn=<Expm1Backward0>)
    """
log.__doc__ = """``torch.log``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.log(torch.tensor([0.5], requires_grad=True))
    tensor([-0.6931], grad_fn=<LogBackward0>)
    """
log1p.__doc__ = """``torch.log1p``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.log1p(torch.tensor([0.5], requires_grad=True))
    tensor([0.4055], grad_fn=<Log1PBackward0>)
    """
reciprocal.__doc__ = """``torch.reciprocal``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.reciprocal(torch.tensor([0.5], requires_grad=True))
    tensor([2.], grad_fn=<ReciprocalBackward0>)
    """
relu.__doc__ = """``torch.relu``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.relu(torch.tensor([-0.5, 0.5], requires_grad=True))
    tensor([0.0000, 0.5000], grad_fn=<ReluBackward0>)
    """
sigmoid.__doc__ = """``torch.sigmoid``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.sigmoid(torch.tensor([0.5], requires_grad=True))
    tensor([0.6225], grad_fn=<SigmoidBackward0>)
    """
sin.__doc__ = """``torch.sin``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.sin(torch.tensor([0.5], requires_grad=True))
    tensor([0.4794], grad_fn=<SinBackward0>)
    """
sqrt.__doc__ = """``torch.sqrt``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.sqrt(torch.tensor([0.5], requires_grad=True))
    tensor([0.7071], grad_fn=<SqrtBackward0>)
    """
tan.__doc__ = """``torch.tan``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.tan(torch.tensor([0.5], requires_grad=True))
    tensor([0.5463], grad_fn=<TanBackward0>)
    """
tanh.__doc__ = """``torch.tanh``; the derivative comes from funcgrad's table.

    >>> import funcgrad.mutable as torch
    >>> torch.tanh(torch.tensor([0.5], requires_grad=True))
    tensor([0.4621], grad_fn=<TanhBackward0>)
    """
