"""funcgrad.scipy.stats.gamma: the gamma distribution (shape `a`, SciPy's location-scale
form), differentiable in `x`, `a`, `loc` and `scale` (the distribution functions to second
order only in `a`, as special.gammainc).

>>> import funcgrad as fg
>>> from funcgrad.scipy.stats import gamma
>>> round(gamma.logpdf(1.0, 1.0).item(), 12)  # exp(-1) at 1
-1.0
>>> round(fg.grad(gamma.cdf)(1.0, 1.0).item(), 12)  # the density
0.367879441171
"""
from __future__ import annotations

from ... import numpy as fnp
from ..._src.core import Array, wrap
from ..._src.declare import Namespace
from .. import special
from .._util import ArrayLike
from ._common import inside, log_scale, standardize, where

ns = Namespace("funcgrad.scipy.stats.gamma")
export = ns.export


@export
def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.gamma.logpdf``: -inf outside ``x >= loc``.

    >>> from funcgrad.scipy.stats import gamma
    >>> round(gamma.logpdf(2.0, 3.0, scale=2.0).item(), 12)  # x**2 exp(-x/2) / 16
    -2.38629436112
    """
    z = standardize(x, loc, scale)
    positive = fnp.greater_equal(z, 0)
    zs = inside(positive, z)
    density = special.xlogy(a - 1.0, zs) - zs - special.gammaln(a) - log_scale(scale)
    return where(positive, density, -fnp.inf)


@export
def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.gamma.pdf``.

    >>> from funcgrad.scipy.stats import gamma
    >>> round(gamma.pdf(1.0, 2.0).item(), 12)  # x exp(-x)
    0.367879441171
    """
    return wrap(fnp.exp(logpdf(x, a, loc, scale)))


@export
def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.gamma.cdf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import gamma
    >>> round(gamma.cdf(1.0, 1.0).item(), 12)  # 1 - exp(-1)
    0.632120558829
    """
    return special.gammainc(a, fnp.maximum(standardize(x, loc, scale), 0.0))


@export
def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.gamma.logcdf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import gamma
    >>> round(gamma.logcdf(1.0, 1.0).item(), 12)
    -0.458675145387
    """
    return wrap(fnp.log(cdf(x, a, loc, scale)))


@export
def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.gamma.sf``: ``1 - cdf`` without cancellation (needs SciPy).

    >>> from funcgrad.scipy.stats import gamma
    >>> round(gamma.sf(1.0, 1.0).item(), 12)  # exp(-1)
    0.367879441171
    """
    return special.gammaincc(a, fnp.maximum(standardize(x, loc, scale), 0.0))


@export
def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.gamma.logsf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import gamma
    >>> round(gamma.logsf(1.0, 1.0).item(), 12)
    -1.0
    """
    return wrap(fnp.log(sf(x, a, loc, scale)))


@export
def entropy(a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.gamma.entropy``:
    ``a + gammaln(a) + (1 - a) digamma(a) + log(scale)``.

    >>> from funcgrad.scipy.stats import gamma
    >>> gamma.entropy(1.0).item()  # the exponential distribution's
    1.0
    """
    a = fnp.asarray(a)
    h = a + special.gammaln(a) + (1.0 - a) * special.digamma(a) + log_scale(scale)
    return wrap(h + fnp.zeros_like(fnp.asarray(loc) + 0.0))


__all__ = sorted(ns.exports)
