"""Activation modules: ReLU, Threshold, LeakyReLU, RReLU, Tanh, Sigmoid, GELU, SiLU, Softmax, LogSoftmax."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["ReLU", "Threshold", "LeakyReLU", "RReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """max(x, 0).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.ReLU()(torch.tensor([-1.0, 1.0]))
    tensor([0., 1.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Threshold(Module):
    """x where x > threshold, else value.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.Threshold(0.1, 20)
    Threshold(threshold=0.1, value=20)
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class LeakyReLU(Module):
    """x for x > 0, else negative_slope * x.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.LeakyReLU(0.5)(torch.tensor([-2.0, 1.0]))
    tensor([-1.,  1.])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn from [lower, upper) in training, their mean in
    eval.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.RReLU(0.25, 0.75).eval()(torch.tensor([-2.0, 1.0]))
    tensor([-1.,  1.])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                             else "")


class Tanh(Module):
    """Hyperbolic tangent.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.Tanh()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Sigmoid(Module):
    """Logistic sigmoid.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.Sigmoid()(torch.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class GELU(Module):
    """Gaussian error linear unit (exact, or ``approximate="tanh"``).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.GELU()(torch.tensor([1.0]))
    tensor([0.8413])
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.SiLU()(torch.tensor([0.0]))
    tensor([0.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softmax(Module):
    """Softmax along `dim`.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.Softmax(dim=0)(torch.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax) along `dim`, computed stably.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.LogSoftmax(dim=0)(torch.tensor([0.0, 0.0]))
    tensor([-0.6931, -0.6931])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
