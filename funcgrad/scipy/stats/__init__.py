"""funcgrad.scipy.stats: differentiable densities, distribution functions and entropies of
SciPy's distributions, with SciPy's signatures and broadcasting."""
from __future__ import annotations

from . import beta, chi2, dirichlet, gamma, multivariate_normal, norm, poisson, t

__all__ = ["beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t"]
