"""Linear, Identity and Flatten."""
from __future__ import annotations

import math

from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module, new_parameter

__all__ = ["Linear", "Identity", "Flatten"]


class Linear(Module):
    """``y = x @ weight.T + bias``, initialised as PyTorch (He uniform with a = sqrt(5)).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> _ = torch.manual_seed(0)
    >>> layer = nn.Linear(3, 2)
    >>> layer
    Linear(in_features=3, out_features=2, bias=True)
    >>> layer.weight
    Parameter containing:
    tensor([[-0.0043,  0.3097, -0.4752],
            [-0.4249, -0.2224,  0.1548]], requires_grad=True)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = new_parameter((out_features, in_features), dtype)
        if bias:
            self.bias = new_parameter((out_features,), dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Identity(Module):
    """Returns its input.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.Identity()(torch.tensor([1.0]))
    tensor([1.])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Flatten(Module):
    """Flatten dimensions start_dim..end_dim (by default all but the batch dimension).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.Flatten()(torch.ones(2, 3, 4)).shape
    torch.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
