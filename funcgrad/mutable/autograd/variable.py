"""torch.autograd.Variable: the old name of a tensor that records (every Tensor is one)."""
from __future__ import annotations

import numpy as np

from .._autograd import EXECUTION_ENGINE
from .._tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=False)``: a new leaf sharing `t`'s data and version
    counter (``t.detach()``), recording if `requires_grad` (PyTorch has merged the classes
    since 0.4); ``isinstance(t, Variable)`` holds for every tensor.

    >>> import funcgrad.mutable as torch
    >>> v = torch.autograd.Variable(torch.ones(2), requires_grad=True)
    >>> v.requires_grad, isinstance(v, torch.autograd.Variable)
    (True, True)
    >>> x = torch.zeros(2); torch.autograd.Variable(x) is x
    False
    """

    _execution_engine = EXECUTION_ENGINE  # queue_callback(fn): run fn after this backward

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False) -> Tensor:
        if data is None:
            data = Tensor._wrap(np.zeros(0, np.float32))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        leaf = data.detach()
        if requires_grad:
            leaf.requires_grad_(True)
        return leaf
