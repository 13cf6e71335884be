"""The backward engine of the mutable layer: `run_backward` walks the graph of nodes from
its roots, iteratively, in PyTorch's order, running tensor hooks, retain_grad, captures for
``autograd.grad`` and accumulation into leaves; with ``create_graph=True`` the rules run on
`GraphTracer` values so every primitive they apply is recorded as a node.

Layer 4, the top of the mutable core: it imports the graph (`_graph`), the Tensor
(`_tensor`) and the op table (`_ops`); nothing of those imports it. It gives every node its
``__call__`` (``grad_fn(g)``), which needs the engine.
"""
from __future__ import annotations

import heapq
import itertools
import os
import sys
import threading
import warnings

import numpy as np

from .._src.core import Array, Primitive, Trace, Tracer
from ..numpy import _primitives as NP
from ._graph import (STATE, AccumulateGrad, InvalidGradient, Node, RemovableHandle, Saved,
                     Version, edge_pair, freed_error, node_class, version_error,
                     warn_forward_traces)
from ._ops import CLONE, COPY, OpNode, apply, apply_primitive, inplace
from ._tensor import OWN_DTYPE, Tensor

__all__ = ["STATE", "Node", "OpNode", "AccumulateGrad", "Saved", "Version", "RemovableHandle",
           "run_backward", "node_class", "freed_error", "version_error", "Graph", "call_node",
           "EXECUTION_ENGINE", "GraphTask", "current_graph_task", "current_graph_task_id",
           "current_autograd_node", "will_engine_execute_node",
           "current_graph_task_execution_order"]


# --- one backward call -------------------------------------------------------------------------
class Graph:
    """One backward call: its options, (for create_graph) its trace, and what nodes ask of
    tensors while they run (they know no Tensor: see `_graph`)."""

    __slots__ = ("create_graph", "accumulate", "trace", "summed")

    def __init__(self, create_graph: bool, accumulate: bool) -> None:
        self.summed: dict = {}
        self.create_graph = create_graph
        self.accumulate = accumulate
        self.trace = GraphTrace() if create_graph else None

    def lift(self, ct):
        """A gradient or saved tensor as a value rules can record on (create_graph only)."""
        if type(ct) is tuple:
            return tuple(self.lift(c) for c in ct)
        if isinstance(ct, GraphTracer):
            return ct
        if not isinstance(ct, Tensor):
            ct = Tensor._wrap(np.asarray(ct))
        return GraphTracer(self.trace, ct)

    def lower(self, g):
        """A rule's result as what the engine carries: raw array, or Tensor with create_graph."""
        if type(g) is GraphTracer:
            return g.tensor
        if type(g) is Array:
            g = g._value
        if self.create_graph:
            return g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g))
        return g

    def fix(self, g: Tensor, shape: tuple, np_dtype) -> Tensor:
        """A gradient tensor summed over broadcast dimensions and cast to the input's dtype,
        recorded (create_graph's `fix_array`)."""
        if tuple(g._data.shape) != tuple(shape):
            prim = NP.sum_to_shape if g._data.ndim >= len(shape) else NP.broadcast_to
            got = g._data.shape
            g = apply_primitive(prim, [g], {"shape": tuple(shape)})
            if tuple(g._data.shape) != tuple(shape):
                raise InvalidGradient(got, shape)
        if g._data.dtype != np_dtype:
            g = apply_primitive(NP.astype, [g], {"dtype": np_dtype})
        return g

    def accumulate_into(self, node: AccumulateGrad, cts: list) -> None:
        """Add the gradient ``cts[0]`` into the leaf's ``.grad`` as PyTorch's AccumulateGrad
        does: the first gradient is taken as it is when nothing else holds it (else copied),
        later ones are added in place (out of place under create_graph). Afterwards
        ``cts[0]`` is what the node's post hooks see: ``.grad`` itself when it was taken."""
        g = cts[0]
        cts[0] = None  # from here this frame may hold the gradient's last reference
        t = node.variable
        old = t._grad
        if self.create_graph:
            new = g if isinstance(g, Tensor) else Tensor._wrap(np.array(g, copy=True))
            if old is None and not _dense(t._data):
                # PyTorch clones the first gradient into row-major order: CloneBackward0
                t._grad = apply(CLONE, (new,))
                if not t._grad._data.flags.c_contiguous:
                    t._grad._data = np.ascontiguousarray(t._grad._data)
            elif old is None:  # else copies it into the leaf's layout: CopyBackwards
                copy = _grad_buffer(t._data, new._data.dtype)
                copy.fill(0)
                copy = Tensor._wrap(copy)
                t._grad = _copy_into(copy, new)
            else:
                t._grad = old + new
            cts[0] = g
            return
        new = g._data if isinstance(g, Tensor) else g
        del g
        if old is None:
            if _stealable(new, t._data) and t._grad_dtype is OWN_DTYPE:
                t._grad = Tensor._wrap(new)
                cts[0] = t._grad
            else:
                cts[0] = new
                out = _grad_buffer(t._data, t._grad_np_dtype(new.dtype))
                try:  # (broadcasts a gradient to the leaf's shape, as torch's copy does)
                    np.copyto(out, new, casting="unsafe")
                except ValueError:
                    raise _leaf_shape_error(t, new.shape, "the leaf") from None
                t._grad = Tensor._wrap(out)
            t._grad._vc.value = self.summed.get(node, 0)
        else:
            try:
                np.add(old._data, new, out=old._data, casting="unsafe")
            except ValueError:
                raise _leaf_shape_error(old, new.shape, "the leaf's .grad") from None
            old._vc.value += 1
            cts[0] = new


def _leaf_shape_error(t: Tensor, shape: tuple, what: str) -> RuntimeError:
    """A gradient that fits neither the leaf nor its .grad: the leaf's .data was given
    another shape between the forward pass and backward, or since .grad was made."""
    return RuntimeError(
        f"AccumulateGrad: the gradient of shape {list(shape)} does not fit {what}, of shape "
        f"{list(t._data.shape)}: a tensor of the forward pass (this leaf, or one a node on "
        "the way saved) had its .data replaced by a tensor of another shape after the forward "
        "pass used it (or after .grad was made), and backward computes the gradient of the "
        "forward pass that was run. Keep .data's shape, or set .grad to None and run the "
        "forward pass again after the change.")


def _stealable(new, like: np.ndarray) -> bool:
    """Whether gradient `new` can become ``.grad`` without a copy, as PyTorch's
    AccumulateGrad steals a gradient no one else holds: an array owning its memory, of the
    leaf's shape, dtype and layout (`_grad_buffer`'s), writable, and referenced only by the
    caller's local name."""
    if type(new) is not np.ndarray or new.base is not None or new.shape != like.shape:
        return False
    if new.strides != like.strides and not (new.flags.c_contiguous and not _dense(like)):
        return False
    flags = new.flags  # (a new flags object at each read; it holds a reference to `new`)
    if new.dtype != like.dtype or not flags.writeable:
        return False
    del flags
    return sys.getrefcount(new) <= _UNSHARED


def _grad_buffer(like: np.ndarray, dtype) -> np.ndarray:
    """An empty array for a leaf's first gradient, laid out as PyTorch's AccumulateGrad lays
    it: with the leaf's strides when the leaf is dense (channels_last, a transposed leaf),
    row-major when it has gaps or overlaps."""
    if like.flags.c_contiguous or not _dense(like):
        return np.empty(like.shape, dtype)
    return np.empty_like(like, dtype=dtype)  # (order K: the leaf's order of dimensions)


def _dense(a: np.ndarray) -> bool:
    """Whether `a`'s elements fill its memory span without gaps or overlaps (PyTorch's
    non-overlapping and dense), in some order of its dimensions (size-1 ones ignored)."""
    step = a.itemsize
    for stride, size in sorted((st, n) for st, n in zip(a.strides, a.shape) if n != 1):
        if stride != step:
            return False
        step *= size
    return True


# references to an unshared gradient seen from `_stealable`: the caller's local, this
# function's argument, and getrefcount's own
_UNSHARED = 3


def _copy_into(dest: Tensor, src: Tensor) -> Tensor:
    """``dest.copy_(src)`` for tensors of one shape and dtype, recorded (CopyBackwards)."""
    return inplace(COPY, dest, (src,), compute=_second)


def _second(_, value):
    return value


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
        tensors = [a.tensor if type(a) is GraphTracer else (a._value if type(a) is Array else a)
                   for a in args]
        out = apply_primitive(prim, tensors, params)
        if isinstance(out, tuple):
            return tuple(GraphTracer(self, o) for o in out)
        return GraphTracer(self, out)


def call_node(self: Node, *grad_outputs):
    """Run a node's backward on `grad_outputs` (as ``grad_fn(g)`` does in PyTorch): one
    gradient per next function, differentiable when grad mode is on."""
    if len(grad_outputs) != self._nout:
        raise TypeError(f"expected {self._nout} arguments, got {len(grad_outputs)} instead")
    graph = Graph(STATE.grad_enabled, False)
    if graph.create_graph:
        cts = list(grad_outputs)
    else:
        cts = [g._data if g is not None else None for g in grad_outputs]
    grads = self._apply(cts, graph)
    out = tuple(_as_tensor(g) for g in grads) + (None,) * (len(self._edges()) - len(grads))
    return out[0] if len(out) == 1 else out


# Calling a node runs the engine, which sits above the nodes: the engine gives nodes their call.
Node.__call__ = call_node


def _run_tensor_hooks(hooks: dict, g, graph):
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



def _add(a, b):
    if a is None:
        return b
    return a + b


def run_backward(roots: list, grads: list, *, retain_graph: bool, create_graph: bool,
                 inputs: list | None = None, accumulate: bool = True,
                 allow_unused: bool = False, run_inputs: bool = False) -> list | None:
    """Run the graph backward from `roots` (edges) seeded with `grads`.

    Iterative: a priority queue of ready nodes, latest-created first (PyTorch's order).
    With `inputs` (edges), returns the gradient reaching each of them instead of (or, for
    ``backward(inputs=...)``, besides) accumulating into leaves; `run_inputs` (backward's
    way) runs the inputs' own nodes too, hooks included, where ``grad`` stops before them.
    """
    if len(_TASKS.stack) >= REENTRANT_DEPTH:
        # a backward nested in backward (a custom Function's backward calling backward) this
        # deep continues in a fresh thread, with a fresh Python stack, as PyTorch's engine
        # does, so re-entrant depth is not bounded by the recursion limit
        return _in_fresh_thread(run_backward, roots, grads, retain_graph=retain_graph,
                                create_graph=create_graph, inputs=inputs, accumulate=accumulate,
                                allow_unused=allow_unused, run_inputs=run_inputs)
    # backward runs with grad mode equal to create_graph, as in PyTorch; like PyTorch's graph
    # task it works on a copy of the saved-tensor hooks stack (hooks entered or exited by code
    # running in backward are gone afterwards)
    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    prev_hooks = STATE.saved_hooks
    STATE.saved_hooks = prev_hooks.copy()
    task = GraphTask(inputs is not None)
    task.keep_graph = retain_graph
    callbacks = task.callbacks
    _TASKS.stack.append(task)
    try:
        # a backward pass computes nan and inf silently, as PyTorch's does (NumPy would warn
        # from rules and custom backwards whatever warning filters a program put in front)
        with np.errstate(all="ignore"):
            try:
                found = _run(task, roots, grads, retain_graph, create_graph, inputs,
                             accumulate, run_inputs)
            except ValueError as exc:
                node = _failed_node(exc)
                if node is None:  # (raised by user code the walk called: a hook, a backward)
                    raise
                raise RuntimeError(_node_failure(node, exc)) from exc
        # callbacks queued during the pass run once it is done, in order (one may queue more)
        k = 0
        while k < len(callbacks):
            callbacks[k]()
            k += 1
        return found
    finally:
        _TASKS.stack.pop()
        # a record kept past its pass (by a closure, a checkpoint frame) holds no graph
        task.roots, task.reachable, task.needed = (), {}, None
        STATE.grad_enabled = prev_mode
        STATE.saved_hooks = prev_hooks


_OWN_CODE = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
             os.path.dirname(os.path.abspath(np.__file__)))


def _failed_node(exc: ValueError):
    """The node whose backward raised `exc` (a NumPy error: shapes that do not fit), when
    funcgrad's or NumPy's own code raised it; None when user code run by the walk did (a
    hook, a custom Function's backward, an unpack hook): that error is the user's own."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code is not _RUN_CODE:
        tb = tb.tb_next
    if tb is None:
        return None
    node = tb.tb_frame.f_locals.get("node")
    tb = tb.tb_next
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_OWN_CODE):
            return None
        tb = tb.tb_next
    return node


def _node_failure(node, exc: ValueError) -> str:
    """Torch's class (RuntimeError) for a NumPy error inside a node's backward, saying which
    node failed and, when the cause is visible, which of its inputs changed shape since the
    forward pass (``.data`` given a tensor of another shape: torch fails there too)."""
    if isinstance(exc, InvalidGradient):  # (torch's validate_outputs message)
        at = [argnum for argnum, shape, _ in getattr(node, "_meta", None) or ()
              if argnum is not None and tuple(shape) == exc.expected]
        where = f" at index {at[0]}" if len(at) == 1 else ""
        return f"Function {node.name()} returned an invalid gradient{where} - {exc}"
    text = f"Function {node.name()} failed in backward: {exc}."
    vals = getattr(node, "_vals", None)
    for argnum, shape, _ in getattr(node, "_meta", None) or ():
        if argnum is None or vals is None:
            continue
        if type(vals) is tuple:
            saved = vals[argnum] if argnum < len(vals) else None
            t = saved.tensor if type(saved) is Saved else None
        else:
            t = vals.tensor if type(vals) is Saved else vals if argnum == 0 else None
        if isinstance(t, Tensor) and tuple(t._data.shape) != tuple(shape):
            return (f"{text} Its input {argnum} had shape {list(shape)} in the forward pass "
                    f"but now has shape {list(t._data.shape)}: its .data was replaced by a "
                    "tensor of another shape, and backward computes the gradient of the "
                    "forward pass that was run. Keep .data's shape, or run the forward pass "
                    "again after the change.")
    return text


REENTRANT_DEPTH = 40  # nested backward calls a thread runs before handing on to a new one


def _in_fresh_thread(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run in a new thread that starts with this thread's modes
    (grad mode, inference mode, policy...); its exception, if any, re-raised here."""
    modes = dict(vars(STATE))
    found: list = [None, None]

    def body() -> None:
        vars(STATE).update(modes)
        try:
            found[0] = fn(*args, **kwargs)
        except BaseException as exc:  # handed back to the waiting thread
            found[1] = exc

    worker = threading.Thread(target=body, name="funcgrad-reentrant-backward")
    worker.start()
    worker.join()
    if found[1] is not None:
        raise found[1]
    return found[0]


class GraphTask:
    """One backward pass running: its number (torch's graph task id, process-wide), whether
    it runs toward chosen inputs (grad, backward(inputs=...)) and the callbacks queued for
    its end."""

    __slots__ = ("id", "partial", "callbacks", "roots", "reachable", "needed", "accumulate",
                 "keep_graph")
    _ids = itertools.count()

    def __init__(self, partial: bool) -> None:
        self.id = next(GraphTask._ids)
        self.partial = partial
        self.callbacks: list = []
        # set by the walk once it has discovered the graph, for the questions hooks may ask
        # (`will_engine_execute_node`, `current_graph_task_execution_order`): the root edges,
        # the nodes reachable from them, and (toward chosen inputs) the nodes that matter
        self.roots: list = []
        self.reachable: dict = {}
        self.needed: dict | None = None
        self.accumulate = True


class _Tasks(threading.local):
    """Per thread, the backward passes running (innermost last)."""

    def __init__(self) -> None:
        self.stack: list = []


_TASKS = _Tasks()


def current_graph_task() -> GraphTask | None:
    """The backward pass running in this thread (innermost), or None outside any."""
    stack = _TASKS.stack
    return stack[-1] if stack else None


def current_graph_task_keep_graph() -> bool:
    """``torch._C._autograd._get_current_graph_task_keep_graph()``: whether the backward pass
    running in this thread keeps its graph (retain_graph); True outside any, as torch's."""
    task = current_graph_task()
    return True if task is None else task.keep_graph


def current_graph_task_id() -> int:
    """``torch._C._current_graph_task_id()``: the number of the backward pass running in
    this thread (innermost), -1 outside any."""
    task = current_graph_task()
    return -1 if task is None else task.id


def current_autograd_node() -> Node | None:
    """``torch._C._current_autograd_node()``: the node whose backward (or whose hooks) runs
    now in this thread, None outside a backward pass.

    Read off the innermost frame of the walk (`_run`'s local ``node``) rather than recorded
    per node: the question is rare, the walk is the hot path."""
    if not _TASKS.stack:
        return None
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is _RUN_CODE:
            return frame.f_locals.get("node")
        frame = frame.f_back
    return None  # (the pass's end-of-pass callbacks run after the walk)


def will_engine_execute_node(node) -> bool:
    """``torch._C._will_engine_execute_node(node)``, asked during a backward pass: whether
    this pass runs `node` (toward chosen inputs, whether some input lies beyond it)."""
    if not isinstance(node, Node):
        raise RuntimeError("_will_engine_execute_node expects an grad_fn, but got "
                           + type(node).__name__)
    task = current_graph_task()
    if task is None:
        raise RuntimeError("_get_should_execute_nodes should only be called during the "
                           "backward pass")
    if task.needed is None:
        return node in task.reachable
    if node not in task.needed:
        return False
    if type(node) is AccumulateGrad and not task.accumulate:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not "
                           "supported.")
    return True


def current_graph_task_execution_order() -> list:
    """``torch._C._current_graph_task_execution_order()``: the nodes the backward pass
    running in this thread runs, in the order it runs them (its walk replayed from the
    roots on fresh edge counts)."""
    task = current_graph_task()
    if task is None:
        raise RuntimeError("_current_graph_task_execution_order should only be called during "
                           "the backward pass")
    if STATE.multithreading:
        raise RuntimeError(
            "get_current_graph_task_execution_order expects the current backward to be "
            "executed with multithreading disabled, e.g. by running:\n\n"
            ">>> with torch.autograd.set_multithreading_enabled(False):\n"
            "...     torch.autograd.grad(...)\n")
    deps = _count_edges(task.roots)
    pushes = itertools.count()
    ready = [(_priority(node, pushes), node) for node in deps if deps[node] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, node = heapq.heappop(ready)
        if task.needed is None or node in task.needed:
            order.append(node)
        for e in node._edges():
            if e is None:
                continue
            nxt = edge_pair(e)[0]
            deps[nxt] -= 1
            if not deps[nxt]:
                heapq.heappush(ready, (_priority(nxt, pushes), nxt))
    return order


class ExecutionEngine:
    """``torch.autograd.Variable._execution_engine``: ``queue_callback(fn)`` runs `fn` once
    the backward pass in progress (in this thread) has finished."""

    def queue_callback(self, callback) -> None:
        task = current_graph_task()
        if task is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        task.callbacks.append(callback)


EXECUTION_ENGINE = ExecutionEngine()


def _priority(node, pushes) -> int:
    """Ready-queue order: leaves' accumulators first (in the order they became ready), then
    the latest-created node. Keys are unique, so nodes themselves are never compared."""
    return next(pushes) - _FIRST if type(node) is AccumulateGrad else -node._seq


_FIRST = 1 << 62


def _count_edges(roots, order: list | None = None) -> dict:
    """The graph reachable from the root edges: for each node, how many edges enter it.
    `order`, if given, receives the nodes in the order they are discovered."""
    deps: dict = {}
    stack = []
    for e in roots:
        if e is not None and e[0] not in deps:
            deps[e[0]] = 0
            stack.append(e[0])
    while stack:
        node = stack.pop()
        if order is not None:
            order.append(node)
        nexts = node._next
        if type(nexts) is not tuple:  # a node's only input (see `_graph.Node`)
            nexts = (nexts,)
        for e in nexts:
            if e is None:
                continue
            nxt = e[0] if type(e) is tuple else e  # (a bare node: its output 0)
            count = deps.get(nxt)
            if count is None:
                deps[nxt] = 1
                stack.append(nxt)
            else:
                deps[nxt] = count + 1
    return deps


def _run(task, roots, grads, retain_graph, create_graph, inputs, accumulate, run_inputs):
    graph = Graph(create_graph, accumulate)
    pushes = itertools.count()
    # 1. discover the reachable graph, counting how many edges enter each node
    order = [] if inputs is not None else None  # (visiting order: for `inputs` only)
    deps = _count_edges(roots, order)
    task.roots = roots
    task.reachable = deps  # (its counts fall during the walk; its keys stay)
    task.accumulate = accumulate
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
            if node in targets or any(e is not None and edge_pair(e)[0] in needed
                                      for e in node._edges()):
                needed.add(node)
        # a node runs only if some input lies beyond it; an input's own node is reached (its
        # tensor hooks run, its gradient is captured) but not run, as in PyTorch
        needed = {node: (run_inputs and node in targets)
                  or any(e is not None and edge_pair(e)[0] in needed for e in node._edges())
                  for node in needed}
        task.needed = needed
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
    ready = []  # heap of (priority, node, its gradient buffer)
    for e in roots:
        if e is not None and deps[e[0]] == 0 and e[0] in buffers:
            heapq.heappush(ready, (_priority(e[0], pushes), e[0], buffers.pop(e[0])))
    # 3. walk. A node's gradient buffer waits in `buffers` until every edge into the node has
    # been followed; then it goes with the node: into the heap's entry, or, when the node is
    # the only one ready, to `following`, which runs next (chains, the common case, touch
    # neither the heap nor, when one edge enters a node, the dict).
    heappop, heappush = heapq.heappop, heapq.heappush
    anomaly = STATE.anomaly
    check_nan = anomaly and STATE.check_nan and not create_graph
    following = following_buf = None
    while True:
        if following is not None:
            node, buf = following, following_buf
            following = following_buf = None
        elif ready:
            _, node, buf = heappop(ready)
        else:
            break
        run = True
        if node._x is not None or captures is not None:
            buf, run = _before_node(node, buf, graph, captures, results, needed, accumulate)
        elif type(node) is AccumulateGrad:  # (`_before_node`'s part for a plain leaf sink)
            if node.variable._hooks:
                buf, run = _before_node(node, buf, graph, captures, results, needed, accumulate)
            elif not accumulate:
                run = False
        grads_out = None
        if run:
            if buf[0] is not None or (node._nout > 1 and any(b is not None for b in buf)):
                if anomaly:
                    grads_out = _apply_watched(node, buf, graph, check_nan)
                else:
                    grads_out = node._apply(buf, graph)
                if node._x is not None and node._x.hooks:
                    grads_out = _after_node(node, grads_out, buf, create_graph)
            if not retain_graph and node._has_saved:
                node._release()
        del buf
        nexts = node._next
        if type(nexts) is not tuple:  # a node's only input (see `_graph.Node`)
            nexts = (nexts,)
        if grads_out is None:
            grads_out = (None,) * len(nexts)
        elif len(grads_out) < len(nexts):
            grads_out = _padded(node, grads_out)
        for e, g in zip(nexts, grads_out):
            if e is None:
                continue
            if type(e) is tuple:
                nxt, nr = e
            else:  # a bare node: its output 0 (see `_graph.edge_pair`)
                nxt = e
                nr = 0
            left = deps[nxt] - 1
            if left:
                deps[nxt] = left
                b = buffers.get(nxt)
            else:  # (its count is not read again: every edge into it has been followed)
                b = buffers.pop(nxt, None)
            if g is not None:
                if b is None:
                    if nxt._nout == 1:
                        b = [g]
                    else:
                        b = [None] * nxt._nout
                        b[nr] = g
                    if left:
                        buffers[nxt] = b
                elif b[nr] is None:
                    b[nr] = g
                else:
                    b[nr] = b[nr] + g
                    if type(nxt) is AccumulateGrad:  # PyTorch adds in place: a version
                        graph.summed[nxt] = graph.summed.get(nxt, 0) + 1
            if left:
                continue
            if b is None:
                b = [None] * nxt._nout
            if following is not None:
                heappush(ready, (_priority(following, pushes), following, following_buf))
                following, following_buf = nxt, b
            elif ready:
                heappush(ready, (_priority(nxt, pushes), nxt, b))
            else:
                following, following_buf = nxt, b
            b = None
        grads_out = None
        g = None  # hold no gradient past its node: the accumulator may keep it unshared
        if following is not None and ready:
            heappush(ready, (_priority(following, pushes), following, following_buf))
            following = following_buf = None
    if inputs is None:
        return None
    return results


_RUN_CODE = _run.__code__


def _padded(node, grads_out) -> list:
    """A node's gradients padded with None to one per next function; a missing gradient for
    an edge that exists is the node's error."""
    edges = node._edges()
    n = len(edges)
    if any(e is not None for e in edges[len(grads_out):]):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {n}, got {len(grads_out)})")
    return list(grads_out) + [None] * (n - len(grads_out))


def _apply_watched(node, buf, graph, check_nan: bool) -> list:
    """`node._apply` in anomaly mode: nodes its backward makes (create_graph) remember it as
    their parent; a failure, or a NaN gradient when checked, warns where the node was made."""
    parent = STATE.running
    STATE.running = node
    try:
        grads_out = node._apply(buf, graph)
        if check_nan and grads_out is not None:
            for k, (e, g) in enumerate(zip(node._edges(), grads_out)):
                if e is not None and g is not None and np.isnan(g).any():
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{_ordinal(k)} output.")
    except Exception:
        warn_forward_traces(node)
        raise
    finally:
        STATE.running = parent
    return grads_out


def _before_node(node, buf, graph, captures, results, needed, accumulate):
    """Tensor hooks, retain_grad, captures for autograd.grad: what happens before a node runs."""
    create_graph = graph.create_graph
    extra = node._x
    if extra is not None:
        extra.had_hooks = bool(extra.hooks)
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
    # as PyTorch: tensor hooks, then retain_grad, then what grad() captures, then node pre-hooks
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
    runs = needed is None or needed[node]
    if node._prehooks_fn and runs:
        for fn in list(node._prehooks_fn.values()):
            out = fn(tuple(_as_tensor(b) for b in buf))
            if out is not None:
                buf = [None if o is None else (o if create_graph else o._data) for o in out]
    if type(node) is AccumulateGrad and not accumulate:
        return buf, False
    return buf, runs


def _after_node(node, grads_out, buf, create_graph):
    if len(grads_out) < len(node._edges()):  # the hooks see one gradient per input (a
        grads_out = _padded(node, grads_out)  # Python number operand's None included)
    outs = tuple(_as_tensor(g) for g in grads_out)
    if not node._x.had_hooks:  # registered while the node ran (by an unpack hook)
        buf = ()
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
        stack = [(root, iter(root._edges()))]
        seen.add(root)
        while stack:
            node, it = stack[-1]
            advanced = False
            for e in it:
                if e is not None and edge_pair(e)[0] not in seen:
                    nxt = edge_pair(e)[0]
                    seen.add(nxt)
                    stack.append((nxt, iter(nxt._edges())))
                    advanced = True
                    break
            if not advanced:
                stack.pop()
                out.append(node)
    return out


def _as_tensor(g):
    if g is None or isinstance(g, Tensor):
        return g
    return Tensor._wrap(np.asarray(g))


def _retain_grad_into(t, g, create_graph):
    if t._grad is None:
        t._grad = g if isinstance(g, Tensor) and create_graph else Tensor._wrap(
            np.array(g._data if isinstance(g, Tensor) else g, copy=True))
    else:
        t._grad = t._grad + (g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g)))
