"""User-defined derivative rules (custom_vjp, custom_jvp) and rematerialisation (checkpoint).

All three are one mechanism: a call that the innermost live transform handles as a unit,
through the trace protocol (`Trace.process_custom`; each trace's handling lives in its own
module). Under reverse mode the call becomes ONE tape entry whose cotangent rule is the
user's (or, for checkpoint, a fresh vjp of the function, recomputed in the backward pass);
under forward mode a custom_jvp rule pushes the tangents; under vmap the function and its
rules are vmapped and the call is handed to the transform below. The rules run on the values
one level down, so a transform further out meets the same custom call again and applies
the same rule: the rule stands for the body at every order, and the rule's own operations
(ordinary funcgrad code) are what higher orders differentiate.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from .core import Primitive, Tracer, engine, raw, wrap
from .forward import JVPTracer, _fit
from .program import ProgramTrace
from .reverse import ReverseTracer, backward
from .transforms import vjp, vmap
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["custom_vjp", "custom_jvp", "checkpoint"]


# --- the shared call ----------------------------------------------------------------------
def _call(rule: "_Rule", args: tuple):
    """Apply a custom rule's function to `args` under whatever transform is innermost."""
    leaves, in_def = tree_flatten(args)
    top = None
    for leaf in leaves:
        if isinstance(leaf, Tracer):
            trace = leaf._trace
            if top is None or trace.level > top.level:
                top = trace
    if top is None:
        return rule.fun(*args)
    if not top.alive:
        raise top.dead()
    return top.process_custom(rule, leaves, in_def)


def _args(values, in_def):
    """The arguments back in their structure, raw values wrapped for the user's code."""
    return tuple(tree_unflatten(in_def, [wrap(v) for v in values]))


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _checked_pull(pull, lower, name):
    """`pull` whose cotangents are checked against the inputs' shapes: a wrong one is the
    rule's mistake, named here rather than deep in the walk."""
    shapes = [_shape(v) for v in lower]

    def checked(ct):
        cts = pull(ct)
        if len(cts) != len(shapes):
            raise TypeError(f"{name}: the backward rule returned {len(cts)} cotangents for "
                            f"{len(shapes)} array inputs; return one per input leaf (None "
                            "for an input with no derivative)")
        out = []
        for i, (g, shape, value) in enumerate(zip(cts, shapes, lower)):
            if g is not None:
                g = raw(g)
                if not hasattr(g, "shape"):
                    g = np.asarray(g, dtype=value.dtype if hasattr(value, "dtype")
                                   else np.result_type(value))
                if tuple(g.shape) != tuple(shape):
                    raise ValueError(f"{name}: the backward rule's cotangent {i} has shape "
                                     f"{tuple(g.shape)}, but its input has shape {shape}; "
                                     "a cotangent must have its input's shape")
            out.append(g)
        return out

    return checked


def _offsets_of(args_def):
    """Where each argument's leaves start in the flat list of all arguments' leaves."""
    starts, k = [], 0
    for child in args_def.children:
        starts.append(k)
        k += child.num_leaves
    return starts


def _sum_unbatched(cts, axes):
    """Cotangents from a vmapped rule carry the batch axis; inputs that were not mapped
    receive the sum over it."""
    out = []
    for g, ax in zip(cts, axes):
        if g is not None and ax is None:
            g = engine.sum_to_shape(raw(g), tuple(_shape(raw(g)))[1:])
        out.append(g)
    return out


class _Rule:
    """What a custom call needs from its kind: its function, and how each transform runs
    it (the methods the traces' `process_custom` call)."""

    fun: Callable
    prim: Primitive

    def bind(self, args: tuple) -> Any:
        """Call the function with this rule, under whatever transform is innermost."""
        return _call(self, args)

    def body(self, leaves, in_def) -> Any:
        """The function itself, for a transform that knows no custom rules."""
        return self.fun(*tree_unflatten(in_def, [wrap(v) for v in leaves]))

    def reverse(self, lower, in_def, traced) -> tuple[Any, Callable]:
        """(output, pull): pull maps the output's cotangent to one cotangent per input leaf."""
        raise NotImplementedError

    def forward(self, trace, lower, tangents, in_def) -> Any:
        """The output as tracers of the forward-mode `trace`."""
        raise NotImplementedError

    def batched(self, axes, in_def) -> "_Rule":
        """The rule of the vmapped call; `axes` is 0 or None per input leaf."""
        raise NotImplementedError


class _CustomPrimitive(Primitive):
    """The tape's record of a custom call. Calling it (a replayed tape) makes the call again
    as a unit, so its rule applies again; ``call`` is the recorded `reverse.CustomCall`."""

    __slots__ = ()

    def __call__(self, *leaves, call):
        return call.apply(leaves)


class _RuleTable(tuple):
    """The vjps of a custom call: argument k's cotangent comes from the recorded call."""

    def __getitem__(self, k):
        return _RULES[k] if k < len(_RULES) else _make_rule(k)


def _make_rule(k):
    def rule(ct, out, *args, call):
        return call.cotangent(ct, k)
    return rule


_RULES = [_make_rule(k) for k in range(16)]


def _primitive(kind: str, fun: Callable) -> Primitive:
    name = f"{kind}({getattr(fun, '__name__', 'function')})"
    prim = _CustomPrimitive(name, _body_impl, nargs=-1, multiple_results=True)
    prim.vjps = _RuleTable()  # set after construction: the constructor would copy it to a tuple
    return prim


def _body_impl(*leaves, call):
    return call.apply(leaves)


def _split_static(args, nums, name):
    """(static args, the others, a function putting both back in order)."""
    n = len(args)
    for i in nums:
        if not -n <= i < n:
            raise ValueError(f"{name}: nondiff_argnums has {i}, but it was called with {n} "
                             "arguments")
    nums = sorted(i % n for i in nums)
    static = tuple(args[i] for i in nums)
    dynamic = tuple(a for i, a in enumerate(args) if i not in nums)

    def merge(values):
        it = iter(values)
        return [args[i] if i in nums else next(it) for i in range(n)]

    return static, dynamic, merge


# --- custom_vjp ---------------------------------------------------------------------------
class _VJPRule(_Rule):
    def __init__(self, fun, fwd, bwd, prim):
        self.fun, self.fwd, self.bwd, self.prim = fun, fwd, bwd, prim

    def reverse(self, lower, in_def, traced):
        # fwd runs on the values one level down: where it calls the function itself, an
        # enclosing transform meets the custom call and applies this same rule there.
        args = _args(lower, in_def)
        result = self.fwd(*args)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TypeError(f"{self.prim.name}: the fwd rule must return a pair "
                            "(output, residuals)")
        out, residuals = result
        bwd = self.bwd
        n_args = len(args)
        arg_defs = [tree_flatten(a)[1] for a in args]
        name = self.prim.name

        def pull(ct):
            cts = bwd(residuals, ct)
            if not isinstance(cts, (tuple, list)) or len(cts) != n_args:
                raise TypeError(f"{name}: the bwd rule must return a tuple with one "
                                f"cotangent per argument ({n_args}), got {type(cts).__name__}"
                                + (f" of length {len(cts)}" if isinstance(cts, (tuple, list))
                                   else ""))
            flat = []
            for i, (c, d) in enumerate(zip(cts, arg_defs)):
                if c is None:
                    flat.extend([None] * d.num_leaves)
                    continue
                c_leaves, c_def = tree_flatten(c)
                if c_def != d:
                    raise TypeError(f"{name}: the bwd rule's cotangent for argument "
                                    f"{i} has structure {c_def}, the argument has {d}")
                flat.extend(c_leaves)
            return flat

        return out, _checked_pull(pull, lower, name)

    def forward(self, trace, lower, tangents, in_def):
        # JAX runs the fwd rule on the primals before refusing (a user may see it print)
        self.fwd(*_args(lower, in_def))
        error = TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")
        error.add_note(
            f"{self.prim.name} defines a reverse-mode rule only, so jvp, jacfwd, hessian and "
            "linearize cannot use it. Use reverse mode (grad, vjp, jacrev), or declare the "
            "function with funcgrad.custom_jvp instead")
        raise error

    def batched(self, axes, in_def):
        in_axes = tuple(tree_unflatten(in_def, axes))
        fwd, bwd = self.fwd, self.bwd
        fun_b = vmap(self.fun, in_axes=in_axes)
        fwd_b = vmap(fwd, in_axes=in_axes)
        starts = _offsets_of(in_def)

        def bwd_b(residuals, ct):
            cts = vmap(bwd)(residuals, ct)
            out = []
            for c, k in zip(cts, starts):
                if c is None:
                    out.append(None)
                    continue
                leaves, d = tree_flatten(c)
                summed = _sum_unbatched(leaves, axes[k:k + len(leaves)])
                out.append(tree_unflatten(d, [None if g is None else wrap(g) for g in summed]))
            return tuple(out)

        return _VJPRule(fun_b, fwd_b, bwd_b, self.prim)


class custom_vjp:
    """A function with a hand-written reverse-mode rule, as in JAX.

    Define the function, then ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (output, residuals)``
    and ``bwd(residuals, output_cotangent) -> tuple`` with one cotangent per argument
    (``None`` for an argument with no derivative). Under grad, vjp and jacrev the rule is
    used instead of differentiating the body; under vmap it is vmapped; higher orders
    differentiate `fwd` and `bwd` themselves. Forward mode needs `custom_jvp`.
    Arguments listed in `nondiff_argnums` (static values: flags, functions) are passed to
    `bwd` first, ``bwd(*nondiff_args, residuals, ct)``, and get no cotangent.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> @fg.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None), lambda res, ct: (fnp.clip(ct, -1.0, 1.0),))
    >>> fg.grad(lambda x: fnp.sum(clip_gradient(x) * 5.0))(fnp.array([1.0, 2.0])).tolist()
    [1.0, 1.0]
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self._prim = _primitive("custom_vjp", fun)

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the rule: ``fwd(*args) -> (out, residuals)``, ``bwd(residuals, ct) -> tuple``."""
        if not callable(fwd) or not callable(bwd):
            raise TypeError("defvjp(fwd, bwd) needs two functions")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{self._prim.name}: pass arguments positionally (keyword "
                            "arguments cannot be matched with the rule's cotangents)")
        if self.fwd is None:
            raise TypeError(f"{self._prim.name} has no rule yet: call "
                            f"{getattr(self.fun, '__name__', 'f')}.defvjp(fwd, bwd) first")
        if not self.nondiff_argnums:
            return _call(_VJPRule(self.fun, self.fwd, self.bwd, self._prim), args)
        static, dynamic, merge = _split_static(args, self.nondiff_argnums, self._prim.name)
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        rule = _VJPRule(lambda *d: fun(*merge(d)), lambda *d: fwd(*merge(d)),
                        lambda res, ct: bwd(*static, res, ct), self._prim)
        return _call(rule, dynamic)


# --- custom_jvp ---------------------------------------------------------------------------
class _JVPRule(_Rule):
    def __init__(self, fun, jvp_rule, prim):
        self.fun, self.jvp_rule, self.prim = fun, jvp_rule, prim

    def _apply(self, primals, tangents):
        """Run the rule: (output leaves, output structure, tangent leaves), checked."""
        result = self.jvp_rule(primals, tangents)
        name = self.prim.name
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"{name}: the jvp rule must return a pair (primal_out, "
                            "tangent_out)")
        out, t_out = result
        out_leaves, out_def = tree_flatten(out)
        t_leaves, t_def = tree_flatten(t_out)
        if t_def != out_def:
            raise TypeError(f"{name}: the jvp rule's tangent has structure {t_def}, its "
                            f"output has {out_def}; return a tangent shaped like the output")
        for i, (o, t) in enumerate(zip(out_leaves, t_leaves)):
            if _shape(raw(t)) != _shape(raw(o)):
                raise ValueError(f"{name}: the jvp rule returned a tangent of shape "
                                 f"{_shape(raw(t))} for output {i} of shape {_shape(raw(o))}; "
                                 "the tangent output must have the primal output's shape")
        return out_leaves, out_def, t_leaves

    def forward(self, trace, lower, tangents, in_def):
        full = [engine.zeros_like(v) if t is None else t for v, t in zip(lower, tangents)]
        out_leaves, out_def, t_leaves = self._apply(_args(lower, in_def), _args(full, in_def))
        return tree_unflatten(out_def, [JVPTracer(trace, raw(o), _fit(raw(t), raw(o)))
                                        for o, t in zip(out_leaves, t_leaves)])

    def reverse(self, lower, in_def, traced):
        """Reverse mode from the JVP rule alone (the body does not run): the rule runs once
        with its tangents recorded as a program, which is linear in them; pulling a
        cotangent back is walking that program backward (its transpose)."""
        recorder = ProgramTrace()
        tangents = [recorder.leaf(engine.zeros_like(v)) if t else engine.zeros_like(v)
                    for v, t in zip(lower, traced)]
        n_leaves = len(recorder.tape)
        try:
            out_leaves, out_def, t_leaves = self._apply(_args(lower, in_def),
                                                        _args(tangents, in_def))
        finally:
            recorder.alive = False
        out_ids = [t._id if type(t) is ReverseTracer and t._trace is recorder else None
                   for t in t_leaves]
        tape = recorder.tape
        diff = [i for i, t in enumerate(traced) if t]

        def pull(ct):
            leaf_cts = backward(tape, out_ids, [raw(c) for c in tree_flatten(ct)[0]],
                                n_leaves, consume=False)
            flat = [None] * len(lower)
            for i, g in zip(diff, leaf_cts):
                flat[i] = g
            return flat

        out = tree_unflatten(out_def, [raw(o) for o in out_leaves])
        return out, _checked_pull(pull, lower, self.prim.name)

    def batched(self, axes, in_def):
        in_axes = tuple(tree_unflatten(in_def, axes))
        return _JVPRule(vmap(self.fun, in_axes=in_axes),
                        vmap(self.jvp_rule, in_axes=(in_axes, in_axes)), self.prim)


class custom_jvp:
    """A function with a hand-written forward-mode rule, as in JAX.

    ``f.defjvp(rule)`` with ``rule(primals, tangents) -> (primal_out, tangent_out)``; both
    arguments are tuples with one entry per argument of `f`. The rule is used by jvp,
    jacfwd and linearize, and (transposed) by grad, vjp and jacrev; under vmap it is
    vmapped. The tangent output must be linear in the tangents. Arguments listed in
    `nondiff_argnums` are passed to the rule first, ``rule(*nondiff_args, primals,
    tangents)``, and are left out of `primals` and `tangents`.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> @fg.custom_jvp
    ... def log1pexp(x):
    ...     return fnp.log1p(fnp.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t * (1 - 1 / (1 + fnp.exp(x)))
    >>> fg.grad(log1pexp)(1000.0).item()  # the body alone would give nan here
    1.0
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp_rule: Callable | None = None
        self._prim = _primitive("custom_jvp", fun)

    def defjvp(self, rule: Callable) -> Callable:
        """Set the rule ``rule(primals, tangents) -> (out, tangent_out)``; returns it, so
        ``@f.defjvp`` works as a decorator."""
        if not callable(rule):
            raise TypeError("defjvp(rule) needs a function")
        self.jvp_rule = rule
        return rule

    def defjvps(self, *jvps: Callable | None) -> None:
        """Set the rule from one function per argument, as in JAX:
        ``jvps[i](t_i, out, *primals)`` is the output tangent due to argument ``i``'s
        tangent ``t_i`` (None: the output does not depend on argument ``i``); the
        contributions are summed.

        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> @fg.custom_jvp
        ... def f(x, y):
        ...     return fnp.sin(x) * y
        >>> f.defjvps(lambda t, out, x, y: fnp.cos(x) * y * t,
        ...           lambda t, out, x, y: fnp.sin(x) * t)
        >>> round(fg.grad(f, argnums=1)(0.5, 2.0).item(), 6)
        0.479426
        """
        if self.nondiff_argnums:
            raise TypeError(f"{self._prim.name}: defjvps cannot be used with nondiff_argnums; "
                            "use defjvp(rule) with rule(*nondiff_args, primals, tangents)")
        if not jvps or not all(j is None or callable(j) for j in jvps):
            raise TypeError("defjvps(*jvps) needs one function (or None) per argument")

        def rule(primals, tangents):
            out = self(*primals)
            out_leaves, out_def = tree_flatten(out)
            total = [None] * len(out_leaves)
            for jvp_i, t in zip(jvps, tangents):
                if jvp_i is None:
                    continue
                contribution = tree_flatten(jvp_i(t, out, *primals))[0]
                total = [c if s is None else s + c for s, c in zip(total, contribution)]
            return out, tree_unflatten(out_def, [engine.zeros_like(raw(o)) if s is None else s
                                                 for o, s in zip(out_leaves, total)])

        self.jvp_rule = rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{self._prim.name}: pass arguments positionally")
        if self.jvp_rule is None:
            raise TypeError(f"{self._prim.name} has no rule yet: call "
                            f"{getattr(self.fun, '__name__', 'f')}.defjvp(rule) first")
        if not self.nondiff_argnums:
            return _call(_JVPRule(self.fun, self.jvp_rule, self._prim), args)
        static, dynamic, merge = _split_static(args, self.nondiff_argnums, self._prim.name)
        fun, jvp_rule = self.fun, self.jvp_rule
        rule = _JVPRule(lambda *d: fun(*merge(d)),
                        lambda primals, tangents: jvp_rule(*static, primals, tangents),
                        self._prim)
        return _call(rule, dynamic)


# --- checkpoint ---------------------------------------------------------------------------
class _RematRule(_Rule):
    def __init__(self, fun, prim):
        self.fun, self.prim = fun, prim

    def reverse(self, lower, in_def, traced):
        """Run `fun` keeping nothing at this level; the backward rule runs it again under a
        fresh vjp and pulls the cotangent through that short-lived tape."""
        fun = self.fun
        values = [wrap(v) for v in lower]
        out = fun(*tree_unflatten(in_def, values))
        diff = [i for i, t in enumerate(traced) if t]

        def pull(ct):
            def on_diff(*diff_values):
                full = list(values)
                for i, v in zip(diff, diff_values):
                    full[i] = v
                return fun(*tree_unflatten(in_def, full))
            _, pull_fn = vjp(on_diff, *[values[i] for i in diff])
            cts = pull_fn(ct)
            flat = [None] * len(lower)
            for i, g in zip(diff, cts):
                flat[i] = g
            return flat

        return out, _checked_pull(pull, lower, self.prim.name)

    def forward(self, trace, lower, tangents, in_def):
        # forward mode keeps nothing, so there is nothing to recompute: run the body
        return self.fun(*tree_unflatten(in_def, [
            wrap(v) if t is None else JVPTracer(trace, v, t) for v, t in zip(lower, tangents)]))

    def batched(self, axes, in_def):
        return _RematRule(vmap(self.fun, in_axes=tuple(tree_unflatten(in_def, axes))),
                          self.prim)


def checkpoint(f: Callable) -> Callable:
    """`f` with rematerialisation: under reverse mode its intermediate values are not kept
    on the tape; the backward pass recomputes them from `f`'s inputs. Gradients are
    unchanged; peak memory falls, at the price of running `f` twice.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> block = fg.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    >>> fg.grad(lambda x: fnp.sum(block(x)))(fnp.array([0.0])).tolist()
    [1.0]
    """
    prim = _primitive("checkpoint", f)

    @functools.wraps(f)
    def rematerialised(*args, **kwargs):
        if kwargs:
            raise TypeError(f"{prim.name}: pass arguments positionally (keyword arguments "
                            f"{', '.join(kwargs)} would escape the recomputation)")
        return _call(_RematRule(f, prim), args)

    return rematerialised


remat = checkpoint
