"""What the ports of PyTorch's test_autograd.py (test_pytorch_*.py) share: `both`, which runs
a test with `torch` bound to funcgrad.mutable and to real torch 2.13 (CPU), and the helpers
their assertions use."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm

try:
    import torch as real_torch
except ImportError:  # pragma: no cover - CI installs torch
    real_torch = None


def both(xfail=None):
    """Run the test with `torch` bound to funcgrad.mutable and to real torch; `xfail` marks
    a known gap on funcgrad's run only (strict, so a fix is noticed)."""
    ours = pytest.param(fm, id="funcgrad", marks=[pytest.mark.xfail(strict=True, reason=xfail)]
                        if xfail else [])
    theirs = pytest.param(real_torch, id="torch", marks=pytest.mark.skipif(
        real_torch is None, reason="real torch is not installed: no oracle run"))
    return pytest.mark.parametrize("torch", [ours, theirs])


def values(t):
    """A tensor's values as a float64 NumPy array (either library's tensor)."""
    return np.asarray(t.detach().tolist(), dtype=float)


def close(a, b, rtol=1e-6):
    np.testing.assert_allclose(values(a), values(b) if hasattr(b, "detach") else b, rtol=rtol,
                               atol=1e-12)


def graph(fn):
    """The graph below a node as nested names, None for a missing edge."""
    if fn is None:
        return "None"
    return type(fn).__name__ + "(" + ", ".join(graph(f) for f, _ in fn.next_functions) + ")"
