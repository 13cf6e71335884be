"""no_grad / enable_grad / set_grad_enabled, and .data: what is and is not recorded."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def no_grad_results_do_not_require_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        y = x * 2
        inside = torch.is_grad_enabled()
    return [y.requires_grad, y.is_leaf, y.grad_fn, inside, torch.is_grad_enabled()]


def no_grad_as_decorator(torch, nn):
    @torch.no_grad()
    def double(t):
        return t * 2

    x = torch.tensor([1.0], requires_grad=True)
    y = double(x)
    return [y.requires_grad, (x * 2).requires_grad]


def enable_grad_inside_no_grad(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            y = x * 2
        z = x * 2
    return [y.requires_grad, type(y.grad_fn).__name__, z.requires_grad]


def set_grad_enabled_false_and_true(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    with torch.set_grad_enabled(False):
        a = x * 2
    with torch.set_grad_enabled(True):
        b = x * 2
    return [a.requires_grad, b.requires_grad, torch.is_grad_enabled()]


def set_grad_enabled_as_function(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    torch.set_grad_enabled(False)
    try:
        a = x * 2
        state = torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    return [a.requires_grad, state, torch.is_grad_enabled()]


def no_grad_restored_after_exception(torch, nn):
    try:
        with torch.no_grad():
            raise ValueError("boom")
    except ValueError:
        pass
    return torch.is_grad_enabled()


def leaf_created_in_no_grad(torch, nn):
    with torch.no_grad():
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.ones(2, requires_grad=True)
    (x * y).sum().backward()
    return [x.is_leaf, x.requires_grad, x.grad.tolist(), y.grad.tolist()]


def view_made_in_no_grad_then_inplace(torch, nn):
    # A view created under no_grad of a tensor that requires grad cannot be modified in place.
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    with torch.no_grad():
        v = y[:2]
    out = [v.requires_grad, v.is_leaf, v.grad_fn]
    try:
        v.mul_(2)
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out


def view_made_in_no_grad_of_leaf_inplace_in_no_grad(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.no_grad():
        v = x[1:]
        v.mul_(10)
    return [x.tolist(), x._version, x.is_leaf, x.requires_grad]


def inplace_under_no_grad_on_non_leaf_then_backward(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    with torch.no_grad():
        y.add_(100)
    z = y * 2
    z.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist()]


def inplace_under_no_grad_on_saved_tensor_still_checked(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = (y * y).sum()
    with torch.no_grad():
        y.mul_(2)
    try:
        z.backward()
        return None
    except RuntimeError as e:
        return _err(e)


def data_getter(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    return [d.requires_grad, d.is_leaf, d.grad_fn, d.tolist(), repr(d)]


def data_setter_replaces_values(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.data = torch.tensor([5.0, 6.0, 7.0])
    (x * x).sum().backward()
    return [x.tolist(), list(x.shape), x.grad.tolist(), x.is_leaf, x._version]


def data_inplace_update_like_sgd(torch, nn):
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    for _ in range(3):
        loss = (w * w).sum()
        loss.backward()
        w.data.sub_(0.25 * w.grad.data)
        w.grad.zero_()
    return [w.tolist(), w._version, w.is_leaf]


def data_of_non_leaf_is_detached(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    d = y.data
    e = d * 2
    return [d.requires_grad, e.requires_grad, e.tolist()]


def no_grad_on_leaf_setitem_keeps_leaf(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.no_grad():
        x[0] = 10
    y = (x * x).sum()
    y.backward()
    return [x.is_leaf, x._version, x.grad.tolist(), x.grad_fn]


def parameter_data_setter(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    p.data = torch.tensor([3.0, 4.0])
    return [repr(p), type(p).__name__, p.requires_grad]


def float_and_numpy_methods(torch, nn):
    x = torch.tensor([1, 2, 3])
    f = x.float()
    n = f.numpy()
    return [str(f.dtype), f.tolist(), n.tolist(), str(n.dtype), type(n).__name__]


def numpy_of_grad_requiring_tensor_fails(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    try:
        x.numpy()
        return None
    except RuntimeError as e:
        return _err(e)


def numpy_shares_memory(torch, nn):
    x = torch.tensor([1.0, 2.0])
    n = x.numpy()
    n[0] = 50
    x[1] = 60
    return [x.tolist(), n.tolist()]


def no_grad_nested_enable_and_decorator_function(torch, nn):
    @torch.enable_grad()
    def f(t):
        return t * 2

    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        y = f(x)
    return [y.requires_grad]


def set_grad_enabled_decorator(torch, nn):
    @torch.set_grad_enabled(False)
    def f(t):
        return t * 2

    x = torch.tensor([1.0], requires_grad=True)
    y = f(x)
    return [y.requires_grad, torch.is_grad_enabled()]


def no_grad_exp_has_no_grad_fn(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        y = x.exp()
    return [y.requires_grad, y.grad_fn]


def inplace_under_no_grad_keeps_grad_fn_of_nonleaf(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    with torch.no_grad():
        y[0] = 100
    return [type(y.grad_fn).__name__, y._version, y.requires_grad]


def data_of_view_shares(torch, nn):
    x = torch.zeros(3, requires_grad=True)
    x.data[1:] = 5
    return [x.tolist(), x._version, x.is_leaf]


def grad_data_assignment(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad.data.mul_(0.5)
    x.grad[0] = 9
    return [x.grad.tolist()]


def float_of_float32_is_self(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    return [x.float() is x, x.double().dtype == torch.float64]


def no_grad_view_of_leaf_then_base_inplace_outside(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    with torch.no_grad():
        v = y[:2]
    y.mul_(2)
    out = [v.tolist(), v.requires_grad]
    return out + [_attempt(lambda: v.sum().backward())]


def no_grad_view_used_out_of_place(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.no_grad():
        v = x[:2]
    z = v * 2
    return [v.requires_grad, z.requires_grad, z.grad_fn is None]


def view_of_view_created_in_no_grad(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    with torch.no_grad():
        v = y[:2]
    w = v[:1]
    return [w.requires_grad, w.grad_fn is None, _attempt(lambda: w.mul_(2))]


def leaf_view_inplace_under_no_grad_and_grad(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = x[1:]
    with torch.no_grad():
        v.mul_(2)
    out = [x.tolist(), x._version, v._version, v.requires_grad, type(v.grad_fn).__name__]
    (v * v).sum().backward()
    return out + [x.grad.tolist()]


def leaf_view_made_in_no_grad_inplace_outside(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.no_grad():
        v = x[1:]
    return [v.requires_grad, v.is_leaf, _attempt(lambda: v.mul_(2))]


def numpy_write_does_not_bump_version(torch, nn):
    x = torch.tensor([1.0, 2.0])
    n = x.numpy()
    n[0] = 5.0
    return [x.tolist(), x._version]


def tensor_from_numpy_arrays_keeps_dtype(torch, nn):
    f32 = torch.tensor([1.5, 2.0]).numpy()
    f64 = torch.tensor([1.5, 2.0], dtype=torch.float64).numpy()
    i64 = torch.tensor([1, 2]).numpy()
    b = torch.tensor([True]).numpy()
    made = [torch.tensor(a) for a in (f32, f64, i64, b)]
    copy = made[0]
    copy[0] = 100.0
    return [[str(t.dtype) for t in made], f32.tolist(), repr(made[1])]


def tensor_from_numpy_scalar(torch, nn):
    s64 = torch.tensor([1.5], dtype=torch.float64).numpy()[0]
    s32 = torch.tensor([1.5]).numpy()[0]
    return [str(torch.tensor(s64).dtype), str(torch.tensor(s32).dtype), str((torch.tensor([1.0]) * s64).dtype)]


def deepcopy_leaf_and_parameter(torch, nn):
    import copy
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    c = copy.deepcopy(x)
    p = nn.Parameter(torch.tensor([3.0]))
    q = copy.deepcopy(p)
    c.data.add_(1)
    return [c.tolist(), x.tolist(), c.requires_grad, c.is_leaf, None if c.grad is None else c.grad.tolist(),
            type(q).__name__, q.requires_grad]


def deepcopy_non_leaf_fails(torch, nn):
    import copy
    x = torch.tensor([1.0], requires_grad=True)
    try:
        copy.deepcopy(x * 2)
        return None
    except RuntimeError as e:
        return _err(e)


def copy_copy_shares_storage(torch, nn):
    import copy
    x = torch.tensor([1.0, 2.0])
    c = copy.copy(x)
    c[0] = 10
    return [x.tolist(), c is x]
