"""``torch._C._nn``: the one test op of it that PyTorch's autograd tests call."""
from __future__ import annotations

import warnings

from .._graph import STATE, Node, node_class
from ._functions import _outputs_through
from .._tensor import Tensor

__all__ = ["_test_warn_in_autograd"]


class _WarnInBackward(Node):
    """Passes its gradient on unchanged, warning as it does (a warning raised in backward)."""

    __slots__ = ()

    def _apply(self, cts, graph):
        warnings.warn("Warn from backward", UserWarning, stacklevel=2)
        return [cts[0]]


_WARN_CLS = node_class("TestWarnInAutogradBackward0", _WarnInBackward, nout=1)


def _test_warn_in_autograd(input: Tensor) -> Tensor:
    """A copy of `input` whose backward passes the gradient on and warns "Warn from
    backward" (torch's test op).

    >>> import funcgrad.mutable as torch
    >>> torch._C._nn._test_warn_in_autograd(torch.zeros((), requires_grad=True))
    tensor(0., grad_fn=<TestWarnInAutogradBackward0>)
    """
    if not isinstance(input, Tensor):
        raise TypeError("_test_warn_in_autograd(): argument 'self' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    node = _WARN_CLS.__new__(_WARN_CLS)
    node._nout = 1
    if not STATE.grad_enabled:  # (no history under no_grad)
        return _outputs_through(node, (input.detach(),), copy=True)[0]
    return _outputs_through(node, (input,), copy=True)[0]
