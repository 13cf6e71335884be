"""Tensor and node hooks from PyTorch's test_autograd.py, ported: each test runs
on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import numpy as np
import pytest

from pytorch_port import both, close, values


@both()
def test_post_accumulate_hook_refused_on_non_leaf(torch):
    x = torch.rand(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered "
                                           "on non-leaf tensors"):
        (2 * x).register_post_accumulate_grad_hook(lambda t: None)


@both()
def test_post_accumulate_hooks_run_in_registration_order(torch):
    p = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    def subtract_grad(t):
        t.sub_(t.grad)

    def times_four(t):
        t.mul_(4.0)

    p.register_post_accumulate_grad_hook(subtract_grad)
    p.register_post_accumulate_grad_hook(times_four)
    p.sum().backward()
    assert p.tolist() == [0.0, 4.0, 8.0]


@both()
def test_post_accumulate_hook_on_two_tensors(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([5.0], requires_grad=True)
    def subtract_grad(t):
        t.sub_(t.grad)

    for t in (a, b):
        t.register_post_accumulate_grad_hook(subtract_grad)
    a.sum().backward()
    b.sum().backward()
    assert a.tolist() == [0.0, 1.0] and b.tolist() == [4.0]


@both()
def test_post_accumulate_hook_must_return_none(torch):
    p = torch.rand(2, 3, requires_grad=True)
    p.register_post_accumulate_grad_hook(lambda t: t.grad)
    with pytest.raises(RuntimeError, match="hooks should return None."):
        p.sum().backward()


@both()
def test_post_accumulate_hook_steps_an_optimizer(torch):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    twin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        twin.weight.copy_(model.weight)
        twin.bias.copy_(model.bias)
    opts = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}

    def step(p):
        opts[p].step()
        opts[p].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step) for p in model.parameters()]
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1)
    x = torch.rand(2, 3)
    for _ in range(3):
        model(x).sum().backward()
        twin(x).sum().backward()
        twin_opt.step()
        twin_opt.zero_grad()
    for p, q in zip(model.parameters(), twin.parameters()):
        close(p, q)
    frozen = [p.detach().clone() for p in model.parameters()]
    for h in handles:
        h.remove()
    model(x).sum().backward()
    for p, f in zip(model.parameters(), frozen):
        assert p.tolist() == f.tolist()


@both()
def test_hook_and_node_hook_order_around_accumulation(torch):
    t = torch.tensor([1.0, 1.0, 1.0], requires_grad=True)
    acc = t.view_as(t).grad_fn.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad"
    t.register_hook(lambda g: g.sub(2.0))                       # 1: tensor pre-hook
    acc.register_prehook(lambda gs: (gs[0].div(5.0),))          # 2: node pre-hook

    def add_half(p):                                            # 3: post-accumulate hook
        p.grad.add_(0.5)

    t.register_post_accumulate_grad_hook(add_half)

    def post(grad_inputs, grad_outputs):                        # 4: node post-hook
        t.grad = grad_outputs[0].mul(10)

    acc.register_hook(post)
    t.sum().backward()
    assert t.grad.tolist() == [3.0, 3.0, 3.0]  # ((1 - 2) / 5 + 0.5) * 10


@both()
def test_hook_object_without_a_name(torch):
    class Doubler:
        def __call__(self, g):
            return g * 2

    x = torch.ones(3, requires_grad=True)
    y = x.clone()
    y.register_hook(Doubler())
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


@both()
def test_tensor_hooks_run_before_node_prehooks(torch):
    log = []

    def tensor_hook(g):
        log.append(1)
        return g * 3

    def node_prehook(gs):
        log.append(2)
        return tuple(g * 2 for g in gs)

    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(node_prehook)
    b.register_hook(tensor_hook)
    b.grad_fn.register_prehook(node_prehook)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(tensor_hook)
    acc.register_prehook(node_prehook)
    a.register_hook(tensor_hook)
    b.sum().backward(retain_graph=True)
    assert log == [1, 2, 2, 1, 1, 2]
    assert a.grad.item() == 3 * 2 * 2 * 3 * 3 * 2
    log.clear()
    torch.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
    assert log == [1, 2, 2, 1, 1]
    log.clear()
    b.sum().backward(inputs=(b,))
    assert log == [1, 2, 2]
    assert b.grad.item() == 3


@both()
def test_retain_grad_sees_hooks_registered_before_it(torch):
    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.register_hook(lambda g: g * 2)
    b.retain_grad()
    b.register_hook(lambda g: g * 2)
    b.clone().backward()
    assert b.grad.item() == 4
    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.retain_grad()
    b.register_hook(lambda g: g * 2)
    b.clone().backward()
    assert b.grad.item() == 2


@both()
def test_accumulate_node_hooks_see_tensor_hook_result(torch):
    a = torch.tensor(1.5, requires_grad=True)
    seen = []
    b = a.clone()
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(lambda gi, go: seen.append(("post", len(gi), go[0].item())))
    acc.register_prehook(lambda go: seen.append(("pre", len(go), go[0].item())))
    a.register_hook(lambda g: g * 2)
    b.backward()
    assert seen == [("pre", 1, 2.0), ("post", 0, 2.0)]


@both()
def test_accumulate_node_hooks_skipped_outside_inputs(torch):
    def fail(*args):
        raise RuntimeError("must not run")

    a = torch.tensor(1.0, requires_grad=True)
    a.register_hook(fail)
    b = torch.tensor(1.0, requires_grad=True)
    c = a.clone()
    c.grad_fn.next_functions[0][0].register_hook(fail)
    (a + b + c).sum().backward(inputs=[b])
    assert b.grad.item() == 1.0 and a.grad is None


@both()
def test_which_hooks_grad_and_backward_run(torch):
    a = torch.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    counts = {"tensor": 0, "pre": 0, "post": 0}

    def bump(kind):
        def hook(*args):
            counts[kind] += 1
        return hook

    a.register_hook(bump("tensor"))
    b.register_hook(bump("tensor"))
    acc = b.grad_fn.next_functions[0][0]
    for node in (acc, b.grad_fn):
        node.register_hook(bump("post"))
        node.register_prehook(bump("pre"))

    def run(call):
        counts.update(tensor=0, pre=0, post=0)
        call()
        return dict(counts)

    assert run(lambda: torch.autograd.grad(c, inputs=(b,), retain_graph=True)) == \
        {"tensor": 1, "pre": 0, "post": 0}
    assert run(lambda: torch.autograd.grad(c, inputs=(a, b), retain_graph=True)) == \
        {"tensor": 2, "pre": 1, "post": 1}
    assert run(lambda: c.backward(retain_graph=True)) == {"tensor": 2, "pre": 2, "post": 2}
    assert run(lambda: c.backward(inputs=(a, b), retain_graph=True)) == \
        {"tensor": 2, "pre": 2, "post": 2}


@both()
def test_tensor_hooks_count_remove_and_modify(torch):
    x = torch.ones(3, 3, requires_grad=True)
    y = (torch.ones(3, 3) * 4).requires_grad_(True)
    counter = [0]

    def counting(inc):
        def hook(g):
            assert isinstance(g, torch.Tensor)
            counter[0] += inc
        return hook

    z = x ** 2 + x * 2 + x * y + y
    x.register_hook(counting(0))
    first = z.register_hook(counting(1))
    z.backward(torch.ones(3, 3), retain_graph=True)
    assert counter[0] == 1
    second = z.register_hook(counting(2))
    z.backward(torch.ones(3, 3), retain_graph=True)
    assert counter[0] == 4
    second.remove()
    z.backward(torch.ones(3, 3), retain_graph=True)
    assert counter[0] == 5
    first.remove()
    z.register_hook(lambda g: g.mul(2))
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(3, 3), retain_graph=True)
    close(y.grad, (values(x) + 1) * 2)
    y.register_hook(lambda g: g.mul(2))
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(3, 3))
    close(y.grad, (values(x) + 1) * 4)


@both()
def test_hook_on_one_unbound_piece(torch):
    x = torch.randn(4, requires_grad=True)
    pieces = x.unbind()
    seen = [None]

    def hook(g):
        seen[0] = g

    pieces[0].register_hook(hook)
    pieces[0].backward()
    assert seen[0].item() == 1.0
    expected = [1.0, 0.0, 0.0, 0.0]
    assert x.grad.tolist() == expected and pieces[0].grad is None
    for i in range(1, 4):
        seen[0] = None
        pieces[i].backward()
        assert seen[0] is None
        expected[i] = 1.0
        assert x.grad.tolist() == expected


@both()
def test_leaf_hook_not_run_by_grad_of_its_chunks(torch):
    x = torch.randn(4, 2, requires_grad=True)
    a, b = x.chunk(2)
    called = []
    x.register_hook(lambda g: called.append(1))
    go = torch.randn(2, 2)
    ga, gb = torch.autograd.grad(a + 2 * b, [a, b], grad_outputs=go, create_graph=True)
    close(ga, go)
    close(gb, 2 * values(go))
    assert not called and x.grad is None


def doubler(torch, custom):
    if not custom:
        return lambda x: x * 2

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double.apply


@both()
@pytest.mark.parametrize("custom", [True, False])
def test_node_prehooks_and_posthooks(torch, custom):
    mul2 = doubler(torch, custom)
    a = torch.tensor([1.0], requires_grad=True)
    b = mul2(a)
    pre, post = [0], [0]

    def posthook(grad_inputs, grad_outputs):
        assert pre[0] == 3
        assert grad_outputs[0].tolist() == [8.0] and grad_inputs[0].tolist() == [16.0]
        post[0] += 1
        return grad_inputs

    def prehook(grad_outputs):
        pre[0] += 1
        return (grad_outputs[0] * 2,)

    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(lambda gs: None)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(lambda gs: gs)
    b.sum().backward()
    assert post[0] == 2 and pre[0] == 3
    assert a.grad.tolist() == [16.0]
    a = torch.rand(3, 3, requires_grad=True)
    b = mul2(a)
    b.grad_fn.register_prehook(lambda gs: None)
    b.sum().backward()
    assert a.grad.tolist() == [[2.0] * 3] * 3


@both()
def test_prehook_on_a_two_output_node(torch):
    b = torch.rand(3, 3, dtype=torch.float64, requires_grad=True)
    var, mean = torch.var_mean(b, dim=0)
    (var + mean).sum().backward()
    a = b.detach().requires_grad_()
    calls = [0]

    def prehook(gs):
        calls[0] += 1
        return gs[0] * 2, gs[1] * 2

    var, mean = torch.var_mean(a, dim=0)
    mean.grad_fn.register_prehook(prehook)
    (var + mean).sum().backward()
    assert calls[0] == 1
    close(a.grad, 2 * values(b.grad))


@both()
def test_prehook_on_a_custom_function_with_a_number_output(torch):
    class TwoOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.k = k
            return k * x * 2, k, k * y * 2

        @staticmethod
        def backward(ctx, g1, gk, g2):
            return ctx.k * g1 * 2, None, ctx.k * g2 * 2

    calls = [0]

    def prehook(gs):
        g1, gk, g2 = gs
        assert gk is None
        calls[0] += 1
        return g1 * 2, None, g2 * 2

    a = torch.randn(2, 2, requires_grad=True)
    b = torch.randn(2, 2, requires_grad=True)
    c, _, d = TwoOut.apply(a, 3, b)
    c.grad_fn.register_prehook(prehook)
    (c + d).sum().backward()
    assert calls[0] == 1
    assert a.grad.tolist() == [[12.0] * 2] * 2 and b.grad.tolist() == [[12.0] * 2] * 2


@both()
@pytest.mark.parametrize("custom", [True, False])
def test_removing_node_prehooks_even_during_backward(torch, custom):
    mul2 = doubler(torch, custom)
    a = torch.rand(2, 2, requires_grad=True)
    b = mul2(a)
    calls = [0]

    def count(gs):
        calls[0] += 1

    handle = b.grad_fn.register_prehook(count)
    b.grad_fn.register_prehook(count)
    handle.remove()
    b.sum().backward()
    assert calls[0] == 1 and a.grad.tolist() == [[2.0] * 2] * 2
    a = torch.rand(2, 2, requires_grad=True)
    b = mul2(a)
    calls[0] = 0

    def remover(gs):
        h2.remove()
        h3.remove()  # removing twice is fine

    b.grad_fn.register_prehook(remover)
    h2 = b.grad_fn.register_prehook(count)
    h3 = b.grad_fn.register_prehook(count)
    h3.remove()
    b.sum().backward()
    assert calls[0] == 1 and a.grad.tolist() == [[2.0] * 2] * 2


@both()
def test_hook_on_the_gradless_output_of_a_function(torch):
    class PassBoth(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            assert ctx.needs_input_grad[0] and not ctx.needs_input_grad[1]
            return x, y

        @staticmethod
        def backward(ctx, gx, gy):
            return gx, None

    called = []

    def hook(g):
        assert g is not None
        called.append(1)

    x = torch.randn(3, 3, requires_grad=True)
    rx, ry = PassBoth.apply(x, torch.randn(3, 3))
    rx.register_hook(hook)
    ry.register_hook(hook)
    sum(rx, ry).sum().backward()
    assert called


@both()
def test_retain_grad_accumulates_and_is_a_no_op_on_leaves(torch):
    inp = torch.tensor([[0.5, 1.0, -2.0]], requires_grad=True)
    h1 = inp * 3
    out = (h1 * h1).sum()
    h1.retain_grad()
    h1.retain_grad()
    out.backward(retain_graph=True)
    close(h1.grad, values(h1) * 2)
    out.backward(retain_graph=True)
    close(h1.grad, values(h1) * 4)
    with torch.no_grad():
        inp.grad.zero_()
    inp.retain_grad()
    inp.retain_grad()
    out.backward()
    close(inp.grad, values(inp) * 18)


@both()
def test_retain_grad_follows_in_place_updates(torch):
    for times in (1, 2):
        a = torch.tensor([1.0], requires_grad=True).clone()
        a.retain_grad()
        for _ in range(times):
            a.mul_(2)
        a.sum().backward()
        assert a.grad.tolist() == [1.0]
    x = torch.tensor([1.0], requires_grad=True).clone()
    x.retain_grad()
    x_view = x[:]
    x_view *= 2
    x *= 2
    x.sum().backward()
    assert x.grad.tolist() == [1.0]
    base = torch.zeros(4)
    base.view(2, 2).add_(torch.randn(2, 2, requires_grad=True))
    assert base.requires_grad


@both()
@pytest.mark.parametrize("which", ["function", "var_mean"])
def test_retain_grad_on_a_two_output_node_after_in_place(torch, which):
    class TwoMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    fn = TwoMul.apply if which == "function" else (lambda t: torch.var_mean(t, dim=0))
    b = torch.rand(3, 3, requires_grad=True)
    var, mean = fn(b)
    var.retain_grad()
    mean.retain_grad()
    var.mul_(2)
    (var + mean).sum().backward()
    a = b.detach().requires_grad_(True)
    var2, mean2 = fn(a)
    var2.mul_(2)
    want_var, want_mean = torch.autograd.grad((var2 + mean2).sum(), inputs=(var2, mean2))
    close(var.grad, want_var)
    close(mean.grad, want_mean)


@both()
def test_retain_grad_on_views_after_in_place_on_one(torch):
    base = torch.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.retain_grad()
    view2.retain_grad()
    view.mul_(2)
    (view + view2).sum().backward()
    assert view.grad.tolist() == view2.grad.tolist() == [1.0]


@both()
def test_hooks_registered_before_and_after_in_place(torch):
    counts = [0, 0]

    def before(g):
        counts[0] += 1
        assert g.tolist() == [4.0]
        return g * 2

    def after(g):
        counts[1] += 1
        assert g.tolist() == [1.0]
        return g * 2

    a = torch.tensor([1.0], requires_grad=True)
    b = a.clone()
    b.register_hook(before)
    b.mul_(2)
    b.register_hook(after)
    b.sum().backward()
    assert counts == [1, 1] and a.grad.tolist() == [8.0]
    a = torch.tensor([1.0], requires_grad=True)
    b = a.clone()
    b.register_hook(before)
    b.mul_(2)
    b.mul_(2)
    b.sum().backward()
    assert counts == [2, 1] and a.grad.tolist() == [8.0]


@both()
@pytest.mark.parametrize("which", ["function", "var_mean"])
def test_hooks_on_a_two_output_node_after_in_place(torch, which):
    class TwoMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    fn = TwoMul.apply if which == "function" else (lambda t: torch.var_mean(t, dim=0))
    counts = [0, 0, 0]
    b = torch.rand(3, 3, requires_grad=True)
    out1, out2 = fn(b)

    def expect(i, value):
        def hook(g):
            counts[i] += 1
            assert values(g).tolist() == (np.ones(tuple(out1.shape)) * value).tolist()
        return hook

    out1.register_hook(expect(0, 2))
    out2.register_hook(expect(1, 3))
    out1.mul_(2)
    out1.register_hook(expect(2, 1))
    (out1 + out2 * 3).sum().backward()
    assert counts == [1, 1, 1]


@both()
def test_hooks_on_views_after_in_place_on_one(torch):
    count = [0]

    def never(g):
        raise AssertionError("stale hook ran")

    def fresh(g):
        count[0] += 1
        assert g.tolist() == [1.0]

    base = torch.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.register_hook(never)
    view2.register_hook(never)
    view.mul_(2)
    view2.grad_fn  # refreshes view2's node
    view2.register_hook(fresh)
    (view + view2).sum().backward()
    assert count[0] == 1


@both()
def test_current_graph_task_id(torch):
    # -1 outside backward; inside, one number per backward call, one more for each call
    # after it, the same for every hook of one call; a backward nested in a hook has its own
    seen = []
    t = torch.tensor(1.0, requires_grad=True).clone()
    t.register_hook(lambda g: seen.append(torch._C._current_graph_task_id()))
    t.register_hook(lambda g: seen.append(torch._C._current_graph_task_id()))
    for _ in range(3):
        t.backward(retain_graph=True)
    assert seen[0] >= 0 and seen == [seen[0]] * 2 + [seen[0] + 1] * 2 + [seen[0] + 2] * 2
    assert torch._C._current_graph_task_id() == -1

    inner = []

    def nested(g):
        before = torch._C._current_graph_task_id()
        x = torch.tensor(2.0, requires_grad=True)
        with torch.enable_grad():  # (backward runs its hooks with grad mode off)
            y = x * x
        y.register_hook(lambda g: inner.append(torch._C._current_graph_task_id()))
        y.backward()
        inner.append((before, torch._C._current_graph_task_id()))
        return g

    u = torch.tensor(3.0, requires_grad=True).clone()
    u.register_hook(nested)
    u.backward()
    (nested_id, (outer_before, outer_after)) = inner
    assert outer_before == outer_after != nested_id != -1
    assert torch._C._current_graph_task_id() == -1
