"""``torch._C._functions``: graph nodes made directly, UndefinedGrad and DelayedError (and the
AccumulateGrad node class, under PyTorch's name here)."""
from __future__ import annotations

from .._graph import AccumulateGrad, Node, node_class
from .._ops import edge_of
from .._tensor import Tensor

__all__ = ["UndefinedGrad", "DelayedError", "AccumulateGrad"]


class _UndefinedGradNode(Node):
    """Passes an undefined (None) gradient back, whatever reaches it."""

    __slots__ = ()
    _display = "torch::autograd::UndefinedGradBackward"

    def _apply(self, cts, graph):
        return [None] * len(self._next)


class _ErrorNode(Node):
    """Raises its message when the backward pass reaches it."""

    __slots__ = ("_nout", "_message")
    _display = "torch::autograd::Error"

    def _apply(self, cts, graph):
        raise RuntimeError(self._message)


_UNDEFINED_CLS = node_class("UndefinedGradBackward", _UndefinedGradNode)


def _outputs_through(node: Node, inputs: tuple, copy: bool) -> list:
    """New tensors with `inputs`' values (copied or shared), outputs of `node` when one of
    the inputs requires grad, plain tensors otherwise."""
    wired = any(t.requires_grad for t in inputs)
    if wired:
        node._init(tuple(edge_of(t) if t.requires_grad else None for t in inputs))
    outs = []
    for k, t in enumerate(inputs):
        out = Tensor._wrap(t._data.copy() if copy else t._data)
        out._dtype = t._dtype
        if wired:
            out._grad_fn, out._nr, out._rg = node, k, True
        outs.append(out)
    return outs


class UndefinedGrad:
    """``UndefinedGrad()(x)``: a copy of `x` whose backward gives `x` an undefined (None)
    gradient, as a node that does not compute one does.

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> torch._C._functions.UndefinedGrad()(x * 2).grad_fn
    <UndefinedGradBackward object at ...>
    """

    def __call__(self, *inputs: Tensor) -> Tensor:
        if len(inputs) != 1:
            raise TypeError(f"expected 1 arguments, got {len(inputs)} instead")
        return _outputs_through(_UNDEFINED_CLS.__new__(_UNDEFINED_CLS), inputs, copy=True)[0]


class DelayedError:
    """``DelayedError(message, n)(*inputs)``: the inputs again (sharing their data) behind an
    ``Error`` node that raises `message` if a backward pass reaches it.

    >>> import funcgrad.mutable as torch
    >>> y = torch._C._functions.DelayedError("Boom!", 1)(torch.ones(2, requires_grad=True))
    >>> y.sum().backward()
    Traceback (most recent call last):
    ...
    RuntimeError: Boom!
    """

    def __init__(self, message: str, num_inputs: int) -> None:
        self._message = message
        self._num_inputs = num_inputs

    def __call__(self, *inputs: Tensor):
        if len(inputs) != self._num_inputs:
            raise TypeError(f"expected {self._num_inputs} arguments, got {len(inputs)} instead")
        cls = node_class("Error", _ErrorNode, nout=len(inputs))
        node = cls.__new__(cls)
        node._nout = len(inputs)
        node._message = self._message
        outs = _outputs_through(node, inputs, copy=False)
        return outs[0] if len(outs) == 1 else tuple(outs)
