"""funcgrad.scipy.stats.multivariate_normal: the multivariate normal distribution,
differentiable in `x`, `mean` and `cov` (the distribution functions `cdf` and `logcdf`: in
dimensions 1 and 2 exactly, in every argument; above, where the value is SciPy's randomized
estimate, in `x`, `mean` and `lower_limit` through exact formulas over a cdf of one dimension
less, and a derivative in `cov` raises). As in SciPy, the components of `x` run along its
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
from ..._src.core import Array, FuncgradError, Tracer, wrap
from ..._src.declare import Namespace, batch_elementwise, elementwise, primitive
from .._util import ArrayLike, require_scipy
from ..special import ndtr
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


# --- distribution functions ----------------------------------------------------------------
def _bvn_impl(h, k, rho):
    """P(X <= h, Y <= k) for standard normals of correlation rho: SciPy's value, which in
    two dimensions is Genz's exact algorithm (about 1e-16), one call per distinct rho."""
    st = require_scipy("stats", "funcgrad.scipy.stats.multivariate_normal.cdf")
    h, k, rho = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (h, k, rho)))
    out = np.empty(h.shape)
    for r in np.unique(rho):
        at = rho == r
        points = np.stack([np.clip(h[at], -40, 40), np.clip(k[at], -40, 40)], axis=-1)
        if abs(r) >= 1:  # perfectly (anti-)correlated: SciPy would call cov singular
            low = np.minimum(points[:, 0], points[:, 1]) if r > 0 else None
            out[at] = (_ndtr_np(low) if r > 0 else
                       np.maximum(_ndtr_np(points[:, 0]) + _ndtr_np(points[:, 1]) - 1, 0.0))
        else:
            out[at] = st.multivariate_normal.cdf(points, cov=[[1.0, r], [r, 1.0]])
    return out.astype(np.result_type(h.dtype, np.float64))


def _ndtr_np(z):
    return np.asarray(ndtr(z))


_bvn_impl.needs_scipy = True


def _bvn_dh(out, h, k, rho):
    """d/dh P(X <= h, Y <= k) = phi(h) Phi((k - rho h) / sqrt(1 - rho^2))."""
    h, k = fnp.clip(h, -40.0, 40.0), fnp.clip(k, -40.0, 40.0)
    return fnp.exp(-0.5 * h * h) / math.sqrt(2 * math.pi) * ndtr((k - rho * h) / fnp.sqrt(1 - rho * rho))


def _bvn_drho(out, h, k, rho):
    """d/drho P(X <= h, Y <= k) = the density at (h, k) (Plackett's identity)."""
    h, k = fnp.clip(h, -40.0, 40.0), fnp.clip(k, -40.0, 40.0)
    one_minus = 1 - rho * rho
    return (fnp.exp(-(h * h - 2 * rho * h * k + k * k) / (2 * one_minus))
            / (2 * math.pi * fnp.sqrt(one_minus)))


bvn_p = elementwise("bivariate_normal_cdf", _bvn_impl, _bvn_dh,
                    lambda out, h, k, rho: _bvn_dh(out, k, h, rho), _bvn_drho)


def _no_cov_derivative(*args, **params):
    raise FuncgradError(
        "multivariate_normal.cdf is not differentiable in cov above two dimensions: SciPy "
        "estimates it there by randomized quasi-Monte Carlo, and the derivative in cov would "
        "need second derivatives of that estimate. Hold cov constant with "
        "funcgrad.stop_gradient, or differentiate a one- or two-dimensional marginal")


def _mvn_cdf_impl(x, mean, cov, lower, maxpts=None, abseps=1e-5, releps=1e-5, rng=None):
    st = require_scipy("stats", "funcgrad.scipy.stats.multivariate_normal.cdf")
    lower = None if np.all(np.isneginf(lower)) else np.asarray(lower)
    extra = {} if rng is None else {"rng": rng}
    return np.asarray(st.multivariate_normal.cdf(
        np.asarray(x), np.asarray(mean), np.asarray(cov), maxpts=maxpts, abseps=abseps,
        releps=releps, lower_limit=lower, **extra), dtype=np.float64)


def _face(t, x, mean, cov, lower, i, params):
    """How fast P(lower < X <= x) grows with the upper limit of component i when that limit
    is `t`: the density of X_i at t times the probability of the other components' box given
    X_i = t, a normal distribution of one dimension less, computed by `cdf` itself (exact
    for three dimensions, where it is two-dimensional; an estimate as good as SciPy's above).
    Given X_i = t the others' mean moves by cov[-i, i] (t - mean_i) / cov[i, i]: the limits
    move the other way, so the conditional keeps the mean vector of the others."""
    others = [j for j in range(cov.shape[0]) if j != i]
    s_ii = cov[i, i]
    across = cov[others, i]
    shift = fnp.expand_dims(t - mean[i], -1) * (across / s_ii)
    conditional = cov[others][:, others] - fnp.outer(across, across) / s_ii
    density = fnp.exp(-0.5 * (t - mean[i]) ** 2 / s_ii) / fnp.sqrt(2 * math.pi * s_ii)
    low = None if lower is None else lower[..., others] - shift
    return density * cdf(x[..., others] - shift, mean[others], conditional, lower_limit=low,
                         **params)


def _slopes(x, mean, cov, lower, params):
    """dP/dx and dP/dlower, component by component on the last axis (None for no lower)."""
    finite_lower = not np.all(np.isneginf(np.asarray(stop_gradient(lower))))
    lower = lower if finite_lower else None
    dim = cov.shape[0]
    d_x = fnp.stack([_face(x[..., i], x, mean, cov, lower, i, params) for i in range(dim)], -1)
    if lower is None:
        return d_x, None
    parts = []
    for i in range(dim):
        free = fnp.isneginf(lower[..., i])  # no slope in a limit at -inf (double where: no nan)
        at = fnp.where(free, 0.0, lower[..., i])
        parts.append(fnp.where(free, 0.0, -_face(at, x, mean, cov, lower, i, params)))
    return d_x, fnp.stack(parts, -1)


def _mvn_vjp(which):
    def rule(ct, out, x, mean, cov, lower, **params):
        d_x, d_lower = _slopes(x, mean, cov, lower, params)
        ct = fnp.expand_dims(ct, -1)
        if which == "x":
            return ct * d_x
        if which == "lower":
            return fnp.zeros_like(lower) if d_lower is None else ct * d_lower
        total = d_x if d_lower is None else d_x + d_lower   # P moves with x - mean, lower - mean
        return -fnp.sum(fnp.reshape(ct * total, (-1, cov.shape[0])), axis=0)
    return rule


def _mvn_jvp(which):
    def rule(t, out, x, mean, cov, lower, **params):
        d_x, d_lower = _slopes(x, mean, cov, lower, params)
        if which == "x":
            return fnp.sum(t * d_x, axis=-1)
        if which == "lower":
            return fnp.zeros_like(out) if d_lower is None else fnp.sum(t * d_lower, axis=-1)
        total = d_x if d_lower is None else d_x + d_lower
        return -fnp.sum(t * total, axis=-1)
    return rule


_mvn_cdf_impl.needs_scipy = True
# In x, mean and lower_limit: the faces' rule above (their own derivatives follow, as cdf of
# one dimension less); in cov: a clear error.
mvn_cdf_p = primitive("multivariate_normal_cdf", _mvn_cdf_impl, nargs=4,
                      params=("maxpts", "abseps", "releps", "rng"),
                      vjps=(_mvn_vjp("x"), _mvn_vjp("mean"), _no_cov_derivative,
                            _mvn_vjp("lower")),
                      jvps=(_mvn_jvp("x"), _mvn_jvp("mean"), _no_cov_derivative,
                            _mvn_jvp("lower")))


def _box(F, x, lower):
    """P(lower < X <= x) from the orthant function F by inclusion-exclusion (two dimensions)."""
    if lower is None:
        return F(x[..., 0], x[..., 1])
    return (F(x[..., 0], x[..., 1]) - F(lower[..., 0], x[..., 1]) - F(x[..., 0], lower[..., 1])
            + F(lower[..., 0], lower[..., 1]))


def _check_covariance(cov, allow_singular):
    """SciPy's refusal of a covariance that is not positive definite (or semi-definite with
    ``allow_singular=True``), on concrete values."""
    if not isinstance(cov, Tracer):
        st = require_scipy("stats", "funcgrad.scipy.stats.multivariate_normal.cdf")
        st.multivariate_normal(cov=np.asarray(cov), allow_singular=allow_singular)


@export
def cdf(x: ArrayLike, mean: ArrayLike | None = None, cov: ArrayLike = 1,
        allow_singular: bool = False, maxpts: int | None = None, abseps: float = 1e-5,
        releps: float = 1e-5, *, lower_limit: ArrayLike | None = None, rng: Any = None) -> Array:
    """``scipy.stats.multivariate_normal.cdf``: P(lower_limit < X <= x), differentiable in
    `x`, `mean`, `cov` and `lower_limit` to any order in one and two dimensions (exact values
    there; `maxpts`, `abseps`, `releps`, `rng` are unused). Above two dimensions the value is
    SciPy's randomized quasi-Monte Carlo estimate; its slope in `x_i` (and so in `mean` and
    `lower_limit`) is the density of `X_i` times the conditional cdf of the others, one
    dimension less (exact in three dimensions, SciPy's accuracy above); a derivative in `cov`
    raises there (needs SciPy).

    >>> import pytest; _ = pytest.importorskip('scipy', reason='SciPy is not installed (optional)')
    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import multivariate_normal as mvn
    >>> round(mvn.cdf(fnp.zeros(2), cov=fnp.array([[1.0, 0.5], [0.5, 1.0]])).item(), 12)  # 1/3
    0.333333333333
    >>> fg.grad(mvn.cdf)(fnp.zeros(2), fnp.zeros(2), fnp.eye(2)).tolist()  # phi(0) / 2 each
    [0.19947114020071635, 0.19947114020071635]
    """
    dim, mean, cov = _parameters(mean, cov)
    x, shape = _points(x, dim)
    if dim > 1:
        _check_covariance(cov, allow_singular)
    if lower_limit is not None:
        lower_limit, _ = _points(lower_limit, dim)
    if dim == 1:
        scale = fnp.sqrt(cov[0, 0])
        out = ndtr((x[..., 0] - mean[0]) / scale)
        if lower_limit is not None:
            out = out - ndtr((lower_limit[..., 0] - mean[0]) / scale)
    elif dim == 2:
        s0, s1 = fnp.sqrt(cov[0, 0]), fnp.sqrt(cov[1, 1])
        rho = 0.5 * (cov[0, 1] + cov[1, 0]) / (s0 * s1)
        out = _box(lambda u, v: bvn_p((u - mean[0]) / s0, (v - mean[1]) / s1, rho), x,
                   lower_limit)
    else:
        lower = fnp.full(dim, -np.inf) if lower_limit is None else lower_limit
        out = mvn_cdf_p(x, mean, cov, lower, maxpts=maxpts, abseps=abseps, releps=releps,
                        rng=rng)
    return wrap(fnp.reshape(out, shape))


@export
def logcdf(x: ArrayLike, mean: ArrayLike | None = None, cov: ArrayLike = 1,
           allow_singular: bool = False, maxpts: int | None = None, abseps: float = 1e-5,
           releps: float = 1e-5, *, lower_limit: ArrayLike | None = None, rng: Any = None) -> Array:
    """``scipy.stats.multivariate_normal.logcdf``: the log of `cdf`, differentiable where
    `cdf` is (needs SciPy).

    >>> import pytest; _ = pytest.importorskip('scipy', reason='SciPy is not installed (optional)')
    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import multivariate_normal as mvn
    >>> round(mvn.logcdf(fnp.zeros(2), cov=fnp.eye(2)).item(), 12)  # log(1/4)
    -1.38629436112
    """
    return wrap(fnp.log(cdf(x, mean, cov, allow_singular, maxpts, abseps, releps,
                            lower_limit=lower_limit, rng=rng)))


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
