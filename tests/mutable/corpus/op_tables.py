"""Tables: binary, scalar, unary, reduction, in-place and indexing ops over shapes, views and dtypes."""


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


def _inplace_methods(torch, shape):
    count = 1
    for size in shape:
        count *= size
    other = (torch.arange(float(count)) * 0.5 + 0.5).reshape(shape)
    return [("add_", lambda t: t.add_(2)), ("add_tensor", lambda t: t.add_(other)), ("sub_", lambda t: t.sub_(0.5)),
            ("mul_", lambda t: t.mul_(3)), ("mul_tensor", lambda t: t.mul_(other)), ("div_", lambda t: t.div_(4)),
            ("pow_", lambda t: t.pow_(2)), ("neg_", lambda t: t.neg_()), ("abs_", lambda t: t.abs_()),
            ("clamp_", lambda t: t.clamp_(min=0.6, max=1.8)), ("exp_", lambda t: t.exp_()),
            ("sqrt_", lambda t: t.sqrt_()), ("log_", lambda t: t.log_()), ("sigmoid_", lambda t: t.sigmoid_()),
            ("tanh_", lambda t: t.tanh_()), ("relu_", lambda t: t.relu_()), ("fill_", lambda t: t.fill_(2)),
            ("copy_", lambda t: t.copy_(other)), ("zero_", lambda t: t.zero_()),
            ("iadd", lambda t: t.__iadd__(1)), ("isub", lambda t: t.__isub__(other)),
            ("imul", lambda t: t.__imul__(2)), ("itruediv", lambda t: t.__itruediv__(other))]


def _inplace_table(torch, pick_target):
    rows = []
    shape = list(pick_target(torch.zeros(2, 3)).shape)
    for name, apply in _inplace_methods(torch, shape):
        x = torch.tensor([[0.5, 1.0, 2.0], [1.5, 0.25, 3.0]], requires_grad=True)
        y = x * 1
        target = pick_target(y)
        result = apply(target)
        row = [name, result is target, y.tolist(), y._version, type(y.grad_fn).__name__,
               type(target.grad_fn).__name__]
        (y * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        rows.append(row + [x.grad.tolist()])
    return rows


def inplace_table_on_whole_tensor(torch, nn):
    return _inplace_table(torch, lambda y: y)


def inplace_table_on_row_view(torch, nn):
    return _inplace_table(torch, lambda y: y[1])


def inplace_table_on_transposed_view(torch, nn):
    return _inplace_table(torch, lambda y: y.t())


def inplace_table_on_strided_column_view(torch, nn):
    return _inplace_table(torch, lambda y: y[:, ::2])


def inplace_table_under_no_grad(torch, nn):
    rows = []
    for name, apply in _inplace_methods(torch, [3]):
        x = torch.tensor([[0.5, 1.0, 2.0], [1.5, 0.25, 3.0]], requires_grad=True)
        with torch.no_grad():
            apply(x[1])
        rows.append([name, x.tolist(), x._version, x.is_leaf, x.grad_fn])
    return rows


def _indices(torch):
    long = torch.tensor
    # One of each index kind PyTorch accepts, alone and combined, for a [2, 3, 4] tensor.
    return [
        ("int", 1), ("neg_int", -1), ("slice", slice(0, 1)), ("step", slice(None, None, 2)),
        ("int_int", (0, 2)), ("int_slice_int", (1, slice(1, 3), -1)), ("ellipsis_int", (Ellipsis, 1)),
        ("none_int", (None, 0)), ("int_none_slice", (1, None, slice(None, None, 2))),
        ("list", [1, 0]), ("list_list", ([0, 1], [2, 0])), ("slice_list", (slice(None), [0, 2])),
        ("int_list_slice", (0, [1, 2], slice(1, None))), ("list_slice_list", ([0, 1], slice(None), [3, 0])),
        ("long", long([1, 1, 0])), ("long2d", long([[0], [1]])), ("long0d", long(1)),
        ("long0d_pair", (long(0), long(2))),
        ("mask_dim0", long([True, False])), ("mask_2d", long([[True, False, True], [False, True, False]])),
        ("mask_full", None), ("true", True), ("ellipsis_none", (Ellipsis, None)),
        ("ellipsis_long", (Ellipsis, long([3, 1]))), ("none_ellipsis_step", (None, Ellipsis, slice(1, None, 2))),
    ]


_INDEX_ERRORS = (IndexError, RuntimeError, TypeError, ValueError)


def _resolve(x, index):
    # None in the table stands for a mask computed from the tensor itself.
    return x > 12 if index is None else index


def getitem_sweep_on_3d(torch, nn):
    rows = []
    for name, index in _indices(torch):
        x = torch.arange(1.0, 25.0).reshape(2, 3, 4).requires_grad_()
        try:
            y = x[_resolve(x, index)]
            (y * y).sum().backward()
        except _INDEX_ERRORS as e:
            # One row per index kind: a failure shows which kind, without hiding the rest.
            rows.append([name, type(e).__name__, str(e)])
            continue
        rows.append([name, list(y.shape), type(y.grad_fn).__name__, y.tolist(), x.grad.sum().item(),
                     x.grad[1].tolist()])
    return rows


def setitem_sweep_on_3d(torch, nn):
    rows = []
    for name, index in _indices(torch):
        x = torch.arange(1.0, 25.0).reshape(2, 3, 4).requires_grad_()
        w = torch.tensor(-2.0, requires_grad=True)
        y = x * 1
        try:
            y[_resolve(x.detach(), index)] = w * 3
            (y * y).sum().backward()
        except _INDEX_ERRORS as e:
            rows.append([name, type(e).__name__, str(e)])
            continue
        rows.append([name, y._version, type(y.grad_fn).__name__, y.sum().item(), y[1].tolist(),
                     x.grad.sum().item(), w.grad.item()])
    return rows


def setitem_sweep_plain_tensor_values(torch, nn):
    rows = []
    for name, index in _indices(torch):
        x = torch.zeros(2, 3, 4)
        try:
            x[_resolve(torch.arange(1.0, 25.0).reshape(2, 3, 4), index)] = 7
        except _INDEX_ERRORS as e:
            rows.append([name, type(e).__name__, str(e)])
            continue
        rows.append([name, x._version, x.sum().item(), x[0].tolist()])
    return rows
