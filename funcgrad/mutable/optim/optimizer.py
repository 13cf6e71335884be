"""torch.optim.Optimizer: parameter groups, per-parameter state, zero_grad, state_dict.

The updates are computed on the parameters' arrays with PyTorch's arithmetic (each torch
op's rounding, fused multiply-adds where PyTorch's kernels fuse), then written into each
parameter once, as one in-place op under no_grad. State tensors (momentum buffers, Adam's
moments, step counters) are written in place too, their versions counting the in-place
ops PyTorch's single-tensor implementations run (``buf.mul_(m).add_(g)`` is two): a
parameter's and a buffer's ``_version`` after a step equal PyTorch's.
"""
from __future__ import annotations

from collections import defaultdict
from copy import deepcopy
from typing import Any, Callable, Iterable

import numpy as np

from .. import _random
from .._functions import from_numpy, tensor
from .._tensor import Tensor
from ..autograd.graph import increment_version

__all__ = ["Optimizer", "required"]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def _typename(value) -> str:
    if isinstance(value, Tensor):
        return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                "int64": "torch.LongTensor"}.get(value.dtype.name, "torch.Tensor")
    return type(value).__module__ + "." + type(value).__name__


# --- PyTorch's arithmetic on arrays (results in the parameter's dtype) ----------------------
def axpy(y: np.ndarray, alpha: float, x: np.ndarray) -> np.ndarray:
    """``y.add(x, alpha=alpha)``: alpha rounded to the dtype, then one fused multiply-add."""
    dt = y.dtype
    a = float(dt.type(alpha))
    if dt == np.float64:
        return np.asarray(_random.fma(x, a, y), dt)
    return (x.astype(np.float64) * a + y.astype(np.float64)).astype(dt)


def scale(x: np.ndarray, alpha: float) -> np.ndarray:
    """``x.mul(alpha)``."""
    return x * x.dtype.type(alpha)


def addcmul(y: np.ndarray, a: np.ndarray, b: np.ndarray, value: float) -> np.ndarray:
    """``y.addcmul(a, b, value=value)``: ``y + value * a * b``."""
    return axpy(y, 1.0, scale(a, value) * b) if value != 1 else y + a * b


def addcdiv(y: np.ndarray, a: np.ndarray, b: np.ndarray, value: float) -> np.ndarray:
    """``y.addcdiv(a, b, value=value)``: ``y + value * a / b``."""
    return y + scale(a, value) / b


def lerp(start: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """``start.lerp(end, weight)`` as PyTorch's kernel (two formulas, split at 0.5)."""
    dt = start.dtype
    w = float(dt.type(weight))
    diff = end - start
    if abs(w) < 0.5:
        return axpy(start, w, diff)
    return axpy(end, -float(dt.type(1 - w)), diff)


def values(t: Tensor) -> np.ndarray:
    """The array behind `t` (no history; shared memory for a plain tensor)."""
    return t.detach().numpy()


def write(t: Tensor, array: np.ndarray) -> None:
    """One in-place write of `t` outside autograd (PyTorch's ``with no_grad: t.op_(...)``)."""
    dst = values(t)
    t.detach().copy_(from_numpy(np.asarray(array, dst.dtype).reshape(dst.shape).copy()))


def update(state: Tensor, array: np.ndarray, ops: int = 1) -> None:
    """Store `array` into an optimizer's state tensor in place, counting `ops` in-place ops
    (the number PyTorch's update of that tensor runs) on its version counter."""
    values(state)[...] = array
    for _ in range(ops):
        increment_version(state)


def scalar_step(value: float = 0.0) -> Tensor:
    """PyTorch's per-parameter step counter: a float32 0-d tensor."""
    return tensor(value)


def advance(step: Tensor) -> float:
    """``step += 1`` on a step counter; returns the new count."""
    update(step, values(step) + 1)
    return float(values(step))


class Optimizer:
    """Base class: holds ``param_groups`` (lists of parameters with their hyperparameters)
    and ``state`` (per parameter); subclasses write ``step``.

    >>> import funcgrad.mutable as torch
    >>> w = torch.nn.Parameter(torch.ones(2))
    >>> opt = torch.optim.SGD([w], lr=0.5)
    >>> w.sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.5000, 0.5000], requires_grad=True)
    """

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyperparameters (defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to None (default) or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure: Callable | None = None):
        raise NotImplementedError

    def _with_grads(self, group: dict):
        """(parameter, its gradient's array) for the group's parameters that have one."""
        for p in group["params"]:
            if p.grad is not None:
                g = values(p.grad)
                yield p, (-g if group.get("maximize") else g)

    def state_dict(self) -> dict:
        """``{"state": {index: ...}, "param_groups": [...]}`` with parameters as indices."""
        index, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyperparameters and state saved by `state_dict` (values are copied)."""
        state_dict = deepcopy(state_dict)
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, old in zip(self.param_groups, saved):
            if len(group["params"]) != len(old["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        self.state = defaultdict(dict)
        for group, old in zip(self.param_groups, saved):
            for p, i in zip(group["params"], old["params"]):
                if i in state_dict["state"]:
                    self.state[p] = state_dict["state"][i]
            group.update({k: v for k, v in old.items() if k != "params"})

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


def check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def common_checks(lr: Any, eps: float | None = None, weight_decay: float = 0.0) -> None:
    check(isinstance(lr, Tensor) or 0.0 <= lr, f"Invalid learning rate: {lr}")
    if eps is not None:
        check(0.0 <= eps, f"Invalid epsilon value: {eps}")
    check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
