"""Leaf and non-leaf tensors, requires_grad propagation, .grad accumulation and assignment."""

import warnings


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def requires_grad_default_false(torch, nn):
    x = torch.tensor([1.0, 2.0])
    return [x.requires_grad, x.is_leaf, x.grad, x.grad_fn, (x * 2).requires_grad]


def requires_grad_propagates_through_ops(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0])
    z = x * y
    w = y * 2
    return [z.requires_grad, z.is_leaf, w.requires_grad, w.is_leaf, type(z.grad_fn).__name__]


def parameter_is_leaf_requiring_grad(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    q = nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False)
    return [p.requires_grad, p.is_leaf, q.requires_grad, q.is_leaf, repr(p), repr(q),
            type(p).__name__, isinstance(p, torch.Tensor)]


def parameter_ops_give_plain_tensors(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    y = p * 2
    return [type(y).__name__, repr(y), type(p.detach()).__name__]


def grad_accumulates_across_backwards(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    first = x.grad.tolist()
    (x * 3).sum().backward()
    return [first, x.grad.tolist()]


def grad_zero_and_none(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    g = x.grad
    x.grad.zero_()
    zeroed = [x.grad.tolist(), g is x.grad]
    x.grad = None
    (x * 5).sum().backward()
    return zeroed + [x.grad.tolist()]


def grad_can_be_assigned(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torch.tensor([10.0, 20.0])
    (x * x).sum().backward()
    return x.grad.tolist()


def grad_assignment_with_wrong_shape_fails(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    try:
        x.grad = torch.tensor([1.0, 2.0, 3.0])
        return None
    except RuntimeError as e:
        return _err(e)


def grad_assignment_with_wrong_dtype_fails(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    try:
        x.grad = torch.tensor([1, 2])
        return None
    except RuntimeError as e:
        return _err(e)


def non_leaf_grad_warns_and_is_none(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = y.grad
    message = str(caught[0].message) if caught else ""
    # PyTorch appends where in its C++ sources the warning fired; that part is build-specific.
    message = message.split(" (Triggered internally")[0]
    return [g, len(caught), type(caught[0].message).__name__ if caught else None, message]


def leaf_grad_does_not_warn(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = x.grad
        h = torch.tensor([1.0]).grad
    return [g, h, len(caught)]


def requires_grad_setter_on_leaf(torch, nn):
    x = torch.tensor([1.0, 2.0])
    x.requires_grad = True
    y = (x * x).sum()
    y.backward()
    return [x.requires_grad, x.is_leaf, x.grad.tolist()]


def requires_grad_setter_on_non_leaf_fails(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    out = []
    try:
        y.requires_grad = False
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    try:
        y.requires_grad = True
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    out.append(y.requires_grad)
    return out


def requires_grad_underscore_returns_self(torch, nn):
    x = torch.tensor([1.0, 2.0])
    y = x.requires_grad_()
    z = x.requires_grad_(False)
    return [y is x, z is x, x.requires_grad]


def integer_tensor_cannot_require_grad(torch, nn):
    out = []
    try:
        torch.tensor([1, 2], requires_grad=True)
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    x = torch.tensor([1, 2])
    try:
        x.requires_grad_()
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out


def backward_on_non_scalar_needs_gradient(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    out = []
    try:
        y.backward()
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    y.backward(gradient=torch.tensor([1.0, 0.5]))
    out.append(x.grad.tolist())
    return out


def backward_on_single_element_non_scalar(torch, nn):
    x = torch.tensor([[3.0]], requires_grad=True)
    y = x * x
    y.backward()
    return [list(y.shape), x.grad.tolist()]


def backward_without_grad_fails(torch, nn):
    x = torch.tensor([1.0, 2.0])
    try:
        x.sum().backward()
        return None
    except RuntimeError as e:
        return _err(e)


def backward_gradient_shape_mismatch(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    try:
        y.backward(torch.tensor([1.0, 2.0, 3.0]))
        return None
    except RuntimeError as e:
        return _err(e)


def backward_inputs_restricts_accumulation(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    return [x.grad.tolist(), w.grad]


def backward_inputs_non_leaf(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    (h * h).sum().backward(inputs=[h])
    return [h.grad.tolist(), x.grad]


def detach_is_leaf_without_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).detach()
    return [y.is_leaf, y.requires_grad, y.grad_fn, y.tolist()]


def grad_of_broadcast_leaf_is_reduced(torch, nn):
    x = torch.tensor([[1.0], [2.0]], requires_grad=True)
    b = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * b).sum().backward()
    return [x.grad.tolist(), b.grad.tolist()]


def leaf_used_twice_sums_grads(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x * x + x
    y.backward()
    return x.grad.item()


def grad_is_a_tensor_without_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    return [x.grad.requires_grad, x.grad.is_leaf, x.grad.grad_fn, str(x.grad.dtype)]


def float64_leaf_keeps_dtype_of_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (x * x).sum().backward()
    return [str(x.grad.dtype), repr(x.grad)]


def zero_grad_with_set_to_none_pattern(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    (p * p).sum().backward()
    p.grad = None
    (p * 3).sum().backward()
    return p.grad.tolist()


def backward_twice_retain_then_inputs(torch, nn):
    x = torch.tensor(1.0, requires_grad=True)
    w = torch.tensor(2.0, requires_grad=True)
    y = x * w
    y.backward(retain_graph=True, inputs=[w])
    y.backward(inputs=(x,))
    return [x.grad.item(), w.grad.item()]


def requires_grad_false_on_leaf_then_op(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    x.requires_grad_(False)
    y = x * 2
    return [y.requires_grad, x.is_leaf]


def detach_then_requires_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    d = (x * 2).detach().requires_grad_()
    (d * d).sum().backward()
    return [d.grad.tolist(), x.grad, d.is_leaf]


def clone_of_leaf_grad_fn(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    c = x.clone()
    c.add_(1)
    c.sum().backward()
    return [type(c.grad_fn).__name__, x.grad.tolist(), c._version]


def inplace_on_leaf_without_grad_then_requires(torch, nn):
    x = torch.tensor([1.0, 2.0])
    x.add_(1)
    x.requires_grad_()
    (x * x).sum().backward()
    return [x.grad.tolist(), x._version]


def version_of_parameter_after_optimizer_step(torch, nn):
    p = nn.Parameter(torch.tensor([1.0]))
    for _ in range(3):
        (p * p).sum().backward()
        with torch.no_grad():
            p -= 0.1 * p.grad
        p.grad.zero_()
    return [p.tolist(), p._version, p.grad._version]


def no_grad_iadd_on_parameter_returns_parameter(torch, nn):
    p = nn.Parameter(torch.tensor([1.0]))
    q = p
    with torch.no_grad():
        p += 1
    return [p is q, type(p).__name__, p.requires_grad]


def grad_fn_next_functions_names(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    y = (x * 2).exp()
    next_names = [type(f).__name__ if f is not None else None for f, _ in y.grad_fn.next_functions]
    return [type(y.grad_fn).__name__, next_names]


def grad_fn_name_method(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    return (x * 2).grad_fn.name()


def leaf_grad_accumulate_into_float64(torch, nn):
    x = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    y = (x.float() * 2).sum()
    y.backward()
    return [str(x.grad.dtype), x.grad.tolist(), type(x.float().grad_fn).__name__]


def tensor_requires_grad_from_existing_tensor(torch, nn):
    import warnings
    base = torch.tensor([1.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = torch.tensor(base)
    return [t.tolist(), len(caught) > 0, t is base]


def grad_accumulate_non_contiguous_leaf(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x.t() * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    return x.grad.tolist()


def backward_under_no_grad(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    with torch.no_grad():
        y.backward()
    return x.grad.item()


def grad_setter_non_tensor(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)

    def set_grad():
        x.grad = [1.0]
    return _attempt(set_grad)


def requires_grad_setter_non_bool(torch, nn):
    x = torch.tensor([1.0])

    def set_flag():
        x.requires_grad = 1
    return [_attempt(set_flag), x.requires_grad]


def detach_underscore_on_leaf(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    r = x.detach_()
    return [r is x, x.requires_grad, x.is_leaf]


def backward_with_gradient_of_wrong_dtype(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    error = _attempt(lambda: y.backward(torch.tensor([1, 1])))
    return [error, None if x.grad is None else [x.grad.tolist(), str(x.grad.dtype)]]


def backward_with_gradient_float64(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.backward(torch.tensor([1.0, 1.0], dtype=torch.float64))
    return [str(x.grad.dtype), x.grad.tolist()]


def sum_backward_0d_gradient(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.sum().backward(torch.tensor(5.0))
    return x.grad.tolist()


def backward_scalar_gradient_on_1elem(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    return _attempt(lambda: y.backward(torch.tensor(2.0)))


def parameter_of_int_tensor(torch, nn):
    return _attempt(lambda: nn.Parameter(torch.tensor([1, 2])))


def backward_inputs_with_unused_leaf(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    z = torch.tensor(1.0, requires_grad=True)
    y = x * 2
    error = _attempt(lambda: y.backward(inputs=[z]))
    return [error, z.grad, x.grad]


def backward_inputs_empty_list(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    y = x * 2
    return _attempt(lambda: y.backward(inputs=[]))


def torch_clone_and_detach_functions(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    c = torch.clone(x)
    d = torch.detach(x)
    return [type(c.grad_fn).__name__, d.requires_grad]


def constructors_with_requires_grad_and_dtype(torch, nn):
    a = torch.zeros(2, 3, requires_grad=True, dtype=torch.float64)
    b = torch.ones((2,), dtype=torch.float32, requires_grad=True)
    c = torch.tensor([[1, 2]], dtype=torch.float64, requires_grad=True)
    d = torch.arange(3.0, requires_grad=True)
    return [[str(t.dtype), t.requires_grad, t.is_leaf, list(t.shape)] for t in (a, b, c, d)]


def zeros_requires_grad_int_fails(torch, nn):
    return [_attempt(lambda: torch.zeros(2, dtype=torch.long, requires_grad=True)),
            _attempt(lambda: torch.arange(3, requires_grad=True))]


def detach_clone_chain_grad_fns(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x.clone().detach()
    b = x.detach().clone()
    c = x.clone()
    return [a.requires_grad, b.requires_grad, type(c.grad_fn).__name__]


def requires_grad_underscore_on_non_leaf(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    r = y.requires_grad_(True)
    return [r is y, _attempt(lambda: y.requires_grad_(False)), y.requires_grad]


def parameter_from_non_leaf_becomes_leaf(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    p = nn.Parameter(y)
    (p * p).sum().backward()
    return [p.is_leaf, p.grad_fn, p.grad.tolist(), x.grad, p.tolist()]


def parameter_without_arguments(torch, nn):
    p = nn.Parameter()
    return [repr(p), list(p.shape), p.requires_grad, str(p.dtype)]


def parameter_of_parameter(torch, nn):
    p = nn.Parameter(torch.tensor([1.0]))
    q = nn.Parameter(p)
    q.data.add_(1)
    return [type(q).__name__, p.tolist(), isinstance(q, nn.Parameter), isinstance(p * 1, nn.Parameter)]


def parameter_clone_and_ops_types(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    return [type(p.clone()).__name__, type(p[0]).__name__, type(p.view(2, 1)).__name__, type(p.data).__name__,
            isinstance(p, torch.Tensor), type(p.exp()).__name__]


def parameter_created_in_no_grad(torch, nn):
    with torch.no_grad():
        p = nn.Parameter(torch.tensor([1.0]))
    (p * 2).sum().backward()
    return [p.requires_grad, p.grad.tolist()]


def parameter_requires_grad_toggle(torch, nn):
    p = nn.Parameter(torch.tensor([1.0]))
    p.requires_grad_(False)
    y = p * 2
    p.requires_grad = True
    z = p * 2
    return [y.requires_grad, z.requires_grad, repr(p)]


def parameter_float64_repr_and_grad(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0], dtype=torch.float64))
    (p ** 2).sum().backward()
    return [repr(p), repr(p.grad)]


def parameter_grad_assign_and_setitem_under_no_grad(torch, nn):
    p = nn.Parameter(torch.zeros(3))
    with torch.no_grad():
        p[1] = 5
        p[2:] += 1
    p.grad = torch.ones(3)
    return [p.tolist(), p._version, p.grad.tolist(), type(p).__name__]


def zero_grad_when_grad_is_none(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    try:
        x.grad.zero_()
        return None
    except AttributeError as e:
        return _err(e)


def backward_retain_graph_positional(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(None, True)
    y.backward()
    return x.grad.tolist()
