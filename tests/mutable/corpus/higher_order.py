"""Higher-order derivatives through create_graph=True."""


def _err(e):
    return [type(e).__name__, str(e)]


def second_derivative_of_cube(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    return [g.item(), h.item()]


def third_derivative_of_exp_sin(torch, nn):
    x = torch.tensor(0.5, requires_grad=True)
    y = torch.sin(x) * torch.exp(x)
    d1 = torch.autograd.grad(y, x, create_graph=True)[0]
    d2 = torch.autograd.grad(d1, x, create_graph=True)[0]
    d3 = torch.autograd.grad(d2, x)[0]
    return [y.item(), d1.item(), d2.item(), d3.item()]


def backward_create_graph_then_backward_on_grad(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 4
    # PyTorch warns here about the parameter/gradient reference cycle, but only once per
    # process, so whether it shows depends on what ran before: it is kept out of the result.
    y.backward(create_graph=True)
    g = x.grad
    out = [g.item(), g.requires_grad, type(g.grad_fn).__name__]
    x.grad = None
    g.backward()
    return out + [x.grad.item()]


def hessian_vector_product(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    f = (x[0] ** 2) * x[1] + x[1] ** 3
    (g,) = torch.autograd.grad(f, x, create_graph=True)
    v = torch.tensor([1.0, -1.0])
    (hv,) = torch.autograd.grad((g * v).sum(), x)
    return [g.tolist(), hv.tolist()]


def gradient_penalty(torch, nn):
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    out = (torch.tanh(w * x)).sum()
    (gx,) = torch.autograd.grad(out, x, create_graph=True)
    penalty = (gx * gx).sum()
    penalty.backward()
    return [w.grad.tolist(), x.grad.tolist()]


def second_order_through_matmul(torch, nn):
    A = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    f = (x @ A @ x) ** 2
    (g,) = torch.autograd.grad(f, x, create_graph=True)
    (h0,) = torch.autograd.grad(g[0], x, retain_graph=True)
    (h1,) = torch.autograd.grad(g[1], x)
    return [f.item(), g.tolist(), h0.tolist(), h1.tolist()]


def grad_without_create_graph_is_constant(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    (g,) = torch.autograd.grad(x ** 3, x)
    try:
        torch.autograd.grad(g, x)
        return [g.requires_grad, None]
    except RuntimeError as e:
        return [g.requires_grad, _err(e)]


def double_backward_of_sigmoid_and_log(torch, nn):
    x = torch.tensor([0.3, 1.2], requires_grad=True)
    y = (torch.sigmoid(x) + torch.log(x)).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    return [g.tolist(), h.tolist()]


def double_backward_through_setitem(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.zeros(3)
    y[0] = x[0] ** 3
    y[1:] = x * x
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    return [g.tolist(), h.tolist()]


def second_derivative_of_relu_and_abs(torch, nn):
    x = torch.tensor([-1.5, 2.0], requires_grad=True)
    y = (x.relu() ** 2 + x.abs() ** 3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    return [g.tolist(), h.tolist()]


def grad_with_create_graph_then_backward_accumulate(torch, nn):
    x = torch.tensor(1.5, requires_grad=True)
    y = x ** 3
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    g.backward()
    return [g.item(), x.grad.item()]


def sigmoid_tanh_saved_output_double_backward(torch, nn):
    x = torch.tensor([0.5], requires_grad=True)
    y = x.sigmoid() * x.tanh()
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    return [g.tolist(), h.tolist()]


def autograd_grad_create_graph_under_no_grad(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    with torch.no_grad():
        (g,) = torch.autograd.grad(y, x, create_graph=True)
    return [g.item(), g.requires_grad]


def grad_of_grad_through_inplace(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x * 1
    y.mul_(x)
    y.add_(x)
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    return [y.item(), g.item(), h.item()]


def grad_of_grad_through_view_inplace(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y[0:1].mul_(y[1:2].detach() * 0 + x[1:2])
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    return [y.tolist(), g.tolist(), h.tolist()]


def hook_during_double_backward(torch, nn):
    calls = []
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    y.register_hook(lambda g: calls.append(("y", g.requires_grad)))
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    return [calls, g.item(), h.item()]


def create_graph_hook_returns_grad_requiring(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * x)
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    return [g.item(), h.item()]


def second_backward_accumulates_on_create_graph_grad(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    (x ** 3).backward(create_graph=True)
    first = x.grad.item()
    (x ** 2).backward(create_graph=True)
    return [first, x.grad.item(), x.grad.requires_grad, type(x.grad.grad_fn).__name__]


def inplace_after_create_graph_breaks_double_backward(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    h = x * 1
    y = h ** 3
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    h.add_(1)
    try:
        (hh,) = torch.autograd.grad(g, x)
        return [g.item(), hh.item()]
    except RuntimeError as e:
        return [g.item(), _err(e)]


def inplace_on_first_grad_then_second_order(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    g2 = g * 1
    g2.mul_(2)
    (h,) = torch.autograd.grad(g2, x)
    return [g2.item(), h.item()]


def hessian_diagonal_by_loop(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    f = (x ** 3).sum() + (x[0] * x[1] * x[2])
    (g,) = torch.autograd.grad(f, x, create_graph=True)
    rows = []
    for i in range(3):
        (r,) = torch.autograd.grad(g[i], x, retain_graph=True)
        rows.append(r.tolist())
    return [g.tolist(), rows]


def jacobian_by_loop_with_setitem(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.zeros(3)
    y[0] = x[0] * x[1]
    y[1] = x[0].exp()
    y[2] = x[1] ** 2
    jac = torch.zeros(3, 2)
    for i in range(3):
        (row,) = torch.autograd.grad(y[i], x, retain_graph=True)
        jac[i] = row
    return jac.tolist()


def double_backward_through_view_and_expand(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x.view(2, 1).expand(2, 3) ** 2).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    return [g.tolist(), h.tolist()]


def double_backward_through_index_and_matmul(torch, nn):
    W = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = torch.tensor([1.0, -1.0], requires_grad=True)
    y = ((W @ x)[[1, 0, 1]] ** 2).sum()
    gW, gx = torch.autograd.grad(y, (W, x), create_graph=True)
    (hx,) = torch.autograd.grad(gW.sum() + gx.sum(), x)
    return [gW.tolist(), gx.tolist(), hx.tolist()]


def double_backward_of_clamp_relu_abs_sqrt(torch, nn):
    x = torch.tensor([0.5, 1.5, 4.0], requires_grad=True)
    y = (x.clamp(min=1.0) ** 2 + x.relu() ** 3 + x.abs().sqrt() + x.sigmoid() * x.tanh()).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    return [g.tolist(), h.tolist()]


def double_backward_of_division_and_log(torch, nn):
    x = torch.tensor([0.5, 2.0], requires_grad=True)
    y = (1 / x + x.log() * x + x / (x + 1)).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    return [g.tolist(), h.tolist()]


def double_backward_through_mean_and_pow_tensor(torch, nn):
    x = torch.tensor([1.5, 2.0], requires_grad=True)
    p = torch.tensor([2.0, 0.5], requires_grad=True)
    y = (x ** p).mean()
    gx, gp = torch.autograd.grad(y, (x, p), create_graph=True)
    hx, hp = torch.autograd.grad(gx.sum() + gp.sum(), (x, p))
    return [gx.tolist(), gp.tolist(), hx.tolist(), hp.tolist()]
