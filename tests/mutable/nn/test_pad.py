"""F.pad on funcgrad.mutable and real torch 2.13: constant (crop with negative amounts),
reflect and replicate against NumPy's np.pad, torch's node names (ConstantPadNdBackward0,
ReflectionPad{1,2}DBackward0, ReplicationPad{1,2}DBackward0), gradients that add every copy
back to its source, gradcheck / gradgradcheck, torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values

NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}
NAMES = {"constant": "ConstantPadNdBackward0", "reflect": "ReflectionPad{}DBackward0",
         "replicate": "ReplicationPad{}DBackward0"}


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate"])
@pytest.mark.parametrize("pad", [(1, 2), (2, 0), (1, 1, 2, 1)])
@both()
def test_values_names_gradients(torch, mode, pad):
    # (non-constant modes take 3-d input for one padded dim, 4-d for two, as torch)
    base = np.arange(24.0).reshape((2, 3, 4) if len(pad) == 2 else (1, 2, 3, 4))
    x = torch.tensor(base, requires_grad=True)
    p = torch.nn.functional.pad(x, pad, mode=mode)
    width = [(0, 0)] * base.ndim
    for k in range(len(pad) // 2):
        width[base.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    np.testing.assert_array_equal(values(p), np.pad(base, width, mode=NP_MODE[mode]))
    assert p.grad_fn.name() == NAMES[mode].format(len(pad) // 2)
    (g,) = torch.autograd.grad(p.sum(), x)
    # each source element gets one per copy of it in the output
    index = np.arange(base.size).reshape(base.shape)
    copies = (np.pad(index, width, constant_values=-1) if mode == "constant"
              else np.pad(index, width, mode=NP_MODE[mode]))
    counts = np.bincount(copies[copies >= 0], minlength=base.size)
    np.testing.assert_array_equal(values(g).reshape(-1), counts)
    assert torch.autograd.gradgradcheck(
        lambda t: torch.nn.functional.pad(t, pad, mode=mode), (x,))


@both()
def test_constant_value_and_crop(torch):
    x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    F = torch.nn.functional
    assert values(F.pad(x, (1, 2), value=9.0)).tolist() == [[9, 1, 2, 3, 9, 9]]
    y = F.pad(x, (-1, 1))
    assert values(y).tolist() == [[2, 3, 0]]
    (g,) = torch.autograd.grad(y.sum(), x)
    assert values(g).tolist() == [[0, 1, 1]]
    assert F.pad(torch.tensor([1, 2]), (1, 1)).dtype == torch.int64


@pytest.mark.parametrize("call,error,message", [
    (lambda F, x: F.pad(x, (1,)), RuntimeError, "Padding length must be divisible by 2"),
    (lambda F, x: F.pad(x, (1,) * 8), RuntimeError, "Padding length should be less than or "
     "equal to two times the input dimension but got padding length 8 and input of dimension 3"),
    (lambda F, x: F.pad(x, (4, 0), mode="reflect"), RuntimeError, "Padding size should be less "
     "than the corresponding input dimension, but got: padding \\(4, 0\\) at dimension 2"),
    (lambda F, x: F.pad(x[0], (1, 1, 1, 1), mode="reflect"), NotImplementedError,
     "Padding size 4 is not supported for 2D input tensor"),
    (lambda F, x: F.pad(x, (1, 1), mode="foo"), NotImplementedError,
     "Unrecognised padding mode foo"),
    (lambda F, x: F.pad(x, (1, 1), mode="reflect", value=1.0), RuntimeError,
     'Padding mode "reflect" doesn\'t take in value argument'),
])
@both()
def test_errors(torch, call, error, message):
    with pytest.raises(error, match=message):
        call(torch.nn.functional, torch.zeros(1, 3, 4))
