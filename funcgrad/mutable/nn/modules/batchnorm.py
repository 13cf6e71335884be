"""BatchNorm1d/2d (per-channel normalisation with running statistics) and
InstanceNorm1d/2d/3d (per sample and channel)."""
from __future__ import annotations

import warnings

import numpy as np

from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module, new_buffer, new_parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _BatchNorm(Module):
    _dims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = new_parameter((num_features,), dtype)
            if bias:
                self.bias = new_parameter((num_features,), dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", new_buffer(np.zeros(num_features), dtype))
            self.register_buffer("running_var", new_buffer(np.ones(num_features), dtype))
            self.register_buffer("num_batches_tracked", new_buffer(0, "int64"))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        if affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _InstanceNorm(_BatchNorm):
    _spatial = 0  # spatial dimensions of one sample

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        unbatched = self._spatial + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise ValueError(f"expected {unbatched}D or {unbatched + 1}D input "
                             f"(got {input.dim()}D input)")
        feature_dim = input.dim() - unbatched
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", UserWarning, stacklevel=2)
        batch = input.unsqueeze(0) if input.dim() == unbatched else input
        out = F.instance_norm(batch, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              0.1 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if input.dim() == unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over (N, C, L) or (C, L).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.InstanceNorm1d(1)(torch.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over (N, C, H, W) or (C, H, W).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.InstanceNorm2d(1)(torch.tensor([[[[1.0, 3.0]]]]))
    tensor([[[[-1.0000,  1.0000]]]])
    """
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over (N, C, D, H, W) or (C, D, H, W).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.InstanceNorm3d(1)(torch.ones(1, 1, 1, 1, 2)).shape
    torch.Size([1, 1, 1, 1, 2])
    """
    _spatial = 3


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> bn = nn.BatchNorm1d(1)
    >>> bn(torch.tensor([[1.0], [3.0]]))
    tensor([[-1.0000],
            [ 1.0000]], grad_fn=<AddBackward0>)
    >>> bn.running_mean
    tensor([0.2000])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> nn.BatchNorm2d(3)(torch.ones(2, 3, 4, 4)).shape
    torch.Size([2, 3, 4, 4])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
