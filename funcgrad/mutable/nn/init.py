"""torch.nn.init: fill a tensor in place (outside autograd) from PyTorch's random stream.

After ``torch.manual_seed(s)`` these draw exactly the numbers PyTorch draws, so a model
built here starts from PyTorch's weights.

>>> import funcgrad.mutable as torch
>>> from funcgrad.mutable import nn
>>> _ = torch.manual_seed(0)
>>> nn.init.uniform_(torch.empty(3), -1.0, 1.0)
tensor([-0.0075,  0.5364, -0.8230])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _random
from .._functions import from_numpy
from .._tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Write `values` into `tensor` as ``with torch.no_grad(): tensor.copy_(values)`` would
    (one version bump; allowed on leaves that require grad)."""
    tensor.detach().copy_(from_numpy(np.ascontiguousarray(values, tensor.detach().numpy().dtype)))
    return tensor


def _dtype(tensor: Tensor) -> np.dtype:
    return tensor.detach().numpy().dtype


def _empty(tensor: Tensor) -> bool:
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return True
    return False


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (as ``torch.nn.init.calculate_gain``).

    >>> from funcgrad.mutable import nn
    >>> nn.init.calculate_gain("relu")
    1.4142135623730951
    """
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with values uniform on [a, b).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> _ = torch.manual_seed(0)
    >>> nn.init.uniform_(torch.empty(2))
    tensor([0.4963, 0.7682])
    """
    return _fill(tensor, _random.uniform(tuple(tensor.shape), _dtype(tensor), a, b, generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with normal values of the given mean and standard deviation.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> _ = torch.manual_seed(0)
    >>> nn.init.normal_(torch.empty(2), 1.0, 0.1)
    tensor([1.1541, 0.9707])
    """
    return _fill(tensor, _random.normal(tuple(tensor.shape), _dtype(tensor), mean, std,
                                        generator))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.init.constant_(torch.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    return _fill(tensor, np.full(tuple(tensor.shape), val))


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.init.ones_(torch.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.init.zeros_(torch.ones(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-d tensor with the identity.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.init.eye_(torch.empty(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tuple(tensor.shape)))


def _fans(tensor: Tensor) -> tuple:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:]) if tensor.dim() > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: bound ``gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> _ = torch.manual_seed(0)
    >>> nn.init.xavier_uniform_(torch.empty(1, 2))
    tensor([[-0.0106,  0.7586]])
    """
    fan_in, fan_out = _fans(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: std ``gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> _ = torch.manual_seed(0)
    >>> nn.init.xavier_normal_(torch.empty(1, 2))
    tensor([[ 1.2582, -0.2396]])
    """
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: bound ``gain / sqrt(fan) * sqrt(3)`` (how nn.Linear initialises).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> _ = torch.manual_seed(0)
    >>> nn.init.kaiming_uniform_(torch.empty(1, 2), nonlinearity="relu")
    tensor([[-0.0130,  0.9291]])
    """
    if _empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: std ``gain / sqrt(fan)``.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> _ = torch.manual_seed(0)
    >>> nn.init.kaiming_normal_(torch.empty(1, 2), nonlinearity="relu")
    tensor([[ 1.5410, -0.2934]])
    """
    if _empty(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)
