"""Indexing reads with every index kind: values, shapes, grad_fn names and gradients."""


def _err(e):
    return [type(e).__name__, str(e)]


def _read(torch, index):
    x = torch.arange(1.0, 13.0).reshape(3, 4).requires_grad_()
    y = x[index]
    (y * y).sum().backward()
    return [y.tolist(), list(y.shape), type(y.grad_fn).__name__, x.grad.tolist()]


def int_read(torch, nn):
    return _read(torch, 1)


def negative_int_read(torch, nn):
    return _read(torch, -2)


def int_pair_read(torch, nn):
    return _read(torch, (2, -1))


def slice_read(torch, nn):
    return _read(torch, slice(None, 2))


def step_slice_read(torch, nn):
    return _read(torch, (slice(None), slice(1, None, 2)))


def int_and_slice_read(torch, nn):
    return _read(torch, (0, slice(1, 3)))


def ellipsis_read(torch, nn):
    return _read(torch, (Ellipsis, 2))


def none_read(torch, nn):
    return _read(torch, (None, slice(None), None, 0))


def int_list_read(torch, nn):
    return _read(torch, [2, 0, 2])


def long_tensor_read(torch, nn):
    return _read(torch, torch.tensor([[0, 1], [1, 2]]))


def zero_dim_long_tensor_read(torch, nn):
    return _read(torch, torch.tensor(2))


def two_long_tensors_read(torch, nn):
    return _read(torch, (torch.tensor([0, 2]), torch.tensor([3, 0])))


def bool_mask_read(torch, nn):
    x = torch.arange(1.0, 13.0).reshape(3, 4).requires_grad_()
    y = x[x > 9]
    (y * y).sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist()]


def bool_row_mask_read(torch, nn):
    return _read(torch, torch.tensor([False, True, True]))


def python_true_read(torch, nn):
    return _read(torch, True)


def python_none_alone_read(torch, nn):
    return _read(torch, None)


def slice_then_list_read(torch, nn):
    return _read(torch, (slice(1, None), [0, 3]))


def empty_slice_read(torch, nn):
    return _read(torch, slice(3, None))


def zero_dim_item_and_index(torch, nn):
    x = torch.tensor([5.0, 6.0])
    y = x[1]
    return [list(y.shape), y.item(), type(y.item()).__name__, y.dim(), y.tolist()]


def read_out_of_range(torch, nn):
    x = torch.zeros(2, 3)
    out = []
    for index in (2, (0, 3), [0, 5]):
        try:
            x[index]
            out.append(None)
        except IndexError as e:
            out.append(_err(e))
    return out


def too_many_indices(torch, nn):
    x = torch.zeros(2)
    try:
        x[0, 0]
        return None
    except IndexError as e:
        return _err(e)


def float_index_fails(torch, nn):
    x = torch.zeros(3)
    try:
        x[torch.tensor([0.0, 1.0])]
        return None
    except IndexError as e:
        return _err(e)


def repeated_list_index_accumulates_grad(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x[[0, 0, 2, 0]]
    y.sum().backward()
    return x.grad.tolist()


def long_tensor_dtype_int32_index(torch, nn):
    x = torch.tensor([10.0, 20.0, 30.0])
    return x[torch.tensor([2, 0], dtype=torch.int32)].tolist()


def grad_of_int_index_leaf_float64(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    y = x[1, 0] * x[0]
    y.sum().backward()
    return [repr(y), repr(x.grad)]


def iterate_tensor(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    rows = [r for r in x]
    return [type(rows[0].grad_fn).__name__, [r.tolist() for r in rows]]


def getitem_negative_step_fails(torch, nn):
    try:
        torch.zeros(3)[::-1]
        return None
    except ValueError as e:
        return _err(e)


def getitem_slice_beyond(torch, nn):
    x = torch.arange(5.0)
    return [x[3:100].tolist(), x[-100:2].tolist(), x[4:1].tolist()]


def getitem_ellipsis_none_mix(torch, nn):
    x = torch.arange(24.0).reshape(2, 3, 4)
    return [list(x[..., None].shape), list(x[None, ..., 0].shape), list(x[:, None, 1, ..., ::2].shape)]


def getitem_tensor_and_slice_mix(torch, nn):
    x = torch.arange(24.0).reshape(2, 3, 4)
    return [x[:, [0, 2], 1].tolist(), list(x[[0, 1], :, [1, 3]].shape), list(x[0, :, [1, 2]].shape)]


def zero_dim_getitem_none(torch, nn):
    x = torch.tensor(3.0, requires_grad=True)
    y = x[None]
    z = x[...]
    return [list(y.shape), type(y.grad_fn).__name__, list(z.shape), type(z.grad_fn).__name__]


def index_zero_dim_fails(torch, nn):
    try:
        torch.tensor(1.0)[0]
        return None
    except IndexError as e:
        return _err(e)


def chained_list_indexing(torch, nn):
    x = torch.arange(9.0).reshape(3, 3)
    return [x[[0, 2]][:, [1]].tolist(), x[[0, 2], :].tolist()]


def zero_dim_bool_tensor_index(torch, nn):
    x = torch.arange(3.0)
    a = x[torch.tensor(True)]
    b = x[torch.tensor(False)]
    return [list(a.shape), list(b.shape), a.tolist()]


def nested_list_index(torch, nn):
    x = torch.arange(6.0).reshape(2, 3)
    return [x[[[0, 1], [1, 0]]].tolist(), list(x[[[0], [1]], [[0, 2]]].shape)]


def tensor_index_with_none_and_ellipsis(torch, nn):
    x = torch.arange(24.0).reshape(2, 3, 4)
    idx = torch.tensor([1, 0])
    return [list(x[None, idx].shape), list(x[..., idx].shape), list(x[:, None, idx].shape), list(x[idx, ..., None].shape)]


def getitem_then_inplace_on_copy_does_not_touch_base(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    c = y[[0, 2]]
    c.mul_(10)
    (y.sum() + c.sum()).backward()
    return [y.tolist(), c.tolist(), y._version, x.grad.tolist()]


def getitem_list_of_bools_and_bool_tensor_2d(torch, nn):
    x = torch.arange(6.0).reshape(2, 3)
    return [x[[True, False]].tolist(), x[torch.tensor([[True, False, True], [False, False, True]])].tolist()]


def getitem_slice_step_larger_than_size(torch, nn):
    x = torch.arange(5.0, requires_grad=True)
    y = x[1::10]
    y.sum().backward()
    return [y.tolist(), x.grad.tolist(), type(y.grad_fn).__name__]
