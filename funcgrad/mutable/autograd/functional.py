"""torch.autograd.functional: vjp, jvp, jacobian, hessian, hvp and vhp of a function of
tensors, computed by funcgrad's functional transforms (`vjp`, `jvp`, `jacrev`, `jacfwd`), so
one engine serves both models; PyTorch 2.13's arguments, checks, messages and return
structures (tuples where the inputs or outputs were tuples; lists from the forward-mode
Jacobian, as PyTorch returns them).

How: the user's function becomes a function of arrays (`_AsArrays`). Inside a transform its
inputs are tensors holding the transform's tracers, whose ops dispatch through the
functional model (see `_ops.traced_apply`): the transform records every primitive with the
rules of the one table, and the mutable graph records nothing. What PyTorch learns from its
graph (does an output require grad? is a gradient None?) is read from the tracers: under
one forward-mode trace per input, a value depends on input k when it holds a tracer of k's
trace (`_dependence`). With ``create_graph=True`` the results are put on the mutable graph
by one custom node whose backward is again a functional vjp of the same computation
(`AutogradFunctional`), so they differentiate to any order.
"""
from __future__ import annotations

import traceback
from typing import Any, Callable

import numpy as np

from ..._src.core import Array, Tracer
from ..._src.jacobians import jacfwd, jacrev
from ..._src.transforms import jvp as _jvp
from ..._src.transforms import vjp as _vjp
from ...numpy import _primitives as NP
from .. import _dtypes as D
from .._grad_mode import enable_grad
from .._ops import TRACED, traced_tensor, traced_value
from .._tensor import Tensor
from .function import Function

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


def _prepare(tensors: tuple, create_graph: bool) -> tuple:
    """The inputs as PyTorch hands them on: with create_graph, a view of each input that
    requires grad (the result stays on the caller's graph), else a fresh leaf."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(True) for t in tensors)


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


def _vector(v: Any, like: tuple, like_is_tuple: bool, name: str, create_graph: bool,
            what: str) -> tuple:
    """The checked vector `v` (None allowed only against one single-element tensor, and
    then ones). Under create_graph a `v` that requires grad stays on the caller's graph."""
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor "
                               "with a single element.")
        return (Tensor._wrap(np.ones(like[0].shape, like[0]._data.dtype)),)
    _, vs = _as_tuple(v, "v", name)
    vs = tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach() for t in vs)
    _validate_v(vs, like, like_is_tuple)
    return vs


def _value(a, like):
    """A vector's value `a` as a cotangent or tangent for `like` (cast to its dtype)."""
    dtype = _raw_dtype(like)
    if isinstance(a, Array):
        return a if a.dtype == dtype else NP.astype(a, dtype=dtype)
    return np.asarray(a, dtype=dtype)


# --- the user's function as a function of arrays ------------------------------------------------
class _AsArrays:
    """``func`` over tensors as a function of arrays: each array (a tracer inside a
    transform) wrapped in a tensor of its input's dtype, ``func`` called, its outputs'
    values returned as a tuple. ``out_tuple`` records whether ``func`` returned a tuple."""

    def __init__(self, func: Callable, ins: tuple, arg_name: str, fn_name: str | None,
                 check: Callable | None = None) -> None:
        self.func = func
        self.dtypes = tuple(x._dtype for x in ins)
        self.arg_name = arg_name
        self.fn_name = fn_name
        self.check = check
        self.out_tuple = False

    def __call__(self, *arrays) -> tuple:
        tensors = tuple(_input_tensor(a, dt) for a, dt in zip(arrays, self.dtypes))
        out = _run_user_function(self.func, tensors)
        self.out_tuple, outs = _as_tuple(out, self.arg_name, self.fn_name)
        if self.check is not None:
            self.check(self.out_tuple, outs)
        return tuple(traced_value(o) for o in outs)


def _input_tensor(value, dtype: D.dtype) -> Tensor:
    """What the function receives: a leaf that requires grad, as in PyTorch (so an in-place
    write into it fails as PyTorch's does), holding the transform's tracer."""
    if type(value) is Array:
        value = value._value
    t = traced_tensor(value, dtype) if isinstance(value, Tracer) else Tensor._wrap(
        np.asarray(value, dtype=dtype.np))
    t._rg = True
    return t


_TRACER_FAILURES = ("a traced funcgrad array", "has no funcgrad derivative rule",
                    "Tracer' object has no attribute")


def _run_user_function(func: Callable, tensors: tuple):
    """Call ``func``; an op that computes with NumPy on a traced tensor's data (so cannot
    see the transform) is reported by name, as not yet supported here."""
    try:
        return func(*tensors)
    except (TypeError, AttributeError) as exc:
        if not any(s in str(exc) for s in _TRACER_FAILURES):
            raise
        raise RuntimeError(f"{_failing_op(exc)} is not yet supported inside "
                           "torch.autograd.functional: it computes on the tensor's data with "
                           "NumPy, which cannot follow a value being differentiated "
                           f"({type(exc).__name__}: {exc}). Express this step with other "
                           "tensor operations.") from exc


def _failing_op(exc: BaseException) -> str:
    """The funcgrad.mutable function the user's code called when it failed: the first frame
    in funcgrad.mutable after one outside it."""
    outside = False
    for frame in traceback.extract_tb(exc.__traceback__):
        path = frame.filename.replace("\\", "/")
        inside = "/funcgrad/mutable/" in path
        if inside and outside:
            module = path.rsplit("/funcgrad/mutable/", 1)[1][:-3].replace("/", ".")
            return f"{frame.name} (funcgrad.mutable.{module})"
        outside = outside or not inside
    return "An operation"


def _raw(value):
    """A transform's result as the engine's value: a constant Array unwrapped, a tracer kept."""
    return value._value if type(value) is Array else value


def _arrays(tensors: tuple) -> tuple:
    return tuple(t._data for t in tensors)


def _tensors(arrays) -> tuple:
    """Concrete results as tensors of their own."""
    return tuple(Tensor._wrap(np.array(_raw(a))) for a in arrays)


# --- what depends on what ---------------------------------------------------------------------
def _dependence(fn: Callable, arrays: tuple) -> tuple[tuple, list]:
    """``(outputs, deps)``: `fn`'s outputs (arrays) at `arrays`, and for each output the set
    of positions of the arrays it depends on. Each argument gets its own forward-mode trace
    (nested); an output depends on argument k when it holds a tracer of k's trace. This is
    what PyTorch reads from its graph as requires_grad, or as a gradient that is None."""
    n = len(arrays)
    traces: list = [None] * n
    found: list = []

    def nest(k: int, args: tuple):
        if k == n:
            outs = fn(*args)
            found.append([_traces_in(o) for o in outs])
            return outs

        def with_k(a):
            traces[k] = a._trace
            return nest(k + 1, args[:k] + (a,) + args[k + 1:])

        x = args[k]
        return _jvp(with_k, (x,), (np.zeros(np.shape(x), _raw_dtype(x)),))[0]

    outs = nest(0, tuple(arrays))
    deps = [{k for k in range(n) if traces[k] in seen} for seen in found[0]]
    return tuple(_raw(o) for o in outs), deps


def _raw_dtype(x) -> np.dtype:
    return np.dtype(getattr(x, "dtype", None) or np.result_type(x))


def _traces_in(value) -> set:
    seen = set()
    while isinstance(value, Tracer):
        seen.add(value._trace)
        value = value._value
    return seen


# --- results on the mutable graph (create_graph=True) -------------------------------------------
class AutogradFunctional(Function):
    """``fun`` (arrays -> tuple of arrays) applied to tensors as one node of the mutable
    graph (printed ``AutogradFunctionalBackward``); its backward is the functional vjp of
    ``fun``, lifted again (any order). Internal: not exported."""

    @staticmethod
    def forward(ctx, fun, deps, values, *xs):
        ctx.fun = fun
        ctx.save_for_backward(*xs)
        outs = _tensors(values)
        ctx.out_meta = tuple((o._data.shape, o._data.dtype) for o in outs)
        ctx.mark_non_differentiable(*[o for o, d in zip(outs, deps) if not d])
        return outs

    @staticmethod
    def backward(ctx, *cts):
        xs = ctx.saved_tensors
        cts = tuple(Tensor._wrap(np.zeros(shape, dtype)) if c is None else c
                    for c, (shape, dtype) in zip(cts, ctx.out_meta))
        fun = ctx.fun
        n = len(xs)

        def pullback(*arrays):
            values, pull = _vjp(fun, *arrays[:n])
            return pull(tuple(_value(c, o) for c, o in zip(arrays[n:], values)))

        return (None, None, None) + _lift(pullback, xs + cts)


def _lift(fun: Callable, tensors: tuple) -> tuple:
    """``fun``'s outputs at the tensors' values, on the mutable graph: differentiable with
    respect to the tensors that require grad (outputs depending on none are constants, as
    PyTorch's do not require grad). The function must not close over tensors that require
    grad: their gradient would be lost, so that is refused."""
    if not any(t.requires_grad for t in tensors):
        return _tensors(fun(*_arrays(tensors)))
    watching = TRACED.constants
    TRACED.constants = []
    try:
        values, deps = _dependence(fun, _arrays(tensors))
        closed_over = TRACED.constants
    finally:
        TRACED.constants = watching
    if closed_over:
        raise RuntimeError(
            "torch.autograd.functional with create_graph=True (or a forward-mode Jacobian of "
            "inputs that require grad): the function uses a tensor that requires grad but is "
            "not one of its inputs; its gradient cannot be followed here. Pass it as an "
            "input, or detach() it if it is a constant.")
    # as PyTorch's: a result requires grad when it depends on a tensor that does
    requiring = {k for k, t in enumerate(tensors) if t.requires_grad}
    deps = [d & requiring for d in deps]
    return tuple(AutogradFunctional.apply(fun, deps, values, *tensors))


def _results(fun: Callable, tensors: tuple, on_graph: bool) -> tuple:
    """The results as tensors: on the mutable graph (`_lift`) or plain."""
    if on_graph:
        return _lift(fun, tensors)
    return _tensors(fun(*_arrays(tensors)))


# --- strict mode ------------------------------------------------------------------------------
def _strict_outputs(deps: list) -> None:
    for k, d in enumerate(deps):
        if not d:
            raise RuntimeError(
                f"Output {k} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode.")


def _strict_used(deps: list, n: int) -> None:
    used = set().union(*deps) if deps else set()
    for k in range(n):
        if k not in used:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {k}. This is not allowed in strict mode.")


def _strict_graph(deps: list, what: str) -> None:
    """create_graph in strict mode: every result must depend on the inputs."""
    for k, d in enumerate(deps):
        if not d:
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {k}. This is not allowed in strict mode when "
                               "create_graph=True.")


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
        ins = _prepare(ins, create_graph)
        fun = _AsArrays(func, ins, "outputs of the user-provided function", "vjp")
        n = len(ins)
        if strict:
            out_vals, deps = _dependence(fun, _arrays(ins))
            _strict_outputs(deps)
        else:
            out_vals, pull = _vjp(fun, *_arrays(ins))
        outs = _tensors(out_vals)
        vs = _vector(v, outs, fun.out_tuple, "vjp", create_graph,
                     "user-provided function returns")
        if strict:
            _strict_used(deps, n)

        def both(*arrays):
            values, pull = _vjp(fun, *arrays[:n])
            cts = tuple(_value(c, o) for c, o in zip(arrays[n:], values))
            return tuple(_raw(o) for o in values) + tuple(pull(cts))

        if create_graph or strict:
            results = _results(both, ins + vs, create_graph)
        else:  # one run of the function: its pullback applied to v
            cts = tuple(_value(c._data, o) for c, o in zip(vs, out_vals))
            results = outs + _tensors(pull(cts))
        if strict and create_graph:
            _strict_graph([_depends_on_graph(r) for r in results[len(outs):]], "jacobian")
    return (_unpack(results[:len(outs)], fun.out_tuple),
            _unpack(results[len(outs):], in_tuple))


def _depends_on_graph(t: Tensor) -> set:
    """For strict mode's create_graph check: whether a lifted result requires grad."""
    return {0} if t.requires_grad else set()


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``, by forward mode.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))[1]
    tensor([2., 0.])
    """
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prepare(ins, create_graph)
        vs = _vector(v, ins, in_tuple, "jvp", create_graph,
                     "input to the user-provided function is")
        fun = _AsArrays(func, ins, "outputs of the user-provided function", "jvp")
        n = len(ins)
        if strict:
            _, deps = _dependence(fun, _arrays(ins))
            _strict_outputs(deps)
            _strict_used(deps, n)

        def both(*arrays):
            xs = arrays[:n]
            tangents = tuple(_value(t, x) for t, x in zip(arrays[n:], xs))
            values, products = _jvp(fun, xs, tangents)
            return tuple(_raw(o) for o in values) + tuple(_raw(p) for p in products)

        results = _results(both, ins + vs, create_graph)
        n_out = len(results) // 2
        if strict and create_graph:
            _strict_graph([_depends_on_graph(r) for r in results[n_out:]], "jacobian")
    return (_unpack(results[:n_out], fun.out_tuple),
            _unpack(results[n_out:], fun.out_tuple))


def _scalar_check(name: str) -> Callable:
    def check(out_tuple: bool, outs: tuple) -> None:
        if out_tuple:
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outs[0].nelement() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                               "contain a single element")
    return check


def _gradient_of(fun: Callable, n: int) -> Callable:
    """The gradient of `fun` (one single-element output) as a function of the inputs."""
    def gradient(*xs):
        values, pull = _vjp(fun, *xs)
        return tuple(_raw(g) for g in pull((np.ones(values[0].shape, values[0].dtype),)))
    return gradient


def _strict_gradient(grad_deps: list, out_deps: list, n: int) -> None:
    """Hessians in strict mode: the gradient must depend on the inputs."""
    used = set().union(*out_deps) if out_deps else set()
    for k in range(n):
        if k not in used:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {k}. This is not allowed in strict mode.")
        if not grad_deps[k]:
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {k} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")


def _second_order(name: str, func: Callable, inputs, v, create_graph: bool, strict: bool,
                  product: Callable):
    """vhp and hvp: checks, then ``product(gradient, xs, vs)`` for the scalar output."""
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", name)
        ins = _prepare(ins, create_graph)
        vs = _vector(v, ins, in_tuple, name, create_graph,
                     "input to the user-provided function is")
        fun = _AsArrays(func, ins, "outputs of the user-provided function", name,
                        _scalar_check(name))
        n = len(ins)
        gradient = _gradient_of(fun, n)
        if strict:
            _, out_deps = _dependence(fun, _arrays(ins))
            _strict_outputs(out_deps)
            _, grad_deps = _dependence(gradient, _arrays(ins))
            _strict_gradient(grad_deps, out_deps, n)
            used = set().union(*grad_deps)
            for k in range(n):
                if k not in used and name == "vhp":
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {k}. This is not allowed in "
                                       "strict mode.")

        def both(*arrays):
            xs = arrays[:n]
            tangents = tuple(_value(t, x) for t, x in zip(arrays[n:], xs))
            return tuple(fun(*xs)) + tuple(_raw(p) for p in product(gradient, xs, tangents))

        results = _results(both, ins + vs, create_graph)
        if strict and create_graph:
            _strict_graph([_depends_on_graph(r) for r in results[1:]], "hessian")
    return results[0], _unpack(results[1:], in_tuple)


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a function returning one element: the vjp of its
    gradient.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    def product(gradient, xs, vs):
        return _vjp(gradient, *xs)[1](vs)
    return _second_order("vhp", func, inputs, v, create_graph, strict, product)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a function returning one element: the jvp of its
    gradient (the same numbers as `vhp`, H being symmetric).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    def product(gradient, xs, vs):
        return _jvp(gradient, xs, vs)[1]
    return _second_order("hvp", func, inputs, v, create_graph, strict, product)


# --- Jacobians and Hessians ---------------------------------------------------------------
def _blocks(fun: Callable, n: int, forward: bool) -> Callable:
    """The Jacobian's blocks of `fun` (output i, input k), flat, as a function of arrays."""
    transform = jacfwd if forward else jacrev

    def blocks(*xs):
        jac = transform(fun, argnums=tuple(range(n)))(*xs)
        return tuple(_raw(row[k]) for row in jac for k in range(n))
    return blocks


def _nested(flat: tuple, n_out: int, n: int, kind=tuple) -> Any:
    return kind(kind(flat[i * n + k] for k in range(n)) for i in range(n_out))


def _strict_blocks(out_deps: list, n: int) -> None:
    for i, d in enumerate(out_deps):
        for k in range(n):
            if k not in d:
                raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                   f"of input {k}. This is not allowed in strict mode.")


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
        ins = _prepare(ins, create_graph)
        fun = _AsArrays(func, ins, "outputs of the user-provided function", "jacobian")
        return _jacobian_reverse(fun, ins, in_tuple, create_graph, strict, vectorize)


def _jacobian_reverse(fun: _AsArrays, ins: tuple, in_tuple: bool, create_graph: bool,
                      strict: bool, vectorize: bool):
    n = len(ins)
    if strict:
        _, deps = _dependence(fun, _arrays(ins))
        _strict_outputs(deps)
    if vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
            "not supported together. Please either set `strict=False` or "
            "`vectorize=False`.")
    if strict:
        _strict_blocks(deps, n)
    flat = _results(_blocks(fun, n, False), ins, create_graph)
    n_out = len(flat) // n
    for i in range(n_out if not vectorize else 0):
        block = flat[i * n]
        if np.prod(block.shape[:block.dim() - ins[0].dim()]) == 0:
            # PyTorch stacks one gradient per output element, and an empty stack fails
            raise RuntimeError("stack expects a non-empty TensorList")
    if strict and create_graph:
        for i in range(n_out):
            if any(not flat[i * n + k].requires_grad for k in range(n)):
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   "create_graph=True.")
    return _unpack(_nested(flat, n_out, n), (fun.out_tuple, in_tuple))


def _jacobian_forward(func: Callable, inputs, strict: bool, vectorize: bool,
                      keep_graph: bool, fn_name: str | None = None, check=None):
    """The forward-mode Jacobian's contract (PyTorch's): no strict mode, vectorize only,
    the inputs used as given (a result stays on the graph of inputs that require grad), lists
    returned. `keep_graph` keeps every result on the graph (a Hessian's outer forward pass,
    as PyTorch's, whose inputs it marks as requiring grad)."""
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
        seen = tuple(x.view_as(x) if x.requires_grad else x.detach().requires_grad_(keep)
                     for x in ins)
        fun = func if isinstance(func, _AsArrays) else _AsArrays(func, seen, "outputs", fn_name)
        n = len(seen)
        flat = _results(_blocks(fun, n, True), seen, keep)
        n_out = len(flat) // n
    return _unpack(_nested(flat, n_out, n, list), (fun.out_tuple, in_tuple))


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
    if outer_jacobian_strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            _jacobian_forward(func, inputs, strict, vectorize, keep_graph=True)
    with enable_grad():
        forward = outer_jacobian_strategy == "forward-mode"
        prepared = ins if forward else _prepare(ins, create_graph)
        fun = _AsArrays(func, prepared, "outputs of the user-provided function", "hessian",
                        _scalar_check("hessian"))
        n = len(ins)
        gradient = _gradient_of(fun, n)
        if strict:
            _, out_deps = _dependence(fun, _arrays(prepared))
            _strict_outputs(out_deps)
            _, grad_deps = _dependence(gradient, _arrays(prepared))
            used = set().union(*out_deps)
            for k in range(n):
                if k not in used or not grad_deps[k]:
                    raise RuntimeError(
                        "While computing the hessian, found that the jacobian of the "
                        f"user-provided function with respect to input {k} is independent of "
                        "the input. This is not allowed in strict mode. You should ensure that "
                        "your function is twice differentiable and that the jacobian depends "
                        "on the inputs (this would be violated by a linear function for "
                        "example).")
        grads = _GradientAsOutputs(gradient, prepared)
        if forward:
            result = _jacobian_forward(grads, ins, False, vectorize, keep_graph=True)
        else:
            result = _jacobian_reverse(grads, prepared, True, create_graph, strict, vectorize)
    return _unpack(result, (in_tuple, in_tuple))


class _GradientAsOutputs(_AsArrays):
    """A Hessian's inner function: the gradient, one output per input."""

    def __init__(self, gradient: Callable, ins: tuple) -> None:
        self.gradient = gradient
        self.out_tuple = True
        self.dtypes = tuple(x._dtype for x in ins)

    def __call__(self, *arrays) -> tuple:
        return self.gradient(*arrays)
