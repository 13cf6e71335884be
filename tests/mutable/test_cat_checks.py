"""torch.cat's checks and its legacy rule, on funcgrad.mutable and on real torch 2.13: a 1-d
empty tensor beside tensors of another rank is skipped (and gets an empty gradient) but
still takes part in dtype promotion; mismatched ranks, sizes, 0-d tensors and an empty list
get torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values


@both()
def test_legacy_empty_tensor_is_skipped_with_an_empty_gradient(torch):
    a = torch.randn(0, requires_grad=True)
    b = torch.arange(6.0).reshape(2, 3).requires_grad_()
    for dim, shape in ((0, (2, 3)), (1, (2, 3)), (-1, (2, 3))):
        y = torch.cat((a, b), dim)
        assert tuple(y.shape) == shape
        np.testing.assert_array_equal(values(y), values(b))
    y = torch.cat((b, a, b), -1)
    assert tuple(y.shape) == (2, 6)
    (y * torch.arange(12.0).reshape(2, 6)).sum().backward()
    assert tuple(a.grad.shape) == (0,)
    np.testing.assert_array_equal(values(b.grad), [[3, 5, 7], [15, 17, 19]])  # both places
    assert torch.cat((torch.zeros(0, dtype=torch.float64), torch.ones(2, 2))).dtype == \
        torch.float64
    assert tuple(torch.cat((torch.zeros(0), torch.zeros(0))).shape) == (0,)


@pytest.mark.parametrize("make,error,message", [
    (lambda t: t.cat((t.zeros(2, 2), t.zeros(2, 2, 2))), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 3"),
    (lambda t: t.cat((t.zeros(2, 2), t.zeros(3, 3)), 1), RuntimeError,
     "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for "
     "tensor number 1 in the list."),
    (lambda t: t.cat((t.zeros(2, 2), t.zeros(2, 3)), -2), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for "
     "tensor number 1 in the list."),
    (lambda t: t.cat((t.zeros(()), t.zeros(2))), RuntimeError,
     "zero-dimensional tensor \\(at position 0\\) cannot be concatenated"),
    (lambda t: t.cat([]), ValueError, "torch.cat\\(\\): expected a non-empty list of Tensors"),
    (lambda t: t.cat((t.zeros(2, 2), t.zeros(0))), None, None),
])
@both()
def test_errors(torch, make, error, message):
    if error is None:
        assert tuple(make(torch).shape) == (2, 2)
        return
    with pytest.raises(error, match=message):
        make(torch)
