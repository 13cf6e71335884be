"""funcgrad.scipy.special: differentiable special functions, each declared once here.

Computed with NumPy (and Python's `math`) alone, except erfinv, erfcinv and the Bessel
functions i0, i1, i0e, i1e, which call SciPy: without it they raise an ImportError that
names the optional extra to install. erf, erfc, gamma and gammaln go element by element
through `math` (exact to double precision, about 0.25 us per element, some ten times
SciPy's time); polygamma uses a recurrence and its asymptotic series (about 1e-15).

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.special import logsumexp
>>> fg.grad(logsumexp)(fnp.array([0.0, 0.0])).tolist()
[0.5, 0.5]
"""
from __future__ import annotations

import math

import numpy as np

from .._src import batching as B
from .._src.core import Array, Tracer, wrap
from .._src.declare import Namespace, elementwise, primitive
from .._src.transforms import stop_gradient
from ..numpy import _table as T
from ..numpy._examples import EXAMPLES
from ..numpy._typing import ArrayLike, Axis
from ..numpy._table import _dtype, equal, exp, log, log1p, max_p, sum_p, where_p

ns = Namespace("funcgrad.scipy.special", EXAMPLES.get("funcgrad.scipy.special"))
public = ns.public
export = ns.export


def _float_dtype(x):
    dtype = np.result_type(x)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _pointwise(fn):
    """A NumPy function from a scalar one (math.erf...): exact to double precision, and
    non-finite where `fn` has no value (poles, overflow)."""
    def safe(v):
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return math.nan if fn is not math.gamma or v > 0 else math.inf
    ufunc = np.frompyfunc(safe, 1, 1)

    def impl(x):
        x = np.asarray(x)
        dtype = _float_dtype(x)
        return np.asarray(ufunc(x.astype(np.float64)), dtype=np.float64).astype(dtype)
    return impl


def _scipy_special(name):
    try:
        import scipy.special as sc
    except ImportError as error:
        raise ImportError(
            f"funcgrad.scipy.special.{name} needs SciPy, an optional dependency of funcgrad: "
            "install it with pip install 'funcgrad[scipy]' (or pip install scipy)") from error
    return sc


def _with_scipy(name):
    def impl(x):
        x = np.asarray(x)
        return getattr(_scipy_special(name), name)(x).astype(_float_dtype(x))
    impl.__name__ = name
    impl.needs_scipy = True  # tests skip it, saying why, where SciPy is not installed
    return impl


# --- polygamma on NumPy: recurrence up to a large argument, then the asymptotic series ------
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798)


def _polygamma_impl(x, n=0):
    """psi^(n)(x) (digamma for n = 0) to about 1e-15 relative, any real x but the poles."""
    x = np.asarray(x)
    dtype = _float_dtype(x)
    z = x.astype(np.float64)
    pole = (z <= 0) & (z == np.floor(z))
    limit = 15.0 + n
    z = np.where(pole, limit, z)
    sign = -1.0 if n % 2 == 0 else 1.0          # (-1) ** (n + 1)
    fact = float(math.factorial(n))
    acc = np.zeros_like(z)
    while True:  # psi^(n)(x) = psi^(n)(x + 1) + (-1)^(n+1) n! / x^(n+1)
        small = z < limit
        if not small.any():
            break
        acc = acc + np.where(small, sign * fact / np.where(small, z, 1.0) ** (n + 1), 0.0)
        z = np.where(small, z + 1, z)
    inv = 1.0 / z
    if n == 0:
        series = np.log(z) - 0.5 * inv
        for k, b in enumerate(_BERNOULLI, start=1):
            series = series - b / (2 * k) * inv ** (2 * k)
    else:
        series = math.factorial(n - 1) * inv ** n + fact / 2 * inv ** (n + 1)
        for k, b in enumerate(_BERNOULLI, start=1):
            series = series + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) * inv ** (2 * k + n)
        series = sign * series
    return np.where(pole, np.nan, acc + series).astype(dtype)


def _polygamma_d(out, x, n=0):
    return polygamma_p(x, n=n + 1)


polygamma_p = primitive(
    "polygamma", _polygamma_impl, params=("n",), batch=B.batch_elementwise,
    vjps=(lambda ct, out, x, n=0: ct * _polygamma_d(out, x, n),),
    jvps=(lambda t, out, x, n=0: t * _polygamma_d(out, x, n),))


@export
def polygamma(n: int, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.polygamma`` (`n` a non-negative integer, constant).

    >>> from funcgrad.scipy.special import polygamma
    >>> round(polygamma(1, 1.0).item(), 12)  # pi**2 / 6
    1.644934066848
    """
    if isinstance(n, Tracer) or np.ndim(n) != 0 or int(n) != n or n < 0:
        raise TypeError("polygamma: n must be a constant non-negative integer")
    return wrap(polygamma_p(x, n=int(n)))


@export
def digamma(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.digamma`` (psi).

    >>> from funcgrad.scipy.special import digamma
    >>> round(digamma(1.0).item(), 12)  # minus the Euler-Mascheroni constant
    -0.577215664902
    """
    return wrap(polygamma_p(x, n=0))


ns.exports["psi"] = digamma
ns.kinds["psi"] = "differentiable"


# --- elementwise special functions ---------------------------------------------------------
_TWO_OVER_ROOT_PI = 2 / math.sqrt(math.pi)


def _expit_impl(x):
    x = np.asarray(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(_float_dtype(x))


def _logit_impl(p):
    p = np.asarray(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(p) - np.log1p(-p)).astype(_float_dtype(p))


def _xlogy_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(x) == 0, 0, x * np.log(y))


def _xlog1py_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(x) == 0, 0, x * np.log1p(y))


def _ratio_or_zero(x, y):
    """x / y, with 0 where x == 0 (so xlogy's slope in y is 0 there, as its value is)."""
    zero = equal(x, 0)
    return where_p(zero, 0, x / where_p(zero, 1, y))


erf_p = elementwise("erf", _pointwise(math.erf), lambda out, x: _TWO_OVER_ROOT_PI * exp(-x * x))
erfc_p = elementwise("erfc", _pointwise(math.erfc), lambda out, x: -_TWO_OVER_ROOT_PI * exp(-x * x))
gammaln_p = elementwise("gammaln", _pointwise(math.lgamma), lambda out, x: polygamma_p(x, n=0))
gamma_p = elementwise("gamma", _pointwise(math.gamma), lambda out, x: out * polygamma_p(x, n=0))
expit_p = elementwise("expit", _expit_impl, lambda out, x: out * (1 - out))
logit_p = elementwise("logit", _logit_impl, lambda out, p: 1 / (p * (1 - p)))
xlogy_p = elementwise("xlogy", _xlogy_impl, lambda out, x, y: log(y),
                      lambda out, x, y: _ratio_or_zero(x, y))
xlog1py_p = elementwise("xlog1py", _xlog1py_impl, lambda out, x, y: log1p(y),
                        lambda out, x, y: _ratio_or_zero(x, 1 + y))
erfinv_p = elementwise("erfinv", _with_scipy("erfinv"),
                       lambda out, x: (math.sqrt(math.pi) / 2) * exp(out * out))
erfcinv_p = elementwise("erfcinv", _with_scipy("erfcinv"),
                        lambda out, x: -(math.sqrt(math.pi) / 2) * exp(out * out))
i0_p = elementwise("i0", _with_scipy("i0"), lambda out, x: i1_p(x))
i1_p = elementwise("i1", _with_scipy("i1"),
                   lambda out, x: i0_p(x) - _ratio_or_zero(out, x) + 0.5 * T.astype(equal(x, 0), _dtype(out)))
i0e_p = elementwise("i0e", _with_scipy("i0e"), lambda out, x: i1e_p(x) - T.sign(x) * out)
i1e_p = elementwise("i1e", _with_scipy("i1e"),
                    lambda out, x: i0e_p(x) - T.sign(x) * out - _ratio_or_zero(out, x)
                    + 0.5 * T.astype(equal(x, 0), _dtype(out)))

for _p in (erf_p, erfc_p, gammaln_p, gamma_p, expit_p, logit_p, xlogy_p, xlog1py_p, erfinv_p,
           erfcinv_p, i0_p, i1_p, i0e_p, i1e_p):
    public(_p)


# --- composites: exact in terms of the functions above, so they need no rules of their own --
def _shift(a, axis):
    """The max along `axis`, held constant (its slope cancels exactly), 0 where not finite."""
    m = stop_gradient(max_p(a, axis=axis, keepdims=True))
    return where_p(T.isfinite(m), m, 0)


@export
def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None, keepdims: bool = False,
              return_sign: bool = False) -> Array | tuple[Array, Array]:
    """Differentiable ``scipy.special.logsumexp``: ``log(sum(b * exp(a)))``, computed stably.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.special import logsumexp
    >>> round(logsumexp(fnp.array([1000.0, 1000.0])).item(), 6)
    1000.693147
    """
    a = T.asarray(a)
    if isinstance(axis, list):
        axis = tuple(axis)
    m = _shift(a, axis)
    terms = exp(a - m)
    if b is not None:
        terms = terms * b
    total = sum_p(terms, axis=axis, keepdims=True)
    if return_sign:
        sign = T.sign(total)
        total = T.absolute(total)
    out = log(total) + m
    if not keepdims:
        shape = np.shape(np.sum(np.empty(T._shape(a)), axis=axis))
        out = T.reshape(out, shape)
        if return_sign:
            sign = T.reshape(sign, shape)
    return (wrap(out), wrap(sign)) if return_sign else wrap(out)


@export
def softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``scipy.special.softmax``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.special import softmax
    >>> softmax(fnp.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    e = exp(x - _shift(T.asarray(x), axis))
    return wrap(e / sum_p(e, axis=axis, keepdims=True))


@export
def log_softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``scipy.special.log_softmax``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.special import log_softmax
    >>> round(log_softmax(fnp.array([0.0, 0.0]))[0].item(), 6)
    -0.693147
    """
    return wrap(x - logsumexp(x, axis=axis, keepdims=True))


@export
def log_expit(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.log_expit``: ``-logaddexp(0, -x)``.

    >>> from funcgrad.scipy.special import log_expit
    >>> round(log_expit(-800.0).item(), 6)  # no overflow
    -800.0
    """
    return wrap(-T.logaddexp(0.0, -T.asarray(x)))


@export
def expit(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.expit`` (the logistic sigmoid).

    >>> from funcgrad.scipy.special import expit
    >>> expit(0.0).item()
    0.5
    """
    return wrap(expit_p(x))


@export
def betaln(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``scipy.special.betaln``.

    >>> from funcgrad.scipy.special import betaln
    >>> round(betaln(1.0, 2.0).item(), 12)  # log(1/2)
    -0.69314718056
    """
    return wrap(gammaln_p(a) + gammaln_p(b) - gammaln_p(T.add(a, b)))


@export
def beta(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``scipy.special.beta`` (positive arguments).

    >>> from funcgrad.scipy.special import beta
    >>> round(beta(2.0, 3.0).item(), 12)
    0.083333333333
    """
    return wrap(exp(betaln(a, b)))


@export
def ndtr(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.ndtr``: the standard normal CDF.

    >>> from funcgrad.scipy.special import ndtr
    >>> ndtr(0.0).item()
    0.5
    """
    return wrap(0.5 * erfc_p(-T.asarray(x) / math.sqrt(2.0)))


@export
def log_ndtr(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.log_ndtr`` (finite down to x of about -37).

    >>> from funcgrad.scipy.special import log_ndtr
    >>> round(log_ndtr(0.0).item(), 6)
    -0.693147
    """
    return wrap(log(ndtr(x)))


@export
def entr(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.entr``: ``-x log x`` (0 at 0, -inf below).

    >>> from funcgrad.scipy.special import entr
    >>> round(entr(0.5).item(), 8), abs(entr(0.0).item())
    (0.34657359, 0.0)
    """
    x = T.asarray(x)
    return wrap(where_p(T.less(x, 0), -np.inf, -xlogy_p(x, x)))


@export
def rel_entr(x: ArrayLike, y: ArrayLike) -> Array:
    """Differentiable ``scipy.special.rel_entr``: ``x log(x / y)`` for positive arguments.

    >>> from funcgrad.scipy.special import rel_entr
    >>> rel_entr(2.0, 2.0).item()
    0.0
    """
    return wrap(xlogy_p(x, x) - xlogy_p(x, y))


@export
def kl_div(x: ArrayLike, y: ArrayLike) -> Array:
    """Differentiable ``scipy.special.kl_div``: ``x log(x / y) - x + y``.

    >>> from funcgrad.scipy.special import kl_div
    >>> kl_div(1.0, 1.0).item()
    0.0
    """
    return wrap(rel_entr(x, y) - x + y)


globals().update(ns.exports)
__all__ = sorted(ns.exports)
