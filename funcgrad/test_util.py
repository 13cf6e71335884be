"""Checking derivatives against central finite differences, in float64.

>>> import funcgrad.numpy as fnp
>>> check_grads(lambda x: fnp.sum(fnp.sin(x) * x), (fnp.array([0.3, -1.2]),), order=2)
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ._src.core import Array
from ._src.transforms import jvp, vjp
from ._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["check_grads", "numerical_jvp"]


def _to64(x):
    x = np.asarray(_raw(x))
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def _add_scaled(leaves, direction, eps):
    return [a + eps * d for a, d in zip(leaves, direction)]


def _flat_out(f, treedef, leaves):
    out = f(*tree_unflatten(treedef, [Array(x) for x in leaves]))
    return [_to64(o) for o in tree_flatten(out)[0]]


def numerical_jvp(f: Callable, args: Sequence[Any], tangents: Sequence[Any],
                  eps: float = 1e-6) -> list:
    """Central difference ``(f(x + eps t) - f(x - eps t)) / 2 eps``, output leaf by leaf.

    >>> [round(float(d), 6) for d in numerical_jvp(lambda x: x ** 3, (2.0,), (1.0,))]
    [12.0]
    """
    leaves, treedef = tree_flatten(tuple(args))
    leaves = [_to64(x) for x in leaves]
    direction = [_to64(t) for t in tree_flatten(tuple(tangents))[0]]
    plus = _flat_out(f, treedef, _add_scaled(leaves, direction, eps))
    minus = _flat_out(f, treedef, _add_scaled(leaves, direction, -eps))
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _random_like(leaves, rng):
    return [rng.standard_normal(np.shape(x)).astype(x.dtype) for x in leaves]


def _inner(xs, ys):
    """The pairing under which a VJP is the transpose of the JVP: ``Re sum(x * y)``, with no
    conjugation for complex values (JAX's convention, docs/complex.md)."""
    return float(sum(np.sum(np.real(x * y)) for x, y in zip(xs, ys)))


def check_grads(f: Callable, args: Sequence[Any], order: int = 2,
                modes: Sequence[str] = ("rev",), eps: float = 1e-6,
                rtol: float = 1e-5, atol: float = 1e-6, seed: int = 0) -> None:
    """Raise AssertionError unless `f`'s derivatives agree with finite differences.

    >>> import funcgrad.numpy as fnp
    >>> check_grads(fnp.tanh, (fnp.array([0.1, -2.0]),), order=2, modes=("rev", "fwd"))

    Inputs are promoted to float64. For each order up to `order`: in mode ``"rev"``, the
    identity ``<u, J v> == <J^T u, v>`` is checked with the VJP against a central difference
    along a random direction ``v``; in mode ``"fwd"``, the JVP is compared with it directly.
    Higher orders apply the same test to the derivative function itself.
    """
    rng = np.random.default_rng(seed)
    leaves, treedef = tree_flatten(tuple(args))
    leaves = [_to64(x) for x in leaves]
    args = tree_unflatten(treedef, [Array(x) for x in leaves])
    _check(f, args, order, tuple(modes), eps, rtol, atol, rng)


def _check(f, args, order, modes, eps, rtol, atol, rng):
    leaves, treedef = tree_flatten(tuple(args))
    direction = _random_like([_to64(x) for x in leaves], rng)
    numeric = numerical_jvp(f, args, tree_unflatten(treedef, direction), eps)
    out_leaves = [_to64(o) for o in tree_flatten(f(*args))[0]]
    scale = max([1.0] + [float(np.max(np.abs(o))) if np.size(o) else 1.0 for o in out_leaves])
    tol_abs = atol * scale
    if "fwd" in modes:
        _, t_out = jvp(f, tuple(args), tree_unflatten(treedef, [Array(d) for d in direction]))
        analytic = [_to64(t) for t in tree_flatten(t_out)[0]]
        for k, (a, n) in enumerate(zip(analytic, numeric)):
            if not np.allclose(a, n, rtol=rtol, atol=tol_abs):
                raise AssertionError(
                    f"(JVP) check of {_name(f)} failed: its forward-mode derivative disagrees "
                    f"with finite differences (output {k}):\n  jvp:       {a}\n  numerical: {n}")
    if "rev" in modes:
        out, vjp_fn = vjp(f, *args)
        o_leaves, o_def = tree_flatten(out)
        cotangent = [rng.standard_normal(np.shape(o)).astype(_to64(o).dtype) for o in o_leaves]
        cts = vjp_fn(tree_unflatten(o_def, [Array(c.astype(o.dtype)) for c, o in zip(cotangent, o_leaves)]))
        ct_leaves = [_to64(c) for c in tree_flatten(cts)[0]]
        lhs = _inner(cotangent, numeric)
        rhs = _inner(ct_leaves, direction)
        if not np.isclose(lhs, rhs, rtol=rtol, atol=tol_abs * max(1, len(direction))):
            raise AssertionError(
                f"(VJP) check of {_name(f)} failed: its reverse-mode derivative disagrees with "
                f"finite differences: <u, J v> = {lhs} numerically but <J^T u, v> = {rhs} "
                f"from vjp")
    if order > 1:
        for mode in modes:
            derivative, at = _derivative_map(f, args, mode, rng)
            _check(derivative, at, order - 1, (mode,), eps, rtol, atol, rng)


def _derivative_map(f, args, mode, rng):
    """The next order's function and where to check it: the JVP (VJP) of `f` as a function of
    the point AND of the tangent (cotangent) it maps, as autograd's check_grads checks it, so
    a rule right in x but wrong in its cotangent (a wrong rule inside a VJP) is caught too.
    Named ``jvp_f`` / ``vjp_f`` as autograd names it."""
    name = f"{'jvp' if mode == 'fwd' else 'vjp'}_{_name(f)}"
    if mode == "fwd":
        leaves, treedef = tree_flatten(tuple(args))
        extra = tree_unflatten(treedef, [Array(rng.standard_normal(np.shape(x)).astype(_to64(x).dtype))
                                         for x in leaves])

        def derivative(*a):
            return jvp(f, a[:-1], a[-1])[1]
    else:
        out_leaves, out_def = tree_flatten(f(*args))
        cts = [rng.standard_normal(np.shape(o)).astype(_to64(o).dtype) for o in out_leaves]
        if not all(np.issubdtype(np.asarray(_raw(o)).dtype, np.inexact) for o in out_leaves):
            # an integer output's cotangent is no point to differentiate at: hold cts fixed
            fixed = tree_unflatten(out_def, [Array(c.astype(np.asarray(_raw(o)).dtype))
                                             for c, o in zip(cts, out_leaves)])

            def held(*a):
                return vjp(f, *a)[1](fixed)
            held.__name__ = name
            return held, tuple(args)
        extra = tree_unflatten(out_def, [Array(c) for c in cts])

        def derivative(*a):
            return vjp(f, *a[:-1])[1](a[-1])
    derivative.__name__ = name
    return derivative, tuple(args) + (extra,)


def _raw(x):
    return x._value if type(x) is Array else x


def _name(f) -> str:
    return getattr(f, "__name__", None) or getattr(f, "name", None) or repr(f)
