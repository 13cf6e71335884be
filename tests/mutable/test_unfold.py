"""Tensor.unfold on funcgrad.mutable and real torch 2.13: windows as a new last dim, a view
(writes reach the base; torch's strides), UnfoldBackward0 adding overlapping windows'
gradients, gradcheck / gradgradcheck in float64, torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values


@pytest.mark.parametrize("args", [(2, 2, 1), (1, 2, 1), (0, 1, 1), (-1, 3, 2), (2, 4, 4)])
@both()
def test_windows_view_and_gradient(torch, args):
    base = np.arange(24.0).reshape(2, 3, 4)
    x = torch.tensor(base, requires_grad=True)
    u = x.unfold(*args)
    dim, size, step = args
    d = dim % 3
    count = (base.shape[d] - size) // step + 1
    expected = np.stack([np.take(base, np.arange(k * step, k * step + size), axis=d)
                         for k in range(count)], axis=d)
    np.testing.assert_array_equal(values(u), np.moveaxis(expected, d + 1, -1))
    assert u.grad_fn.name() == "UnfoldBackward0"
    (g,) = torch.autograd.grad(u.sum(), x)
    covered = np.zeros(base.shape[d])
    for k in range(count):
        covered[k * step:k * step + size] += 1
    shape = [1, 1, 1]
    shape[d] = base.shape[d]
    np.testing.assert_array_equal(values(g), np.broadcast_to(covered.reshape(shape), base.shape))
    assert torch.autograd.gradgradcheck(lambda t: t.unfold(*args), (x,))


@both()
def test_view_writes_and_errors(torch):
    b = torch.zeros(6)
    v = b.unfold(0, 2, 2)
    v[1, 0] = 5
    assert values(b).tolist() == [0, 0, 5, 0, 0, 0]
    assert tuple(torch.arange(12.0).reshape(3, 4).unfold(1, 2, 1).stride()) == (4, 1, 1)
    x = torch.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1 is 3 but "
                                           "size is 5"):
        x.unfold(1, 5, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(1, 2, 0)
