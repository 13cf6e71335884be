"""autograd.grad / backward API behaviours from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import numpy as np
import pytest

from pytorch_port import both, close, values


@both()
def test_in_place_accumulation_unless_create_graph(torch):
    for create_graph in (False, True):
        x = torch.randn(3, 3, requires_grad=True)
        y = x + 2
        y.backward(torch.ones(3, 3), retain_graph=True)
        first = x.grad
        snapshot = x.grad.clone()
        y.backward(torch.ones(3, 3), create_graph=create_graph)
        if create_graph:  # a new tensor: the first one is untouched
            assert first.tolist() == snapshot.tolist()
            assert x.grad is not first
        else:
            assert first.tolist() == (snapshot * 2).tolist()
            assert x.grad is first


@both()
@pytest.mark.parametrize("create_graph", [False, True])
def test_dense_grad_reference_kept_unless_create_graph(torch, create_graph):
    p = torch.tensor([1.5, 1.5]).requires_grad_()
    p.grad = torch.tensor([1.5, 1.5])
    before = p.grad
    p.backward(torch.tensor([1.5, 1.5]), create_graph=create_graph)
    assert (p.grad is before) == (not create_graph)
    assert p.grad.tolist() == [3.0, 3.0]


@both()
def test_grad_through_broadcast_with_zero_elements(torch):
    a = torch.rand(4, 0, requires_grad=True)
    b = torch.rand(4, 1, requires_grad=True)
    c = a + b
    assert tuple(c.shape) == (4, 0)
    c.sum().backward()
    assert b.grad.tolist() == [[0.0]] * 4
    assert tuple(a.grad.shape) == (4, 0)


@both()
def test_hessian_vector_product_by_double_backward(torch):
    x = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    y = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    z = x ** 2 + y * x + y ** 2
    z.backward(torch.ones(2, 2, dtype=torch.float64), create_graph=True)
    xv, yv = values(x), values(y)
    close(x.grad, 2 * xv + yv)
    close(y.grad, xv + 2 * yv)
    (2 * x.grad + y.grad).backward(torch.ones(2, 2, dtype=torch.float64))
    close(x.grad, 2 * xv + yv + 5)
    close(y.grad, xv + 2 * yv + 4)


@both()
def test_grad_of_grad_and_shape_mismatch_message(torch):
    x = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    y = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    z = x ** 2 + y * x + y ** 2
    z.backward(torch.ones(2, 2, dtype=torch.float64), create_graph=True)
    s = 2 * x.grad + y.grad
    (hv,) = torch.autograd.grad(outputs=[s], grad_outputs=[torch.ones(2, 2, dtype=torch.float64)],
                                inputs=[x], create_graph=True)
    assert hv.tolist() == [[5.0, 5.0], [5.0, 5.0]]
    close(x.grad, 2 * values(x) + values(y))  # grad() leaves .grad alone
    with pytest.raises(RuntimeError) as info:
        torch.autograd.grad(outputs=[s], grad_outputs=[torch.ones(2)], inputs=[x])
    assert str(info.value) == ("Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) "
                               "and output[0] has a shape of torch.Size([2, 2]).")


@both()
def test_grad_to_a_gradient_edge(torch):
    x = torch.rand(2, requires_grad=True)
    for inp in (x, x.clone()):
        out = inp.clone()
        ref = torch.autograd.grad(out.sum(), inp)
        edge = torch.autograd.graph.get_gradient_edge(inp)
        assert torch.autograd.grad(inp.clone().sum(), edge)[0].tolist() == ref[0].tolist()
    v = torch.var_mean(x.clone())[1]
    edge = torch.autograd.graph.get_gradient_edge(v)
    assert torch.autograd.grad(v.clone().sum(), edge)[0].item() == 1.0


@both()
def test_grad_to_an_edge_after_set_(torch):
    x = torch.rand(2, requires_grad=True)
    edge = torch.autograd.graph.get_gradient_edge(x)
    out = x.clone()
    with torch.no_grad():
        x.set_(torch.rand_like(x))
    with pytest.raises(RuntimeError, match="to not have been used in the graph"):
        torch.autograd.grad(out.sum(), x)
    assert torch.autograd.grad(out.sum(), edge)[0].tolist() == [1.0, 1.0]


@both()
def test_grad_to_edge_before_an_in_place_op(torch):
    x = torch.rand(2, requires_grad=True).clone()
    edge = torch.autograd.graph.get_gradient_edge(x)
    x *= 2
    old, new = torch.autograd.grad(x.sum(), (edge, x))
    assert old.tolist() == [2.0, 2.0] and new.tolist() == [1.0, 1.0]


@both()
def test_grad_to_edges_built_by_hand(torch):
    GradientEdge = torch.autograd.graph.GradientEdge
    x = torch.rand(2, requires_grad=True).clone()
    y = torch.rand(2, requires_grad=True).clone()
    out = x + 3 * y
    ref = torch.autograd.grad(out.sum(), (x, y), retain_graph=True)
    new = torch.autograd.grad(out.sum(), (GradientEdge(x.grad_fn, x.output_nr),
                                          GradientEdge(y.grad_fn, y.output_nr)))
    assert [g.tolist() for g in ref] == [g.tolist() for g in new] == [[1.0, 1.0], [3.0, 3.0]]


@both()
def test_materialize_grads_refuses_an_edge(torch):
    GradientEdge = torch.autograd.graph.GradientEdge
    x = torch.rand(2, requires_grad=True).clone()
    y = torch.rand(2, requires_grad=True).clone()
    edge_x = GradientEdge(x.grad_fn, x.output_nr)
    edge_y = GradientEdge(y.grad_fn, y.output_nr)
    out = x.clone()
    gx, gy = torch.autograd.grad(out.sum(), (edge_x, y), allow_unused=True,
                                 materialize_grads=True)
    assert gy.tolist() == [0.0, 0.0]
    torch.autograd.grad(out.sum(), (x, y), allow_unused=True, materialize_grads=True)
    assert torch.autograd.grad(out.sum(), (x, edge_y), allow_unused=True)[1] is None
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given "
                                           "input is a GradientEdge"):
        torch.autograd.grad(out.sum(), (x, edge_y), allow_unused=True, materialize_grads=True)


@both()
def test_backward_to_edges(torch):
    GradientEdge = torch.autograd.graph.GradientEdge
    x = torch.rand(2, requires_grad=True).clone()
    y = torch.rand(2, requires_grad=True).clone()
    ex, ey = GradientEdge(x.grad_fn, x.output_nr), GradientEdge(y.grad_fn, y.output_nr)
    out = x.clone()
    for inputs in ((ex, y), (x, y), (x, ey), (ex, ey)):
        torch.autograd.backward(out.sum(), inputs=inputs)


@both()
def test_grad_from_an_edge_as_output(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)

    def fn(reduce=True):
        tmp = x.sin().cos()
        if reduce:
            tmp = tmp.sum()
        out = tmp.exp().clone().sin().sum()
        return out, torch.autograd.graph.get_gradient_edge(tmp)

    out, edge = fn()
    (g_tmp,) = torch.autograd.grad(out, (edge,))
    (gx,) = torch.autograd.grad(edge, (x,), grad_outputs=(g_tmp,))
    out, _ = fn()
    (ref,) = torch.autograd.grad(out, (x,))
    close(gx, ref)
    out, edge = fn(reduce=False)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "output"):
        torch.autograd.grad(edge, (x,))
    out, edge = fn()
    torch.autograd.grad(edge, (x,))
    out, edge = fn()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        torch.autograd.grad(edge, (x,), grad_outputs=torch.tensor([1.0, 2.0, 3.0]))
    out, edge = fn()
    torch.autograd.backward(edge, retain_graph=True)
    (ref,) = torch.autograd.grad(edge, (x,), retain_graph=True)
    close(x.grad, ref)
    x.grad = None
    torch.autograd.backward((edge,), retain_graph=True)
    close(x.grad, ref)


@both()
def test_backward_from_an_edge_twice_after_output_dies(torch):
    class Copy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g.clone()

    inp = torch.rand(1, requires_grad=True)
    leaf = inp
    inp = inp.clone()
    for make in (lambda t: t.clone(), Copy.apply):
        out = make(inp)
        edge = torch.autograd.graph.get_gradient_edge(out)
        torch.autograd.backward(edge)
        del out
        torch.autograd.backward(edge)
    assert leaf.grad.tolist() == [4.0]


@both()
def test_grad_wrt_an_updated_non_leaf(torch):
    x0 = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    y = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)

    def fn(x):
        return x ** 2 + y * x + y ** 2

    x = x0
    for _ in range(4):
        (gx,) = torch.autograd.grad(fn(x), x, grad_outputs=torch.ones(2, 2, dtype=torch.float64),
                                    create_graph=True)
        assert y.grad is None and x.grad is None
        close(gx, 2 * values(x) + values(y))
        x = x + 0.05 * gx
    assert fn(x).sum().item() > fn(x0).sum().item()
    x.backward(torch.ones(2, 2, dtype=torch.float64))
    assert y.grad is not None and x0.grad is not None


@both()
def test_grad_materialized_at_higher_order(torch):
    x = torch.tensor(0.5, requires_grad=True)
    a = torch.tensor(1.0, requires_grad=True)
    y = x * a
    d1 = torch.autograd.grad(y, x, create_graph=True)
    assert torch.autograd.grad(d1, x, create_graph=True, allow_unused=True) == (None,)
    d2 = torch.autograd.grad(d1, x, create_graph=True, allow_unused=True,
                             materialize_grads=True)
    d3 = torch.autograd.grad(d2, x, materialize_grads=True)
    assert d2[0].item() == 0 and d3[0].item() == 0
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when"):
        torch.autograd.grad(y, x, allow_unused=False, materialize_grads=True)


@both()
def test_grad_in_shards_then_backward(torch):
    leaves = [torch.zeros(3, 3, requires_grad=True) for _ in range(6)]
    mids = [v * i + v * v for i, v in enumerate(leaves)]
    loss = sum(m * i for i, m in enumerate(mids)).sum()
    parts = []
    for k in range(0, len(mids), 2):
        parts.extend(torch.autograd.grad(loss, mids[k:k + 2], retain_graph=True))
    torch.autograd.backward(mids, parts)
    for i, v in enumerate(leaves):
        assert v.grad.tolist() == [[float(i * i)] * 3] * 3


@both()
def test_backward_and_grad_without_requires_grad(torch):
    x = torch.ones(1)
    with pytest.raises(RuntimeError, match="does not require grad"):
        x.backward()
    y = x ** 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(x, y)
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(y, x)
    x = torch.ones(1, requires_grad=True)
    assert torch.autograd.grad(x ** 2, x)[0].tolist() == [2.0]


@both()
def test_grad_with_no_inputs(torch):
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="`inputs` argument to `grad\\(\\)` cannot be empty."):
        torch.autograd.grad(2 * x, [], grad_outputs=torch.tensor([1.0]))


@both()
def test_calling_grad_fn_with_wrong_arity(torch):
    x = torch.ones(1, requires_grad=True)
    y = x ** 2
    with pytest.raises(TypeError, match="expected .* arguments, got .* instead"):
        y.grad_fn(x.detach(), x.detach())
    with pytest.raises(TypeError, match="expected .* arguments, got .* instead"):
        y.grad_fn()
    assert y.grad_fn(x.detach()).tolist() == [2.0]


@both()
def test_grad_of_unused_inputs(torch):
    x = torch.ones(1, requires_grad=True)
    y = torch.ones(1, requires_grad=True)
    _ = x * 2, y * 2
    gx, gy = torch.autograd.grad(x * 2, [x, y], allow_unused=True)
    assert gx.tolist() == [2.0] and gy is None
    z = torch.ones(1, requires_grad=True)
    gx, gz = torch.autograd.grad(x * 2, [x, z], allow_unused=True)
    assert gx.tolist() == [2.0] and gz is None
    with pytest.raises(RuntimeError, match="Set allow_unused=True"):
        torch.autograd.grad(x * 2, [x, y], allow_unused=False)


@both()
def test_batched_grad_outputs(torch):
    x = torch.randn(2, 2, requires_grad=True)
    out = x.clone()
    batched = torch.arange(3).expand(2, 2, 3).transpose(0, 2)
    (g,) = torch.autograd.grad(out, (x,), (batched,), is_grads_batched=True)
    assert g.tolist() == batched.tolist() and tuple(g.shape) == (3, 2, 2)
    with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the first"):
        torch.autograd.grad(out, (x,), (torch.ones(2, 2),), is_grads_batched=True)
    s = x.sum()
    (g,) = torch.autograd.grad(s, (x,), (torch.arange(3),), is_grads_batched=True)
    assert g.tolist() == batched.tolist()
    with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the first"):
        torch.autograd.grad(s, (x,), (torch.ones(2).unsqueeze(1),), is_grads_batched=True)


@both()
def test_grad_warning_on_non_leaf(torch):
    import warnings
    leaf = torch.empty(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        leaf.requires_grad_()
        _ = leaf.grad
        assert len(caught) == 0
        mid = leaf.clone()
        _ = mid.grad
        assert len(caught) == 1 and caught[0].category is UserWarning
        assert "is not a leaf Tensor is being accessed" in str(caught[0].message)
        mid.retain_grad()
        _ = mid.grad
        assert len(caught) == 1


@both()
def test_backward_closed_forms(torch):
    v = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    x = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    y = (torch.rand(4, 4, dtype=torch.float64) + 0.1).requires_grad_(True)
    z = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    go = torch.randn(4, 4, dtype=torch.float64)
    v.backward(go)
    close(v.grad, go)
    (x + (y * z) + 4 * z ** 2 * x / y).backward(go)
    X, Y, Z, G = values(x), values(y), values(z), values(go)
    close(x.grad, (4 * Z ** 2 / Y + 1) * G)
    close(y.grad, (Z - 4 * X * Z ** 2 / Y ** 2) * G)
    close(z.grad, (8 * X * Z / Y + Y) * G)


@both()
def test_backward_of_several_outputs(torch):
    x, y, q, a, b = (torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
                     for _ in range(5))
    q2 = q * 2
    gz, gc = torch.randn(3, 3, dtype=torch.float64), torch.randn(3, 3, dtype=torch.float64)
    torch.autograd.backward([x + y + q2, a * b + q2], [gz, gc])
    close(x.grad, gz)
    close(y.grad, gz)
    close(a.grad, values(gc) * values(b))
    close(b.grad, values(gc) * values(a))
    close(q.grad, (values(gc) + values(gz)) * 2)


@both()
def test_backward_of_several_outputs_one_without_grad(torch):
    x = torch.randn(3, 3, requires_grad=True)
    y = torch.randn(3, 3)
    with pytest.raises(RuntimeError):
        torch.autograd.backward([x + y, y * 2], [torch.ones(3, 3), torch.ones(3, 3)])


@both()
def test_backward_restricted_to_inputs(torch):
    x = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    y = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    X, Y = values(x), values(y)
    ones = torch.ones(2, 2, dtype=torch.float64)

    def fn():
        return x ** 2 + y * x + y ** 2

    torch.autograd.backward(fn(), ones, inputs=[x, y])
    close(x.grad, 2 * X + Y)
    close(y.grad, X + 2 * Y)
    for inputs, only_x in (([x], True), ([y], False), (y, False)):
        with torch.no_grad():
            x.grad.zero_()
            y.grad.zero_()
        torch.autograd.backward(fn(), ones, inputs=inputs)
        close(x.grad, 2 * X + Y if only_x else np.zeros((2, 2)))
        close(y.grad, np.zeros((2, 2)) if only_x else X + 2 * Y)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        torch.autograd.backward(fn(), ones, inputs=[])


@both()
def test_backward_to_a_scalar_input(torch):
    x = torch.tensor(0.75, dtype=torch.float64, requires_grad=True)
    (x ** 2).backward(inputs=x)
    assert x.grad.item() == 1.5


@both()
def test_backward_to_non_leaf_inputs(torch):
    x = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    xn = x * 1
    y = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    z = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    out = xn ** 2 + y * xn + y ** 2
    ones = torch.ones(2, 2, dtype=torch.float64)
    out.backward(ones, create_graph=True, inputs=[x, y, xn])
    X, Y = values(x), values(y)
    close(y.grad, X + 2 * Y)
    close(x.grad, 2 * X + Y)
    close(xn.grad, 2 * X + Y)
    out.backward(ones, create_graph=True, inputs=[z])
    assert z.grad is None


@both()
def test_backward_of_dependent_outputs(torch):
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    y = x ** 2
    z = y ** 3
    gy, gz = torch.randn(6, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    torch.autograd.backward([y, z], [gy, gz])
    X = values(x)
    close(x.grad, 2 * X * values(gy) + 6 * X ** 5 * values(gz))


@both()
def test_saved_output_keeps_its_output_nr(torch):
    class Halves(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:3], x[3:]

        @staticmethod
        def backward(ctx, *gs):
            return torch.cat(gs)

    seen = []

    class Save(torch.autograd.Function):
        @staticmethod
        def forward(ctx, b):
            ctx.save_for_backward(b)
            return b * 2

        @staticmethod
        def backward(ctx, g):
            (b,) = ctx.saved_tensors
            seen.append(b.output_nr)
            return g * 2

    a, b = Halves.apply(torch.randn(6, requires_grad=True))
    assert a.output_nr == 0 and b.output_nr == 1
    Save.apply(b).sum().backward()
    assert seen == [1]


@both()
def test_deep_graph_freed_without_recursion(torch):
    def build():
        x = torch.randn(1, requires_grad=True)
        y = x.clone()
        for _ in range(20000):
            y = y + y * 0.000001

    build()


@both()
def test_deep_custom_function_graph_freed_without_recursion(torch):
    class Add(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    def build():
        y = torch.randn(1, requires_grad=True).clone()
        for _ in range(20000):
            y = Add.apply(y, y)

    build()


@both()
def test_no_save_where_the_rule_does_not_need_it(torch):
    mu = torch.ones(1, requires_grad=True)
    x = torch.empty(1)
    loss = 0
    for i in range(3):
        x.detach_()
        x.copy_(mu + i)
        loss += (x * torch.tensor([float(i)])).sum()
    loss.backward()
    assert mu.grad.tolist() == [3.0]


@both()
def test_grad_output_must_match_the_output_in_being_complex(torch):
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    real_out = (x * x).sum()
    complex_out = (x * 1j).sum()
    with pytest.raises(RuntimeError, match=r"^For complex Tensors, both grad_output and output "
                       r"are required to have the same dtype. Mismatch in dtype: grad_output\[0\] "
                       r"has a dtype of torch.complex64 and output\[0\] has a dtype of "
                       r"torch.float32.$"):
        torch.autograd.grad(real_out, x, grad_outputs=torch.tensor(1.0, dtype=torch.complex64))
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a dtype of torch.float32 and "
                       r"output\[0\] has a dtype of torch.complex64.$"):
        complex_out.backward(torch.tensor(1.0))
    (g,) = torch.autograd.grad(real_out, x, grad_outputs=torch.tensor(2.0, dtype=torch.float64))
    close(g, [2.0, 6.0])  # another real dtype is cast, as in torch
