"""Whole programs (training loops, RNN-like state, clipping, Newton steps) and deep or wide graphs."""


def _err(e):
    return [type(e).__name__, str(e)]

def linear_regression_training_loop(torch, nn):
    w = nn.Parameter(torch.tensor([[0.0, 0.0]]))
    b = nn.Parameter(torch.tensor([0.0]))
    X = torch.tensor([[1.0, 2.0], [2.0, 0.5], [-1.0, 1.0], [0.0, -2.0]])
    Y = X @ torch.tensor([2.0, -1.0]) + 0.5
    losses = []
    for _ in range(25):
        pred = (X @ w.t()).squeeze(1) + b
        loss = ((pred - Y) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
            w.grad.zero_()
            b.grad.zero_()
    return [losses[0], losses[-1], w.tolist(), b.tolist(), w._version, w.is_leaf]

def logistic_regression_with_sigmoid(torch, nn):
    w = torch.tensor([0.5, -0.25], requires_grad=True)
    X = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [2.0, -1.0]])
    y = torch.tensor([1.0, 0.0, 1.0])
    p = torch.sigmoid(X @ w)
    loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    loss.backward()
    return [loss.item(), w.grad.tolist(), type(loss.grad_fn).__name__]

def rnn_like_state_with_inplace_history(torch, nn):
    W = torch.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
    xs = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    states = torch.zeros(4, 2)
    for t in range(3):
        # states[t] is a view that matmul saves; the next assignment bumps the shared version.
        states[t + 1] = torch.tanh(states[t] @ W + xs[t])
    loss = states[3].sum()
    out = [states.tolist(), states._version, type(states.grad_fn).__name__]
    try:
        loss.backward()
        return out + [W.grad.tolist()]
    except RuntimeError as e:
        return out + [_err(e)]


def rnn_like_state_kept_in_a_list(torch, nn):
    W = torch.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
    xs = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    states = [torch.zeros(2)]
    for t in range(3):
        states.append(torch.tanh(states[t] @ W + xs[t]))
    states[3].sum().backward()
    return [[s.tolist() for s in states], W.grad.tolist()]

def gradient_clipping_in_place(torch, nn):
    w = torch.tensor([3.0, -4.0], requires_grad=True)
    (w * w * 10).sum().backward()
    norm = (w.grad ** 2).sum().sqrt()
    if norm > 1.0:
        w.grad.mul_(1.0 / norm)
    return [norm.item(), w.grad.tolist(), w.grad._version]

def accumulate_over_microbatches(torch, nn):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for scale in (1.0, 2.0, 3.0):
        ((w * scale) ** 2).sum().backward()
    return w.grad.tolist()

def running_sum_with_inplace_accumulator(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    acc = torch.zeros(())
    for i in range(3):
        acc = acc + x[i] * x[i]
    acc2 = torch.zeros(1)
    for i in range(3):
        acc2 += x[i] * x[i]
    (acc + acc2.sum()).backward()
    return [acc.item(), acc2.tolist(), x.grad.tolist(), type(acc2.grad_fn).__name__]

def softmax_by_hand_with_inplace_normalisation(torch, nn):
    z = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
    e = z.exp()
    s = e / e.sum()
    (s * torch.tensor([1.0, 0.0, 0.0])).sum().backward()
    return [s.tolist(), z.grad.tolist()]

def masked_fill_by_setitem_in_loss(torch, nn):
    x = torch.tensor([1.0, -1.0, 2.0, -2.0], requires_grad=True)
    y = x * 3
    y[x < 0] = 0
    y.sum().backward()
    return [y.tolist(), x.grad.tolist(), type(y.grad_fn).__name__]

def detach_stops_gradient_in_target(torch, nn):
    w = torch.tensor([2.0], requires_grad=True)
    pred = w * 3
    target = (w * 5).detach()
    loss = ((pred - target) ** 2).sum()
    loss.backward()
    return [loss.item(), w.grad.tolist()]

def custom_function_in_training_loop(torch, nn):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    w = torch.tensor([1.0], requires_grad=True)
    for _ in range(5):
        loss = Square.apply(w - 3).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.25 * w.grad
        w.grad = None
    return [w.tolist(), w._version]

def retain_graph_two_losses_shared_trunk(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = torch.tanh(x * 2)
    l1 = h.sum()
    l2 = (h * h).sum()
    l1.backward(retain_graph=True)
    g1 = x.grad.clone()
    l2.backward()
    return [g1.tolist(), x.grad.tolist()]

def seed_rnn_repeated_three_times(torch, nn):
    a = nn.Parameter(torch.tensor([[2.]]))
    b = a.clone()
    d = nn.Parameter(torch.tensor(3.))
    loss = None
    for _ in range(3):
        e = b[[0], :] * d
        b[0] = e
        loss = e.sum() if loss is None else loss + e.sum()
    loss.backward()
    return [loss.item(), d.grad.item(), a.grad.tolist(), b._version]

def second_order_newton_step(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    for _ in range(3):
        f = (x - 1) ** 4 + x ** 2
        (g,) = torch.autograd.grad(f, x, create_graph=True)
        (h,) = torch.autograd.grad(g, x)
        with torch.no_grad():
            x -= g / h
    return [x.item(), x._version]

def no_grad_evaluation_inside_training(torch, nn):
    w = torch.tensor([1.0], requires_grad=True)
    loss = (w * 2).sum()
    with torch.no_grad():
        val = (w * 100).sum()
    loss.backward()
    return [val.item(), val.requires_grad, w.grad.tolist()]

def version_counter_through_training_step(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    versions = [p._version]
    for _ in range(2):
        (p * p).sum().backward()
        with torch.no_grad():
            p.sub_(0.1 * p.grad)
        versions.append(p._version)
        p.grad = None
    return versions


def deep_chain_backward(torch, nn):
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0001 + 0.0
    y.backward()
    return [y.item(), x.grad.item()]


def deep_chain_of_inplace_ops(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    for _ in range(2000):
        y.mul_(1.0001)
    y.sum().backward()
    return [y._version, x.grad.tolist()]


def deep_chain_of_views(torch, nn):
    x = torch.arange(4.0, requires_grad=True)
    y = x * 1
    for _ in range(1000):
        y = y.view(2, 2).view(4)
    y.sum().backward()
    return x.grad.tolist()


def graph_survives_deleted_intermediates(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x.exp()
    b = a * 3
    del a
    c = b.sum()
    del b
    c.backward()
    return x.grad.tolist()


def many_setitems_in_loop(torch, nn):
    w = torch.tensor(1.5, requires_grad=True)
    buf = torch.zeros(200)
    for i in range(200):
        buf[i] = w * i
    buf.sum().backward()
    return [buf._version, w.grad.item(), type(buf.grad_fn).__name__]


def wide_fan_in_sum(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    total = torch.tensor(0.0)
    for i in range(500):
        total = total + x * i
    total.backward()
    return [total.item(), x.grad.item()]
