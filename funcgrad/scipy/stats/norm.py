"""funcgrad.scipy.stats.norm: the normal distribution's densities and distribution functions,
differentiable in `x`, `loc` and `scale` (composites of funcgrad.numpy and special).

>>> import funcgrad as fg
>>> from funcgrad.scipy.stats import norm
>>> round(norm.logpdf(0.0).item(), 6)
-0.918939
>>> round(fg.grad(norm.cdf)(0.0).item(), 12) == round(norm.pdf(0.0).item(), 12)
True
"""
from __future__ import annotations

import math

from ..._src.core import Array, wrap
from ..._src.declare import Namespace
from ...numpy import _table as T
from ...numpy._typing import ArrayLike
from .. import special

ns = Namespace("funcgrad.scipy.stats.norm")
export = ns.export

_LOG_ROOT_TWO_PI = 0.5 * math.log(2 * math.pi)


def _standardize(x, loc, scale):
    return (T.asarray(x) - loc) / scale


@export
def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.logpdf``.

    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.logpdf(1.0, loc=1.0, scale=2.0).item(), 6)
    -1.612086
    """
    z = _standardize(x, loc, scale)
    # a Python-number scale stays a Python number, so float32 inputs stay float32
    log_scale = math.log(scale) if isinstance(scale, (int, float)) else T.log(scale)
    return wrap(-0.5 * z * z - _LOG_ROOT_TWO_PI - log_scale)


@export
def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.pdf``.

    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.pdf(0.0).item(), 6)
    0.398942
    """
    return wrap(T.exp(logpdf(x, loc, scale)))


@export
def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.cdf``.

    >>> from funcgrad.scipy.stats import norm
    >>> norm.cdf(0.0).item()
    0.5
    """
    return special.ndtr(_standardize(x, loc, scale))


@export
def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.logcdf`` (finite down to about -37 standard deviations).

    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.logcdf(0.0).item(), 6)
    -0.693147
    """
    return special.log_ndtr(_standardize(x, loc, scale))


@export
def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.sf`` (``1 - cdf``, computed without cancellation).

    >>> from funcgrad.scipy.stats import norm
    >>> norm.sf(0.0).item()
    0.5
    """
    return special.ndtr(-_standardize(x, loc, scale))


@export
def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.logsf``.

    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.logsf(0.0).item(), 6)
    -0.693147
    """
    return special.log_ndtr(-_standardize(x, loc, scale))


__all__ = sorted(ns.exports)
