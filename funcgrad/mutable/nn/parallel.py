"""torch.nn.parallel on a machine without accelerators: `DataParallel` runs the module it wraps
in the calling thread, as PyTorch's does when no CUDA device is available (its device list is
then empty and the wrapper only forwards the call)."""
from __future__ import annotations

from typing import Any, Sequence

from .modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """A module wrapped for data parallelism; with no accelerator, a plain forwarding wrapper
    (its parameters are ``module.<name>``, as PyTorch's).

    >>> import funcgrad.mutable as torch
    >>> model = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    >>> model.device_ids, [name for name, _ in model.named_parameters()]
    ([], ['module.weight', 'module.bias'])
    >>> model(torch.ones(4, 2)).shape
    torch.Size([4, 3])
    """

    def __init__(self, module: Module, device_ids: Sequence | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []  # (no accelerator here: nothing to scatter to)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
