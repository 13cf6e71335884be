"""The layout of a leaf's first gradient, as PyTorch's AccumulateGrad gives it: the leaf's
own strides when the leaf is dense (channels_last, a transposed leaf), row-major when its
elements have gaps, whatever layout the incoming gradient had (a broadcast one, one laid out
as another operand); also under create_graph. Later gradients are added in place. Each case
on funcgrad.mutable and on real torch 2.13 as the oracle, with the same assertions."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, values


def leaf(torch, kind: str):
    base = torch.arange(120.0).reshape(2, 3, 4, 5) / 7
    if kind == "channels_last":
        t = base.to(memory_format=torch.channels_last)
    elif kind == "transposed":
        t = base.reshape(6, 20).t()
    elif kind == "with gaps":
        t = base.reshape(6, 20)[:, ::2]
    else:
        t = base.clone()
    return t.detach().requires_grad_()


def expected_strides(t, kind: str):
    return tuple(t.stride()) if kind != "with gaps" else (10, 1)


KINDS = ["contiguous", "channels_last", "transposed", "with gaps"]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@both()
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("how", ["broadcast", "elementwise", "other layout", "create_graph"])
def test_first_gradient_takes_the_leafs_layout(torch, kind, how):
    a = leaf(torch, kind)
    other = (torch.arange(float(a.numel())).reshape(a.shape) + 1) / 3
    if how == "broadcast":
        a.sum().backward()
        expected = torch.ones(a.shape)
    elif how == "elementwise":
        (a * a).sum().backward()
        expected = 2 * a.detach()
    elif how == "other layout":  # the gradient is laid out as `other`, which is row-major
        (a * other).sum().backward()
        expected = other
    else:  # (other requires grad: the gradient has history, and .grad is recorded)
        other.requires_grad_()
        (a * other).sum().backward(create_graph=True)
        expected = other
        # copied into the leaf's layout, or cloned row-major when the leaf has gaps
        node = "CloneBackward0" if kind == "with gaps" else "CopyBackwards"
        assert type(a.grad.grad_fn).__name__ == node
    assert tuple(a.grad.stride()) == expected_strides(a, kind)
    assert values(a.grad) == pytest.approx(values(expected), rel=1e-12)


@both()
@pytest.mark.parametrize("kind", KINDS)
def test_a_second_gradient_is_added_in_place(torch, kind):
    a = leaf(torch, kind)
    a.sum().backward()
    first = a.grad
    (3 * a).sum().backward()
    assert a.grad is first
    assert tuple(a.grad.stride()) == expected_strides(a, kind)
    assert values(a.grad).flatten().tolist() == [4.0] * a.numel()


@both()
def test_empty_strided_leaf_gets_a_row_major_gradient(torch):
    c = torch.empty_strided((2, 2), (4, 2)).copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    c.requires_grad_()
    d = torch.tensor([[5.0, 6.0], [7.0, 8.0]])
    (c * d).sum().backward()
    assert tuple(c.grad.stride()) == (2, 1)
    assert values(c.grad).tolist() == [[5.0, 6.0], [7.0, 8.0]]
