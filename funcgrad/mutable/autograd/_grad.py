"""backward, grad and anomaly mode: the entry points into the mutable graph's engine."""
from __future__ import annotations

import warnings

import numpy as np

from .._autograd import STATE, run_backward
from .._graph import AccumulateGrad, set_anomaly
from .._dtypes import from_numpy_dtype
from .._functions import stack
from .._tensor import Size, Tensor
from .graph import GradientEdge, edge_output_meta

__all__ = ["backward", "grad", "set_detect_anomaly", "detect_anomaly", "is_anomaly_enabled"]


def _as_list(x) -> list:
    if x is None:
        return []
    if isinstance(x, (Tensor, GradientEdge)):
        return [x]
    return list(x)


def _root_edges(outputs: list, grad_tensors: list, create_graph: bool):
    """The graph edges of `outputs` (tensors or GradientEdges) and their seed gradients."""
    edges, grads = [], []
    for k, (out, g) in enumerate(zip(outputs, grad_tensors)):
        if isinstance(out, GradientEdge):
            edge = (out.node, out.output_nr)
            meta = edge_output_meta(out)
        else:
            if not out.requires_grad:
                raise RuntimeError(f"element {k} of tensors does not require grad and does not "
                                   "have a grad_fn")
            edge = out._edge()
            meta = (out._data.shape, out._data.dtype)
        if g is None:
            if meta is None:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            shape, dtype = meta
            if int(np.prod(shape, dtype=np.int64)) != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {from_numpy_dtype(dtype)!r}")
            g = np.ones(shape, dtype)
            if create_graph:
                g = Tensor._wrap(g)
        else:
            if not isinstance(g, Tensor):
                g = Tensor._wrap(np.asarray(g, meta[1] if meta else None))
            if meta is not None and tuple(g.shape) != tuple(meta[0]):
                raise RuntimeError(f"Mismatch in shape: grad_output[{k}] has a shape of "
                                   f"{g.shape} and output[{k}] has a shape of "
                                   f"{Size(meta[0])}.")
            if meta is not None and (g._data.dtype.kind == "c") != (np.dtype(meta[1]).kind == "c"):
                raise RuntimeError("For complex Tensors, both grad_output and output are required "
                                   f"to have the same dtype. Mismatch in dtype: grad_output[{k}] "
                                   f"has a dtype of {g.dtype} and output[{k}] has a dtype of "
                                   f"{from_numpy_dtype(np.dtype(meta[1]))}.")
            if meta is not None and g._data.dtype != meta[1] and not create_graph:
                g = Tensor._wrap(g._data.astype(meta[1]))
            g = g if create_graph else g._data
        edges.append(edge)
        grads.append(g)
    return edges, grads


def _calculate_shape(output, grad: Tensor, is_grads_batched: bool) -> tuple:
    """(output's shape, grad's shape) as backward compares them; a batched grad's first
    dimension is the batch (torch.autograd._calculate_shape).

    >>> import funcgrad.mutable as torch
    >>> torch.autograd._calculate_shape(torch.ones(2, 3), torch.ones(5, 2, 3), True)
    (torch.Size([2, 3]), torch.Size([2, 3]))
    """
    if isinstance(output, GradientEdge):
        if is_grads_batched:
            raise RuntimeError("Batched grads are not supported with GradientEdge")
        meta = edge_output_meta(output)
        return Size(meta[0]), grad.shape
    return output.shape, Size(grad.shape[1:]) if is_grads_batched else grad.shape


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
    in_edges = [_edge_of(t) for t in inputs]
    # as PyTorch: a leaf input's accumulator runs (with its hooks), so does a non-leaf input's
    # grad_fn; the gradient reaching a non-leaf input is accumulated into its .grad here
    found = run_backward(edges, seeds, retain_graph=retain_graph, create_graph=create_graph,
                         inputs=in_edges, accumulate=True, run_inputs=True)
    for t, edge, g in zip(inputs, in_edges, found):
        if g is None or isinstance(t, GradientEdge) or type(edge[0]) is AccumulateGrad:
            continue
        if not isinstance(g, Tensor):
            g = Tensor._wrap(np.array(g, copy=True))
        if t._grad is None:
            t._grad = g
        else:
            t._grad = t._grad + g if create_graph else _accumulate(t._grad, g)


def _tensor_backward(self: Tensor, gradient: Tensor | None = None,
                     retain_graph: bool | None = None, create_graph: bool = False,
                     inputs=None) -> None:
    """Accumulate d(self)/d(leaf) into each leaf's ``.grad`` (see ``torch.autograd.backward``).

    >>> import funcgrad.mutable as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """
    backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


_tensor_backward.__name__ = "backward"
_tensor_backward.__qualname__ = "Tensor.backward"
# Tensor sits below the engine: the entry point into it gives Tensor its backward method.
Tensor.backward = _tensor_backward


def _edge_of(t):
    """A tensor's edge, or a GradientEdge given as is."""
    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    return t._edge()


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
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _as_list(grad_outputs) or [None] * len(outs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in ins:
        if not isinstance(t, GradientEdge) and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        return _batched_grad(outs, ins, grads, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    return _grad(outs, ins, grads, retain_graph, create_graph, allow_unused, materialize_grads)


def _grad(outs, ins, grads, retain_graph, create_graph, allow_unused, materialize_grads):
    edges, seeds = _root_edges(outs, grads, create_graph)
    in_edges = [_edge_of(t) for t in ins]
    found = run_backward(edges, seeds, retain_graph=retain_graph, create_graph=create_graph,
                         inputs=in_edges, accumulate=False)
    result = []
    for k, (t, g) in enumerate(zip(ins, found)):
        if g is None:
            if materialize_grads and isinstance(t, GradientEdge):
                raise RuntimeError("materialize_grads cannot be used when the given input is a "
                                   "GradientEdge")
            if materialize_grads:
                zeros = Tensor._wrap(np.zeros_like(t._data))
                result.append(zeros.requires_grad_(True) if create_graph else zeros)
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


def _batched_grad(outs, ins, grads, retain_graph, create_graph, allow_unused, materialize_grads):
    """``is_grads_batched=True``: the first dimension of each grad_output is a batch; one
    backward pass per batch element, results stacked along a new first dimension."""
    size = None
    for k, (out, g) in enumerate(zip(outs, grads)):
        out_shape = tuple(out.shape) if isinstance(out, Tensor) else tuple(
            (edge_output_meta(out) or ((),))[0])
        g_shape = tuple(g.shape) if g is not None else ()
        if g is None or g_shape[1:] != out_shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{k}] has a shape of {Size(g_shape[2:])} and "
                f"output[{k}] has a shape of {Size(out_shape)}. If you only want some tensors "
                "in `grad_output` to be considered batched, consider using vmap.")
        size = g_shape[0] if size is None else size
    per_element = []
    for b in range(size):
        last = b == size - 1
        per_element.append(_grad(outs, ins, [g[b] for g in grads], retain_graph or not last,
                                 create_graph, allow_unused, materialize_grads))
    return tuple(None if all(p[i] is None for p in per_element) else
                 stack([p[i] if p[i] is not None else Tensor._wrap(np.zeros_like(t._data))
                        for p in per_element])
                 for i, t in enumerate(ins))


# --- anomaly mode ---------------------------------------------------------------------------------
class set_detect_anomaly:
    """Turn anomaly detection on or off (also usable as a context manager).

    With it on, an error in backward is preceded by the traceback of the forward op that
    made the failing node, and NaN gradients raise.
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (STATE.anomaly, STATE.check_nan)
        set_anomaly(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        set_anomaly(*self.prev)


class detect_anomaly(set_detect_anomaly):
    """Context manager that enables anomaly detection inside its block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)
        self.prev = (STATE.anomaly, STATE.check_nan)
        set_anomaly(True, self.check_nan)
        return self


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


