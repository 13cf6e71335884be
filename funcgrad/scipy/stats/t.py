"""funcgrad.scipy.stats.t: Student's t distribution with `df` degrees of freedom (SciPy's
location-scale form), differentiable in `x`, `df`, `loc` and `scale` (the
distribution functions to second order in `df`, as special.betainc).

>>> import funcgrad as fg
>>> from funcgrad.scipy.stats import t
>>> round(t.pdf(0.0, 1.0).item(), 12)  # the Cauchy density, 1 / pi
0.318309886184
"""
from __future__ import annotations

import math

from ... import numpy as fnp
from ..._src.core import Array, wrap
from ..._src.declare import Namespace
from .. import special
from .._util import ArrayLike
from ._common import log_scale, standardize, where

ns = Namespace("funcgrad.scipy.stats.t")
export = ns.export


@export
def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.t.logpdf``.

    >>> from funcgrad.scipy.stats import t
    >>> round(t.logpdf(1.0, 1.0).item(), 12)  # log(1 / (2 pi))
    -1.837877066409
    """
    z = standardize(x, loc, scale)
    df = fnp.asarray(df)
    half = 0.5 * (df + 1.0)
    return wrap(special.gammaln(half) - special.gammaln(0.5 * df) - 0.5 * fnp.log(df * math.pi)
                - half * fnp.log1p(z * z / df) - log_scale(scale))


@export
def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.t.pdf``.

    >>> from funcgrad.scipy.stats import t
    >>> round(t.pdf(1.0, 1.0).item(), 12)
    0.159154943092
    """
    return wrap(fnp.exp(logpdf(x, df, loc, scale)))


def _tail(z, df):
    """P(T > |z|) = betainc(df/2, 1/2, df / (df + z^2)) / 2."""
    df = fnp.asarray(df)
    return 0.5 * special.betainc(0.5 * df, 0.5, df / (df + z * z))


@export
def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.t.cdf`` (in `x`, `loc` and `scale`; needs SciPy).

    >>> from funcgrad.scipy.stats import t
    >>> round(t.cdf(1.0, 1.0).item(), 12)  # 1/2 + arctan(1) / pi
    0.75
    """
    z = standardize(x, loc, scale)
    tail = _tail(z, df)
    return where(fnp.less(z, 0), tail, 1.0 - tail)


@export
def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.t.logcdf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import t
    >>> round(t.logcdf(0.0, 3.0).item(), 12)
    -0.69314718056
    """
    z = standardize(x, loc, scale)
    tail = _tail(z, df)
    return where(fnp.less(z, 0), fnp.log(tail), fnp.log1p(-tail))


@export
def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.t.sf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import t
    >>> round(t.sf(1.0, 1.0).item(), 12)
    0.25
    """
    return cdf(-fnp.asarray(x), df, -fnp.asarray(loc), scale)


@export
def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.t.logsf`` (needs SciPy).

    >>> from funcgrad.scipy.stats import t
    >>> round(t.logsf(0.0, 3.0).item(), 12)
    -0.69314718056
    """
    return logcdf(-fnp.asarray(x), df, -fnp.asarray(loc), scale)


@export
def entropy(df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.t.entropy``.

    >>> import math
    >>> from funcgrad.scipy.stats import t
    >>> round(t.entropy(1.0).item(), 12) == round(math.log(4 * math.pi), 12)  # Cauchy's
    True
    """
    df = fnp.asarray(df)
    half = 0.5 * (df + 1.0)
    h = (half * (special.digamma(half) - special.digamma(0.5 * df))
         + 0.5 * fnp.log(df) + special.betaln(0.5 * df, 0.5))
    return wrap(h + log_scale(scale) + fnp.zeros_like(fnp.asarray(loc) + 0.0))


__all__ = sorted(ns.exports)
