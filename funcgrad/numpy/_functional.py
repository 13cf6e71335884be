"""funcgrad.numpy's functions of functions: `vectorize`, `apply_along_axis`,
`apply_over_axes`, `piecewise`, `fromfunction`. They call the user's function on funcgrad
arrays, so whatever it computes differentiates as usual."""
from __future__ import annotations

import builtins
import re
from typing import Any, Callable, Sequence

import numpy as np

from .._src.core import Array, wrap
from .._src.transforms import vmap
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._creation import asarray
from ._shapes import expand_dims, moveaxis, stack
from ._typing import ArrayLike, DTypeLike, Shape

export = ns.export


@export(numpy=np.apply_along_axis)
def apply_along_axis(func1d: Callable, axis: int, arr: ArrayLike, *args: Any,
                     **kwargs: Any) -> Array:
    """Differentiable ``numpy.apply_along_axis``: `func1d` of every 1-d slice along `axis`,
    one vectorised call (vmap over the other axes, as JAX's); its output's axes take
    `axis`'s place.

    >>> import funcgrad.numpy as fnp
    >>> fnp.apply_along_axis(lambda r: r[0] * r[-1], 1, fnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [2.0, 12.0]
    """
    arr = asarray(arr)
    nd = H.ndim(arr)
    axis = axis % nd
    f = lambda row: func1d(row, *args, **kwargs)  # noqa: E731
    for _ in range(nd - 1):
        f = vmap(f)
    out = asarray(f(moveaxis(arr, axis, -1)))
    extra = H.ndim(out) - (nd - 1)
    if extra == 0:
        return out
    return moveaxis(out, tuple(range(nd - 1, nd - 1 + extra)), tuple(range(axis, axis + extra)))


@export(numpy=np.apply_over_axes)
def apply_over_axes(func: Callable, a: ArrayLike, axes: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.apply_over_axes``: ``a = func(a, axis)`` for each axis in turn,
    a lost axis put back with length 1.

    >>> import funcgrad.numpy as fnp
    >>> fnp.apply_over_axes(fnp.sum, fnp.ones((2, 3)), [0, 1]).tolist()
    [[6.0]]
    """
    out = asarray(a)
    for axis in np.atleast_1d(axes):
        axis = int(axis) % H.ndim(out)
        res = asarray(func(out, axis))
        if H.ndim(res) == H.ndim(out) - 1:
            res = expand_dims(res, axis)
        elif H.ndim(res) != H.ndim(out):
            raise ValueError("apply_over_axes: func must keep the number of dimensions or "
                             "remove exactly the axis it was given")
        out = res
    return out


@export(numpy=np.piecewise)
def piecewise(x: ArrayLike, condlist: Sequence[ArrayLike] | ArrayLike,
              funclist: Sequence[Callable | ArrayLike], *args: Any, **kw: Any) -> Array:
    """Differentiable ``numpy.piecewise``: where ``condlist[i]`` holds, ``funclist[i](x)``
    (or the constant ``funclist[i]``); one extra function is the default. As JAX's, each
    function is evaluated on all of `x` and its values selected, so the slope is that of
    the chosen piece.

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.array([-2.0, 3.0])
    >>> fnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]).tolist()
    [2.0, 9.0]
    """
    x = asarray(x)
    if np.isscalar(condlist) or (not isinstance(condlist[0], (list, np.ndarray, Array))
                                 and H.ndim(x) != 0):
        condlist = [condlist]
    conds = list(condlist)
    if len(funclist) == len(conds) + 1:
        rest = np.ones(H.shape(x), dtype=bool)
        for c in conds:
            rest = P.logical_and(rest, P.logical_not(c))
        conds.append(rest)
    elif len(funclist) != len(conds):
        raise ValueError(f"piecewise: with {len(conds)} condition(s) give {len(conds)} or "
                         f"{len(conds) + 1} functions, got {len(funclist)}")
    out = P.zeros_like(x)
    for cond, fn in zip(conds, funclist):
        piece = fn(x, *args, **kw) if callable(fn) else fn
        out = P.where(cond, P.astype(asarray(piece), H.dtype(x)), out)
    return out


@export(numpy=np.fromfunction)
def fromfunction(function: Callable, shape: Shape, *, dtype: DTypeLike = float,
                 **kwargs: Any) -> Any:  # whatever `function` returns
    """``numpy.fromfunction``: `function` called once on index arrays of `shape` (funcgrad
    arrays, so a function of closed-over traced values differentiates).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fromfunction(lambda i, j: i + j, (2, 2)).tolist()
    [[0.0, 1.0], [1.0, 2.0]]
    """
    return function(*[Array(i) for i in np.indices(tuple(shape), dtype=dtype)], **kwargs)


_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"


def _parse_signature(signature: str):
    if not re.fullmatch(rf"\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*",
                        signature):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = signature.split("->")
    parse = lambda side: [tuple(d for d in re.split(r",\s*", group.strip()) if d)  # noqa: E731
                          for group in re.findall(r"\(([^)]*)\)", side)]
    return parse(ins), parse(outs)


@export(numpy=np.vectorize, wraps=False)
class vectorize:
    """Differentiable ``numpy.vectorize``, built on vmap as JAX's: `pyfunc` is written for
    one element (or, with a gufunc `signature` such as ``"(n),(n)->()"``, for one core
    block) and called once on whole batches; `excluded` names arguments passed unmapped.
    Unlike NumPy's, `pyfunc` must be traceable (no Python branches on element values).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> f = fnp.vectorize(lambda a, b: a * b + 1.0)
    >>> f(fnp.array([1.0, 2.0]), 3.0).tolist()
    [4.0, 7.0]
    >>> fg.grad(lambda x: fnp.sum(fnp.vectorize(fnp.sin)(x)))(fnp.array([0.0])).tolist()
    [1.0]
    """

    def __init__(self, pyfunc: Callable, otypes: Any = None, doc: str | None = None,
                 excluded: Any = None, cache: bool = False,
                 signature: str | None = None) -> None:
        self.pyfunc = pyfunc
        self.excluded = set(excluded or ())
        self.signature = signature
        self.__doc__ = pyfunc.__doc__ if doc is None else doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        excluded = self.excluded
        mapped_pos = [i for i in range(len(args)) if i not in excluded]
        mapped_kw = [k for k in kwargs if k not in excluded]

        def call(*mapped):
            full = list(args)
            for i, m in zip(mapped_pos, mapped):
                full[i] = m
            kw = dict(kwargs)
            for k, m in zip(mapped_kw, mapped[len(mapped_pos):]):
                kw[k] = m
            return self.pyfunc(*full, **kw)

        values = [asarray(args[i]) for i in mapped_pos] + [asarray(kwargs[k]) for k in mapped_kw]
        if self.signature is None:
            cores = [()] * len(values)
        else:
            cores, _ = _parse_signature(self.signature)
            if len(cores) != len(values):
                raise TypeError(f"vectorize: the signature {self.signature!r} has {len(cores)} "
                                f"inputs, got {len(values)} mapped arguments")
        loops = [tuple(H.shape(v))[:H.ndim(v) - len(core)] for v, core in zip(values, cores)]
        batch = np.broadcast_shapes(*loops) if loops else ()
        flat = []
        for v, core in zip(values, cores):
            core_shape = tuple(H.shape(v))[H.ndim(v) - len(core):]
            v = P.broadcast_to(v, batch + core_shape)
            flat.append(P.reshape(v, (int(np.prod(batch, dtype=np.int64)),) + core_shape))
        if not batch:
            out = call(*[P.reshape(v, tuple(H.shape(v))[1:]) for v in flat])
            return tuple(asarray(o) for o in out) if isinstance(out, tuple) else asarray(out)
        out = vmap(call)(*flat)
        if isinstance(out, tuple):
            return tuple(wrap(P.reshape(o, batch + tuple(H.shape(o))[1:])) for o in out)
        return wrap(P.reshape(out, batch + tuple(H.shape(out))[1:]))


@export(numpy=np.frompyfunc, wraps=False)
def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity: Any = None) -> vectorize:
    """``numpy.frompyfunc`` as JAX's: `func` of scalars made elementwise over arrays (with
    vmap, as `vectorize`), differentiable where `func` is.

    >>> import funcgrad.numpy as fnp
    >>> fnp.frompyfunc(lambda a, b: a * b, nin=2, nout=1)(fnp.array([1.0, 2.0]), 3.0).tolist()
    [3.0, 6.0]
    """
    def checked(*args):
        if len(args) != nin:
            raise TypeError(f"frompyfunc: the function takes {nin} arguments, got {len(args)}")
        out = func(*args)
        if nout > 1 and (not isinstance(out, tuple) or len(out) != nout):
            raise ValueError(f"frompyfunc: the function must return {nout} values")
        return out
    return vectorize(checked)
