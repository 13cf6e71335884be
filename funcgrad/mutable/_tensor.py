"""The mutable `Tensor`: a NumPy array (a view of its base's storage) with autograd state.

Layer 2 of the mutable layer: it imports the graph's nodes and versions (`_graph`); the op
table (`_ops`) and the engine (`_autograd`) build on it. Methods that need those layers are
attached by them (``backward`` by ``autograd/_grad.py``, the ops by ``_methods.py``)."""
from __future__ import annotations

import operator
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from .._src.core import Tracer
from . import _dtypes as D
from ._graph import (PROCESS, STATE, AccumulateGrad, AsStridedBackward0, RemovableHandle, Version,
                     _short_name)
from ._device import check_device, device
from ._format import tensor_repr

__all__ = ["Tensor", "Size", "edge_of", "is_traced", "traced_value_error"]
_CPU = device("cpu")
_INVALID = object()
OWN_DTYPE = object()  # a leaf's grad_dtype when not set: the leaf's own dtype


# --- tensors holding a functional tracer --------------------------------------------------
def is_traced(t: "Tensor") -> bool:
    """Whether tensor `t` holds a functional tracer (`funcgrad._src.core.Tracer`) as its
    data: it stands for a value inside a running funcgrad transform, as the tensors
    torch.autograd.functional hands the user's function do. Its ops go through the
    functional model's dispatch (see `_ops`); nothing is recorded on the mutable graph."""
    data = t._data
    return type(data) is not np.ndarray and isinstance(data, Tracer)


def traced_value_error(what: str) -> RuntimeError:
    """`what` needs a concrete value, which a traced tensor does not have."""
    return RuntimeError(
        f"{what} was called on a traced tensor: inside torch.autograd.functional (jacobian, "
        "hessian, vjp, jvp, hvp, vhp) the function's tensors stand for values being "
        "differentiated, and a concrete value would silently drop their derivative. Keep "
        "the computation in tensor operations, or call .detach() first if a constant is what "
        "you mean.")



class Size(tuple):
    """``tensor.shape``: a tuple that prints as ``torch.Size([2, 3])``.

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(2, 3).shape
    torch.Size([2, 3])
    """

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def __getitem__(self, k):
        got = tuple.__getitem__(self, k)
        return Size(got) if isinstance(k, slice) else got  # a slice is a Size, as in torch

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class _ViewInfo:
    """How a view was made from its base: the chain of view ops to replay (``(impl, params,
    op)`` links; op None where the link is no op of the table), and state."""

    __slots__ = ("chain", "version", "no_grad", "multi", "from_no_grad", "custom", "base_fn",
                 "inference", "from_inference", "replay")

    def __init__(self, chain: tuple, version: int, no_grad: bool, multi: bool = False) -> None:
        self.from_no_grad = False  # a view (made with grad) of a view made in no_grad
        self.inference = False  # (no_grad views) made in inference mode
        self.from_inference = False  # (from_no_grad views) that view made in inference mode
        self.custom = False  # a custom Function's output viewing an input (or a view of one)
        self.chain = chain
        self.version = version
        self.no_grad = no_grad
        self.base_fn = None  # (no_grad views) the base's grad_fn when the view was made
        self.multi = multi  # made by split/chunk/unbind (or a view of one): no in-place
        # made with view replay on: after a write its grad_fn replays the chain's ops
        self.replay = PROCESS.view_replay_used and STATE.view_replay


NO_GRAD_VIEW_REBASED = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked).")


INFERENCE_VIEW_REBASED = (
    "A view was created in inference mode and its base or another view of its base has been "
    "modified inplace in normal mode. Given that this use case is ambiguous and error-prone, it "
    "is forbidden. You can clarify your code by moving both the view and the inplace either "
    "both inside the inference_mode block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked).")


def _rebased_error(info: _ViewInfo) -> RuntimeError:
    """PyTorch's error for a view made in no_grad (or inference) mode whose storage was since
    written with grad mode on."""
    return RuntimeError(INFERENCE_VIEW_REBASED if info.inference else NO_GRAD_VIEW_REBASED)


NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
    "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")


class Tensor:
    """A PyTorch-style tensor: mutable, with ``requires_grad``, ``grad``, ``grad_fn``.

    >>> import funcgrad.mutable as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    """

    # Hot attributes are slots; rarely set ones are class defaults (instances that set them
    # get a __dict__), which keeps creating a tensor to eight attribute writes. `_grad_node`
    # is the node that made the tensor (a view's may be stale: read ``grad_fn``); the rest of
    # the package names it ``_grad_fn`` (see below the class).
    __slots__ = ("_data", "_dtype", "_vc", "_grad_node", "_nr", "_rg", "_grad", "_base",
                 "__weakref__", "__dict__")
    __array_priority__ = 1000
    # Marks a funcgrad.mutable tensor for funcgrad.numpy, which must not take one as an
    # operand (an Array wrapping a Tensor is neither model): numpy/_methods.py refuses it
    __funcgrad_mutable__ = True
    # a dual tensor's tangent (autograd.forward_ad; set in the instance's __dict__ by
    # `_forward`, whose ops alone read it)
    _fw_grad = None
    _view = None      # _ViewInfo of a view
    _hooks = None     # leaf tensor hooks
    _acc = None       # weakref to the leaf's AccumulateGrad
    _retains = False  # retain_grad() was called
    _post_hooks = None  # register_post_accumulate_grad_hook
    _traced_at = None   # a traced view: the version of its base its value was read at
    _grad_dtype = OWN_DTYPE  # grad_dtype: the tensor's dtype until set (None: any dtype)

    # --- construction -----------------------------------------------------------------
    @staticmethod
    def _wrap(data: np.ndarray, rg: bool = False) -> "Tensor":
        t = object.__new__(Tensor)
        if type(data) is not np.ndarray:
            data = np.asarray(data)
        t._data = data
        t._dtype = D._BY_NP[data.dtype]
        t._vc = Version()
        t._grad_node = None
        t._nr = 0
        t._rg = rg
        t._grad = None
        t._base = None
        return t

    def __new__(cls, *args, device=None):
        """``torch.Tensor(data)`` (a copy, in the default float dtype), ``torch.Tensor(2, 3)``
        (uninitialized: zeros here) or ``torch.Tensor()`` (empty)."""
        check_device(device)
        dt = D.DEFAULT_FLOAT.np
        if not args:
            return Tensor._wrap(np.zeros(0, dt))
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0]
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Size):
                return Tensor._wrap(np.zeros(tuple(data), dt))
            return Tensor._wrap(np.array(data, dtype=dt))
        if not all(isinstance(a, int) for a in args):
            raise TypeError("new(): invalid data type '" + type(args[0]).__name__ + "'")
        return Tensor._wrap(np.zeros(args, dt))

    def __init__(self, *args, **kwargs) -> None:
        pass

    # --- autograd attributes ----------------------------------------------------------
    @property
    def grad_fn(self):
        if self._base is not None and self._view.version != self._vc.value:
            _regenerate_view_grad_fn(self)
        return self._grad_node

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        if self._base is not None and not self._rg:
            if not self._view.no_grad:
                self.grad_fn  # a write into the base may have made the view require grad
            return self._rg or (self._view.no_grad and self._base.requires_grad)
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if type(value) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if value and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._vc.inference and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._rg = bool(requires_grad)
        return self

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")

    @property
    def _backward_hooks(self):
        """The tensor's hooks (PyTorch's attribute): a leaf's, or a non-leaf's at its
        output; None when it has none."""
        fn = self._grad_node if self._base is None else None
        if fn is None:
            return self._hooks
        return None if fn._pre_hooks is None else fn._pre_hooks.get(self._nr)

    @_backward_hooks.setter
    def _backward_hooks(self, hooks) -> None:
        # PyTorch's tests assign a dict: a leaf's hooks, or a non-leaf's hooks at its output
        fn = self._grad_node if self._base is None else None
        if fn is None:
            self._hooks = hooks
        elif hooks is None:
            if fn._pre_hooks is not None:
                fn._pre_hooks.pop(self._nr, None)
        else:
            if fn._pre_hooks is None:
                fn._pre_hooks = {}
            fn._pre_hooks[self._nr] = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        raise RuntimeError("Deletion of _backwards_hooks not allowed!")

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @property
    def grad_dtype(self):
        """The dtype ``.grad`` takes (the tensor's own unless set; None: whatever arrives)."""
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self._dtype if self._grad_dtype is OWN_DTYPE else self._grad_dtype

    @grad_dtype.setter
    def grad_dtype(self, value) -> None:
        if self.grad_fn is not None:
            self.grad  # (PyTorch reads .grad first: the non-leaf warning)
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, D.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                               f"{type(value).__name__}")
        if value is not None and self._grad is not None and self._grad._dtype is not value:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{_scalar_name(value)}' because there is already a "
                f"gradient with dtype '{_C_NAMES[self._grad._dtype.name]}'. Please clear the "
                "gradient (.grad = None) before changing grad_dtype, or ensure the new "
                "grad_dtype matches the existing gradient's dtype.")
        self._grad_dtype = value

    def _grad_np_dtype(self, incoming: np.dtype) -> np.dtype:
        """The NumPy dtype of a first gradient accumulated into this leaf."""
        if self._grad_dtype is OWN_DTYPE:
            return self._data.dtype
        return incoming if self._grad_dtype is None else self._grad_dtype.np

    @grad.setter
    def grad(self, value) -> None:
        if value is self:
            raise RuntimeError("can't assign Variable as its own grad")
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' "
                                   f"to a tensor of size '{list(self.shape)}'. Please ensure that "
                                   "the gradient and the tensor are the same size")
            want = self.grad_dtype if self.grad_fn is None else self._dtype
            if want is not None and value._dtype is not want:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_C_NAMES[value._dtype.name]}' "
                    f"to a tensor with grad_dtype '{_scalar_name(want)}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
                    "the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                    "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
                    "its gradient may break downstream systems that assume they match.")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def _version(self) -> int:
        if self._vc.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc.value

    def is_inference(self) -> bool:
        """Made in ``torch.inference_mode()`` (or a view of such a tensor)."""
        return self._vc.inference

    @property
    def retains_grad(self) -> bool:
        return self._retains

    @property
    def output_nr(self) -> int:
        return self._nr

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` at the next backward."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains:
            return
        self._retains = True
        fn = self.grad_fn
        if fn._retain is None:
            fn._retain = {}
        fn._retain[self._nr] = weakref.ref(self)

    def register_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is None:
            if self._hooks is None:
                self._hooks = {}
            return RemovableHandle(self._hooks, hook)
        if fn._pre_hooks is None:
            fn._pre_hooks = {}
        table = fn._pre_hooks.get(self._nr)
        if table is None:
            table = fn._pre_hooks[self._nr] = {}
        return RemovableHandle(table, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(tensor)`` after backward has accumulated into this leaf's ``.grad``."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_hooks is None:
            self._post_hooks = {}
        return RemovableHandle(self._post_hooks, hook)

    def _edge(self):
        """Where this tensor's gradient goes: (node, output number), or None."""
        fn = self._grad_node if self._base is None else self.grad_fn
        if fn is not None:
            return (fn, self._nr)
        if not self._rg:
            if self._base is not None and self.requires_grad:
                return None
            return None
        return (self._accumulator(), 0)

    def _accumulator(self) -> AccumulateGrad:
        acc = self._acc() if self._acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc = weakref.ref(acc)
        return acc

    # --- data ---------------------------------------------------------------------------
    @property
    def data(self) -> "Tensor":
        if is_traced(self):
            # inside torch.autograd.functional: the value as a constant of the running
            # transform (what reading .data gives in torch), as detach() makes it
            return self.detach()
        t = Tensor._wrap(self._data)
        return t

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if is_traced(self) or is_traced(value):
            raise traced_value_error("Setting .data")
        if self._rg and not (value._dtype.is_floating_point or value._dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._data = value._data
        self._dtype = value._dtype

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    @property
    def dtype(self) -> D.dtype:
        return self._dtype

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[dim]

    def dim(self) -> int:
        return self._data.ndim

    ndim = property(dim)

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def stride(self, dim: int | None = None):
        if is_traced(self):
            raise traced_value_error("stride()")
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def is_contiguous(self) -> bool:
        if is_traced(self):  # a traced value has no memory layout: as if contiguous
            return True
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def device(self) -> device:
        return _CPU

    is_cpu = True

    def _is_view(self) -> bool:
        return self._base is not None

    def type(self, dtype=None):
        if dtype is None:
            return "torch." + self._dtype.tensor_type
        return self.to(dtype)

    def data_ptr(self) -> int:
        if is_traced(self):
            raise traced_value_error("data_ptr()")
        return self._data.__array_interface__["data"][0]

    def untyped_storage(self):
        base = self._data
        while isinstance(base.base, np.ndarray):
            base = base.base
        return _Storage(base)

    def tolist(self):
        if is_traced(self):
            raise traced_value_error("tolist()")
        return self._data.tolist()

    def item(self):
        if is_traced(self):
            raise traced_value_error("item()")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.item()

    def __float__(self) -> float:
        if is_traced(self):
            raise traced_value_error("float()")
        return float(self.item())

    def __int__(self) -> int:
        if is_traced(self):  # an integer carries no derivative: nothing is lost
            return int(self._data)
        return int(self.item())

    def __index__(self) -> int:
        if self._dtype.category != 1 or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        if is_traced(self):
            return self._data.__index__()
        return int(self._data.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        if is_traced(self):  # control flow on a traced value decides through its value
            return bool(self._data)
        return bool(self._data.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def numpy(self, force: bool = False) -> np.ndarray:
        if is_traced(self):
            raise traced_value_error("numpy()")
        if self.requires_grad and not force and STATE.grad_enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if type(self._data) is not np.ndarray:
            return np.asarray(self._data)  # a dual tensor's marked data, as a plain array
        return self._data

    def __array__(self, dtype=None, copy=None):
        if is_traced(self):
            raise traced_value_error("Conversion to a NumPy array (numpy.asarray)")
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return np.asarray(self._data, dtype=dtype)

    def __repr__(self, *, tensor_contents=None) -> str:
        if is_traced(self):
            return f"tensor({self._data!r}, dtype={self._dtype})"
        try:
            fn = self.grad_fn
        except RuntimeError:  # as PyTorch: a grad_fn that cannot be made prints as Invalid
            fn = _INVALID
        name = None
        if fn is not None:
            name = "Invalid" if fn is _INVALID else type(fn).__name__
        tangent = self._fw_grad
        if tangent is not None:  # a dual tensor (PyTorch prints a 0-d tangent as a number)
            tangent = repr(tangent.item()) if tangent._data.ndim == 0 else repr(tangent)
        return tensor_repr(self._data, self._dtype, D.DEFAULT_FLOAT, name, self.requires_grad,
                           tangent)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and not is_traced(self):
            return self._data.item().__format__(spec)
        return repr(self)

    def __reduce_ex__(self, proto):
        if is_traced(self):
            raise traced_value_error("Pickling")
        return (_rebuild, (self._data.copy(), self._rg))

    def __copy__(self) -> "Tensor":
        """``copy.copy``: as PyTorch, a new leaf on the same storage (own version counter)."""
        return self._new_leaf(self._data)

    def __deepcopy__(self, memo: dict) -> "Tensor":
        """``copy.deepcopy``: leaves only (as PyTorch); the data and ``.grad`` are copied."""
        if self.grad_fn is not None:
            raise RuntimeError(DEEPCOPY_NON_LEAF)
        found = memo.get(id(self))
        if found is not None:
            return found
        out = memo[id(self)] = self._new_leaf(self._data.copy())
        if self._grad is not None:
            out._grad = self._grad._new_leaf(self._grad._data.copy())
        return out

    def _new_leaf(self, data: np.ndarray) -> "Tensor":
        t = object.__new__(type(self))  # Parameter stays Parameter
        plain = Tensor._wrap(data)
        for slot in ("_data", "_dtype", "_vc", "_grad_node", "_nr", "_grad", "_base"):
            setattr(t, slot, getattr(plain, slot))
        t._vc.value = 1  # PyTorch's rebuild writes the storage in once
        t._rg = self.requires_grad
        return t


def _refuse_grad_fn_deletion(self) -> None:
    raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")


# ``t._grad_fn`` reads and writes the `_grad_node` slot through C-level accessors, and
# ``del t._grad_fn`` is refused as in PyTorch. Not on the slot itself: refusing a deletion
# there needs ``Tensor.__delattr__``, which routes every attribute write on every tensor
# through Python (measured: W1's forward 4.7 -> 6.4 us/op). The hot paths (_ops, _autograd)
# use the slot; this alias costs about 50 ns per access elsewhere.
Tensor._grad_fn = property(operator.attrgetter("_grad_node"), Tensor._grad_node.__set__,
                           _refuse_grad_fn_deletion)


DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
    "the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")

CUSTOM_VIEW_DETAIL = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function.")

_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _scalar_name(dt: D.dtype) -> str:
    """PyTorch's scalar type name in messages: Float, Double, Long..."""
    return _SCALAR_NAMES[dt.name]


_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "bfloat16": "BFloat16", "int64": "Long",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _rebuild(data, rg):
    return Tensor._wrap(data, rg)


class _Storage:
    __slots__ = ("array",)

    def __init__(self, array) -> None:
        self.array = array

    def data_ptr(self) -> int:
        return self.array.__array_interface__["data"][0]

    def nbytes(self) -> int:
        return self.array.nbytes


def edge_of(t: Tensor):
    """Where `t`'s gradient goes: (its grad_fn, output number), (its accumulator, 0) for a
    leaf that requires grad, or None; a no_grad view whose base was since written with
    grad mode on has no edge (PyTorch's error)."""
    if t._base is not None and t._view.no_grad and t._view.version != t._vc.value \
            and STATE.grad_enabled and t._base.requires_grad:
        raise _rebased_error(t._view)
    fn = t._grad_node if t._base is None else t.grad_fn
    if fn is not None:
        return (fn, t._nr)
    if t._rg:
        return (t._accumulator(), 0)
    return None


def _replayed_history(base: Tensor, chain) -> tuple:
    """(node, output number) of a view made again from `base` by its chain's view ops, each
    recorded as it was when the view was made (the history view replay gives)."""
    t = base
    for fn, params, op in chain:
        out = Tensor._wrap(fn(t._data, **params))
        out._vc = base._vc
        op.record1(op, t, out, params)
        t = out
    return t._grad_node, t._nr


def _regenerate_view_grad_fn(view: Tensor) -> None:
    """After a write into a view's storage, its grad_fn reads through the (rebased) base."""
    info = view._view
    if info.no_grad:
        if view._base.requires_grad:
            # written since (in no_grad mode or not): the view's history is ambiguous
            raise _rebased_error(info)
        return  # stays stale: using it in a graph is an error (see _ops.edge_of)
    base = view._base
    if info.custom and base.requires_grad:
        # regenerating would replace the custom backward by the view's own: PyTorch forbids it
        raise RuntimeError(
            f"Output {view._nr} of {_short_name(view._grad_node)} is a view and its base or another "
            f"view of its base has been modified inplace. {CUSTOM_VIEW_DETAIL}")
    info.version = view._vc.value
    if not base.requires_grad:
        return
    if info.replay and all(link[2] is not None for link in info.chain):
        node, nr = _replayed_history(base, info.chain)
    else:
        node, nr = AsStridedBackward0(), 0
        node._init((edge_of(base),))
        node._chain = info.chain
        node._base_shape = base._data.shape
        node._base_dtype = base._data.dtype
    retain = view._grad_node._retain if view._grad_node is not None else None
    view._grad_node = node
    view._nr = nr
    view._rg = True
    if view._retains and retain:
        node._retain = {0: weakref.ref(view)}
