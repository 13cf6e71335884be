"""torch.optim for funcgrad.mutable: SGD, Adam, AdamW, RMSprop, Adagrad and lr_scheduler.

>>> import funcgrad.mutable as torch
>>> w = torch.nn.Parameter(torch.tensor([3.0]))
>>> opt = torch.optim.SGD([w], lr=0.25)
>>> for _ in range(3):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> w
Parameter containing:
tensor([0.3750], requires_grad=True)
"""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
