"""Adagrad."""
from __future__ import annotations

from typing import Callable

import numpy as np

from .._functions import full_like
from .optimizer import (Optimizer, addcdiv, addcmul, advance, axpy, check, common_checks,
                        scalar_step, update, values, write)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, PyTorch's update: ``sum += g * g; p -= clr * g / (sqrt(sum) + eps)`` with
    ``clr = lr / (1 + (step - 1) * lr_decay)``.

    >>> import funcgrad.mutable as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.Adagrad([w], lr=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.5000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        common_checks(lr, eps, weight_decay)
        check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        check(0.0 <= initial_accumulator_value,
              f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = scalar_step()
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            for p, g in self._with_grads(group):
                state = self.state[p]
                step = advance(state["step"])
                if group["weight_decay"] != 0:
                    g = axpy(g, group["weight_decay"], values(p))
                clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                total = values(state["sum"])  # state_sum.addcmul_(g, g, value=1)
                update(state["sum"], addcmul(total, g, g, 1))
                std = np.sqrt(total) + total.dtype.type(group["eps"])
                write(p, addcdiv(values(p), g, std, -clr))
        return loss
