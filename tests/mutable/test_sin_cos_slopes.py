"""sin's and cos's gradients on a big float64 tensor, whose slopes the shared rules compute
through NumPy's SIMD tan (funcgrad.numpy._primitives): as real torch's to a few ulp."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm
from funcgrad._src import simd

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None


def _grad(T, op, x):
    t = T.tensor(x, requires_grad=True)
    getattr(t, op)().sum().backward()
    return t.grad.numpy()


def _ulps(got, expected):
    return float(np.max(np.abs(got - expected) / np.spacing(np.abs(expected))))


@pytest.mark.parametrize("op,slope", [("sin", np.cos), ("cos", lambda x: -np.sin(x))])
def test_sin_and_cos_gradients(op, slope, monkeypatch):
    monkeypatch.setattr(simd, "FAST_TAN", True)
    x = np.random.default_rng(3).uniform(-50, 50, 1 << 15)
    got = _grad(fm, op, x)
    assert _ulps(got, slope(x)) <= 4
    if torch is None:
        pytest.skip("real torch, the second oracle, is not installed")
    assert _ulps(got, _grad(torch, op, x)) <= 5
