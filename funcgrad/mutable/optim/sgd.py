"""SGD with momentum, dampening, Nesterov momentum and weight decay."""
from __future__ import annotations

from typing import Callable

from .._functions import from_numpy
from .optimizer import Optimizer, axpy, common_checks, scale, update, values, write

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's update rule and arithmetic:
    ``g += wd * p; buf = momentum * buf + (1 - dampening) * g; p -= lr * (g + momentum * buf
    if nesterov else buf)`` (the buffer starts as the first gradient).

    >>> import funcgrad.mutable as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    Parameter containing:
    tensor([0.4600], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None) -> None:
        common_checks(lr, None, weight_decay)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            for p, g in self._with_grads(group):
                if group["weight_decay"] != 0:
                    g = axpy(g, group["weight_decay"], values(p))
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        state["momentum_buffer"] = buf = from_numpy(g.copy())
                    else:
                        b = values(buf)  # buf.mul_(momentum).add_(g, alpha=1 - dampening)
                        update(buf, axpy(scale(b, momentum), 1 - group["dampening"], g), 2)
                    g = axpy(g, momentum, values(buf)) if group["nesterov"] else values(buf)
                write(p, axpy(values(p), -lr, g))
        return loss
