"""Tables: binary, scalar, unary and reduction ops over shapes, broadcasting and dtypes, with gradients."""


def _binary_table(torch, dtype_a, dtype_b):
    shapes = [((), ()), ((3,), ()), ((), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((2, 3), (2, 3))]
    ops = [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
           ("div", lambda a, b: a / b), ("pow", lambda a, b: a ** b)]
    rows = []
    for shape_a, shape_b in shapes:
        n_a = 1
        for s in shape_a:
            n_a *= s
        n_b = 1
        for s in shape_b:
            n_b *= s
        for name, op in ops:
            a = (torch.arange(1.0, n_a + 1.0, dtype=dtype_a) * 0.5 + 0.25).reshape(shape_a).requires_grad_()
            b = (torch.arange(1.0, n_b + 1.0, dtype=dtype_b) * 0.75).reshape(shape_b).requires_grad_()
            out = op(a, b)
            out.sum().backward()
            rows.append([name, list(out.shape), str(out.dtype), type(out.grad_fn).__name__, out.tolist(),
                         a.grad.tolist(), b.grad.tolist(), str(a.grad.dtype), str(b.grad.dtype)])
    return rows


def binary_ops_float32(torch, nn):
    return _binary_table(torch, torch.float32, torch.float32)


def binary_ops_float64(torch, nn):
    return _binary_table(torch, torch.float64, torch.float64)


def binary_ops_mixed_float_dtypes(torch, nn):
    return _binary_table(torch, torch.float32, torch.float64)


def _scalar_table(torch, dtype):
    x = torch.tensor([0.5, 2.0], dtype=dtype, requires_grad=True)
    rows = []
    for scalar in (2, 2.5, -1, True):
        for name, op in (("add", lambda t: t + scalar), ("radd", lambda t: scalar + t),
                         ("sub", lambda t: t - scalar), ("rsub", lambda t: scalar - t),
                         ("mul", lambda t: t * scalar), ("rmul", lambda t: scalar * t),
                         ("div", lambda t: t / scalar), ("rdiv", lambda t: scalar / t),
                         ("pow", lambda t: t ** scalar), ("rpow", lambda t: abs(scalar) ** t)):
            x.grad = None
            try:
                out = op(x)
            except RuntimeError as e:
                rows.append([name, repr(scalar), type(e).__name__, str(e)])
                continue
            out.sum().backward()
            rows.append([name, repr(scalar), str(out.dtype), type(out.grad_fn).__name__, out.tolist(),
                         x.grad.tolist()])
    return rows


def scalar_ops_float32(torch, nn):
    return _scalar_table(torch, torch.float32)


def scalar_ops_float64(torch, nn):
    return _scalar_table(torch, torch.float64)


def _unary_table(torch, dtype):
    rows = []
    for name in ("exp", "log", "sqrt", "sigmoid", "tanh", "relu", "abs", "neg", "sin", "cos"):
        x = torch.tensor([[0.25, 1.5], [2.0, 0.75]], dtype=dtype, requires_grad=True)
        out = getattr(x, name)()
        (out * torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dtype)).sum().backward()
        rows.append([name, str(out.dtype), type(out.grad_fn).__name__, out.tolist(), x.grad.tolist()])
    return rows


def unary_ops_float32_2d(torch, nn):
    return _unary_table(torch, torch.float32)


def unary_ops_float64_2d(torch, nn):
    return _unary_table(torch, torch.float64)


def _reduction_table(torch, dtype):
    rows = []
    x0 = torch.arange(1.0, 25.0, dtype=dtype).reshape(2, 3, 4)
    for name, op in (("sum", lambda t: t.sum()), ("sum0", lambda t: t.sum(0)),
                     ("sum12", lambda t: t.sum((1, 2))), ("sum_keep", lambda t: t.sum(-1, keepdim=True)),
                     ("mean", lambda t: t.mean()), ("mean1", lambda t: t.mean(1)),
                     ("mean_keep", lambda t: t.mean((0, 2), keepdim=True))):
        x = x0.clone().requires_grad_()
        out = op(x)
        w = torch.arange(1.0, out.numel() + 1.0, dtype=dtype).reshape(out.shape)
        (out * w).sum().backward()
        rows.append([name, list(out.shape), type(out.grad_fn).__name__, out.tolist(), x.grad.sum().item(),
                     x.grad[1, 2].tolist()])
    return rows


def reductions_float32(torch, nn):
    return _reduction_table(torch, torch.float32)


def reductions_float64(torch, nn):
    return _reduction_table(torch, torch.float64)
