"""torch.linalg.qr's derivatives as torch 2.13's: tall and square (reduced), square and wide
(complete), wide (reduced) through the leading square block, batched; torch's refusals at
backward for mode='r' and for mode='complete' of a tall matrix. Gradients against float64
finite differences (gradcheck, gradgradcheck) and against real torch 2.13."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, close


def loss(torch, mode):
    def f(a):
        q, r = torch.linalg.qr(a, mode=mode)
        return (q * q.sin()).sum() + (r * r.cos()).sum()
    return f


@both()
@pytest.mark.parametrize("shape,mode", [((4, 3), "reduced"), ((3, 3), "reduced"),
                                        ((3, 3), "complete"), ((3, 5), "reduced"),
                                        ((3, 5), "complete"), ((2, 3, 5), "reduced")])
def test_gradients_pass_gradcheck(torch, shape, mode):
    torch.manual_seed(0)
    a = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(loss(torch, mode), (a,))
    assert torch.autograd.gradgradcheck(loss(torch, mode), (a,))


def test_wide_gradient_equals_torchs():
    real = pytest.importorskip("torch", reason="real torch 2.13 is the oracle here")
    import funcgrad.mutable as fm
    real.manual_seed(1)
    values = real.randn(2, 3, 5, dtype=real.float64).tolist()
    grads = []
    for torch in (fm, real):
        a = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        loss(torch, "reduced")(a).backward()
        grads.append(a.grad)
    close(grads[0], grads[1], rtol=1e-10)


@both()
def test_refusals_at_backward(torch):
    a = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    q, r = torch.linalg.qr(a, mode="r")
    assert tuple(q.shape) == (0,) and type(r.grad_fn).__name__ == "LinalgQrBackward0"
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
        r.sum().backward()
    tall = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    q, r = torch.linalg.qr(tall, mode="complete")
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and "
                                           "nrows > ncols"):
        (q.sum() + r.sum()).backward()
