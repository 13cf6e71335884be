"""funcgrad.scipy.stats.beta: the beta distribution on [loc, loc + scale], differentiable in
`x`, `a`, `b`, `loc` and `scale` (the distribution functions to first order only in `a` and
`b`, as special.betainc).

>>> import funcgrad as fg
>>> from funcgrad.scipy.stats import beta
>>> round(beta.pdf(0.5, 2.0, 2.0).item(), 12)  # 6 x (1 - x)
1.5
"""
from __future__ import annotations

from ... import numpy as fnp
from ..._src.core import Array, wrap
from ..._src.declare import Namespace
from .. import special
from .._util import ArrayLike
from ._common import inside, log_scale, standardize, where

ns = Namespace("funcgrad.scipy.stats.beta")
export = ns.export


@export
def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.beta.logpdf``: -inf outside [loc, loc + scale].

    >>> from funcgrad.scipy.stats import beta
    >>> round(beta.logpdf(0.5, 1.0, 1.0).item(), 12), beta.logpdf(1.5, 2.0, 2.0).item()
    (0.0, -inf)
    """
    z = standardize(x, loc, scale)
    within = fnp.logical_and(fnp.greater_equal(z, 0), fnp.less_equal(z, 1))
    zs = inside(within, z)
    density = (special.xlogy(a - 1.0, zs) + special.xlog1py(b - 1.0, -zs)
               - special.betaln(a, b) - log_scale(scale))
    return where(within, density, -fnp.inf)


@export
def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
        scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.beta.pdf``.

    >>> from funcgrad.scipy.stats import beta
    >>> round(beta.pdf(0.25, 1.0, 2.0).item(), 12)  # 2 (1 - x)
    1.5
    """
    return wrap(fnp.exp(logpdf(x, a, b, loc, scale)))


@export
def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
        scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.beta.cdf`` (in `x`, `loc` and `scale`; needs SciPy).

    >>> from funcgrad.scipy.stats import beta
    >>> round(beta.cdf(0.5, 1.0, 2.0).item(), 12)  # 1 - (1 - x)**2
    0.75
    """
    return special.betainc(a, b, fnp.clip(standardize(x, loc, scale), 0.0, 1.0))


@export
def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.beta.logcdf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import beta
    >>> round(beta.logcdf(0.5, 1.0, 1.0).item(), 12)
    -0.69314718056
    """
    return wrap(fnp.log(cdf(x, a, b, loc, scale)))


@export
def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
       scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.beta.sf``: I_{1-x}(b, a), without cancellation (needs SciPy).

    >>> from funcgrad.scipy.stats import beta
    >>> round(beta.sf(0.5, 1.0, 2.0).item(), 12)
    0.25
    """
    return special.betainc(b, a, fnp.clip(1.0 - standardize(x, loc, scale), 0.0, 1.0))


@export
def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
          scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.beta.logsf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import beta
    >>> round(beta.logsf(0.5, 1.0, 1.0).item(), 12)
    -0.69314718056
    """
    return wrap(fnp.log(sf(x, a, b, loc, scale)))


@export
def entropy(a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.beta.entropy``.

    >>> from funcgrad.scipy.stats import beta
    >>> abs(beta.entropy(1.0, 1.0).item())  # the uniform distribution's
    0.0
    """
    a, b = fnp.asarray(a), fnp.asarray(b)
    h = (special.betaln(a, b) - (a - 1.0) * special.digamma(a) - (b - 1.0) * special.digamma(b)
         + (a + b - 2.0) * special.digamma(a + b))
    return wrap(h + log_scale(scale) + fnp.zeros_like(fnp.asarray(loc) + 0.0))


__all__ = sorted(ns.exports)
