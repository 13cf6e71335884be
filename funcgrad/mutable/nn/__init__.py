"""torch.nn for funcgrad.mutable: Module and its layers, losses, `functional` and `init`.

>>> import funcgrad.mutable as torch
>>> from funcgrad.mutable import nn
>>> _ = torch.manual_seed(0)
>>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
>>> model(torch.ones(4, 2)).shape
torch.Size([4, 1])
"""
from . import functional, init, parallel
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Parameter
from .parallel import DataParallel

__all__ = ["Parameter", "DataParallel", "functional", "init", "parallel"] + list(_modules_all)
