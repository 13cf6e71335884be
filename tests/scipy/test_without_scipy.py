"""funcgrad.scipy without SciPy: NumPy-only functions work, SciPy-backed ones raise an
ImportError that names the optional extra when called."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy import special, stats


@pytest.fixture
def no_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    for name in ("scipy.special", "scipy.stats", "scipy.linalg", "scipy.signal", "scipy.integrate"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("name", ["erfinv", "erfcinv", "i0", "i1", "i0e", "i1e", "j0", "y1",
                                  "gammasgn"])
def test_scipy_backed_functions_name_the_extra(no_scipy, name):
    with pytest.raises(ImportError, match=r"pip install 'funcgrad\[scipy\]'"):
        getattr(special, name)(np.array([0.5]))


@pytest.mark.parametrize("call", [lambda: special.gammainc(1.0, 0.5),
                                  lambda: special.betainc(1.0, 2.0, 0.5),
                                  lambda: special.erf(0.5 + 1j),
                                  lambda: stats.gamma.cdf(0.5, 2.0),
                                  lambda: stats.multivariate_normal.cdf([0.5, 0.1], cov=np.eye(2)),
                                  lambda: stats.dirichlet.rvs([1.0, 2.0])])
def test_scipy_backed_calls_name_the_extra(no_scipy, call):
    with pytest.raises(ImportError, match=r"pip install 'funcgrad\[scipy\]'"):
        call()


def test_densities_need_no_scipy(no_scipy):
    np.testing.assert_allclose(stats.gamma.logpdf(1.0, 1.0), -1.0)
    np.testing.assert_allclose(stats.t.pdf(0.0, 1.0), 1 / np.pi)
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(np.zeros(2), cov=np.eye(2)),
                               -np.log(2 * np.pi))


def test_numpy_only_functions_need_no_scipy(no_scipy):
    x = np.array([0.3, 1.7])
    assert np.all(np.isfinite(special.gammaln(x))) and np.all(np.isfinite(special.erf(x)))
    np.testing.assert_allclose(fg.grad(lambda x: special.gammaln(x).sum())(x),
                               special.digamma(x))
    np.testing.assert_allclose(special.digamma(1.0), -0.5772156649015329, rtol=1e-14)
    np.testing.assert_allclose(special.polygamma(1, 0.5), np.pi ** 2 / 2, rtol=1e-14)
    np.testing.assert_allclose(special.erf(0.5), 0.5204998778130465, rtol=1e-15)
