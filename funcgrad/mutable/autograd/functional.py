"""torch.autograd.functional: vjp, jvp, jacobian, hessian, hvp, vhp of a function of
tensors, computed with the mutable graph (reverse passes; jvp as the transpose of a vjp)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from .._functions import stack
from .._grad_mode import enable_grad
from .._tensor import Tensor
from ._grad import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    if isinstance(x, tuple):
        is_tuple = True
    elif isinstance(x, list):
        is_tuple, x = True, tuple(x)
    else:
        is_tuple, x = False, (x,)
    for k, el in enumerate(x):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                                f"tuple of Tensors but the value at index {k} has type "
                                f"{type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the given {arg_name} has type {type(el)}.")
    return is_tuple, x


def _unpack(x, is_tuple: bool):
    return x if is_tuple else x[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Inputs the function sees: fresh leaves (or views, to differentiate through them)."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(values: tuple, create_graph: bool) -> tuple:
    if create_graph:
        return values
    return tuple(None if v is None else v.detach() for v in values)


def _check_requires_grad(outputs: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for k, out in enumerate(outputs):
        if out is None or not out.requires_grad:
            if kind == "outputs":
                raise RuntimeError(f"Output {k} of the user-provided function does not require "
                                   "gradients. The outputs must be computed in a differentiable "
                                   "manner from the input when running in strict mode.")
            raise RuntimeError(f"The jacobian of the user-provided function is independent of "
                               f"input {k}. This is not allowed in strict mode.")


def _grads(outputs: tuple, inputs: tuple, grad_outputs: tuple, create_graph: bool) -> tuple:
    """d(outputs . grad_outputs)/d inputs; None where an input is unused."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                 create_graph=create_graph, retain_graph=True, allow_unused=True)


def _zeros_for_none(grads: tuple, like: tuple) -> tuple:
    return tuple(g if g is not None else Tensor._wrap(np.zeros_like(t._data))
                 for g, t in zip(grads, like))


def _validate_v(v: tuple, other: tuple, what: str) -> None:
    if len(v) != len(other):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                           f"{len(v)}.")
    for k, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Entry {k} in v has invalid size: should be {b.shape} but got "
                               f"{a.shape}.")


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import vjp
    >>> vjp(lambda x: (x ** 2).sum(), torch.tensor([1.0, 2.0]))[1]
    tensor([2., 4.])
    """
    with enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _prepare(ins, create_graph, True)
        outputs = func(*ins)
        is_out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outs, "outputs", strict)
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            vs = (Tensor._wrap(np.ones_like(outs[0]._data)),)
        else:
            _, vs = _as_tuple(v, "v", "vjp")
            _validate_v(vs, outs, "v")
        grads = _grads(outs, ins, vs, create_graph)
        _check_requires_grad(grads, "grads", strict)
    grads = _zeros_for_none(grads, ins)
    return (_unpack(_finish(outs, create_graph), is_out_tuple),
            _unpack(_finish(grads, create_graph), is_in_tuple))


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``, as the transpose of a vjp (the double-backward trick).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))[1]
    tensor([2., 0.])
    """
    with enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prepare(ins, create_graph, True)
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            vs = (Tensor._wrap(np.ones_like(ins[0]._data)),)
        else:
            _, vs = _as_tuple(v, "v", "jvp")
            _validate_v(vs, ins, "v")
        outputs = func(*ins)
        is_out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outs, "outputs", strict)
        # u is a dummy cotangent; d(u^T J v)/du = J v
        us = tuple(Tensor._wrap(np.zeros_like(o._data)).requires_grad_(True) for o in outs)
        grads = _grads(outs, ins, us, True)
        grads_used = [(g, w) for g, w in zip(grads, vs) if g is not None]
        if grads_used:
            result = _grad([g for g, _ in grads_used], us, [w for _, w in grads_used],
                           create_graph=create_graph, retain_graph=True, allow_unused=True)
        else:
            result = (None,) * len(us)
        _check_requires_grad(result, "grads", strict)
    result = _zeros_for_none(result, outs)
    return (_unpack(_finish(outs, create_graph), is_out_tuple),
            _unpack(_finish(result, create_graph), is_out_tuple))


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian: one reverse pass per output element. For one input and one output it
    is a tensor of shape ``out.shape + in.shape``; otherwise nested tuples of those.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         "Hint: If your function has more outputs than inputs, "
                         '"forward-mode" tends to be more performant. Otherwise, prefer to use '
                         '"reverse-mode".')
    with enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph, True)
        outputs = func(*ins)
        is_out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function",
                                       "jacobian")
        _check_requires_grad(outs, "outputs", strict)
        blocks = []
        for out in outs:
            rows: list = [[] for _ in ins]
            flat = out.reshape(-1)
            for j in range(flat.numel()):
                if out.requires_grad:
                    grads = _grad([flat[j]], ins, None, create_graph=create_graph,
                                  retain_graph=True, allow_unused=True)
                else:
                    grads = (None,) * len(ins)
                for k, (g, t) in enumerate(zip(grads, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"The jacobian of the user-provided function is "
                                               f"independent of input {k}. This is not allowed "
                                               "in strict mode.")
                        g = Tensor._wrap(np.zeros_like(t._data))
                    rows[k].append(g)
            per_input = []
            for k, t in enumerate(ins):
                if rows[k]:
                    stacked = stack(rows[k])
                else:
                    stacked = Tensor._wrap(np.zeros((0,) + t._data.shape, t._data.dtype))
                block = stacked.reshape(tuple(out.shape) + tuple(t.shape))
                per_input.append(block if create_graph else block.detach())
            blocks.append(_unpack(tuple(per_input), is_in_tuple))
    return _unpack(tuple(blocks), is_out_tuple)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function returning one element: the Jacobian of its gradient.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out = func(*xs)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if is_out_tuple or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element.")
        _check_requires_grad(outs, "outputs", strict)
        grads = _grads(outs, xs, (Tensor._wrap(np.ones_like(outs[0]._data)),), True)
        return tuple(g if g is not None else Tensor._wrap(np.zeros_like(x._data))
                     for g, x in zip(grads, xs))

    result = jacobian(gradient, ins, create_graph=create_graph, strict=strict)
    if not is_in_tuple:
        return result[0][0]
    return result


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a function returning one element.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a function returning one element (H is symmetric: the
    same numbers as `vhp`).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(name, func, inputs, v, create_graph, strict):
    with enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", name)
        ins = _prepare(ins, create_graph, True)
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            vs = (Tensor._wrap(np.ones_like(ins[0]._data)),)
        else:
            _, vs = _as_tuple(v, "v", name)
            _validate_v(vs, ins, "v")
        outputs = func(*ins)
        is_out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", name)
        if is_out_tuple or outs[0].numel() != 1:
            raise RuntimeError(f"The function given to {name} should return a single Tensor "
                               "with a single element.")
        _check_requires_grad(outs, "outputs", strict)
        grads = _grads(outs, ins, (Tensor._wrap(np.ones_like(outs[0]._data)),), True)
        _check_requires_grad(grads, "grads", strict)
        used = [(g, w) for g, w in zip(grads, vs) if g is not None and g.requires_grad]
        if used:
            result = _grad([g for g, _ in used], ins, [w for _, w in used],
                           create_graph=create_graph, retain_graph=True, allow_unused=True)
        else:
            result = (None,) * len(ins)
    result = _zeros_for_none(result, ins)
    return (_unpack(_finish(outs, create_graph), False),
            _unpack(_finish(result, create_graph), is_in_tuple))
