"""Views: which are differentiable, in-place writes into them, and custom Functions returning them from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import numpy as np
import pytest

from pytorch_port import both, close, passthrough


@both()
def test_graph_nodes_are_instances_of_node(torch):
    Node = torch.autograd.graph.Node
    a = torch.rand(3, 3, requires_grad=True)
    b = a.exp()
    assert isinstance(b.grad_fn, Node) and issubclass(type(b.grad_fn), Node)
    assert Node not in type(b.grad_fn).mro()
    assert isinstance(b.grad_fn.next_functions[0][0], Node)
    assert not isinstance(None, Node) and not isinstance(1, Node) and not isinstance(Node, Node)
    assert issubclass(Node, Node)
    seen = []

    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(isinstance(ctx, Node))
            return x

        @staticmethod
        def backward(ctx, g):
            seen.append(isinstance(ctx, Node))
            return g

    out = Same.apply(a)
    assert isinstance(out.grad_fn, Node) and Node not in type(out.grad_fn).mro()
    out.sum().backward()
    assert seen == [True, True]


@both()
@pytest.mark.parametrize("grad_mode,requires_grad,errors", [
    (True, False, (None, None, None)),
    (True, True, (None, "Output 0 of Unbind is a view and is being modified inplace.",
                  "Output 1 of Unbind is a view and is being modified inplace.")),
    pytest.param(False, True, ("A view was created in no_grad mode and is being modified inplace",)
                 * 3, id="no_grad-requires_grad"),
    (False, False, (None, None, None))])
def test_view_as_and_unbind_views_under_grad_modes(torch, grad_mode, requires_grad, errors):
    def attempt(fn, error):
        if error is None:
            fn()
        else:
            with pytest.raises(RuntimeError, match=error):
                fn()

    inp = torch.rand(2, requires_grad=requires_grad).clone()
    with torch.set_grad_enabled(grad_mode):
        out = inp.view_as(inp)
    assert out._is_view()
    attempt(lambda: out.add_(1), errors[0])
    inp = torch.rand(2, requires_grad=requires_grad).clone()
    with torch.set_grad_enabled(grad_mode):
        pieces = inp.unbind()
    assert pieces[0]._is_view() and pieces[1]._is_view()
    attempt(lambda: pieces[0].add_(1), errors[1])
    attempt(lambda: pieces[1].add_(1), errors[2])


@both()
def test_writing_grad_values_into_views_made_by_functions(torch):
    ViewOf = passthrough(torch, view=True)

    for write in (lambda v, b: v.__iadd__(b), lambda v, b: v.copy_(b)):
        view = ViewOf.apply(torch.rand(1, 2))
        with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
            write(view, torch.rand(1, requires_grad=True))
    piece = torch.rand(1, 2).unbind()[0]
    with pytest.raises(RuntimeError, match="This view is the output of a function that returns "
                                           "multiple views."):
        piece.copy_(torch.rand(1, requires_grad=True))
    torch.rand(1, 2).select(1, 0).copy_(torch.rand(1, requires_grad=True))


@both()
def test_printing_grad_fn_of_tensors(torch):
    a = torch.ones(1, requires_grad=True)
    assert repr(a) == "tensor([1.], requires_grad=True)"
    assert repr(a.clone()) == "tensor([1.], grad_fn=<CloneBackward0>)"
    with torch.no_grad():
        b = a[:]
        b *= 2
    assert repr(b) == "tensor([2.], grad_fn=<Invalid>)"

    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    assert repr(Same.apply(a)) == "tensor([2.], grad_fn=<SameBackward>)"


@both()
def test_in_place_on_a_view_of_a_view_made_without_grad(torch):
    x = torch.zeros(2)
    with torch.no_grad():
        y = x.view(2)
    y.requires_grad_(True)
    z = y.view(2)
    with pytest.raises(RuntimeError, match="a view of a view .* is being .* inside the no_grad "
                                           "block"):
        z /= 2
    x = torch.zeros(2)
    with torch.inference_mode():
        y = x.view(2)
    y.requires_grad_(True)
    z = y.view(2)
    with pytest.raises(RuntimeError, match="a view of a view .* is being .* inside the "
                                           "inference_mode"):
        z /= 2


@both()
def test_custom_function_returning_a_select_of_its_input(torch):
    calls = [0]

    class Pick(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, idx):
            a.narrow(0, idx, 1)
            res = a.select(0, idx)
            ctx.save_for_backward(a)
            ctx.idx = idx
            return res

        @staticmethod
        def backward(ctx, g):
            calls[0] += 1
            (a,) = ctx.saved_tensors
            res = torch.zeros_like(a)
            res.select(0, ctx.idx).copy_(g)
            return res, None

    a = torch.ones(2, requires_grad=True)
    Pick.apply(a.clone(), 1).sum().backward()
    assert calls[0] == 1 and a.grad.tolist() == [0.0, 1.0]
    out = Pick.apply(a.clone(), 1)
    with pytest.raises(RuntimeError, match="Output 0 of Pick is a view and is being "
                                           "modified inplace"):
        out += 1


@both()
def test_custom_functions_that_write_their_inputs(torch):
    import warnings
    calls = [0]

    class AddInto(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            calls[0] += 1
            return g, g

    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    AddInto.apply(a.clone(), b).sum().backward()
    c = AddInto.apply(a.clone(), b)
    c += 2
    c.sum().backward()
    AddInto.apply(a.clone().view_as(a), b).sum().backward()
    assert calls[0] == 3 and a.grad.tolist() == [3.0, 3.0] and b.grad.tolist() == [3.0, 3.0]

    class DirtyTemp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            c = 3 * a
            c.add_(b)
            ctx.mark_dirty(c)
            return c

        @staticmethod
        def backward(ctx, g):
            return 3 * g, 3 * g

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DirtyTemp.apply(a.clone(), b)
    assert len([w for w in caught if w.category is not RuntimeWarning]) == 1

    class AddIntoTwo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            calls[0] += 1
            return ga + gab, ga + gab

    calls[0] = 0
    c, d = AddIntoTwo.apply(a.clone(), b)
    (c * d).sum().backward()
    c, d = AddIntoTwo.apply(a.clone(), b)
    c += 2
    (c * d).sum().backward()
    assert calls[0] == 2
    with pytest.raises(RuntimeError, match="your Function modifies inplace an input that is a "
                                           "view of another Tensor"):
        AddIntoTwo.apply(a.clone().view_as(a), b)

    class DirtyNotReturned(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a.clone(), a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga + gab, ga + 2 * gab

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward "
                                           "method were not returned as output."):
        DirtyNotReturned.apply(a.clone().view_as(a), b)


@both()
def test_mark_dirty_misuse(torch):
    class DirtyTempView(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            out = inp.clone().view_as(inp)
            ctx.mark_dirty(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="received a tensor that was not an input."):
        DirtyTempView.apply(torch.tensor([1.0], requires_grad=True).clone())

    class AddOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            inp.add_(1)
            ctx.mark_dirty(inp)
            return inp

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b, c = a.split_with_sizes([1, 1], dim=0)
    with pytest.raises(RuntimeError, match="output of a function that returns multiple view"):
        AddOne.apply(b)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        AddOne.apply(a.view_as(a))


@both()
def test_dirty_saved_view_does_not_leak(torch):
    import weakref

    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    def scope():
        x = torch.tensor(1.0, requires_grad=True).clone()
        x = x.view_as(x)
        Keep.apply(x)
        return weakref.ref(x)

    assert scope()() is None


@both()
def test_custom_function_returning_a_view_under_no_grad(torch):
    class Alias(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:]

        @staticmethod
        def backward(ctx, g):
            return g

    inp = torch.rand(2, requires_grad=True)
    with torch.no_grad():
        out = Alias.apply(inp)
        expected = inp[:]
    assert out.requires_grad == expected.requires_grad
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being "
                                           "modified inplace"):
        out.zero_()


@both()
def test_grad_mode_restored_after_a_nested_grad(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            before = torch.is_grad_enabled()
            with torch.enable_grad():
                y = torch.rand(g.size(), requires_grad=True)
                (grad,) = torch.autograd.grad(y ** 3, y, grad_outputs=g)
                assert torch.is_grad_enabled()
            assert torch.is_grad_enabled() == before
            return grad

    inp = torch.rand(3, requires_grad=True)
    Cube.apply(inp).sum().backward()
    Cube.apply(inp).sum().backward(create_graph=True)


@both()
def test_power_slope_at_a_zero_base(torch):
    for base in (torch.tensor([0.0, 0.0, 0.0]), 0):
        b = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        torch.sum(base ** b).backward()
        assert b.grad.tolist() == [-np.inf, 0.0, 0.0]


@both()
def test_custom_function_missing_methods(torch):
    class NoForward(torch.autograd.Function):
        @staticmethod
        def backward(ctx, g):
            return g

    class NoBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

    class Both(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g

    inp = torch.rand(1, requires_grad=True)
    with pytest.raises(NotImplementedError, match="must implement the forward"):
        NoForward.apply(inp)
    with pytest.raises(RuntimeError, match="must implement either the backward"):
        NoBackward.apply(inp).sum().backward()
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(inp).sum().backward()


@both()
def test_in_place_view_methods_rename_and_rechain(torch):
    def after(fn):
        b = torch.ones(1, 2, 1, requires_grad=True).clone()
        fn(b)
        return type(b.grad_fn).__name__, tuple(b.shape), b._version, b._is_view()

    assert after(lambda b: b.squeeze_()) == ("SqueezeBackward3", (2,), 1, False)
    assert after(lambda b: b.squeeze_(0)) == ("SqueezeBackward4", (2, 1), 1, False)
    assert after(lambda b: b.squeeze_((0, 2))) == ("SqueezeBackward5", (2,), 1, False)
    assert after(lambda b: b.unsqueeze_(0)) == ("UnsqueezeBackward1", (1, 1, 2, 1), 1, False)
    for name in ("transpose_", "swapdims_", "swapaxes_"):
        assert after(lambda b: getattr(b, name)(0, 1)) == ("TransposeBackward1", (2, 1, 1), 1,
                                                           False)
    a = torch.arange(6.0, requires_grad=True)
    b = a.view(2, 3).clone()
    assert b.t_() is b and type(b.grad_fn).__name__ == "TBackward1"
    assert type(b.grad_fn.next_functions[0][0]).__name__ == "CloneBackward0"
    b.unsqueeze_(0)
    (b * torch.arange(6.0).view(1, 3, 2)).sum().backward()
    close(a.grad, [0, 2, 4, 1, 3, 5])
    plain = torch.ones(2, 3)
    plain.t_()
    assert tuple(plain.shape) == (3, 2) and plain._version == 1 and plain.grad_fn is None
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in "
                       "an in-place operation"):
        torch.ones(2, 3, requires_grad=True).t_()


@both()
def test_in_place_view_of_a_view_stays_a_view_of_the_base(torch):
    d = torch.ones(2, 3, requires_grad=True)
    base = d.clone()
    row = base[0]
    row.unsqueeze_(0)
    assert tuple(row.shape) == (1, 3) and row._base is base and base._version == 1
    assert type(row.grad_fn).__name__ == "UnsqueezeBackward1"
    (row * torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    close(d.grad, [[1, 2, 3], [0, 0, 0]])
    pieces = torch.ones(2, 3, requires_grad=True).clone().unbind()
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace. This view is "
                       "the output of a function that returns multiple views"):
        pieces[0].unsqueeze_(0)
    with torch.inference_mode():
        made = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="^Inplace update to inference tensor outside "
                       "InferenceMode is not allowed"):
        made.transpose_(0, 1)


@both()
def test_unsafe_split_pieces_are_not_views_and_take_in_place(torch):
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    b = a * 2
    for split in (lambda t: t.unsafe_split(1), lambda t: torch.unsafe_split(t, 1),
                  lambda t: t.unsafe_chunk(3), lambda t: t.unsafe_split_with_sizes((1, 1, 1))):
        s1, s2, s3 = split(b)
        assert not s1._is_view() and s1._base is None
    s1, s2, s3 = b.unsafe_split(1)
    assert type(s1.grad_fn).__name__ == "UnsafeSplitBackward0"
    assert type(b.unsafe_split_with_sizes((2, 1))[0].grad_fn).__name__ == \
        "UnsafeSplitWithSizesBackward0"
    s1.mul_(s2)  # refused on split's views; allowed here
    assert (b._version, s1._version, s2._version) == (0, 1, 0)
    close(b[0], [12, 32])  # the pieces share the input's storage
    (s1.sum() + s3.sum()).backward()
    close(a.grad, [[12, 16], [4, 8], [2, 2]])


@both()
def test_double_backward_through_split_chunk_unbind_names_and_values(torch):
    names = []
    xs = np.array([0.5, -1.0, 2.0, 1.5, -0.25, 3.0])
    for pieces_of in (lambda x: x.split(2), lambda x: x.chunk(3), lambda x: x.unbind(),
                      lambda x: x.split([1, 3, 2]), lambda x: x.split(2)[:2]):
        x = torch.tensor(xs.tolist(), dtype=torch.float64, requires_grad=True)
        y = x * 1
        pieces = pieces_of(y)
        s = sum((p * p * p).sum() for p in pieces)
        (g,) = torch.autograd.grad(s, y, create_graph=True)
        names.append(type(g.grad_fn).__name__)
        (h,) = torch.autograd.grad((g * torch.arange(6.0, dtype=torch.float64)).sum(), x)
        mask = np.array([1, 1, 1, 1, 0, 0.0]) if len(pieces) == 2 else np.ones(6)
        close(h, 6 * xs * np.arange(6.0) * mask)
    assert names == ["CatBackward0", "CatBackward0", "StackBackward0", "CatBackward0",
                     "CatBackward0"]


@both()
def test_view_as_real_and_complex_share_storage_and_differentiate(torch):
    z = torch.tensor([[1 + 2j, 3 - 1j], [0.5 + 0.5j, -2j]], requires_grad=True)
    r = torch.view_as_real(z.clone()).transpose(0, 1)
    assert type(torch.view_as_real(z).grad_fn).__name__ == "ViewAsRealBackward0"
    assert r.dtype == torch.float32 and tuple(r.shape) == (2, 2, 2)
    (r * torch.arange(8.0).view(2, 2, 2)).sum().backward()
    assert z.grad.tolist() == [[1j, 4 + 5j], [2 + 3j, 6 + 7j]]
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    c = torch.view_as_complex(x)
    assert c._base is x and c.dtype == torch.complex64
    assert type(c.grad_fn).__name__ == "ViewAsComplexBackward0"
    (c * torch.tensor([1 + 1j, 2 - 1j])).abs().sum().backward()
    close(x.grad, [[0.6324555, 1.2649111], [1.3416408, 1.7888544]])
    w = torch.zeros(2, dtype=torch.complex64)
    torch.view_as_real(w)[0, 1] = 5  # a write through the view lands in the complex storage
    assert w.tolist() == [5j, 0j] and w._version == 1
    xd = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: torch.view_as_complex(x) * (1 + 2j), (xd,))
    assert torch.autograd.gradgradcheck(
        lambda x: torch.view_as_real(torch.view_as_complex(x) ** 2), (xd,))
    zd = torch.tensor([1 + 1j, 2], dtype=torch.complex128, requires_grad=True)
    assert torch.autograd.gradcheck(lambda z: torch.view_as_real(z) ** 2, (zd,))


@both()
def test_view_as_real_and_complex_refusals(torch):
    for call, message in ((lambda: torch.view_as_real(torch.zeros(2)),
                           "view_as_real is only supported for complex tensors"),
                          (lambda: torch.view_as_complex(torch.zeros(2, 3)),
                           "Tensor must have a last dimension of size 2"),
                          (lambda: torch.view_as_complex(torch.zeros(2, 2).t()),
                           "Tensor must have a last dimension with stride 1"),
                          (lambda: torch.view_as_complex(torch.zeros(2, 2, dtype=torch.int64)),
                           "view_as_complex is only supported for half, float and double "
                           "tensors, but got a tensor of scalar type: Long")):
        with pytest.raises(RuntimeError, match=message):
            call()
