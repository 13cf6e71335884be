"""Adam and AdamW."""
from __future__ import annotations

from typing import Callable

import numpy as np

from .._functions import zeros_like
from .optimizer import (Optimizer, addcdiv, addcmul, advance, axpy, check, common_checks, lerp,
                        scale, scalar_step, update, values, write)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, PyTorch's single-tensor update (bias-corrected moments, ``eps`` added after
    the square root); ``amsgrad`` keeps the running maximum of the second moment.

    >>> import funcgrad.mutable as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False) -> None:
        common_checks(lr, eps, weight_decay)
        check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused, decoupled_weight_decay=decoupled_weight_decay))

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            wd = group["weight_decay"]
            for p, g in self._with_grads(group):
                state = self.state[p]
                if not state:
                    state["step"] = scalar_step()
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = zeros_like(p)
                step = advance(state["step"])
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        write(p, scale(values(p), 1 - lr * wd))
                    else:
                        g = axpy(g, wd, values(p))
                m, v = values(state["exp_avg"]), values(state["exp_avg_sq"])
                update(state["exp_avg"], lerp(m, g, 1 - beta1))  # exp_avg.lerp_(g, 1 - beta1)
                # exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                update(state["exp_avg_sq"], addcmul(scale(v, beta2), g, g, 1 - beta2), 2)
                step_size = lr / (1 - beta1 ** step)
                correction2_sqrt = (1 - beta2 ** step) ** 0.5
                if group["amsgrad"]:
                    vmax = values(state["max_exp_avg_sq"])  # torch.maximum(..., out=vmax)
                    update(state["max_exp_avg_sq"], np.maximum(vmax, v))
                    v = vmax
                denom = np.sqrt(v) / v.dtype.type(correction2_sqrt) + v.dtype.type(eps)
                write(p, addcdiv(values(p), m, denom, -step_size))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the step).

    >>> import funcgrad.mutable as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.AdamW([w], lr=0.1)
    >>> opt.defaults["weight_decay"]
    0.01
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach=None, capturable: bool = False,
                 differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
