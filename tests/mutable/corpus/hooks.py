"""Tensor hooks: call order, replacing gradients, handles, and their interplay with retain_grad."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def hook_sees_gradient_of_intermediate(torch, nn):
    seen = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.sum().backward()
    return [seen, x.grad.tolist()]


def hook_returning_tensor_replaces_gradient(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    return x.grad.tolist()


def hook_returning_none_keeps_gradient(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: None)
    y.sum().backward()
    return x.grad.tolist()


def hooks_on_one_tensor_run_in_registration_order(torch, nn):
    calls = []
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: calls.append(("first", g.tolist())) or g + 1)
    y.register_hook(lambda g: calls.append(("second", g.tolist())) or g * 3)
    y.sum().backward()
    return [calls, x.grad.tolist()]


def hook_on_leaf_changes_accumulated_grad(torch, nn):
    calls = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: calls.append(g.tolist()) or g * 2)
    (x * x).sum().backward()
    return [calls, x.grad.tolist()]


def leaf_hook_runs_once_with_summed_gradient(torch, nn):
    calls = []
    x = torch.tensor(2.0, requires_grad=True)
    x.register_hook(lambda g: calls.append(g.item()))
    (x * 3 + x * x).backward()
    return [calls, x.grad.item()]


def hook_handle_remove(torch, nn):
    calls = []
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    handle = y.register_hook(lambda g: calls.append("removed"))
    y.register_hook(lambda g: calls.append("kept"))
    handle.remove()
    y.sum().backward()
    return [calls, type(handle).__name__]


def hook_handle_remove_twice_is_harmless(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    h = x.register_hook(lambda g: g * 100)
    h.remove()
    h.remove()
    (x * 2).sum().backward()
    return x.grad.tolist()


def hook_on_tensor_without_grad_fails(torch, nn):
    x = torch.tensor([1.0])
    try:
        x.register_hook(lambda g: g)
        return None
    except RuntimeError as e:
        return _err(e)


def hook_order_follows_backward_graph(torch, nn):
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    a = x * 2
    b = a * 3
    c = b * 4
    for name, t in (("a", a), ("x", x), ("c", c), ("b", b)):
        t.register_hook(lambda g, name=name: calls.append((name, g.item())))
    c.backward()
    return calls


def hook_modifies_gradient_seen_by_retain_grad(torch, nn):
    # retain_grad stores the gradient after the tensor's hooks registered before and after it.
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.retain_grad()
    y.register_hook(lambda g: g + 1)
    z = (y * 3).sum()
    z.backward()
    return [y.grad.tolist(), x.grad.tolist()]


def retain_grad_before_hooks(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    (y * 3).sum().backward()
    return [y.grad.tolist(), x.grad.tolist()]


def hook_on_leaf_sees_gradient_before_accumulation(torch, nn):
    seen = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torch.tensor([100.0, 100.0])
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 4).sum().backward()
    return [seen, x.grad.tolist()]


def hook_registered_before_inplace_op(torch, nn):
    # A hook registered before an in-place op belongs to the old version of the tensor.
    calls = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.register_hook(lambda g: calls.append(("before", g.tolist())))
    y.mul_(3)
    y.register_hook(lambda g: calls.append(("after", g.tolist())))
    (y * torch.tensor([1.0, 10.0])).sum().backward()
    return [calls, x.grad.tolist()]


def hook_called_on_each_backward(torch, nn):
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    y = x * 5
    y.register_hook(lambda g: calls.append(g.item()))
    y.backward(retain_graph=True)
    y.backward(torch.tensor(2.0))
    return [calls, x.grad.item()]


def hook_in_multi_path_graph(torch, nn):
    calls = []
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    y.register_hook(lambda g: calls.append(("y", g.item())))
    z = y * 3 + y.exp() * 0 + y
    z.backward()
    return [calls, x.grad.item()]


def hook_with_wrong_shape_fails(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: torch.tensor([1.0, 2.0, 3.0]))
    try:
        y.sum().backward()
        return None
    except RuntimeError as e:
        return _err(e)


def retains_grad_flag(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    before = y.retains_grad
    y.retain_grad()
    y.retain_grad()
    x.retain_grad()  # on a leaf it is a no-op
    return [before, y.retains_grad, x.retains_grad]


def retain_grad_then_inplace_keeps_retaining(torch, nn):
    # retain_grad follows the tensor across an in-place op: it stores the newest version's grad.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.retain_grad()
    y.mul_(3)
    (y * torch.tensor([1.0, 10.0])).sum().backward()
    return [y.retains_grad, y.grad.tolist(), x.grad.tolist()]


def leaf_hook_and_second_backward_accumulate(torch, nn):
    calls = []
    x = torch.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: calls.append(g.tolist()))
    (x * 2).sum().backward()
    (x * 5).sum().backward()
    return [calls, x.grad.tolist()]


def hook_on_view_then_base_inplace(torch, nn):
    calls = []
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v = y[1:]
    v.register_hook(lambda g: calls.append(g.tolist()))
    y.mul_(2)
    (y * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    return [calls, x.grad.tolist()]


def hook_on_grad_requiring_parameter(torch, nn):
    calls = []
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    h = p.register_hook(lambda g: calls.append(g.tolist()))
    (p * 3).sum().backward()
    h.remove()
    (p * 3).sum().backward()
    return [calls, p.grad.tolist()]


def hook_raising_exception_propagates(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2

    def bad(g):
        raise ValueError("hook says no")
    y.register_hook(bad)
    try:
        y.sum().backward()
        return None
    except ValueError as e:
        return _err(e)


def hook_returning_wrong_dtype(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.double())
    try:
        y.sum().backward()
        return None
    except RuntimeError as e:
        return _err(e)


def hook_on_output_of_sum(torch, nn):
    calls = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = x.sum()
    s.register_hook(lambda g: calls.append([g.tolist(), list(g.shape)]))
    s.backward(torch.tensor(3.0))
    return [calls, x.grad.tolist()]


def hooks_and_retain_grad_under_autograd_grad(torch, nn):
    calls = []
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: calls.append(g.tolist()))
    (g,) = torch.autograd.grad(y.sum() * 3, x)
    return [calls, None if y.grad is None else y.grad.tolist(), g.tolist()]


def branch_hook_order(torch, nn):
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    a = x * 2
    b = x * 3
    c = a * b
    d = a + c
    for name, t in (("a", a), ("b", b), ("c", c), ("d", d)):
        t.register_hook(lambda g, name=name: calls.append((name, g.item())))
    d.backward()
    return [calls, x.grad.item()]


def independent_branches_hook_order(torch, nn):
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    first = x * 2
    second = x.exp()
    third = x + 5
    for name, t in (("first", first), ("second", second), ("third", third)):
        t.register_hook(lambda g, name=name: calls.append(name))
    (third + first + second).backward()
    return calls


def leaf_hooks_order_two_leaves(torch, nn):
    calls = []
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(2.0, requires_grad=True)
    a.register_hook(lambda g: calls.append("a"))
    b.register_hook(lambda g: calls.append("b"))
    (a * b).backward()
    calls2 = []
    a.register_hook(lambda g: calls2.append("a"))
    b.register_hook(lambda g: calls2.append("b"))
    (b * a).backward()
    return [calls, calls2]


def hooks_on_chain_run_output_first(torch, nn):
    calls = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = y * 2
    z.register_hook(lambda g: calls.append(("z", g.tolist())))
    y.register_hook(lambda g: calls.append(("y", g.tolist())))
    z.sum().backward()
    return calls


def autograd_grad_inside_hook(torch, nn):
    results = []
    w = torch.tensor(3.0, requires_grad=True)

    def hook(g):
        # Backward runs with grad mode off (no create_graph): w * w records nothing here.
        try:
            (gw,) = torch.autograd.grad(w * w, w)
            results.append(gw.item())
        except RuntimeError as e:
            results.append(_err(e))
        return g
    x = torch.tensor(1.0, requires_grad=True)
    y = x * 2
    y.register_hook(hook)
    y.backward()
    return [results, x.grad.item()]


def retain_grad_on_view(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    v = y[1:]
    v.retain_grad()
    (v * v).sum().backward()
    return [v.grad.tolist(), x.grad.tolist()]


def retain_grad_on_non_requiring(torch, nn):
    x = torch.tensor([1.0])
    return _attempt(lambda: x.retain_grad())


def hook_modifies_grad_in_place(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    # The gradient sum() hands back is an expanded (stride 0) tensor: writing into it fails.
    y.register_hook(lambda g: g.mul_(10))
    error = _attempt(lambda: y.sum().backward())
    return [error, None if x.grad is None else x.grad.tolist()]


def hook_on_leaf_modifies_in_place(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g.add_(1))
    (x * 3).sum().backward()
    return x.grad.tolist()


def hook_on_unused_split_output(torch, nn):
    calls = []
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = (x * 1).split(2)
    # PyTorch still calls b's hook; what it passes is what this records.
    a.register_hook(lambda g: calls.append(("a", None if g is None else g.tolist())))
    b.register_hook(lambda g: calls.append(("b", None if g is None else g.tolist())))
    (a * 3).sum().backward()
    return [calls, x.grad.tolist()]


def hook_on_leaf_not_reached(torch, nn):
    calls = []
    x = torch.tensor([1.0], requires_grad=True)
    w = torch.tensor([2.0], requires_grad=True)
    w.register_hook(lambda g: calls.append("w"))
    (x * 2).sum().backward()
    return [calls, w.grad]


def hook_on_tensor_reached_through_two_paths_called_once(torch, nn):
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: calls.append(g.item()))
    (h * 3 + h * 4).backward()
    return [calls, x.grad.item()]


def hook_on_output_called_with_seed_gradient(torch, nn):
    calls = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: calls.append(g.tolist()))
    y.backward(torch.tensor([0.5, -1.0]))
    return [calls, x.grad.tolist()]


def hook_replacing_grad_of_output(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    y.register_hook(lambda g: g * 0)
    y.backward()
    return x.grad.tolist()


def hooks_fire_for_autograd_grad_inputs_only_along_path(torch, nn):
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    w = torch.tensor(2.0, requires_grad=True)
    a = x * w
    b = a * 3
    a.register_hook(lambda g: calls.append("a"))
    b.register_hook(lambda g: calls.append("b"))
    x.register_hook(lambda g: calls.append("x"))
    w.register_hook(lambda g: calls.append("w"))
    torch.autograd.grad(b, [x])
    return calls


def hook_on_non_leaf_with_backward_inputs(torch, nn):
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    a = x * 2
    b = a * 3
    a.register_hook(lambda g: calls.append(("a", g.item())))
    b.backward(inputs=[a])
    return [calls, a.grad.item(), x.grad]
