"""Under create_graph=True, the gradient of a view records PyTorch's own nodes: a slice's
gradient SliceBackwardBackward0, a select's SelectBackwardBackward0, a diagonal's
DiagonalBackwardBackward0, t's TBackward0, one per link of a chain of views; the pieces a
rule reads (cat's slices, stack's selects, cumsum's reversal) are SliceBackward0,
SelectBackward0 and FlipBackward0; a sum to a broadcast input's shape is torch's sum_to (SumBackward1
then ViewBackward0), a reduced dimension put back an UnsqueezeBackward0, a matrix's transpose
TBackward0. Graphs and values on funcgrad.mutable and on real torch
2.13 as the oracle, with the same assertions."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, close, graph

W = "MulBackward0(None, AccumulateGrad())"


def f64(torch, *shape, requires_grad=True):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(1.0, n + 1, dtype=torch.float64).reshape(shape) / 7).requires_grad_(
        requires_grad)


def cases(torch):
    x = f64(torch, 4, 3)
    w, v, s, d = f64(torch, 2, 3), f64(torch, 3), f64(torch, 3, 4), f64(torch, 3)
    q = f64(torch, 3, 3)
    r = f64(torch, 2)
    return {
        "narrow": ((x.narrow(0, 1, 2) * w).sum(), x, f"SliceBackwardBackward0({W})"),
        "select": ((x[:, 1] * f64(torch, 4)).sum(), x, f"SelectBackwardBackward0({W})"),
        "t": ((x.t() * s).sum(), x, f"TBackward0({W})"),
        "diagonal": ((x[:3].diagonal() * d).sum(), x,
                     f"SliceBackwardBackward0(DiagonalBackwardBackward0({W}))"),
        "chain": ((x[1:, :2][0] * r).sum(), x,
                  f"SliceBackwardBackward0(SliceBackwardBackward0(SelectBackwardBackward0({W})))"),
        "cat": ((torch.cat([w, w]) * x).sum(), w,
                f"AddBackward0(SliceBackward0({W}), SliceBackward0({W}))"),
        "stack": ((torch.stack([v, v]) * w).sum(), v,
                  f"AddBackward0(SelectBackward0({W}), SelectBackward0({W}))"),
        "expand": ((x[0].expand(3, 3) * q).sum(), x,
                   f"SelectBackwardBackward0(ViewBackward0(SumBackward1({W})))"),
        "broadcast": (((v + q) * q).sum(), v, f"ViewBackward0(SumBackward1({W}))"),
        "sum dim": ((x.sum(0) * v).sum(), x, f"ExpandBackward0(UnsqueezeBackward0({W}))"),
        "matmul": ((x @ s).sum(), x, "MmBackward0(None, TBackward0(AccumulateGrad()))"),
        "cumsum": ((x.cumsum(0) * x).sum(), x,
                   f"AddBackward0(MulBackward0(None, CumsumBackward0(AccumulateGrad())), "
                   f"FlipBackward0(CumsumBackward0(FlipBackward0({W}))))"),
    }


@both()
@pytest.mark.parametrize("kind", ["narrow", "select", "t", "diagonal", "chain", "cat", "stack",
                                  "expand", "broadcast", "sum dim", "matmul", "cumsum"])
def test_gradient_of_a_view_records_torchs_nodes(torch, kind):
    out, inp, expected = cases(torch)[kind]
    (g,) = torch.autograd.grad(out, inp, create_graph=True)
    assert graph(g.grad_fn) == expected


@both()
def test_second_order_through_renamed_nodes(torch):
    x = f64(torch, 4, 3)
    w = f64(torch, 2, 3)
    (gx,) = torch.autograd.grad((x.narrow(0, 1, 2) * w).sum(), x, create_graph=True)
    expected = torch.zeros(4, 3, dtype=torch.float64)
    expected[1:3] = w.detach()
    close(gx, expected)
    (gw,) = torch.autograd.grad((gx * gx).sum(), w)  # d/dw sum(w**2) = 2 w
    close(gw, 2 * w.detach())
    v = f64(torch, 3)
    (gv,) = torch.autograd.grad((torch.stack([v, v]) * w).sum(), v, create_graph=True)
    close(gv, w.detach().sum(0))
    (gw2,) = torch.autograd.grad((gv * v).sum(), w)  # d/dw sum_j v_j (w_0j + w_1j)
    close(gw2, torch.stack([v.detach(), v.detach()]))
