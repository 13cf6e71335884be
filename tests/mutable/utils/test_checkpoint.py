"""torch.utils.checkpoint on funcgrad.mutable against real torch 2.13: gradients equal to the
unchecked run, the function run again at backward (counted), the random stream replayed,
torch's warning and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pytorch_port import both, values


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


@both()
def test_non_reentrant_saved_values_are_handed_out_once_per_backward(torch):
    runs = [0]

    class Saves(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            with pytest.raises(RuntimeError, match="Unpack is being triggered for a tensor that "
                                                   "was already unpacked once"):
                ctx.saved_tensors
            return g * y, g * x

    def f(x, y):
        runs[0] += 1
        return Saves.apply(x * y, y * y)

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, -1.0], requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(f, x, y, use_reentrant=False).sum()
    out.backward(retain_graph=True)
    assert runs == [2] and x.grad.tolist() == [27.0, -1.0] and y.grad.tolist() == [27.0, 6.0]
    out.backward()  # a second backward runs the function again
    assert runs == [3] and x.grad.tolist() == [54.0, -2.0]
    d = torch.utils.checkpoint.checkpoint(torch.exp, x, use_reentrant=False)
    for expected in ([2.718281828, 7.389056099], [2.718281828, 7.389056099]):
        np.testing.assert_allclose(values(d.grad_fn._saved_result), expected)  # each recomputes


@both()
def test_non_reentrant_keeps_a_saved_tensor_that_needs_no_grad_itself(torch):
    seen = []

    class Keeps(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            seen.extend(ctx.saved_tensors)
            return g, None

    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(1.0)
    torch.utils.checkpoint.checkpoint(Keeps.apply, a, b, use_reentrant=False).backward()
    assert seen[0] is b


def _changes_on_second_run(first, second):
    runs = [0]

    def fn(x):
        runs[0] += 1
        return first(x) if runs[0] == 1 else second(x)
    return fn


@both()
def test_non_reentrant_checkpoint_checks_what_the_recomputation_saves(torch):
    from_three = lambda x: x.sin().exp().sin()  # noqa: E731  (saves three tensors)
    from_two = lambda x: x.sin().exp()  # noqa: E731
    other_shape = lambda x: x.sin() * torch.tensor([1.0, 2.0])  # noqa: E731
    checkpoint = torch.utils.checkpoint.checkpoint
    a = torch.tensor([0.5], requires_grad=True)

    out = checkpoint(_changes_on_second_run(from_three, from_two), a, use_reentrant=False)
    with pytest.raises(torch.utils.checkpoint.CheckpointError,
                       match="A different number of tensors was saved during the original "
                             "forward and recomputation.\nNumber of tensors saved during "
                             "forward: 3\nNumber of tensors saved during recomputation: 2."):
        out.sum().backward()

    out = checkpoint(_changes_on_second_run(from_two, other_shape), a, use_reentrant=False)
    with pytest.raises(RuntimeError, match=r"have different metadata than during the forward "
                       r"pass.\ntensor at position 1:\nsaved metadata: \{'shape': "
                       r"torch.Size\(\[1\]\), 'dtype': torch.float32, 'device': "
                       r"device\(type='cpu'\)\}\nrecomputed metadata: \{'shape': "
                       r"torch.Size\(\[2\]\)"):
        out.sum().backward()

    # more tensors saved again: never read (the recomputation stops early in torch)
    a.grad = None
    out = checkpoint(_changes_on_second_run(from_two, from_three), a, use_reentrant=False)
    out.sum().backward()
    np.testing.assert_allclose(values(a.grad), np.exp(np.sin(0.5)) * np.cos(0.5), rtol=1e-6)

    # determinism_check takes "default" or "none" (no check)
    with pytest.raises(ValueError, match=r"determinism_check should be one of \['default', "
                                         r"'none'\], but got always"):
        checkpoint(from_two, a, use_reentrant=False, determinism_check="always")
