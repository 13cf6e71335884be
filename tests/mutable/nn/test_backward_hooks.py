"""Module.register_full_backward_hook / register_full_backward_pre_hook against torch 2.13:
what the hooks receive, replacing grad_input, the node they run in, the order beside node
and tensor hooks, and no call in a double backward that bypasses the outputs."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm

try:
    import torch as real_torch
except ImportError:  # pragma: no cover - CI installs torch
    real_torch = None


def both():
    theirs = pytest.param(real_torch, id="torch", marks=pytest.mark.skipif(
        real_torch is None, reason="real torch is not installed: no oracle run"))
    return pytest.mark.parametrize("torch", [pytest.param(fm, id="funcgrad"), theirs])


def values(t):
    return np.asarray(t.detach().tolist(), dtype=float)


def linear(torch):
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.5, -1.0]]))
        lin.bias.copy_(torch.tensor([0.25, -0.75]))
    return lin


@both()
def test_full_backward_hook_sees_input_and_output_gradients(torch):
    lin = linear(torch)
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((module is lin, [values(g) for g in grad_input],
                     [values(g) for g in grad_output]))
        return (grad_input[0] * 10,)

    lin.register_full_backward_hook(hook)
    x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    out = lin(x)
    assert type(out.grad_fn).__name__ == "BackwardHookFunctionBackward"
    (out * torch.tensor([[2.0, 3.0]])).sum().backward()
    assert seen[0][0]
    np.testing.assert_allclose(seen[0][2][0], [[2.0, 3.0]])
    np.testing.assert_allclose(seen[0][1][0], [[2.0, 0.5, -2.0]])
    np.testing.assert_allclose(values(x.grad), [[20.0, 5.0, -20.0]])  # replaced grad_input
    np.testing.assert_allclose(values(lin.bias.grad), [2.0, 3.0])  # parameters untouched


@both()
def test_full_backward_hook_without_inputs_requiring_grad_gets_none(torch):
    lin = linear(torch)
    seen = []
    pre = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, values(go[0]))))
    lin.register_full_backward_pre_hook(lambda m, go: pre.append(values(go[0])) or (go[0] * 2,))
    lin(torch.ones(1, 3)).sum().backward()
    assert seen[0][0] == (None,)
    np.testing.assert_allclose(seen[0][1], [[2.0, 2.0]])  # after the pre hook doubled it
    np.testing.assert_allclose(pre[0], [[1.0, 1.0]])
    np.testing.assert_allclose(values(lin.bias.grad), [2.0, 2.0])


@both()
def test_full_backward_hook_order_and_double_backward(torch):
    order = []
    lin = linear(torch)
    lin.register_full_backward_hook(lambda m, gi, go: order.append("module"))
    x = torch.ones(2, 3, requires_grad=True)
    loss = lin(x).sum()
    inner = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    inner = [n for n, _ in inner.next_functions if n is not None and
             type(n).__name__ == "BackwardHookFunctionBackward"][0]
    inner.register_prehook(lambda g: order.append("pre"))
    inner.register_hook(lambda gi, go: order.append("post"))
    x.register_hook(lambda g: order.append("x"))
    loss.backward()
    assert order == ["pre", "module", "post", "x"]
    mse = torch.nn.MSELoss()
    calls = []
    mse.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    a = torch.tensor([0.5], requires_grad=True)
    (g,) = torch.autograd.grad(mse(a, torch.tensor([2.0])), a, create_graph=True)
    assert calls == [1]
    torch.autograd.grad(g, a)
    assert calls == [1]
