"""F.leaky_relu / leaky_relu_ and F.rrelu / rrelu_ / nn.RReLU on funcgrad.mutable and real
torch 2.13: torch's node names (LeakyReluBackward0/1, RreluWithNoiseBackward0/1,
LeakyReluBackwardBackward0 under create_graph), the in-place backward's refusal of a negative
slope, gradients in closed form, gradgradcheck, and rrelu's training noise drawn from torch's
random stream (same seed, same values)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, fm, real_torch, values


@both()
def test_leaky_relu_nodes_and_gradients(torch):
    F = torch.nn.functional
    a = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64, requires_grad=True)
    for fn, name in ((lambda t: F.leaky_relu(t, 0.2), "LeakyReluBackward0"),
                     (lambda t: F.leaky_relu_(t.clone(), 0.2), "LeakyReluBackward1")):
        b = fn(a)
        np.testing.assert_allclose(values(b), [-0.2, 0.0, 1.0])
        assert b.grad_fn.name() == name
        (g,) = torch.autograd.grad(b.sum(), a, create_graph=True)
        np.testing.assert_allclose(values(g), [0.2, 0.2, 1.0])  # 0 takes the slope
        assert g.grad_fn.name() == "LeakyReluBackwardBackward0"
    x = torch.tensor([-1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda t: F.leaky_relu(t, 0.2), (x,))
    with pytest.raises(NotImplementedError, match="\"leaky_relu_cpu\" not implemented for 'Long'"):
        F.leaky_relu(torch.tensor([1, 2]), 0.1)


@both()
def test_inplace_negative_slope_refused_at_backward(torch):
    F = torch.nn.functional
    a = torch.tensor([-1.0, 1.0], requires_grad=True)
    for b in (F.leaky_relu_(a.clone(), -2), F.rrelu_(a.clone(), -5.0, 1.0)):
        with pytest.raises(RuntimeError, match="call out-of-place version"):
            b.backward(torch.ones(2))
    b = F.leaky_relu_(a.clone(), 0.0)  # a zero slope is fine in place
    b.backward(torch.ones(2))
    np.testing.assert_array_equal(values(a.grad), [0.0, 1.0])
    a.grad = None
    (F.leaky_relu(a, -2) * 1).sum().backward()  # out of place, any slope
    np.testing.assert_array_equal(values(a.grad), [-2.0, 1.0])


@both()
def test_rrelu_eval_and_training(torch):
    F = torch.nn.functional
    x = torch.tensor(np.linspace(-3, 2, 11), requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3)
    np.testing.assert_allclose(values(y), np.where(values(x) > 0, values(x), 0.2 * values(x)))
    assert y.grad_fn.name() == "RreluWithNoiseBackward0"
    torch.manual_seed(5)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slope = values(y) / np.where(values(x) == 0, 1, values(x))
    negative = values(x) < 0
    assert ((slope[negative] >= 0.1) & (slope[negative] < 0.3)).all()
    (g,) = torch.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(values(g)[negative], slope[negative])
    np.testing.assert_array_equal(values(g)[values(x) > 0], 1.0)
    y2 = F.rrelu_(x.detach().clone(), 0.1, 0.3, training=True)
    torch.manual_seed(5)
    np.testing.assert_array_equal(values(F.rrelu(x, 0.1, 0.3, training=True)), values(y))
    m = torch.nn.RReLU(0.25, 0.75)
    assert repr(m) == "RReLU(lower=0.25, upper=0.75)"
    np.testing.assert_array_equal(values(m.eval()(torch.tensor([-2.0, 1.0]))), [-1.0, 1.0])
    assert tuple(y2.shape) == (11,)


@pytest.mark.skipif(real_torch is None, reason="real torch is not installed: no oracle")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_training_noise_is_torchs_stream(dtype):
    x = np.linspace(-3, 2, 1000)
    outs = []
    for lib in (fm, real_torch):
        lib.manual_seed(3)
        t = lib.tensor(x, dtype=getattr(lib, dtype))
        outs.append(values(lib.nn.functional.rrelu(t, 0.1, 0.3, training=True)))
        outs.append(lib.rand(1, dtype=lib.float64).item())  # the stream continues alike
    np.testing.assert_array_equal(outs[0], outs[2])
    assert outs[1] == outs[3]
