"""torch.autograd.functional: vjp, jvp, jacobian, hessian, hvp and vhp of a function of
tensors, as PyTorch 2.13 computes them: on the mutable graph with `autograd.grad`, forward
mode by the double-backward trick, and PyTorch's arguments, checks, messages and return
structures (tuples where the inputs or outputs were tuples; lists from the forward-mode
Jacobian, as PyTorch returns them).

Why the mutable graph and not funcgrad's functional transforms: the user's function is
PyTorch code (methods, in-place writes, views) that runs on `Tensor`, whose data are NumPy
buffers; a functional transform would need Tensors holding its tracers. Both models still
run one engine: the graph's nodes apply the same primitives and rules, and
``create_graph=True`` evaluates those rules on graph values (see funcgrad.mutable).
"""
from __future__ import annotations

from typing import Any, Callable

from .._functions import cat, stack, zeros_like
from .._grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .._tensor import Tensor
from ._grad import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


# --- arguments and results ------------------------------------------------------------------
def _as_tuple(x: Any, arg_name: str, fn_name: str | None) -> tuple[bool, tuple]:
    """``(was a tuple, as a tuple)``; anything but a Tensor or a tuple of Tensors is refused
    (a list too, as PyTorch refuses it)."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for k, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = (f"value at index {k} has type {type(item)}" if is_tuple
                     else f"given {arg_name} has type {type(item)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where}.")
    return is_tuple, items


def _unpack(result: Any, was_tuple: bool | tuple[bool, bool]) -> Any:
    """Undo `_as_tuple` on a result: per output (and, nested, per input)."""
    outer, inner = was_tuple if isinstance(was_tuple, tuple) else (was_tuple, None)
    if inner is False:
        result = tuple(row[0] for row in result)
    return result if outer else result[0]


def _prepare(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """What the function sees: a view of each input that requires grad when the result must
    stay on the caller's graph (create_graph), else a fresh leaf."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in tensors)


def _finish(values: Any, create_graph: bool) -> Any:
    """Results leave the graph unless create_graph asked to keep them on it."""
    if isinstance(values, Tensor):
        return values if create_graph else values.detach()
    return type(values)(_finish(v, create_graph) for v in values)


def _validate_v(v: tuple, other: tuple, other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for k, (given, like) in enumerate(zip(v, other)):
        if given.size() != like.size():
            entry = f"Entry {k} in " if other_is_tuple else ""
            raise RuntimeError(f"{entry}v has invalid size: should be {like.size()} but got "
                               f"{given.size()}.")


def _check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    """Strict mode: every value must exist and depend on the inputs."""
    if not strict:
        return
    for k, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {k}. This is not allowed in strict mode.")
        if value.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {k} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {k} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {k} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {k} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode.")


def _grads(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
           create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """autograd.grad over the outputs that require grad; None for every input if none do."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return tuple(_grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                       retain_graph=retain_graph, create_graph=create_graph,
                       allow_unused=True))


_MISSING = {
    "back": "The output of the user-provided function is independent of input {k}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {k} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {k}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{k} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_zeros(grads: tuple, like: tuple, strict: bool, create_graph: bool,
                stage: str) -> tuple:
    """Zeros where a gradient is None; strict mode refuses a None (and, with create_graph, a
    gradient that does not depend on the inputs)."""
    out = []
    for k, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(k=k))
            g = zeros_like(like[k])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {k}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


def _vector(v: Any, like: tuple, like_is_tuple: bool, name: str, create_graph: bool,
            what: str) -> tuple | None:
    """The checked vector `v` (None allowed only against one single-element tensor)."""
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor "
                               "with a single element.")
        return None
    _, vs = _as_tuple(v, "v", name)
    vs = _prepare(vs, create_graph, False)
    _validate_v(vs, like, like_is_tuple)
    return vs


def _call(func: Callable, inputs: tuple, name: str) -> tuple[bool, tuple]:
    return _as_tuple(func(*inputs), "outputs of the user-provided function", name)


# --- products -------------------------------------------------------------------------------
def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at `inputs`. `v` may be None
    only when `func` returns one single-element tensor.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import vjp
    >>> vjp(lambda x: (x ** 2).sum(), torch.tensor([1.0, 2.0]))[1]
    tensor([2., 4.])
    """
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _prepare(ins, create_graph, True)
        out_tuple, outs = _call(func, ins, "vjp")
        _check_requires_grad(outs, "outputs", strict)
        vs = _vector(v, outs, out_tuple, "vjp", create_graph,
                     "user-provided function returns")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_zeros(_grads(outs, ins, vs, create_graph), ins, strict, create_graph,
                               "back")
    return (_unpack(_finish(outs, create_graph), out_tuple),
            _unpack(_finish(products, create_graph), in_tuple))


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``, by the double-backward trick: ``u -> J^T u`` is linear in a
    dummy cotangent ``u``, and its vjp with `v` is ``J v``.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))[1]
    tensor([2., 0.])
    """
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prepare(ins, create_graph, True)
        vs = _vector(v, ins, in_tuple, "jvp", create_graph,
                     "input to the user-provided function is")
        out_tuple, outs = _call(func, ins, "jvp")
        _check_requires_grad(outs, "outputs", strict)
        dummies = tuple(zeros_like(o, requires_grad=True) for o in outs)
        pulled = _grads(outs, ins, dummies, create_graph=True)
        _check_requires_grad(pulled, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_zeros(_grads(pulled, dummies, vs, create_graph), outs, strict,
                               create_graph, "back_trick")
    return (_unpack(_finish(outs, create_graph), out_tuple),
            _unpack(_finish(products, create_graph), out_tuple))


def _hessian_setup(name: str, func: Callable, inputs, v, create_graph: bool, strict: bool):
    """vhp's and hvp's common start: inputs, v, the scalar output and its gradient (kept on
    the graph, to be differentiated again)."""
    in_tuple, ins = _as_tuple(inputs, "inputs", name)
    ins = _prepare(ins, create_graph, True)
    vs = _vector(v, ins, in_tuple, name, create_graph, "input to the user-provided function is")
    out_tuple, outs = _call(func, ins, name)
    _check_requires_grad(outs, "outputs", strict)
    if out_tuple:
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                           "contain a single element")
    gradient = _grads(outs, ins, create_graph=True)
    _check_requires_grad(gradient, "jacobian", strict)
    return in_tuple, ins, vs, outs, gradient


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a function returning one element: the vjp of its
    gradient.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    with enable_grad():
        in_tuple, ins, vs, outs, gradient = _hessian_setup("vhp", func, inputs, v,
                                                           create_graph, strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_zeros(_grads(gradient, ins, vs, create_graph), ins, strict,
                               create_graph, "double_back")
    return (_unpack(_finish(outs, create_graph), False),
            _unpack(_finish(products, create_graph), in_tuple))


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a function returning one element, by the double-backward
    trick on its gradient (the same numbers as `vhp`, H being symmetric).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    with enable_grad():
        in_tuple, ins, vs, outs, gradient = _hessian_setup("hvp", func, inputs, v,
                                                           create_graph, strict)
        dummies = tuple(zeros_like(t, requires_grad=True) for t in ins)
        pulled = _grads(gradient, ins, dummies, create_graph=True)
        _check_requires_grad(gradient, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_zeros(_grads(pulled, dummies, vs, create_graph), ins, strict,
                               create_graph, "double_back_trick")
    return (_unpack(_finish(outs, create_graph), False),
            _unpack(_finish(products, create_graph), in_tuple))


# --- Jacobians and Hessians ---------------------------------------------------------------
def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of `func` at `inputs`: for one input and one output a tensor of shape
    ``out.shape + in.shape``; a tuple per output (of tuples per input) where those were
    tuples. ``strategy="forward-mode"`` needs ``vectorize=True`` and returns lists, as in
    PyTorch.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in _STRATEGIES:
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs, strict, vectorize, keep_graph=False)
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph, True)
        out_tuple, outs = _call(func, ins, "jacobian")
        _check_requires_grad(outs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or "
                "`vectorize=False`.")
        blocks = tuple(_reverse_rows(out, i, ins, create_graph, strict and not vectorize)
                       for i, out in enumerate(outs))
        return _unpack(_finish(blocks, create_graph), (out_tuple, in_tuple))


def _reverse_rows(out: Tensor, i: int, ins: tuple, create_graph: bool, strict: bool) -> tuple:
    """d out / d each input, one reverse pass per element of `out`, rows stacked."""
    rows: list[list] = [[] for _ in ins]
    flat = out.reshape(-1)
    for j in range(out.nelement()):
        pulled = _grads((flat[j],), ins, retain_graph=True, create_graph=create_graph)
        for k, (g, x) in enumerate(zip(pulled, ins)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {k}. This is not allowed in "
                                       "strict mode.")
                g = zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   "create_graph=True.")
            rows[k].append(g)
    return tuple(_stacked(row, out, x) for row, x in zip(rows, ins))


def _stacked(row: list, out: Tensor, x: Tensor) -> Tensor:
    shape = tuple(out.shape) + tuple(x.shape)
    if not row:  # an output with no elements
        return zeros_like(x).reshape(-1)[:0].reshape(shape)
    return stack(row, 0).view(shape)


def _jacobian_forward(func: Callable, inputs, strict: bool, vectorize: bool,
                      keep_graph: bool):
    """The forward-mode Jacobian's contract (PyTorch's): no strict mode, vectorize only,
    the inputs used as given (a result stays on the graph of inputs that require grad), lists
    returned. The columns come from the double-backward trick on the mutable graph: the same
    numbers forward-mode AD gives. `keep_graph` keeps every result on the graph (a Hessian's
    outer forward pass, as PyTorch's, whose inputs it marks as requiring grad)."""
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
            "are not supported together (yet). Please either set `strict=False` or "
            "`strategy=\"reverse-mode\"`.")
    in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
            "implemented for `vectorize=True`.")
    keep = keep_graph or any(x.requires_grad for x in ins)
    with enable_grad():
        seen = tuple(x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True)
                     for x in ins)
        out_tuple, outs = _as_tuple(func(*seen), "outputs", None)
        blocks = [_one_piece(_reverse_rows(out, i, seen, keep, False), out, seen)
                  for i, out in enumerate(outs)]
    if not keep:
        blocks = [[b.detach() for b in row] for row in blocks]
    return _unpack(blocks, (out_tuple, in_tuple))


def _one_piece(blocks: tuple, out: Tensor, ins: tuple) -> list:
    """An output's blocks cut from one tensor, as PyTorch's forward mode computes them (so
    that every block of an output is on the graph if one is)."""
    lead = tuple(out.shape)
    sizes = [x.nelement() for x in ins]
    whole = cat([b.reshape(lead + (n,)) for b, n in zip(blocks, sizes)], -1)
    return [piece.reshape(lead + tuple(x.shape))
            for piece, x in zip(whole.split(sizes, dim=-1), ins)]


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function returning one element: the Jacobian of its gradient. For a
    tuple of inputs, a tuple of tuples (block ``[i][j]`` is d2 f / d in_i d in_j).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_output(*xs):
        out = func(*xs)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient(*xs):
        jac = jacobian(scalar_output, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    if outer_jacobian_strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        result = _jacobian_forward(gradient, ins, strict, vectorize, keep_graph=True)
    else:
        result = jacobian(gradient, ins, create_graph=create_graph, strict=strict,
                          vectorize=vectorize)
    return _unpack(result, (in_tuple, in_tuple))
