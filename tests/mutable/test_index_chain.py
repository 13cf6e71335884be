"""Indexing records PyTorch's chain of view nodes: one per index item that does something (an
int a SelectBackward0, a slice that drops elements a SliceBackward0, None or a Python bool an
UnsqueezeBackward0, left to right), then one IndexBackward0 for the index arrays; an index that
does nothing at all is an AliasBackward0. Each case runs on funcgrad.mutable and on real
torch 2.13, and the gradient is checked against a NumPy-built expectation."""
from __future__ import annotations

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values


def chain(t) -> list:
    """The first-input path of `t`'s graph, node names from the output to the leaf."""
    out, fn = [], t.grad_fn
    while fn is not None:
        out.append(fn.name().replace("torch::autograd::", ""))
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return out


CASES = [
    # (index as text, names from the output, the NumPy index equivalent on a (3, 4) array)
    ("1:, :2", ["SliceBackward0", "SliceBackward0"], np.s_[1:, :2]),
    ("1:, 1", ["SelectBackward0", "SliceBackward0"], np.s_[1:, 1]),
    ("1, 2", ["SelectBackward0", "SelectBackward0"], np.s_[1, 2]),
    (":, 1", ["SelectBackward0"], np.s_[:, 1]),
    ("0:100, 1", ["SelectBackward0"], np.s_[0:100, 1]),
    ("-3:, 1", ["SelectBackward0", "SliceBackward0"], np.s_[-3:, 1]),
    ("0:3, 0:4", ["AliasBackward0"], np.s_[0:3, 0:4]),
    ("...", ["AliasBackward0"], np.s_[...]),
    ("0:", ["SliceBackward0"], np.s_[0:]),  # a lone slice is always recorded
    ("None, 1:", ["SliceBackward0", "UnsqueezeBackward0"], np.s_[None, 1:]),
    ("1:, ..., None", ["UnsqueezeBackward0", "SliceBackward0"], np.s_[1:, ..., None]),
    ("-1, 1:", ["SliceBackward0", "SelectBackward0"], np.s_[-1, 1:]),
    ("None, 1, None, 1:", ["SliceBackward0", "UnsqueezeBackward0", "SelectBackward0",
                           "UnsqueezeBackward0"], np.s_[None, 1, None, 1:]),
    ("[0, 2], 1:", ["IndexBackward0", "SliceBackward0"], np.s_[[0, 2], 1:]),
    ("1:, [0, 3]", ["IndexBackward0", "SliceBackward0"], np.s_[1:, [0, 3]]),
    ("1, [0, 3]", ["IndexBackward0", "SelectBackward0"], np.s_[1, [0, 3]]),
    ("True, 1", ["IndexBackward0", "SelectBackward0", "UnsqueezeBackward0"], np.s_[None, 1]),
    ("1:, True", ["IndexBackward0", "UnsqueezeBackward0", "SliceBackward0"], np.s_[1:, None]),
]


@pytest.mark.parametrize("text,names,np_index", CASES, ids=[c[0] for c in CASES])
@both()
def test_index_records_pytorchs_chain_and_its_gradient(torch, text, names, np_index):
    base = np.arange(12.0).reshape(3, 4)
    x = torch.tensor(base, requires_grad=True)
    y = eval(f"x[{text}]", {"x": x})
    assert chain(y) == names + ["AccumulateGrad"]
    np.testing.assert_array_equal(values(y), base[np_index])
    weights = np.arange(1.0, y.numel() + 1).reshape(tuple(y.shape))
    (y * torch.tensor(weights)).sum().backward()
    expected = np.zeros_like(base)
    np.add.at(expected, np_index, weights)
    np.testing.assert_array_equal(values(x.grad), expected)


@both()
def test_mixed_index_takes_ints_first_then_the_arrays(torch):
    # the int is applied first, so the array's dim is the view's and the result keeps its place
    x = torch.arange(60.0).reshape(3, 4, 5)
    assert tuple(x[1, :, [0, 1]].shape) == (4, 2)
    assert tuple(x[:, 1:, [0, 2]].shape) == (3, 3, 2)
    np.testing.assert_array_equal(values(x[1, :, [0, 1]]), np.arange(60.0).reshape(3, 4, 5)[1][:, [0, 1]])


@pytest.mark.parametrize("text,message", [
    ("1, 9", "index 9 is out of bounds for dimension 1 with size 4"),
    ("None, 1, 9", "index 9 is out of bounds for dimension 2 with size 4"),
    ("..., 9", "index 9 is out of bounds for dimension 1 with size 5"),
    ("1, [0], 9", "index 9 is out of bounds for dimension 2 with size 5"),
    ("1, 1, 1, 1", "too many indices for tensor of dimension 3"),
])
@both()
def test_index_errors_name_the_item(torch, text, message):
    x = torch.zeros(3, 4, 5)
    with pytest.raises(IndexError, match=message):
        eval(f"x[{text}]", {"x": x})


@both()
def test_zero_dim_refusals(torch):
    s = torch.tensor(3.0)
    with pytest.raises(IndexError, match="slice\\(\\) cannot be applied to a 0-dim tensor"):
        s[:]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        s[0]
    assert tuple(s[None].shape) == (1,) and tuple(s[...].shape) == ()
