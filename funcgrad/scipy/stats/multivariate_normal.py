"""funcgrad.scipy.stats.multivariate_normal: the multivariate normal distribution,
differentiable in `x`, `mean` and `cov`. As in SciPy, the components of `x` run along its
last axis, `cov` may be a scalar (times the identity), a vector (a diagonal) or a matrix,
and ``allow_singular=True`` uses the pseudo-inverse and pseudo-determinant of `cov`.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.stats import multivariate_normal as mvn
>>> round(mvn.logpdf(fnp.zeros(2), fnp.zeros(2), fnp.eye(2)).item(), 12)  # -log(2 pi)
-1.837877066409
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import numpy as fnp
from ... import stop_gradient
from ..._src.core import Array, wrap
from ..._src.declare import Namespace
from .._util import ArrayLike
from ._common import constant, scipy_stats

ns = Namespace("funcgrad.scipy.stats.multivariate_normal")
export = ns.export

_LOG_TWO_PI = math.log(2 * math.pi)


def _parameters(mean, cov):
    """(dim, mean vector, covariance matrix) as SciPy reads them."""
    cov = fnp.asarray(cov)
    if mean is None:
        dim = 1 if cov.ndim == 0 else cov.shape[0]
        mean = fnp.zeros(dim)
    mean = fnp.asarray(mean)
    if mean.ndim > 1:
        raise ValueError(f"multivariate_normal: mean must be one-dimensional, got shape {mean.shape}")
    dim = 1 if mean.ndim == 0 else mean.shape[0]
    mean = fnp.reshape(mean, (dim,))
    if cov.ndim == 0:
        cov = cov * fnp.eye(dim)
    elif cov.ndim == 1:
        cov = fnp.diag(cov)
    if cov.shape != (dim, dim):
        raise ValueError(f"multivariate_normal: cov has shape {cov.shape}; with a mean of "
                         f"{dim} components it must be ({dim}, {dim}), a vector of {dim} or a scalar")
    return dim, mean, cov


def _points(x, dim):
    """`x` with the components on its last axis, and the shape SciPy gives the result."""
    x = fnp.asarray(x)
    if dim == 1 and (x.ndim == 0 or x.shape[-1] != 1):
        return fnp.expand_dims(x, -1), x.shape
    if x.shape[-1:] != (dim,):
        raise ValueError(f"multivariate_normal: x has shape {x.shape}; its last axis must "
                         f"have the {dim} components of the distribution")
    return x, x.shape[:-1]


def _singular_parts(cov):
    """(rank, log pseudo-determinant, a matrix U with pinv(cov) = U U^T), as SciPy's
    allow_singular computes them: eigenvalues below a relative cutoff count as zero."""
    s, u = fnp.linalg.eigh(cov)
    values = np.asarray(stop_gradient(s))
    eps = 1e6 * np.finfo(values.dtype).eps * np.max(np.abs(values))
    if np.min(values) < -eps:
        raise ValueError("multivariate_normal: cov must be positive semi-definite")
    kept = values > eps
    s_kept = wrap(fnp.where(kept, s, 1.0))
    log_pdet = fnp.sum(wrap(fnp.where(kept, fnp.log(s_kept), 0.0)))
    scales = wrap(fnp.where(kept, 1.0 / fnp.sqrt(s_kept), 0.0))
    return int(kept.sum()), log_pdet, u * scales


@export
def logpdf(x: ArrayLike, mean: ArrayLike | None = None, cov: ArrayLike = 1,
           allow_singular: bool = False) -> Array:
    """Differentiable ``scipy.stats.multivariate_normal.logpdf``.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import multivariate_normal as mvn
    >>> cov = fnp.array([[2.0, 0.0], [0.0, 0.5]])
    >>> fg.grad(mvn.logpdf)(fnp.array([1.0, 1.0]), fnp.zeros(2), cov).tolist()  # -cov^-1 x
    [-0.5, -2.0]
    """
    dim, mean, cov = _parameters(mean, cov)
    x, shape = _points(x, dim)
    dev = x - mean
    if allow_singular:
        rank, log_det, u = _singular_parts(cov)
        maha = fnp.sum(fnp.square(fnp.matmul(dev, u)), axis=-1)
    else:
        rank = dim
        chol = fnp.linalg.cholesky(cov)
        log_det = 2.0 * fnp.sum(fnp.log(fnp.diagonal(chol)))
        flat = fnp.reshape(dev, (-1, dim))
        maha = fnp.sum(flat * fnp.transpose(fnp.linalg.solve(cov, fnp.transpose(flat))), axis=-1)
        maha = fnp.reshape(maha, shape)
    return wrap(fnp.reshape(-0.5 * (rank * _LOG_TWO_PI + log_det + maha), shape))


@export
def pdf(x: ArrayLike, mean: ArrayLike | None = None, cov: ArrayLike = 1,
        allow_singular: bool = False) -> Array:
    """Differentiable ``scipy.stats.multivariate_normal.pdf``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import multivariate_normal as mvn
    >>> round(mvn.pdf(fnp.zeros(2), cov=fnp.eye(2)).item(), 12)  # 1 / (2 pi)
    0.159154943092
    """
    return wrap(fnp.exp(logpdf(x, mean, cov, allow_singular)))


@export
def entropy(mean: ArrayLike | None = None, cov: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.multivariate_normal.entropy``: ``(d log(2 pi e) +
    log det cov) / 2``.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import multivariate_normal as mvn
    >>> fg.grad(mvn.entropy, argnums=1)(fnp.zeros(2), fnp.eye(2) * 2.0).tolist()  # cov^-1 / 2
    [[0.25, 0.0], [0.0, 0.25]]
    """
    dim, mean, cov = _parameters(mean, cov)
    _, log_det = fnp.linalg.slogdet(cov)
    return wrap(0.5 * (dim * (_LOG_TWO_PI + 1.0) + log_det))


@export(kind="non-differentiable")
def rvs(mean: ArrayLike | None = None, cov: ArrayLike = 1, size: Any = 1,
        random_state: Any = None) -> np.ndarray:
    """``scipy.stats.multivariate_normal.rvs``: samples, which carry no derivative (needs SciPy).

    >>> import pytest; _ = pytest.importorskip('scipy', reason='SciPy is not installed (optional)')
    >>> from funcgrad.scipy.stats import multivariate_normal as mvn
    >>> mvn.rvs([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], size=3, random_state=0).shape
    (3, 2)
    """
    mean = None if mean is None else constant(mean)
    return scipy_stats("multivariate_normal").rvs(mean, constant(cov), size=size,
                                                  random_state=random_state)


__all__ = sorted(ns.exports)
