"""funcgrad.numpy's functions whose results carry no derivative: comparisons, logic, rounding,
arg-functions, searching and counting, and questions about arrays (`shape`, `allclose`)."""
from __future__ import annotations

import builtins

import numpy as np

from .._src.core import Tracer, raw, wrap
from . import _primitives as P
from ._namespace import ns

public = ns.public

for _prim in (P.equal, P.not_equal, P.less, P.less_equal, P.greater, P.greater_equal,
              P.logical_and, P.logical_or, P.logical_xor, P.logical_not, P.isnan, P.isfinite,
              P.isinf, P.isneginf, P.isposinf, P.signbit, P.sign, P.floor, P.ceil, P.trunc,
              P.rint, P.fix, P.heaviside, P.nextafter, P.spacing, P.iscomplex, P.isreal,
              P.floor_divide, P.argmax, P.argmin, P.nanargmax, P.nanargmin, P.all, P.any,
              P.count_nonzero, P.argsort, P.argpartition, P.isclose, P.searchsorted, P.digitize,
              P.argwhere, P.flatnonzero, P.unique, P.bincount, P.histogram):
    public(_prim, numpy=getattr(P.np, _prim.name))
public(P.round, numpy=(np.round, np.around))
public(P.around)
nonzero = public(P.nonzero, numpy=np.nonzero)


def _plain_answer(prim):
    """Questions about arrays (allclose, shape...) answer with plain Python values, as
    NumPy's do; under a transform they stay primitives (so vmap can batch them)."""
    np_fn = prim.impl

    def ask(*args, **kwargs):
        if builtins.any(isinstance(a, Tracer) for a in args):
            return wrap(prim(*args, **kwargs))
        return np_fn(*[raw(a) for a in args], **kwargs)
    ask.__name__ = ask.__qualname__ = prim.name
    ask.__doc__ = f"``numpy.{prim.name}``, answered with a plain Python value (no derivative)."
    ask.primitive = prim
    return ns.export(ask, numpy=np_fn, kind="non-differentiable", wraps=False)


for _prim in (P.allclose, P.array_equal, P.shape, P.ndim, P.size, P.iscomplexobj,
              P.isrealobj, P.isscalar, P.result_type):
    _plain_answer(_prim)
