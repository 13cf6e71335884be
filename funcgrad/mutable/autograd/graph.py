"""torch.autograd.graph: the node type of the mutable graph (``y.grad_fn``), gradient edges
(a node and one of its outputs, usable as inputs and outputs of grad and backward),
``increment_version``, and a read-only view of what a node saved (`saved_tensors`, beyond
PyTorch: what tools that explain version errors read)."""
from __future__ import annotations

import abc
import threading
import warnings
import weakref
from typing import Any, Iterable, NamedTuple

import numpy as np

from .. import _dtypes as D
from .._autograd import EXECUTION_ENGINE, current_graph_task_id
from .._C._functions import DelayedError, UndefinedGrad
from .. import _graph
from .._graph import STATE
from .._ops import saved_tensor
from .._policy import MutationPolicyWarning
from .._tensor import Tensor
from .function import FunctionCtx

__all__ = ["Node", "allow_mutation_on_saved_tensors", "saved_tensors_hooks", "disable_saved_tensors_hooks", "save_on_cpu",
           "GradientEdge", "get_gradient_edge", "increment_version", "SavedTensorInfo",
           "saved_tensors", "writes", "register_multi_grad_hook"]


class Node(abc.ABC):
    """What every ``grad_fn`` is (and a custom Function's ``ctx``): as in PyTorch a virtual
    base class, so ``isinstance(y.grad_fn, Node)`` holds while ``Node`` is in no node's mro.

    >>> import funcgrad.mutable as torch
    >>> y = torch.ones(1, requires_grad=True).exp()
    >>> isinstance(y.grad_fn, torch.autograd.graph.Node)
    True
    """

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and issubclass(subclass, (_graph.Node, FunctionCtx, DelayedError,
                                                 UndefinedGrad)):
            return True
        return NotImplemented


def _as_tensor(saved) -> Tensor:
    """A saved output as the pack hook sees it: a tensor whose grad_fn is the saving node."""
    return saved_tensor(saved, saved.output_node())


class saved_tensors_hooks:
    """Inside the block, each tensor an op saves for backward goes through
    ``pack_hook(tensor)``, and what that returns is kept instead; at each use in backward
    ``unpack_hook(packed)`` must give a tensor back (the innermost block's hooks apply; the
    hooks are per thread, as in PyTorch).

    >>> import funcgrad.mutable as torch
    >>> a = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
    ...     y = a * a
    >>> y.sum().backward(); a.grad
    tensor([4., 8.])
    """

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if STATE.hooks_disabled is not None:
            raise RuntimeError(STATE.hooks_disabled)
        STATE.saved_hooks.append((self.pack_hook, self.unpack_hook, _as_tensor))
        return self

    def __exit__(self, *exc) -> None:
        STATE.saved_hooks.pop()


class disable_saved_tensors_hooks:
    """Inside the block, entering `saved_tensors_hooks` fails with `error_message` (as does
    entering this block while such hooks are active).

    >>> import funcgrad.mutable as torch
    >>> with torch.autograd.graph.disable_saved_tensors_hooks("not here"):
    ...     torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
    Traceback (most recent call last):
    RuntimeError: not here
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self):
        if STATE.saved_hooks:
            raise RuntimeError(self.error_message)
        self.prev = STATE.hooks_disabled
        STATE.hooks_disabled = self.error_message
        return self

    def __exit__(self, *exc) -> None:
        STATE.hooks_disabled = self.prev


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in CPU memory: on a CPU-only build they are there already, so the
    hooks hand each tensor through unchanged.

    >>> import funcgrad.mutable as torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> with torch.autograd.graph.save_on_cpu():
    ...     y = a.exp()
    >>> y.sum().backward(); a.grad
    tensor([2.7183, 2.7183])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t, lambda t: t)


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: ``(node, output_nr)``."""

    node: Node
    output_nr: int
    ownership_token: Any = None


# (shape, dtype) of the outputs that get_gradient_edge has seen, per node: what an edge given
# as an output of grad/backward needs to check or make its gradient
_OUTPUT_META: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge of `tensor` now: gradients taken with respect to it later reach this tensor's
    value of this moment, even after in-place writes.

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> torch.autograd.graph.get_gradient_edge(x).node.name()
    'torch::autograd::AccumulateGrad'
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = tensor._edge()
    _OUTPUT_META.setdefault(node, {})[nr] = (tensor._data.shape, tensor._data.dtype)
    return GradientEdge(node, nr)


def edge_output_meta(edge: GradientEdge) -> tuple | None:
    """(shape, numpy dtype) of the output an edge stands for, when known."""
    found = _OUTPUT_META.get(edge.node)
    if found is not None and edge.output_nr in found:
        return found[edge.output_nr]
    variable = getattr(edge.node, "variable", None)  # a leaf's accumulator
    if variable is not None:
        return variable._data.shape, variable._data.dtype
    return None


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter of `tensor` (or of each tensor of an iterable), as an
    in-place write would: for code that writes a tensor's storage behind autograd's back.
    Inference tensors, which keep no version, are skipped.

    >>> import funcgrad.mutable as torch
    >>> t = torch.zeros(2)
    >>> torch.autograd.graph.increment_version(t); t._version
    1
    """
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not t._vc.inference:
            t._vc.value += 1


class _unsafe_preserve_version_counter:
    """Keep the version counters of `tensors` (one tensor or a tuple) as they were on entry:
    in-place writes inside the block leave no trace a saved tensor's check would see. As in
    PyTorch, this can hide a real overwrite and give a silently wrong gradient; use it only
    for writes that autograd must not count.

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(2)
    >>> with torch.autograd._unsafe_preserve_version_counter(x):
    ...     _ = x.mul_(2)
    >>> x._version
    0
    """

    def __init__(self, tensors) -> None:
        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)

    def __enter__(self) -> None:
        self.values = [t._vc.value for t in self.tensors]

    def __exit__(self, *exc) -> None:
        for t, value in zip(self.tensors, self.values):
            t._vc.value = value


_MUTATION = threading.local()  # per thread: is an allow_mutation_on_saved_tensors block open


class allow_mutation_on_saved_tensors:
    """A block in which tensors saved for backward may be modified in place: the saved value
    is kept (copied before the write), so backward computes the gradient of the values
    actually used, as PyTorch's context does. funcgrad's ``mutation_policy("copy-on-write")``
    without its warning; blocks do not nest.

    >>> import funcgrad.mutable as torch
    >>> a = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad
    tensor([2., 4.])
    """

    def __init__(self) -> None:
        # PyTorch's bookkeeping, with its meaning (tests count the entries): one handle per
        # saved tensor at one version (its "tid"), alive while a graph holds a saved record
        # of it; `cloned` maps a handle to the copy kept when that tensor was written
        self.cloned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def __enter__(self) -> "allow_mutation_on_saved_tensors":
        if getattr(_MUTATION, "active", False):
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _MUTATION.active = True
        self._policy = STATE.policy
        STATE.policy = "copy-on-write"
        STATE.mutation_block = self
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore", MutationPolicyWarning)
        return self

    def __exit__(self, *exc) -> None:
        self._warnings.__exit__(*exc)
        STATE.policy = self._policy
        STATE.mutation_block = None
        _MUTATION.active = False
        self.clear()

    def clear(self) -> None:
        """Forget the bookkeeping (done on leaving the block, as PyTorch's)."""
        self.cloned.clear()
        self.tid_to_weakhandle.clear()

    def record(self, saved) -> None:
        """A tensor saved in this block is packed as the handle of that tensor at that
        version (records of the same one share it) and read back through `_unpack` (as
        PyTorch's block does with saved-tensor hooks): only while this block is open."""
        owner = saved.tensor if saved.tensor is not None else saved.counter
        tid = (id(owner), saved.data.__array_interface__["data"][0], saved.version)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = self.tid_to_weakhandle[tid] = _SavedHandle(self, saved.data)
        saved.packed = handle
        saved.unpack_fn = self._unpack
        saved.remember_edge()

    def _unpack(self, handle: "_SavedHandle") -> Tensor:
        if STATE.mutation_block is not self:
            raise AssertionError("Trying to backward outside of the "
                                 "'allow_mutation_on_saved_tensors' contextin which the graph "
                                 "was originally recorded.")
        data = self.cloned.get(handle, handle.data)  # the copy kept before a write, if any
        out = Tensor._wrap(data)
        out._dtype = D.from_numpy_dtype(data.dtype)
        return out


class _SavedHandle:
    """A saved tensor at one version inside an allow_mutation_on_saved_tensors block: what
    its records pack; dies with the last graph holding one (so the block's entries go)."""

    __slots__ = ("block", "data", "__weakref__")

    def __init__(self, block: allow_mutation_on_saved_tensors, data) -> None:
        self.block = weakref.proxy(block)
        self.data = data

    def keep_copy(self, copy) -> None:
        """The tensor is being written (`_policy.on_write`): keep `copy`, its value before,
        once per handle."""
        if self not in self.block.cloned:
            self.block.cloned[self] = copy


class SavedTensorInfo(NamedTuple):
    """One tensor a node saved for backward, as it stands now (read-only).

    ``name``: PyTorch's name (``grad_fn._saved_<name>``: "self", "other", "result", or
    "arg<k>"; "saved<k>" for a custom Function's ``save_for_backward``); ``argument``: its
    position among the op's arguments (None for the result or a Function's tensors);
    ``tensor``: the tensor backward will read; ``saved_version`` / ``version``: its version
    when saved and now (they differ: backward fails); ``saved_by`` / ``saved_at``: the
    node's name and the (file, line) where the op ran; ``writes``: the in-place writes to
    its storage since it was saved, oldest first, as (op, file, line, version after)."""

    name: str
    argument: int | None
    tensor: Tensor
    shape: tuple
    dtype: D.dtype
    saved_version: int
    version: int
    saved_by: str
    saved_at: tuple | None
    writes: tuple

    @property
    def stale(self) -> bool:
        """Written in place since it was saved: backward through its node fails."""
        return self.version != self.saved_version


def saved_tensors(node: Node) -> tuple:
    """What `node` (a ``grad_fn``) saved for backward, as `SavedTensorInfo` records; empty
    for a node that saved no tensor or whose saved tensors were freed by a backward pass.

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x * 1
    >>> z = y * y
    >>> _ = y.add_(1)
    >>> [(s.name, s.saved_version, s.version, s.writes[0][0]) for s in
    ...  torch.autograd.graph.saved_tensors(z.grad_fn)]
    [('self', 0, 1, 'add_'), ('other', 0, 1, 'add_')]
    """
    found = []
    for name, argument, saved in node._saved_values():
        tensor = saved_tensor(saved, node)
        counter = saved.counter
        found.append(SavedTensorInfo(
            name, argument, tensor, tuple(np.shape(saved.data)),
            D.from_numpy_dtype(np.asarray(saved.data).dtype), saved.version, counter.value,
            node.name(), node._where, counter.writes_since(saved.version)))
    return tuple(found)


def writes(tensor: Tensor) -> tuple:
    """The in-place writes remembered for `tensor`'s storage (shared with its views), oldest
    first, as (op, file, line, version after); the last few only.

    >>> import funcgrad.mutable as torch
    >>> t = torch.zeros(2)
    >>> _ = t.add_(1)
    >>> [w[0] for w in torch.autograd.graph.writes(t)]
    ['add_']
    """
    return tuple(tensor._vc.writes or ())


class _MultiHandle:
    """What `register_multi_grad_hook` returns: ``remove()`` unregisters every hook."""

    def __init__(self, handles: list) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> _MultiHandle:
    """Call `fn` once per backward pass that computes the gradient of any of `tensors`:
    with mode "all", ``fn(grads)`` after the pass, one entry per tensor (None where this
    pass computed none); with mode "any", ``fn(grad)`` with the first one computed.

    >>> import funcgrad.mutable as torch
    >>> a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    >>> seen = []
    >>> h = torch.autograd.graph.register_multi_grad_hook(
    ...     (a, b), lambda gs: seen.append([g is not None for g in gs]))
    >>> (a * 2).sum().backward()
    >>> seen
    [[True, False]]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    # per backward pass (its number: passes may run at once in several threads), that pass's
    # gradients by position; a pass that fails leaves its entry behind, never read again
    pending: dict = {}

    def flush(task_id: int) -> None:
        got = pending.pop(task_id)
        fn(tuple(got.get(k) for k in range(len(tensors))))

    def make_hook(k: int):
        def hook(grad):
            task_id = current_graph_task_id()
            got = pending.get(task_id)
            if mode == "any":
                if got is None:
                    pending[task_id] = {k: grad}
                    EXECUTION_ENGINE.queue_callback(lambda: pending.pop(task_id, None))
                    fn(grad)
                return None
            if got is None:
                got = pending[task_id] = {}
                EXECUTION_ENGINE.queue_callback(lambda: flush(task_id))
            got[k] = grad
            return None
        return hook

    return _MultiHandle([t.register_hook(make_hook(k)) for k, t in enumerate(tensors)
                         if t.requires_grad])
