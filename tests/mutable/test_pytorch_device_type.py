"""PyTorch's device-generic autograd tests (TestAutogradDeviceType), on the CPU from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import numpy as np
import pytest

from pytorch_port import both, close, values


@both()
@pytest.mark.parametrize("name", ["min", "max", "median", "nanmedian"])
def test_full_reductions_share_the_gradient_among_ties(torch, name):
    f = getattr(torch, name)
    for data in ([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [float("nan")] * 3):
        x = torch.tensor(data, requires_grad=True)
        f(x).backward()
        assert abs(x.grad.sum().item() - 1.0) < 1e-6
        assert (x.grad == 1 / 3).sum().item() == 3


@both()
def test_parameter_shrunk_by_set_under_no_grad(torch):
    p = torch.nn.Parameter(torch.ones(6, dtype=torch.float64))
    for _ in range(2):
        with torch.no_grad():
            p.set_(p[1:])
            p.grad = None
        torch.cat((p, p)).sum().backward()
    assert p.grad.tolist() == [2.0] * 4


@both()
def test_python_scalar_conversions(torch):
    import math
    import sys
    l = torch.zeros(1, 1, 1, dtype=torch.long)
    l[0] = -12345
    assert int(l) == -12345
    f = torch.autograd.Variable(torch.randn(1, 1, dtype=torch.double))
    f[0] = -12345.1
    assert float(f) == -12345.1
    f[0] = float("nan")
    assert math.isnan(float(f))
    f[0] = float("inf")
    assert float(f) == float("inf")
    big = 1234567890123456789
    l[0] = big
    assert float(l) == float(big)
    f[0] = float("nan")
    with pytest.raises(ValueError):
        int(f[0])
    f[0] = float("inf")
    with pytest.raises(OverflowError):
        int(f[0])
    f[0] = sys.float_info.max
    assert int(f) == sys.float_info.max
    for t, value, expected in ((l, 0, False), (l, -2, True), (f, 0.0, False),
                               (f, sys.float_info.min, True), (f, float("inf"), True)):
        t[0] = value
        assert bool(t) is expected


@both()
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int32", "int64"])
def test_only_floating_tensors_can_require_grad(torch, dtype):
    dt = getattr(torch, dtype)
    a = torch.ones(1, dtype=dt)
    a.requires_grad = False
    a.requires_grad_(False)

    def by_method():
        torch.ones(1, dtype=dt).requires_grad_()

    def by_attribute():
        torch.ones(1, dtype=dt).requires_grad = True

    def by_factory():
        torch.ones(1, dtype=dt, requires_grad=True)

    for make in (by_method, by_attribute, by_factory):
        if dt.is_floating_point:
            make()
        else:
            with pytest.raises(RuntimeError, match="floating point"):
                make()


@both()
def test_scatter_reduce_amin_amax_share_ties(torch):
    for reduction in ("amin", "amax"):
        inp = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64,
                           requires_grad=True)
        src = inp.clone().detach_().requires_grad_(True)
        idx = torch.arange(2).unsqueeze(-1).expand((2, 3))
        out = torch.scatter_reduce(inp, 0, idx, src, reduction)
        out.sum().backward()
        assert inp.grad.tolist() == [[0.5] * 3] * 2
        assert src.grad.tolist() == [[0.5] * 3] * 2


@both()
def test_scatter_reduce_values(torch):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    idx = torch.tensor([0, 1, 0, 1])
    base = torch.tensor([10.0, 20.0])
    for reduce, want in (("sum", [14.0, 26.0]), ("prod", [30.0, 160.0]),
                         ("amax", [10.0, 20.0]), ("amin", [1.0, 2.0]), ("mean", [14 / 3, 26 / 3])):
        got = base.scatter_reduce(0, idx, x, reduce)
        np.testing.assert_allclose(values(got), want, rtol=1e-6)
    got = base.scatter_reduce(0, idx, x, "sum", include_self=False)
    assert got.tolist() == [4.0, 6.0]
    got.sum().backward()
    assert x.grad.tolist() == [1.0] * 4


@both()
def test_where_with_tensors_and_numbers_passes_gradcheck(torch):
    cond = torch.tensor([[True, False, True], [False, True, False], [True, True, False]])
    x = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    y = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(torch.where, [cond, x, y])
    assert torch.autograd.gradgradcheck(torch.where, [cond, x, y])
    x = torch.randn(3, 1, 3, dtype=torch.float64, requires_grad=True)
    y = torch.randn(3, 3, 1, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(torch.where, [cond, x, y])
    x = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda c, t: torch.where(c, 4.0, t), (cond, x))
    assert torch.autograd.gradcheck(lambda c, t: torch.where(c, t, 4.0), (cond, x))


@both()
def test_grad_assignment_checks(torch):
    x = torch.randn(3, 3)
    with pytest.raises(TypeError, match="expected to be a Tensor or None"):
        x.grad = 0
    with pytest.raises(RuntimeError):
        x.grad = torch.randn(2, 2)
    with pytest.raises(RuntimeError):
        x.grad = torch.randn(3, 3).to(torch.long)
    with pytest.raises(RuntimeError):
        x.grad = x


@both()
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_like_factories_take_requires_grad(torch, dtype):
    dt = getattr(torch, dtype)
    x = torch.randn(2, 3, dtype=dt)
    for fn in (torch.ones_like, torch.randn_like):
        for requires_grad in (True, False):
            out = fn(x, dtype=dt, device="cpu", requires_grad=requires_grad)
            assert out.requires_grad == requires_grad and out.dtype is dt
            assert str(x.device) == "cpu"


@both()
def test_copy_into_other_float_types_requires_grad(torch):
    x = torch.randn(6, requires_grad=True)
    for dt in (torch.float32, torch.float64, torch.float16):
        y = torch.empty(6, dtype=dt)
        y.copy_(x)
        assert y.requires_grad


@both()
def test_in_place_on_views_and_backprop(torch):
    root = torch.randn(2, 2, requires_grad=True)
    x = root.clone()
    x.narrow(0, 0, 1).mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[2, 2], [1, 1]]
    root = torch.randn(2, 2, requires_grad=True)
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v2 = x.narrow(0, 0, 1)
    v1.mul_(2)
    v2.sum().backward()
    assert root.grad.tolist() == [[2, 2], [0, 0]]
    root = torch.randn(2, 2, requires_grad=True)
    x = root.clone()
    x.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[1, 2], [1, 1]]
    root = torch.ones(2, 3, 2).select(2, 1).t().requires_grad_(True)
    x = root.clone()
    x.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[1, 2], [1, 1], [1, 1]]


@both()
def test_in_place_on_a_view_then_no_grad_refresh(torch):
    a = torch.ones(3, 1, dtype=torch.float64, requires_grad=True)
    c = (a * 2).view_as(a)
    c[0][0] = 3
    with torch.no_grad():
        c.grad_fn
    c.sum().backward()
    assert a.grad.tolist() == [[0.0], [2.0], [2.0]]


@both()
def test_in_place_on_views_passes_gradcheck(torch):
    a = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)

    def func(root, b):
        x = root.clone()
        x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
        x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
        return x

    assert torch.autograd.gradcheck(func, [a, b])
    go = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(func, (a, b), (go,))


@both()
def test_in_place_on_multi_output_views_is_refused(torch):
    root = torch.arange(9.0, dtype=torch.float64).reshape(3, 3).requires_grad_()
    with pytest.raises(RuntimeError):
        root.clone().unbind()[0].mul_(2)
    a = torch.rand(10, dtype=torch.float64, requires_grad=True).clone()
    with pytest.raises(RuntimeError):
        a.unbind(0)[0].view_as(a.unbind(0)[0]).mul_(2)
    with pytest.raises(RuntimeError):
        a.view_as(a).unbind(0)[0].mul_(2)
    for split in (lambda t: t.split(1), lambda t: t.split_with_sizes((1, 1, 1)),
                  lambda t: t.chunk(3)):
        b = torch.randn(3, 3, requires_grad=True) * 2
        s1, s2, s3 = split(b)
        with pytest.raises(RuntimeError, match="This view is the output of a function that "
                                               "returns multiple views."):
            s1.mul_(s2)


@both()
def test_in_place_on_a_view_makes_its_base_require_grad(torch):
    a = torch.randn(4, 4, dtype=torch.float64)
    b = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)

    def func(root, b):
        x = root.clone()
        assert not x.requires_grad
        x.narrow(1, 2, 2).mul_(b)
        assert x.requires_grad
        return x

    assert torch.autograd.gradcheck(func, [a, b])
    a = torch.tensor([2.0, 5.0])
    b = torch.tensor([3.0], requires_grad=True)
    a.narrow(0, 1, 1).mul_(b).sum().backward()
    assert b.grad.tolist() == [5.0] and a.grad is None


@both()
def test_in_place_on_a_base_reaches_earlier_views(torch):
    r = torch.ones(1, dtype=torch.float64, requires_grad=True)

    def fn(r):
        x = torch.ones(5, dtype=torch.float64)
        v = x.select(0, 1)
        assert not v.requires_grad and v.grad_fn is None
        x.add_(r)
        assert v.requires_grad
        return v

    assert torch.autograd.gradcheck(fn, [r])
    assert torch.autograd.gradgradcheck(fn, [r])


@both()
def test_custom_in_place_function_on_views_passes_gradcheck(torch):
    class PyAdd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.add_(y)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, g

    def func(root, b):
        x = root.clone()
        PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        PyAdd.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        return x

    a = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(func, [a, b])


@both()
def test_custom_in_place_on_a_view_with_unused_input(torch):
    a = torch.tensor([1.0], requires_grad=True)
    v = a.clone()[:]
    b = torch.tensor(1.0, requires_grad=True)

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, other):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    Double.apply(v, b).backward()
    assert b.grad is None and a.grad.item() == 2


@both()
def test_matrix_times_expanded_vector(torch):
    mat = torch.randn(2, 2, dtype=torch.float64)
    vec = torch.randn(1, dtype=torch.float64).requires_grad_(True)
    fn = lambda v: (mat @ v.expand(2)).sum()  # noqa: E731
    assert torch.autograd.gradcheck(fn, (vec,))
    assert torch.autograd.gradgradcheck(fn, (vec,))


@both()
def test_real_to_complex_copy_and_to(torch):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out_c = torch.empty(3, 2, dtype=torch.cdouble)
        inp = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
        out_c.copy_(inp)
        s = out_c.sum()
        s.abs().backward()
        with torch.no_grad():
            close(inp.grad, np.ones((3, 2)) * torch.sgn(s).real.item())
        inp = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
        s = inp.to(torch.complex128).sum()
        s.abs().backward()
        with torch.no_grad():
            close(inp.grad, np.ones((3, 2)) * torch.sgn(s).real.item())


@both()
def test_boolean_results_do_not_require_grad(torch):
    x = torch.tensor([[1, 2], [3, 4.0]], requires_grad=True)
    assert not torch.isin(x, torch.tensor([2, 3])).requires_grad
    assert not torch.signbit(torch.randn(3, 3, requires_grad=True)).requires_grad


@both()
def test_complex_output_needs_an_explicit_gradient(torch):
    a = torch.zeros(1, requires_grad=True)
    b = a * 0.5j
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar "
                                           "outputs"):
        b.backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar "
                                           "outputs"):
        torch.autograd.grad(b, a)


@both()
def test_resize_bumps_the_version_only_when_it_changes_the_shape(torch):
    x = torch.rand((1,))
    y = torch.randn((3,))
    x.resize_((1, 2))
    assert x._version == 1
    x.resize_as_(y)
    assert x._version == 2
    x.resize_((3,))
    assert x._version == 2
    x.resize_as_(y)
    assert x._version == 2
