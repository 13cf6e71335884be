"""The mutable layer's bottom floor: grad mode and the other switches, version counters,
saved tensors with their version checks, and the graph's nodes (named like PyTorch's).

Nothing here knows the Tensor: a node reaches tensors only through the `graph` object the
backward engine (``_autograd.py``) hands to ``Node._apply``, so imports go one way:
nodes and versions, then the Tensor (``_tensor.py``), then the op table and views
(``_ops.py``), then the engine (``_autograd.py``).
"""
from __future__ import annotations

import itertools
import os
import re
import sys
import threading
import traceback
import types
import warnings
import weakref
from typing import Any, Callable, NamedTuple

import numpy as np

from .._src.core import Array, engine
from ..numpy import _primitives as NP
from ..numpy._helpers import SLOT
from . import _dtypes as D
from ._device import cpu

__all__ = ["STATE", "PROCESS", "set_anomaly", "set_view_replay", "Version", "Saved", "Node", "AccumulateGrad",
           "RemovableHandle",
           "Spec", "STAND_IN", "RECOMPUTE", "node_class", "version_error", "freed_error",
           "user_frame", "user_site", "site_line", "stand_in", "replay", "AsStridedBackward0", "conj", "fix_array", "InvalidGradient",
           "edge_pair", "InputMetadata", "own_copy"]


class _State(threading.local):
    """The switches: grad mode, inference mode and the mutation policy are per thread (a
    ``no_grad`` block in one thread leaves the others recording, as in PyTorch); anomaly mode
    and its NaN check are process-wide: class attributes, read on the hot path as cheaply as
    the per-thread ones, and set only through `set_anomaly` (``STATE.anomaly = ...`` would
    make a per-thread copy)."""

    anomaly = False
    check_nan = True
    mutation_block = None  # the open allow_mutation_on_saved_tensors block (per thread)
    # whether any thread ever turned view replay on: a view op reads the per-thread switch
    # (about 50 ns) only then
    view_replay_used = False

    def __init__(self) -> None:
        self.grad_enabled = True
        self.inference = False
        self.policy = "torch"
        self.running = None  # in anomaly mode: the node whose backward runs now (a parent)
        self.saved_hooks = []  # (pack, unpack, as_tensor) of saved_tensors_hooks, innermost last
        self.hooks_disabled = None  # disable_saved_tensors_hooks' message while it is active
        self.multithreading = True  # set_multithreading_enabled (nothing here runs on threads
        # of the engine's own; torch's _current_graph_task_execution_order asks for it off)
        # torch.autograd._force_original_view_tracking: views made while it is on remember
        # their view ops, and a write into their storage replays them (their own grad_fn
        # names) instead of one AsStridedBackward0
        self.view_replay = False


def set_view_replay(mode: bool) -> None:
    """View replay on or off in this thread (``torch._C._set_view_replay_enabled``)."""
    if mode:
        _State.view_replay_used = True
    STATE.view_replay = mode


def set_anomaly(enabled: bool, check_nan: bool = True) -> None:
    """Anomaly mode on or off for every thread (as in PyTorch)."""
    _State.anomaly = bool(enabled)
    _State.check_nan = bool(check_nan)


STATE = _State()
# anomaly mode's switches read on the hot paths as ``PROCESS.anomaly``: a class attribute
# read skips the per-thread lookup every attribute of `STATE` costs (about 50 ns)
PROCESS = _State
_seq = itertools.count()
_LAST_SEQ = (1 << 64) - 1  # PyTorch's sequence numbers are unsigned 64-bit
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame(depth: int = 2):
    """(file, line) of the nearest caller outside funcgrad's own files."""
    f = sys._getframe(depth)
    ours = _OURS
    while f is not None:
        name = f.f_code.co_filename
        mine = ours.get(name)  # (a file name's hash is kept by the string: cheaper than
        if mine is None:       # the prefix test on every frame of every recorded op)
            mine = ours[name] = name.startswith(_HERE)
        if not mine:
            return (name, f.f_lineno)
        f = f.f_back
    return ("<unknown>", 0)


_OURS: dict = {}  # file name -> inside funcgrad's package


def user_site(depth: int = 2) -> tuple:
    """`user_frame` for later: ``(code, instruction offset)`` of the nearest caller outside
    funcgrad, turned into ``(file, line)`` by `site_line` only if a message needs it. The hot
    paths record one per saving node: finding the line number at once costs as much again
    as the walk (it decodes the code's line table)."""
    f = sys._getframe(depth)
    ours = _OURS
    while f is not None:
        code = f.f_code
        name = code.co_filename
        mine = ours.get(name)
        if mine is None:
            mine = ours[name] = name.startswith(_HERE)
        if not mine:
            return (code, f.f_lasti)
        f = f.f_back
    return ("<unknown>", 0)


def site_line(site: tuple | None) -> tuple | None:
    """``(file, line)`` of a `user_site` (a ``(file, line)`` pair or None passes through)."""
    if site is None or type(site[0]) is str:
        return site
    code, offset = site
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return (code.co_filename, line if line is not None else 0)
    return (code.co_filename, code.co_firstlineno)



# --- versions ------------------------------------------------------------------------------
WRITES_KEPT = 8  # in-place writes a counter remembers (oldest dropped): what errors explain


class Version:
    """One version counter, shared by a tensor and all its views (and detach()).

    ``writes`` remembers the last in-place writes as ``(op, file, line, version after)``,
    oldest first, so an error can name every write since a tensor was saved."""

    __slots__ = ("value", "writes", "watchers", "inference")

    def __init__(self) -> None:
        self.value = 0
        self.inference = STATE.inference  # made in inference mode: no version tracking
        self.writes = None       # list of (op, file, line, version after), or None
        self.watchers = None     # saved tensors to protect under "strict"/"copy-on-write"

    @property
    def modified_by(self) -> tuple | None:
        """(op, file, line) of the last in-place write, or None."""
        return self.writes[-1][:3] if self.writes else None

    def written(self, op_name: str, where: tuple) -> None:
        """Record an in-place write by `op_name` at `where` (call it before ``value += 1``)."""
        entry = (op_name, where[0], where[1], self.value + 1)
        writes = self.writes
        if writes is None:
            self.writes = [entry]
        else:
            writes.append(entry)
            if len(writes) > WRITES_KEPT:
                del writes[0]

    def writes_since(self, version: int) -> tuple:
        """The remembered writes that took the counter past `version`, oldest first."""
        return tuple(w for w in self.writes or () if w[3] > version)


INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")
INFERENCE_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You "
                     "can make a clone to get a normal tensor before doing inplace update.See "
                     "https://github.com/pytorch/rfcs/pull/17 for more details.")


# --- saved tensors ---------------------------------------------------------------------
class Saved:
    """A tensor a node needs at backward, with the version it had when saved."""

    __slots__ = ("data", "version", "counter", "tensor", "output_node", "owner", "fallback",
                 "packed", "unpack_fn", "view", "edge", "__weakref__")

    def __init__(self, data, counter: Version, tensor=None, output_node=None) -> None:
        if counter.inference and not STATE.inference:
            raise RuntimeError(INFERENCE_SAVED)
        self.data = data
        self.counter = counter
        self.version = counter.value
        self.tensor = tensor            # the input tensor itself (None for an output)
        self.output_node = output_node  # weakref to the node this is output 0 of
        self.owner = output_node        # weakref to the node that saved it (policies only)
        self.fallback = None            # node named when output_node has died
        self.unpack_fn = None           # with saved-tensor hooks: what unpacks `packed`
        if STATE.policy != "torch":
            watchers = counter.watchers
            if watchers is None:
                watchers = counter.watchers = []
            watchers.append(weakref.ref(self))
            if STATE.mutation_block is not None:  # allow_mutation_on_saved_tensors
                STATE.mutation_block.record(self)
        if STATE.saved_hooks:
            self._pack(STATE.saved_hooks[-1])

    def _pack(self, hooks) -> None:
        """Hand the saved tensor to the innermost ``saved_tensors_hooks``' pack hook; what it
        returns is kept, and unpacked at each use (`_ops.unpacked`)."""
        pack, unpack, as_tensor = hooks
        t = self.tensor if self.tensor is not None else as_tensor(self)
        before = t._vc.value
        enabled = STATE.grad_enabled
        STATE.grad_enabled = False  # as PyTorch: pack hooks run with grad mode off
        try:
            packed = pack(t)
        finally:
            STATE.grad_enabled = enabled
        if t._vc.value != before:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook.")
        self.packed = packed
        self.unpack_fn = unpack
        self.remember_edge()

    def remember_edge(self) -> None:
        """Keep the saved input's grad_fn edge of now: a value its unpack hook gives back
        takes the tensor's place in the graph AS SAVED (PyTorch's SavedVariable keeps its
        grad_fn), even if the tensor was written in place since (a new grad_fn)."""
        t = self.tensor
        if t is not None:
            fn = t.grad_fn
            self.edge = None if fn is None else (fn, t._nr)

    def current_grad_fn(self):
        if self.output_node is not None:
            node = self.output_node()
            if node is None and self.fallback is not None:
                node = self.fallback()
            return node
        return self.tensor.grad_fn if self.tensor is not None else None


def _short_name(node) -> str:
    """PyTorch's name in version errors: MulBackward0 -> Mul, ClampBackward1 -> Clamp1."""
    m = re.match(r"^(.*)Backward(\d*)$", node.name())
    if m is None:
        return node.name()
    return m.group(1) + ("" if m.group(2) == "0" else m.group(2))


def version_error(saved: Saved, node: "Node | None", now: int | None = None) -> RuntimeError:
    """PyTorch's error for a saved tensor whose storage was written since (at version `now`,
    by default the counter's value), with notes naming who saved it and who wrote it."""
    data = saved.data
    now = saved.counter.value if now is None else now
    kind = D.from_numpy_dtype(data.dtype).tensor_type
    shape = ", ".join(str(s) for s in data.shape)
    grad_fn = saved.current_grad_fn()
    which = f", which is output 0 of {_short_name(grad_fn)}," if grad_fn is not None else ""
    hint = ("Hint: the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good luck!"
            if STATE.anomaly else
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    first = (f"one of the variables needed for gradient computation has been modified by an "
             f"inplace operation: [torch.{kind} [{shape}]]{which} is at version "
             f"{now}; expected version {saved.version} instead. {hint}")
    # str(error) stays PyTorch's exact message; the details show in the traceback as notes
    err = RuntimeError(first)
    if node is not None:  # (None: saved by torch._C._autograd._make_saved_tensor)
        saver = f"{node.name()}"
        where = node._where
        if where:
            saver += f" at {where[0]}:{where[1]}"
        err.add_note(f"  saved by: {saver} (as version {saved.version})")
    for op, path, line, version in saved.counter.writes_since(saved.version):
        err.add_note(f"  modified by: {op} at {path}:{line} (now version {version})")
    err.add_note("  fix: clone() the tensor before modifying it, use the out-of-place op, "
                 "or run under torch.mutation_policy('copy-on-write')")
    return err


def freed_error() -> RuntimeError:
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward.")


# --- nodes -------------------------------------------------------------------------------
# An entry of a node's ``_next`` (one per input) is None (no gradient flows there), a
# ``(node, output number)`` pair, or, for output 0 of a node (nearly every edge the hot paths
# make), the node itself: no pair is kept per edge. ``_next`` itself is a tuple of entries or,
# for a node with one input whose entry is a node, that node alone, without a 1-tuple; and a
# Python number operand's entry (None) is not stored per node: its class says how many end
# the tuple (``_number_edges``). Every tracked object a graph holds is rescanned at each full
# collection of the cyclic garbage collector: on a long graph of scalar ops that was half the
# time (findings/mgraph.md). Read all entries with ``node._edges()`` and one with `edge_pair`;
# the engine's loops spell both out.
def edge_pair(entry) -> tuple | None:
    """A ``_next`` entry as a ``(node, output number)`` pair (None stays None)."""
    if entry is None or type(entry) is tuple:
        return entry
    return (entry, 0)


class Node:
    """A backward function in the graph (``y.grad_fn``); named like PyTorch's classes."""

    __slots__ = ("_next", "_seq", "_x", "_at", "__weakref__")
    _nout = 1
    _display = None
    _no_formula = False  # PyTorch's NotImplemented node (see _ops.NotImplementedNode)
    # whether `_release` may have something to free: the engine calls it only then (an
    # OpNode keeps the answer per node, in a slot of this name)
    _has_saved = True
    # entries (None) ending the node's edges that `_next` does not store: one for a node of a
    # tensor and a Python number (``x * 2``), whose class says so (see `node_class`)
    _number_edges = ()

    def _init(self, next_edges) -> None:
        self._next = next_edges
        self._seq = next(_seq)
        self._at = None
        if PROCESS.anomaly:
            self._x = _Extra()
            frames = traceback.extract_stack()[:-1]
            while frames and frames[-1].filename.startswith(_HERE):
                frames.pop()  # end the trace at the user's line that made the node
            self._x.stack = traceback.format_list(frames)
            self._x.parent = STATE.running  # made by that node's backward (create_graph)
        else:
            self._x = None

    # hooks, retain_grad and anomaly traces live in one rarely-present `_Extra`
    def _extra(self) -> "_Extra":
        if self._x is None:
            self._x = _Extra()
        return self._x

    _pre_hooks = property(lambda self: self._x.pre_hooks if self._x else None,
                          lambda self, v: setattr(self._extra(), "pre_hooks", v))
    _retain = property(lambda self: self._x.retain if self._x else None,
                       lambda self, v: setattr(self._extra(), "retain", v))
    _hooks = property(lambda self: self._x.hooks if self._x else None,
                      lambda self, v: setattr(self._extra(), "hooks", v))
    _prehooks_fn = property(lambda self: self._x.prehooks_fn if self._x else None,
                            lambda self, v: setattr(self._extra(), "prehooks_fn", v))
    _stack = property(lambda self: self._x.stack if self._x else None)
    # (file, line) where the node was made, for messages (None when not recorded); kept in
    # `_at` as a `user_site` or a (file, line) pair
    _where = property(lambda self: site_line(self._at),
                      lambda self, v: setattr(self, "_at", v))

    def _sequence_nr(self) -> int:
        """The node's place in the order of creation: among nodes ready at once in backward,
        the higher number runs first (leaves' accumulators aside)."""
        return self._seq

    def _set_sequence_nr(self, n) -> None:
        """Change `_sequence_nr` (and so when the node runs among those ready with it)."""
        if not isinstance(n, int):  # (a NumPy integer too: torch's binding takes ints)
            raise TypeError("an integer is required")
        if n < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if n > _LAST_SEQ:
            raise OverflowError("int too big to convert")
        self._seq = n

    def __lt__(self, other) -> bool:
        # two ready nodes given one sequence number (`_set_sequence_nr`) tie in the
        # engine's queue: neither goes first by comparison (heapq then keeps its order)
        return False

    def name(self) -> str:
        return self._display or type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def _edges(self) -> tuple:
        """Every entry of the node's edges, one per input (see ``_next`` above)."""
        nexts = self._next
        if type(nexts) is not tuple:  # a node's only input, output 0 of a node
            nexts = (nexts,)
        return nexts + self._number_edges

    @property
    def next_functions(self) -> tuple:
        return tuple((None, 0) if e is None else edge_pair(e) for e in self._edges())

    @property
    def metadata(self) -> dict:
        """A dict that lives as long as the node (PyTorch's), made at its first read."""
        extra = self._extra()
        if extra.metadata is None:
            extra.metadata = {}
        return extra.metadata

    def register_hook(self, fn: Callable):
        """``fn(grad_inputs, grad_outputs)`` after this node runs; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = {}
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn: Callable):
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._prehooks_fn is None:
            self._prehooks_fn = {}
        return RemovableHandle(self._prehooks_fn, fn)

    def _apply(self, cts: list, graph) -> list:
        """The gradients for the next functions, from the gradients of the outputs `cts`
        (arrays, or tensors with ``graph.create_graph``). `graph` is the backward call's
        `_autograd.Graph`: what a node needs of tensors it asks of it. ``grad_fn(g)`` calls
        this through the engine (``_autograd.call_node``)."""
        raise NotImplementedError

    def _release(self) -> None:
        pass

    def _saved_values(self) -> list:
        """(name, argument position or None, `Saved`) for each tensor this node saved
        (read by ``autograd.graph.saved_tensors``)."""
        return []

    def _check_alive(self) -> None:
        pass

    @property
    def _input_metadata(self) -> tuple:
        """Shape and dtype of each gradient this node takes (its forward outputs)."""
        return tuple(InputMetadata(shape, dtype) for shape, dtype in self._output_specs())

    def _output_specs(self) -> list:
        """(shape, NumPy dtype) of each of the node's forward outputs."""
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '_input_metadata'")


class InputMetadata:
    """``torch._C._autograd._InputMetadata``: what a gradient flowing into a node must be."""

    __slots__ = ("shape", "dtype")
    __module__, __qualname__ = "torch._C._autograd", "_InputMetadata"  # (how PyTorch prints it)
    device = cpu
    is_nested_tensor = False
    is_cpp_nested_tensor = False

    def __init__(self, shape, np_dtype) -> None:
        self.shape = list(shape)  # (a list, as PyTorch gives it)
        self.dtype = D.from_numpy_dtype(np_dtype)


class _Extra:
    __slots__ = ("pre_hooks", "retain", "hooks", "prehooks_fn", "stack", "parent", "metadata",
                 "had_hooks")

    def __init__(self) -> None:
        self.pre_hooks = self.retain = self.hooks = self.prehooks_fn = self.stack = None
        self.parent = self.metadata = None
        # whether the node had post hooks when it last started running in backward (set by
        # the engine: hooks registered while it runs are given no output gradients, as
        # PyTorch's engine has handed them to the node by then)
        self.had_hooks = False


def warn_forward_traces(node: Node) -> None:
    """Anomaly mode's report on a failing node: where it was made and, for a node made by
    another node's backward, where that one was made, and so on up (torch's warnings). A
    node made outside anomaly mode has no trace to show: torch says so."""
    if not node._stack:
        _report(f"Error detected in {node.name()}. {_NO_TRACE}")
        return
    _report(f"Error detected in {node.name()}. Traceback of forward call that caused the "
            "error:\n" + "".join(node._stack))
    parent = node._x.parent
    while parent is not None:
        if not parent._stack:
            _report(f"Error detected in {parent.name()}. {_NO_TRACE}")
            return
        _report(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                "forward call that induced the previous calculation:\n" + "".join(parent._stack))
        parent = parent._x.parent


_NO_TRACE = ("No forward pass information available. Enable detect anomaly during forward pass "
             "for more information.")


def _report(message: str) -> None:
    """Anomaly mode's report as a warning; where warnings are errors, on stderr instead, so
    the error that failed the node is what propagates (as PyTorch)."""
    try:
        warnings.warn(message, stacklevel=4)
    except Warning:
        sys.stderr.write(message + "\n")


class RemovableHandle:
    """What register_hook returns: ``handle.remove()`` unregisters the hook."""

    __slots__ = ("table", "key")
    _ids = itertools.count()

    def __init__(self, table: dict, fn: Callable) -> None:
        self.table = table
        self.key = next(self._ids)
        table[self.key] = fn

    def remove(self) -> None:
        self.table.pop(self.key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class AccumulateGrad(Node):
    """The sink of a leaf tensor: accumulates into ``leaf.grad`` (the engine's
    ``Graph.accumulate`` does the sum), then runs the leaf's post-accumulate hooks."""

    __slots__ = ("variable",)
    _display = "torch::autograd::AccumulateGrad"

    def __init__(self, variable) -> None:
        self._init(())
        self._seq = _LAST_SEQ  # (PyTorch's: an accumulator's sequence number is UINT64_MAX)
        self.variable = variable

    def _apply(self, cts, graph):
        if graph.accumulate:
            graph.accumulate_into(self, cts)  # takes cts[0]: the engine may keep it as .grad
            t = self.variable
            if t._post_hooks:
                for hook in list(t._post_hooks.values()):
                    if hook(t) is not None:
                        raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return []

    def _output_specs(self) -> list:
        return [(self.variable._data.shape, self.variable._data.dtype)]


# --- what a node keeps of a value it reads only for its shape and dtype ---------------------
class Spec:
    """A stand-in for a value a rule reads only for its shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype) -> None:
        self.shape = shape
        self.dtype = dtype

    def make(self):
        return stand_in(self.shape, self.dtype)


def stand_in(shape, dtype) -> np.ndarray:
    """A read-only array of `shape` and `dtype` (zeros, no memory): what a rule that reads
    only an argument's shape and dtype gets."""
    key = (shape, dtype)
    found = _STAND_INS.get(key)
    if found is None:
        if len(_STAND_INS) > 4096:
            _STAND_INS.clear()
        found = _STAND_INS[key] = np.broadcast_to(np.zeros((), dtype), shape)
    return found


_STAND_INS: dict = {}
# in `_vals` of `apply1`/`apply2` nodes, a tensor argument the rules do not read: the
# stand-in is made at backward from `_meta` (same position: those nodes put their tensor
# arguments first), so no per-op Spec object is made
STAND_IN = object()
# in `_out`: the rules read the output but PyTorch does not save it; it is recomputed from
# the saved inputs at backward
RECOMPUTE = object()


_CLASSES: dict = {}


# CPython (3.11+) specializes each attribute read and write of a function's bytecode for
# the one class it last saw there; a site that meets objects of several classes falls back to
# the generic lookup (about five times the work) nearly every time. The backward walk meets
# a node of another class (MulBackward0, TanhBackward0, ...) at nearly every step, so every
# read of a node's slots in `OpNode._apply` was a generic one (W1: about 60 a node). The
# functions that read or write a node's slots on the hot paths are therefore copied per node
# class (a base names them in ``_own_copies``; `node_class` copies them) or per op
# (`_ops.Op.record1`): each copy has its own code object, so its own specializations.
def own_copy(fn: Callable) -> Callable:
    """`fn` with a code object of its own (its own inline caches), otherwise the same."""
    copy = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__
    copy.__doc__ = fn.__doc__
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def node_class(name: str, base: type, nout: int | None = None, number: bool = False) -> type:
    """The node class named `name` (``MulBackward0``...) deriving from `base`, made once.
    With `number`: a subclass of it, same name, for nodes whose last operand is a Python
    number: their edges end with that operand's None, which no node stores."""
    key = (name, base, nout, number)
    cls = _CLASSES.get(key)
    if cls is None:
        if number:
            ns: dict = {"__slots__": (), "_number_edges": (None,)}
            parent = node_class(name, base, nout)
        else:
            ns = {"__slots__": ()}
            if nout is not None:
                ns["__slots__"] = ("_nout",)
            parent = base
        for attr in getattr(base, "_own_copies", ()):  # (see `own_copy`)
            ns[attr] = own_copy(getattr(base, attr))
        cls = type(name, (parent,), ns)
        cls.__module__ = "torch.autograd.graph"
        _CLASSES[key] = cls
    return cls


# --- gradients as rules give them ----------------------------------------------------------
def conj(x):
    """The shared rules follow JAX's complex convention (a VJP is the plain transpose);
    PyTorch's gradients are their conjugates, so a node applies conj(rule(conj(ct)))
    (docs/complex.md). Real values, the common case, pass through untouched."""
    if type(x) is tuple:
        return tuple(conj(v) for v in x)
    dtype = getattr(x, "dtype", _FLOAT)
    kind = getattr(dtype, "kind", None)  # None: a Tensor's torch-like dtype
    if kind == "c" or type(x) is complex or (kind is None and dtype.is_complex):
        return engine.conj(x)
    return x


_FLOAT = np.dtype(np.float64)


class InvalidGradient(ValueError):
    """A rule's gradient that no summing over broadcast dimensions brings to its input's
    shape (a value it read changed shape since the forward pass: ``.data`` replaced). The
    engine raises it again as PyTorch's RuntimeError naming the node."""

    def __init__(self, got: tuple, expected: tuple) -> None:
        super().__init__(f"got {list(got)} but expected shape compatible with {list(expected)}")
        self.expected = tuple(expected)


def fix_array(g, shape, np_dtype):
    """A rule's array result summed over broadcast dimensions and cast to the input's dtype
    (done once, here; ``Graph.fix`` does the same for tensors under create_graph)."""
    if type(g) is Array:
        g = g._value
    if type(g) is not np.ndarray:
        g = np.asarray(g)
    if g.shape != shape:
        if g.ndim >= len(shape):
            g = NP._sum_to_shape_impl(g, shape)
            if g.shape != shape:
                raise InvalidGradient(g.shape, shape)
        else:
            g = np.broadcast_to(g, shape)
    if g.dtype != np_dtype:
        if g.dtype.kind == "c" and np_dtype.kind != "c":
            g = g.real  # a real input's gradient is the real part (PyTorch, silently)
        g = g.astype(np_dtype)
    return g


# --- a view's grad_fn after its storage was written ----------------------------------------
def replay(array: np.ndarray, chain) -> np.ndarray:
    """Apply a view's chain of view functions (``(impl, params, op)`` links) to `array`."""
    for fn, params, _ in chain:
        array = fn(array, **params)
    return array


def _across_dtypes(ct, size: int, shape, dtype, chain):
    """`AsStridedBackward0`'s gradient for a view whose chain changes complex to real or back
    (view_as_real, view_as_complex): real and imaginary parts are numbered apart (2k, 2k+1),
    and a complex gradient's parts go to the numbers of the parts it views (PyTorch's
    gradients of view_as_real and view_as_complex)."""
    k = np.arange(size, dtype=np.float64).reshape(shape)
    if np.dtype(dtype).kind == "c":  # a real view of a complex base
        where = replay(2 * k + 2j * k + 1j, chain).astype(np.int64)
        parts = NP.index_add(np.zeros(2 * size, np.real(np.zeros((), dtype)).dtype), ct, where,
                             template=(SLOT,))
        whole = NP.getitem(parts, template=(slice(0, None, 2),)) \
            + NP.getitem(parts, template=(slice(1, None, 2),)) * 1j
        return NP.reshape(whole, shape)
    where = replay(k, chain)  # a complex view of a real base
    flat = NP.index_add(np.zeros(size, dtype), NP.real(ct), where.real.astype(np.int64),
                        template=(SLOT,))
    flat = NP.index_add(flat, NP.imag(ct), where.imag.astype(np.int64), template=(SLOT,))
    return NP.reshape(flat, shape)


class AsStridedBackward0(Node):
    """A view's grad_fn after its storage was written: its slice of the base's gradient.

    One rule for arrays and for create_graph: the element numbers of the base that the view
    shows are found by replaying the view on ``arange``, then the cotangent is scatter-added
    there with the table's ``index_add`` (right for overlapping, expanded views too)."""

    __slots__ = ("_chain", "_base_shape", "_base_dtype")

    def _apply(self, cts, graph):
        ct = graph.lift(cts[0]) if graph.create_graph else cts[0]
        size = int(np.prod(self._base_shape, dtype=np.int64))
        if replay(stand_in(self._base_shape, self._base_dtype), self._chain).dtype.kind \
                != np.dtype(self._base_dtype).kind:
            g = _across_dtypes(ct, size, self._base_shape, self._base_dtype, self._chain)
            return [graph.lower(g) if graph.create_graph else g]
        where = replay(np.arange(size).reshape(self._base_shape), self._chain)
        if tuple(np.shape(ct)) != where.shape:
            ct = NP.broadcast_to(ct, where.shape)
        flat = NP.index_add(np.zeros(size, self._base_dtype), ct, where, template=(SLOT,))
        g = NP.reshape(flat, self._base_shape)
        return [graph.lower(g) if graph.create_graph else g]

    def _output_specs(self) -> list:
        return [(replay(stand_in(self._base_shape, self._base_dtype), self._chain).shape,
                 self._base_dtype)]
