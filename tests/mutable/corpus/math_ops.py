"""Elementwise and reduction functions: values and gradients, with their grad_fn names."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def _unary(torch, name, values):
    x = torch.tensor(values, requires_grad=True)
    y = getattr(x, name)()
    y.sum().backward()
    z = getattr(torch, name)(x.detach())
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist(), z.tolist()]


def exp(torch, nn):
    return _unary(torch, "exp", [-1.0, 0.0, 2.0])


def log(torch, nn):
    return _unary(torch, "log", [0.5, 1.0, 4.0])


def sqrt(torch, nn):
    return _unary(torch, "sqrt", [0.25, 1.0, 9.0])


def sigmoid(torch, nn):
    return _unary(torch, "sigmoid", [-2.0, 0.0, 3.0])


def tanh(torch, nn):
    return _unary(torch, "tanh", [-1.0, 0.0, 0.5])


def relu(torch, nn):
    return _unary(torch, "relu", [-1.0, 0.0, 2.0])


def abs_(torch, nn):
    return _unary(torch, "abs", [-1.5, 0.0, 2.0])


def sin_and_cos(torch, nn):
    return [_unary(torch, "sin", [0.0, 1.0]), _unary(torch, "cos", [0.0, 1.0])]


def neg(torch, nn):
    return _unary(torch, "neg", [1.0, -2.0])


def log_of_negative_and_zero(torch, nn):
    x = torch.tensor([-1.0, 0.0], requires_grad=True)
    y = x.log()
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def sqrt_at_zero_has_infinite_grad(torch, nn):
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    x.sqrt().sum().backward()
    return x.grad.tolist()


def pow_tensor_scalar(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.pow(3)
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist()]


def pow_tensor_tensor(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    p = torch.tensor([2.0, 3.0], requires_grad=True)
    y = x ** p
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist(), p.grad.tolist()]


def rpow_scalar_base(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = 2 ** x
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist()]


def reflected_scalar_operators(torch, nn):
    x = torch.tensor([1.0, 4.0], requires_grad=True)
    y = (3 - x) * (8 / x) + (1 + x) * 2
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def division_by_zero(torch, nn):
    x = torch.tensor([1.0, -1.0, 0.0])
    return [(x / 0).tolist(), (torch.tensor([1, 2]) / 0).tolist()]


def pow_at_zero(torch, nn):
    x = torch.tensor([0.0, 2.0], requires_grad=True)
    (x ** 2).sum().backward()
    g2 = x.grad.tolist()
    x.grad = None
    (x ** 0.5).sum().backward()
    return [g2, x.grad.tolist()]


def clamp_min_max(torch, nn):
    x = torch.tensor([-2.0, 0.5, 3.0, 1.0], requires_grad=True)
    y = x.clamp(min=-1.0, max=1.0)
    y.sum().backward()
    z = torch.clamp(x.detach(), min=0.0)
    w = x.detach().clamp(max=0.0)
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist(), z.tolist(), w.tolist()]


def clamp_without_bounds_fails(torch, nn):
    try:
        torch.tensor([1.0]).clamp()
        return None
    except RuntimeError as e:
        return _err(e)


def sum_variants(torch, nn):
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    a = x.sum()
    b = x.sum(0)
    c = x.sum(dim=1, keepdim=True)
    d = x.sum(-1)
    (a + (b * torch.tensor([1.0, 2.0, 3.0])).sum() + (c * 10).sum() + d.sum()).backward()
    return [a.item(), b.tolist(), c.tolist(), d.tolist(), type(b.grad_fn).__name__, x.grad.tolist()]


def mean_variants(torch, nn):
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    a = x.mean()
    b = x.mean(0)
    c = x.mean(dim=1, keepdim=True)
    (a + b.sum() + c.sum()).backward()
    return [a.item(), b.tolist(), c.tolist(), type(b.grad_fn).__name__, x.grad.tolist()]


def mean_of_int_tensor_fails(torch, nn):
    try:
        torch.tensor([1, 2]).mean()
        return None
    except RuntimeError as e:
        return _err(e)


def sum_of_int_and_bool(torch, nn):
    return [torch.tensor([1, 2]).sum().item(), str(torch.tensor([True, True]).sum().dtype),
            torch.tensor([True, False, True]).sum().item()]


def torch_namespace_functions(torch, nn):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = torch.sum(torch.exp(x) * torch.sigmoid(x)) + torch.mean(torch.tanh(x))
    y = y + torch.sum(torch.pow(x, 2)) + torch.sum(torch.log(x)) + torch.sum(torch.sqrt(x))
    y = y + torch.sum(torch.relu(x - 2)) + torch.sum(torch.abs(x - 3))
    y.backward()
    return [y.item(), x.grad.tolist()]


def matmul_shapes_and_grads(torch, nn):
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    b = torch.tensor([[1.0, 0.0, -1.0], [2.0, 1.0, 0.5]], requires_grad=True)
    v = torch.tensor([1.0, -1.0], requires_grad=True)
    mm = a @ b
    mv = torch.matmul(a, v)
    vv = v @ v
    (mm.sum() + mv.sum() + vv).backward()
    return [mm.tolist(), mv.tolist(), vv.item(),
            [type(t.grad_fn).__name__ for t in (mm, mv, vv)],
            a.grad.tolist(), b.grad.tolist(), v.grad.tolist()]


def batched_matmul(torch, nn):
    a = torch.arange(8.0).reshape(2, 2, 2).requires_grad_()
    b = torch.tensor([[1.0, 2.0], [0.0, 1.0]], requires_grad=True)
    y = a @ b
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, a.grad.tolist(), b.grad.tolist()]


def matmul_shape_mismatch(torch, nn):
    try:
        torch.zeros(2, 3) @ torch.zeros(2, 3)
        return None
    except RuntimeError as e:
        return _err(e)


def broadcast_mismatch(torch, nn):
    try:
        torch.zeros(2, 3) + torch.zeros(2)
        return None
    except RuntimeError as e:
        return _err(e)


def unary_minus_and_pos(torch, nn):
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    y = -x
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist()]


def int_tensor_arithmetic(torch, nn):
    a = torch.tensor([7, -7])
    return [(a // 2).tolist(), (a % 3).tolist(), (a * 3).tolist(), (a - 1).tolist(), (-a).tolist(),
            (a ** 2).tolist()]


def zeros_ones_arange_constructors(torch, nn):
    return [torch.zeros(2, 2).tolist(), torch.ones((1, 3)).tolist(), torch.arange(3).tolist(),
            torch.arange(1, 7, 2).tolist(), torch.arange(0.0, 1.0, 0.25).tolist(),
            torch.zeros(2, requires_grad=True).requires_grad, torch.ones(2, dtype=torch.int64).tolist(),
            torch.zeros([2, 1]).tolist()]


def sum_dims_tuple(torch, nn):
    x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
    y = x.sum((0, 2))
    z = x.mean(dim=(-1, 0), keepdim=True)
    (y.sum() + z.sum()).backward()
    return [y.tolist(), z.tolist(), list(z.shape), x.grad[0].tolist()]


def clamp_tensor_min(torch, nn):
    x = torch.tensor([1.0, 5.0], requires_grad=True)
    y = x.clamp(min=2.0)
    y.sum().backward()
    return [repr(y), x.grad.tolist()]


def relu_at_zero_grad(torch, nn):
    x = torch.tensor([0.0], requires_grad=True)
    x.relu().sum().backward()
    g1 = x.grad.tolist()
    x.grad = None
    x.abs().sum().backward()
    g2 = x.grad.tolist()
    x.grad = None
    x.clamp(min=0.0).sum().backward()
    return [g1, g2, x.grad.tolist()]


def bool_ops(torch, nn):
    a = torch.tensor([True, False])
    b = torch.tensor([True, True])
    return [(a & b).tolist(), (a | b).tolist(), (~a).tolist(), repr(a.sum()), repr(a.float())]


def matmul_1d_2d(torch, nn):
    v = torch.tensor([1.0, 2.0], requires_grad=True)
    m = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = v @ m
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, v.grad.tolist(), m.grad.tolist()]


def matmul_vector_mismatch(torch, nn):
    try:
        torch.tensor([1.0, 2.0]) @ torch.tensor([1.0, 2.0, 3.0])
        return None
    except RuntimeError as e:
        return _err(e)


def pow_negative_base_fractional(torch, nn):
    x = torch.tensor([-1.0, 4.0], requires_grad=True)
    y = x ** 0.5
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def reciprocal_by_scalar_division_grad_fn(torch, nn):
    x = torch.tensor([2.0, 4.0], requires_grad=True)
    y = 1 / x
    y.sum().backward()
    return [type(y.grad_fn).__name__, x.grad.tolist()]


def sub_rsub(torch, nn):
    x = torch.tensor([2.0], requires_grad=True)
    y = 1 - x
    return [type(y.grad_fn).__name__, repr(y)]


def radd_rmul(torch, nn):
    x = torch.tensor([2.0], requires_grad=True)
    return [repr(1 + x), repr(2 * x), repr(x + x), repr(x * x)]


def mean_of_empty(torch, nn):
    return [torch.zeros(0).mean().item() != torch.zeros(0).mean().item(), torch.zeros(0).sum().item()]


def clamp_min_only_method_on_leaf(torch, nn):
    x = torch.tensor([-1.0, 1.0], requires_grad=True)
    y = x.clamp(0)
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist()]


def unary_float_ops_on_int_tensors(torch, nn):
    x = torch.tensor([1, 4])
    results = (x.exp(), x.sqrt(), x.sigmoid(), x.tanh(), x.log(), x.abs(), -x, x.relu(), x.clamp(min=2),
               x.pow(2), x.float())
    return [[str(t.dtype), t.tolist()] for t in results]


def mean_of_bool_fails(torch, nn):
    return _attempt(lambda: torch.tensor([True, False]).mean())


def exp_overflow_float32(torch, nn):
    x = torch.tensor([100.0, -200.0], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    return [y.tolist(), x.grad.tolist(), torch.tensor([100.0], dtype=torch.float64).exp().tolist()]


def sqrt_of_negative(torch, nn):
    x = torch.tensor([-4.0, 4.0], requires_grad=True)
    y = x.sqrt()
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def clamp_min_greater_than_max(torch, nn):
    x = torch.tensor([0.0, 5.0, 10.0], requires_grad=True)
    y = x.clamp(min=6.0, max=4.0)
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def pow_zero_exponent_and_zero_base(torch, nn):
    x = torch.tensor([0.0, 2.0], requires_grad=True)
    y = x ** 0
    y.sum().backward()
    g0 = x.grad.tolist()
    x.grad = None
    z = x ** 1.5
    z.sum().backward()
    return [y.tolist(), g0, z.tolist(), x.grad.tolist()]


def add_string_fails(torch, nn):
    return _attempt(lambda: torch.tensor([1.0]) + "a")


def matmul_zero_dim_fails(torch, nn):
    return _attempt(lambda: torch.tensor(2.0) @ torch.tensor([1.0]))


def batched_matmul_broadcast(torch, nn):
    a = torch.arange(12.0).reshape(3, 1, 2, 2).requires_grad_()
    b = torch.arange(8.0).reshape(2, 2, 2).requires_grad_()
    y = a @ b
    y.sum().backward()
    return [list(y.shape), y.sum().item(), a.grad.sum().item(), b.grad.tolist()]


def matmul_vector_batched(torch, nn):
    a = torch.arange(12.0).reshape(3, 2, 2).requires_grad_()
    v = torch.tensor([1.0, -1.0], requires_grad=True)
    y = a @ v
    y.sum().backward()
    return [y.tolist(), v.grad.tolist(), type(y.grad_fn).__name__]


def keepdim_negative_dims(torch, nn):
    x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
    y = x.sum(-2, keepdim=True)
    z = x.mean((0, -1))
    (y.sum() + z.sum()).backward()
    return [list(y.shape), z.tolist(), x.grad[1, 2].tolist()]


def compare_int_float_and_scalars(torch, nn):
    i = torch.tensor([1, 2, 3])
    f = torch.tensor([1.5, 2.0, 2.5])
    return [(i > f).tolist(), (i == 2).tolist(), (f != 2.0).tolist(), (i >= f).tolist(), (2 < i).tolist()]


def relu_on_bool_fails(torch, nn):
    return _attempt(lambda: torch.tensor([True]).relu())


def sigmoid_extremes(torch, nn):
    x = torch.tensor([-100.0, 100.0], requires_grad=True)
    y = x.sigmoid()
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def tanh_grad_float64(torch, nn):
    x = torch.tensor([0.3], dtype=torch.float64, requires_grad=True)
    y = x.tanh()
    y.backward(torch.ones(1, dtype=torch.float64))
    return [y.item(), x.grad.item(), repr(y)]


def grad_fn_for_ops_with_int_scalar(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    results = (x + 1, 1 + x, x - 1, 1 - x, x * 2, 2 * x, x / 2, 2 / x, x ** 2, 2 ** x, x + x, x - x)
    return [type(t.grad_fn).__name__ for t in results]


def grad_fn_for_tensor_ops(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    return [type(t.grad_fn).__name__ for t in (x + y, x - y, x * y, x / y, x ** y, x @ y, torch.matmul(x, y))]


def torch_functions_with_keywords(torch, nn):
    x = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    parts = [torch.sum(x, dim=0), torch.sum(x, 1, keepdim=True), torch.mean(x, dim=-1),
             torch.clamp(x, min=2.0, max=5.0), torch.pow(x, 2), torch.pow(2, x), torch.matmul(x, x.t()),
             torch.exp(x * 0.1), torch.log(x), torch.sqrt(x), torch.abs(-x), torch.relu(x - 3),
             torch.tanh(x * 0.1), torch.sigmoid(x * 0.1), torch.neg(x)]
    total = sum(p.sum() for p in parts)
    total.backward()
    return [[type(p.grad_fn).__name__ for p in parts], total.item(), x.grad.tolist()]


def sum_keepdim_and_mean_dtype_results(torch, nn):
    x = torch.tensor([[1, 2], [3, 4]])
    return [x.sum(0).tolist(), str(x.sum().dtype), x.sum(1, keepdim=True).tolist(),
            torch.tensor([[True, False], [True, True]]).sum(0).tolist()]


def pow_with_negative_exponent_grad(torch, nn):
    x = torch.tensor([0.5, 2.0], requires_grad=True)
    y = x ** -2
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def pow_method_with_tensor(torch, nn):
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    e = torch.tensor([3.0, 0.5], requires_grad=True)
    y = x.pow(e)
    y.sum().backward()
    return [y.tolist(), x.grad.tolist(), e.grad.tolist(), type(y.grad_fn).__name__]


def matmul_operator_with_int_tensors(torch, nn):
    a = torch.tensor([[1, 2], [3, 4]])
    return [(a @ a).tolist(), str((a @ a).dtype), _attempt(lambda: a @ torch.tensor([[1.0, 0.0], [0.0, 1.0]]))]


def bool_mask_of_float_compare_and_sum(torch, nn):
    x = torch.tensor([0.5, -1.0, 2.0])
    m = x > 0
    return [m.sum().item(), x[m].sum().item(), (x * m).tolist(), str((x * m).dtype)]


def python_dunders(torch, nn):
    x = torch.tensor([-1.5, 2.5], requires_grad=True)
    results = [abs(x), +x, x // 2, x % 2, x ** x.detach().abs(), 2.0 - x, -x]
    return [[r.tolist(), None if r.grad_fn is None else type(r.grad_fn).__name__] for r in results]


def compare_with_none_and_bool_scalar(torch, nn):
    x = torch.tensor([1.0, 0.0])
    return [(x == None), (x != None), (x * True).tolist(), str((x * True).dtype), (x + False).tolist()]


def zero_dim_compare_with_python_number(torch, nn):
    t = torch.tensor(3.0)
    return [bool(t < 4), repr(t < 4), (t == 3).item(), 3 == t.item()]


def tensor_in_python_if(torch, nn):
    t = torch.tensor([2.0])
    out = "yes" if t > 1 else "no"
    return [out, _attempt(lambda: bool(torch.tensor([1.0, 2.0]) > 1)), bool(torch.tensor([]).numel())]


def floor_divide_and_remainder_negative(torch, nn):
    a = torch.tensor([-7.0, 7.0, -7.5])
    b = torch.tensor([2, -2, 3])
    return [(a // 2).tolist(), (a % 2).tolist(), (b // 2).tolist(), (b % 3).tolist(), (a % -2).tolist()]


def floordiv_grad_fn_and_error(torch, nn):
    x = torch.tensor([3.5], requires_grad=True)
    y = x // 2
    return [y.requires_grad, None if y.grad_fn is None else type(y.grad_fn).__name__, _attempt(lambda: y.sum().backward())]


def true_divide_int_by_zero_int(torch, nn):
    return [(torch.tensor([1, 0]) / torch.tensor([0, 0])).tolist(), _attempt(lambda: torch.tensor([1]) // torch.tensor([0]))]


def matmul_mixed_float_dtypes(torch, nn):
    a = torch.ones(2, 2)
    b = torch.ones(2, 2, dtype=torch.float64)
    return [_attempt(lambda: a @ b), _attempt(lambda: torch.ones(2) @ torch.ones(2, dtype=torch.float64)),
            _attempt(lambda: torch.ones(2, 2) @ torch.ones(2, dtype=torch.float64))]


def sum_with_dim_none_and_keepdim(torch, nn):
    x = torch.arange(6.0).reshape(2, 3)
    return [x.sum(dim=None).item(), list(x.sum(dim=(0, 1), keepdim=True).shape), x.mean(dim=None).item()]


def clamp_with_only_max_keyword_and_positional(torch, nn):
    x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    a = x.clamp(None, 1.0)
    b = x.clamp(-1.0)
    (a.sum() + b.sum()).backward()
    return [a.tolist(), b.tolist(), x.grad.tolist()]
