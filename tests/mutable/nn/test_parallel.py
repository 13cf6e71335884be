"""nn.DataParallel without an accelerator: a forwarding wrapper whose parameters are the
module's under ``module.``; the forward runs in the calling thread, so saved-tensor hooks
active there see its ops. On funcgrad.mutable and real torch 2.13."""
from __future__ import annotations

from tests.mutable.pytorch_port import both, close


@both()
def test_wraps_and_forwards(torch):
    torch.manual_seed(0)
    inner = torch.nn.Linear(2, 3)
    model = torch.nn.DataParallel(inner)
    assert model.module is inner and model.device_ids == []
    assert [n for n, _ in model.named_parameters()] == ["module.weight", "module.bias"]
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    x = torch.randn(4, 2)
    close(model(x), x @ inner.weight.detach().t() + inner.bias.detach())
    model(x).sum().backward()
    close(inner.bias.grad, torch.full((3,), 4.0))


@both()
def test_forward_sees_the_callers_saved_tensor_hooks(torch):
    packed = []

    class Square(torch.nn.Module):
        def forward(self, x):
            return x * x

    x = torch.ones(2, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        torch.nn.DataParallel(Square())(x)
    assert len(packed) == 2  # both operands of the product
