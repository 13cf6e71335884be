"""funcgrad.scipy.special: differentiable special functions, each declared once here.

Computed with NumPy (and Python's `math`) alone, except the functions that call SciPy
(erfinv, erfcinv, erf and erfc of complex numbers, the incomplete gamma and beta functions,
the Bessel functions): without SciPy those raise an ImportError that names the optional
extra. erf, erfc, gamma and gammaln of real numbers go element by element through `math`
(exact to double precision); polygamma uses a recurrence and its asymptotic series (about
1e-15). Derivatives are written with funcgrad operations, so every order is available.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.special import logsumexp
>>> fg.grad(logsumexp)(fnp.array([0.0, 0.0])).tolist()
[0.5, 0.5]
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import numpy as fnp
from .._src.core import Array, Primitive, Tracer, wrap
from .. import stop_gradient
from .._src.declare import Namespace, batch_elementwise, elementwise, nondiff, primitive
from ._util import ArrayLike, Axis, float_dtype, require_scipy, scipy_function

ns = Namespace("funcgrad.scipy.special")
public = ns.public
export = ns.export

_NEEDS_SCIPY = ">>> import pytest; _ = pytest.importorskip('scipy', reason='SciPy is not installed (optional)')\n"


def _example(call: str, value: str, grad: str, *, scipy: bool = False) -> str:
    """A docstring's example: a value and a derivative at one point."""
    return (">>> import funcgrad as fg, funcgrad.numpy as fnp, funcgrad.scipy as fsp\n"
            + (_NEEDS_SCIPY if scipy else "")
            + f">>> fsp.special.{call}\n{value}\n>>> fg.grad(fsp.special.{grad}\n")


def _pointwise(fn, complex_fn: str | None = None):
    """A NumPy function from a scalar one (math.erf...): exact to double precision, and
    non-finite where `fn` has no value (poles, overflow). Complex inputs, where `fn` is
    real only, go to ``scipy.special.<complex_fn>``."""
    def safe(v):
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return math.nan if fn is not math.gamma or v > 0 else math.inf
    ufunc = np.frompyfunc(safe, 1, 1)
    complex_impl = scipy_function(complex_fn) if complex_fn else None

    def impl(x):
        x = np.asarray(x)
        if x.dtype.kind == "c":
            if complex_impl is None:
                raise TypeError(f"{fn.__name__} is defined for real numbers only, got {x.dtype}")
            return complex_impl(x)
        dtype = float_dtype(x)
        return np.asarray(ufunc(x.astype(np.float64)), dtype=np.float64).astype(dtype)
    return impl


# --- polygamma on NumPy: recurrence up to a large argument, then the asymptotic series ------
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798)


def _polygamma_impl(x, n=0):
    """psi^(n)(x) (digamma for n = 0) to about 1e-15 relative, any real x but the poles."""
    x = np.asarray(x)
    dtype = float_dtype(x)
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
    "polygamma", _polygamma_impl, params=("n",), batch=batch_elementwise,
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
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(float_dtype(x))


def _logit_impl(p):
    p = np.asarray(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(p) - np.log1p(-p)).astype(float_dtype(p))


def _xlogy_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(x) == 0, 0, x * np.log(y))


def _xlog1py_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(x) == 0, 0, x * np.log1p(y))


def _where(condition, x, y):
    return wrap(fnp.where(condition, x, y))


def _ratio_or_zero(x, y):
    """x / y, with 0 where x == 0 (so xlogy's slope in y is 0 there, as its value is)."""
    zero = fnp.equal(x, 0)
    return _where(zero, 0, x / _where(zero, 1, y))


def _at_zero(x, dtype):
    return fnp.astype(fnp.equal(x, 0), dtype)


erf_p = elementwise("erf", _pointwise(math.erf, "erf"),
                    lambda out, x: _TWO_OVER_ROOT_PI * fnp.exp(-x * x))
erfc_p = elementwise("erfc", _pointwise(math.erfc, "erfc"),
                     lambda out, x: -_TWO_OVER_ROOT_PI * fnp.exp(-x * x))
gammaln_p = elementwise("gammaln", _pointwise(math.lgamma), lambda out, x: polygamma_p(x, n=0))
gamma_p = elementwise("gamma", _pointwise(math.gamma), lambda out, x: out * polygamma_p(x, n=0))
expit_p = elementwise("expit", _expit_impl, lambda out, x: out * (1 - out))
logit_p = elementwise("logit", _logit_impl, lambda out, p: 1 / (p * (1 - p)))
xlogy_p = elementwise("xlogy", _xlogy_impl, lambda out, x, y: fnp.log(y),
                      lambda out, x, y: _ratio_or_zero(x, y))
xlog1py_p = elementwise("xlog1py", _xlog1py_impl, lambda out, x, y: fnp.log1p(y),
                        lambda out, x, y: _ratio_or_zero(x, 1 + y))
erfinv_p = elementwise("erfinv", scipy_function("erfinv"),
                       lambda out, x: (math.sqrt(math.pi) / 2) * fnp.exp(out * out))
erfcinv_p = elementwise("erfcinv", scipy_function("erfcinv"),
                        lambda out, x: -(math.sqrt(math.pi) / 2) * fnp.exp(out * out))
i0_p = elementwise("i0", scipy_function("i0"), lambda out, x: i1_p(x))
i1_p = elementwise("i1", scipy_function("i1"),
                   lambda out, x: i0_p(x) - _ratio_or_zero(out, x) + 0.5 * _at_zero(x, out.dtype))
i0e_p = elementwise("i0e", scipy_function("i0e"), lambda out, x: i1e_p(x) - fnp.sign(x) * out)
i1e_p = elementwise("i1e", scipy_function("i1e"),
                    lambda out, x: i0e_p(x) - fnp.sign(x) * out - _ratio_or_zero(out, x)
                    + 0.5 * _at_zero(x, out.dtype))

_DOCS = {
    erf_p: ("``scipy.special.erf``, of real and complex numbers (complex ones need SciPy).",
            _example("erf(0.5)", "Array(0.52049988, dtype=float64)", "erf)(0.5)")
            + "Array(0.87878258, dtype=float64)"),
    erfc_p: ("``scipy.special.erfc``, of real and complex numbers (complex ones need SciPy).",
             _example("erfc(0.5)", "Array(0.47950012, dtype=float64)", "erfc)(0.5)")
             + "Array(-0.87878258, dtype=float64)"),
    gammaln_p: ("``scipy.special.gammaln``: log |Gamma(x)|.",
                _example("gammaln(3.0)", "Array(0.69314718, dtype=float64)", "gammaln)(3.0)")
                + "Array(0.92278434, dtype=float64)"),
    gamma_p: ("``scipy.special.gamma``.",
              _example("gamma(3.0)", "Array(2., dtype=float64)", "gamma)(3.0)")
              + "Array(1.84556867, dtype=float64)"),
    expit_p: ("``scipy.special.expit`` (the logistic sigmoid).",
              _example("expit(0.0)", "Array(0.5, dtype=float64)", "expit)(0.0)")
              + "Array(0.25, dtype=float64)"),
    logit_p: ("``scipy.special.logit``: log(p / (1 - p)).",
              _example("logit(0.25)", "Array(-1.09861229, dtype=float64)", "logit)(0.25)")
              + "Array(5.33333333, dtype=float64)"),
    xlogy_p: ("``scipy.special.xlogy``: x log(y), 0 where x is 0.",
              _example("xlogy(2.0, 3.0)", "Array(2.19722458, dtype=float64)",
                       "xlogy, argnums=(0, 1))(2.0, 3.0)")
              + "(Array(1.09861229, dtype=float64), Array(0.66666667, dtype=float64))"),
    xlog1py_p: ("``scipy.special.xlog1py``: x log(1 + y), 0 where x is 0.",
                _example("xlog1py(2.0, 3.0)", "Array(2.77258872, dtype=float64)",
                         "xlog1py, argnums=(0, 1))(2.0, 3.0)")
                + "(Array(1.38629436, dtype=float64), Array(0.5, dtype=float64))"),
    erfinv_p: ("``scipy.special.erfinv`` (needs SciPy).",
               _example("erfinv(0.5)", "Array(0.47693628, dtype=float64)", "erfinv)(0.5)",
                        scipy=True) + "Array(1.11258482, dtype=float64)"),
    erfcinv_p: ("``scipy.special.erfcinv`` (needs SciPy).",
                _example("erfcinv(0.5)", "Array(0.47693628, dtype=float64)", "erfcinv)(0.5)",
                         scipy=True) + "Array(-1.11258482, dtype=float64)"),
    i0_p: ("``scipy.special.i0`` (needs SciPy).",
           _example("i0(1.0)", "Array(1.26606588, dtype=float64)", "i0)(1.0)", scipy=True)
           + "Array(0.5651591, dtype=float64)"),
    i1_p: ("``scipy.special.i1`` (needs SciPy).",
           _example("i1(1.0)", "Array(0.5651591, dtype=float64)", "i1)(1.0)", scipy=True)
           + "Array(0.70090677, dtype=float64)"),
    i0e_p: ("``scipy.special.i0e``: exp(-|x|) i0(x) (needs SciPy).",
            _example("i0e(1.0)", "Array(0.46575961, dtype=float64)", "i0e)(1.0)", scipy=True)
            + "Array(-0.25784919, dtype=float64)"),
    i1e_p: ("``scipy.special.i1e``: exp(-|x|) i1(x) (needs SciPy).",
            _example("i1e(1.0)", "Array(0.20791042, dtype=float64)", "i1e)(1.0)", scipy=True)
            + "Array(0.04993878, dtype=float64)"),
}
for _p, (_summary, _ex) in _DOCS.items():
    # the first line names SciPy's function (docs/numpy_functions.md lists it)
    public(_p, doc=f"Differentiable {_summary}\n\n{_ex}")


# --- composites: exact in terms of the functions above, so they need no rules of their own --
def _shift(a, axis):
    """The max along `axis`, held constant (its slope cancels exactly), 0 where not finite."""
    m = stop_gradient(fnp.max(a, axis=axis, keepdims=True))
    return _where(fnp.isfinite(m), m, 0)


@export
def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None, keepdims: bool = False,
              return_sign: bool = False) -> Array | tuple[Array, Array]:
    """Differentiable ``scipy.special.logsumexp``: ``log(sum(b * exp(a)))``, computed stably.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.special import logsumexp
    >>> round(logsumexp(fnp.array([1000.0, 1000.0])).item(), 6)
    1000.693147
    """
    a = fnp.asarray(a)
    if isinstance(axis, list):
        axis = tuple(axis)
    m = _shift(a, axis)
    terms = fnp.exp(a - m)
    if b is not None:
        terms = terms * b
    total = fnp.sum(terms, axis=axis, keepdims=True)
    if return_sign:
        sign = fnp.sign(total)
        total = fnp.absolute(total)
    out = fnp.log(total) + m
    if not keepdims:
        shape = np.shape(np.sum(np.empty(fnp.shape(a)), axis=axis))
        out = fnp.reshape(out, shape)
        if return_sign:
            sign = fnp.reshape(sign, shape)
    return (wrap(out), wrap(sign)) if return_sign else wrap(out)


@export
def softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``scipy.special.softmax``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.special import softmax
    >>> softmax(fnp.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    e = fnp.exp(x - _shift(fnp.asarray(x), axis))
    return wrap(e / fnp.sum(e, axis=axis, keepdims=True))


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
    return wrap(-fnp.logaddexp(0.0, -fnp.asarray(x)))


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
    return wrap(gammaln_p(a) + gammaln_p(b) - gammaln_p(fnp.add(a, b)))


@export
def beta(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``scipy.special.beta`` (positive arguments).

    >>> from funcgrad.scipy.special import beta
    >>> round(beta(2.0, 3.0).item(), 12)
    0.083333333333
    """
    return wrap(fnp.exp(betaln(a, b)))


@export
def ndtr(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.ndtr``: the standard normal CDF.

    >>> from funcgrad.scipy.special import ndtr
    >>> ndtr(0.0).item()
    0.5
    """
    return wrap(0.5 * erfc_p(-fnp.asarray(x) / math.sqrt(2.0)))


@export
def log_ndtr(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.log_ndtr`` (finite down to x of about -37).

    >>> from funcgrad.scipy.special import log_ndtr
    >>> round(log_ndtr(0.0).item(), 6)
    -0.693147
    """
    return wrap(fnp.log(ndtr(x)))


@export
def entr(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.entr``: ``-x log x`` (0 at 0, -inf below).

    >>> from funcgrad.scipy.special import entr
    >>> round(entr(0.5).item(), 8), abs(entr(0.0).item())
    (0.34657359, 0.0)
    """
    x = fnp.asarray(x)
    return _where(fnp.less(x, 0), -np.inf, -xlogy_p(x, x))


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


# --- incomplete gamma and beta functions, Bessel functions (SciPy computes the values) ------
def _gammainc_dx(out, a, x):
    """d/dx gammainc(a, x) = x^(a-1) exp(-x) / Gamma(a)."""
    return fnp.exp((a - 1) * fnp.log(x) - x - gammaln_p(a))


def _betainc_dx(out, a, b, x):
    """d/dx betainc(a, b, x) = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    return fnp.exp((a - 1) * fnp.log(x) + (b - 1) * fnp.log1p(-x) - betaln(a, b))


_LAGUERRE = np.polynomial.laguerre.laggauss(60)


def _gammainc_da_impl(a, x, order=1):
    """d^k/da^k P(a, x), k = `order` (1 or 2), to about 1e-14 relative, in three regions.

    * Upper tail, x >= 8 and a - 1 < x / 2: by Q = 1 - P, with
      d^k/da^k Gamma(a, x) = int_x^inf t^(a-1) exp(-t) log(t)^k dt, which is
      x^(a-1) exp(-x) int_0^inf exp(-s) (1 + s/x)^(a-1) log(x + s)^k ds: Gauss-Laguerre.
    * Else x >= 30 and x > a + 1: Q = C U, C = x^(a-1) exp(-x) / Gamma(a),
      U = sum_k prod_(j<=k) (a-j)/x (the asymptotic series, summed to its smallest term)
      and their derivatives in a.
    * Else the series P = sum_n w_n, w_n = exp(-x) x^(a+n) / Gamma(a+n+1): with
      L_n = log x - digamma(a+n+1), dw_n/da = w_n L_n, d2w_n/da2 = w_n (L_n^2 - trigamma(a+n+1)).
    """
    sc = require_scipy("special", "the derivative of funcgrad.scipy.special.gammainc")
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    dtype = float_dtype(np.asarray(a), np.asarray(x))
    valid = (x > 0) & (a > 0)
    quadrature = valid & (x >= 8) & (a - 1 < 0.5 * x)
    tail = valid & ~quadrature & (x >= 30) & (x > a + 1)
    series = valid & ~quadrature & ~tail
    out = np.where(x == 0, 0.0, np.nan)

    if series.any():
        xs, as_ = x[series], a[series]
        log_x = np.log(xs)
        total, top, n = np.zeros_like(xs), np.zeros_like(xs), 0
        while True:
            w = np.exp(-xs + (as_ + n) * log_x - sc.gammaln(as_ + n + 1))
            slope = log_x - sc.digamma(as_ + n + 1)
            term = w * slope if order == 1 else w * (slope * slope - sc.polygamma(1, as_ + n + 1))
            total, top, n = total + term, np.maximum(top, np.abs(term)), n + 1
            # the terms peak near n = x - a, then fall faster than geometrically
            if n > np.max(xs - as_) and np.all(np.abs(term) <= 1e-17 * np.maximum(top, 1e-300)):
                break
        out[series] = total

    if quadrature.any():
        xq, aq = x[quadrature][:, None], a[quadrature][:, None]
        nodes, weights = _LAGUERRE
        c = np.exp(-xq + (aq - 1) * np.log(xq) - sc.gammaln(aq))[:, 0]
        f = weights * np.exp((aq - 1) * np.log1p(nodes / xq))
        log_t = np.log(xq + nodes)
        g1 = c * np.sum(f * log_t, axis=1)          # d/da Gamma(a, x) / Gamma(a)
        aq = aq[:, 0]
        q, psi = sc.gammaincc(aq, xq[:, 0]), sc.digamma(aq)
        if order == 1:  # dQ/da = G'/Gamma - Q psi
            out[quadrature] = -(g1 - q * psi)
        else:           # d2Q/da2 = G''/Gamma - 2 psi G'/Gamma + Q (psi^2 - trigamma)
            g2 = c * np.sum(f * log_t * log_t, axis=1)
            out[quadrature] = -(g2 - 2 * psi * g1 + q * (psi * psi - sc.polygamma(1, aq)))

    if tail.any():
        xt, at = x[tail], a[tail]
        c = np.exp((at - 1) * np.log(xt) - xt - sc.gammaln(at))
        slope = np.log(xt) - sc.digamma(at)
        u, du, d2u = np.ones_like(xt), np.zeros_like(xt), np.zeros_like(xt)  # term, d/da, d2/da2
        sums = [u.copy(), du.copy(), d2u.copy()]
        for k in range(1, 100001):
            u, du, d2u = u * (at - k) / xt, (du * (at - k) + u) / xt, (d2u * (at - k) + 2 * du) / xt
            for total_k, t in zip(sums, (u, du, d2u)):
                total_k += t
            if all(np.all(np.abs(t) <= 1e-17 * np.abs(tot)) for t, tot in zip((u, du, d2u), sums)):
                break
            if k > np.max(at + xt):  # past the smallest term: the asymptotic series diverges
                break
        big_u, big_du, big_d2u = sums
        if order == 1:   # dQ/da = C' U + C U', C' = C slope
            out[tail] = -c * (slope * big_u + big_du)
        else:            # d2Q/da2 = C'' U + 2 C' U' + C U'', C'' = C (slope^2 - trigamma(a))
            out[tail] = -c * ((slope * slope - sc.polygamma(1, at)) * big_u + 2 * slope * big_du
                              + big_d2u)
    return out.astype(dtype)


_gammainc_da_impl.needs_scipy = True


def _gammainc_da2_dx(out, a, x):
    """d/dx d2P/da2 = dP/dx ((log x - digamma(a))^2 - trigamma(a))."""
    slope = fnp.log(x) - polygamma_p(a, n=0)
    return _gammainc_dx(None, a, x) * (slope * slope - polygamma_p(a, n=1))


# d2P/da2 is differentiable in x, not in a (a third derivative in a raises)
gammainc_da2_p = elementwise("gammainc_da2", lambda a, x: _gammainc_da_impl(a, x, order=2),
                             None, _gammainc_da2_dx)
gammainc_da2_p.impl.needs_scipy = True
# dP/da: differentiable in a (by the second-order series) and in x
# (d/dx dP/da = dP/dx (log x - digamma(a)))
gammainc_da_p = elementwise(
    "gammainc_da", _gammainc_da_impl, lambda out, a, x: gammainc_da2_p(a, x),
    lambda out, a, x: _gammainc_dx(None, a, x) * (fnp.log(x) - polygamma_p(a, n=0)))
gammainc_p = elementwise("gammainc", scipy_function("gammainc", unary=False),
                         lambda out, a, x: gammainc_da_p(a, x), _gammainc_dx)
gammaincc_p = elementwise("gammaincc", scipy_function("gammaincc", unary=False),
                          lambda out, a, x: -gammainc_da_p(a, x),
                          lambda out, a, x: -_gammainc_dx(out, a, x))


def _betainc_series(a, b, x, wrt):
    """First or second derivatives of I_x(a, b) in a and b, from the hypergeometric series
    B_x(p, q) = y^p (1-y)^q / p * S, S = sum_n t_n, t_0 = 1, t_n = t_(n-1) y (p+q+n-1) / (p+n),
    whose terms are positive. `wrt` is a tuple of parameter indices (0: a, 1: b), one or two.

    With L = log I = p log y + q log(1-y) - log p - log B(p, q) + log S and g_(i,n) the
    derivative of log t_n in parameter i (c_n = sum_(k<n) 1/(p+q+k) - 1/(p+1+k) in p,
    e_n = sum_(k<n) 1/(p+q+k) in q):
    dL/dp = log y - 1/p - digamma(p) + digamma(p+q) + <c>,  dL/dq = log(1-y) - digamma(q)
    + digamma(p+q) + <e>, where <.> is the t_n-weighted mean over the series; the second
    derivatives add 1/p^2 (pp), the trigamma terms, the weighted mean of d2 log t_n and the
    weighted covariance of the g's, and dI = I dL, d2I = I (d2L + dL dL).
    Above y = (a+1)/(a+b+2) it uses I_x(a, b) = 1 - I_(1-x)(b, a) (parameters swapped, sign
    flipped), so the series' ratio stays below 1. Relative error about 1e-13 away from
    cancellation; NaN outside the domain (a, b > 0, 0 <= x <= 1), 0 at x = 0 and x = 1."""
    sc = require_scipy("special", "the derivative of funcgrad.scipy.special.betainc")
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    dtype = float_dtype(np.asarray(a), np.asarray(b), np.asarray(x))
    inside = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    flip = inside & (x > (a + 1) / (a + b + 2))
    p = np.where(inside, np.where(flip, b, a), 1.0)      # the series' parameters
    q = np.where(inside, np.where(flip, a, b), 1.0)
    y = np.where(inside, np.where(flip, 1 - x, x), 0.5)
    # per element, which series parameter each requested one is: a is p unless flipped
    as_p = [np.asarray((i == 0) != flip) for i in wrt]
    value = sc.betainc(p, q, y)
    total, term = np.ones_like(y), np.ones_like(y)
    c = e = cc = ee = np.zeros_like(y)        # the sums c_n, e_n and their derivatives
    m = [np.zeros_like(y) for _ in range(5)]  # weighted sums of c, e, c c, c e, e e
    m2 = [np.zeros_like(y) for _ in range(2)]  # weighted sums of cc (d c / dp) and ee
    for n in range(1, 200001):
        k = n - 1
        c = c + 1 / (p + q + k) - 1 / (p + 1 + k)
        e = e + 1 / (p + q + k)
        cc = cc - 1 / (p + q + k) ** 2 + 1 / (p + 1 + k) ** 2
        ee = ee + 1 / (p + q + k) ** 2
        ratio = y * (p + q + k) / (p + n)
        term = term * ratio
        total = total + term
        for acc, v in zip(m, (c, e, c * c, c * e, e * e)):
            acc += term * v
        m2[0] += term * cc
        m2[1] += term * ee
        size = term * (1 + np.abs(c) + np.abs(e)) ** (len(wrt))
        done = size <= 1e-17 * total * np.maximum(1 - ratio, 1e-300)
        if done.all():
            break
    mean_c, mean_e, mean_cc, mean_ce, mean_ee = (v / total for v in m)
    psi_pq = sc.digamma(p + q)
    d_p = np.log(y) - 1 / p - sc.digamma(p) + psi_pq + mean_c
    d_q = np.log1p(-y) - sc.digamma(q) + psi_pq + mean_e
    first = [np.where(is_p, d_p, d_q) for is_p in as_p]
    if len(wrt) == 1:
        d = value * first[0]
    else:
        tri_pq = sc.polygamma(1, p + q)
        # second derivatives of L in (p, p), (p, q), (q, q)
        l_pp = 1 / p ** 2 - sc.polygamma(1, p) + tri_pq + m2[0] / total + mean_cc - mean_c ** 2
        l_pq = tri_pq - m2[1] / total + mean_ce - mean_c * mean_e
        l_qq = -sc.polygamma(1, q) + tri_pq - m2[1] / total + mean_ee - mean_e ** 2
        both_p, both_q = as_p[0] & as_p[1], ~as_p[0] & ~as_p[1]
        second = np.where(both_p, l_pp, np.where(both_q, l_qq, l_pq))
        d = value * (second + first[0] * first[1])
    d = np.where(flip, -1.0, 1.0) * d
    edge = (a > 0) & (b > 0) & ((x == 0) | (x == 1))
    out = np.where(inside & done, d, np.where(edge, 0.0, np.nan))
    return out.astype(dtype)


def _betainc_dab_dx(a, b, x, wrt):
    """d/dx of dI/da_i (or of d2I/da_i da_j): dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b) has
    d log/da = log x - digamma(a) + digamma(a+b), d log/db = log(1-x) - digamma(b) +
    digamma(a+b), d2 log/da2 = trigamma(a+b) - trigamma(a), ... /da db = trigamma(a+b)."""
    slopes = [fnp.log(x) - polygamma_p(a, n=0) if i == 0 else fnp.log1p(-x) - polygamma_p(b, n=0)
              for i in wrt]
    psi_ab = polygamma_p(fnp.add(a, b), n=0)
    slopes = [s + psi_ab for s in slopes]
    if len(wrt) == 1:
        return _betainc_dx(None, a, b, x) * slopes[0]
    curvature = polygamma_p(fnp.add(a, b), n=1)
    if wrt[0] == wrt[1]:
        curvature = curvature - polygamma_p(a if wrt[0] == 0 else b, n=1)
    return _betainc_dx(None, a, b, x) * (slopes[0] * slopes[1] + curvature)


def _betainc_impl(wrt):
    impl = functools.partial(_betainc_series, wrt=wrt)
    impl.needs_scipy = True
    return impl


# The second derivatives in a and b are differentiable in x, not in a and b again (a third
# derivative there raises); the first derivatives differentiate into them.
betainc_daa_p = elementwise("betainc_daa", _betainc_impl((0, 0)), None, None,
                            lambda out, a, b, x: _betainc_dab_dx(a, b, x, (0, 0)))
betainc_dab_p = elementwise("betainc_dab", _betainc_impl((0, 1)), None, None,
                            lambda out, a, b, x: _betainc_dab_dx(a, b, x, (0, 1)))
betainc_dbb_p = elementwise("betainc_dbb", _betainc_impl((1, 1)), None, None,
                            lambda out, a, b, x: _betainc_dab_dx(a, b, x, (1, 1)))
betainc_da_p = elementwise("betainc_da", _betainc_impl((0,)),
                           lambda out, a, b, x: betainc_daa_p(a, b, x),
                           lambda out, a, b, x: betainc_dab_p(a, b, x),
                           lambda out, a, b, x: _betainc_dab_dx(a, b, x, (0,)))
betainc_db_p = elementwise("betainc_db", _betainc_impl((1,)),
                           lambda out, a, b, x: betainc_dab_p(a, b, x),
                           lambda out, a, b, x: betainc_dbb_p(a, b, x),
                           lambda out, a, b, x: _betainc_dab_dx(a, b, x, (1,)))
betainc_p = elementwise("betainc", scipy_function("betainc", unary=False),
                        lambda out, a, b, x: betainc_da_p(a, b, x),
                        lambda out, a, b, x: betainc_db_p(a, b, x), _betainc_dx)
# order v is not differentiable (SciPy's neither): its slot holds None
jv_p = elementwise("jv", scipy_function("jv", unary=False), None,
                   lambda out, v, x: 0.5 * (jv_p(v - 1, x) - jv_p(v + 1, x)))
yv_p = elementwise("yv", scipy_function("yv", unary=False), None,
                   lambda out, v, x: 0.5 * (yv_p(v - 1, x) - yv_p(v + 1, x)))
iv_p = elementwise("iv", scipy_function("iv", unary=False), None,
                   lambda out, v, x: 0.5 * (iv_p(v - 1, x) + iv_p(v + 1, x)))
ive_p = elementwise("ive", scipy_function("ive", unary=False), None,
                    lambda out, v, x: 0.5 * (ive_p(v - 1, x) + ive_p(v + 1, x)) - fnp.sign(x) * out)
gammasgn_p = nondiff("gammasgn", scipy_function("gammasgn"))


@export
def gammainc(a: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.gammainc``: the regularized lower incomplete gamma
    function P(a, x), differentiable in `x` (to any order) and in `a` (to second order,
    mixed derivatives with `x` included; a third derivative in `a` raises) (needs SciPy).

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.special import gammainc
    >>> round(gammainc(1.0, 2.0).item(), 12)  # 1 - exp(-2)
    0.864664716763
    >>> round(fg.grad(gammainc, argnums=1)(1.0, 2.0).item(), 12)  # exp(-2)
    0.135335283237
    >>> round(fg.grad(fg.grad(gammainc))(1.0, 2.0).item(), 9)  # in a, twice
    -0.148561862
    """
    return wrap(gammainc_p(a, x))


@export
def gammaincc(a: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.gammaincc``: 1 - P(a, x), differentiable as
    `gammainc` is (needs SciPy).

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.special import gammaincc
    >>> round(gammaincc(1.0, 2.0).item(), 12)  # exp(-2)
    0.135335283237
    """
    return wrap(gammaincc_p(a, x))


@export
def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.betainc``: the regularized incomplete beta function
    I_x(a, b), differentiable in `x` to any order and in `a` and `b` to first order (mixed
    derivatives with `x` included; a second derivative in `a` or `b` raises) (needs SciPy).

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.special import betainc
    >>> round(betainc(1.0, 2.0, 0.5).item(), 12)  # 1 - (1 - x)**2
    0.75
    >>> round(fg.grad(betainc, argnums=2)(1.0, 2.0, 0.5).item(), 12)  # 2 (1 - x)
    1.0
    >>> round(fg.grad(betainc)(1.0, 1.0, 0.5).item(), 12)  # I = x^a at b = 1: x^a log x
    -0.34657359028
    """
    return wrap(betainc_p(a, b, x))


@export
def gammasgn(x: ArrayLike) -> Array:
    """``scipy.special.gammasgn``: the sign of Gamma(x); its derivative is 0 (needs SciPy).

    >>> from funcgrad.scipy.special import gammasgn
    >>> gammasgn(-0.5).item(), gammasgn(0.5).item()
    (-1.0, 1.0)
    """
    return wrap(gammasgn_p(x))


@export
def rgamma(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.rgamma``: 1 / Gamma(x), 0 at the poles.

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.special import rgamma
    >>> rgamma(3.0).item(), rgamma(-1.0).item()
    (0.5, 0.0)
    >>> round(fg.grad(rgamma)(1.0).item(), 12)  # Euler-Mascheroni constant
    0.577215664902
    """
    return wrap(1.0 / gamma_p(x))


@export
def multigammaln(a: ArrayLike, d: int) -> Array:
    """Differentiable ``scipy.special.multigammaln``: the log of the multivariate gamma
    function of dimension `d` (a constant positive integer), for ``a > (d - 1) / 2``.

    >>> import math
    >>> from funcgrad.scipy.special import multigammaln
    >>> multigammaln(3.0, 1).item() == math.lgamma(3.0)
    True
    """
    if isinstance(d, Tracer) or np.ndim(d) != 0 or int(d) != d or d < 1:
        raise ValueError(f"multigammaln: d must be a constant positive integer, got {d!r}")
    d = int(d)
    if not isinstance(a, Tracer) and np.any(np.asarray(a) <= (d - 1) / 2):
        raise ValueError(f"multigammaln: a must be greater than (d - 1) / 2 = {(d - 1) / 2} "
                         "(as SciPy requires)")
    a = fnp.asarray(a)
    terms = sum(gammaln_p(a - j / 2) for j in range(d))
    return wrap(d * (d - 1) / 4 * math.log(math.pi) + terms)


def _bessel(prim: Primitive, order, x):
    """prim(order, x), the order a constant array in x's float dtype."""
    if isinstance(order, Tracer):
        raise TypeError(f"{prim.name}: the order is not differentiable; pass a constant "
                        "(wrap it in funcgrad.stop_gradient if it is computed)")
    x = fnp.asarray(x)
    dtype = x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64)
    return wrap(prim(np.asarray(order, dtype=dtype), x))


@export
def jv(v: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.jv``: the Bessel function of the first kind of real
    order `v` (constant), differentiable in `x` (needs SciPy).

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.special import jv, j0, j1
    >>> bool(abs(fg.grad(jv, argnums=1)(0.0, 1.5) + j1(1.5)) < 1e-15)  # J0' = -J1
    True
    """
    return _bessel(jv_p, v, x)


@export
def jn(n: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.jn``: the Bessel function of the first kind of order
    `n`, differentiable in `x` (needs SciPy).

    >>> from funcgrad.scipy.special import jn
    >>> round(jn(2, 1.0).item(), 12)
    0.114903484932
    """
    return _bessel(jv_p, n, x)


@export
def j0(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.j0`` (needs SciPy).

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.special import j0
    >>> round(j0(1.0).item(), 12), round(fg.grad(j0)(1.0).item(), 12)  # J0' = -J1
    (0.765197686558, -0.440050585745)
    """
    return _bessel(jv_p, 0.0, x)


@export
def j1(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.j1`` (needs SciPy).

    >>> from funcgrad.scipy.special import j1
    >>> round(j1(1.0).item(), 12)
    0.440050585745
    """
    return _bessel(jv_p, 1.0, x)


@export
def yv(v: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.yv``: the Bessel function of the second kind of real
    order `v` (constant), differentiable in `x` (needs SciPy).

    >>> from funcgrad.scipy.special import yv
    >>> round(yv(0.5, 1.0).item(), 12)
    -0.431098868018
    """
    return _bessel(yv_p, v, x)


@export
def yn(n: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.yn``: the Bessel function of the second kind of
    integer order `n`, differentiable in `x` (needs SciPy).

    >>> from funcgrad.scipy.special import yn
    >>> round(yn(2, 1.0).item(), 12)
    -1.650682606816
    """
    return _bessel(yv_p, n, x)


@export
def y0(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.y0`` (needs SciPy).

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.special import y0
    >>> round(fg.grad(y0)(1.0).item(), 12)  # Y0' = -Y1
    0.7812128213
    """
    return _bessel(yv_p, 0.0, x)


@export
def y1(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.y1`` (needs SciPy).

    >>> from funcgrad.scipy.special import y1
    >>> round(y1(1.0).item(), 12)
    -0.7812128213
    """
    return _bessel(yv_p, 1.0, x)


@export
def iv(v: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.iv``: the modified Bessel function of the first kind
    of real order `v` (constant), differentiable in `x` (needs SciPy).

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.special import iv, i1
    >>> bool(abs(fg.grad(iv, argnums=1)(0.0, 1.5) - i1(1.5)) < 1e-15)  # I0' = I1
    True
    """
    return _bessel(iv_p, v, x)


@export
def ive(v: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.ive``: ``iv(v, x) * exp(-|x|)`` for real `x` (needs
    SciPy).

    >>> from funcgrad.scipy.special import ive
    >>> round(ive(1.0, 1.0).item(), 12)
    0.20791041535
    """
    return _bessel(ive_p, v, x)


globals().update(ns.exports)
__all__ = sorted(ns.exports)
