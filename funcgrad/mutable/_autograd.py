"""The mutable layer's graph: nodes named like PyTorch's, saved tensors with version checks,
grad mode, mutation policies, anomaly mode, and the iterative backward engine."""
from __future__ import annotations

import heapq
import itertools
import os
import re
import sys
import threading
import traceback
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from .._src.core import Array, Primitive, Trace, Tracer, engine
from ..numpy import _primitives as NP

_Tensor = None  # set by _tensor.py once Tensor exists (avoids an import cycle)

__all__ = ["STATE", "Node", "OpNode", "AccumulateGrad", "Saved", "Version", "run_backward",
           "node_class", "freed_error"]


class _Global:
    """Process-wide switches (as in PyTorch): anomaly mode and its NaN check."""

    __slots__ = ("anomaly", "check_nan")

    def __init__(self) -> None:
        self.anomaly = False
        self.check_nan = True


_GLOBAL = _Global()


class _State(threading.local):
    """The switches: grad mode, inference mode and the mutation policy are per thread (a
    ``no_grad`` block in one thread leaves the others recording, as in PyTorch); anomaly mode
    is process-wide."""

    def __init__(self) -> None:
        self.grad_enabled = True
        self.inference = False
        self.policy = "torch"

    anomaly = property(lambda self: _GLOBAL.anomaly,
                       lambda self, value: setattr(_GLOBAL, "anomaly", value))
    check_nan = property(lambda self: _GLOBAL.check_nan,
                         lambda self, value: setattr(_GLOBAL, "check_nan", value))


STATE = _State()
_seq = itertools.count()
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame(depth: int = 2):
    """(file, line) of the nearest caller outside funcgrad's own files."""
    f = sys._getframe(depth)
    while f is not None and f.f_code.co_filename.startswith(_HERE):
        f = f.f_back
    if f is None:
        return ("<unknown>", 0)
    return (f.f_code.co_filename, f.f_lineno)


class Version:
    """One version counter, shared by a tensor and all its views (and detach())."""

    __slots__ = ("value", "modified_by", "watchers", "inference")

    def __init__(self) -> None:
        self.value = 0
        self.inference = STATE.inference  # made in inference mode: no version tracking
        self.modified_by = None  # (op name, file, line) of the last in-place write
        self.watchers = None     # saved tensors to protect under "strict"/"copy-on-write"


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
                 "__weakref__")

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
        if STATE.policy != "torch":
            watchers = counter.watchers
            if watchers is None:
                watchers = counter.watchers = []
            watchers.append(weakref.ref(self))

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


def version_error(saved: Saved, node: "Node") -> RuntimeError:
    data = saved.data
    from ._dtypes import from_numpy_dtype
    kind = from_numpy_dtype(data.dtype).tensor_type
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
             f"{saved.counter.value}; expected version {saved.version} instead. {hint}")
    saver = f"{node.name()}"
    where = getattr(node, "_where", None)
    if where:
        saver += f" at {where[0]}:{where[1]}"
    lines = [first, f"  saved by: {saver} (as version {saved.version})"]
    mod = saved.counter.modified_by
    if mod is not None:
        lines.append(f"  modified by: {mod[0]} at {mod[1]}:{mod[2]} "
                     f"(now version {saved.counter.value})")
    lines.append("  fix: clone() the tensor before modifying it, use the out-of-place op, "
                 "or run under torch.mutation_policy('copy-on-write')")
    # str(error) stays PyTorch's exact message; the details show in the traceback as notes
    err = RuntimeError(first)
    for line in lines[1:]:
        err.add_note(line)
    return err


def freed_error() -> RuntimeError:
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward.")


# --- nodes -------------------------------------------------------------------------------
class Node:
    """A backward function in the graph (``y.grad_fn``); named like PyTorch's classes."""

    __slots__ = ("_next", "_seq", "_x", "_where", "__weakref__")
    _nout = 1
    _display = None
    _no_formula = False  # PyTorch's NotImplemented node (see _ops.NotImplementedNode)

    def _init(self, next_edges) -> None:
        self._next = next_edges
        self._seq = next(_seq)
        self._where = None
        if STATE.anomaly:
            self._x = _Extra()
            self._x.stack = traceback.format_stack()[:-3]
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

    def name(self) -> str:
        return self._display or type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        return tuple(e if e is not None else (None, 0) for e in self._next)

    @property
    def metadata(self) -> dict:
        return {}

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
        raise NotImplementedError

    def __call__(self, *grad_outputs):
        """Run this node's backward on `grad_outputs` (as ``grad_fn(g)`` does in PyTorch):
        one gradient per next function, differentiable when grad mode is on."""
        graph = _Graph(STATE.grad_enabled, False)
        if graph.create_graph:
            cts = list(grad_outputs)
        else:
            cts = [g._data if g is not None else None for g in grad_outputs]
        grads = self._apply(cts, graph)
        out = tuple(_as_tensor(g) for g in grads) + (None,) * (len(self._next) - len(grads))
        return out[0] if len(out) == 1 else out

    def _release(self) -> None:
        pass

    def _check_alive(self) -> None:
        pass


class _Extra:
    __slots__ = ("pre_hooks", "retain", "hooks", "prehooks_fn", "stack")

    def __init__(self) -> None:
        self.pre_hooks = self.retain = self.hooks = self.prehooks_fn = self.stack = None


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
    """The sink of a leaf tensor: accumulates into ``leaf.grad``."""

    __slots__ = ("variable",)
    _display = "torch::autograd::AccumulateGrad"

    def __init__(self, variable) -> None:
        self._init(())
        self.variable = variable

    def _apply(self, cts, graph):
        self._accumulate(cts, graph)
        t = self.variable
        if t._post_hooks and graph.accumulate:
            for hook in list(t._post_hooks.values()):
                if hook(t) is not None:
                    raise RuntimeError("post accumulate grad hooks should return None.")
        return []

    def _accumulate(self, cts, graph) -> None:
        t = self.variable
        g = cts[0]
        if graph.accumulate:
            from ._tensor import Tensor
            if graph.create_graph:
                new = g if isinstance(g, Tensor) else Tensor._wrap(np.array(g, copy=True))
                if t._grad is None:  # PyTorch copies the first gradient: CopyBackwards
                    from ._functions import zeros_like
                    t._grad = zeros_like(new).copy_(new)
                    return
            else:
                new = g._data if isinstance(g, Tensor) else g
            old = t._grad
            if old is None:
                if isinstance(new, Tensor):
                    t._grad = new
                else:
                    new = np.array(new, dtype=t._data.dtype, copy=True)
                    if new.shape != t._data.shape:
                        new = np.broadcast_to(new, t._data.shape).copy()
                    t._grad = Tensor._wrap(new)
                    t._grad._vc.value = graph.summed.get(self, 0)
            elif graph.create_graph:
                t._grad = old + new
            else:
                np.add(old._data, new, out=old._data, casting="unsafe")
                old._vc.value += 1


def _run_tensor_hooks(hooks: dict, g, graph):
    from ._tensor import Tensor
    for fn in list(hooks.values()):
        if g is None:
            if fn(None) is not None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
            continue
        arg = g if isinstance(g, Tensor) else Tensor._wrap(g)
        out = fn(arg)
        if out is not None:
            if not isinstance(out, Tensor):
                raise TypeError(f"hook '{getattr(fn, '__name__', fn)}' returned a "
                                f"{type(out).__name__}, expected a Tensor or None")
            if tuple(out.shape) != tuple(arg.shape):
                raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has changed the size "
                                   "of value")
            if out._dtype is not arg._dtype:
                raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has changed the type "
                                   f"of value (was torch.{arg._dtype.tensor_type} got "
                                   f"torch.{out._dtype.tensor_type})")
            g = out if graph.create_graph else out._data
    return g


class OpNode(Node):
    """A primitive from funcgrad's tables applied to tensors; its rules run at backward.

    ``_vals`` holds, per array argument, a `Saved` tensor (checked against its version), a
    `_Spec` (shape and dtype only: the rule does not read it, PyTorch does not save it) or a
    constant; ``_out`` the saved output, or None (recomputed from saved inputs if a rule
    needs it). ``_meta`` lists (shape, dtype) of each argument with an edge.
    """

    __slots__ = ("_prim", "_params", "_vals", "_out", "_meta", "_has_saved", "_freed")

    def _release(self) -> None:
        if self._has_saved:
            self._freed = True
            self._vals = None
            self._out = None

    def _check_alive(self) -> None:
        if self._freed:
            raise freed_error()

    def _args(self, graph):
        args = []
        for v in self._vals:
            t = type(v)
            if t is Saved:
                if v.counter.value != v.version:
                    raise version_error(v, self)
                if graph.create_graph:
                    args.append(graph.wrap_saved(v, self))
                else:
                    args.append(v.data)
            elif v is _STAND_IN:
                _, shape, dtype = self._meta[len(args)]
                args.append(stand_in(shape, dtype))
            elif t is _Spec:
                args.append(v.make())
            else:
                args.append(v)
        out = self._out
        if type(out) is Saved:
            if out.counter.value != out.version:
                raise version_error(out, self)
            out = graph.wrap_saved(out, self) if graph.create_graph else out.data
        elif type(out) is _Spec:
            out = out.make()
        return args, out

    def _apply(self, cts, graph):
        if self._freed:
            raise freed_error()
        if graph.create_graph:
            args, out = self._args(graph)
        else:
            args = []
            for v in self._vals:
                t = type(v)
                if t is Saved:
                    if v.counter.value != v.version:
                        raise version_error(v, self)
                    args.append(v.data)
                elif v is _STAND_IN:
                    _, shape, dtype = self._meta[len(args)]
                    args.append(stand_in(shape, dtype))
                elif t is _Spec:
                    args.append(v.make())
                else:
                    args.append(v)
            out = self._out
            if out is not None:
                if type(out) is _Spec:
                    out = out.make()
                else:
                    if out.counter.value != out.version:
                        raise version_error(out, self)
                    out = out.data
        prim = self._prim
        params = self._params
        ct = cts[0] if self._nout == 1 else tuple(cts)
        rules = prim.vjps
        if out is None and rules is not None and prim in _READS_OUT:
            out = prim(*args, **params) if params else prim(*args)
        grads = []
        if graph.create_graph:
            ct = _conj(graph.lift(ct))
            lower = graph.lower
            for argnum, shape, dtype in self._meta:
                if argnum is None:
                    grads.append(None)
                    continue
                rule = rules[argnum]
                g = _conj(rule(ct, out, *args, **params) if params else rule(ct, out, *args))
                grads.append(None if g is None else _fix(lower(g), shape, dtype, graph))
            return grads
        ct = _conj(ct)
        for argnum, shape, dtype in self._meta:
            if argnum is None:
                grads.append(None)
                continue
            rule = rules[argnum]
            g = _conj(rule(ct, out, *args, **params) if params else rule(ct, out, *args))
            if type(g) is not np.ndarray or g.shape != shape or g.dtype != dtype:
                if g is not None:
                    g = _fix(g._value if type(g) is Array else g, shape, dtype, graph)
            grads.append(g)
        return grads

    def _needs_recompute(self, prim) -> bool:
        return prim in _READS_OUT

    def __getattr__(self, name: str):
        """PyTorch's names for what a node saved: ``_saved_self``, ``_saved_other``,
        ``_saved_exponent`` (arguments 0, 1, 1) and ``_saved_result`` (the output)."""
        where = _SAVED_NAMES.get(name)
        if where is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if self._freed:
            raise freed_error()
        if where == "out":
            saved = self._out
        else:
            saved = self._vals[where] if where < len(self._vals) else None
        if type(saved) is Saved:
            if saved.tensor is not None:
                return saved.tensor
            return _Graph(True, False).wrap_saved(saved, self).tensor
        if saved is not None and saved is not _STAND_IN and type(saved) is not _Spec:
            return _as_tensor(np.asarray(saved))  # a Python number operand, wrapped
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


_SAVED_NAMES = {"_saved_self": 0, "_saved_other": 1, "_saved_exponent": 1, "_saved_result": "out"}


# primitives whose rules read `out`; for the others a missing output is never recomputed
_READS_OUT = set()


class _Spec:
    """A stand-in for an argument the rule reads only for its shape and dtype."""

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
# arguments first), so no per-op _Spec object is made
_STAND_IN = object()


_CLASSES: dict = {}


def node_class(name: str, base: type = OpNode, nout: int | None = None) -> type:
    """The node class named `name` (``MulBackward0``...), made once."""
    key = (name, base, nout)
    cls = _CLASSES.get(key)
    if cls is None:
        ns: dict = {"__slots__": ()}
        if nout is not None:
            ns["__slots__"] = ("_nout",)
        cls = type(name, (base,), ns)
        cls.__module__ = "torch.autograd.graph"
        _CLASSES[key] = cls
    return cls


# --- graph-recording values for create_graph=True -----------------------------------------
class GraphTracer(Tracer):
    """A tensor seen by a derivative rule during ``create_graph=True``: every primitive the
    rule applies to it is recorded into the mutable graph, so the gradient is differentiable."""

    __slots__ = ("tensor",)

    def __init__(self, trace: "GraphTrace", tensor) -> None:
        self._trace = trace
        self._value = tensor._data
        self.tensor = tensor


class GraphTrace(Trace):
    """Evaluates rules on graph-recording tensors (see `GraphTracer`)."""

    __slots__ = ()
    name = "mutable graph"

    def process(self, prim: Primitive, args, params: dict):
        from ._ops import apply_primitive
        tensors = [a.tensor if type(a) is GraphTracer else (a._value if type(a) is Array else a)
                   for a in args]
        out = apply_primitive(prim, tensors, params)
        if isinstance(out, tuple):
            return tuple(GraphTracer(self, o) for o in out)
        return GraphTracer(self, out)


class _Graph:
    """One backward call: its options and (for create_graph) its trace."""

    __slots__ = ("create_graph", "accumulate", "trace", "summed")

    def __init__(self, create_graph: bool, accumulate: bool) -> None:
        self.summed: dict = {}
        self.create_graph = create_graph
        self.accumulate = accumulate
        self.trace = GraphTrace() if create_graph else None

    def lift(self, ct):
        from ._tensor import Tensor
        if type(ct) is tuple:
            return tuple(self.lift(c) for c in ct)
        if isinstance(ct, GraphTracer):
            return ct
        if not isinstance(ct, Tensor):
            ct = Tensor._wrap(np.asarray(ct))
        return GraphTracer(self.trace, ct)

    def wrap_saved(self, saved: Saved, node: Node):
        from ._tensor import Tensor
        if saved.tensor is not None:
            return GraphTracer(self.trace, saved.tensor)
        out = Tensor._wrap(saved.data)
        out._vc = saved.counter
        out._grad_fn = node
        out._rg = True
        return GraphTracer(self.trace, out)

    def lower(self, g):
        """A rule's result as what the engine carries: raw array, or Tensor with create_graph."""
        if type(g) is GraphTracer:
            return g.tensor
        if type(g) is Array:
            g = g._value
        if self.create_graph:
            from ._tensor import Tensor
            return g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g))
        return g


# --- the engine ----------------------------------------------------------------------------
def _conj(x):
    """The shared rules follow JAX's complex convention (a VJP is the plain transpose);
    PyTorch's gradients are their conjugates, so a node applies conj(rule(conj(ct)))
    (docs/complex.md). Real values, the common case, pass through untouched."""
    if type(x) is tuple:
        return tuple(_conj(v) for v in x)
    dtype = getattr(x, "dtype", _FLOAT)
    kind = getattr(dtype, "kind", None)  # None: a Tensor's torch-like dtype
    if kind == "c" or type(x) is complex or (kind is None and dtype.is_complex):
        return engine.conj(x)
    return x


_FLOAT = np.dtype(np.float64)


def _fix(g, shape, np_dtype, graph):
    """Sum away broadcast dimensions and cast to the input's dtype (done once, here)."""
    if type(g) is np.ndarray and g.shape == shape:
        return g if g.dtype == np_dtype else g.astype(np_dtype)
    Tensor = _Tensor
    if isinstance(g, Tensor):
        if tuple(g._data.shape) != tuple(shape):
            from ._ops import apply_primitive
            g = apply_primitive(NP.sum_to_shape, [g], {"shape": tuple(shape)})
        if g._data.dtype != np_dtype:
            g = g.to(np_dtype)
        return g
    if type(g) is not np.ndarray:
        g = np.asarray(g)
    if g.shape != shape:
        g = NP._sum_to_shape_impl(g, shape) if g.ndim >= len(shape) else np.broadcast_to(g, shape)
    if g.dtype != np_dtype:
        g = g.astype(np_dtype)
    return g


def _add(a, b):
    if a is None:
        return b
    return a + b


def run_backward(roots: list, grads: list, *, retain_graph: bool, create_graph: bool,
                 inputs: list | None = None, accumulate: bool = True,
                 allow_unused: bool = False) -> list | None:
    """Run the graph backward from `roots` (edges) seeded with `grads`.

    Iterative: a priority queue of ready nodes, latest-created first (PyTorch's order).
    With `inputs` (edges), returns the gradient reaching each of them instead of (or, for
    ``backward(inputs=...)``, besides) accumulating into leaves.
    """
    # backward runs with grad mode equal to create_graph, as in PyTorch
    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    try:
        return _run(roots, grads, retain_graph, create_graph, inputs, accumulate)
    finally:
        STATE.grad_enabled = prev_mode


def _priority(node, pushes) -> int:
    """Ready-queue order: leaves' accumulators first (in the order they became ready), then
    the latest-created node. Keys are unique, so nodes themselves are never compared."""
    return next(pushes) - _FIRST if type(node) is AccumulateGrad else -node._seq


_FIRST = 1 << 62


def _run(roots, grads, retain_graph, create_graph, inputs, accumulate):
    graph = _Graph(create_graph, accumulate)
    pushes = itertools.count()
    # 1. discover the reachable graph, counting how many edges enter each node
    deps: dict = {}
    stack = []
    for e in roots:
        if e is not None and e[0] not in deps:
            deps[e[0]] = 0
            stack.append(e[0])
    order = []
    while stack:
        node = stack.pop()
        order.append(node)
        for e in node._next:
            if e is None:
                continue
            nxt = e[0]
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    captures = None
    needed = None
    if inputs is not None:
        captures = {}
        for k, e in enumerate(inputs):
            if e is not None:
                captures.setdefault(e, []).append(k)
        # only nodes from which some input is reachable need to run
        targets = {e[0] for e in captures}
        needed = set()
        for node in _postorder(order, deps):
            if node in targets or any(e is not None and e[0] in needed for e in node._next):
                needed.add(node)
        # a node runs only if some input lies beyond it; an input's own node is reached (its
        # tensor hooks run, its gradient is captured) but not run, as in PyTorch
        needed = {node: any(e is not None and e[0] in needed for e in node._next)
                  for node in needed}
    results = [None] * (len(inputs) if inputs is not None else 0)
    # 2. seed the buffers
    buffers: dict = {}
    for e, g in zip(roots, grads):
        if e is None:
            continue
        buf = buffers.get(e[0])
        if buf is None:
            buf = buffers[e[0]] = [None] * e[0]._nout
        buf[e[1]] = _add(buf[e[1]], g)
    ready = []
    pushed = set()
    for e in roots:
        if e is not None and deps[e[0]] == 0 and e[0] not in pushed:
            pushed.add(e[0])
            heapq.heappush(ready, (_priority(e[0], pushes), e[0]))
    # 3. walk. When a node makes exactly one node ready and nothing else waits, that node
    # runs next without going through the heap (chains, the common case, never touch it).
    heappop, heappush = heapq.heappop, heapq.heappush
    check_nan = STATE.anomaly and STATE.check_nan and not create_graph
    following = None
    while True:
        if following is not None:
            node = following
            following = None
        elif ready:
            node = heappop(ready)[1]
        else:
            break
        buf = buffers.pop(node, None) or [None] * node._nout
        run = True
        if node._x is not None or captures is not None or type(node) is AccumulateGrad:
            buf, run = _before_node(node, buf, graph, captures, results, needed, accumulate)
        grads_out = None
        if run:
            if buf[0] is not None or (node._nout > 1 and any(b is not None for b in buf)):
                try:
                    grads_out = node._apply(buf, graph)
                except Exception:
                    if STATE.anomaly and node._stack:
                        warnings.warn(f"Error detected in {node.name()}. Traceback of forward "
                                      "call that caused the error:\n" + "".join(node._stack),
                                      stacklevel=2)
                    raise
                if node._x is not None and node._x.hooks:
                    grads_out = _after_node(node, grads_out, buf, create_graph)
            if not retain_graph:
                node._release()
        del buf
        k = 0
        for e in node._next:
            if e is not None:
                nxt = e[0]
                g = grads_out[k] if grads_out is not None else None
                if g is not None:
                    if check_nan and np.isnan(g).any():
                        raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                           f"{_ordinal(k)} output.")
                    b = buffers.get(nxt)
                    if b is None:
                        b = buffers[nxt] = [None] * nxt._nout
                    nr = e[1]
                    if b[nr] is None:
                        b[nr] = g
                    else:
                        b[nr] = b[nr] + g
                        if type(nxt) is AccumulateGrad:  # PyTorch adds in place: a version
                            graph.summed[nxt] = graph.summed.get(nxt, 0) + 1
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    if following is not None:
                        heappush(ready, (_priority(following, pushes), following))
                        following = nxt
                    elif ready:
                        heappush(ready, (_priority(nxt, pushes), nxt))
                    else:
                        following = nxt
            k += 1
        if following is not None and ready:
            heappush(ready, (_priority(following, pushes), following))
            following = None
    if inputs is None:
        return None
    return results


def _before_node(node, buf, graph, captures, results, needed, accumulate):
    """Tensor hooks, retain_grad, captures for autograd.grad: what happens before a node runs."""
    create_graph = graph.create_graph
    if needed is not None and node not in needed:
        return buf, False  # off every path to the inputs: PyTorch does not run it, nor its hooks
    # as PyTorch, a reached node calls its tensor hooks even for outputs that got no gradient
    if type(node) is AccumulateGrad:
        if node.variable._hooks:
            buf[0] = _run_tensor_hooks(node.variable._hooks, buf[0], graph)
    if node._pre_hooks:
        for nr, hooks in node._pre_hooks.items():
            if hooks:
                buf[nr] = _run_tensor_hooks(hooks, buf[nr], graph)
    runs = needed is None or needed[node]
    if node._prehooks_fn and runs:
        for fn in list(node._prehooks_fn.values()):
            out = fn(tuple(_as_tensor(b) for b in buf))
            if out is not None:
                buf = [None if o is None else (o if create_graph else o._data) for o in out]
    if node._retain:
        for nr, ref in node._retain.items():
            t = ref()
            if t is not None and buf[nr] is not None:
                _retain_grad_into(t, buf[nr], create_graph)
    if captures is not None:
        for nr in range(node._nout):
            ks = captures.get((node, nr))
            if ks:
                for k in ks:
                    results[k] = _add(results[k], buf[nr])
    if type(node) is AccumulateGrad and not accumulate:
        return buf, False
    return buf, runs


def _after_node(node, grads_out, buf, create_graph):
    outs = tuple(_as_tensor(g) for g in grads_out)
    for fn in list(node._hooks.values()):
        new = fn(outs, tuple(_as_tensor(b) for b in buf))
        if new is not None:
            outs = tuple(new)
    return [None if o is None else (o if create_graph else o._data) for o in outs]


def _ordinal(k: int) -> str:
    return f"{k}th"


def _postorder(order, deps):
    """Nodes ordered so that every node comes after all nodes it points to."""
    seen = set()
    out = []
    for root in order:
        if root in seen:
            continue
        stack = [(root, iter(root._next))]
        seen.add(root)
        while stack:
            node, it = stack[-1]
            advanced = False
            for e in it:
                if e is not None and e[0] not in seen:
                    seen.add(e[0])
                    stack.append((e[0], iter(e[0]._next)))
                    advanced = True
                    break
            if not advanced:
                stack.pop()
                out.append(node)
    return out


def _as_tensor(g):
    from ._tensor import Tensor
    if g is None or isinstance(g, Tensor):
        return g
    return Tensor._wrap(np.asarray(g))


def _retain_grad_into(t, g, create_graph):
    from ._tensor import Tensor
    if t._grad is None:
        t._grad = g if isinstance(g, Tensor) and create_graph else Tensor._wrap(
            np.array(g._data if isinstance(g, Tensor) else g, copy=True))
    else:
        t._grad = t._grad + (g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g)))
