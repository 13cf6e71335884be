"""RMSprop."""
from __future__ import annotations

from typing import Callable

import numpy as np

from .._functions import zeros_like
from .optimizer import (Optimizer, addcdiv, addcmul, advance, axpy, check, common_checks, lerp,
                        scale, scalar_step, update, values, write)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, PyTorch's update: a running mean of squared gradients (optionally
    centred), ``eps`` added after the square root, optional momentum.

    >>> import funcgrad.mutable as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        common_checks(lr, eps, weight_decay)
        check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
            for p, g in self._with_grads(group):
                state = self.state[p]
                if not state:
                    state["step"] = scalar_step()
                    state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = zeros_like(p)
                advance(state["step"])
                if group["weight_decay"] != 0:
                    g = axpy(g, group["weight_decay"], values(p))
                sq = values(state["square_avg"])  # square_avg.mul_(alpha).addcmul_(g, g, ...)
                update(state["square_avg"], addcmul(scale(sq, alpha), g, g, 1 - alpha), 2)
                if group["centered"]:
                    ga = values(state["grad_avg"])
                    update(state["grad_avg"], lerp(ga, g, 1 - alpha))
                    avg = np.sqrt(addcmul(sq, ga, ga, -1))
                else:
                    avg = np.sqrt(sq)
                avg = avg + avg.dtype.type(eps)
                if momentum > 0:
                    buf = values(state["momentum_buffer"])  # buf.mul_(m).addcdiv_(g, avg)
                    update(state["momentum_buffer"], addcdiv(scale(buf, momentum), g, avg, 1), 2)
                    write(p, axpy(values(p), -lr, buf))
                else:
                    write(p, addcdiv(values(p), g, avg, -lr))
        return loss
