"""Custom autograd.Function behaviours from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import numpy as np
import pytest

from pytorch_port import both, close, graph, values, passthrough


def three_arg_function(torch, once):
    class Affine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.k = k
            ctx.save_for_backward(a, b)
            return a + k * b + a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            assert isinstance(a, torch.Tensor) and isinstance(g, torch.Tensor)
            if once:
                assert not torch.is_grad_enabled()
            return g + g * b, None, g * ctx.k + g * a

    if once:
        Affine.backward = staticmethod(torch.autograd.function.once_differentiable(
            Affine.backward))
    return Affine


@both()
@pytest.mark.parametrize("once", [False, True])
def test_function_gradients_and_double_backward_graph(torch, once):
    fn = three_arg_function(torch, once)
    a = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    out = fn.apply(a, 2, b)
    out.sum().backward(torch.ones((), dtype=torch.float64, requires_grad=True),
                       create_graph=True)
    close(a.grad, values(b) + 1)
    close(b.grad, values(a) + 2)
    assert a.grad.grad_fn is not None and b.grad.grad_fn is not None
    if once:
        assert graph(a.grad.grad_fn) == (
            "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))")


@both()
@pytest.mark.parametrize("shape", [(1,), ()])
def test_function_returning_its_input(torch, shape):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    v = torch.ones(shape, requires_grad=True)
    Twice.apply(v).backward()
    assert v.grad.tolist() == torch.full(shape, 2.0).tolist()
    with torch.no_grad():
        v.grad.zero_()
    Twice.apply(v.clone()).backward()
    assert v.grad.tolist() == torch.full(shape, 2.0).tolist()


@both()
def test_backward_returning_none_leaves_grad_undefined(torch):
    class Dead(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 3 * x

        @staticmethod
        def backward(ctx, g):
            return None

    x = torch.ones(1, requires_grad=True)
    Dead.apply(x).backward()
    assert x.grad is None
    Dead.apply(x * x).backward()
    assert x.grad is None
    Dead.apply(x).sum().backward()
    assert x.grad is None
    assert torch.autograd.grad(Dead.apply(x), x, allow_unused=True)[0] is None


@both()
def test_materialized_unused_grads_do_not_require_grad(torch):
    x = torch.ones(4, requires_grad=True)
    y = torch.ones(4, requires_grad=True)
    gx, gy = torch.autograd.grad((x * x).sum(), (x, y), allow_unused=True,
                                 materialize_grads=True)
    assert not gx.requires_grad and not gy.requires_grad
    assert gy.tolist() == [0.0] * 4 and gx.tolist() == [2.0] * 4


@both()
def test_legacy_non_static_forward_is_refused(torch):
    class Legacy(torch.autograd.Function):
        def forward(self, x):
            return x

        def backward(self, g):
            return g

    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward "
                                           "method is deprecated"):
        Legacy()(torch.randn(2))


@both()
def test_exception_in_backward_reaches_the_caller(torch):
    class Boom(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            raise Exception("backward failed on purpose")

    a = torch.rand(2, 2, requires_grad=True)
    out = Boom.apply((a + 1) * (a + 1))
    with pytest.raises(Exception, match="backward failed on purpose"):
        out.sum().backward()


@both()
def test_non_tensor_inputs_and_outputs(torch):
    class Mixed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            ctx.scale = scale
            ctx.save_for_backward(t1, t2, t3)
            return scale, t4, None, True, t5, "tag", t1

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            assert len(grads) == 7
            assert grads[0] is None and grads[2] is None and grads[3] is None
            assert grads[5] is None
            s = ctx.scale
            a, b, c = ctx.saved_tensors
            return (grads[1] * s + grads[4] * b * s + grads[6],
                    grads[1] * c * s + grads[4] * a * s, None,
                    grads[1] * b * s + grads[4] * s)

    t1 = torch.rand(5, dtype=torch.float64, requires_grad=True)
    t2 = torch.rand(5, dtype=torch.float64, requires_grad=True)
    t3 = torch.rand(5, dtype=torch.float64)
    res = Mixed.apply(t1, t2, 3, t3)
    assert res[0] == 3 and res[2] is None and res[3] is True and res[5] == "tag"
    close(res[1], (values(t1) + values(t2) * values(t3)) * 3)
    close(res[4], (values(t1) * values(t2) + values(t3)) * 3)
    close(res[6], t1)
    torch.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
    close(t1.grad, 3 + 3 * values(t2) + 1)
    close(t2.grad, 3 * values(t3) + 3 * values(t1))
    assert t3.grad is None


@both()
def test_function_on_python_numbers_only(torch):
    class Plain(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, scale, c):
            return scale, (a + b * c) * scale, None, True, (a * b + c) * scale, "tag", a

        @staticmethod
        def backward(ctx, *grads):
            return grads[0], grads[1], None, grads[2]

    res = Plain.apply(0.5, 0.25, 4, 2.0)
    assert res == (4, 4.0, None, True, 8.5, "tag", 0.5)


@both()
def test_backward_returning_a_wrong_shape(torch):
    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(10)

    x = torch.randn(5, 5, requires_grad=True)
    with pytest.raises(RuntimeError, match="expected shape"):
        WrongShape.apply(x).sum().backward()


@both()
def test_setup_context_defaults(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    assert not Square.generate_vmap_rule
    assert hasattr(Square, "vmap")
    x = torch.tensor(1.5, requires_grad=True)
    (gx,) = torch.autograd.grad(Square.apply(x), x)
    assert gx.item() == 3.0


@both()
def test_setup_context_with_non_tensor_output(torch):
    class SquareAndDouble(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2, x.item() * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.two_x = output[1]

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g, _):
            return g * ctx.two_x

    x = torch.tensor(-0.75, requires_grad=True)
    y, two_x = SquareAndDouble.apply(x)
    assert two_x == -1.5
    (gx,) = torch.autograd.grad(y, x)
    assert gx.item() == -1.5


@both()
@pytest.mark.parametrize("shape,new_shape,fwd,bwd", [((24,), (3, 8), 7, 11),
                                                     ((2, 3, 4), (6, 4), -1, 2)])
def test_setup_context_matches_ctx_in_forward(torch, shape, new_shape, fwd, bwd):
    class Split(torch.autograd.Function):
        @staticmethod
        def forward(x, shape, scale_forward, scale_backward):
            return x.reshape(shape) * scale_forward

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, _, _, scale_backward = inputs
            ctx.scale_backward = scale_backward
            ctx.x_shape = x.shape

        @staticmethod
        def backward(ctx, g):
            return g.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

    class Joined(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, shape, scale_forward, scale_backward):
            ctx.scale_backward = scale_backward
            ctx.x_shape = x.shape
            return x.reshape(shape) * scale_forward

        @staticmethod
        def backward(ctx, g):
            return g.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

    x = torch.randn(*shape, requires_grad=True)
    y1 = Split.apply(x, new_shape, fwd, bwd).sum()
    y2 = Joined.apply(x, new_shape, fwd, bwd).sum()
    (g1,) = torch.autograd.grad(y1, x)
    (g2,) = torch.autograd.grad(y2, x)
    assert y1.item() == y2.item()
    assert g1.tolist() == g2.tolist() and g1.shape == x.shape
    assert float(g1.reshape(-1)[0]) == bwd


@both()
def test_grad_of_unreachable_input_skips_the_function(torch):
    class MustNotRun(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("this node should not run")

    x = MustNotRun.apply(torch.randn(1, requires_grad=True) * 2)
    y = torch.randn(1, requires_grad=True)
    assert torch.autograd.grad(x, (y,), allow_unused=True) == (None,)
    x = MustNotRun.apply(torch.randn(1, requires_grad=True) * 2)
    z = torch.randn(1, requires_grad=True)
    gy, gz = torch.autograd.grad(x + z, (y, z), allow_unused=True)
    assert gy is None and gz.tolist() == [1.0]
    x = MustNotRun.apply(torch.randn(1, requires_grad=True) * 2)
    torch.autograd.backward(x, inputs=(y,))
    assert y.grad is None


@both()
def test_hook_on_an_output_that_is_an_input(torch):
    class PassFirst(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gb):
            return ga + gb, gb

    x = torch.randn(3, 3, requires_grad=True)
    y = torch.randn(3, 3, requires_grad=True)
    q, p = PassFirst.apply(x, y)
    seen = []
    q.register_hook(lambda g: seen.append(g.tolist()))
    (q + p + x).sum().backward()
    assert seen == [[[1.0] * 3] * 3]
    assert x.grad.tolist() == [[3.0] * 3] * 3 and y.grad.tolist() == [[1.0] * 3] * 3


@both()
def test_inplace_function_returning_a_dirty_plain_input(torch):
    class AddInPlace(torch.autograd.function.InplaceFunction):
        @staticmethod
        def forward(ctx, a, b):
            ctx.mark_dirty(a)
            return a.add_(b), b + 2

        @staticmethod
        def backward(ctx, ga, gb):
            return ga, ga + gb

    x = torch.randn(3, 3)
    y = torch.randn(3, 3, requires_grad=True)
    q, p = AddInPlace.apply(x, y)
    assert q is x and q.requires_grad
    assert q.grad_fn.__class__ is AddInPlace._backward_cls
    q.sum().backward()
    assert y.grad.tolist() == [[1.0] * 3] * 3


@both()
def test_non_differentiable_output_feeding_another_function(torch):
    class WithNoise(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            noise = torch.randn(x.size())
            ctx.mark_non_differentiable(noise)
            return x, noise

        @staticmethod
        def backward(ctx, g, ignored):
            return g

    class First(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, ignored):
            return x

        @staticmethod
        def backward(ctx, g):
            return g, None

    x = torch.randn(4, requires_grad=True)
    a, b = WithNoise.apply(x)
    b = b + 1
    assert a.requires_grad and not b.requires_grad
    c = First.apply(a, b)
    c.backward(torch.ones(c.size()))
    assert x.grad.tolist() == [1.0] * 4


@both()
def test_saving_none_for_backward(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(None, x, None)
            return x * x

        @staticmethod
        def backward(ctx, g):
            n1, x, n2 = ctx.saved_tensors
            assert n1 is None and n2 is None
            return 2 * x * g

    x = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    Square.apply(x).sum().backward()
    close(x.grad, 2 * values(x))


@both()
def test_extra_none_gradients_are_ignored(torch):
    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    x = torch.randn(3, 3, requires_grad=True)
    Same.apply(x).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 3


@both()
def test_function_under_no_grad_has_no_node(torch):
    Same = passthrough(torch)

    x = torch.randn(4, requires_grad=True)
    with torch.no_grad():
        y = Same.apply(x)
    assert x.requires_grad and y.grad_fn is None


@both()
def test_backward_that_runs_backward_itself(torch):
    y_data = torch.randn(2, 2)

    class Reenter(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.enable_grad():
                ctx.x = torch.autograd.Variable(x, requires_grad=True)
                ctx.y = torch.autograd.Variable(y_data, requires_grad=True)
                ctx.output_var = ctx.x * ctx.y
            return ctx.output_var.detach()

        @staticmethod
        def backward(ctx, g):
            with torch.enable_grad():
                ctx.output_var.sum().backward()
            return ctx.x.grad * g

    x = torch.randn(2, 2, requires_grad=True)
    Reenter.apply(x).sum().backward()
    assert x.grad.tolist() == y_data.tolist()


@both()
def test_error_inside_a_nested_backward(torch):
    class Fails(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise Exception("nested backward failed")

    a = torch.rand(3, 3, requires_grad=True)
    c = a * a
    b = torch.rand(3, 3, requires_grad=True)
    inner_root = Fails.apply(b * b).sum()

    class Outer(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            inner_root.backward()
            return g

    with pytest.raises(Exception, match="nested backward failed"):
        Outer.apply(c).sum().backward()


@both()
def test_instantiating_a_function_warns_and_its_call_fails(torch):
    class Id(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Id()
    assert isinstance(f, Id)
    x = torch.zeros(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-static forward method is deprecated"):
        f(x)
    assert Id.apply(x).grad_fn.name() == "IdBackward"


@both()
def test_repeated_double_backward_through_a_function(torch):
    def product(x):
        return x.prod(dim=-1).prod(dim=-1)

    class Product(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = product(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return (g * y)[:, None, None] / x

    x = (torch.ones(2, 3, 3) * 1.1).requires_grad_()
    for fn in (product, Product.apply):
        y = fn(x)
        (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
        (first,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
        (second,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        assert first[0, 0, 1].item() == second[0, 0, 1].item()
        np.testing.assert_allclose(first[0, 0, 1].item(), 1.1 ** 7, rtol=1e-5)


@both()
def test_function_saving_its_output_survives_double_backward(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x ** 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, _ = ctx.saved_tensors
            return g * 2 * x

    class SquareFromOutput(Square):
        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 2 * y / x

    x = torch.tensor(2).double().requires_grad_()
    for fn in (Square.apply, SquareFromOutput.apply):
        y = fn(x)
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        assert g.item() == 4.0
        (gg,) = torch.autograd.grad(g, x)
        assert gg.item() == 2.0
        y = fn(x)
        torch.autograd.grad(y, x, create_graph=True)
        torch.autograd.grad(y, x)


@both()
def test_legacy_forward_called_directly_on_a_leaf(torch):
    class Legacy(torch.autograd.Function):
        def forward(self, x):
            return x

        def backward(self, g):
            return g

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for _ in range(3):
            x = torch.randn(1, requires_grad=True)
            Legacy().forward(x).backward()
            assert x.grad.tolist() == [1.0]


def countdown(torch, order=None):
    class Countdown(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.enable_grad():
                ctx.x = torch.autograd.Variable(x.detach(), requires_grad=True)
                ctx.x = ctx.x - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            if order is not None:
                order.append("Countdown")
            if ctx.x < 0:
                return g
            with torch.enable_grad():
                Countdown.apply(ctx.x).sum().backward()
            return g

    return Countdown


@both()
def test_deeply_nested_reentrant_backward(torch):
    v = torch.tensor(300.0, requires_grad=True)
    countdown(torch).apply(v).sum().backward()
    assert v.grad.item() == 1.0


@both()
def test_reentrant_backward_runs_before_pending_work(torch):
    order = []

    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            order.append("Same")
            return g

    a = Same.apply(torch.tensor(6.0, requires_grad=True))
    b = countdown(torch, order).apply(torch.tensor(9.0, requires_grad=True))
    (a * b).backward()
    assert len(order) == 11 and order.count("Countdown") == 10 and order[-1] == "Same"


@both()
def test_backward_inside_a_leaf_hook(torch):
    param = torch.rand(6, requires_grad=True)
    handle = None

    def penalty(grad):
        handle.remove()
        old = grad
        param.grad = None
        with torch.enable_grad():
            g = grad.detach().requires_grad_()
            fresh = param.detach().requires_grad_()
            ((g * 2) + fresh).sum().backward()
        res = g.grad + grad
        param.grad = old
        return res

    handle = param.register_hook(penalty)
    (param * param).sum().backward()
    close(param.grad, 4 * values(param) + 2)  # the hook put back 2p; its result adds 2p + 2


@both()
def test_backward_inside_a_non_leaf_hook(torch):
    param = torch.rand(6, requires_grad=True)
    handle = None

    def bump(grad):
        handle.remove()
        with torch.enable_grad():
            g = grad.detach().requires_grad_()
            ((g * 2) + 5).sum().backward()
        return g.grad + grad

    tmp = param * param
    handle = tmp.register_hook(bump)
    tmp.sum().backward()
    close(param.grad, 6 * values(param))


@both()
def test_saved_tensors_seen_from_the_node(torch):
    def make(save):
        class Keep(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x

            @staticmethod
            def backward(ctx, g):
                return g
        return Keep

    a = torch.randn(4, requires_grad=True)
    y = make(True).apply(a)
    saved = y.grad_fn.saved_tensors
    assert len(saved) == 2 and saved[0] is a and saved[1] is None
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn.saved_tensors
    y = make(False).apply(a)
    assert y.grad_fn.saved_tensors == ()


@both()
def test_saved_tensors_cleared_on_access(torch):
    import weakref

    class Once(torch.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            ref = weakref.ref(x)
            del x
            assert ref() is None
            return g

    x = torch.randn(3, requires_grad=True)
    Once.apply(x.clone()).sum().backward()
    assert x.grad.tolist() == [1.0] * 3


@both()
def test_queued_callbacks_run_once_at_the_end(torch):
    called = []

    def final():
        called.append("final")

    def adds_another():
        called.append("first")
        torch.autograd.Variable._execution_engine.queue_callback(final)

    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            torch.autograd.Variable._execution_engine.queue_callback(adds_another)
            return g

    a = torch.rand(3, 3, requires_grad=True)
    Same.apply(a).sum().backward()
    assert called == ["first", "final"]


@both()
def test_cleared_saved_tensors_read_twice_name_the_flag(torch):
    class Twice(torch.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 3

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors
            ctx.saved_tensors
            return g

    y = Twice.apply(torch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match=r"^saved_tensors can only be accessed once when "
                       r"clear_saved_tensors_on_access=True is set on the autograd.Function\. "
                       r"Either access saved_tensors only once, or set "
                       r"clear_saved_tensors_on_access=False\.$"):
        y.sum().backward()


@both()
def test_view_outputs_of_a_two_output_function_are_multiple_views(torch):
    class NarrowAndSum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a = a.narrow(0, 0, 2)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return torch.cat([ga + gab, torch.zeros(1)]), gab

    piece, total = NarrowAndSum.apply(torch.ones(3, requires_grad=True).clone(),
                                      torch.ones(2, requires_grad=True))
    assert piece._is_view() and not total._is_view()
    with pytest.raises(RuntimeError, match=r"^Output 0 of NarrowAndSum is a view and is being "
                       r"modified inplace\. This view is the output of a function that returns "
                       r"multiple views\."):
        piece += 3
    (total * 2).sum().backward()  # the other output is an ordinary tensor


@both()
def test_view_of_a_temporary_returned_by_a_function_refuses_in_place(torch):
    class RowOfCopy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone().select(0, 0)

        @staticmethod
        def backward(ctx, g):
            out = torch.zeros(2, 2)
            out[0] = g
            return out

    a = torch.ones(2, 2, requires_grad=True)
    row = RowOfCopy.apply(a)
    assert row._is_view()
    with pytest.raises(RuntimeError, match=r"^Output 0 of RowOfCopy is a view and is being "
                       r"modified inplace\. This view was created inside a custom Function"):
        row += 3
    (RowOfCopy.apply(a) * 5).sum().backward()
    close(a.grad, [[5, 5], [0, 0]])


@both()
def test_backward_c_function_is_a_node(torch):
    assert issubclass(torch.autograd.function.BackwardCFunction, torch.autograd.graph.Node)

    Id = passthrough(torch)

    out = Id.apply(torch.ones(1, requires_grad=True))
    assert isinstance(out.grad_fn, torch.autograd.function.BackwardCFunction)


@both()
def test_raw_saved_tensors_of_a_custom_function(torch):
    def make(save):
        class Keep(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, _ = ctx.saved_tensors
                return g * x
        return Keep

    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = make(True).apply(a)
    assert y.grad_fn.saved_tensors[0] is a and y.grad_fn.saved_tensors[1] is None
    raw = y.grad_fn._raw_saved_tensors
    assert len(raw) == 2
    with pytest.raises(RuntimeError, match="None is forbidden"):
        raw[1].register_hooks(lambda x: x, lambda x: x)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        raw[0].register_hooks(lambda x: x)
    unpacked = []
    raw[0].register_hooks(lambda x: x * 10, lambda x: unpacked.append(x) or x)
    with pytest.raises(RuntimeError, match="already been set"):
        raw[0].register_hooks(lambda x: x, lambda x: x)
    y.sum().backward()
    assert a.grad.tolist() == [10.0, 20.0, 30.0]  # the backward read what the hooks gave
    assert [u.tolist() for u in unpacked] == [[10.0, 20.0, 30.0]]
    for read in (lambda: y.grad_fn._raw_saved_tensors, lambda: y.grad_fn.saved_tensors):
        with pytest.raises(RuntimeError, match="after they have already been freed"):
            read()
    y = make(False).apply(a)
    assert y.grad_fn.saved_tensors == () and y.grad_fn._raw_saved_tensors == ()
