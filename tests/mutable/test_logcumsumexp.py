"""torch.logcumsumexp / Tensor.logcumsumexp: values against a float64 closed form, no
overflow at +-1000, torch's values and gradients at infinities (nan where torch gives nan),
gradcheck, gradgradcheck and forward mode in float64, dtype errors; on funcgrad.mutable and
on real torch 2.13."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values


@both()
def test_values_and_node(torch):
    x = torch.tensor([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]], dtype=torch.float64,
                     requires_grad=True)
    for dim in (0, 1, -1):
        y = torch.logcumsumexp(x, dim)
        expected = np.log(np.cumsum(np.exp(values(x)), axis=dim))
        np.testing.assert_allclose(values(y), expected, rtol=1e-14)
        assert y.grad_fn.name() == "LogcumsumexpBackward0"
    np.testing.assert_allclose(values(x.logcumsumexp(dim=1)), values(torch.logcumsumexp(x, 1)))


@both()
def test_no_overflow_and_infinities(torch):
    x = torch.tensor([1000.0, 1000.0, -1000.0, -math.inf, math.inf, 3.0], dtype=torch.float64,
                     requires_grad=True)
    y = torch.logcumsumexp(x, 0)
    np.testing.assert_allclose(values(y)[:4], [1000.0, 1000.0 + math.log(2)] + [1000.0 + math.log(2)] * 2)
    assert values(y)[4] == math.inf and values(y)[5] == math.inf
    (g,) = torch.autograd.grad(y[:3].sum(), x)
    np.testing.assert_allclose(values(g)[:4], [1.5 + 0.5, 1.0, 0.0, 0.0], atol=1e-12)
    # a leading -inf: torch's rule gives nan there (not a made-up value)
    x = torch.tensor([-math.inf, 0.0, 1.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.logcumsumexp(x, 0).sum(), x)
    assert math.isnan(values(g)[0]) and np.isfinite(values(g)[1:]).all()


@both()
def test_closed_form_gradient(torch):
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    (g,) = torch.autograd.grad((torch.logcumsumexp(x, 0) * w).sum(), x)
    xv, wv = values(x), values(w)
    out = np.log(np.cumsum(np.exp(xv)))
    expected = [sum(wv[i] * math.exp(xv[j] - out[i]) for i in range(j, 3)) for j in range(3)]
    np.testing.assert_allclose(values(g), expected, rtol=1e-13)


@pytest.mark.parametrize("dim", [0, 1])
@both()
def test_gradcheck_gradgradcheck_forward(torch, dim):
    x = torch.tensor(np.random.default_rng(dim).standard_normal((3, 4)), requires_grad=True)

    def fn(x):
        return torch.logcumsumexp(x, dim)

    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))
    assert torch.autograd.gradcheck(fn, (x,), check_forward_ad=True, check_backward_ad=False,
                                    check_undefined_grad=False, check_batched_grad=False)


@both()
def test_errors_and_edge_shapes(torch):
    with pytest.raises(NotImplementedError, match="\"logcumsumexp_out_cpu\" not implemented for "
                                                  "'Long'"):
        torch.logcumsumexp(torch.tensor([1, 2]), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.logcumsumexp(torch.ones(2), 1)
    assert values(torch.logcumsumexp(torch.tensor(2.0), 0)) == 2.0
    assert tuple(torch.logcumsumexp(torch.zeros(0), 0).shape) == (0,)
    x = torch.randn(3, 3, requires_grad=True)
    assert torch.logcumsumexp(x, 0).dtype == torch.float32
