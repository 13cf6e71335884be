"""``torch.autograd._functions``: the one Function PyTorch's tests reach for here, Resize."""
from __future__ import annotations

import math

from .function import Function

__all__ = ["Resize"]


class Resize(Function):
    """A reshape to `sizes` as a custom Function (node ``ResizeBackward``): the gradient is
    reshaped back; the element count must not change.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.autograd._functions
    >>> torch.autograd._functions.Resize.apply(torch.ones(2, 3, requires_grad=True), (3, 2)).shape
    torch.Size([3, 2])
    """

    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = tuple(sizes)
        ctx.numel = math.prod(ctx.sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, ctx.sizes))} ({ctx.numel} elements in "
                f"total), but the given tensor has a size of "
                f"{'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's "
                "resize can only change the shape of a given tensor, while preserving the number "
                "of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().clone().view(*ctx.sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None
