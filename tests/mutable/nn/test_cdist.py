"""torch.cdist on funcgrad.mutable and real torch 2.13: distances against a NumPy closed form
for p = 0, 1, 1.5, 2, 3, inf with broadcast batches; CdistBackward0 (its double backward
refused with torch's NotImplementedError) and, for p = 2 with more than 25 rows, torch's
matrix-product form (ViewBackward0 over EuclideanDistBackward0, differentiable twice, finite
gradient at zero distance); gradcheck in float64; torch's errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values


def reference(x1, x2, p):
    diff = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(float)
    if p == math.inf:
        return diff.max(-1)
    return (diff ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("shapes", [((3, 4), (5, 4)), ((2, 3, 4), (2, 5, 4)),
                                    ((3, 2, 3), (2, 3)), ((30, 4), (3, 4))])
@pytest.mark.parametrize("p", [0, 1, 1.5, 2, 3, math.inf])
@both()
def test_values_and_nodes(torch, shapes, p):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    x1, x2 = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    d = torch.cdist(x1, x2, p)
    np.testing.assert_allclose(values(d), reference(a, b, p), rtol=1e-10, atol=1e-12)
    if p == 2 and shapes[0][-2] > 25:
        assert d.grad_fn.name() == "ViewBackward0"
        assert d.grad_fn.next_functions[0][0].name() == "EuclideanDistBackward0"
    else:
        assert d.grad_fn.name() == "CdistBackward0"


@pytest.mark.parametrize("p", [1, 1.5, 2, 3, math.inf])
@both()
def test_gradcheck_and_double_backward_refusal(torch, p):
    rng = np.random.default_rng(1)
    x1 = torch.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    x2 = torch.tensor(rng.standard_normal((1, 5, 3)), requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: torch.cdist(a, b, p), (x1, x2))
    (g,) = torch.autograd.grad(torch.cdist(x1, x2, p).sum(), x1, create_graph=True)
    assert g.grad_fn.name() == "CdistBackwardBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for '_cdist_backward' is not "
                                                  "implemented."):
        torch.autograd.grad(g.sum(), x1)


@both()
def test_matrix_product_form_twice_differentiable(torch):
    rng = np.random.default_rng(2)
    x1 = torch.tensor(rng.standard_normal((27, 3)), requires_grad=True)
    x2 = torch.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    assert torch.autograd.gradcheck(torch.cdist, (x1, x2))
    assert torch.autograd.gradgradcheck(torch.cdist, (x1, x2))
    x = torch.randn((1, 27, 32), requires_grad=True)
    torch.cdist(x, x.detach().clone()).backward(torch.randn(1, 27, 27))
    assert bool(torch.isfinite(x.grad).all())


@pytest.mark.parametrize("call,message", [
    (lambda t: t.cdist(t.randn(3), t.randn(3)),
     "cdist only supports at least 2D tensors, X1 got: 1D"),
    (lambda t: t.cdist(t.randn(2, 3), t.randn(2, 4)),
     "X1 and X2 must have the same number of columns. X1: 3 X2: 4"),
    (lambda t: t.cdist(t.randn(2, 3), t.randn(2, 3), -1),
     "cdist only supports non-negative p values"),
    (lambda t: t.cdist(t.randn(2, 3), t.randn(2, 3, dtype=t.float64)),
     "expected scalar type Float but found Double"),
    (lambda t: t.cdist(t.randn(2, 2, 3), t.randn(3, 2, 3)),
     "The size of tensor a \\(2\\) must match the size of tensor b \\(3\\) at non-singleton "
     "dimension 0"),
    (lambda t: t.cdist(t.tensor([[1, 2]]), t.tensor([[1, 2]])),
     "cdist only supports floating-point dtypes, X1 got: Long"),
])
@both()
def test_errors(torch, call, message):
    with pytest.raises(RuntimeError, match=message):
        call(torch)
