"""torch.utils.checkpoint on funcgrad.mutable against real torch 2.13: gradients equal to the
unchecked run, the function run again at backward (counted), the random stream replayed,
torch's warning and errors."""
from __future__ import annotations

import warnings

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


X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]


@both()
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_gradient_equals_the_unchecked_run_and_fn_runs_again(torch, use_reentrant):
    runs = [0]

    def f(a, w):
        runs[0] += 1
        return (torch.exp(a) * w).sin()

    a = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    f(a, w).sum().backward()
    expected = values(a.grad), values(w.grad)
    a.grad = w.grad = None
    out = torch.utils.checkpoint.checkpoint(f, a, w, use_reentrant=use_reentrant)
    assert runs[0] == 2
    out.sum().backward()
    assert runs[0] == 3
    np.testing.assert_allclose(values(a.grad), expected[0], rtol=1e-12)
    np.testing.assert_allclose(values(w.grad), expected[1], rtol=1e-12)


@both()
def test_non_reentrant_checkpoint_gives_autograd_grad_and_calls_hooks_once(torch):
    a = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.utils.checkpoint.checkpoint(
        torch.exp, a, use_reentrant=False).sum(), (a,))
    np.testing.assert_allclose(values(g), np.exp(X), rtol=1e-12)
    w = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    calls = []
    w.register_hook(lambda grad: calls.append(1))
    h = w * a
    torch.utils.checkpoint.checkpoint(lambda x: w * x, h, use_reentrant=False).sum().backward()
    assert calls == [1]


@both()
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_dropout_inside_sees_the_same_random_stream_again(torch, use_reentrant):
    torch.manual_seed(3)
    a = torch.ones(4, 5, dtype=torch.float64, requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(
        lambda x: torch.nn.functional.dropout(x * 3, p=0.5, training=True), a,
        use_reentrant=use_reentrant)
    out.sum().backward()
    kept = values(out) != 0
    np.testing.assert_array_equal(values(a.grad), np.where(kept, 6.0, 0.0))


@both()
def test_use_reentrant_left_out_warns_and_bad_arguments_raise(torch):
    a = torch.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="^torch.utils.checkpoint: the use_reentrant parameter "
                      "should be passed explicitly"):
        torch.utils.checkpoint.checkpoint(lambda x: x * 2, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.utils.checkpoint.checkpoint(lambda x: x * 2, a, use_reentrant=False)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        torch.utils.checkpoint.checkpoint(lambda x, foo: x, a, use_reentrant=True, foo=1)
    with pytest.raises(ValueError, match="^Passing `context_fn` or `debug` is only supported "
                       "when use_reentrant=False.$"):
        torch.utils.checkpoint.checkpoint(lambda x: x, a, use_reentrant=True, debug=True)


@both()
def test_checkpoint_sequential_matches_running_the_modules(torch):
    torch.manual_seed(0)
    layers = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    a = torch.tensor(X, requires_grad=True)
    layers(a).sum().backward()
    expected = values(a.grad)
    a.grad = None
    out = torch.utils.checkpoint.checkpoint_sequential(layers, 2, a, use_reentrant=False)
    out.sum().backward()
    np.testing.assert_allclose(values(a.grad), expected, rtol=1e-6)
