"""Indexing, deprecations and assorted ops from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import numpy as np
import pytest

from pytorch_port import both, close, values


def check_index(torch, x, idx):
    y = torch.autograd.Variable(x.clone(), requires_grad=True)
    picked = y[idx]
    want = x[idx]
    if not isinstance(want, torch.Tensor):
        want = torch.tensor(want)
    assert picked.data.tolist() == want.tolist()
    picked.sum().backward()
    expected = np.zeros(tuple(x.shape))
    np.add.at(expected, idx if not isinstance(idx, torch.Tensor) else np.asarray(idx.tolist()), 1)
    return values(y.grad), expected


@both()
def test_indexing_gradients_2d(torch):
    x = torch.arange(1.0, 17).view(4, 4)
    for idx in (1, (1, 1), slice(1, None), slice(None, 2), (slice(None, 2), 2),
                (slice(1, 2), 2), (1, slice(2, None)), (slice(None), slice(2, None)),
                (Ellipsis, slice(2, None)), ([0], [0]), ([1, 2, 3], [0]), ([1, 2], [2, 1]),
                ([[1, 2], [3, 0]], [[0, 1], [2, 3]]), (slice(None), [2, 3]),
                ([2, 3], slice(None)), [0], ([0],)):
        got, want = check_index(torch, x, idx)
        assert got.tolist() == want.tolist(), idx
    y = x.clone().requires_grad_()
    y[torch.LongTensor([0, 2])].sum().backward()
    assert values(y.grad)[[0, 2]].sum() == 8 and values(y.grad).sum() == 8
    mask = torch.tensor([[True, False, True, False]] * 4)
    y = x.clone().requires_grad_()
    y[mask].sum().backward()
    assert y.grad.tolist() == [[1.0, 0.0, 1.0, 0.0]] * 4


@both()
def test_indexing_gradients_3d(torch):
    x = torch.arange(1.0, 49).view(4, 3, 4)
    for idx in ((slice(None), [0], [0]), ([0], [0], slice(None)), (slice(None), [0, 1, 2], [0]),
                ([0, 1, 2], [0], slice(None)), (slice(None), [1, 2], [2, 1]),
                ([1, 2], [2, 1], slice(None)), (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]),
                ([[1, 2], [3, 0]], [[0, 1], [2, 2]], slice(None)), (slice(None), slice(None), [2, 1]),
                (slice(None), [2, 1], slice(None)), ([2, 1], slice(None), slice(None)), ([0],),
                ([0], slice(None)), ([0], Ellipsis), ([1, 2], [0, 1]), ([1, 2], [0, 1], Ellipsis),
                (Ellipsis, [1, 2], [0, 1])):
        got, want = check_index(torch, x, idx)
        assert got.tolist() == want.tolist(), idx
    y = torch.autograd.Variable(x.clone(), requires_grad=True)
    z = torch.autograd.Variable(torch.LongTensor([0, 1]), requires_grad=False)
    y[(z, Ellipsis)].sum().backward()
    assert values(y.grad)[:2].sum() == 24 and values(y.grad).sum() == 24


@both()
def test_indexing_with_repeated_indices_accumulates(torch):
    y = torch.arange(1.0, 17).view(4, 4).requires_grad_()
    y[torch.LongTensor([1, 1, 3, 2, 1, 2])].sum().backward()
    assert values(y.grad)[:, 0].tolist() == [0.0, 3.0, 2.0, 1.0]
    y = torch.arange(1.0, 17).view(4, 4).requires_grad_()
    y[[1, 1, 3, 2, 1, 2], [0]].sum().backward()
    assert values(y.grad)[:, 0].tolist() == [0.0, 3.0, 2.0, 1.0]
    assert values(y.grad)[:, 1:].sum() == 0
    y = torch.arange(1.0, 17).view(4, 4).requires_grad_()
    y[[[1, 2], [0, 0]], [[0, 1], [1, 1]]].sum().backward()
    assert y.grad.tolist() == [[0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0],
                               [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    y = torch.arange(1.0, 65).view(4, 4, 4).requires_grad_()
    y[[1, 1, 1], :, :].sum().backward()
    g = values(y.grad)
    assert (g[1] == 3).all() and g.sum() == 48


@both()
def test_index_put_from_its_own_index_does_not_save(torch):
    a = torch.tensor([1.0, 0, 0])
    b = torch.zeros(3, requires_grad=True)
    t = b + 0
    t[a != 0] = t[a != 0]
    t.backward(torch.zeros_like(t))
    assert b.grad.tolist() == [0.0, 0.0, 0.0]


@both()
def test_volatile_is_deprecated(torch):
    v = torch.randn(2, 2)
    with pytest.warns(UserWarning, match="volatile"):
        assert not v.volatile


@both()
def test_saved_variables_is_deprecated(torch):
    class Add(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a + b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_variables
            return g, g

    x = torch.randn(2, 2, requires_grad=True)
    y = torch.randn(2, 2, requires_grad=True)
    with pytest.warns(Warning) as caught:
        Add.apply(x, y).sum().backward()
    assert any("deprecated" in str(w.message) and "saved_variables" in str(w.message)
               for w in caught)
    assert x.grad.tolist() == [[1.0, 1.0]] * 2


@both()
def test_first_grad_fn_of_a_complex_view_under_no_grad(torch):
    a = torch.tensor([1 + 1j], requires_grad=True).clone()
    v = a.real
    a.add_(1)
    with torch.autograd.grad_mode.no_grad():
        assert v.grad_fn is not None
    assert v.tolist() == [2.0]


@both()
def test_var_mean_matches_var_and_mean(torch):
    torch.manual_seed(0)
    x1 = torch.randn(3, 4, 5, 2, dtype=torch.float64, requires_grad=True)
    x2 = x1.detach().clone().requires_grad_()
    v1, m1 = torch.var_mean(x1, dim=[1, 3], keepdim=False)
    v2, m2 = x2.var(dim=[1, 3], keepdim=False), x2.mean(dim=[1, 3], keepdim=False)
    r1, r2 = v1 * v1 * m1 * m1, v2 * v2 * m2 * m2
    close(r1, r2)
    g = torch.randn(3, 5, dtype=torch.float64)
    torch.autograd.backward(r1, g)
    torch.autograd.backward(r2, g)
    close(x1.grad, x2.grad)


@both()
def test_backward_after_a_reference_cycle_is_collected(torch):
    import gc

    def make():
        inp = torch.randn(6, requires_grad=True)
        tmp = inp.view(6, 1)
        out = tmp.view(6)
        cycle = [tmp]
        cycle.append(cycle)
        return out, inp

    out, inp = make()
    gc.collect()
    out.backward(torch.ones(out.size()))
    assert inp.grad.tolist() == [1.0] * 6


@both()
@pytest.mark.parametrize("size,exponent", [((10,), "zeros"), ((4, 4), "zeros"), ((10,), 0)])
def test_zero_to_the_zero_has_zero_slope(torch, size, exponent):
    x = torch.zeros(*size, requires_grad=True)
    e = torch.zeros(*size) if exponent == "zeros" else exponent
    x.pow(e).sum().backward()
    assert x.grad.abs().sum().item() == 0


@both()
def test_shape_and_dir(torch):
    x = torch.randn(3, 4)
    assert len(x.shape) == 2 and x.shape[0] == 3 and x.shape[1] == 4
    keys = dir(x)
    assert "shape" in keys
    y = torch.randn(2, 2, dtype=torch.cfloat)
    with pytest.raises(RuntimeError):
        hasattr(x, "imag")
    assert hasattr(y, "imag")
    keys.remove("imag")
    for key in keys:
        assert hasattr(x, key), key


@both()
def test_integer_valued_outputs_do_not_require_grad(torch):
    inp = torch.rand(4, requires_grad=True)
    for out in (inp.argmax(), inp.argmin(), inp.argsort(),
                torch.searchsorted(inp.detach().sort().values, torch.rand((), requires_grad=True)),
                torch.bucketize(torch.rand(3, 3, requires_grad=True),
                                torch.linspace(0, 1.0, steps=10, requires_grad=True)),
                torch.empty(4).requires_grad_().count_nonzero()):
        assert not out.dtype.is_floating_point and not out.requires_grad
    for sort in (True, False):
        for inverse in (True, False):
            for counts in (True, False):
                for res in (torch.unique(inp, sorted=sort, return_inverse=inverse,
                                         return_counts=counts),
                            torch.unique(inp, sorted=sort, return_inverse=inverse,
                                         return_counts=counts, dim=0),
                            torch.unique_consecutive(inp, return_inverse=inverse,
                                                     return_counts=counts)):
                    res = res if isinstance(res, tuple) else (res,)
                    assert res[0].requires_grad
                    assert all(not r.requires_grad for r in res[1:])


@both()
def test_custom_function_with_an_in_place_step_inside(torch):
    class Head(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp, inplace):
            view = inp.clone()[:3]
            if inplace:
                view += 2
            return view

        @staticmethod
        def backward(ctx, g):
            return g, None

    base = torch.rand(10, requires_grad=True)
    for inplace in (False, True):
        out = Head.apply(base, inplace)
        assert out.grad_fn.__class__.__name__ == "HeadBackward"


@both()
def test_saved_operands_are_the_same_objects(torch):
    a = torch.randn(5, requires_grad=True)
    a_orig = a.detach().clone()
    b = a * a
    c = a * b
    d = torch.exp(a)
    assert b.grad_fn._saved_self is a and b.grad_fn._saved_other is a
    assert c.grad_fn._saved_self is a and c.grad_fn._saved_other is b
    assert d.grad_fn._saved_result.tolist() == d.tolist()
    assert d.grad_fn._saved_result is not d
    c.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        c.grad_fn._saved_self
    assert a.tolist() == a_orig.tolist()


@both()
def test_saved_result_shares_the_version_counter(torch):
    a = torch.rand(2, requires_grad=True)
    b = torch.exp(a)
    saved = b.grad_fn._saved_result
    assert saved.tolist() == b.tolist() and saved._version == b._version
    with torch.no_grad():
        b += 1
    assert saved.tolist() == b.tolist() and saved._version == b._version


@both()
def test_detaching_a_saved_input_in_place(torch):
    a = torch.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="Trying to use a saved tensor that has been detached"):
        b.backward()
    a = torch.tensor(1.0, requires_grad=True).clone()
    b = a.exp()
    a.detach_()
    b.backward()


@both()
def test_randint_with_high_and_size_keyword(torch):
    torch.manual_seed(0)
    a = torch.randint(600, size=(3,))
    torch.manual_seed(0)
    b = torch.randint(0, 600, (3,))
    assert a.tolist() == b.tolist() and a.dtype == torch.int64
    assert all(0 <= v < 600 for v in a.tolist())


@both()
def test_indexing_with_a_range(torch):
    x = torch.arange(12.0).view(3, 4).requires_grad_()
    y = x[range(3), torch.tensor([0, 1, 2])]
    assert y.tolist() == [0.0, 5.0, 10.0] and y.grad_fn.name() == "IndexBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]]
    assert tuple(x.detach()[range(1, 3)].shape) == (2, 4)


@both()
def test_calculate_shape_and_torch_reached_through_autograd(torch):
    out = torch.randn(10, 5, requires_grad=True)
    grad = torch.randn(5, 10, requires_grad=True)
    assert torch.autograd._calculate_shape(out, grad, False) == (torch.Size([10, 5]),
                                                                 torch.Size([5, 10]))
    assert torch.autograd._calculate_shape(out, torch.ones(3, 10, 5), True) == (
        torch.Size([10, 5]), torch.Size([10, 5]))
    edge = torch.autograd.graph.get_gradient_edge(out * 2)
    assert torch.autograd._calculate_shape(edge, grad, False) == (torch.Size([10, 5]),
                                                                  torch.Size([5, 10]))
    with pytest.raises(RuntimeError, match="Batched grads are not supported with GradientEdge"):
        torch.autograd._calculate_shape(edge, grad, True)
    assert torch.autograd.torch is torch
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert torch.autograd.torch.randn(3, 3).volatile is False
