"""Saved-tensor hooks and multi-grad hooks (torch.autograd.graph) from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import pytest

from pytorch_port import both, close, values


@both()
def test_default_saved_tensor_hooks_apply_and_nest(torch):
    import warnings
    graph = torch.autograd.graph

    def pack(x):
        warnings.warn("pack")
        return x

    with graph.saved_tensors_hooks(pack, lambda x: x):
        a = torch.ones(5, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            a * a
        assert len([w for w in caught if str(w.message) == "pack"]) == 2
    for pack_fn, unpack_fn, factor in ((lambda x: x, lambda x: x, 2),
                                       (lambda x: 2 * x, lambda x: x / 2, 2),
                                       (lambda x: 2 * x, lambda x: x, 4)):
        with graph.saved_tensors_hooks(pack_fn, unpack_fn):
            a = torch.randn(5, dtype=torch.float64, requires_grad=True)
            y = a * a
            y.sum().backward()
            close(a.grad, factor * values(a))
    with graph.saved_tensors_hooks(lambda x: 3 * x, lambda x: 3 * x):
        b = torch.randn(5, dtype=torch.float64, requires_grad=True)
        with graph.saved_tensors_hooks(lambda x: 5 * x, lambda x: 5 * x):
            a = torch.randn(5, dtype=torch.float64, requires_grad=True)
            y = a * a
        z = b * b
    y.sum().backward()
    z.sum().backward()
    close(a.grad, 50 * values(a))
    close(b.grad, 18 * values(b))
    a = torch.randn(5, dtype=torch.float64, requires_grad=True)
    (a * a).sum().backward()
    close(a.grad, 2 * values(a))


@both()
def test_saved_tensor_hooks_can_be_disabled(torch):
    graph = torch.autograd.graph
    with graph.disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
    with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with graph.disable_saved_tensors_hooks("hooks are off here"):
                pass


@both()
def test_errors_in_pack_and_unpack_hooks_propagate(torch):
    class Custom(Exception):
        pass

    def fail(x):
        raise Custom("hook failed")

    a = torch.tensor(1.0, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(fail, lambda x: x):
        with pytest.raises(Custom, match="hook failed"):
            torch.sin(a)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, fail):
        out = torch.sin(a)
        with pytest.raises(Custom, match="hook failed"):
            out.backward()


@both()
def test_pack_runs_once_per_save_and_unpack_once_per_use(torch):
    counts = [0, 0]

    def pack(x):
        counts[0] += 1
        return x

    def unpack(x):
        counts[1] += 1
        return x

    x = torch.ones(4, requires_grad=True)
    y = torch.ones(4)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = x * y
        assert counts == [1, 0]
        out.sum().backward()
        assert counts == [1, 1]


@both()
def test_pack_hook_writing_its_input_is_refused(torch):
    def bump(x):
        x += 1
        return x

    a = torch.randn(5, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(bump, lambda x: x):
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input "
                                               "in place."):
            torch.exp(a)


@both()
def test_saved_tensor_hooks_and_double_backward(torch):
    graph = torch.autograd.graph
    with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        a = torch.randn(5, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad((a ** 3).sum(), (a,), create_graph=True)
        g.sum().backward()
        close(a.grad, 6 * values(a))
    with graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        a = torch.randn(5, dtype=torch.float64, requires_grad=True)
        s = (a ** 3).sum()
    (g,) = torch.autograd.grad(s, (a,), create_graph=True)
    g.sum().backward()
    close(a.grad, 12 * values(a))


@both()
def test_python_numbers_are_not_packed(torch):
    def fail(x):
        raise RuntimeError("this hook should not be called")

    with torch.autograd.graph.saved_tensors_hooks(fail, fail):
        a = torch.randn(5, requires_grad=True)
        torch.autograd.grad((a * 3).sum(), (a,))


@both()
def test_multi_grad_hook_sees_which_grads_were_computed(torch):
    t1, t2, t3 = (torch.rand(2, requires_grad=True) for _ in range(3))
    t1 = t1.mul(2)

    class Copy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    t2 = Copy.apply(t2)
    calls, seen = [0], [None]

    def hook(grads):
        calls[0] += 1
        seen[0] = [g is not None for g in grads]

    handle = torch.autograd.graph.register_multi_grad_hook((t1, t2, t3), hook)
    out = t2 * t3
    out.sum().backward(inputs=(t2, t3), retain_graph=True)
    assert calls[0] == 1 and seen[0] == [False, True, True]
    out.sum().backward(inputs=(t1,), retain_graph=True)
    assert calls[0] == 1
    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    assert calls[0] == 2 and seen[0] == [False, False, True]
    handle.remove()
    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    assert calls[0] == 2
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got "
                                         "foo"):
        torch.autograd.graph.register_multi_grad_hook((t1, t2), lambda _: None, mode="foo")


RAW_SAVED = "grad_fn._raw_saved_* (SavedTensor) needs the _ops.py patch in findings/mspeed.md [mutable 21:00]"


@both()
def test_hooks_registered_on_one_saved_tensor(torch):
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = a * a
    y.grad_fn._raw_saved_self.register_hooks(lambda x: 2 * x, lambda x: x / 2)
    close(y.grad_fn._saved_self, values(a))
    y.sum().backward()
    close(a.grad, 2 * values(a))
    y = a * a  # the pack hook's doubling is kept: one of the two factors doubles
    y.grad_fn._raw_saved_self.register_hooks(lambda x: 2 * x, lambda x: x)
    close(y.grad_fn._saved_self, 2 * values(a))
    a.grad = None
    y.sum().backward()
    close(a.grad, 3 * values(a))
    e = torch.exp(a)
    e.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)
    assert e.grad_fn._saved_result.grad_fn is e.grad_fn
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor whose hooks "
                       "have already been set"):
        e.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)
    y = a * a
    with pytest.raises(TypeError, match=r"^register_hooks\(\): incompatible function arguments"):
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        y.grad_fn._raw_saved_self.register_hooks(lambda x, b: x, lambda x: x)
    y.grad_fn._raw_saved_other.register_hooks(lambda x: x, lambda x: 1)
    with pytest.raises(TypeError, match="^Output of saved tensor unpack_hook expected to be a "
                       "Tensor but got result of type int"):
        y.grad_fn._saved_other
    y = a * a
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor after it has "
                       "been freed"):
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)


@both()
def test_raw_saved_data_and_unpack_hook(torch):
    def unpack(t):
        return t

    a = torch.tensor(2.0, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        b = a ** 2
    c = b.exp()
    d = c ** 2
    assert b.grad_fn._raw_saved_self.data is a and b.grad_fn._raw_saved_self.unpack_hook is unpack
    assert c.grad_fn._raw_saved_result.data is not c  # a saved output comes back detached
    close(c.grad_fn._raw_saved_result.data, values(c))
    assert c.grad_fn._raw_saved_result.unpack_hook is None
    assert d.grad_fn._raw_saved_self.data is c


@both()
def test_pack_hooks_run_with_grad_mode_off(torch):
    seen = []

    def pack(t):
        seen.append(torch.is_grad_enabled())
        t *= 2  # allowed on a leaf under no_grad: the write itself is what is refused
        return t

    a = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with pytest.raises(RuntimeError, match="^A saved tensor pack hook is modifying its input "
                           "in place"):
            a.sin()
    assert seen == [False]


@both()
def test_unpacked_value_keeps_its_own_version_counter(torch):
    a = torch.tensor(1.0, requires_grad=True)
    stand_in = a.detach().clone()
    versions = []

    class AddOneInBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            before = a._version
            x.add_(1)
            versions.append((before, a._version))
            return g

    with torch.autograd.graph.saved_tensors_hooks(lambda t: stand_in, lambda t: t):
        out = AddOneInBackward.apply(a)
    out.backward()
    assert versions == [(0, 0)]
    close(stand_in, 2.0)
