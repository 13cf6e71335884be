"""funcgrad.scipy.stats.poisson: the Poisson distribution of mean `mu`, differentiable in
`mu`. The count `k` is data: like SciPy, non-integer counts have probability 0, and no
derivative flows to `k` (the mass function is piecewise constant in it).

>>> import funcgrad as fg
>>> from funcgrad.scipy.stats import poisson
>>> round(fg.grad(poisson.logpmf, argnums=1)(3.0, 2.0).item(), 12)  # k / mu - 1
0.5
"""
from __future__ import annotations

from ... import numpy as fnp
from ... import stop_gradient
from ..._src.core import Array, wrap
from ..._src.declare import Namespace
from .. import special
from .._util import ArrayLike
from ._common import inside, where

ns = Namespace("funcgrad.scipy.stats.poisson")
export = ns.export


def _count(k, loc):
    return stop_gradient(fnp.asarray(k) - loc)


@export
def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.logpmf``: ``k log(mu) - mu - log(k!)``.

    >>> from funcgrad.scipy.stats import poisson
    >>> round(poisson.logpmf(0, 2.0).item(), 12), poisson.logpmf(1.5, 2.0).item()
    (-2.0, -inf)
    """
    k = _count(k, loc)
    valid = fnp.logical_and(fnp.greater_equal(k, 0), fnp.equal(fnp.floor(k), k))
    ks = inside(valid, k, 0.0)
    mass = special.xlogy(ks, mu) - mu - special.gammaln(ks + 1.0)
    return where(valid, mass, -fnp.inf)


@export
def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.pmf``.

    >>> from funcgrad.scipy.stats import poisson
    >>> round(poisson.pmf(1, 2.0).item(), 12)  # 2 exp(-2)
    0.270670566473
    """
    return wrap(fnp.exp(logpmf(k, mu, loc)))


def _below(k, loc):
    """floor(k - loc) + 1 and whether k - loc >= 0: cdf(k) = gammaincc(floor(k) + 1, mu)."""
    k = fnp.floor(_count(k, loc))
    nonnegative = fnp.greater_equal(k, 0)
    return inside(nonnegative, k, 0.0) + 1.0, nonnegative


@export
def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.cdf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import poisson
    >>> round(poisson.cdf(1, 2.0).item(), 12)  # 3 exp(-2)
    0.40600584971
    """
    n, nonnegative = _below(k, loc)
    return where(nonnegative, special.gammaincc(n, mu), 0.0)


@export
def logcdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.logcdf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import poisson
    >>> round(poisson.logcdf(0, 2.0).item(), 12)
    -2.0
    """
    return wrap(fnp.log(cdf(k, mu, loc)))


@export
def sf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.sf``: ``1 - cdf`` without cancellation (needs SciPy).

    >>> from funcgrad.scipy.stats import poisson
    >>> round(poisson.sf(0, 2.0).item(), 12)  # 1 - exp(-2)
    0.864664716763
    """
    n, nonnegative = _below(k, loc)
    return where(nonnegative, special.gammainc(n, mu), 1.0)


@export
def logsf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.logsf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import poisson
    >>> round(poisson.logsf(0, 2.0).item(), 12)
    -0.145413457869
    """
    return wrap(fnp.log(sf(k, mu, loc)))


__all__ = sorted(ns.exports)
