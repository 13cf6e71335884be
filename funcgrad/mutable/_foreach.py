"""``torch._foreach_*``: an op applied to each tensor of a list (optimizers' multi-tensor
paths, and PyTorch's tests, call them). Here each is the op applied tensor by tensor, so
gradients and in-place version bumps are the per-tensor op's; the grad_fn names are the
per-tensor op's too (PyTorch's out-of-place forms record one Foreach...Backward node each).

>>> import funcgrad.mutable as torch
>>> xs = [torch.tensor(1.0), torch.tensor(2.0)]
>>> torch._foreach_mul(xs, [3.0, 4.0])
(tensor(3.), tensor(8.))
>>> _ = torch._foreach_add_(xs, 1)
>>> xs
[tensor(2.), tensor(3.)]
"""
from __future__ import annotations

from typing import Callable

from ._tensor import Tensor

UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
#: with a second operand: a number, a list of numbers or a list of tensors
BINARY = ("add", "sub", "mul", "div", "pow", "clamp_max", "clamp_min")
#: with two more operands (tensor lists, or for lerp's weight a number or list)
TERNARY = ("addcmul", "addcdiv", "lerp")


def _spread(operand, n: int) -> list:
    """An operand as one value per tensor: a list or tuple is taken item by item (PyTorch's
    messages when its length differs), anything else is used for every tensor."""
    if not isinstance(operand, (list, tuple)):
        return [operand] * n
    if len(operand) != n:
        if operand and all(isinstance(o, Tensor) for o in operand):
            raise RuntimeError("Tensor lists must have the same number of tensors, got "
                               f"{n} and {len(operand)}")
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return list(operand)


def _checked(tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError("_foreach ops take a list or tuple of tensors, got "
                        + type(tensors).__name__)
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(tensors)


def _make(method: str, inplace: bool) -> Callable:
    def foreach(self, *operands, **kwargs):
        if method == "pow" and not isinstance(self, (list, tuple)):
            # _foreach_pow(number, tensors): the number raised to each tensor
            exponents = _checked(operands[0])
            return tuple(self ** t for t in exponents)
        tensors = _checked(self)
        per = [_spread(o, len(tensors)) for o in operands]
        name = method + "_" if inplace else method
        results = [getattr(t, name)(*(p[i] for p in per), **kwargs)
                   for i, t in enumerate(tensors)]
        return self if inplace else tuple(results)

    foreach.__name__ = foreach.__qualname__ = "_foreach_" + method + ("_" if inplace else "")
    foreach.__doc__ = (f"``torch.{foreach.__name__}``: ``{method}{'_' if inplace else ''}`` "
                       "applied to each tensor of a list" + (" (in place; returns the list)."
                                                             if inplace else "."))
    return foreach


FUNCTIONS: dict = {}
for _method in UNARY + BINARY + TERNARY:
    FUNCTIONS["_foreach_" + _method] = _make(_method, False)
    FUNCTIONS["_foreach_" + _method + "_"] = _make(_method, True)
for _method in ("clone", "norm", "max"):
    FUNCTIONS["_foreach_" + _method] = _make(_method, False)


def _foreach_zero_(self) -> list:
    """``torch._foreach_zero_``: every tensor of the list set to zero in place."""
    for t in _checked(self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking: bool = False) -> list:
    """``torch._foreach_copy_``: each tensor of the list takes the values of its partner."""
    tensors = _checked(self)
    for t, s in zip(tensors, _spread(src, len(tensors))):
        t.copy_(s)
    return self


FUNCTIONS["_foreach_zero_"] = _foreach_zero_
FUNCTIONS["_foreach_copy_"] = _foreach_copy_
