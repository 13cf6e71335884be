"""The engine's order and pass state as PyTorch shows them: Node._sequence_nr /
_set_sequence_nr (the ready-queue order), torch._C._autograd._get_current_graph_task_keep_graph,
and the non-reentrant checkpoint's early stop (set_checkpoint_early_stop), backward inside a
checkpointed function, and nested checkpoints' graphs freed. Each case on funcgrad.mutable
and on real torch 2.13 as the oracle."""
from __future__ import annotations

import collections
import gc
import weakref
from functools import partial

import pytest

from tests.mutable.pytorch_port import both, values


@both()
def test_set_sequence_nr_decides_the_order_of_ready_nodes(torch):
    x, y, z = [torch.randn(4, requires_grad=True) for _ in range(3)]
    a, b = x + y, y + z
    c = a + b
    assert a.grad_fn._sequence_nr() < b.grad_fn._sequence_nr() < c.grad_fn._sequence_nr()
    order = []

    def log(grad, name):
        order.append(name)
        return grad

    for t, name in ((a, "a"), (b, "b"), (c, "c")):
        t.register_hook(partial(log, name=name))
    c.sum().backward(retain_graph=True)
    assert order == ["c", "b", "a"]  # the later-made node first
    a.grad_fn._set_sequence_nr(100)
    b.grad_fn._set_sequence_nr(99)
    c.grad_fn._set_sequence_nr(99)  # a tie with b is allowed
    assert (a.grad_fn._sequence_nr(), b.grad_fn._sequence_nr()) == (100, 99)
    order.clear()
    c.sum().backward()
    assert order == ["c", "a", "b"]
    assert values(y.grad).tolist() == [4.0] * 4


@both()
def test_sequence_nr_of_an_accumulator_and_argument_errors(torch):
    x = torch.randn(2, requires_grad=True)
    node = (x * 2).grad_fn
    assert node.next_functions[0][0]._sequence_nr() == 2 ** 64 - 1
    for bad, error, message in ((-1, OverflowError, "can't convert negative int to unsigned"),
                                (2 ** 64, OverflowError, "int too big to convert"),
                                (1.5, TypeError, "an integer is required"),
                                ("a", TypeError, "an integer is required")):
        with pytest.raises(error, match=f"^{message}$"):
            node._set_sequence_nr(bad)
    node._set_sequence_nr(True)
    assert node._sequence_nr() == 1


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@both()
def test_current_graph_task_keep_graph(torch):
    seen = []
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: seen.append(torch._C._autograd._get_current_graph_task_keep_graph()))
    y.sum().backward(retain_graph=True)
    y.sum().backward(create_graph=True)  # retain_graph follows create_graph
    torch.autograd.grad(y.sum(), x, retain_graph=False, create_graph=True)
    assert seen == [True, True, False]
    assert torch._C._autograd._get_current_graph_task_keep_graph() is True  # outside a pass


def counting_clone(count):
    def fn(x):
        out = x.sin().cos()
        count.append(1)  # after the last op that saves a tensor
        return out.clone()
    return fn


@both()
def test_checkpoint_early_stop(torch):
    checkpoint = torch.utils.checkpoint.checkpoint
    count = []
    a = torch.tensor(1.0, requires_grad=True)
    checkpoint(counting_clone(count), a, use_reentrant=False).backward()
    assert len(count) == 1  # the recomputation stopped once sin and cos had saved again
    count.clear()
    checkpoint(counting_clone(count), a, use_reentrant=False, early_stop=False).backward()
    assert len(count) == 2
    count.clear()
    with torch.utils.checkpoint.set_checkpoint_early_stop(False):
        out = checkpoint(counting_clone(count), a, use_reentrant=False, early_stop=True)
    out.backward()  # the setting in force at forward time wins over the argument
    assert len(count) == 2


@both()
def test_checkpoint_saving_more_when_run_again(torch):
    checkpoint = torch.utils.checkpoint.checkpoint
    runs = []

    def fn(x):
        runs.append(1)
        return x.sin().exp() if len(runs) == 1 else x.sin().exp().sin()

    a = torch.randn(1, requires_grad=True)
    with torch.utils.checkpoint.set_checkpoint_early_stop(False):
        out = checkpoint(fn, a, use_reentrant=False)
    with pytest.raises(torch.utils.checkpoint.CheckpointError,
                       match="^torch.utils.checkpoint: trying to save more tensors during "
                             "recomputation than during the original forward pass."):
        out.sum().backward()
    runs.clear()
    checkpoint(fn, a, use_reentrant=False).sum().backward()  # early stop: never sees more


def grad_of(torch, fn):
    def wrapper(x):
        with torch.enable_grad():
            (g,) = torch.autograd.grad(fn(x), x, create_graph=True)
        return g
    return wrapper


def ck(torch, fn):
    return lambda x: torch.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)


def f(x):
    return x.sin().exp().sin()


@both()
@pytest.mark.parametrize("early_stop", [True, False])
def test_backward_inside_a_checkpointed_function(torch, early_stop):
    def g(x):
        a = x.sin().exp().sin()
        torch.autograd.grad(a, x)  # a backward while the first run has not returned
        return x.sin()

    x = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    with torch.utils.checkpoint.set_checkpoint_early_stop(early_stop):
        got = grad_of(torch, ck(torch, g))(x)
        twice = grad_of(torch, ck(torch, grad_of(torch, ck(torch, f))))(x)
    expected = grad_of(torch, g)(x)
    assert values(got) == pytest.approx(values(expected), rel=1e-12)
    assert values(twice) == pytest.approx(values(grad_of(torch, grad_of(torch, f))(x)), rel=1e-12)


@both()
def test_nested_checkpoint_graphs_are_freed(torch):
    def alive_after(fn):
        def scope():
            a = torch.randn((), requires_grad=True)
            out = fn(a)
            refs, seen, queue = [], set(), collections.deque([out.grad_fn])
            while queue:
                node = queue.popleft()
                if node is None or node in seen:
                    continue
                seen.add(node)
                marker = type("Marker", (), {})()
                node.metadata["marker"] = marker
                refs.append(weakref.ref(marker))
                queue.extend(n for n, _ in node.next_functions)
            return refs
        return [r for r in scope() if r() is not None]

    gc.disable()  # freed by reference counting alone, as in PyTorch
    try:
        for fn in (grad_of(torch, ck(torch, f)), grad_of(torch, ck(torch, ck(torch, f))),
                   grad_of(torch, ck(torch, grad_of(torch, f)))):
            assert alive_after(fn) == []
    finally:
        gc.enable()


@both()
@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook_per_pass_when_one_fails(torch, mode):
    t1, t2, t3 = [torch.rand(2, requires_grad=True) for _ in range(3)]
    seen = []
    hook = (lambda grads: seen.append([g is not None for g in grads])) if mode == "all" \
        else (lambda grad: seen.append("any"))
    handle = torch.autograd.graph.register_multi_grad_hook((t1, t2, t3), hook, mode=mode)
    calls = []

    class FailOnce(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("first pass fails")
            return g

    out = (FailOnce.apply(t2) * t3).sum()
    with pytest.raises(RuntimeError, match="first pass fails"):
        out.backward(inputs=(t2, t3), retain_graph=True)  # t3's hook ran: its pass never ends
    out.backward(inputs=(t2, t3), retain_graph=True)
    out.backward(inputs=(t2, t3))
    assert seen == ([[False, True, True]] * 2 if mode == "all" else ["any"] * 3)
    handle.remove()
