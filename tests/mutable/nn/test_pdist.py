"""torch.pdist: first derivatives pass gradcheck for every p; its double backward fails at
the PdistBackwardBackward0 node with torch's NotImplementedError (PyTorch has no formula for
_pdist_backward). On funcgrad.mutable and real torch 2.13."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both


@both()
@pytest.mark.parametrize("p", [1.0, 2.0, 3.5, float("inf")])
def test_first_derivative_and_refused_second(torch, p):
    torch.manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: torch.pdist(x, p), (x,))
    (g,) = torch.autograd.grad(torch.pdist(x, p).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "PdistBackwardBackward0"
    assert [type(n).__name__ if n is not None else None for n, _ in g.grad_fn.next_functions] \
        == [None, "AccumulateGrad", "PdistBackward0"]
    with pytest.raises(NotImplementedError,
                       match="the derivative for '_pdist_backward' is not implemented."):
        g.sum().backward()
