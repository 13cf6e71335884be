"""Errors and anomaly mode from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import numpy as np
import pytest

from pytorch_port import both, nan_in_double_backward, values


def nan_function(torch, size):
    class MakesNan(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, first):
            ctx.first = first
            return a.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            gi = g.clone().expand(size)
            gi[0] = 0
            gi[0] /= 0
            return (gi, None, None) if ctx.first else (None, gi, None)

    return MakesNan


@both()
def test_anomaly_mode_names_the_function_returning_nan(torch):
    import warnings
    fn = nan_function(torch, 6)
    x = torch.rand(6, requires_grad=True)
    fn.apply(x, x, True).backward()  # no check outside anomaly mode
    x = torch.rand(6, requires_grad=True)
    out = fn.apply(x, x, True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'MakesNanBackward' returned nan values "
                                               "in its 0th output."):
            with torch.autograd.detect_anomaly():
                out.backward()
    x = torch.rand(6, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'MakesNanBackward' returned nan values "
                                               "in its 1th output."):
            with torch.autograd.detect_anomaly():
                out = fn.apply(x, x, False)
                out.backward()


@both()
def test_anomaly_mode_warns_where_the_failing_node_was_made(torch):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="one of the variables needed for gradient "
                                               "computation has been modified by an inplace "
                                               "operation"):
            with torch.autograd.detect_anomaly():
                a = torch.randn(5, requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                torch.autograd.grad(d2.sum(), a)
    messages = [str(w.message) for w in caught if w.category is not RuntimeWarning]
    assert len(messages) == 2
    assert "Anomaly Detection has been enabled" in messages[0]
    assert "Error detected in PowBackward0" in messages[1]


@both()
def test_anomaly_mode_without_nan_check(torch):
    import warnings

    class NanGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return torch.tensor(float("nan")).expand(4, 4)

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly(check_nan=False):
            x = torch.rand(4, 4, requires_grad=True)
            out = NanGrad.apply(x).sum()
            out.backward(retain_graph=True)
            with torch.autograd.detect_anomaly(check_nan=True):
                with pytest.raises(RuntimeError, match="Function 'NanGradBackward' returned nan "
                                                       "values in its 0th output."):
                    out.backward(retain_graph=True)
            out.backward()
    assert np.isnan(values(x.grad)).all()


@both()
def test_nested_functions_returning_nan_in_double_backward(torch):
    import warnings
    size = 5
    Outer = nan_in_double_backward(torch, size)
    x = torch.rand(size, requires_grad=True)
    (gx,) = torch.autograd.grad(Outer.apply(x, True), (x,), create_graph=True)
    gx.sum().backward()
    x = torch.rand(size, requires_grad=True)
    (gx,) = torch.autograd.grad(Outer.apply(x, True), (x,), create_graph=True)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'InnerBackward' returned nan values in "
                                               "its 0th output."):
            with torch.autograd.detect_anomaly():
                gx.sum().backward()
    x = torch.rand(size, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'InnerBackward' returned nan values in "
                                               "its 1th output."):
            with torch.autograd.detect_anomaly():
                (gx,) = torch.autograd.grad(Outer.apply(x, False), (x,), create_graph=True)
                gx.sum().backward()
    text = " ".join(str(w.message) for w in caught)
    assert "Inner.apply" in text and "Outer.apply" in text
