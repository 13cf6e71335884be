"""Front-end functions and behaviours PyTorch's test_autograd.py reaches for (found by running
its tests with funcgrad.mutable bound as torch): incomplete gamma functions, stacking helpers,
block_diag, the trapezoid rule, chain_matmul, Tensor.resize, prod's dtype, a list index read
as a tuple, torch.set_warn_always. Each case runs on funcgrad.mutable and on real torch 2.13;
values are also checked against closed forms or SciPy / float64 finite differences."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, close, values


@both()
def test_igamma_values_and_the_derivative_in_x(torch):
    a = torch.tensor([0.5, 1.0, 3.0], dtype=torch.float64)
    x = torch.tensor([0.25, 2.0, 4.5], dtype=torch.float64, requires_grad=True)
    p = torch.igamma(a, x)
    q = torch.igammac(a, x)
    # P(1, x) = 1 - exp(-x); P + Q = 1
    assert math.isclose(values(p)[1], 1 - math.exp(-2.0), rel_tol=1e-12)
    close(p + q, torch.ones(3, dtype=torch.float64))
    assert type(p.grad_fn).__name__ == "IgammaBackward0"
    assert type(q.grad_fn).__name__ == "IgammacBackward0"
    (g,) = torch.autograd.grad(p.sum(), x)
    av, xv = values(a), values(x)
    expected = np.exp((av - 1) * np.log(xv) - xv - np.array([math.lgamma(v) for v in av]))
    np.testing.assert_allclose(values(g), expected, rtol=1e-10)
    (gq,) = torch.autograd.grad(q.sum(), x)
    np.testing.assert_allclose(values(gq), -expected, rtol=1e-10)


@both()
def test_igamma_refuses_the_derivative_in_its_first_argument(torch):
    a = torch.tensor([2.0], requires_grad=True)
    x = torch.tensor([1.5])
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not "
                                                  "implemented"):
        torch.igamma(a, x).sum().backward()


@both()
def test_igamma_refuses_forward_mode(torch):
    fwad = torch.autograd.forward_ad
    with fwad.dual_level():
        dual = fwad.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))
        with pytest.raises(NotImplementedError,
                           match="Trying to use forward AD with igamma that does not support it"):
            torch.igamma(dual, dual)


@both()
def test_dstack_atleast_and_column_stack(torch):
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = torch.tensor([5.0, 6.0])
    out = torch.dstack([a, a * 2])
    assert tuple(out.shape) == (2, 2, 2)
    np.testing.assert_allclose(values(out)[..., 1], 2 * values(a))
    out.sum().backward()
    np.testing.assert_allclose(values(a.grad), np.full((2, 2), 3.0))
    assert tuple(torch.atleast_3d(b).shape) == (1, 2, 1)
    assert tuple(torch.atleast_2d(b).shape) == (1, 2)
    assert tuple(torch.atleast_1d(torch.tensor(3.0)).shape) == (1,)
    assert tuple(torch.dstack([b, b]).shape) == (1, 2, 2)
    assert tuple(torch.column_stack([b, b]).shape) == (2, 2)


@both()
def test_block_diag_places_blocks_and_routes_gradients(torch):
    a = torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    b = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    c = torch.tensor([4.0, 5.0], dtype=torch.float64, requires_grad=True)
    out = torch.block_diag(a, b, c)
    expected = np.array([[1, 2, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 4, 5]], float)
    np.testing.assert_allclose(values(out), expected)
    weights = torch.arange(15, dtype=torch.float64).reshape(3, 5)
    (out * weights).sum().backward()
    np.testing.assert_allclose(values(a.grad), [[0.0, 1.0]])
    assert values(b.grad) == 7.0
    np.testing.assert_allclose(values(c.grad), [13.0, 14.0])
    assert torch.autograd.gradcheck(lambda x, y: torch.block_diag(x, y), (a, c))


@both()
def test_trapezoid_and_trapz(torch):
    y = torch.tensor([[1.0, 4.0, 2.0], [0.0, 1.0, 3.0]], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    # spacing 0.5 then 1.5: 0.5*(1+4)/2 + 1.5*(4+2)/2 = 5.75; 0.5*1/2 + 1.5*4/2 = 3.25
    np.testing.assert_allclose(values(torch.trapz(y, x)), [5.75, 3.25])
    np.testing.assert_allclose(values(torch.trapezoid(y, dx=2.0)), [11.0, 5.0])
    np.testing.assert_allclose(values(torch.trapezoid(y, dim=0)), [0.5, 2.5, 2.5])
    assert torch.autograd.gradcheck(lambda y, x: torch.trapz(y, x), (y, x))


@both()
def test_chain_matmul_multiplies_left_to_right_and_warns(torch):
    mats = [torch.randn(2, 3, dtype=torch.float64, requires_grad=True),
            torch.randn(3, 4, dtype=torch.float64, requires_grad=True),
            torch.randn(4, 1, dtype=torch.float64, requires_grad=True)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = torch.chain_matmul(*mats)
        np.testing.assert_allclose(values(out), values(mats[0]) @ values(mats[1]) @ values(mats[2]))
        assert torch.autograd.gradcheck(torch.chain_matmul, mats)


@both()
def test_tensor_resize_warns_and_reshapes_the_gradient_back(torch):
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        y = x.resize(3, 2)
    assert tuple(y.shape) == (3, 2)
    (y * torch.arange(6.0).reshape(3, 2)).sum().backward()
    np.testing.assert_allclose(values(x.grad), np.arange(6.0).reshape(2, 3))
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert tuple(x.resize_as(torch.ones(6)).shape) == (6,)


@both()
def test_prod_with_dtype_converts_first_and_keeps_the_input_dtype_in_the_gradient(torch):
    x = torch.tensor([[1.5, 2.0], [3.0, 0.5]], requires_grad=True)
    out = torch.prod(x, dtype=torch.float64)
    assert out.dtype == torch.float64
    assert values(out) == 4.5
    (g,) = torch.autograd.grad(out, x)
    assert g.dtype == torch.float32
    np.testing.assert_allclose(values(g), [[3.0, 2.25], [1.5, 9.0]])
    (g1,) = torch.autograd.grad(torch.prod(x, 1, dtype=torch.float64).sum(), x)
    np.testing.assert_allclose(values(g1), [[2.0, 1.5], [0.5, 3.0]])


@both()
def test_a_list_of_slices_and_lists_indexes_as_a_tuple(torch):
    x = torch.zeros(3, 4)
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        x[[slice(None), [1, 3]]] = 1.0
    np.testing.assert_allclose(values(x), np.tile([0.0, 1.0, 0.0, 1.0], (3, 1)))
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        picked = x[[slice(None), [1, 3]]]
    assert tuple(picked.shape) == (3, 2)


@both()
def test_set_warn_always_is_a_process_switch(torch):
    assert torch.is_warn_always_enabled() is False
    torch.set_warn_always(True)
    try:
        assert torch.is_warn_always_enabled() is True
    finally:
        torch.set_warn_always(False)
    assert torch.is_warn_always_enabled() is False


@both()
def test_conj_physical_and_the_resolvers_of_a_plain_tensor(torch):
    z = torch.tensor([1 + 2j, -3j], dtype=torch.complex128, requires_grad=True)
    out = torch.conj_physical(z)
    assert type(out.grad_fn).__name__ == "ConjPhysicalBackward0"
    np.testing.assert_allclose(np.array(out.detach().tolist()), [1 - 2j, 3j])
    r = torch.tensor([1.0, 2.0])
    assert torch.conj_physical(r) is r
    # a tensor no conj() or neg view produced: nothing to resolve, no bit set
    assert torch.resolve_conj(z) is z and z.resolve_neg() is z
    assert torch.is_conj(z) is False and z.is_neg() is False
    x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: torch.view_as_real(torch.resolve_conj(x * 1j)), x,
                                    check_forward_ad=True)


@both()
def test_storage_counts_the_whole_buffer(torch):
    base = torch.arange(6.0)
    part = base[1:4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = part.storage()
        assert len(s) == 6 and s.size() == 6
        assert s.data_ptr() == base.storage().data_ptr()
        assert s.dtype == torch.float32 and s.element_size() == 4 and s.nbytes() == 24
        assert len(torch.ones(2, 3, dtype=torch.float64).t().storage()) == 6


@both()
def test_private_unique_entry_points_have_fixed_arity(torch):
    x = torch.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)
    values, inverse = torch._unique(x, sorted=True, return_inverse=False)
    assert values.tolist() == [1.0, 2.0, 3.0] and inverse.numel() == 0
    assert inverse.dtype == torch.int64
    assert type(values.grad_fn).__name__ == "UniqueBackward0" and values.requires_grad
    assert torch._unique(x, return_inverse=True)[1].tolist() == [2, 0, 2, 1]
    v, i, c = torch._unique2(x, sorted=True, return_inverse=False, return_counts=True)
    assert type(v.grad_fn).__name__ == "Unique2Backward0"
    assert i.numel() == 0 and c.tolist() == [1, 1, 2] and not c.requires_grad
    v, i, c = torch._VF.unique_dim(x, dim=0, sorted=True, return_inverse=False,
                                   return_counts=False)
    assert type(v.grad_fn).__name__ == "UniqueDimBackward0"
    assert i.tolist() == [2, 0, 2, 1] and c.tolist() == [1, 1, 2]  # computed regardless


@both()
def test_an_empty_as_strided_view_accepts_an_offset_past_the_buffer(torch):
    base = torch.tensor([1.0])
    for offset in (1, 2):
        v = base.as_strided((0,), (1,), offset)
        assert tuple(v.shape) == (0,) and v.numel() == 0
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        base.as_strided((1,), (1,), 2)


@both()
def test_channels_last_layout_through_to_contiguous_and_clone(torch):
    x = torch.arange(120.0).reshape(2, 3, 4, 5).requires_grad_()
    y = x.to(memory_format=torch.channels_last)
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    assert y.stride() == (60, 1, 15, 3)
    assert not y.is_contiguous() and y.is_contiguous(memory_format=torch.channels_last)
    assert y.contiguous().stride() == (60, 20, 5, 1)
    assert y.contiguous(memory_format=torch.channels_last) is y
    z = x.contiguous(memory_format=torch.channels_last)
    assert type(z.grad_fn).__name__ == "CloneBackward0" and z.stride() == (60, 1, 15, 3)
    assert x.clone(memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
    np.testing.assert_allclose(values(y), values(x))
    (y * torch.arange(120.0).reshape(2, 3, 4, 5)).sum().backward()
    np.testing.assert_allclose(values(x.grad), np.arange(120.0).reshape(2, 3, 4, 5))
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        torch.ones(2, 3).contiguous(memory_format=torch.channels_last)
    assert repr(torch.channels_last) == "torch.channels_last"


@both()
def test_empty_strided_has_the_strides_asked_for(torch):
    c = torch.empty_strided((2, 2), (4, 2))
    assert tuple(c.shape) == (2, 2) and c.stride() == (4, 2) and not c.is_contiguous()
    c.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert c.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert torch.empty_strided((2, 3), (3, 1), dtype=torch.float64).dtype == torch.float64


@both()
def test_as_strided_of_an_expanded_tensor_counts_each_storage_element_once(torch):
    # every row of the expanded view is the same storage: the gradient reaching x must be the
    # storage element's gradient once (torch shares it among the aliases), not once per row
    x = torch.tensor([0.5, -1.0, 2.0, 3.0, 1.5], dtype=torch.float64, requires_grad=True)
    out = x.expand(5, 5).as_strided([5, 5], [0, 1], 0)
    weights = torch.arange(25.0, dtype=torch.float64).reshape(5, 5)
    (out * weights).sum().backward()
    np.testing.assert_allclose(values(x.grad), np.arange(25.0).reshape(5, 5).sum(0))
    y = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    fns = (lambda x: x.expand(5, 5).as_strided([5, 5], [0, 1], 0),
           lambda y: y.expand(10, 2, 3).as_strided([2, 3], [3, 1], 0))
    assert torch.autograd.gradcheck(fns[0], (x,))
    assert torch.autograd.gradgradcheck(fns[0], (x,))
    assert torch.autograd.gradcheck(fns[1], (y,))
    assert torch.autograd.gradgradcheck(fns[1], (y,))


@both()
def test_top_level_split_with_sizes(torch):
    x = torch.tensor([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]], requires_grad=True)
    a, b = torch.split_with_sizes(x, [1, 3], -1)
    assert tuple(a.shape) == (2, 1) and tuple(b.shape) == (2, 3)
    assert a._base is x and b.grad_fn.name() == "SplitWithSizesBackward0"
    (b * 2).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [[0, 2, 2, 2], [0, 2, 2, 2]])
