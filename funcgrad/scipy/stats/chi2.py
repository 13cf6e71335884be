"""funcgrad.scipy.stats.chi2: the chi-squared distribution with `df` degrees of freedom,
the gamma distribution of shape ``df / 2`` and scale 2; differentiable as `gamma` is.

>>> import funcgrad as fg
>>> from funcgrad.scipy.stats import chi2
>>> round(chi2.pdf(2.0, 2).item(), 12)  # exp(-x/2) / 2
0.183939720586
"""
from __future__ import annotations

from ..._src.core import Array
from ..._src.declare import Namespace
from .._util import ArrayLike
from . import gamma

ns = Namespace("funcgrad.scipy.stats.chi2")
export = ns.export


@export
def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.chi2.logpdf``.

    >>> from funcgrad.scipy.stats import chi2
    >>> round(chi2.logpdf(2.0, 2).item(), 12)  # -x/2 - log 2
    -1.69314718056
    """
    return gamma.logpdf(x, 0.5 * df, loc, 2.0 * scale)


@export
def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.chi2.pdf``.

    >>> from funcgrad.scipy.stats import chi2
    >>> round(chi2.pdf(1.0, 2).item(), 12)
    0.303265329856
    """
    return gamma.pdf(x, 0.5 * df, loc, 2.0 * scale)


@export
def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.chi2.cdf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import chi2
    >>> round(chi2.cdf(2.0, 2).item(), 12)  # 1 - exp(-1)
    0.632120558829
    """
    return gamma.cdf(x, 0.5 * df, loc, 2.0 * scale)


@export
def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.chi2.logcdf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import chi2
    >>> round(chi2.logcdf(2.0, 2).item(), 12)
    -0.458675145387
    """
    return gamma.logcdf(x, 0.5 * df, loc, 2.0 * scale)


@export
def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.chi2.sf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import chi2
    >>> round(chi2.sf(2.0, 2).item(), 12)
    0.367879441171
    """
    return gamma.sf(x, 0.5 * df, loc, 2.0 * scale)


@export
def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.chi2.logsf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import chi2
    >>> round(chi2.logsf(2.0, 2).item(), 12)
    -1.0
    """
    return gamma.logsf(x, 0.5 * df, loc, 2.0 * scale)


@export
def entropy(df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.chi2.entropy``.

    >>> import math
    >>> from funcgrad.scipy.stats import chi2
    >>> round(chi2.entropy(2).item() - math.log(2), 12)  # exponential of scale 2
    1.0
    """
    return gamma.entropy(0.5 * df, loc, 2.0 * scale)


__all__ = sorted(ns.exports)
