"""``.data`` given a tensor of another shape between the forward pass and backward: backward
computes the gradient of the forward pass that was run, so a node that reads the changed
tensor fails with RuntimeError (torch's class; NumPy's ValueError must not escape), a node
whose gradient no longer fits its input's recorded shape fails as torch's "returned an
invalid gradient" (never a gradient broadcast into a wrong one), and a gradient that still
fits the leaf is kept, as torch does. An error raised by user code the walk runs (a custom
backward, a hook) keeps its own class. Each case on funcgrad.mutable and on real torch 2.13
as the oracle, with the same assertions."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, values


def ones(torch, *shape):
    return torch.ones(*shape, dtype=torch.float64)


def saved_input_grows(torch):  # MulBackward0 reads x, now [4], against a [3] gradient
    x = ones(torch, 3).requires_grad_()
    w = ones(torch, 3).requires_grad_()
    y = (x * w).sum()
    x.data = ones(torch, 4)
    return y


def saved_nonleaf_grows(torch):  # SinBackward0 reads a, now [4]
    x = ones(torch, 3).requires_grad_()
    a = x * 2
    y = a.sin().sum()
    a.data = ones(torch, 4)
    return y


def leaf_changes_shape(torch):  # ExpBackward0 reads its output; the leaf's sink fails
    x = ones(torch, 2, 3).requires_grad_()
    y = x.exp().sum()
    x.data = ones(torch, 6)
    return y


def matmul_gradient_cannot_fit(torch):  # w's gradient is [1, 2], w is [3, 2]
    x = ones(torch, 2, 3).requires_grad_()
    w = ones(torch, 3, 2).requires_grad_()
    a = x * 1
    y = (a @ w).sum()
    a.data = ones(torch, 2, 1)
    return y


@both()
@pytest.mark.parametrize("make", [saved_input_grows, saved_nonleaf_grows, leaf_changes_shape,
                                  matmul_gradient_cannot_fit])
def test_backward_after_a_shape_change_raises_runtime_error(torch, make):
    y = make(torch)
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert not isinstance(info.value, ValueError)


@both()
def test_a_gradient_that_cannot_fit_is_torchs_invalid_gradient(torch):
    y = matmul_gradient_cannot_fit(torch)
    with pytest.raises(RuntimeError, match=r"Function MmBackward0 returned an invalid gradient "
                       r"at index 1 - got \[1, 2\] but expected shape compatible with \[3, 2\]"):
        y.backward()


@both()
def test_a_gradient_of_the_recorded_shape_is_broadcast_to_the_leaf(torch):
    x = ones(torch, 3).requires_grad_()
    y = (x * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum()
    x.data = ones(torch, 2, 3)
    y.backward()
    assert values(x.grad).tolist() == [[1.0, 2.0, 3.0]] * 2


@both()
def test_a_leaf_read_with_its_new_broadcastable_value(torch):
    x = ones(torch, 3).requires_grad_()
    w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    a = x * 1
    y = (a * w).sum()
    a.data = torch.tensor([7.0], dtype=torch.float64)  # read as is by MulBackward0
    y.backward()
    assert values(w.grad).tolist() == [7.0, 7.0, 7.0]
    assert values(x.grad).tolist() == [1.0, 2.0, 3.0]


@both()
def test_a_grad_made_before_the_change_does_not_fit(torch):
    x = ones(torch, 3).requires_grad_()
    x.sum().backward()
    x.data = ones(torch, 4)
    with pytest.raises(RuntimeError):
        (x * 2).sum().backward()
    x.grad = None  # the way out: a fresh .grad
    (x * 2).sum().backward()
    assert values(x.grad).tolist() == [2.0] * 4


@both()
def test_a_custom_backwards_own_value_error_is_kept(torch):
    class Refuses(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("the user's own error")

    x = ones(torch, 3).requires_grad_()
    with pytest.raises(ValueError, match="the user's own error"):
        Refuses.apply(x).sum().backward()


@both()
def test_a_hooks_own_value_error_is_kept(torch):
    def hook(g):
        raise ValueError("raised by a hook")

    x = ones(torch, 3).requires_grad_()
    y = x * 2
    y.register_hook(hook)
    with pytest.raises(ValueError, match="raised by a hook"):
        y.sum().backward()
