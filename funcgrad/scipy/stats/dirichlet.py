"""funcgrad.scipy.stats.dirichlet: the Dirichlet distribution with concentrations `alpha`,
differentiable in `x` and `alpha`. As in SciPy, the components of `x` run along its first
axis (further axes hold several points), and `x` may omit its last component.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.stats import dirichlet
>>> round(dirichlet.pdf(fnp.array([0.25, 0.75]), fnp.array([1.0, 1.0])).item(), 12)  # uniform
1.0
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as fnp
from ..._src.core import Array, Tracer, wrap
from ..._src.declare import Namespace
from .. import special
from .._util import ArrayLike
from ._common import constant, scipy_stats

ns = Namespace("funcgrad.scipy.stats.dirichlet")
export = ns.export


def _components(x, alpha):
    """`x` with its components on the first axis, completed to len(alpha) if one short;
    values checked as SciPy checks them where they are concrete."""
    x, alpha = fnp.asarray(x), fnp.asarray(alpha)
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet: alpha must be one-dimensional, got shape {alpha.shape}")
    k = alpha.shape[0]
    if x.shape[0] == k - 1:
        x = fnp.concatenate([x, fnp.expand_dims(1.0 - fnp.sum(x, axis=0), 0)], axis=0)
    elif x.shape[0] != k:
        raise ValueError(f"dirichlet: x has {x.shape[0]} components along its first axis; "
                         f"alpha has {k}: pass x with {k} (or {k - 1}) entries on axis 0")
    if not isinstance(x, Tracer) and not isinstance(getattr(x, "_value", None), Tracer):
        values = np.asarray(x)
        if np.any(values < 0) or np.any(values > 1):
            raise ValueError("dirichlet: every entry of x must lie in [0, 1]")
        if np.any(np.abs(np.sum(values, axis=0) - 1.0) > 1e-9):
            raise ValueError("dirichlet: the components of x must sum to 1 along axis 0")
    return x, alpha


def _log_normalizer(alpha):
    return fnp.sum(special.gammaln(alpha)) - special.gammaln(fnp.sum(alpha))


@export
def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.logpdf``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import dirichlet
    >>> round(dirichlet.logpdf(fnp.array([0.5, 0.5]), fnp.array([2.0, 2.0])).item(), 12)
    0.405465108108
    """
    x, alpha = _components(x, alpha)
    shape = (-1,) + (1,) * (x.ndim - 1)
    terms = special.xlogy(fnp.reshape(alpha, shape) - 1.0, x)
    return wrap(fnp.sum(terms, axis=0) - _log_normalizer(alpha))


@export
def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.pdf``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import dirichlet
    >>> round(dirichlet.pdf(fnp.array([0.5, 0.5]), fnp.array([2.0, 2.0])).item(), 12)  # 6 x y
    1.5
    """
    return wrap(fnp.exp(logpdf(x, alpha)))


@export
def entropy(alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.entropy``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import dirichlet
    >>> round(dirichlet.entropy(fnp.array([1.0, 1.0, 1.0])).item(), 12)  # log(1 / 2!)
    -0.69314718056
    """
    alpha = fnp.asarray(alpha)
    total = fnp.sum(alpha)
    k = alpha.shape[0]
    return wrap(_log_normalizer(alpha) + (total - k) * special.digamma(total)
                - fnp.sum((alpha - 1.0) * special.digamma(alpha)))


@export
def mean(alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.mean``: ``alpha / sum(alpha)``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import dirichlet
    >>> dirichlet.mean(fnp.array([1.0, 3.0])).tolist()
    [0.25, 0.75]
    """
    alpha = fnp.asarray(alpha)
    return wrap(alpha / fnp.sum(alpha))


@export
def var(alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.var``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.stats import dirichlet
    >>> dirichlet.var(fnp.array([1.0, 1.0])).tolist()  # the uniform's 1/12
    [0.08333333333333333, 0.08333333333333333]
    """
    alpha = fnp.asarray(alpha)
    total = fnp.sum(alpha)
    return wrap(alpha * (total - alpha) / (total * total * (total + 1.0)))


@export(kind="non-differentiable")
def rvs(alpha: ArrayLike, size: Any = 1, random_state: Any = None) -> np.ndarray:
    """``scipy.stats.dirichlet.rvs``: samples, which carry no derivative (needs SciPy).

    >>> import pytest; _ = pytest.importorskip('scipy', reason='SciPy is not installed (optional)')
    >>> from funcgrad.scipy.stats import dirichlet
    >>> dirichlet.rvs([1.0, 2.0, 3.0], size=4, random_state=0).shape
    (4, 3)
    """
    return scipy_stats("dirichlet").rvs(constant(alpha), size=size, random_state=random_state)


__all__ = sorted(ns.exports)
