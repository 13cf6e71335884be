"""funcgrad.scipy.integrate: ``odeint`` (SciPy's LSODA computes the solution; needs the
optional extra), differentiable in the initial state, the times and the extra arguments.

Reverse mode uses the adjoint method: the cotangent is carried backward from the last time
to the first in one sweep of augmented solves (state, adjoint, time and argument
cotangents), one solve per interval between requested times, with no tape of the solver's
steps. The sweep is itself built from `odeint` and funcgrad's `vjp`, so it can be
differentiated again. Forward mode is not available (as in JAX's odeint).

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.integrate import odeint
>>> decay = lambda y, t, k: -k * y           # y(t) = y0 exp(-k t)
>>> t = fnp.array([0.0, 1.0])
>>> round(odeint(decay, fnp.array([1.0]), t, (0.5,))[1, 0].item(), 6)
0.606531
>>> round(fg.grad(lambda k: odeint(decay, fnp.array([1.0]), t, (k,))[1, 0])(0.5).item(), 5)
-0.60653
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import numpy as fnp
from .. import vjp
from .._src.core import Array, wrap
from .._src.declare import Namespace, primitive
from .._src.tree_util import tree_flatten, tree_unflatten
from ._util import ArrayLike, require_scipy

ns = Namespace("funcgrad.scipy.integrate")
export = ns.export


def _unflatten(flat, layout, to_array=fnp.reshape):
    """The arguments packed in the vector `flat`: `layout` is (their tree structure, the
    shape of each leaf), so `args` may hold nested containers, as autograd's odeint allows."""
    treedef, shapes = layout
    out, start = [], 0
    for shape in shapes:
        size = math.prod(shape)
        out.append(to_array(flat[start:start + size], shape))
        start += size
    return tuple(tree_unflatten(treedef, out))


def _odeint_impl(y0, t, flat, func=None, layout=(), options=()):
    args = _unflatten(np.asarray(flat), layout, np.reshape)

    def rhs(y, s):
        return np.asarray(func(y, s, *args), dtype=np.result_type(y, float))
    solve = require_scipy("integrate", "funcgrad.scipy.integrate.odeint").odeint
    return solve(rhs, np.asarray(y0), np.asarray(t), **dict(options))


def _augmented(func, layout, size):
    """The backward dynamics of (y, a, a_t, a_args) with a = dL/dy: y' = f, and the
    cotangents move by -a^T df/d(y, t, args)."""
    def dynamics(state, s, flat):
        y, a = state[:size], state[size:2 * size]
        dy, f_vjp = vjp(lambda y, s, flat: func(y, s, *_unflatten(flat, layout)), y, s, flat)
        a_y, a_t, a_args = f_vjp(-a)
        return fnp.concatenate([dy, a_y, fnp.reshape(a_t, (1,)), fnp.ravel(a_args)])
    return dynamics


def _odeint_vjp_parts(ct, out, y0, t, flat, func, layout, options):
    """Cotangents of (y0, t, flat) by one backward sweep over the requested times."""
    size = fnp.shape(out)[1]
    dynamics = _augmented(func, layout, size)
    aug_layout = (tree_flatten((0,))[1], (tuple(fnp.shape(flat)),))
    args = _unflatten(flat, layout)
    a_y = ct[-1]
    a_t0 = fnp.zeros(())
    a_args = fnp.zeros_like(flat)
    t_cts = []
    for i in range(fnp.shape(t)[0] - 1, 0, -1):
        moved = fnp.sum(func(out[i], t[i], *args) * ct[i])  # the effect of moving time t[i]
        t_cts.append(moved)
        a_t0 = a_t0 - moved
        state = fnp.concatenate([out[i], a_y, fnp.reshape(a_t0, (1,)), a_args])
        back = odeint_p(state, fnp.stack([t[i], t[i - 1]]), flat, func=dynamics,
                        layout=aug_layout, options=options)[1]
        a_y = back[size:2 * size] + ct[i - 1]
        a_t0 = back[2 * size]
        a_args = back[2 * size + 1:]
    t_cts.append(a_t0)
    return a_y, fnp.stack(t_cts[::-1]), a_args


odeint_p = primitive(
    "odeint", _odeint_impl, nargs=3, params=("func", "layout", "options"),
    vjps=(lambda ct, out, y0, t, flat, **p: _odeint_vjp_parts(ct, out, y0, t, flat, **p)[0],
          lambda ct, out, y0, t, flat, **p: _odeint_vjp_parts(ct, out, y0, t, flat, **p)[1],
          lambda ct, out, y0, t, flat, **p: _odeint_vjp_parts(ct, out, y0, t, flat, **p)[2]))

_UNSUPPORTED = ("Dfun", "col_deriv", "full_output", "printmessg")


@export
def odeint(func: Callable, y0: ArrayLike, t: ArrayLike, args: tuple = (), **options: Any) -> Array:
    """Differentiable ``scipy.integrate.odeint``: y at the times `t` of ``dy/dt = func(y, t,
    *args)`` with ``y(t[0]) = y0``, differentiable (reverse mode) in `y0`, `t` and `args`.

    `func` is written with funcgrad.numpy; `args` is a tuple of arrays, numbers or nested
    lists, tuples and dicts of them (a network's parameters, say). SciPy's
    tolerance and step options (``rtol``, ``atol``, ``mxstep``, ``hmax``...) and ``tfirst``
    are passed on; ``Dfun`` and ``full_output`` are not supported.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.integrate import odeint
    >>> grow = lambda y, t: y                   # y(t) = y0 exp(t)
    >>> t = fnp.array([0.0, 1.0])
    >>> round(fg.grad(lambda y0: odeint(grow, y0, t, rtol=1e-10)[1, 0])(fnp.array([2.0]))[0].item(), 6)
    2.718282
    """
    if not isinstance(args, tuple):
        raise TypeError(f"odeint: args must be a tuple (as SciPy's), got {type(args).__name__}: "
                        "write args=(value,)")
    for name in _UNSUPPORTED:
        if options.get(name):
            raise NotImplementedError(f"odeint: {name} is not supported by funcgrad's odeint; "
                                      "leave it unset")
        options.pop(name, None)
    if options.pop("tfirst", False):
        user = func
        func = lambda y, s, *a: user(s, y, *a)  # noqa: E731  (SciPy's tfirst order)
    y0, t = fnp.asarray(y0), fnp.asarray(t)
    if y0.ndim != 1 or t.ndim != 1:
        raise ValueError(f"odeint: y0 and t must be one-dimensional, got shapes {y0.shape} "
                         f"and {t.shape}")
    leaves, treedef = tree_flatten(args)
    arrays = [fnp.asarray(a) for a in leaves]
    layout = (treedef, tuple(tuple(a.shape) for a in arrays))
    dtype = np.result_type(float, *[a.dtype for a in arrays]) if arrays else np.dtype(float)
    flat = (fnp.concatenate([fnp.ravel(fnp.astype(a, dtype)) for a in arrays]) if arrays
            else fnp.zeros(0))
    return wrap(odeint_p(y0, t, flat, func=func, layout=layout,
                         options=tuple(sorted(options.items()))))


__all__ = sorted(ns.exports)
