"""torch.accelerator on a CPU build and torch's module-level in-place functions (torch.sin_),
both as PyTorch's tutorials use them, against real torch where installed."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="real torch is the oracle here")
MODULES = [pytest.param(fm, id="funcgrad"), pytest.param(torch, id="torch", marks=needs_torch)]


@pytest.mark.parametrize("T", MODULES)
def test_accelerator_answers_cpu(T):
    device = T.accelerator.current_accelerator().type if T.accelerator.is_available() else "cpu"
    assert device == "cpu" and T.accelerator.device_count() == 0
    with pytest.raises(RuntimeError, match="when none is available"):
        T.accelerator.synchronize()
    x = T.ones(2, device=device)
    assert str(x.device) == "cpu"


@pytest.mark.parametrize("T", MODULES)
@pytest.mark.parametrize("name", ["sin_", "exp_", "tanh_", "abs_", "sigmoid_", "zero_"])
def test_module_inplace_function_is_the_method(T, name):
    x = T.tensor([0.5, -1.25, 2.0])
    y = x.clone()
    out = getattr(T, name)(x)
    getattr(y, name)()
    assert out is x and x._version == 1
    assert np.allclose(x.numpy(), y.numpy())


@pytest.mark.parametrize("T", MODULES)
def test_module_inplace_on_a_leaf_that_requires_grad_fails_as_torch(T):
    a = T.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        T.sin_(a)


def test_values_match_torch_on_a_clamp():
    if torch is None:
        pytest.skip("real torch is the oracle here")
    a, b = fm.tensor([-2.0, 0.5, 3.0]), torch.tensor([-2.0, 0.5, 3.0])
    fm.clamp_(a, min=-1.0, max=1.0)
    torch.clamp_(b, min=-1.0, max=1.0)
    assert np.array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("T", MODULES)
@pytest.mark.parametrize("name", ["tan_", "log1p_", "expm1_", "reciprocal_", "square_"])
def test_inplace_unary_on_a_non_leaf_records_torch_node_and_gradient(T, name):
    x = T.tensor([0.3, -0.4, 0.7], dtype=T.float64, requires_grad=True)
    y = x * 1.5
    getattr(T, name)(y)
    assert y._version == 1
    y.sum().backward()
    # d/dx f(1.5 x) by hand, f being the out-of-place op
    u = 1.5 * np.array([0.3, -0.4, 0.7])
    slope = {"tan_": 1 / np.cos(u) ** 2, "log1p_": 1 / (1 + u), "expm1_": np.exp(u),
             "reciprocal_": -1 / u ** 2, "square_": 2 * u}[name]
    assert np.allclose(x.grad.numpy(), 1.5 * slope)
    expected = {"tan_": "TanBackward0", "log1p_": "Log1PBackward0", "expm1_": "Expm1Backward0",
                "reciprocal_": "ReciprocalBackward0", "square_": "PowBackward0"}[name]
    assert type(y.grad_fn).__name__ == expected
