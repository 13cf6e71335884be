"""In-place ops, versions, detach, setitem and freed graphs from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import numpy as np
import pytest

from pytorch_port import both, close, real_torch, values


@both()
def test_deleting_tensor_attributes(torch):
    x = torch.randn(3, 3, requires_grad=True)
    del x.grad
    assert x.grad is None
    with pytest.raises(RuntimeError):
        del x.data
    with pytest.raises(TypeError):
        x.data = None
    with pytest.raises(RuntimeError):
        del x.requires_grad
    with pytest.raises(RuntimeError):
        del x._grad_fn
    with pytest.raises(RuntimeError):
        del x._backward_hooks


@both()
def test_same_root_twice_in_backward(torch):
    a = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    x = a * b
    go = torch.randn_like(x)
    torch.autograd.backward([x, x], [go, go])
    close(a.grad, values(b) * values(go) * 2)
    close(b.grad, values(a) * values(go) * 2)


@both()
def test_backward_with_none_grad_for_a_non_scalar(torch):
    a = torch.randn(3, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        torch.autograd.backward([a + 2], [None])


@both()
def test_second_backward_needs_retain_graph_only_with_saved_values(torch):
    ones = torch.tensor([1, 1, 1], dtype=torch.float64)
    b = torch.randn(3, requires_grad=True, dtype=torch.float64)
    c = torch.zeros(3, dtype=torch.float64)
    c[[1, 2]] = b[[1, 1]]
    c.backward(ones)
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        c.backward(ones)
    b = torch.randn(3, requires_grad=True, dtype=torch.float64)
    c = torch.zeros(3, dtype=torch.float64)
    c[[1, 2]] = b[[1, 1]]
    c.backward(ones, retain_graph=True)
    c.backward(ones)
    assert b.grad.tolist() == [0.0, 4.0, 0.0]
    b = torch.randn(3, requires_grad=True, dtype=torch.float64)
    c = b + 1
    c.backward(ones)
    c.backward(ones)
    assert b.grad.tolist() == [2.0, 2.0, 2.0]


@both()
def test_create_graph_backward_warns_but_grad_does_not(torch):
    import warnings
    if torch is real_torch:  # torch warns once per process unless told to warn always
        torch.set_warn_always(True)
    b = torch.randn(3, requires_grad=True, dtype=torch.float64)
    c = b * b
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c.backward(torch.ones_like(c), create_graph=True)
    b.grad = None
    assert any("Using backward() with create_graph=True" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.autograd.grad(c, b, torch.ones_like(c), create_graph=True)
    assert not any("Using backward() with create_graph=True" in str(w.message) for w in caught)
    if torch is real_torch:
        torch.set_warn_always(False)


@both()
def test_next_functions_of_adds(torch):
    x = torch.randn(3, 3, requires_grad=True)
    y = torch.randn(3, 3, requires_grad=True)
    a = x + y
    nf = a.grad_fn.next_functions
    assert len(nf) == 2
    assert [type(f).__name__ for f, _ in nf] == ["AccumulateGrad", "AccumulateGrad"]
    assert [k for _, k in nf] == [0, 0]
    nf = (a + 5).grad_fn.next_functions
    assert len(nf) == 2 and nf[0][0] is a.grad_fn and nf[1][0] is None


@both()
def test_in_place_and_saved_values(torch):
    x = torch.ones(3, 3, requires_grad=True)
    y = torch.autograd.Variable(torch.ones(3, 3) * 4, requires_grad=True)
    ones = torch.ones(3, 3)
    z = x * y
    q = z + y
    w = z * y
    z.add_(2)
    q.backward(ones, retain_graph=True)  # add saves nothing
    with pytest.raises(RuntimeError):
        w.backward(ones)                 # mul saved z
    z = x * y
    q = z * y
    r = z + y
    w = z.add_(y)
    w.backward(ones, retain_graph=True)
    r.backward(ones, retain_graph=True)
    with pytest.raises(RuntimeError):
        q.backward(ones)
    with torch.no_grad():
        x.grad.zero_()
    m = x / 2
    z = m + y / 8
    q = z * y
    r = z + y
    before = z._version
    w = z.exp_()
    assert z._version != before
    r.backward(ones, retain_graph=True)
    close(x.grad, np.full((3, 3), 0.5))
    w.backward(ones, retain_graph=True)
    close(x.grad, np.full((3, 3), (1 + np.e) / 2))
    with pytest.raises(RuntimeError):
        q.backward(ones)
    leaf = torch.ones(3, 3, requires_grad=True)
    x = leaf.clone()
    x.add_(10)
    assert x.tolist() == [[11.0] * 3] * 3
    y = x + 2
    y.backward(ones)
    assert leaf.grad.tolist() == [[1.0] * 3] * 3
    z = x * y
    x.add_(2)
    with pytest.raises(RuntimeError):
        z.backward(ones)


@both()
def test_non_differentiable_mask_output(torch):
    class Positive(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x > 0
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return (g * 0).to(torch.float64)

    x = torch.randn(3, 3, requires_grad=True)
    mask = Positive.apply(x)
    assert not mask.requires_grad
    x.masked_fill(mask, 0).sum().backward()
    assert values(x.grad).tolist() == (~values(mask).astype(bool)).astype(float).tolist()


@both()
def test_non_differentiable_and_differentiable_outputs(torch):
    class Pair(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a, b = x + 1, x + 2
            ctx.mark_non_differentiable(a)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            assert (ga == 0).all() and (gb == 1).all()
            return gb

    x = torch.randn(3, 3, requires_grad=True)
    a, b = Pair.apply(x)
    assert not a.requires_grad and b.requires_grad
    b.sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 3


@both()
def test_non_differentiable_output_returning_none_gradient(torch):
    class Copy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.clone()
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return None

    x = torch.randn(3, 3, requires_grad=True)
    r = Copy.apply(x * x)
    (r * x).sum().backward()
    close(x.grad, values(x) ** 2)


@both()
def test_function_returning_the_same_tensor_twice(torch):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            return out, out

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 2

    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    a, b = Twice.apply(x)
    assert a is b
    (a + b).sum().backward()
    assert x.grad.tolist() == [4.0] * 3


@both()
def test_function_returning_a_dirty_input_twice(torch):
    class TwiceInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 2

    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    a, b = TwiceInPlace.apply(x.clone())
    assert a is b
    (a + b).sum().backward()
    assert x.grad.tolist() == [4.0] * 3
    with pytest.raises(RuntimeError):
        torch.autograd.function.InplaceFunction.apply(x)
    with pytest.raises(RuntimeError):
        torch.autograd.function.InplaceFunction.apply(x.clone()[0])


SETITEM_INDICES = [((5, 5), 1), ((5,), 1), ((1,), 0), ((10,), [0, 4, 2]), ((5, 5), ([0, 4], [2, 2])),
                   ((5, 5, 5), (slice(None), slice(None), [1, 3])),
                   ((5, 5, 5), (slice(None), [1, 3], slice(None))),
                   ((5, 5, 5), ([1, 3], slice(None), slice(None))),
                   ((5, 5, 5), (slice(None), [2, 4], [1, 3])),
                   ((5, 5, 5), ([1, 3], [2, 4], slice(None)))]


@both()
@pytest.mark.parametrize("size,index", SETITEM_INDICES)
def test_setitem_number_cuts_the_gradient(torch, size, index):
    x = torch.ones(*size, requires_grad=True)
    y = x + 2
    before = y._version
    y[index] = 2
    assert y._version != before
    y.backward(torch.ones(*size))
    want = np.ones(size)
    want[index] = 0
    assert values(x.grad).tolist() == want.tolist()


@both()
@pytest.mark.parametrize("size,index", [((5, 5), 3), ((5, 5), ([0, 1], [1, 0])), ((5,), 3),
                                        ((5,), [[0, 1, 2, 3]]),
                                        ((5, 5, 5), (slice(None), slice(None), [1, 3])),
                                        ((5, 5, 5), ([1, 3], [2, 4], slice(None)))])
def test_setitem_tensor_routes_the_gradient(torch, size, index):
    x = torch.ones(*size, requires_grad=True)
    y = x + 2
    before = y._version
    value = x.new(x[index].size()).fill_(7)
    value.requires_grad = True
    y[index] = value
    assert y._version != before
    y.backward(torch.ones(*size))
    want = np.ones(size)
    want[index] = 0
    assert values(x.grad).tolist() == want.tolist()
    assert value.grad.tolist() == torch.ones_like(value).tolist()
    x = torch.randn(4, requires_grad=True)
    y = torch.zeros(2, 3, 4)
    y[1] = x
    y.backward(torch.ones(2, 3, 4))
    assert x.grad.tolist() == [3.0] * 4


@both()
def test_setitem_with_a_mask(torch):
    mask = torch.tensor([[True, False, True, False, False]] * 5)
    x = torch.ones(5, 5, requires_grad=True)
    y = x + 2
    y[mask] = 2
    y.backward(torch.ones(5, 5))
    assert x.grad.tolist() == [[0.0, 1.0, 0.0, 1.0, 1.0]] * 5
    x = torch.ones(5, 5, requires_grad=True)
    y = x + 2
    value = torch.full((10,), 7.0, requires_grad=True)
    y[mask] = value
    y.backward(torch.ones(5, 5))
    assert value.grad.tolist() == [1.0] * 10
    assert x.grad.tolist() == [[0.0, 1.0, 0.0, 1.0, 1.0]] * 5


@both()
def test_bool_tensor_constructor_and_bernoulli(torch):
    torch.manual_seed(0)
    mask = torch.BoolTensor(5, 5).bernoulli_()
    assert mask.dtype == torch.bool and tuple(mask.shape) == (5, 5)


@both()
def test_grad_of_views_with_an_expanded_cotangent(torch):
    value = torch.rand([])
    v = torch.tensor(value).expand(6)
    a = torch.rand(6, 6, dtype=torch.float64, requires_grad=True)
    (r,) = torch.autograd.grad(a.diagonal(), a, v)
    close(r, np.eye(6) * value.item())
    v = torch.rand(6).expand(6, 6)
    a = torch.rand(6, 6, 6, requires_grad=True)
    (r,) = torch.autograd.grad(a[0], a, v)
    want = np.zeros((6, 6, 6))
    want[0] = values(v)
    close(r, want)
    v = torch.rand(6, 1).expand(2, 6, 6)
    (r,) = torch.autograd.grad(a[3:5], a, v)
    want = np.zeros((6, 6, 6))
    want[3:5] = values(v)
    close(r, want)


@both()
def test_select_then_sum(torch):
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    x.select(0, 1).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]


@both()
def test_one_chunk_used(torch):
    x = torch.randn(10, 10, requires_grad=True)
    o = x.chunk(5)[2] * 4 + 2
    o.sum().backward()
    want = np.zeros((10, 10))
    want[4:6] = 4
    assert values(x.grad).tolist() == want.tolist()
    with torch.no_grad():
        x.grad.zero_()
    go = torch.randn(2, 10)
    x.chunk(5)[0].backward(go)
    want = np.zeros((10, 10))
    want[:2] = values(go)
    close(x.grad, want)


@both()
def test_detach_and_detach_(torch):
    x = torch.randn(4, 4, requires_grad=True)
    y = (x + 2).detach()
    assert not y.requires_grad and not (y * 4 + 2).requires_grad
    y = (x * 2).detach()
    assert y.grad_fn is None
    (x + y).sum().backward()
    assert x.grad.tolist() == [[1.0] * 4] * 4
    x = torch.randn(4, 4, requires_grad=True)
    y = torch.randn(4, 4, requires_grad=True)
    a = x * 2
    (y + a).sum().backward(retain_graph=True)
    a.detach_()
    assert not a.requires_grad
    (y + a).sum().backward()
    assert x.grad.tolist() == [[2.0] * 4] * 4 and y.grad.tolist() == [[2.0] * 4] * 4
    view = x.narrow(0, 1, 2)
    with pytest.raises(RuntimeError, match="view"):
        view.detach_()


@both()
def test_detaching_a_base_keeps_its_view(torch):
    x = torch.randn(4, 4, requires_grad=True)
    view = x.narrow(0, 1, 2)
    x.detach_()
    assert not x.requires_grad
    assert view.requires_grad and view.grad_fn is not None
    assert view._base is x


@both()
def test_write_through_a_detached_alias_is_caught(torch):
    x = torch.randn([], requires_grad=True)
    y = x ** 2
    z = x.detach()
    z.zero_()
    with pytest.raises(RuntimeError, match="has been modified by an inplace"):
        y.backward()


@both()
def test_legacy_tensor_types(torch):
    x = torch.randn(3, 3)
    assert isinstance(x.float(), torch.FloatTensor)
    assert isinstance(x.int(), torch.IntTensor)
    assert not isinstance(x.double(), torch.FloatTensor)
    for t in (torch.DoubleTensor, torch.FloatTensor, torch.IntTensor, torch.ByteTensor):
        y = torch.randint(5, (3, 3), dtype=t.dtype)
        assert isinstance(x.type(t), t)
        assert isinstance(x.type_as(y), t)
        t_dtype = t().dtype
        assert isinstance(x.type(t_dtype), t)
        assert x.type(t_dtype).dtype is t_dtype
    f = torch.autograd.Variable(torch.randn(3, 3).float(), requires_grad=True)
    f.double().sum().backward()
    assert f.grad.dtype == torch.float32 and f.grad.tolist() == [[1.0] * 3] * 3
    d = torch.autograd.Variable(torch.randn(3, 3).double(), requires_grad=True)
    d.float().sum().backward()
    assert d.grad.dtype == torch.float64


@both()
def test_index_output_of_max_in_a_graph(torch):
    x = torch.randn(3, 3, requires_grad=True)
    y = torch.randn(3, 3, requires_grad=True)
    a = x + y
    b = torch.max(a, 1, True)[1].repeat(1, 3).double()
    (b + a).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 3


@both()
def test_numpy_of_a_grad_tensor(torch):
    x = torch.randn(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    with torch.no_grad():
        x.numpy()
    torch.randn(2, 2).numpy()


@both()
def test_setitem_into_a_plain_tensor_from_leaves(torch):
    x = torch.randn(3, 3)
    y = torch.randn(3, requires_grad=True)
    z = torch.randn(3, requires_grad=True)
    x[0] = y
    x[1] = 2 * z
    assert x.requires_grad and x.grad_fn is not None
    x.sum().backward()
    assert y.grad.tolist() == [1.0] * 3 and z.grad.tolist() == [2.0] * 3


@both()
def test_setitem_under_no_grad_into_a_leaf(torch):
    x = torch.randn(3, 3, requires_grad=True)
    with torch.no_grad():
        x[0] = torch.randn(3)
    assert x.requires_grad and x.grad_fn is None


@both()
def test_in_place_under_no_grad_still_bumps_the_version(torch):
    x = torch.randn(3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    z = (x * y).sum()
    with torch.no_grad():
        x *= 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


@both()
def test_increment_version(torch):
    for a in (torch.rand(3, requires_grad=True), torch.zeros(3, dtype=torch.int)):
        v = a._version
        torch.autograd.graph.increment_version(a)
        assert a._version == v + 1
    with torch.inference_mode():
        a = torch.rand(3, requires_grad=True)
        torch.autograd.graph.increment_version(a)
    torch.autograd.graph.increment_version(a)


@both()
def test_gradient_buffered_in_three_places(torch):
    x = torch.ones(3, 3, requires_grad=True)
    y = torch.ones(3, 3, requires_grad=True)
    a, b, c = x + 2, y + 2, x + 2
    add2 = a + b + c
    for _ in range(4):
        a, b, c = a * 2, b * 2, c * 2
    (add2 + a + b + c).backward(torch.ones(3, 3))
    assert x.grad.tolist() == [[34.0] * 3] * 3 and y.grad.tolist() == [[17.0] * 3] * 3


@both()
def test_pickled_tensors_keep_requires_grad(torch):
    import pickle
    x = torch.randn(3, 3, requires_grad=True)
    y = torch.randn(3, 3)
    for protocol in range(3):
        xc, yc = pickle.loads(pickle.dumps([x, y], protocol=protocol))
        assert xc.tolist() == x.tolist() and yc.tolist() == y.tolist()
        assert xc.requires_grad and not yc.requires_grad


@both()
def test_in_place_relu_on_a_view_frees_the_graph(torch):
    freed = [0]

    class CountDel:
        def __del__(self):
            freed[0] += 1

    def build():
        root = torch.randn(3, 3, requires_grad=True)
        copy = root.clone()
        copy.grad_fn.register_hook(CountDel())
        view = copy.view(9)
        torch.nn.functional.relu(view, inplace=True)

    build()
    assert freed[0] == 1


@both()
def test_in_place_on_a_view_of_a_leaf_fails_at_once(torch):
    x = torch.zeros(1, requires_grad=True)
    y = x.view_as(x)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation."):
        y.add_(1)


@both()
def test_in_place_relu_on_a_view_keeps_its_node(torch):
    import gc
    a = torch.arange(10.0, requires_grad=True)
    b = a.narrow(0, 0, 2).clone().view(-1)
    b.relu_()
    c = b.clone()
    del b
    gc.collect()
    s = c.sum()
    s.backward()
    assert s.item() == 1.0 and a.grad.tolist() == [0.0, 1.0] + [0.0] * 8
    a = torch.rand(10, requires_grad=True).narrow(0, 0, 10)
    with pytest.raises(RuntimeError):
        a.relu_()


@both()
def test_out_argument_and_autograd(torch):
    a = torch.randn(2, 2, requires_grad=True)
    b = torch.randn(2, 2, requires_grad=True)
    x = torch.zeros_like(a)
    with pytest.raises(RuntimeError, match="out="):
        torch.mul(a, b, out=x)
    with torch.no_grad():
        r = torch.mul(a, b, out=x)
    assert r is x
    close(x, values(a) * values(b))
    a, b = torch.randn(2, 2), torch.randn(2, 2)
    x = torch.zeros(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="out="):
        torch.mul(a, b, out=x)


@both()
def test_threshold_in_place_on_a_view_then_double_backward(torch):
    inputs = torch.ones((1, 3, 4, 4), requires_grad=True)
    tmp1 = (inputs + 1).view_as(inputs)
    tmp2 = torch.nn.functional.threshold(tmp1, 0.0, 0.0, True)
    prob = torch.sigmoid(tmp2)
    (grads,) = torch.autograd.grad(outputs=prob, inputs=inputs,
                                   grad_outputs=torch.ones(prob.size()), create_graph=True,
                                   retain_graph=True)
    penalty = grads.sum()
    penalty.backward()
    s = 1 / (1 + np.exp(-2.0))
    np.testing.assert_allclose(values(grads), s * (1 - s), rtol=1e-6)
    np.testing.assert_allclose(values(inputs.grad), s * (1 - s) * (1 - 2 * s), rtol=1e-5)
    fn = penalty.grad_fn.next_functions[0][0].next_functions[1][0]
    assert fn.name() == "ThresholdBackwardBackward0"


@both()
def test_version_counter_shared_with_views_and_kept_by_data(torch):
    x = torch.randn(1, 2)
    v0 = x._version
    x.add_(1).add_(1)
    assert x._version > v0
    xz = x[:]
    assert x._version == xz._version
    xz.add_(1)
    assert x._version == xz._version
    v1 = x._version
    x.data = torch.randn(2, 3)
    assert x._version == v1
    x.add_(1)
    assert x._version > v1 and x._version == xz._version
    xz.add_(1)
    assert x._version == xz._version


@both()
def test_grad_buffers_copied_only_when_shared(torch):
    class Add(torch.autograd.Function):
        seen = None

        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            Add.seen = g.data_ptr()
            return g, g

    class Broadcast(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.size = x.size()
            return torch.tensor([1.0])

        @staticmethod
        def backward(ctx, g):
            return torch.ones(1).expand(ctx.size)

    a = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(3, 4, requires_grad=True)
    Broadcast.apply(Add.apply(a, b)).backward()
    assert a.grad.data_ptr() != Add.seen and b.grad.data_ptr() != Add.seen
    a.grad = b.grad = None
    Add.apply(a, b)[1][0].backward()
    pa, pb = a.grad.data_ptr(), b.grad.data_ptr()
    assert pa != pb
    assert Add.seen in (pa, pb)


@both()
def test_data_assignment_keeps_the_python_object_and_checks_dtype(torch):
    a = torch.randn(1, 2)
    b = torch.randn(1, 2)
    ident = id(b)
    b.data = a
    assert id(b) == ident and b.tolist() == a.tolist()
    a = torch.tensor(1.0, requires_grad=True)
    a.data = torch.tensor(2.0)
    assert a.item() == 2.0
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        a.data = torch.tensor(3, dtype=torch.int64)


@both()
def test_saved_attributes_of_nodes(torch):
    a = torch.ones(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    stacked = torch.stack([a, b], dim=0)
    prod = (a * 2) * b
    assert prod.grad_fn._saved_self.tolist() == [2.0]
    assert isinstance(prod.grad_fn._saved_self, torch.Tensor)
    assert stacked.grad_fn._saved_dim == 0 and isinstance(stacked.grad_fn._saved_dim, int)
    prod.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        prod.grad_fn._saved_self
    assert stacked.grad_fn._saved_dim == 0
    t = torch.tanh(torch.ones(2, requires_grad=True))
    assert t.grad_fn._saved_result.tolist() == t.tolist()
    x = torch.tensor([1.0], requires_grad=True)
    assert torch.div(x, 2.0, rounding_mode="trunc").grad_fn._saved_rounding_mode == "trunc"
    assert torch.div(x, 2.0, rounding_mode=None).grad_fn._saved_rounding_mode is None
    m = torch.ones(2, 2, requires_grad=True)
    assert tuple(m.mean().grad_fn._saved_self_sym_sizes) == (2, 2)


@both()
def test_unsafe_preserve_version_counter_keeps_versions(torch):
    x = torch.ones(2, requires_grad=True).clone()
    x.add_(1)
    x.add_(2)
    y = torch.ones(2, requires_grad=True).clone()
    with torch.autograd._unsafe_preserve_version_counter(x):
        x.mul_(2)
        x.mul_(3)
    assert x._version == 2
    with torch.autograd._unsafe_preserve_version_counter((x, y)):
        x.mul_(2)
        y.mul_(3)
    assert (x._version, y._version) == (2, 0)
    close(x, [48, 48])


@both()
def test_allow_mutation_on_saved_tensors_keeps_the_saved_value(torch):
    a = torch.tensor([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]], dtype=torch.float64, requires_grad=True)

    def fn():
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.backward()
        return a.grad

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fn()
    a.grad = None
    with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        grad = fn()
        with pytest.raises(RuntimeError, match="^allow_mutation_on_saved_tensors contexts cannot "
                           "be nested$"):
            with torch.autograd.graph.allow_mutation_on_saved_tensors():
                pass
    close(grad, 2 * values(a))
    assert len(ctx.cloned) == 0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fn()  # the block is closed: the ordinary check is back
