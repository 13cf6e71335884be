"""Under create_graph=True the rules' broadcasts and reshapes are recorded as PyTorch's own
derivative formulas record them (ExpandBackward0, ViewBackward0), so a gradient's graph
reads as torch's. Each case on funcgrad.mutable and on real torch 2.13."""
from __future__ import annotations

from tests.mutable.pytorch_port import both, close, graph


@both()
def test_gradient_of_a_sum_expands(torch):
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    y = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    seed = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (gx,) = torch.autograd.grad((x * y + x).sum(), x, seed, create_graph=True)
    assert graph(gx.grad_fn) == ("AddBackward0(ExpandBackward0(AccumulateGrad()), "
                                 "MulBackward0(ExpandBackward0(AccumulateGrad()), AccumulateGrad()))")
    close(gx, 2 * (y + 1))
    ggy, gseed = torch.autograd.grad(gx.sum(), (y, seed))
    close(ggy, torch.full((2, 3), 2.0, dtype=torch.float64))
    close(gseed, (y + 1).sum())


@both()
def test_gradient_through_a_view_is_viewed_back(torch):
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    (gx,) = torch.autograd.grad(x.view(6).sin().sum(), x, create_graph=True)
    assert graph(gx.grad_fn).startswith("ViewBackward0(MulBackward0(")
    close(gx, x.detach().cos())
    (ggx,) = torch.autograd.grad(gx.sum(), x)
    close(ggx, -x.detach().sin())
