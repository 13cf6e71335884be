"""torch.autograd.grad: grad_outputs, retain_graph, create_graph, allow_unused, errors."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def grad_of_scalar(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = torch.autograd.grad((x * x).sum(), x)
    return [g.tolist(), x.grad, g.requires_grad, type(torch.autograd.grad((x * 2).sum(), [x])).__name__]


def grad_with_grad_outputs(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    (g,) = torch.autograd.grad(y, x, grad_outputs=torch.tensor([1.0, 10.0]))
    return g.tolist()


def grad_of_non_scalar_without_grad_outputs(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    try:
        torch.autograd.grad(x * x, x)
        return None
    except RuntimeError as e:
        return _err(e)


def grad_multiple_inputs(torch, nn):
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(5.0, requires_grad=True)
    ga, gb = torch.autograd.grad(a * b + a, (a, b))
    return [ga.item(), gb.item(), a.grad, b.grad]


def grad_unused_input_fails(torch, nn):
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(5.0, requires_grad=True)
    try:
        torch.autograd.grad(a * 3, (a, b))
        return None
    except RuntimeError as e:
        return _err(e)


def grad_allow_unused(torch, nn):
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(5.0, requires_grad=True)
    ga, gb = torch.autograd.grad(a * 3, (a, b), allow_unused=True)
    return [ga.item(), gb]


def grad_input_without_grad_fails(torch, nn):
    a = torch.tensor(2.0, requires_grad=True)
    c = torch.tensor(1.0)
    try:
        torch.autograd.grad(a * c, c)
        return None
    except RuntimeError as e:
        return _err(e)


def grad_with_respect_to_intermediate(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    (gh,) = torch.autograd.grad(y, h)
    return [gh.tolist(), x.grad]


def grad_retain_graph_twice(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 3
    (g1,) = torch.autograd.grad(y, x, retain_graph=True)
    (g2,) = torch.autograd.grad(y, x)
    return [g1.item(), g2.item()]


def grad_create_graph_result_requires_grad(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 3
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    return [g.item(), g.requires_grad, type(g.grad_fn).__name__]


def grad_does_not_run_leaf_hooks_accumulation(torch, nn):
    calls = []
    x = torch.tensor(2.0, requires_grad=True)
    x.register_hook(lambda g: calls.append(g.item()))
    (g,) = torch.autograd.grad(x * x, x)
    return [calls, g.item(), x.grad]


def grad_of_output_not_requiring_grad(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    try:
        torch.autograd.grad(torch.tensor(1.0), x)
        return None
    except RuntimeError as e:
        return _err(e)


def backward_function_alias(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    torch.autograd.backward(y, grad_tensors=torch.tensor([1.0, 1.0]))
    return x.grad.tolist()


def grad_through_setitem(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor(4.0, requires_grad=True)
    y = x * 1
    y[1] = w * w
    gx, gw = torch.autograd.grad((y * y).sum(), (x, w))
    return [gx.tolist(), gw.item()]


def autograd_grad_with_tensor_not_tuple(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    r = torch.autograd.grad(x * x, x)
    return [type(r).__name__, len(r)]


def autograd_grad_outputs_list(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y1 = x * 2
    y2 = x * x
    (g,) = torch.autograd.grad([y1.sum(), y2.sum()], [x])
    return g.tolist()


def grad_outputs_positional(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    (g,) = torch.autograd.grad(y, x, torch.ones(2))
    return g.tolist()


def grad_inputs_in_given_order(torch, nn):
    x = torch.tensor(1.0, requires_grad=True)
    y = torch.tensor(2.0, requires_grad=True)
    gs = torch.autograd.grad(x * y, [y, x])
    return [g.item() for g in gs]


def autograd_grad_mismatched_grad_outputs(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    return [_attempt(lambda: torch.autograd.grad([y], [x], grad_outputs=[torch.ones(2), torch.ones(2)])),
            _attempt(lambda: torch.autograd.grad(y, x, grad_outputs=torch.ones(3)))]


def autograd_grad_on_list_of_non_scalar_with_grad_outputs(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    b = x * x
    (g,) = torch.autograd.grad([a, b], [x], grad_outputs=[torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])])
    return g.tolist()


def autograd_grad_none_grad_output_for_scalar(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = (x * 2).sum()
    b = x * x
    (g,) = torch.autograd.grad([a, b], [x], grad_outputs=[None, torch.tensor([1.0, 1.0])])
    return g.tolist()


def grad_wrt_same_input_twice(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    g1, g2 = torch.autograd.grad(x * x, [x, x])
    return [g1.item(), g2.item()]


def grad_with_respect_to_output_itself(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    y = x * 2
    (g,) = torch.autograd.grad(y, y)
    return g.item()


def grad_wrt_leaf_not_in_graph_allow_unused_materialize(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    z = torch.tensor(1.0, requires_grad=True)
    r = torch.autograd.grad(x * 2, [x, z], allow_unused=True)
    return [r[0].item(), r[1]]
