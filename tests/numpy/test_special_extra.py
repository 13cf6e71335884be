"""funcgrad.scipy.special without SciPy: NumPy-only functions work, SciPy-backed ones raise
an ImportError that names the optional extra."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy import special


@pytest.fixture
def no_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)


@pytest.mark.parametrize("name", ["erfinv", "erfcinv", "i0", "i1", "i0e", "i1e"])
def test_scipy_backed_functions_name_the_extra(no_scipy, name):
    with pytest.raises(ImportError, match=r"pip install 'funcgrad\[scipy\]'"):
        getattr(special, name)(np.array([0.5]))


def test_numpy_only_functions_need_no_scipy(no_scipy):
    x = np.array([0.3, 1.7])
    assert np.all(np.isfinite(special.gammaln(x))) and np.all(np.isfinite(special.erf(x)))
    np.testing.assert_allclose(fg.grad(lambda x: special.gammaln(x).sum())(x),
                               special.digamma(x))
    np.testing.assert_allclose(special.digamma(1.0), -0.5772156649015329, rtol=1e-14)
    np.testing.assert_allclose(special.polygamma(1, 0.5), np.pi ** 2 / 2, rtol=1e-14)
    np.testing.assert_allclose(special.erf(0.5), 0.5204998778130465, rtol=1e-15)
