"""Views share storage and one version counter; in-place ops bump it; advanced indexing copies."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def inplace_ops_bump_version(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0])
    versions = [x._version]
    x.add_(1)
    versions.append(x._version)
    x.mul_(2)
    versions.append(x._version)
    x += 1
    versions.append(x._version)
    x[0] = 5
    versions.append(x._version)
    x.zero_()
    versions.append(x._version)
    return [versions, x.tolist()]


def out_of_place_ops_do_not_bump_version(torch, nn):
    x = torch.tensor([1.0, 2.0])
    y = x + 1
    z = x * 2
    x.sum()
    x.clone()
    return [x._version, y._version, z._version]


def view_shares_storage_and_version(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = x.view(4)
    v[1] = 20
    out = [x.tolist(), x._version, v._version]
    x.add_(1)
    out += [v.tolist(), x._version, v._version]
    return out


def basic_index_views(torch, nn):
    x = torch.arange(6.0).reshape(2, 3)
    row = x[1]
    col = x[:, 0]
    step = x[0, ::2]
    row[0] = 100
    col[0] = -1
    step[1] = 50
    return [x.tolist(), row.tolist(), col.tolist(), step.tolist(), x._version, row._version]


def advanced_index_copies(torch, nn):
    x = torch.arange(6.0).reshape(2, 3)
    picked = x[[0, 1], [2, 0]]
    masked = x[x > 2]
    picked[0] = 100
    masked[0] = 100
    return [x.tolist(), x._version, picked.tolist(), masked.tolist(), picked._version]


def view_ops_share_storage(torch, nn):
    x = torch.zeros(2, 3)
    views = [x.t(), x.transpose(0, 1), x.permute(1, 0), x.unsqueeze(0), x.reshape(3, 2),
             x.narrow(1, 1, 2), x.diagonal(), x.flatten(), x.expand(2, 2, 3), x.squeeze(),
             x[None], x[...], x.unbind(0)[1], x.split(2, dim=1)[1], x.chunk(3, dim=1)[2]]
    for i, v in enumerate(views):
        x.add_(1)
    return [[v.tolist() for v in views], [v._version for v in views]]


def detach_shares_storage_and_version(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    d[0] = 100
    return [y.tolist(), y._version, d._version, d.requires_grad]


def detach_write_caught_at_backward(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    d = y.detach()
    d.zero_()
    try:
        y.sum().backward()
        return None
    except RuntimeError as e:
        return _err(e)


def data_shares_storage_not_version(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.data
    d[0] = 100
    return [y.tolist(), y._version, d._version, d.requires_grad, d.is_leaf]


def data_write_goes_unseen_at_backward(torch, nn):
    # The documented hazard of .data: a silently wrong gradient, exactly as in PyTorch.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.data.zero_()
    y.sum().backward()
    return [x.grad.tolist(), y._version]


def clone_is_independent(torch, nn):
    x = torch.tensor([1.0, 2.0])
    c = x.clone()
    c[0] = 100
    return [x.tolist(), x._version, c._version]


def contiguous_of_transposed_copies(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    t = x.t()
    c = t.contiguous()
    c[0, 1] = 100
    same = x.contiguous()
    same[0, 0] = -5
    return [x.tolist(), c.tolist(), x._version, t._version, c._version]


def reshape_of_non_contiguous_copies(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    r = x.t().reshape(4)
    r[0] = 100
    v = x.reshape(4)
    v[3] = -1
    return [x.tolist(), r.tolist()]


def view_of_non_contiguous_fails(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).t()
    try:
        x.view(4)
        return None
    except RuntimeError as e:
        return _err(e)


def version_shared_by_chain_of_views(torch, nn):
    x = torch.zeros(4)
    a = x[1:]
    b = a[1:]
    b.add_(1)
    return [x._version, a._version, b._version, x.tolist()]


def inplace_on_view_changes_base_grad_fn(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    before = type(y.grad_fn).__name__
    y[1:].mul_(10)
    after = type(y.grad_fn).__name__
    y.sum().backward()
    return [before, after, y.tolist(), x.grad.tolist()]


def inplace_on_base_changes_view_grad_fn(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v = y[:2]
    before = type(v.grad_fn).__name__
    y.mul_(2)
    after = type(v.grad_fn).__name__
    v.sum().backward()
    return [before, after, v.tolist(), x.grad.tolist()]


def saved_view_modified_through_base(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v = y[:2]
    z = (v * v).sum()
    y[2] = 0  # touches a part v does not see, but v shares y's version counter
    try:
        z.backward()
        return [v._version, None]
    except RuntimeError as e:
        return [v._version, _err(e)]


def version_of_tensor_used_in_no_grad(torch, nn):
    x = torch.tensor([1.0, 2.0])
    with torch.no_grad():
        x.mul_(3)
        x[0] = 7
    return [x._version, x.tolist()]


def version_after_out_of_place_assignment(torch, nn):
    x = torch.tensor([1.0, 2.0])
    x.add_(1)
    y = x
    x = x + 1  # a new tensor, fresh version counter
    return [y._version, x._version]


def strided_view_fill(torch, nn):
    x = torch.arange(4.0)
    v = x[::2]
    v.fill_(9)
    return [x.tolist(), v.tolist(), x._version]


def _inplace_through_view(torch, make_view):
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    y = x * 1
    v = make_view(y)
    v.mul_(10)
    out = [y.tolist(), type(y.grad_fn).__name__, type(v.grad_fn).__name__, y._version, v._version]
    (y * torch.arange(1.0, 7.0).reshape(2, 3)).sum().backward()
    return out + [x.grad.tolist()]


def inplace_through_transposed_view(torch, nn):
    return _inplace_through_view(torch, lambda y: y.t())


def inplace_through_diagonal_view(torch, nn):
    return _inplace_through_view(torch, lambda y: y.diagonal())


def inplace_through_strided_slice(torch, nn):
    return _inplace_through_view(torch, lambda y: y[:, ::2])


def inplace_through_view_of_view(torch, nn):
    return _inplace_through_view(torch, lambda y: y[1].unsqueeze(0)[:, 1:])


def inplace_through_expanded_dim_view(torch, nn):
    return _inplace_through_view(torch, lambda y: y.view(3, 2)[2])


def setitem_on_view_of_non_leaf(torch, nn):
    w = torch.tensor(5.0, requires_grad=True)
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    y = x * 1
    row = y[1]
    row[0] = w * 2
    (y * y).sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, type(row.grad_fn).__name__, x.grad.tolist(), w.grad.item()]


def view_grad_fn_after_base_setitem(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    a = y[1:]
    b = y.view(3, 1)
    y[0] = 0
    return [type(a.grad_fn).__name__, type(b.grad_fn).__name__, a.tolist(), b.tolist()]



def double_inplace_on_view(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x.clone()
    y[:2].mul_(y[2:])
    try:
        y.sum().backward()
        return [y.tolist(), x.grad.tolist()]
    except RuntimeError as e:
        return [y.tolist(), _err(e)]


def fill_on_view_of_no_grad(torch, nn):
    x = torch.zeros(2, 2)
    x[0].fill_(3)
    x[:, 1].zero_()
    return x.tolist()


def getitem_leaf_version_shared(torch, nn):
    x = torch.zeros(3, requires_grad=True)
    v = x[0]
    with torch.no_grad():
        x.add_(1)
    return [v._version, v.item()]


def requires_grad_tensor_times_no_grad_view(torch, nn):
    w = torch.tensor([2.0], requires_grad=True)
    base = torch.ones(3)
    v = base[1:]
    v.mul_(w)
    base.sum().backward()
    return [base.requires_grad, type(base.grad_fn).__name__, type(v.grad_fn).__name__, w.grad.tolist()]


def split_output_inplace_without_grad(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    a, b = x.split(2)
    a.mul_(10)
    return [x.tolist(), x._version]


def inplace_on_detached_view_shared_version(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.sigmoid()
    d = y.detach()[:1]
    d.fill_(0)
    return [y._version, _attempt(lambda: y.sum().backward())]


def versions_of_derived_tensors(torch, nn):
    x = torch.arange(6.0).reshape(2, 3)
    x.add_(1)
    x.mul_(2)
    x[0, 0] = 5
    return [x._version, x.data._version, x.detach()._version, x.clone()._version, x[0]._version,
            x[[0]]._version, x.reshape(6)._version, x.t().reshape(6)._version, x.contiguous()._version,
            x[x > 3]._version, x.view(3, 2)._version, (x + 0)._version]


def requires_grad_does_not_bump_version(torch, nn):
    x = torch.tensor([1.0])
    x.requires_grad_()
    x.requires_grad = False
    return x._version


def empty_index_assignment_version(torch, nn):
    x = torch.zeros(3)
    x[[]] = 1
    a = x._version
    x[torch.tensor([], dtype=torch.long)] = 2
    b = x._version
    x[x > 100] = 3
    return [a, b, x._version, x.tolist()]


def copy_from_self_bumps(torch, nn):
    x = torch.tensor([1.0, 2.0])
    x.copy_(x)
    x.fill_(x[0])
    return [x._version, x.tolist()]


def data_setter_version_and_views(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0])
    v = x[:2]
    x.add_(1)
    x.data = torch.tensor([10.0, 20.0, 30.0])
    return [x._version, v._version, v.tolist(), x.tolist()]


def detach_underscore_version(torch, nn):
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    y.detach_()
    return [y._version, y.requires_grad, y.grad_fn]


def parameter_shares_storage_with_source(torch, nn):
    t = torch.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    t.add_(1)
    return [p.tolist(), p._version, t._version]


def parameter_data_version(torch, nn):
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    p.data.add_(1)
    with torch.no_grad():
        p.add_(1)
    return [p._version, p.tolist()]


def data_of_view_is_not_view_for_autograd(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = x.data[1:]
    d.mul_(10)
    return [x.tolist(), x._version, d._version]


def view_of_data_then_backward(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.data[0] = 0
    y.sum().backward()
    return [x.grad.tolist(), y._version]


def version_after_failed_inplace(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    _attempt(lambda: x.add_(1))
    y = torch.tensor([1, 2])
    _attempt(lambda: y.div_(2))
    return [x._version, y._version, y.tolist()]
