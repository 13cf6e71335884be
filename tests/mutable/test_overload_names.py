"""Node names that follow torch's overloads, on funcgrad.mutable and real torch 2.13:
prod over everything ProdBackward0, along a dim ProdBackward1; clamp with number bounds
ClampBackward1, with a tensor bound ClampBackward0 (in place too); gradients in closed form
(prod with a zero factor, clamp's slope 1 inside the bounds)."""
from __future__ import annotations

import numpy as np

from tests.mutable.pytorch_port import both, values


@both()
def test_prod_names_and_gradient(torch):
    m = torch.tensor([[2.0, 0.0, 3.0], [1.0, 4.0, 5.0]], dtype=torch.float64,
                     requires_grad=True)
    assert m.prod().grad_fn.name() == "ProdBackward0"
    for y in (m.prod(1), torch.prod(m, dim=1, keepdim=True)):
        assert y.grad_fn.name() == "ProdBackward1"
        (g,) = torch.autograd.grad(y.sum(), m)
        np.testing.assert_array_equal(values(g), [[0.0, 6.0, 0.0], [20.0, 5.0, 4.0]])
    assert torch.autograd.gradgradcheck(lambda t: t.prod(1), (m,))


@both()
def test_clamp_names_and_gradient(torch):
    m = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    lo = torch.zeros(3, dtype=torch.float64)
    hi = torch.ones(3, dtype=torch.float64)
    for y, name in ((m.clamp(min=lo), "ClampBackward0"), (m.clamp(lo, hi), "ClampBackward0"),
                    (torch.clip(m, lo), "ClampBackward0"), (m.clamp(0, 1), "ClampBackward1")):
        assert y.grad_fn.name() == name
    (g,) = torch.autograd.grad(m.clamp(lo, hi).sum(), m)
    np.testing.assert_array_equal(values(g), [0.0, 1.0, 0.0])
    x = m * 1
    x.clamp_(min=lo)
    assert x.grad_fn.name() == "ClampBackward0"
    x = m * 1
    x.clamp_(min=0)
    assert x.grad_fn.name() == "ClampBackward1"
