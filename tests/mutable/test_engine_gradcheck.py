"""torch.autograd.gradcheck's deprecated get_numerical_jacobian / get_analytical_jacobian:
their FutureWarning, layout (input elements x output elements), reentrancy flag and errors.
Each case on funcgrad.mutable and on real torch 2.13 as the oracle."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values

W = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]  # d(x @ W)_j / dx_i = W[i][j]


def gradcheck_module(torch):
    return importlib.import_module(torch.__name__ + ".autograd.gradcheck")


@both()
def test_get_numerical_jacobian(torch):
    gc = gradcheck_module(torch)
    w = torch.tensor(W, dtype=torch.float64)
    x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    fn = lambda inputs: (inputs[0] @ w * inputs[1], inputs[0].sum())  # noqa: E731
    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` was part of PyTorch's "
                                           "private API"):
        jx, jy = gc.get_numerical_jacobian(fn, (x, y), eps=1e-6)
    np.testing.assert_allclose(values(jx), 2 * np.array(W), rtol=1e-6)
    np.testing.assert_allclose(values(jy), [values(x) @ np.array(W)], rtol=1e-6)
    with pytest.warns(FutureWarning):
        (only,) = gc.get_numerical_jacobian(fn, (x, y), target=y, eps=1e-6)
    assert only.shape == (1, 3)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="^Expected grad_out to "
                                                                      "be 1.0. get_numerical"):
        gc.get_numerical_jacobian(fn, (x, y), grad_out=2.0)


@both()
def test_get_analytical_jacobian(torch):
    gc = gradcheck_module(torch)
    w = torch.tensor(W, dtype=torch.float64)
    x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    plain = torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64)
    out = x @ w + plain
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` was part of PyTorch's "
                                           "private API"):
        jacobians, reentrant, sizes_ok, types_ok = gc.get_analytical_jacobian((x, plain), out)
    assert len(jacobians) == 1 and (reentrant, sizes_ok, types_ok) == (True, True, True)
    np.testing.assert_array_equal(values(jacobians[0]), W)
    calls = []

    class Jitter(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * (1 + 1e-3 * len(calls))

    with pytest.warns(FutureWarning):
        _, reentrant, _, _ = gc.get_analytical_jacobian((x,), Jitter.apply(x))
    assert reentrant is False
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="^Expected grad_out to "
                                                                      "be 1.0. get_analytical"):
        gc.get_analytical_jacobian((x,), out, grad_out=2.0)
