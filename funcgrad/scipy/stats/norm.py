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

from ... import numpy as fnp
from ..._src.core import Array, wrap
from ..._src.declare import Namespace
from .. import special
from .._util import ArrayLike
from ._common import log_scale, standardize

ns = Namespace("funcgrad.scipy.stats.norm")
export = ns.export

_LOG_ROOT_TWO_PI = 0.5 * math.log(2 * math.pi)


@export
def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.logpdf``.

    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.logpdf(1.0, loc=1.0, scale=2.0).item(), 6)
    -1.612086
    """
    z = standardize(x, loc, scale)
    return wrap(-0.5 * z * z - _LOG_ROOT_TWO_PI - log_scale(scale))


@export
def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.pdf``.

    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.pdf(0.0).item(), 6)
    0.398942
    """
    return wrap(fnp.exp(logpdf(x, loc, scale)))


@export
def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.cdf``.

    >>> from funcgrad.scipy.stats import norm
    >>> norm.cdf(0.0).item()
    0.5
    """
    return special.ndtr(standardize(x, loc, scale))


@export
def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.logcdf`` (finite down to about -37 standard deviations).

    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.logcdf(0.0).item(), 6)
    -0.693147
    """
    return special.log_ndtr(standardize(x, loc, scale))


@export
def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.sf`` (``1 - cdf``, computed without cancellation).

    >>> from funcgrad.scipy.stats import norm
    >>> norm.sf(0.0).item()
    0.5
    """
    return special.ndtr(-standardize(x, loc, scale))


@export
def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.logsf``.

    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.logsf(0.0).item(), 6)
    -0.693147
    """
    return special.log_ndtr(-standardize(x, loc, scale))


@export
def entropy(loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """Differentiable ``scipy.stats.norm.entropy``: ``log(scale * sqrt(2 pi e))``.

    >>> import funcgrad as fg
    >>> from funcgrad.scipy.stats import norm
    >>> round(norm.entropy().item(), 6), fg.grad(norm.entropy, argnums=1)(0.0, 2.0).item()
    (1.418939, 0.5)
    """
    return wrap(fnp.broadcast_to(0.5 + _LOG_ROOT_TWO_PI + log_scale(scale),
                                 fnp.shape(fnp.asarray(loc) + scale)))


__all__ = sorted(ns.exports)
