"""Conv2d."""
from __future__ import annotations

import math

from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module, new_parameter

__all__ = ["Conv2d"]


class Conv2d(Module):
    """2-d convolution (cross-correlation) over (N, C, H, W), initialised as PyTorch.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> conv = nn.Conv2d(1, 4, 3, padding=1)
    >>> conv
    Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    >>> conv(torch.ones(2, 1, 5, 5)).shape
    torch.Size([2, 4, 5, 5])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError(f"padding_mode={padding_mode!r} is not supported by "
                                      "funcgrad.mutable yet (only 'zeros')")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = F._pair(kernel_size, "kernel_size")
        self.stride = F._pair(stride, "stride")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and self.stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = F._pair(padding, "padding")
        self.dilation = F._pair(dilation, "dilation")
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = new_parameter((out_channels, in_channels // groups) + self.kernel_size,
                                    dtype)
        if bias:
            self.bias = new_parameter((out_channels,), dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * self.kernel_size[0] * self.kernel_size[1]
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding,
                        self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
