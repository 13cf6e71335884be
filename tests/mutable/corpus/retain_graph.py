"""Graphs freed after backward: which ops save tensors (so a second backward fails) and retain_graph."""


def _err(e):
    return [type(e).__name__, str(e)]


def _second_backward(torch, make_loss):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = make_loss(x)
    loss.backward()
    first = x.grad.tolist()
    try:
        loss.backward()
        return [first, None, x.grad.tolist()]
    except RuntimeError as e:
        return [first, _err(e), x.grad.tolist()]


def second_backward_through_mul_fails(torch, nn):
    return _second_backward(torch, lambda x: (x * x).sum())


def second_backward_through_exp_fails(torch, nn):
    return _second_backward(torch, lambda x: x.exp().sum())


def second_backward_through_add_constant_works(torch, nn):
    # AddBackward0 and SumBackward0 save no tensors, so nothing is freed that is needed.
    return _second_backward(torch, lambda x: (x + 1).sum())


def second_backward_through_scalar_mul_fails(torch, nn):
    # MulBackward0 saves the wrapped Python scalar too, so even this graph is freed.
    return _second_backward(torch, lambda x: (x * 3).sum())


def second_backward_through_mean_works(torch, nn):
    return _second_backward(torch, lambda x: (x - 2).mean())


def second_backward_through_pow_fails(torch, nn):
    return _second_backward(torch, lambda x: (x ** 2).sum())


def second_backward_through_relu_fails(torch, nn):
    return _second_backward(torch, lambda x: x.relu().sum())


def second_backward_through_view_ops_works(torch, nn):
    return _second_backward(torch, lambda x: x.view(2, 1).t().reshape(2).sum())


def retain_graph_then_free(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    y.backward()
    out = [x.grad.item()]
    try:
        y.backward()
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out


def shared_subgraph_freed_by_first_loss(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    h = x.exp()
    a = h * 2
    b = h * 3
    a.backward()
    out = [x.grad.item()]
    try:
        b.backward()
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out


def shared_subgraph_with_retain_graph(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    h = x.exp()
    a = h * 2
    b = h * 3
    a.backward(retain_graph=True)
    b.backward()
    return x.grad.item()


def autograd_grad_frees_graph_too(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    (g,) = torch.autograd.grad(y, x)
    out = [g.item()]
    try:
        torch.autograd.grad(y, x)
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out


def accessing_freed_saved_tensor_in_custom_function(torch, nn):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torch.tensor(3.0, requires_grad=True)
    y = Square.apply(x)
    y.backward()
    out = [x.grad.item()]
    try:
        y.backward()
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out


def seed_loop_rebuilds_graph_each_step(torch, nn):
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    X = torch.tensor([[1.0, 2.0], [0.0, 1.0]])
    grads = []
    for _ in range(3):
        loss = ((X @ w.t()) ** 2).mean()
        loss.backward()
        grads.append(w.grad.tolist())
    return grads


def retain_graph_false_explicit_then_retry(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x.exp()
    y.backward(retain_graph=False)
    try:
        y.backward(retain_graph=True)
        return None
    except RuntimeError as e:
        return _err(e)


def backward_through_freed_graph_with_new_branch(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    h = x * x
    h.backward()
    z = h + 1
    try:
        z.backward()
        return [None, x.grad.item()]
    except RuntimeError as e:
        return [_err(e), x.grad.item()]


def graph_freed_then_unrelated_saved(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    h = x + 1
    h.backward()
    z = h * h
    z.backward()
    return x.grad.item()


def create_graph_implies_retain_graph(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x.exp()
    y.backward(create_graph=True)
    x.grad = None
    y.backward()
    return x.grad.item()


def autograd_grad_create_graph_keeps_graph(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    (g1,) = torch.autograd.grad(y, x, create_graph=True)
    (g2,) = torch.autograd.grad(y, x)
    return [g1.item(), g2.item()]


def retain_graph_false_with_create_graph(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x.exp()
    (g,) = torch.autograd.grad(y, x, create_graph=True, retain_graph=False)
    try:
        torch.autograd.grad(y, x)
        second = None
    except RuntimeError as e:
        second = _err(e)
    try:
        (h,) = torch.autograd.grad(g, x)
        third = h.item()
    except RuntimeError as e:
        third = _err(e)
    return [g.item(), second, third]


def partial_graph_freed(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    a = x.exp()
    b = a * 2
    c = b.sin()
    torch.autograd.grad(b, x)
    try:
        c.backward()
        return [None, x.grad.item()]
    except RuntimeError as e:
        return [_err(e), x.grad]


def backward_on_output_whose_graph_partially_freed_no_saved(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    a = x + 1
    b = a + 2
    c = b * 3
    b.backward()
    c.backward()
    return x.grad.item()
