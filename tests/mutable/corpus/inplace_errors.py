"""In-place operations that autograd refuses, and saved tensors checked at backward."""


def _err(e):
    return [type(e).__name__, str(e)]


def _try(fn):
    try:
        fn()
        return None
    except RuntimeError as e:
        return _err(e)


def inplace_on_leaf_requiring_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return [_try(lambda: x.add_(1)), _try(lambda: x.mul_(2)), _try(lambda: x.zero_()),
            _try(lambda: x.fill_(3)), x._version, x.tolist()]


def inplace_operator_on_leaf_requiring_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)

    def iadd():
        nonlocal x
        x += 1
    return [_try(iadd), x.is_leaf]


def inplace_on_view_of_leaf(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = x[1:]
    return [_try(lambda: v.mul_(2)), _try(lambda: x[0].zero_()), _try(lambda: x.view(3).add_(1)),
            x._version]


def setitem_on_view_of_leaf(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    row = x[0]

    def assign():
        row[1] = 5
    return [_try(assign), x.tolist()]


def setitem_on_leaf_requiring_grad(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def assign():
        x[0] = 5

    def assign_slice():
        x[1:] = 5
    return [_try(assign), _try(assign_slice)]


def parameter_inplace_fails(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    return _try(lambda: p.sub_(0.1))


def parameter_inplace_under_no_grad_works(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    (p * p).sum().backward()
    with torch.no_grad():
        p.sub_(0.1 * p.grad)
    return [p.tolist(), p.is_leaf, p.requires_grad, p._version, repr(p)]


def modified_exp_output(torch, nn):
    # exp saves its output; changing it in place breaks the backward.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    return [type(y.grad_fn).__name__, y._version, _try(lambda: y.sum().backward())]


def modified_input_of_mul(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a * a
    a.mul_(2)
    return _try(lambda: b.sum().backward())


def modified_input_of_add_is_fine(torch, nn):
    # add saves nothing, so modifying its input afterwards is harmless.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a + 1
    a.mul_(2)
    b.sum().backward()
    return [x.grad.tolist(), a._version]


def modified_sigmoid_output(torch, nn):
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = torch.sigmoid(x)
    y.mul_(2)
    return _try(lambda: y.sum().backward())


def modified_relu_output_inplace_chain(torch, nn):
    x = torch.tensor([-1.0, 2.0], requires_grad=True)
    y = x * 1
    y.relu_()
    z = y * 3
    z.sum().backward()
    return [type(y.grad_fn).__name__, y._version, x.grad.tolist()]


def inplace_sigmoid_then_use(torch, nn):
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = x * 1
    y.sigmoid_()
    y.sum().backward()
    return [type(y.grad_fn).__name__, x.grad.tolist()]


def modified_twice_reports_version(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.tanh()
    z = y.sum()
    y.mul_(2)
    y.add_(1)
    return [y._version, _try(lambda: z.backward())]


def modified_matmul_operand(torch, nn):
    w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = torch.tensor([[1.0], [1.0]], requires_grad=True)
    h = x * 1
    y = w @ h
    h[0, 0] = 0
    return _try(lambda: y.sum().backward())


def modified_float64_saved_tensor(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = x * 1
    z = (y * y).sum()
    y.view(3, 1).mul_(2)
    return _try(lambda: z.backward())


def modified_2d_saved_tensor_shape_in_message(torch, nn):
    x = torch.ones(2, 3, requires_grad=True)
    y = x.sin()
    z = (y * y).sum()
    y[0, 0] = 1
    return _try(lambda: z.backward())


def restoring_value_does_not_restore_version(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = (a * a).sum()
    a.add_(1)
    a.sub_(1)
    return [a.tolist(), a._version, _try(lambda: b.backward())]


def inplace_on_detached_leaf_is_fine(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    d.add_(1)
    return [x.tolist(), x._version, d.is_leaf, d.requires_grad]


def detach_underscore_on_view_fails(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    v = y[0:1]
    out = [_try(lambda: v.detach_())]
    z = x * 2
    z.detach_()
    out += [z.requires_grad, z.is_leaf, z.grad_fn]
    return out


def anomaly_mode_mentions_forward(torch, nn):
    import warnings
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.set_detect_anomaly(True):
            inside = torch.is_anomaly_enabled()
            y = x.exp()
            y.add_(1)
            result = _try(lambda: y.sum().backward())
    # Only the first line of the warning: the rest is a traceback with file paths.
    first_lines = [str(w.message).splitlines()[0] for w in caught]
    return [result, inside, torch.is_anomaly_enabled(), first_lines]


def unrelated_inplace_leaves_backward_alone(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    t = torch.tensor([5.0, 6.0])
    z = y * t
    t2 = torch.tensor([1.0, 1.0])
    t2.add_(3)
    z.sum().backward()
    return x.grad.tolist()


def modified_constant_saved_by_mul(torch, nn):
    # A tensor without grad that mul saved (to differentiate x) is version-checked too.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([5.0, 6.0])
    z = x * t
    t.add_(1)
    return _try(lambda: z.sum().backward())


def anomaly_mode_as_function_call(torch, nn):
    before = torch.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(True)
    try:
        during = torch.is_anomaly_enabled()
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
    finally:
        torch.autograd.set_detect_anomaly(False)
    return [before, during, torch.is_anomaly_enabled(), x.grad.tolist()]


def exp_inplace_then_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.exp_()
    y.exp_()
    try:
        y.sum().backward()
        return x.grad.tolist()
    except RuntimeError as e:
        return _err(e)


def leaf_modified_under_no_grad_after_use(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with torch.no_grad():
        x.add_(1)
    return [x._version, _try(lambda: y.backward())]


def parameter_updated_between_forward_and_backward(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    loss = (p.exp()).sum()
    with torch.no_grad():
        p.mul_(0.5)
    loss.backward()
    return [p.grad.tolist(), p._version]


def parameter_saved_by_mul_then_updated(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    x = torch.tensor([3.0, 4.0], requires_grad=True)
    loss = (p * x).sum()
    with torch.no_grad():
        p.mul_(0.5)
    return _try(lambda: loss.backward())


def split_output_inplace(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = (x * 1).split(2)
    return _try(lambda: a.mul_(2))


def unbind_output_inplace(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a, b = (x * 1).unbind()
    return _try(lambda: b.add_(1))


def chunk_output_inplace(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = (x * 1).chunk(2)
    return _try(lambda: a.zero_())


def split_output_setitem(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = (x * 1).split(2)

    def assign():
        a[0] = 5
    return _try(assign)


def overlapping_inplace(torch, nn):
    x = torch.arange(5.0)
    return [_try(lambda: x[1:].add_(x[:-1])), x.tolist()]


def inplace_on_leaf_in_no_grad_then_used_in_graph(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        x.mul_(2)
    y = (x * x).sum()
    y.backward()
    return [x.grad.tolist(), x._version]


def select_of_leaf_inplace_messages(torch, nn):
    x = torch.ones(2, 2, requires_grad=True)
    return [_try(lambda: x[0].add_(1)), _try(lambda: x.t().add_(1)), _try(lambda: x.view(4).fill_(0)),
            _try(lambda: x.diagonal().zero_()), _try(lambda: x.expand(2, 2).mul_(2)),
            _try(lambda: x.unsqueeze(0).clamp_(min=0)), _try(lambda: x[[0]].add_(1))]


def anomaly_mode_reports_nan_gradient(torch, nn):
    import warnings
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.set_detect_anomaly(True):
            y = (x.sqrt() * 0).sum()
            error = _try(lambda: y.backward())
    return [error, None if x.grad is None else x.grad.tolist()]


def nan_gradient_without_anomaly_mode(torch, nn):
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = (x.sqrt() * 0).sum()
    y.backward()
    return x.grad.tolist()


def anomaly_mode_check_nan_false(torch, nn):
    import warnings
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.set_detect_anomaly(True, check_nan=False):
            y = (x.sqrt() * 0).sum()
            error = _try(lambda: y.backward())
    return [error, None if x.grad is None else x.grad.tolist()]


def anomaly_mode_warning_names_backward_node(torch, nn):
    import warnings
    x = torch.tensor([2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.set_detect_anomaly(True):
            y = x.exp()
            z = y * y
            y.mul_(2)
            error = _try(lambda: z.sum().backward())
    first = [str(w.message).splitlines()[0] for w in caught]
    return [error, first, [type(w.message).__name__ for w in caught]]
