"""nn.GRU on funcgrad.mutable and real torch 2.13: same seed, same parameters (names, order,
initial values), same outputs and gradients; PyTorch's gate order and cell, recorded op by
op (StackBackward0; TransposeBackward1 for a batch-first output); gradcheck and
gradgradcheck in float64; a NumPy re-computation of one step; torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, fm, real_torch, values


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


@both()
def test_one_step_against_numpy(torch):
    torch.manual_seed(0)
    gru = torch.nn.GRU(3, 4).double()
    x = np.random.default_rng(0).standard_normal((1, 1, 3))
    out, h = gru(torch.tensor(x))
    p = {n: values(t) for n, t in gru.named_parameters()}
    gi = p["weight_ih_l0"] @ x[0, 0] + p["bias_ih_l0"]
    gh = p["bias_hh_l0"]  # h0 = 0
    r, z = sigmoid(gi[:4] + gh[:4]), sigmoid(gi[4:8] + gh[4:8])
    n = np.tanh(gi[8:] + r * gh[8:])
    np.testing.assert_allclose(values(out)[0, 0], (1 - z) * n, rtol=1e-12)
    np.testing.assert_allclose(values(h), values(out))


@pytest.mark.skipif(real_torch is None, reason="real torch is not installed: no oracle")
@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "bidirectional": True},
                                {"bias": False, "batch_first": True}])
def test_same_seed_same_numbers_as_torch(kw):
    results = []
    for lib in (fm, real_torch):
        lib.manual_seed(0)
        gru = lib.nn.GRU(3, 4, **kw)
        x = lib.randn(5, 2, 3, requires_grad=True)
        out, h = gru(x)
        (out.sum() + h.pow(2).sum()).backward()
        results.append((repr(gru), [n for n, _ in gru.named_parameters()],
                        out.grad_fn.name(), h.grad_fn.name(), values(out), values(h),
                        values(x.grad), values(gru.weight_hh_l0.grad)))
    ours, theirs = results
    assert ours[:4] == theirs[:4]
    for a, b in zip(ours[4:], theirs[4:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@both()
def test_gradcheck_gradgradcheck(torch):
    torch.manual_seed(1)
    inp = torch.rand(1, 3, 4, dtype=torch.float64, requires_grad=True)
    for bias in (True, False):
        gru = torch.nn.GRU(4, 4, bias=bias).to(torch.float64)

        def fn(x):
            out, h = gru(x)
            return out, h
        assert torch.autograd.gradcheck(fn, (inp,))
        assert torch.autograd.gradgradcheck(fn, (inp,))


@both()
def test_errors_and_unbatched(torch):
    gru = torch.nn.GRU(3, 4)
    out, h = gru(torch.randn(5, 3))
    assert tuple(out.shape) == (5, 4) and tuple(h.shape) == (1, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 3, got 2"):
        gru(torch.randn(5, 2, 2))
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 2, 4\\), got "
                                           "\\[2, 2, 4\\]"):
        gru(torch.randn(5, 2, 3), torch.randn(2, 2, 4))
