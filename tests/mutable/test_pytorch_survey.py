"""Tests of PyTorch's test_autograd.py that a survey of funcgrad.mutable found failing, ported:
each runs on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions. Parts
that need what funcgrad does not model (nested tensors, CUDA) are left out and named."""
from __future__ import annotations

import warnings

import pytest

from pytorch_port import both, close


# --- test_grad_fn_input_metadata (nested jagged tensors left out) ----------------------------------
@both()
def test_grad_fn_input_metadata(torch):
    x = torch.rand(2, requires_grad=True, dtype=torch.float32)
    y = torch.rand(2, requires_grad=True, dtype=torch.float32)
    meta = (x * y).grad_fn._input_metadata[0]
    assert isinstance(meta, torch._C._autograd._InputMetadata)
    assert list(meta.shape) == [2] and meta.dtype is torch.float32
    assert str(meta.device) == "cpu" and not meta.is_nested_tensor

    # one entry per output of the node
    var, _ = torch.var_mean(torch.rand(3, 3, requires_grad=True), dim=0)
    assert [list(m.shape) for m in var.grad_fn._input_metadata] == [[3], [3]]

    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    out = Identity.apply(torch.randn(3, 3, requires_grad=True))
    assert list(out.grad_fn._input_metadata[0].shape) == [3, 3]


@both()
def test_input_metadata_of_other_nodes(torch):
    x = torch.rand(4, 3, requires_grad=True, dtype=torch.float64)
    assert list(x.clone().grad_fn.next_functions[0][0]._input_metadata[0].shape) == [4, 3]
    assert [list(m.shape) for m in x.split(2)[0].grad_fn._input_metadata] == [[2, 3], [2, 3]]
    assert list(x.sum().grad_fn._input_metadata[0].shape) == []
    assert list(x.t().grad_fn._input_metadata[0].shape) == [3, 4]
    c = x.clone()
    c[0] = 1
    meta = c.grad_fn._input_metadata[0]
    assert list(meta.shape) == [4, 3] and meta.dtype is torch.float64


# --- torch.complex: its own node --------------------------------------------------------------------
@both()
def test_complex_records_complex_backward(torch):
    re = torch.tensor([1.0, 2.0], requires_grad=True)
    im = torch.tensor([3.0, -1.0], requires_grad=True)
    z = torch.complex(re, im)
    assert z.grad_fn.name() == "ComplexBackward0" and z.dtype is torch.complex64
    (z * torch.tensor([1 + 2j, 3 - 1j])).abs().sum().backward()
    close(re.grad, [0.7071067811865476, 2.8284271247461903])
    close(im.grad, [2.1213203435596424, -1.414213562373095])
    # broadcasting, double precision
    re = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    im = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    z = torch.complex(re, im)
    assert z.dtype is torch.complex128
    (z.imag * 2).sum().backward()
    assert re.grad.tolist() == [0.0, 0.0] and im.grad.item() == 4.0


# --- test_grad_dtype (its bfloat16 cases left out: NumPy has no bfloat16) ---------------------------
def _doubling(torch):
    class GradToDouble(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.to(torch.float64)

    return GradToDouble


@both()
def test_grad_dtype(torch):
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    assert leaf.grad_dtype is torch.float32
    leaf.grad_dtype = torch.float16
    assert leaf.grad_dtype is torch.float16
    leaf.grad_dtype = None
    assert leaf.grad_dtype is None
    non_leaf = leaf * 2
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf tensors"):
        non_leaf.grad_dtype
    with pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors"):
        with pytest.warns(UserWarning, match="that is not a leaf Tensor is being accessed"):
            non_leaf.grad_dtype = torch.float16
    with pytest.raises(RuntimeError, match="grad_dtype must be a torch.dtype or None, but got int"):
        leaf.grad_dtype = 3

    # assigning .grad
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torch.tensor([1.0, 1.0])
    assert x.grad.dtype is torch.float32
    x.grad = None
    x.grad_dtype = torch.float16
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'float' to "
                                           "a tensor with grad_dtype 'Half'"):
        x.grad = torch.tensor([1.0, 1.0])
    x.grad = None
    x.grad_dtype = None
    x.grad = torch.tensor([1.0, 1.0], dtype=torch.float64)
    assert x.grad.dtype is torch.float64

    # a gradient arriving in another dtype: cast to grad_dtype, kept as it is under None
    fn = _doubling(torch)
    d = torch.tensor([1.0, 2.0], requires_grad=True)
    fn.apply(d).sum().backward()
    assert d.grad.dtype is torch.float32 and d.grad.tolist() == [1.0, 1.0]
    for want in (None, torch.float16):
        e = torch.tensor([3.0, 4.0], requires_grad=True)
        e.grad_dtype = want
        fn.apply(e).sum().backward()
        assert e.grad.dtype is (torch.float64 if want is None else want)
        assert e.grad.tolist() == [1.0, 1.0]
    f = torch.tensor([5.0, 6.0], requires_grad=True)
    f.grad_dtype = torch.float64  # a gradient of the leaf's own dtype is cast too
    (f * 3).sum().backward()
    assert f.grad.dtype is torch.float64 and f.grad.tolist() == [3.0, 3.0]

    # changing grad_dtype while a gradient exists
    g = torch.tensor([1.0, 2.0], requires_grad=True)
    g.grad = torch.tensor([1.0, 1.0])
    g.grad_dtype = torch.float32
    with pytest.raises(RuntimeError, match="Cannot set grad_dtype to 'Half' because there is "
                                           "already a gradient with dtype 'float'"):
        g.grad_dtype = torch.float16
    g.grad_dtype = None
    assert g.grad_dtype is None
    g.grad = None
    g.grad_dtype = torch.float16
    assert g.grad_dtype is torch.float16

    # the leaf's accumulator made before grad_dtype was set
    h = torch.tensor([1.0, 2.0], requires_grad=True)
    h.clone()
    h.grad_dtype = None
    fn.apply(h).sum().backward()
    assert h.grad.dtype is torch.float64

    # later gradients are added into the existing .grad, in its dtype
    k = torch.tensor([1.0, 2.0], requires_grad=True)
    k.grad_dtype = None
    (k * 2).sum().backward()
    k.grad = k.grad.to(torch.float16)
    (k * 3).sum().backward()
    assert k.grad.dtype is torch.float16 and k.grad.tolist() == [5.0, 5.0]
