"""Item assignment with every index kind: values, versions, grad_fn names and gradients."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def _assign(torch, index, value=-1.0):
    x = torch.arange(12.0).reshape(3, 4)
    x[index] = value
    return [x.tolist(), x._version]


def int_index(torch, nn):
    return _assign(torch, 1)


def negative_int_index(torch, nn):
    return _assign(torch, -1)


def tuple_of_ints(torch, nn):
    return _assign(torch, (2, -3))


def slice_index(torch, nn):
    return _assign(torch, slice(1, None))


def slice_with_step(torch, nn):
    return _assign(torch, (slice(None), slice(None, None, 2)))


def slice_with_step_and_start(torch, nn):
    return _assign(torch, (slice(0, 3, 2), slice(1, 4, 2)))


def negative_slice_bounds(torch, nn):
    return _assign(torch, (slice(-2, None), slice(None, -1)))


def ellipsis_index(torch, nn):
    return _assign(torch, (Ellipsis, 0))


def ellipsis_alone(torch, nn):
    return _assign(torch, Ellipsis, 7.0)


def none_index(torch, nn):
    return _assign(torch, (None, 1))


def int_list_index(torch, nn):
    return _assign(torch, [0, 2])


def int_list_with_negative_and_repeat(torch, nn):
    return _assign(torch, [-1, 0, -1])


def two_int_lists(torch, nn):
    return _assign(torch, ([0, 2], [1, 3]))


def long_tensor_index(torch, nn):
    return _assign(torch, torch.tensor([2, 0]))


def zero_dim_long_tensor_index(torch, nn):
    return _assign(torch, torch.tensor(1))


def bool_mask_index(torch, nn):
    x = torch.arange(12.0).reshape(3, 4)
    x[x > 6] = 0
    return [x.tolist(), x._version]


def bool_row_mask(torch, nn):
    return _assign(torch, torch.tensor([True, False, True]))


def python_true_index(torch, nn):
    x = torch.arange(3.0)
    x[True] = 5.0
    return [x.tolist(), x._version]


def python_false_index(torch, nn):
    x = torch.arange(3.0)
    x[False] = 5.0
    return [x.tolist(), x._version]


def mixed_slice_and_int_list(torch, nn):
    return _assign(torch, (slice(None), [0, 3]))


def assign_tensor_broadcast(torch, nn):
    x = torch.zeros(3, 4)
    x[:, 1:3] = torch.tensor([1.0, 2.0])
    return x.tolist()


def assign_row_tensor(torch, nn):
    x = torch.zeros(2, 3)
    x[1] = torch.tensor([7.0, 8.0, 9.0])
    return x.tolist()


def assign_shape_mismatch_fails(torch, nn):
    x = torch.zeros(2, 3)
    try:
        x[0] = torch.tensor([1.0, 2.0])
        return None
    except RuntimeError as e:
        return _err(e)


def index_out_of_range_fails(torch, nn):
    x = torch.zeros(2, 3)
    out = []
    for index in (5, (0, -4)):
        try:
            x[index] = 1
            out.append(None)
        except IndexError as e:
            out.append(_err(e))
    return out


def assign_int_into_float_and_float_into_int(torch, nn):
    x = torch.zeros(3)
    x[0] = 2
    y = torch.zeros(3, dtype=torch.long)
    y[1] = 2.7
    y[2] = -2.7
    return [x.tolist(), y.tolist(), str(y.dtype)]


def assign_bool_tensor_values(torch, nn):
    x = torch.tensor([True, False, True])
    x[1] = True
    x[0] = False
    return [x.tolist(), repr(x)]


def _grad_through_assignment(torch, index, value_shape):
    x = torch.arange(1.0, 13.0).reshape(3, 4).requires_grad_()
    v = (torch.ones(value_shape) * 2).requires_grad_()
    y = x * 1
    y[index] = v * 3
    (y * y).sum().backward()
    return [type(y.grad_fn).__name__, y._version, x.grad.tolist(), v.grad.tolist()]


def grad_through_int_assignment(torch, nn):
    return _grad_through_assignment(torch, 1, (4,))


def grad_through_step_slice_assignment(torch, nn):
    return _grad_through_assignment(torch, (slice(None), slice(None, None, 2)), (3, 2))


def grad_through_int_list_assignment(torch, nn):
    return _grad_through_assignment(torch, [2, 0], (2, 4))


def grad_through_long_tensor_assignment(torch, nn):
    return _grad_through_assignment(torch, (torch.tensor([0, 2]), torch.tensor([1, 1])), (2,))


def grad_through_mask_assignment(torch, nn):
    mask = torch.tensor([[True, False, False, True]] * 3)
    return _grad_through_assignment(torch, mask, (6,))


def grad_through_broadcast_value(torch, nn):
    return _grad_through_assignment(torch, (slice(None), 0), ())


def grad_through_ellipsis_none_assignment(torch, nn):
    return _grad_through_assignment(torch, (Ellipsis, None, -1), (3, 1))


def grad_through_0d_long_tensor_assignment(torch, nn):
    return _grad_through_assignment(torch, torch.tensor(2), (4,))


def grad_through_python_true_assignment(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y[True] = torch.tensor([5.0, 6.0], requires_grad=True)
    y.sum().backward()
    return [type(y.grad_fn).__name__, x.grad.tolist(), y.tolist()]


def assign_constant_blocks_gradient(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[1] = 0
    y.sum().backward()
    return [type(y.grad_fn).__name__, x.grad.tolist()]


def assign_into_tensor_without_grad_value_without_grad(torch, nn):
    x = torch.zeros(3)
    x[0] = torch.tensor(4.0)
    return [x.requires_grad, x.grad_fn, x.is_leaf, x.tolist()]


def assign_grad_value_into_slice_of_plain_tensor(torch, nn):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.zeros(4)
    x[1:3] = w * w
    (x * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    return [x.is_leaf, type(x.grad_fn).__name__, w.grad.tolist(), repr(x)]


def assign_grad_value_into_leaf_under_no_grad(torch, nn):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.zeros(3)
    with torch.no_grad():
        x[:2] = w * 10
    return [x.requires_grad, x.is_leaf, x.tolist()]


def assignment_twice_into_same_tensor(torch, nn):
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    y = torch.zeros(2)
    y[0] = a * a
    y[1] = a * b
    y.sum().backward()
    return [y._version, a.grad.item(), b.grad.item(), type(y.grad_fn).__name__]


def setitem_value_is_view_of_self(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    y[:2] = y[2:] * y[2:]
    try:
        y.sum().backward()
        return [y.tolist(), x.grad.tolist()]
    except RuntimeError as e:
        return [y.tolist(), _err(e)]


def setitem_float_index_fails(torch, nn):
    x = torch.zeros(3)
    try:
        x[1.0] = 2
        return None
    except (IndexError, TypeError) as e:
        return _err(e)


def setitem_mask_wrong_shape(torch, nn):
    x = torch.zeros(3)
    try:
        x[torch.tensor([True, False])] = 1
        return None
    except IndexError as e:
        return _err(e)


def setitem_list_bool(torch, nn):
    x = torch.zeros(3)
    x[[True, False, True]] = 1
    return x.tolist()


def setitem_advanced_noncontiguous(torch, nn):
    x = torch.zeros(2, 3, 4)
    x[[0, 1], :, [1, 3]] = torch.arange(6.0).reshape(2, 3)
    return x.tolist()


def zero_dim_setitem_and_ellipsis(torch, nn):
    x = torch.tensor(1.0)
    x[...] = 5
    y = torch.tensor(2.0)
    y[()] = 7
    return [x.item(), y.item(), x._version, y._version]


def advanced_index_iadd_repeated(torch, nn):
    x = torch.zeros(3)
    x[[0, 0, 2]] += 1
    return [x.tolist(), x._version]


def mask_imul(torch, nn):
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 1
    y[y < 0] *= 10
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist(), y._version]


def slice_iadd_grad(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y[1:] += y[:2] * 1
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist(), y._version]


def setitem_with_tensor_of_other_dtype(torch, nn):
    x = torch.zeros(3, dtype=torch.long)
    x[:] = torch.tensor([1.7, -1.7, 2.2])
    y = torch.zeros(2)
    y[:] = torch.tensor([True, False])
    return [x.tolist(), y.tolist()]


def setitem_broadcast_from_smaller_rank(torch, nn):
    x = torch.zeros(2, 2, 3)
    x[:, 0] = torch.tensor([1.0, 2.0, 3.0])
    x[1, :, 2] = torch.tensor([9.0])
    return x.tolist()


def setitem_on_expanded_fails(torch, nn):
    x = torch.zeros(1, 3).expand(2, 3)

    def assign():
        x[0, 0] = 1
    return _attempt(assign)


def leaf_without_grad_view_inplace_with_grad_value(torch, nn):
    w = torch.tensor(2.0, requires_grad=True)
    x = torch.ones(3)
    v = x[1:]
    v.mul_(w)
    out = [x.requires_grad, x.is_leaf, type(x.grad_fn).__name__, v.requires_grad, type(v.grad_fn).__name__]
    x.sum().backward()
    return out + [w.grad.item(), x.tolist()]


def setitem_leaf_without_grad_then_view_of_it(torch, nn):
    w = torch.tensor(2.0, requires_grad=True)
    x = torch.ones(3)
    v = x[:2]
    x[2] = w
    return [v.requires_grad, type(v.grad_fn).__name__, x.is_leaf]


def chained_basic_setitem_writes_base(torch, nn):
    x = torch.zeros(2, 3)
    x[0][1] = 5
    x[:, 2][1] = 7
    x[1, :2][0] = 9
    return [x.tolist(), x._version]


def chained_advanced_setitem_writes_copy(torch, nn):
    x = torch.zeros(2, 3)
    x[[0, 1]][0] = 5
    x[x == 0][0] = 5
    x[:, [0]][1] = 5
    return [x.tolist(), x._version]


def chained_setitem_with_grad(torch, nn):
    w = torch.tensor(3.0, requires_grad=True)
    x = torch.ones(2, 3, requires_grad=True)
    y = x * 1
    y[1][2] = w * w
    (y * y).sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, w.grad.item(), x.grad.tolist()]


def int32_index_setitem(torch, nn):
    x = torch.zeros(4)
    x[torch.tensor([1, 3], dtype=torch.int32)] = torch.tensor([5.0, 6.0])
    return x.tolist()


def setitem_with_tensor_requiring_grad_into_view_of_leaf_under_no_grad(torch, nn):
    w = torch.tensor([5.0], requires_grad=True)
    x = torch.zeros(3, requires_grad=True)
    with torch.no_grad():
        x[1:2] = w
    return [x.tolist(), x.is_leaf, x.requires_grad, x.grad_fn, x._version]


def setitem_mask_with_tensor_values_grad(torch, nn):
    x = torch.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    v = torch.tensor([10.0, 20.0], requires_grad=True)
    y = x * 1
    y[y < 0] = v
    (y * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    return [y.tolist(), x.grad.tolist(), v.grad.tolist()]


def setitem_value_broadcast_grad_reduces(torch, nn):
    v = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.zeros(3, 2)
    y[1:] = v
    (y * torch.arange(6.0).reshape(3, 2)).sum().backward()
    return [y.tolist(), v.grad.tolist()]


def setitem_slice_with_none_start_negative_stop_step(torch, nn):
    x = torch.arange(10.0)
    x[:-2:3] = -1
    return x.tolist()


def setitem_scalar_tensor_value_requires_grad_into_int_tensor(torch, nn):
    w = torch.tensor(2.5, requires_grad=True)
    x = torch.zeros(2, dtype=torch.long)
    return [_attempt(lambda: x.__setitem__(0, w)), x.tolist(), x.requires_grad]
