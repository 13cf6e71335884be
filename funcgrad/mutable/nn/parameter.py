"""torch.nn.Parameter: a leaf tensor that a Module registers as one of its parameters."""
from __future__ import annotations

from .. import _functions as F
from .._tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor that requires grad by default (``requires_grad=False`` allowed).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.Parameter(torch.ones(2))
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = F.empty(0)
        p = object.__new__(cls)
        src = Tensor._wrap(data._data)
        for slot in ("_data", "_dtype", "_vc", "_grad_fn", "_nr", "_rg", "_grad", "_base"):
            setattr(p, slot, getattr(src, slot))
        p._vc = data._vc  # shares storage and version counter with `data`, as in PyTorch
        if requires_grad and not (p._dtype.is_floating_point or p._dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        p._rg = bool(requires_grad)
        return p

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
