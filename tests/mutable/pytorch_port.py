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


def passthrough(torch, view: bool = False):
    """A Function whose backward passes the gradient on unchanged; its forward returns the
    input itself, or with `view` a view of it (``x.view_as(x)``): the identity Function many
    of PyTorch's tests build."""
    class Passthrough(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x) if view else x

        @staticmethod
        def backward(ctx, g):
            return g

    return Passthrough


def nan_in_double_backward(torch, size: int):
    """A Function whose backward applies a second Function, whose backward returns a nan in
    its first output (``first``) or its second: PyTorch's nested-anomaly tests' pair."""
    class Outer(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, first):
            ctx.first = first
            ctx.save_for_backward(x)
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            g = g.clone().expand(size)
            return Inner.apply(g * x, g + x, ctx.first), None

    class Inner(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, first):
            ctx.first = first
            return a * 2.0 + b

        @staticmethod
        def backward(ctx, g):
            g1, g2 = g.clone(), g.clone()
            g1[0] = 0
            g2[0] = 0
            if ctx.first:
                g1[0] /= 0
            else:
                g2[0] /= 0
            return g1, g2, None

    return Outer
