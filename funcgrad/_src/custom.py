"""User-defined derivative rules (custom_vjp, custom_jvp) and rematerialisation (checkpoint).

All three are one mechanism: a call that the innermost live transform handles as a unit.
Under reverse mode the call becomes ONE tape entry whose cotangent rule is the user's (or,
for checkpoint, a fresh vjp of the function, recomputed in the backward pass). Under forward
mode a custom_jvp rule pushes the tangents; under vmap the call is lowered: the function and
its rules are vmapped and the call is handed to the transform below, so the custom rule
survives any nesting. Outer transforms see the forward computation and the rules' own
operations, which are ordinary differentiable funcgrad code.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from .batching import BatchTrace, BatchTracer
from .core import FuncgradError, Primitive, Tracer, engine, raw, wrap
from .forward import JVPTrace, JVPTracer, _fit
from .reverse import ReverseTrace, ReverseTracer
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["custom_vjp", "custom_jvp", "checkpoint"]


# --- the shared call ----------------------------------------------------------------------
def _top_trace(leaves):
    top = None
    for leaf in leaves:
        if isinstance(leaf, Tracer):
            trace = leaf._trace
            if top is None or trace.level > top.level:
                top = trace
    if top is not None and not top.alive:
        raise top.dead()
    return top


def _call(rule: "_Rule", args: tuple):
    """Apply a custom rule's function to `args` under whatever transform is innermost."""
    leaves, in_def = tree_flatten(args)
    top = _top_trace(leaves)
    if top is None:
        return rule.fun(*args)
    lower = [leaf._value if isinstance(leaf, Tracer) and leaf._trace is top else raw(leaf)
             for leaf in leaves]
    if isinstance(top, ReverseTrace):
        return _record(top, rule, leaves, lower, in_def)
    if isinstance(top, JVPTrace):
        if isinstance(rule, _RematRule):  # forward mode keeps nothing, so nothing to recompute
            return rule.fun(*args)
        tangents = [leaf._tangent if isinstance(leaf, JVPTracer) and leaf._trace is top
                    else None for leaf in leaves]
        return rule.forward(top, lower, tangents, in_def)
    if isinstance(top, BatchTrace):
        return _lower_batch(top, rule, leaves, lower, in_def)
    return rule.fun(*args)  # a transform that knows nothing of custom rules sees the body


class _Pending:
    """The cotangent rule of one recorded custom call. The walker asks for one argument at a
    time; the user's rule runs once per cotangent and serves every argument."""

    __slots__ = ("rule", "in_def", "pull", "out_def", "shapes", "last_traced", "ct", "result",
                 "name")

    def __init__(self, rule, in_def, pull, out_def, shapes, last_traced, name):
        self.rule = rule
        self.in_def = in_def
        self.pull = pull
        self.out_def = out_def
        self.shapes = shapes
        self.last_traced = last_traced
        self.ct = None
        self.result = None
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def apply(self, leaves):
        """The call again, on new inputs (a replayed tape): flat outputs."""
        out = _call(self.rule, tree_unflatten(self.in_def, list(leaves)))
        return tuple(raw(o) for o in tree_flatten(out)[0])

    def cotangent(self, ct, k):
        if self.ct is not ct:
            cts = self.pull(tree_unflatten(self.out_def, list(ct)))
            self.result = _check_cts(cts, self.shapes, self.name)
            self.ct = ct
        g = self.result[k]
        if k == self.last_traced:  # the walker visits arguments in order: done with this ct
            self.ct = self.result = None
        return g


def _check_cts(cts, shapes, name):
    if len(cts) != len(shapes):
        raise TypeError(f"{name}: the backward rule returned {len(cts)} cotangents for "
                        f"{len(shapes)} array inputs; return one per input leaf (None for "
                        "an input with no derivative)")
    checked = []
    for i, (g, (shape, dtype)) in enumerate(zip(cts, shapes)):
        if g is None:
            checked.append(None)
            continue
        g = raw(g)
        if not hasattr(g, "shape"):
            g = np.asarray(g, dtype=dtype)
        if tuple(g.shape) != tuple(shape):
            raise ValueError(f"{name}: the backward rule's cotangent {i} has shape "
                             f"{tuple(g.shape)}, but its input has shape {tuple(shape)}; "
                             "a cotangent must have its input's shape")
        checked.append(g)
    return checked


class _RuleTable(tuple):
    """The vjps of a custom call: argument k's cotangent comes from the pending rule."""

    def __getitem__(self, k):
        return _RULES[k] if k < len(_RULES) else _make_rule(k)


def _make_rule(k):
    def rule(ct, out, *args, call):
        return call.cotangent(ct, k)
    return rule


_RULES = [_make_rule(k) for k in range(16)]


def _record(trace: ReverseTrace, rule: "_Rule", leaves, lower, in_def):
    traced = [isinstance(leaf, ReverseTracer) and leaf._trace is trace for leaf in leaves]
    out, pull = rule.reverse(lower, in_def, traced)
    out_leaves, out_def = tree_flatten(out)
    out_values = [raw(o) for o in out_leaves]
    if not any(traced) or not out_values:
        return tree_unflatten(out_def, [wrap(o) for o in out_values])
    shapes = [(_shape(v), _dtype(v)) for v in lower]
    last = max(i for i, t in enumerate(traced) if t)
    pending = _Pending(rule, in_def, pull, out_def, shapes, last, rule.prim.name)
    entry = [rule.prim, {"call": pending}, tuple(out_values)]
    for leaf, value, is_traced in zip(leaves, lower, traced):
        entry.append(leaf._id if is_traced else None)
        entry.append(value)
    tape = trace.tape
    tape.append(tuple(entry))
    first = len(tape) - 1
    tape.extend([None] * (len(out_values) - 1))
    return tree_unflatten(out_def, [ReverseTracer(trace, o, first + k)
                                    for k, o in enumerate(out_values)])


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _dtype(x):
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


def _lower_batch(trace: BatchTrace, rule: "_Rule", leaves, lower, in_def):
    """vmap of a custom call: the same call, one level down, of the vmapped function and
    rules; batch axes move to the front first, so every axis is 0 or None."""
    from .transforms import vmap
    axes = []
    moved = []
    for leaf, value in zip(leaves, lower):
        if isinstance(leaf, BatchTracer) and leaf._trace is trace:
            moved.append(engine.moveaxis(value, leaf._bdim, 0) if leaf._bdim else value)
            axes.append(0)
        else:
            moved.append(value)
            axes.append(None)
    in_axes = tree_unflatten(in_def, axes)
    lowered = rule.batched(in_axes, axes, vmap, in_def)
    out = _call(lowered, tree_unflatten(in_def, [wrap(m) if not isinstance(m, Tracer) else m
                                                 for m in moved]))
    out_leaves, out_def = tree_flatten(out)
    return tree_unflatten(out_def, [BatchTracer(trace, raw(o), 0) for o in out_leaves])


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
    """What a custom call needs from its kind: its function and how each transform runs it."""

    fun: Callable
    prim: Primitive

    def reverse(self, lower, in_def, traced):
        raise NotImplementedError

    def forward(self, trace, lower, tangents, in_def):
        raise NotImplementedError

    def batched(self, in_axes, axes, vmap, in_axes_def=None):
        raise NotImplementedError


def _primitive(kind: str, fun: Callable) -> Primitive:
    name = f"{kind}({getattr(fun, '__name__', 'function')})"
    prim = Primitive(name, _apply_recorded, nargs=-1, multiple_results=True)
    prim.vjps = _RuleTable()  # set after construction: the constructor would copy it to a tuple
    return prim


def _apply_recorded(*leaves, call):
    """A recorded custom call, run again on raw values (see `program.replay`)."""
    return call.apply(leaves)


def is_custom_call(prim: Primitive) -> bool:
    return prim.impl is _apply_recorded


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
_running_fwd: set = set()


class _VJPRule(_Rule):
    def __init__(self, fun, fwd, bwd, prim):
        self.fun, self.fwd, self.bwd, self.prim = fun, fwd, bwd, prim

    def reverse(self, lower, in_def, traced):
        args = tree_unflatten(in_def, [wrap(v) if not isinstance(v, Tracer) else v
                                       for v in lower])
        # fwd usually calls the function itself for its output: there that call is the
        # plain primal computation, not another use of the rule.
        _running_fwd.add(self.prim)
        try:
            result = self.fwd(*args)
        finally:
            _running_fwd.discard(self.prim)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TypeError(f"{self.prim.name}: the fwd rule must return a pair "
                            "(output, residuals)")
        out, residuals = result
        bwd = self.bwd
        n_args = len(args)
        arg_defs = [tree_flatten(a)[1] for a in args]

        def pull(ct):
            cts = bwd(residuals, ct)
            if not isinstance(cts, (tuple, list)) or len(cts) != n_args:
                raise TypeError(f"{self.prim.name}: the bwd rule must return a tuple with one "
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
                    raise TypeError(f"{self.prim.name}: the bwd rule's cotangent for argument "
                                    f"{i} has structure {c_def}, the argument has {d}")
                flat.extend(c_leaves)
            return flat

        return out, pull

    def forward(self, trace, lower, tangents, in_def):
        raise FuncgradError(
            f"{self.prim.name} defines a reverse-mode rule only, so forward mode (jvp, "
            "jacfwd, linearize) cannot use it. Use reverse mode (grad, vjp, jacrev), or "
            "declare the function with funcgrad.custom_jvp instead")

    def batched(self, in_axes, axes, vmap, in_axes_def=None):
        fwd, bwd = self.fwd, self.bwd
        fun_b = vmap(self.fun, in_axes=tuple(in_axes))
        fwd_b = vmap(fwd, in_axes=tuple(in_axes))

        def bwd_b(residuals, ct):
            cts = vmap(bwd)(residuals, ct)
            out = []
            starts = _offsets_of(in_axes_def)
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
        if self._prim in _running_fwd:
            return self.fun(*args)
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

    def _apply(self, primals_tree, tangents_tree):
        result = self.jvp_rule(primals_tree, tangents_tree)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"{self.prim.name}: the jvp rule must return a pair "
                            "(primal_out, tangent_out)")
        return result

    def forward(self, trace, lower, tangents, in_def):
        primals = tree_unflatten(in_def, [wrap(v) if not isinstance(v, Tracer) else v
                                          for v in lower])
        full = [engine.zeros_like(v) if t is None else t for v, t in zip(lower, tangents)]
        tangents_tree = tree_unflatten(in_def, [wrap(t) if not isinstance(t, Tracer) else t
                                                for t in full])
        out, t_out = self._apply(tuple(primals), tuple(tangents_tree))
        out_leaves, out_def = tree_flatten(out)
        t_leaves, t_def = tree_flatten(t_out)
        if t_def != out_def:
            raise TypeError(f"{self.prim.name}: the jvp rule's tangent has structure {t_def}, "
                            f"its output has {out_def}")
        results = []
        for o, t in zip(out_leaves, t_leaves):
            o, t = raw(o), raw(t)
            if _shape(t) != _shape(o):
                raise ValueError(f"{self.prim.name}: the jvp rule returned a tangent of shape "
                                 f"{_shape(t)} for an output of shape {_shape(o)}")
            results.append(JVPTracer(trace, o, _fit(t, o)))
        return tree_unflatten(out_def, results)

    def reverse(self, lower, in_def, traced):
        """Reverse mode from a JVP rule: the rule's tangent map is linear, so its VJP (taken
        with respect to the tangents) is the transpose that reverse mode needs."""
        from .transforms import vjp
        primals = tuple(tree_unflatten(in_def, [wrap(v) if not isinstance(v, Tracer) else v
                                                for v in lower]))
        out = self.fun(*primals)
        diff = [i for i, t in enumerate(traced) if t]

        def tangent_map(*diff_tangents):
            full = [engine.zeros_like(v) for v in lower]
            for i, t in zip(diff, diff_tangents):
                full[i] = t
            tangents = tree_unflatten(in_def, [wrap(t) if not isinstance(t, Tracer) else t
                                               for t in full])
            return self._apply(primals, tuple(tangents))[1]

        def pull(ct):
            _, pull_t = vjp(tangent_map, *[wrap(engine.zeros_like(lower[i])) for i in diff])
            cts = pull_t(ct)
            flat = [None] * len(lower)
            for i, g in zip(diff, cts):
                flat[i] = g
            return flat

        return out, pull

    def batched(self, in_axes, axes, vmap, in_axes_def=None):
        axes_tuple = tuple(in_axes)
        return _JVPRule(vmap(self.fun, in_axes=axes_tuple),
                        vmap(self.jvp_rule, in_axes=(axes_tuple, axes_tuple)), self.prim)


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
        from .transforms import vjp
        fun = self.fun
        values = [wrap(v) if not isinstance(v, Tracer) else v for v in lower]
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

        return out, pull

    def batched(self, in_axes, axes, vmap, in_axes_def=None):
        return _RematRule(vmap(self.fun, in_axes=tuple(in_axes)), self.prim)


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
