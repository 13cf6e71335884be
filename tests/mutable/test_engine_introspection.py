"""What a hook may ask the engine about the backward pass running (torch._C's
_will_engine_execute_node, _current_graph_task_execution_order, _current_autograd_node and
the per-thread set_multithreading_enabled switch), each case on funcgrad.mutable and on real
torch 2.13 as the oracle."""
from __future__ import annotations

import threading

import pytest

from tests.mutable.pytorch_port import both


def leaf_node(torch, t):
    """The AccumulateGrad node of a leaf (reached through a throwaway op)."""
    return t.clone().grad_fn.next_functions[0][0]


def doubling(torch):
    class Doubling(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Doubling


@both()
def test_will_engine_execute_node_per_kind_of_pass(torch):
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(2, 3, requires_grad=True)
    prod = x * w
    aside = prod.cos()  # off the path to the output
    out_fn = doubling(torch).apply(prod)
    nodes = {"x": leaf_node(torch, x), "w": leaf_node(torch, w), "prod": prod.grad_fn,
             "aside": aside.grad_fn, "out": out_fn.grad_fn}
    seen = []
    out_fn.register_hook(lambda g: seen.append(
        {k: torch._C._will_engine_execute_node(n) for k, n in nodes.items()}))
    loss = out_fn.sum()

    loss.backward(retain_graph=True)
    assert seen.pop() == {"x": True, "w": True, "prod": True, "aside": False, "out": True}
    torch.autograd.backward(loss, inputs=(w,), retain_graph=True)
    assert seen.pop() == {"x": False, "w": True, "prod": True, "aside": False, "out": True}
    torch.autograd.backward(loss, inputs=(x, prod), retain_graph=True)
    assert seen.pop() == {"x": True, "w": False, "prod": True, "aside": False, "out": True}
    # toward a non-leaf, autograd.grad: the leaves lie beyond it, so they do not run
    del nodes["x"], nodes["w"]
    torch.autograd.grad(loss, (prod,), retain_graph=True)
    assert seen.pop() == {"prod": True, "aside": False, "out": True}


@both()
def test_will_engine_execute_node_errors(torch):
    x = torch.randn(3, requires_grad=True)
    y = (x * 3).sum()
    with pytest.raises(RuntimeError, match="expects an grad_fn, but got Tensor"):
        torch._C._will_engine_execute_node(y)
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        torch._C._will_engine_execute_node(y.grad_fn)
    # asking about a leaf while autograd.grad runs toward it is refused (grad never runs
    # a leaf's accumulator)
    x_node = leaf_node(torch, x)
    z = x * 2
    z.register_hook(lambda g: torch._C._will_engine_execute_node(x_node))
    with pytest.raises(RuntimeError, match="currently running autograd.grad"):
        torch.autograd.grad(z.sum(), (x,))
    # a node of another graph is not run
    other = (torch.ones(1, requires_grad=True) * 2).grad_fn
    answers = []
    u = x * 5
    u.register_hook(lambda g: answers.append(torch._C._will_engine_execute_node(other)))
    u.sum().backward()
    assert answers == [False]


def names(order):
    return [type(n).__name__ for n in order]


@both()
def test_execution_order_is_the_order_nodes_run(torch):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    prod = a * b
    total = (prod.exp() + prod.sin()).sum()
    predicted, ran = [], []
    total.register_hook(lambda g: predicted.append(torch._C._current_graph_task_execution_order()))
    for t in (prod, a, b):
        t.register_hook(lambda g: ran.append(torch._C._current_autograd_node()))
    with torch.autograd.set_multithreading_enabled(False):
        total.backward()
    (order,) = predicted
    assert names(order) == ["SumBackward0", "AddBackward0", "SinBackward0", "ExpBackward0",
                            "MulBackward0", "AccumulateGrad", "AccumulateGrad"]
    # the order is the walk's: the nodes whose tensor hooks ran come in the same order
    assert [n for n in order if any(n is r for r in ran)] == ran
    assert order[-2].variable is a or order[-2].variable is b


@both()
def test_execution_order_toward_inputs_leaves_out_what_does_not_run(torch):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    prod = a * b
    total = (prod.exp() + b.sin()).sum()
    seen = []
    total.register_hook(lambda g: seen.append(names(torch._C._current_graph_task_execution_order())))
    with torch.autograd.set_multithreading_enabled(False):
        torch.autograd.grad(total, (prod,))
        x, y = a.exp(), b.exp()
        two = x.sum() + y.sum() * 2
        two.register_hook(lambda g: seen.append(names(torch._C._current_graph_task_execution_order())))
        torch.autograd.grad(two, (a, b))
    assert seen == [["SumBackward0", "AddBackward0", "ExpBackward0", "MulBackward0"],
                    ["AddBackward0", "MulBackward0", "SumBackward0", "SumBackward0",
                     "ExpBackward0", "AccumulateGrad", "ExpBackward0", "AccumulateGrad"]]


@both()
def test_execution_order_errors(torch):
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        torch._C._current_graph_task_execution_order()
    x = torch.randn(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: torch._C._current_graph_task_execution_order())
    with pytest.raises(RuntimeError, match=r"with multithreading disabled, e\.g\. by running:\n"
                       r"\n>>> with torch\.autograd\.set_multithreading_enabled\(False\):\n"):
        y.sum().backward()


@both()
def test_current_autograd_node_in_hooks_and_nested_passes(torch):
    assert torch._C._current_autograd_node() is None
    log = []

    def current(where):
        return lambda *args: log.append((where, type(torch._C._current_autograd_node()).__name__))

    class Noted(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            current("function")()
            with torch.enable_grad():  # (a backward runs with grad mode off)
                inner = torch.ones(2, requires_grad=True).exp()
                inner.register_hook(current("inner tensor hook"))
                inner.sum().backward()
            current("function, after the inner pass")()
            return g * 2

    a = torch.randn(2, requires_grad=True)
    e = Noted.apply(a).exp()
    e.register_hook(current("tensor hook"))
    e.grad_fn.register_prehook(current("pre-hook"))
    e.grad_fn.register_hook(current("post-hook"))
    a.register_hook(current("leaf hook"))
    torch.autograd.backward(e.sum(), inputs=(a,))
    assert log == [("tensor hook", "ExpBackward0"), ("pre-hook", "ExpBackward0"),
                   ("post-hook", "ExpBackward0"), ("function", "NotedBackward"),
                   ("inner tensor hook", "ExpBackward0"),
                   ("function, after the inner pass", "NotedBackward"),
                   ("leaf hook", "AccumulateGrad")]
    assert torch._C._current_autograd_node() is None


@both()
def test_multithreading_switch_is_per_thread(torch):
    assert torch._C._is_multithreading_enabled()
    switch = torch.autograd.set_multithreading_enabled(False)  # takes effect when made
    seen = []
    worker = threading.Thread(target=lambda: seen.append(torch._C._is_multithreading_enabled()))
    worker.start()
    worker.join()
    assert not torch._C._is_multithreading_enabled() and seen == [True]
    with switch:
        pass
    assert torch._C._is_multithreading_enabled()


@both()
def test_multithreading_switch_as_block_and_call(torch):
    with torch.autograd.set_multithreading_enabled(False):
        assert not torch.autograd.is_multithreading_enabled()
        torch.autograd.set_multithreading_enabled(True)  # a call inside the block
        assert torch.autograd.is_multithreading_enabled()
    assert torch.autograd.is_multithreading_enabled()
    torch.autograd.set_multithreading_enabled(False)
    assert not torch.autograd.is_multithreading_enabled()
    torch.autograd.set_multithreading_enabled(True)
    assert torch.autograd.is_multithreading_enabled()


def test_a_pass_record_kept_after_the_pass_holds_no_graph():
    # what hooks ask is answered from the pass's record; kept past the pass (a closure, a
    # checkpoint frame) it must not keep the graph alive
    import gc
    import weakref

    import funcgrad.mutable as fm
    from funcgrad.mutable._autograd import current_graph_task

    kept = []
    x = fm.randn(3, requires_grad=True)
    y = (x * 2).exp()
    node = weakref.ref(y.grad_fn)
    y.register_hook(lambda g: kept.append(current_graph_task()))
    y.sum().backward()
    del y
    gc.disable()  # (freed by reference counting, as in PyTorch)
    try:
        assert kept and node() is None
    finally:
        gc.enable()
