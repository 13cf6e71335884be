"""Forward-mode AD of funcgrad.mutable (torch.autograd.forward_ad, Function.jvp, gradcheck's
check_forward_ad), each case run on funcgrad.mutable and on real torch 2.13 (`both`).
Tangents are checked against central finite differences in float64; behaviours (views,
in-place writes, errors) against what torch does, ported from PyTorch's
TestAutogradForwardMode and rewritten."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm
from tests.mutable.pytorch_port import both, close, real_torch, values


def fd_jvp(torch, fn, primals, tangents, eps=1e-6):
    """(fn(p + eps t) - fn(p - eps t)) / 2 eps, in float64, on the library under test."""
    with torch.no_grad():
        plus = fn(*[p + eps * t for p, t in zip(primals, tangents)])
        minus = fn(*[p - eps * t for p, t in zip(primals, tangents)])
    return (values(plus) - values(minus)) / (2 * eps)


def jvp_of(torch, fn, primals, tangents):
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents)]
        out = fn(*duals)
        primal, tangent = fwAD.unpack_dual(out)
    return primal, tangent


FUNCTIONS = {
    "sin_exp": lambda torch, x, y: (x.sin() * y.exp()),
    "div_pow": lambda torch, x, y: x / (y * y + 1) + x ** 3,
    "matmul": lambda torch, x, y: x @ y.T,
    "reductions": lambda torch, x, y: x.sum(0) * y.mean() + (x * y).amax(0),
    "views": lambda torch, x, y: x.transpose(0, 1)[1:].reshape(-1) * y.view(-1)[:4],
    "tanh_log": lambda torch, x, y: (x.tanh() + (y * y + 1).log()).sum(1, keepdim=True),
    "broadcast_scalar": lambda torch, x, y: 2.0 * x - y[0] + 3,
    "cat_stack": lambda torch, x, y: (torch.cat([x, y * x], 0).sum(0)
                                      + torch.stack([x, y]).prod(0)[0]),
    "where_clamp": lambda torch, x, y: x.clamp(-0.5, 0.5) + y.relu() + torch.where(x > 0, x, y),
}


@both()
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_tangents_match_finite_differences(torch, name):
    def fn(x, y):
        return FUNCTIONS[name](torch, x, y)

    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((2, 3)), dtype=torch.float64)
    y = torch.tensor(rng.standard_normal((2, 3)), dtype=torch.float64)
    tx = torch.tensor(rng.standard_normal((2, 3)), dtype=torch.float64)
    ty = torch.tensor(rng.standard_normal((2, 3)), dtype=torch.float64)
    primal, tangent = jvp_of(torch, fn, (x, y), (tx, ty))
    close(primal, fn(x, y))
    np.testing.assert_allclose(values(tangent), fd_jvp(torch, fn, (x, y), (tx, ty)),
                               rtol=1e-6, atol=1e-8)


@both()
def test_levels_and_errors(torch):
    fwAD = torch.autograd.forward_ad
    foo, bar = torch.rand(2), torch.rand(2)
    assert fwAD._current_level == -1
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(foo, bar)
    with fwAD.dual_level() as level:
        assert level == 0 and fwAD._current_level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="Trying to set a forward gradient that has a "
                           r"different size than that of the original Tensor, this is not "
                           r"supported. Tensor is of size \[2\] while the given forward "
                           r"gradient is of size \[3\]."):
            fwAD.make_dual(foo, torch.rand(3))
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(foo, bar, level=3)
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, "
                           "but got: torch.int64"):
            fwAD.make_dual(torch.ones(2, dtype=torch.long), bar)
        with pytest.raises(ValueError, match="Expected tangent to be floating point or "
                           "complex, but got: torch.int64"):
            fwAD.make_dual(foo, torch.ones(2, dtype=torch.long))
        dual = fwAD.make_dual(foo, bar)
        with pytest.raises(RuntimeError, match="Making a dual Tensor based on a Tensor that "
                           "already has a forward gradient at the same level 0"):
            fwAD.make_dual(dual, bar)
        with pytest.raises(RuntimeError, match="Setting a forward grad that itself has a "
                           "forward gradient at the same level0"):
            fwAD.make_dual(torch.rand(2), dual)
        with pytest.raises(RuntimeError, match="Invalid level given to _fw_primal"):
            fwAD.unpack_dual(dual, level=5)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()
    assert fwAD._current_level == -1


@both()
def test_basic_packing_unpacking(torch):
    fwAD = torch.autograd.forward_ad
    foo, bar = torch.rand(2), torch.rand(2)
    with fwAD.dual_level():
        baz = fwAD.make_dual(foo, bar)
        unpacked = fwAD.unpack_dual(baz)
        assert type(unpacked).__name__ == "UnpackedDualTensor"
        assert unpacked._fields == ("primal", "tangent")
        close(unpacked.primal, foo)
        assert unpacked.tangent is bar
        assert fwAD.unpack_dual(baz).primal is not unpacked.primal  # a new view each time
        assert fwAD.unpack_dual(foo).tangent is None
        assert "tangent=" in str(baz) and "tangent=" not in str(foo)
        assert "tangent=" not in str(unpacked.primal)
    # leaving the level drops the tangents
    assert fwAD.unpack_dual(baz).tangent is None
    assert fwAD.unpack_dual(baz).primal is baz
    assert "tangent=" not in str(baz)
    with fwAD.dual_level():
        assert fwAD.unpack_dual(baz).tangent is None
        assert fwAD.unpack_dual(fwAD.make_dual(foo, bar) * 2).tangent is not None


@both()
def test_print_format(torch):
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([0.5, 0.25]))
        assert repr(d) == "tensor([1., 2.], tangent=tensor([0.5000, 0.2500]))"
        s = fwAD.make_dual(torch.tensor(3.0), torch.tensor(0.5))
        assert repr(s) == "tensor(3., tangent=0.5)"


@both()
def test_storage_version_and_backward_through_packing(torch):
    fwAD = torch.autograd.forward_ad
    foo, bar = torch.rand(2), torch.ones(2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        assert dual.data_ptr() == foo.data_ptr()
        assert dual._version == foo._version
        foo.add_(1)
        assert dual._version == foo._version
        primal, tangent = fwAD.unpack_dual(dual)
        assert primal.data_ptr() == foo.data_ptr()
        assert tangent is bar
    with fwAD.dual_level():
        foo.requires_grad_()
        bar.requires_grad_()
        dual = fwAD.make_dual(foo, bar)
        p, t = fwAD.unpack_dual(dual)
        gfoo, gbar = torch.autograd.grad(p.sum(), (foo, bar), retain_graph=True,
                                         allow_unused=True)
        close(gfoo, [1.0, 1.0])
        assert gbar is None
        gfoo, gbar = torch.autograd.grad(t.sum(), (foo, bar), retain_graph=True,
                                         allow_unused=True)
        assert gfoo is None
        close(gbar, [1.0, 1.0])
        # detach() drops the tangent, no_grad keeps it (without history)
        p, t = fwAD.unpack_dual(dual.detach() * 2)
        assert not p.requires_grad and t is None
        with torch.no_grad():
            out = dual * 3
        p, t = fwAD.unpack_dual(out)
        assert not p.requires_grad and not t.requires_grad
        close(t, values(bar) * 3)
        cloned = dual.clone()
        cloned.detach_()
        assert fwAD.unpack_dual(cloned * 2).tangent is None


@both()
def test_reverse_over_forward(torch):
    """The tangent is a tensor with history: its gradient is the second derivative."""
    fwAD = torch.autograd.forward_ad
    x = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([1.0, 2.0], dtype=torch.float64)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, v).sin() * x
        _, t = fwAD.unpack_dual(y)
        (g,) = torch.autograd.grad(t.sum(), x)
    xv, vv = values(x), values(v)
    # only the first factor carries the tangent: t = v cos(x) x, dt/dx = v (cos x - x sin x)
    close(g, vv * (np.cos(xv) - xv * np.sin(xv)))


@both()
def test_inplace_updates_tangent_and_views(torch):
    fwAD = torch.autograd.forward_ad
    original_foo = torch.rand(2, dtype=torch.float64)
    original_bar = torch.ones(2, dtype=torch.float64)
    foo, bar = original_foo.clone(), original_bar.clone()
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        dual *= 2
        assert fwAD.unpack_dual(foo).tangent is None  # make_dual's alias: no tangent flows
        close(bar, values(original_bar) * 2)  # the tangent was updated in place
        close(foo, values(original_foo) * 2)
        primal, tangent = fwAD.unpack_dual(dual)
        primal *= 2
        close(fwAD.unpack_dual(dual).tangent, values(original_bar) * 2)
        tangent *= 2
        close(fwAD.unpack_dual(dual).primal, values(original_foo) * 4)
        close(fwAD.unpack_dual(dual).tangent, values(original_bar) * 4)

    foo, bar = torch.rand(2), torch.ones(2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        view = dual.narrow(0, 0, 1)
        view *= 2
        assert fwAD.unpack_dual(foo).tangent is None
        close(fwAD.unpack_dual(dual).tangent, [2.0, 1.0])
        close(fwAD.unpack_dual(view).tangent, [2.0])
        baz = torch.rand(2)
        baz += dual
        close(fwAD.unpack_dual(baz).tangent, fwAD.unpack_dual(dual).tangent)
        baz = torch.rand(2)
        baz[0] = dual[0]
        close(fwAD.unpack_dual(baz).tangent, [2.0, 0.0])
        baz = torch.rand(2)
        view = baz.detach()
        view += dual
        assert fwAD.unpack_dual(baz).tangent is None


@both()
@pytest.mark.parametrize("op", ["add_", "mul_", "copy_"])
def test_inplace_into_view_gives_base_a_tangent(torch, op):
    fwAD = torch.autograd.forward_ad
    base = torch.randn(2, 2)
    view = base.transpose(0, 1)
    primal, tangent = torch.randn(2, 2), torch.randn(2, 2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        getattr(view, op)(dual)
        p, t = fwAD.unpack_dual(base)
        p_clone, t_clone = p.clone(), t.clone()
        view *= 2
        p, t = fwAD.unpack_dual(base)
        close(p, values(p_clone) * 2)
        close(t, values(t_clone) * 2)


@both()
def test_view_made_before_base_became_dual(torch):
    fwAD = torch.autograd.forward_ad
    base = torch.zeros(2, 3, dtype=torch.float64)
    view = base[1]
    with fwAD.dual_level():
        base.add_(fwAD.make_dual(torch.ones(2, 3, dtype=torch.float64),
                                 torch.arange(6.0, dtype=torch.float64).reshape(2, 3)))
        close(fwAD.unpack_dual(view * 2).tangent, [6.0, 8.0, 10.0])


@both()
def test_non_differentiable_outputs(torch):
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        foo = fwAD.make_dual(torch.rand(2), torch.rand(2))
        bar = torch.rand(2)
        eq = foo == bar
        assert fwAD.unpack_dual(eq).tangent is None
        foo.eq_(bar)
        assert fwAD.unpack_dual(foo.argmax()).tangent is None


@both()
def test_grad_cleanup(torch):
    fwAD = torch.autograd.forward_ad
    foo, bar, baz = torch.rand(2), torch.rand(2), torch.rand(2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        assert fwAD.unpack_dual(foo).tangent is None
        assert fwAD.unpack_dual(dual).tangent is bar
    assert fwAD.unpack_dual(dual).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(foo).tangent is None
        new_dual = fwAD.make_dual(foo, baz)
        close(fwAD.unpack_dual(dual).primal, fwAD.unpack_dual(new_dual).primal)
        assert fwAD.unpack_dual(dual).tangent is None
        assert fwAD.unpack_dual(new_dual).tangent is baz


@both()
def test_tangent_layout_copy(torch):
    fwAD = torch.autograd.forward_ad
    primal = torch.randn(5)[:4].detach()
    tangent = torch.randn(4)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        _, unpacked = fwAD.unpack_dual(dual)
        before = tangent.clone()
        unpacked *= 2  # a copy (the storages differ in size): the given tangent is unchanged
        close(tangent, before)


@both()
def test_fwd_grad_enabled(torch):
    fwAD = torch.autograd.forward_ad
    assert fwAD._is_fwd_grad_enabled()
    with fwAD._set_fwd_grad_enabled(False):
        assert not fwAD._is_fwd_grad_enabled()
        with fwAD.dual_level():
            d = fwAD.make_dual(torch.rand(2), torch.rand(2))
            assert fwAD.unpack_dual(d * 2).tangent is None
    assert fwAD._is_fwd_grad_enabled()


# --- custom Functions in forward mode --------------------------------------------------------
def mul_function(torch):
    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            ctx.tangent_seen = torch.autograd.forward_ad.unpack_dual(x).tangent
            return x * y * k

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            assert tk is None  # a number has no tangent
            x, y = ctx.saved_tensors  # save_for_forward's, without tangents
            assert torch.autograd.forward_ad.unpack_dual(x).tangent is None
            return (tx * y + ty * x) * ctx.k

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    return Mul


@both()
def test_custom_function_jvp(torch):
    fwAD = torch.autograd.forward_ad
    Mul = mul_function(torch)
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    y = torch.tensor([3.0, 4.0], dtype=torch.float64)
    with fwAD.dual_level():
        out = Mul.apply(fwAD.make_dual(x, torch.tensor([1.0, -1.0], dtype=torch.float64)), y,
                        2.0)
        p, t = fwAD.unpack_dual(out)
    close(p, [6.0, 16.0])
    close(t, [6.0, -8.0])  # y's tangent is given to jvp as zeros

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(output)

        @staticmethod
        def jvp(ctx, t):
            (y,) = ctx.saved_tensors
            return t * y

    with fwAD.dual_level():
        _, t = fwAD.unpack_dual(Exp.apply(fwAD.make_dual(x, torch.ones(2, dtype=torch.float64))))
    close(t, np.exp([1.0, 2.0]))


@both()
def test_custom_function_jvp_errors(torch):
    fwAD = torch.autograd.forward_ad
    Function = torch.autograd.Function

    class NoJvp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    class TwoOutputs(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    class WrongSize(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            return t[:1]

    class DirtyOutOfPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    class ViewNotView(Function):
        @staticmethod
        def forward(ctx, x):
            return x[:1]

        @staticmethod
        def jvp(ctx, t):
            return t[:1].clone()

    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.ones(2))
        with pytest.raises(NotImplementedError, match="You must implement the jvp function for "
                           "custom autograd.Function to use it with forward mode AD."):
            NoJvp.apply(d)
        with pytest.raises(RuntimeError, match=r"Function's jvp returned an invalid number of "
                           r"forward gradients \(expected 2 but got 1\)"):
            TwoOutputs.apply(d)
        with pytest.raises(RuntimeError, match="Trying to set a forward gradient that has a "
                           "different size"):
            WrongSize.apply(d)
        with pytest.raises(RuntimeError, match="An inplace custom Function is not modifying the "
                           "forward mode gradients inplace"):
            DirtyOutOfPlace.apply(d.clone())
        with pytest.raises(RuntimeError, match=r"A custom Function's forward is returning a view "
                           r"\(or an input as-is\) but the jvp is not returning a view."):
            ViewNotView.apply(d)


@both()
def test_custom_function_jvp_inplace_and_view(torch):
    fwAD = torch.autograd.forward_ad
    Function = torch.autograd.Function

    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def jvp(ctx, t):
            t.mul_(2)
            return t

    class Head(Function):
        @staticmethod
        def forward(ctx, x):
            return x[:1]

        @staticmethod
        def jvp(ctx, t):
            return t[:1]

    with fwAD.dual_level():
        tangent = torch.ones(2)
        d = fwAD.make_dual(torch.tensor([1.0, 2.0]), tangent)
        out = Double.apply(d)
        close(fwAD.unpack_dual(out).primal, [2.0, 4.0])
        close(fwAD.unpack_dual(out).tangent, [2.0, 2.0])
        close(tangent, [2.0, 2.0])  # written in place
        head = Head.apply(fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([5.0, 6.0])))
        close(fwAD.unpack_dual(head).tangent, [5.0])


# --- gradcheck(check_forward_ad=True) --------------------------------------------------------
@both()
def test_gradcheck_forward_ad(torch):
    gradcheck = torch.autograd.gradcheck
    x = torch.rand(3, dtype=torch.float64, requires_grad=True)
    y = torch.rand(3, 2, dtype=torch.float64, requires_grad=True)
    fn = lambda a, b: (a.sin() @ b).exp()  # noqa: E731
    assert gradcheck(fn, (x, y), check_forward_ad=True)
    assert gradcheck(fn, (x, y), check_forward_ad=True, check_backward_ad=False)
    z = torch.rand(3, dtype=torch.complex128, requires_grad=True)
    assert gradcheck(lambda a: (a * a.conj()).real + a.abs(), (z,), check_forward_ad=True)
    assert gradcheck(lambda a: a.exp() * 2j, (z,), check_forward_ad=True)
    assert torch.autograd.gradgradcheck(lambda a: (a ** 3).sin(), (x,), check_fwd_over_rev=True)


@both()
def test_gradcheck_forward_ad_catches_a_wrong_jvp(torch):
    class WrongJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_forward(a)
            ctx.save_for_backward(a)
            return a.sin()

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * a.cos()

        @staticmethod
        def jvp(ctx, t):
            (a,) = ctx.saved_tensors
            return t * a.cos() * 2  # twice the derivative

    x = torch.rand(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(WrongJvp.apply, (x,))  # backward alone is right
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for "
                       "output 0 with respect to input 0"):
        torch.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True)
    assert not torch.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True,
                                        raise_exception=False)


# --- tangents against torch's, op by op (torch is the oracle) --------------------------------
def _setitem(x, y):
    z = x.clone()
    z[1] = y[0] * 2
    z[:, 2] = 0.0
    return z


def _write_through_view(x, y):
    z = x.clone()
    z[:, 1:3].mul_(y[:, :2])
    return z


OPS = {
    # primitives with a JVP rule in the table
    "tan": lambda t, x, y: x.tan(), "atan2": lambda t, x, y: t.atan2(x, y),
    "maximum": lambda t, x, y: t.maximum(x, y), "lerp": lambda t, x, y: t.lerp(x, y, 0.3),
    "prod": lambda t, x, y: x.prod(1), "cumprod": lambda t, x, y: x.cumprod(1),
    "logsumexp": lambda t, x, y: x.logsumexp(1), "softmax": lambda t, x, y: x.log_softmax(1),
    "sort": lambda t, x, y: x.sort(1).values, "gather": lambda t, x, y: x.gather(
        1, t.tensor([[0, 1], [2, 3], [1, 1]])),
    "einsum": lambda t, x, y: t.einsum("ij,kj->ik", x, y), "as_strided": lambda t, x, y:
        x.as_strided((2, 2), (1, 2)),
    # primitives with only a VJP rule: the JVP is its transpose
    "masked_fill": lambda t, x, y: x.masked_fill(x > 0, 2.0), "tril": lambda t, x, y: x.tril(),
    "repeat": lambda t, x, y: x.repeat(2, 1), "trace": lambda t, x, y: x[:, :3].trace(),
    "vector_norm": lambda t, x, y: t.linalg.vector_norm(x, dim=1),
    "var": lambda t, x, y: x.var(0),
    "addmm": lambda t, x, y: t.addmm(x[:, :3], x, y.T),
    "mse_loss": lambda t, x, y: t.nn.functional.mse_loss(x, y),
    "cross_entropy": lambda t, x, y: t.nn.functional.cross_entropy(x, t.tensor([0, 3, 1])),
    "scatter_add": lambda t, x, y: x.scatter_add(1, t.tensor([[0, 1, 0, 1]] * 3), y),
    "index_add": lambda t, x, y: x.index_add(0, t.tensor([0, 0, 2]), y),
    "median": lambda t, x, y: x.median(1).values, "renorm": lambda t, x, y: x.renorm(2, 0, 1.0),
    "gelu": lambda t, x, y: t.nn.functional.gelu(x),
    # in-place
    "mul_": lambda t, x, y: x.clone().mul_(y),
    "clamp_": lambda t, x, y: x.clone().clamp_(-0.5, 0.5),
    "masked_fill_": lambda t, x, y: x.clone().masked_fill_(x > 0, 1.0),
    "index_put_": lambda t, x, y: x.clone().index_put_((t.tensor([0, 2]),), y[0]),
    "fill_": lambda t, x, y: x.clone().fill_(2.0) * y, "t_": lambda t, x, y: x.clone().t_(),
    "unsqueeze_": lambda t, x, y: x.clone().unsqueeze_(0),
    "setitem": lambda t, x, y: _setitem(x, y),
    "through_view": lambda t, x, y: _write_through_view(x, y),
    "copy_": lambda t, x, y: t.zeros(3, 4, dtype=t.float64).copy_(x),
}


@pytest.mark.skipif(real_torch is None, reason="real torch is not installed: no oracle")
@pytest.mark.parametrize("name", sorted(OPS))
def test_tangent_equals_torchs(name):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((3, 4)) for _ in range(4)]
    found = []
    for lib in (fm, real_torch):
        fwAD = lib.autograd.forward_ad
        x, y, tx, ty = (lib.tensor(a, dtype=lib.float64) for a in arrays)
        with fwAD.dual_level():
            out = OPS[name](lib, fwAD.make_dual(x, tx), fwAD.make_dual(y, ty))
            primal, tangent = fwAD.unpack_dual(out)
            found.append((values(primal), values(tangent)))
    (ours_p, ours_t), (torch_p, torch_t) = found
    np.testing.assert_allclose(ours_p, torch_p, rtol=1e-10, atol=1e-12)
    assert ours_t.shape == torch_t.shape
    np.testing.assert_allclose(ours_t, torch_t, rtol=1e-8, atol=1e-10)


@both()
def test_transposed_rule_keeps_backward_history(torch):
    """A tangent made by transposing a VJP rule (tril has no JVP rule) is differentiable."""
    fwAD = torch.autograd.forward_ad
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64, requires_grad=True)
    with fwAD.dual_level():
        out = (fwAD.make_dual(x, v) * x).tril()
        _, t = fwAD.unpack_dual(out)
        gx, gv = torch.autograd.grad(t.sum(), (x, v))
    # only the dual factor carries the tangent: t = tril(v x), d/dx = mask v, d/dv = mask x
    mask = np.tril(np.ones((2, 2)))
    close(gx, mask * values(v))
    close(gv, mask * values(x))


@both()
def test_copied_tangent_has_the_primals_storage_layout(torch):
    """A tangent laid out otherwise is copied into the primal's layout, so views the dual
    makes of its storage (as_strided beyond its own elements) fit the tangent too."""
    fwAD = torch.autograd.forward_ad
    primal = torch.arange(5.0)[:4].detach()
    tangent = torch.arange(10.0, 14.0)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual).tangent is not tangent
        p, t = fwAD.unpack_dual(dual.as_strided((5,), (1,), 0))
        close(p, [0.0, 1.0, 2.0, 3.0, 4.0])
        close(t, [10.0, 11.0, 12.0, 13.0, 0.0])
        same = torch.arange(4.0)
        assert fwAD.unpack_dual(fwAD.make_dual(torch.ones(4), same)).tangent is same


@both()
def test_out_variant_refused_and_inference_tensors(torch):
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        foo = fwAD.make_dual(torch.rand(2), torch.rand(2))
        bar = torch.rand(2)
        for out, args in ((foo, (bar, bar)), (bar, (foo, bar))):
            with pytest.raises(RuntimeError, match="Trying to use forward AD with add_out that "
                               "does not support it because it is an out= function"):
                torch.add(*args, out=out)
        assert type(foo.detach().numpy()) is np.ndarray
    with torch.inference_mode():
        foo = torch.rand(2)
        copy = foo.clone()
        with fwAD.dual_level():
            dual = fwAD.make_dual(foo, torch.rand(2))
            assert not dual._is_view()
            dual += 1
            close(foo, values(copy) + 1)


@both()
def test_level_keeps_no_tangent_alive(torch):
    fwAD = torch.autograd.forward_ad
    foo = torch.rand(2)
    with fwAD.dual_level():
        tangent = torch.rand(2, requires_grad=True)
        ref = torch._C._WeakTensorRef(tangent)
        dual = fwAD.make_dual(foo, tangent)
        assert fwAD.unpack_dual(dual).tangent is tangent
        del tangent
        assert not ref.expired()  # the dual keeps it
        del dual
        assert ref.expired()  # the level does not


@both()
def test_custom_function_jvp_outputs_without_tangent(torch):
    fwAD = torch.autograd.forward_ad
    Function = torch.autograd.Function

    class WithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            index = x.clone()
            ctx.mark_non_differentiable(index)
            return x * 2, index

        @staticmethod
        def jvp(ctx, t):
            return t * 2, t

    class WithNumber(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k, k

        @staticmethod
        def jvp(ctx, t, tk):
            return t * 2, None

    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.ones(2))
        with pytest.raises(RuntimeError, match="Function's jvp returned a gradient at position "
                           "1, but  the corresponding forward output is not a differentiable "
                           "Tensor"):
            WithIndex.apply(d)
        out, k = WithNumber.apply(d, 2.0)
        assert k == 2.0
        close(fwAD.unpack_dual(out).tangent, [2.0, 2.0])
        ctx = torch.autograd.function.FunctionCtx()
        with pytest.raises(AssertionError, match="save_for_forward expects all arguments to be "
                           "tensors"):
            ctx.save_for_forward(d, 1.0)


@both(xfail="dual tensors inside torch.autograd.functional are refused with a clear error "
            "(the two mechanisms do not compose yet)")
def test_dual_tensor_closed_over_by_autograd_functional(torch):
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([2.0, 3.0]), torch.ones(2))
        jac = torch.autograd.functional.jacobian(lambda x: x * d, torch.ones(2))
    close(jac, [[2.0, 0.0], [0.0, 3.0]])


@both()
def test_fwd_grad_mode_through_torch_C(torch):
    fwAD = torch.autograd.forward_ad
    assert fwAD._is_fwd_grad_enabled() and torch._C._is_fwd_grad_enabled()
    try:
        torch._C._set_fwd_grad_enabled(False)
        assert not fwAD._is_fwd_grad_enabled()
        with fwAD._set_fwd_grad_enabled(True):
            assert fwAD._is_fwd_grad_enabled()
        assert not fwAD._is_fwd_grad_enabled()
    finally:
        torch._C._set_fwd_grad_enabled(True)
    assert fwAD._is_fwd_grad_enabled()
