"""funcgrad.numpy's elementwise functions: the public faces of the elementwise primitives,
and `where`, `clip`, `angle`, `nan_to_num`... built on them."""
from __future__ import annotations


import numpy as np

from .._src.core import Array
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._nondiff import nonzero
from ._typing import ArrayLike

export = ns.export
public = ns.public


@export(numpy=np.where)
def where(condition: ArrayLike, x: ArrayLike | None = None,
          y: ArrayLike | None = None) -> Array | tuple[Array, ...]:
    """Differentiable ``numpy.where``: `x` where `cond` holds, else `y` (the slope follows the
    chosen side); with `cond` alone, the indices of its nonzero entries, as ``nonzero``."""
    if x is None and y is None:
        return nonzero(condition)
    return P.where(condition, x, y)


for _p in (P.add, P.subtract, P.negative, P.positive, P.multiply, P.divide, P.power,
           P.remainder, P.maximum, P.minimum, P.exp, P.exp2, P.expm1, P.log, P.log2, P.log10,
           P.log1p, P.sqrt, P.cbrt, P.square, P.reciprocal, P.absolute, P.sin, P.cos, P.tan,
           P.arcsin, P.arccos, P.arctan, P.sinh, P.cosh, P.tanh, P.arcsinh, P.arccosh,
           P.arctanh, P.deg2rad, P.rad2deg, P.logaddexp, P.logaddexp2, P.hypot, P.arctan2,
           P.sinc, P.fmax, P.fmin, P.copysign, P.fmod):
    public(_p, numpy=getattr(np, _p.name))
public(P.divide, name="true_divide", numpy=np.true_divide)
public(P.absolute, name="abs")
public(P.absolute, name="fabs", numpy=np.fabs)
public(P.remainder, name="mod", numpy=np.mod)
public(P.power, name="pow")
public(P.rad2deg, name="degrees", numpy=np.degrees)
public(P.deg2rad, name="radians", numpy=np.radians)
public(P.conjugate, numpy=np.conjugate)
public(P.conjugate, name="conj", numpy=np.conj)
public(P.real, numpy=np.real)
public(P.imag, numpy=np.imag)


@export(numpy=np.clip)
def clip(a: ArrayLike, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.clip``; inside ``[a_min, a_max]`` (ends included) the slope is 1."""
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min, a_max or both (both are None)")
    return P.clip(a, a_min, a_max)


@export(numpy=np.angle)
def angle(z: ArrayLike, deg: bool = False) -> Array:
    """Differentiable ``numpy.angle``: ``arctan2(imag(z), real(z))``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.angle(1j).item() == fnp.pi / 2
    True
    """
    out = P.arctan2(P.imag(z), P.real(z))
    return out * (180 / np.pi) if deg else out


@export(numpy=np.real_if_close)
def real_if_close(a: ArrayLike, tol: float = 100) -> Array:
    """Differentiable ``numpy.real_if_close``: the real part when every imaginary part is tiny.

    >>> import funcgrad.numpy as fnp
    >>> fnp.real_if_close(fnp.array([1.0 + 1e-20j])).dtype
    dtype('float64')
    """
    if H.dtype(a).kind != "c":
        return a
    eps = np.finfo(H.dtype(a)).eps if tol > 1 else 1.0
    small = np.all(np.abs(np.imag(H.bottom(a))) < tol * eps)
    return P.real(a) if small else a


@export(numpy=np.nan_to_num)
def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """Differentiable ``numpy.nan_to_num``: slope 1 where `x` is finite, 0 where replaced.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sum(fnp.nan_to_num(x)))(fnp.array([1.0, fnp.nan])).tolist()
    [1.0, 0.0]
    """
    return P.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


@export(numpy=np.float_power)
def float_power(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Differentiable ``numpy.float_power``: `power` computed in float64 (complex128).

    >>> import funcgrad.numpy as fnp
    >>> fnp.float_power(fnp.array([2.0], dtype=fnp.float32), 2).dtype
    dtype('float64')
    """
    kind = np.result_type(H.dtype(x1), H.dtype(x2)).kind
    dtype = np.complex128 if kind == "c" else np.float64
    return P.power(P.astype(x1, dtype), P.astype(x2, dtype))


# The Array API's names for the inverse trigonometric functions (NumPy 2 has both).
public(P.arcsin, name="asin")
public(P.arccos, name="acos")
public(P.arctan, name="atan")
public(P.arcsinh, name="asinh")
public(P.arccosh, name="acosh")
public(P.arctanh, name="atanh")
public(P.arctan2, name="atan2")
public(P.i0, numpy=np.i0)


def _float_dtype(x) -> np.dtype:
    dtype = H.dtype(x)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


@export(numpy=np.ldexp)
def ldexp(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Differentiable ``numpy.ldexp``: ``x1 * 2 ** x2`` for integer `x2` (slope ``2 ** x2``
    in `x1`; `x2` carries none).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.ldexp(x, 3))(1.5).item()
    8.0
    """
    if H.dtype(x2).kind not in "iub":
        raise TypeError(f"ldexp: the exponent x2 must be integers, got {H.dtype(x2)}")
    dtype = _float_dtype(x1)
    scale = P.astype(P.exp2(P.astype(x2, np.float64)), dtype)
    return P.multiply(P.astype(x1, dtype), scale)


@export(numpy=np.frexp)
def frexp(x: ArrayLike) -> tuple[Array, Array]:
    """Differentiable ``numpy.frexp``: ``(mantissa, exponent)`` with ``x = mantissa *
    2 ** exponent``; the mantissa has slope ``2 ** -exponent``, the exponent none.

    >>> import funcgrad.numpy as fnp
    >>> [a.item() for a in fnp.frexp(12.0)]
    [0.75, 4]
    """
    exponent = P.frexp_exponent(x)
    return ldexp(x, P.negative(exponent)), exponent


@export(numpy=np.modf)
def modf(x: ArrayLike) -> tuple[Array, Array]:
    """Differentiable ``numpy.modf``: ``(fractional, integral)`` parts; the fractional part
    has slope 1, the integral part none.

    >>> import funcgrad.numpy as fnp
    >>> [a.item() for a in fnp.modf(-2.5)]
    [-0.5, -2.0]
    """
    integral = P.trunc(x)
    return P.subtract(x, integral), integral


@export(numpy=np.divmod)
def divmod(x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:
    """Differentiable ``numpy.divmod``: ``(floor_divide(x1, x2), remainder(x1, x2))``; the
    quotient carries no derivative, the remainder that of `remainder`.

    >>> import funcgrad.numpy as fnp
    >>> [a.item() for a in fnp.divmod(7.0, 2.0)]
    [3.0, 1.0]
    """
    return P.floor_divide(x1, x2), P.remainder(x1, x2)


@export(numpy=np.unwrap)
def unwrap(p: ArrayLike, discont: float | None = None, axis: int = -1, *,
           period: float = 2 * np.pi) -> Array:
    """Differentiable ``numpy.unwrap``: the jumps it removes are constant, so the slope is 1.

    >>> import funcgrad.numpy as fnp
    >>> fnp.unwrap(fnp.array([0.0, 3.0, 6.5])).round(3).tolist()
    [0.0, 3.0, 0.217]
    """
    p = P.astype(p, _float_dtype(p)) if H.dtype(p).kind not in "fc" else p
    discont = period / 2 if discont is None else discont
    half = period / 2
    n = H.shape(p)[axis]
    dd = P.subtract(P.slice_axis(p, axis, 1, None), P.slice_axis(p, axis, None, n - 1))
    ddmod = P.subtract(P.remainder(P.add(dd, half), period), half)
    ddmod = P.where(P.logical_and(P.equal(ddmod, -half), P.greater(dd, 0)), half, ddmod)
    correct = P.where(P.less(P.absolute(dd), discont), 0,
                      P.subtract(ddmod, dd))
    steps = P.cumsum(correct, axis=axis)
    first = P.zeros_like(P.slice_axis(p, axis, 0, 1))
    return P.add(p, P.concatenate(first, steps, axis=axis % H.ndim(p)))
