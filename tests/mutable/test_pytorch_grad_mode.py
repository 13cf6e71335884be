"""Grad mode, no_grad/enable_grad, inference mode and requires_grad from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import pytest

from pytorch_port import both


@both()
def test_no_grad_on_a_class_warns(torch):
    import warnings
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        @torch.no_grad()
        class Built:
            def __init__(self):
                assert not torch.is_grad_enabled()

            def method(self):
                assert torch.is_grad_enabled()

        Built().method()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @torch.no_grad()
        def plain():
            assert not torch.is_grad_enabled()

        plain()

        class Holder:
            @torch.no_grad()
            def __init__(self):
                assert not torch.is_grad_enabled()

            @torch.no_grad()
            def method(self):
                assert not torch.is_grad_enabled()

        Holder().method()
    assert [w for w in caught if w.category is not RuntimeWarning] == []


@both()
def test_no_grad_as_context_and_decorator(torch):
    x = torch.ones(3, 3, requires_grad=True)
    y = torch.ones(3, 3) * 4
    with torch.no_grad():
        w = x + y

    def adder(a, b):
        return a + b

    for wrapped in (torch.no_grad()(adder), torch.no_grad(adder)):
        z = wrapped(x, y)
        for t in (w, z):
            assert not t.requires_grad and t.grad_fn is None
            with pytest.raises(RuntimeError):
                t.backward(torch.ones(3, 3))
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        adder(x, y)
        assert not torch.is_grad_enabled()


@both()
def test_enable_grad_decorator_without_call(torch):
    x = torch.ones(1, requires_grad=True)

    @torch.enable_grad
    def double(t):
        return t * 2

    with torch.no_grad():
        z = double(x)
    assert z.requires_grad


@both()
def test_grad_mode_decorators_on_generators(torch):
    @torch.no_grad()
    def quiet():
        for i in range(4):
            assert not torch.is_grad_enabled()
            yield i

    @torch.enable_grad()
    def loud():
        for i in range(4):
            assert torch.is_grad_enabled()
            yield i

    with torch.enable_grad():
        assert list(quiet()) == [0, 1, 2, 3]
        for _ in quiet():
            assert torch.is_grad_enabled()
    with torch.no_grad():
        for _ in loud():
            assert not torch.is_grad_enabled()


@both()
def test_grad_mode_decorators_nest_recursively(torch):
    @torch.enable_grad()
    def on(depth):
        assert torch.is_grad_enabled()
        if depth:
            off(depth - 1)
            assert torch.is_grad_enabled()

    @torch.no_grad()
    def off(depth):
        assert not torch.is_grad_enabled()
        if depth:
            on(depth - 1)
            assert not torch.is_grad_enabled()

    def on_ctx(depth):
        with torch.enable_grad():
            assert torch.is_grad_enabled()
            if depth:
                off_ctx(depth - 1)
                assert torch.is_grad_enabled()

    def off_ctx(depth):
        with torch.no_grad():
            assert not torch.is_grad_enabled()
            if depth:
                on_ctx(depth - 1)
                assert not torch.is_grad_enabled()

    for outer, state in ((torch.enable_grad, True), (torch.no_grad, False)):
        with outer():
            on(6)
            assert torch.is_grad_enabled() is state
            on_ctx(6)
            assert torch.is_grad_enabled() is state


@both()
def test_grad_mode_decorators_on_coroutines(torch):
    def make(decorator, state):
        @decorator()
        def coro(n=4):
            assert torch.is_grad_enabled() is state
            for i in range(n):
                r = yield i
                assert torch.is_grad_enabled() is state
                assert r == i
        return coro

    for decorator, state, outer in ((torch.no_grad, False, torch.enable_grad),
                                    (torch.enable_grad, True, torch.no_grad)):
        with outer():
            co, r = make(decorator, state)(), None
            with pytest.raises(StopIteration):
                while True:
                    assert torch.is_grad_enabled() is not state
                    r = co.send(r)
                    assert torch.is_grad_enabled() is not state


@both()
def test_grad_mode_coroutines_recover_from_thrown_exceptions(torch):
    class Recoverable(Exception):
        pass

    class Fatal(Exception):
        pass

    class Secondary(Exception):
        pass

    def make(decorator, state):
        @decorator()
        def coro(n=4):
            raised = False
            for i in range(n):
                try:
                    assert torch.is_grad_enabled() is state
                    yield -i if raised else i
                except Recoverable:
                    assert torch.is_grad_enabled() is state
                    raised = True
                except Fatal:
                    assert torch.is_grad_enabled() is state
                    raise Secondary from None
        return coro

    for decorator, state, outer in ((torch.no_grad, False, torch.enable_grad),
                                    (torch.enable_grad, True, torch.no_grad)):
        with outer():
            co = make(decorator, state)()
            assert next(co) == 0
            with pytest.raises(StopIteration):
                while True:
                    assert co.throw(Recoverable) < 0
            co = make(decorator, state)()
            assert next(co) == 0
            with pytest.raises(Secondary):
                co.throw(Fatal)
            assert torch.is_grad_enabled() is not state


@both()
def test_grad_mode_coroutines_see_generator_exit(torch):
    for decorator, state, outer in ((torch.no_grad, False, torch.enable_grad),
                                    (torch.enable_grad, True, torch.no_grad)):
        seen = set()

        @decorator()
        def coro():
            for i in range(10):
                try:
                    assert torch.is_grad_enabled() is state
                    yield i
                except GeneratorExit:
                    assert torch.is_grad_enabled() is state
                    seen.add("exit")
                    raise

        with outer():
            co = coro()
            for _ in range(3):
                next(co)
            co.close()
        assert seen == {"exit"}


@both()
def test_custom_function_under_no_grad(torch):
    class PlusOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x + 1

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.ones(2, 2, requires_grad=True)
    with torch.no_grad():
        y = PlusOne.apply(x)
    assert not y.requires_grad and y.grad_fn is None


@both()
def test_requires_grad_propagates(torch):
    x, y = torch.randn(3, 3), torch.randn(3, 3)
    z = torch.randn(3, 3, requires_grad=True)
    a = x + y
    assert not a.requires_grad
    b = a + z
    assert b.requires_grad
    b.backward(torch.ones(3, 3))
    assert z.grad.tolist() == [[1.0] * 3] * 3 and x.grad is None


@both()
def test_requires_grad_underscore(torch):
    x = torch.randn(3, 3)
    y = torch.randn(3, 3, requires_grad=True)
    for t in (x, y):
        assert t.requires_grad_() is t and t.requires_grad
        assert t.requires_grad_(True) is t and t.requires_grad
    z = x * y
    with pytest.raises(RuntimeError):
        z.requires_grad_(False)
    assert z.requires_grad_() is z and z.requires_grad_(True) is z and z.requires_grad
    for t in (x, y):
        assert t.requires_grad_(False) is t and not t.requires_grad


@both()
def test_in_place_add_of_a_grad_tensor_makes_requires_grad(torch):
    for a in (torch.randn(3, 3), torch.randn(3, 3) + 0):
        b = torch.randn(3, 3, requires_grad=True)
        a += b
        assert a.requires_grad and a.grad_fn is not None


@both()
def test_in_place_before_requires_grad_is_set(torch):
    a = torch.randn(2, 3)
    a.add_(5)
    a.requires_grad = True
    a.sum().backward()
    assert a.grad.tolist() == [[1.0] * 3] * 2
    a = torch.randn(2, 3)
    a[:].add_(5)
    a.requires_grad = True
    a.sum().backward()
    assert a.grad.tolist() == [[1.0] * 3] * 2
    a = torch.randn(2, 3)
    b = a[:]
    a.requires_grad = True
    with pytest.raises(RuntimeError):
        a.add_(5)
    with pytest.raises(RuntimeError):
        b.add_(5)


@both()
def test_set_grad_enabled_as_context_and_call(torch):
    x = torch.tensor([1.0], requires_grad=True)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    with torch.set_grad_enabled(True):
        assert (x * 2).requires_grad
    with torch.set_grad_enabled(False):
        torch.set_grad_enabled(True)
        assert (x * 2).requires_grad
    assert torch.is_grad_enabled()


@both()
@pytest.mark.parametrize("decorator", [True, False])
def test_set_grad_enabled_as_decorator_leaves_mode_alone(torch, decorator):
    with torch.enable_grad():
        if decorator:
            @torch.set_grad_enabled(False)
            def inner(x):
                return x.sin()
        else:
            def inner(x):
                return x.sin()

            setter = torch.set_grad_enabled(False)
            assert not torch.is_grad_enabled()
            inner = setter(inner)
            assert torch.is_grad_enabled()
        assert torch.is_grad_enabled()
        assert not inner(torch.zeros(1, requires_grad=True)).requires_grad
        assert torch.is_grad_enabled()


@both()
def test_torch_is_inference_follows_where_a_tensor_was_made(torch):
    outside = torch.ones(1, 2, 3, requires_grad=True)
    a = outside.clone()
    with torch.inference_mode():
        made = torch.ones(1, 2, 3)
        product = made * made
        assert torch.is_inference(made) and torch.is_inference(product)
        a.add_(2)  # a normal tensor written in inference mode stays normal
    assert not torch.is_inference(outside) and not torch.is_inference(a)
    assert not torch.is_inference(made * 2)  # computed outside: a normal tensor
    with pytest.raises(TypeError, match=r"^is_inference\(\): argument 'input' \(position 1\) "
                       r"must be Tensor, not list$"):
        torch.is_inference([1.0])
