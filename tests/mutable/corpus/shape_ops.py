"""View and shape operations: results, grad_fn names and gradients, and their error messages."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def _through(torch, op):
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    y = op(x)
    w = torch.arange(1.0, y.numel() + 1.0).reshape(y.shape)
    (y * w).sum().backward()
    return [y.tolist(), list(y.shape), type(y.grad_fn).__name__, x.grad.tolist()]


def view(torch, nn):
    return _through(torch, lambda x: x.view(3, 2))


def view_with_minus_one(torch, nn):
    return _through(torch, lambda x: x.view(-1))


def reshape(torch, nn):
    return _through(torch, lambda x: x.reshape(1, 6))


def reshape_of_transposed(torch, nn):
    return _through(torch, lambda x: x.t().reshape(6))


def t(torch, nn):
    return _through(torch, lambda x: x.t())


def transpose(torch, nn):
    return _through(torch, lambda x: x.transpose(0, 1))


def transpose_negative_dims(torch, nn):
    return _through(torch, lambda x: x.unsqueeze(0).transpose(-1, -3))


def permute(torch, nn):
    return _through(torch, lambda x: x.unsqueeze(1).permute(2, 0, 1))


def unsqueeze(torch, nn):
    return _through(torch, lambda x: x.unsqueeze(-1))


def squeeze(torch, nn):
    return _through(torch, lambda x: x.reshape(1, 2, 1, 3).squeeze())


def squeeze_dim(torch, nn):
    return _through(torch, lambda x: x.reshape(1, 2, 1, 3).squeeze(2))


def squeeze_non_unit_dim_is_noop(torch, nn):
    return _through(torch, lambda x: x.squeeze(0))


def expand(torch, nn):
    return _through(torch, lambda x: x[:, None, :].expand(2, 2, 3))


def expand_with_minus_one(torch, nn):
    return _through(torch, lambda x: x[:1].expand(4, -1))


def narrow(torch, nn):
    return _through(torch, lambda x: x.narrow(1, 1, 2))


def diagonal(torch, nn):
    return _through(torch, lambda x: x.diagonal())


def diagonal_with_offset(torch, nn):
    return _through(torch, lambda x: x.diagonal(1))


def flatten(torch, nn):
    return _through(torch, lambda x: x.flatten())


def flatten_range(torch, nn):
    return _through(torch, lambda x: x.reshape(2, 3, 1).flatten(1))


def contiguous_of_transposed(torch, nn):
    return _through(torch, lambda x: x.t().contiguous())


def contiguous_is_identity_when_contiguous(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    return [y.contiguous() is y, type(y.contiguous().grad_fn).__name__]


def unbind(torch, nn):
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    a, b = x.unbind()
    (a * 2 + b * 3).sum().backward()
    return [a.tolist(), b.tolist(), type(a.grad_fn).__name__, x.grad.tolist()]


def unbind_dim1(torch, nn):
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    parts = x.unbind(1)
    (parts[2] * 10).sum().backward()
    return [[p.tolist() for p in parts], len(parts), x.grad.tolist()]


def split_by_size(torch, nn):
    x = torch.arange(1.0, 8.0).requires_grad_()
    parts = x.split(3)
    (parts[1] * parts[1]).sum().backward()
    return [[p.tolist() for p in parts], type(parts[0].grad_fn).__name__, x.grad.tolist()]


def split_by_sizes_list(torch, nn):
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    a, b = x.split([1, 2], dim=1)
    (a.sum() * 2 + b.sum()).backward()
    return [a.tolist(), b.tolist(), type(a.grad_fn).__name__, x.grad.tolist()]


def chunk(torch, nn):
    x = torch.arange(1.0, 8.0).requires_grad_()
    parts = x.chunk(3)
    (parts[2] * 5).sum().backward()
    return [[p.tolist() for p in parts], type(parts[2].grad_fn).__name__, x.grad.tolist()]


def chunk_more_than_size(torch, nn):
    x = torch.arange(3.0)
    return [p.tolist() for p in x.chunk(5)]


def view_wrong_size_fails(torch, nn):
    x = torch.zeros(2, 3)
    try:
        x.view(4, 2)
        return None
    except RuntimeError as e:
        return _err(e)


def reshape_wrong_size_fails(torch, nn):
    x = torch.zeros(2, 3)
    try:
        x.reshape(5)
        return None
    except RuntimeError as e:
        return _err(e)


def expand_non_singleton_fails(torch, nn):
    x = torch.zeros(2, 3)
    try:
        x.expand(4, 3)
        return None
    except RuntimeError as e:
        return _err(e)


def transpose_out_of_range_fails(torch, nn):
    x = torch.zeros(2, 3)
    try:
        x.transpose(0, 2)
        return None
    except IndexError as e:
        return _err(e)


def permute_wrong_dims_fails(torch, nn):
    x = torch.zeros(2, 3)
    try:
        x.permute(0)
        return None
    except RuntimeError as e:
        return _err(e)


def t_on_3d_fails(torch, nn):
    x = torch.zeros(2, 3, 4)
    try:
        x.t()
        return None
    except RuntimeError as e:
        return _err(e)


def view_tuple_and_size_arguments(torch, nn):
    x = torch.arange(6.0)
    return [x.view((2, 3)).tolist(), list(x.reshape((3, -1)).shape),
            list(x.view(torch.zeros(3, 2).shape).shape)]


def inplace_through_expand_view_fails(torch, nn):
    x = torch.zeros(1, 3)
    e = x.expand(2, 3)
    try:
        e.add_(1)
        return None
    except RuntimeError as err:
        return _err(err)


def unsqueeze_negative(torch, nn):
    x = torch.zeros(2, 3)
    return [list(x.unsqueeze(-1).shape), list(x.unsqueeze(-3).shape), list(x.unsqueeze(2).shape)]


def squeeze_error(torch, nn):
    try:
        torch.zeros(2).squeeze(3)
        return None
    except IndexError as e:
        return _err(e)


def narrow_error(torch, nn):
    try:
        torch.zeros(4).narrow(0, 3, 2)
        return None
    except RuntimeError as e:
        return _err(e)


def split_error(torch, nn):
    try:
        torch.zeros(4).split([1, 2])
        return None
    except RuntimeError as e:
        return _err(e)


def expand_fewer_dims_error(torch, nn):
    try:
        torch.zeros(2, 3).expand(3)
        return None
    except RuntimeError as e:
        return _err(e)


def view_two_minus_one(torch, nn):
    try:
        torch.zeros(6).view(-1, -1)
        return None
    except RuntimeError as e:
        return _err(e)


def dim_out_of_range_errors(torch, nn):
    x = torch.zeros(2)
    return [_attempt(lambda: x.sum(dim=5)), _attempt(lambda: x.unsqueeze(5)), _attempt(lambda: x.mean(-3)),
            _attempt(lambda: x.split(1, dim=2)), _attempt(lambda: x.narrow(1, 0, 1))]


def permute_duplicate_dims(torch, nn):
    return _attempt(lambda: torch.zeros(2, 3).permute(0, 0))


def diagonal_3d_dims(torch, nn):
    x = torch.arange(1.0, 13.0).reshape(2, 2, 3).requires_grad_()
    y = x.diagonal(0, 0, 1)
    z = x.diagonal(offset=-1, dim1=1, dim2=2)
    (y.sum() + 10 * z.sum()).backward()
    return [y.tolist(), z.tolist(), x.grad.tolist()]


def flatten_start_end(torch, nn):
    x = torch.zeros(2, 3, 4, 5)
    results = (x.flatten(1, 2), x.flatten(-2), x.flatten(0, -1), torch.tensor(3.0).flatten())
    return [list(t.shape) for t in results]


def narrow_negative_start(torch, nn):
    x = torch.arange(6.0)
    return [x.narrow(0, -3, 2).tolist(), list(torch.zeros(3, 4).narrow(-1, 1, 3).shape)]


def transpose_same_dim_and_negative_permute(torch, nn):
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.transpose(1, 1)
    z = x.permute(-1, -2)
    return [y.tolist(), type(y.grad_fn).__name__, z.tolist(), type(z.grad_fn).__name__]


def chunk_dim1_and_uneven(torch, nn):
    x = torch.arange(10.0).reshape(2, 5)
    return [[p.tolist() for p in x.chunk(2, dim=1)], [list(p.shape) for p in x.chunk(4, 1)]]


def torch_shape_functions(torch, nn):
    x = torch.arange(6.0).reshape(2, 3)
    return [torch.reshape(x, (3, 2)).tolist(), torch.transpose(x, 0, 1).tolist(), torch.t(x).tolist(),
            list(torch.unsqueeze(x, 0).shape), list(torch.squeeze(x[None]).shape), torch.flatten(x).tolist(),
            torch.permute(x, (1, 0)).tolist(), [p.tolist() for p in torch.split(x, 2, dim=1)],
            [p.tolist() for p in torch.chunk(x, 2)], [p.tolist() for p in torch.unbind(x, 1)],
            torch.narrow(x, 1, 0, 2).tolist(), torch.diagonal(x).tolist()]


def squeeze_tuple_of_dims(torch, nn):
    x = torch.zeros(1, 2, 1, 3)
    return [list(x.squeeze((0, 2)).shape), list(x.squeeze(-2).shape)]


def missing_required_arguments(torch, nn):
    x = torch.zeros(2, 3)
    return [_attempt(lambda: x.unsqueeze()), _attempt(lambda: x.transpose(0)), _attempt(lambda: x.narrow(0, 1))]


def reshape_and_view_with_inferred_and_list_sizes(torch, nn):
    x = torch.zeros(2, 3)
    return [list(x.reshape(-1, 1).shape), list(x.view(3, -1).shape), list(x.reshape([6]).shape)]


def transpose_of_1d_and_0d(torch, nn):
    v = torch.tensor([1.0, 2.0], requires_grad=True)
    s = torch.tensor(3.0, requires_grad=True)
    return [v.t().tolist(), type(v.t().grad_fn).__name__, s.t().item(), _attempt(lambda: v.transpose(0, 1))]


def expand_scalar_and_new_dims(torch, nn):
    s = torch.tensor(2.0, requires_grad=True)
    e = s.expand(2, 3)
    e.sum().backward()
    return [e.tolist(), s.grad.item(), type(e.grad_fn).__name__]


def split_size_zero_and_large(torch, nn):
    x = torch.arange(4.0)
    return [[p.tolist() for p in x.split(10)], _attempt(lambda: x.split(0))]


def chunk_zero(torch, nn):
    return _attempt(lambda: torch.arange(4.0).chunk(0))


def unbind_zero_dim(torch, nn):
    return _attempt(lambda: torch.tensor(1.0).unbind())


def diagonal_of_1d(torch, nn):
    return _attempt(lambda: torch.arange(3.0).diagonal())
