"""torch.autograd for funcgrad.mutable: backward, grad, Function, anomaly mode."""
from __future__ import annotations

import contextlib
import weakref
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ._autograd import STATE, Node, node_class, run_backward
from ..numpy import _table as T
from ._tensor import Tensor, _ViewInfo

__all__ = ["backward", "grad", "Function", "set_detect_anomaly", "detect_anomaly",
           "is_anomaly_enabled"]


def _as_list(x) -> list:
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _root_edges(outputs: list, grad_tensors: list, create_graph: bool):
    edges, grads = [], []
    for k, (out, g) in enumerate(zip(outputs, grad_tensors)):
        if not out.requires_grad:
            raise RuntimeError(f"element {k} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = np.ones(out._data.shape, out._data.dtype)
            if create_graph:
                g = Tensor._wrap(g)
        else:
            if not isinstance(g, Tensor):
                g = Tensor._wrap(np.asarray(g, out._data.dtype))
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{k}] has a shape of "
                                   f"{g.shape} and output[{k}] has a shape of {out.shape}.")
            g = g if create_graph else g._data
        edges.append(out._edge())
        grads.append(g)
    return edges, grads


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs=None) -> None:
    """Accumulate gradients of `tensors` into the ``.grad`` of leaves (or of `inputs`).

    >>> import funcgrad.mutable as torch
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> torch.autograd.backward((x * x,))
    >>> x.grad
    tensor(6.)
    """
    outputs = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    edges, seeds = _root_edges(outputs, grads, create_graph)
    if create_graph:
        import warnings
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.", UserWarning, stacklevel=3)
    if inputs is None:
        run_backward(edges, seeds, retain_graph=retain_graph, create_graph=create_graph)
        return
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    in_edges = [t._edge() for t in inputs]
    found = run_backward(edges, seeds, retain_graph=retain_graph, create_graph=create_graph,
                         inputs=in_edges, accumulate=False)
    for t, g in zip(inputs, found):
        if g is None:
            continue
        if not isinstance(g, Tensor):
            g = Tensor._wrap(np.array(g, copy=True))
        if t._grad is None:
            t._grad = g
        else:
            t._grad = t._grad + g if create_graph else _accumulate(t._grad, g)


def _accumulate(old: Tensor, g: Tensor) -> Tensor:
    np.add(old._data, g._data, out=old._data, casting="unsafe")
    return old


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Gradients of `outputs` with respect to `inputs`, returned (not accumulated).

    >>> import funcgrad.mutable as torch
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> (g,) = torch.autograd.grad(x ** 3, x, create_graph=True)
    >>> g, torch.autograd.grad(g, x)[0]
    (tensor(12., grad_fn=<MulBackward0>), tensor(12.))
    """
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _as_list(grad_outputs) or [None] * len(outs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    edges, seeds = _root_edges(outs, grads, create_graph)
    in_edges = [t._edge() for t in ins]
    found = run_backward(edges, seeds, retain_graph=retain_graph, create_graph=create_graph,
                         inputs=in_edges, accumulate=False)
    result = []
    for k, (t, g) in enumerate(zip(ins, found)):
        if g is None:
            if materialize_grads:
                result.append(Tensor._wrap(np.zeros_like(t._data)))
                continue
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            result.append(None)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._wrap(np.array(g, copy=True))
        result.append(g)
    return tuple(result)


# --- anomaly mode ---------------------------------------------------------------------------------
class set_detect_anomaly:
    """Turn anomaly detection on or off (also usable as a context manager).

    With it on, an error in backward is preceded by the traceback of the forward op that
    made the failing node, and NaN gradients raise.
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (STATE.anomaly, STATE.check_nan)
        STATE.anomaly = bool(mode)
        STATE.check_nan = bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        STATE.anomaly, STATE.check_nan = self.prev


class detect_anomaly(set_detect_anomaly):
    """Context manager that enables anomaly detection inside its block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = (STATE.anomaly, STATE.check_nan)
        STATE.anomaly = True
        STATE.check_nan = self.check_nan
        return self


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


# --- custom functions -------------------------------------------------------------------------------
class FunctionCtx:
    """The ``ctx`` of a custom Function: save_for_backward, mark_dirty, needs_input_grad..."""

    def __init__(self) -> None:
        self._saved = None
        self._dirty = ()
        self._non_diff = ()
        self.needs_input_grad = ()
        self._freed = False
        self.materialize_grads = True

    def save_for_backward(self, *tensors) -> None:
        for k, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {k} "
                                f"is of type {type(t).__name__}")
        self._saved = tensors

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    @property
    def saved_tensors(self) -> tuple:
        if self._freed:
            from ._autograd import freed_error
            raise freed_error()
        if self._saved is None:
            return ()
        out = []
        for item in self._saved:
            if item is None:
                out.append(None)
                continue
            t, version, is_output = item
            if t._vc.value != version:
                from ._autograd import Saved, version_error
                node = self._node()
                s = (Saved(t._data, t._vc, None, weakref.ref(node)) if is_output
                     else Saved(t._data, t._vc, t))
                s.version = version
                raise version_error(s, node)
            out.append(t)
        return tuple(out)


class _FunctionNode(Node):
    __slots__ = ("_nout", "ctx", "_fn_cls", "_in_meta", "_out_meta")

    def _release(self) -> None:
        if self.ctx._saved:
            self.ctx._freed = True

    def _apply(self, cts, graph):
        ctx = self.ctx
        if ctx.materialize_grads:
            cts = [np.zeros(shape, dtype) if c is None else c for c, (shape, dtype) in zip(cts, self._out_meta)]
        args = [c if c is None or isinstance(c, Tensor) else Tensor._wrap(np.asarray(c)) for c in cts]
        prev = STATE.grad_enabled
        STATE.grad_enabled = graph.create_graph
        try:
            result = self._fn_cls.backward(ctx, *args)
        finally:
            STATE.grad_enabled = prev
        if not isinstance(result, tuple):
            result = (result,)
        n_in = len(self._in_meta)
        if len(result) != n_in:
            if len(result) > n_in and all(r is None for r in result[n_in:]):
                result = result[:n_in]
            else:
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number "
                                   f"of gradients (expected {n_in}, got {len(result)})")
        grads = []
        for r, edge, meta in zip(result, self._next, self._in_meta):
            if edge is None or r is None:
                grads.append(None)
                continue
            if not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            if tuple(r.shape) != tuple(meta[0]):
                raise RuntimeError(f"Function {type(self).__name__} returned an invalid gradient "
                                   f"at index {len(grads)} - got {list(r.shape)} but expected "
                                   f"shape compatible with {list(meta[0])}")
            grads.append(r if graph.create_graph else r._data)
        return grads


class _FunctionMeta(type):
    pass


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable functions (``forward``/``backward`` staticmethods).

    >>> import funcgrad.mutable as torch
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> y = Square.apply(x)
    >>> y.backward(); y.grad_fn.name(), x.grad
    ('SquareBackward', tensor(6.))
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        from ._ops import _attach_inplace, edge_of
        ctx = FunctionCtx()
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            STATE.grad_enabled = prev
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        rg = prev and any(ctx.needs_input_grad)
        if ctx._saved is not None:
            out_ids = {id(o) for o in outs if isinstance(o, Tensor)}
            ctx._saved = tuple(None if t is None else (t, t._vc.value, id(t) in out_ids)
                               for t in ctx._saved)
        if not rg:
            for o in outs:  # views of inputs keep their origin for the in-place checks
                if isinstance(o, Tensor) and o._base is not None and any(
                        o._base is (a._base if a._base is not None else a) for a in tensors):
                    o._view.custom = True
            return outputs
        cls_node = node_class(cls.__name__ + "Backward", _FunctionNode, nout=len(outs))
        node = cls_node.__new__(cls_node)
        node._init(tuple(edge_of(a) if isinstance(a, Tensor) and a.requires_grad else None
                         for a in args))
        node._nout = len(outs)
        node.ctx = ctx
        ctx._node = weakref.ref(node)  # node -> ctx is strong; no cycle back
        node._fn_cls = cls
        node._in_meta = tuple((a._data.shape, a._data.dtype) if isinstance(a, Tensor) else ((), None)
                              for a in args)
        node._out_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None)
                               for o in outs)
        non_diff = {id(t) for t in ctx._non_diff}
        dirty = {id(t) for t in ctx._dirty}
        if dirty - {id(o) for o in outs}:
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must "
                               "all be outputs of the Function.")
        new_outs = []
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor):
                new_outs.append(o)
                continue
            if id(o) in non_diff:
                new_outs.append(o)
                continue
            if id(o) in dirty:
                if o._base is None and o._grad_fn is None and o._rg:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
                o._vc.value += 1
                o._grad_fn, o._nr, o._rg = node, k, True
                new_outs.append(o)
                continue
            if any(o is a for a in tensors) or o._base is not None:
                o = _output_view(o, tensors)
            o._grad_fn = node
            o._nr = k
            o._rg = True
            new_outs.append(o)
        return new_outs[0] if single else tuple(new_outs)


def _alias(t: Tensor) -> Tensor:
    out = Tensor._wrap(t._data)
    out._vc = t._vc
    return out


_WHOLE = ((T.getitem_p.impl, {"template": (Ellipsis,)}),)  # the view chain of an alias


def _output_view(t: Tensor, inputs: list) -> Tensor:
    """An output that is an input, or a view of one: a view of that input that may not be
    modified in place (PyTorch forbids it: view+inplace would bypass the custom backward)."""
    out = _alias(t)
    base = t._base if t._base is not None else t
    if not any(base is (a._base if a._base is not None else a) for a in inputs):
        return out  # a view of a value made inside forward: an ordinary new tensor
    out._base = base
    chain = t._view.chain if t._base is not None else _WHOLE
    out._view = _ViewInfo(chain, t._vc.value, False, t._base is not None and t._view.multi)
    out._view.custom = True
    return out
