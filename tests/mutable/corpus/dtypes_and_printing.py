"""Default dtypes, type promotion, and PyTorch's printing of tensors."""

import random as _random


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def default_dtypes_of_constructors(torch, nn):
    return [str(t.dtype) for t in (
        torch.tensor(1.0), torch.tensor(1), torch.tensor(True), torch.tensor([1, 2.5]),
        torch.tensor([[1, 2], [3, 4]]), torch.zeros(2), torch.ones(2, 3), torch.arange(5),
        torch.arange(5.0), torch.arange(0, 1, 0.25), torch.zeros(2, dtype=torch.long),
        torch.tensor([1, 2], dtype=torch.float64), torch.tensor([0, 1], dtype=torch.bool),
        torch.tensor([True, 1]), torch.tensor([1.0], dtype=torch.int32)
    )] + [str(torch.get_default_dtype())]


def dtype_aliases(torch, nn):
    return [torch.float is torch.float32, torch.double is torch.float64, torch.long is torch.int64,
            torch.int is torch.int32, str(torch.float), str(torch.long), str(torch.bool),
            torch.float32.is_floating_point, torch.int64.is_floating_point]


def promotion_between_tensors(torch, nn):
    i = torch.tensor([1, 2])
    f = torch.tensor([1.0, 2.0])
    d = torch.tensor([1.0, 2.0], dtype=torch.float64)
    b = torch.tensor([True, False])
    return [str((i + f).dtype), str((f + d).dtype), str((i + b).dtype), str((b + b).dtype),
            str((i * d).dtype), str((b * f).dtype)]


def promotion_with_python_scalars(torch, nn):
    i = torch.tensor([1, 2])
    f = torch.tensor([1.0, 2.0])
    b = torch.tensor([True, False])
    return [str((i * 2).dtype), str((i * 2.5).dtype), str((i / 2).dtype), str((i / i).dtype),
            str((f * 2).dtype), str((b + 1).dtype), str((b * 1.5).dtype), str((i // 2).dtype),
            (i / i).tolist(), (i * 2.5).tolist()]


def zero_dim_tensor_does_not_promote_dimensioned(torch, nn):
    f = torch.tensor([1.0, 2.0])
    d0 = torch.tensor(2.0, dtype=torch.float64)
    i = torch.tensor([1, 2])
    f0 = torch.tensor(0.5)
    return [str((f * d0).dtype), str((i * f0).dtype), (i * f0).tolist(), str((d0 * 2).dtype)]


def item_and_tolist_types(torch, nn):
    vals = [torch.tensor(2.5).item(), torch.tensor(3).item(), torch.tensor(True).item(),
            torch.tensor([1, 2]).tolist(), torch.tensor([True]).tolist(), torch.tensor(4.0).tolist()]
    return [[type(v).__name__ for v in vals], vals]


def item_of_many_elements_fails(torch, nn):
    try:
        torch.tensor([1.0, 2.0]).item()
        return None
    except RuntimeError as e:
        return _err(e)


def float32_rounding_is_visible(torch, nn):
    x = torch.tensor([0.1, 1.0 / 3.0])
    return [x.tolist(), (x * 3).tolist(), torch.tensor(16777217.0).item()]


def repr_scalars(torch, nn):
    return [repr(torch.tensor(3.0)), repr(torch.tensor(3)), repr(torch.tensor(True)),
            repr(torch.tensor(-0.5)), repr(torch.tensor(2.0, dtype=torch.float64)),
            repr(torch.tensor(7, dtype=torch.int32)), repr(torch.tensor(1.0, requires_grad=True))]


def repr_vectors(torch, nn):
    return [repr(torch.tensor([1.0, 2.0, 3.0])), repr(torch.tensor([1.5, 2.25])),
            repr(torch.tensor([1, -2, 300])), repr(torch.tensor([-1.0, 2.0])),
            repr(torch.tensor([0.1, 0.25, 100.0])), repr(torch.tensor([1.0, 2.0], dtype=torch.float64)),
            repr(torch.tensor([1, 2], dtype=torch.int32)), repr(torch.tensor([1.23456789]))]


def repr_matrices(torch, nn):
    return [repr(torch.tensor([[1.0, -2.0], [3.5, 4.0]])),
            repr(torch.arange(6).reshape(2, 3)),
            repr(torch.arange(8.0).reshape(2, 2, 2)),
            repr(torch.tensor([[1.0, 2.0]], requires_grad=True))]


def repr_scientific(torch, nn):
    return [repr(torch.tensor([1e10, 1.0])), repr(torch.tensor([1e-5, 1.0])),
            repr(torch.tensor([12345678.0])), repr(torch.tensor(1e-8)),
            repr(torch.tensor([1e3, 2e3])), repr(torch.tensor([123456.0, 0.5]))]


def repr_special_values(torch, nn):
    return [repr(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])),
            repr(torch.tensor([float("inf"), 2.5])), repr(torch.tensor(float("nan")))]


def repr_empty(torch, nn):
    return [repr(torch.tensor([])), repr(torch.zeros(0, 3)), repr(torch.zeros(0, dtype=torch.long)),
            repr(torch.tensor([], dtype=torch.float64))]


def repr_bool(torch, nn):
    x = torch.tensor([1.0, 5.0, 3.0])
    return [repr(x > 2), repr(x == 3), repr(torch.tensor([[True], [False]]))]


def repr_grad_fn_variants(torch, nn):
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    return [repr(x * 2), repr(x + 1), repr(x.sum()), repr(x.mean()), repr(x.exp()),
            repr(x[0]), repr(x[[0]]), repr(x.view(2, 1)), repr(x @ x), repr(x.relu()),
            repr(-x), repr(x - 1), repr(x / 2), repr(x ** 2), repr(x.clone())]


def repr_summarized(torch, nn):
    return [repr(torch.arange(2000.0)), repr(torch.arange(1001)),
            repr(torch.arange(2000.0).reshape(40, 50)), repr(torch.arange(1000))]


def str_equals_repr(torch, nn):
    x = torch.tensor([[1.0, 2.0]], requires_grad=True)
    y = x * 2
    return [str(x) == repr(x), str(y) == repr(y), format(torch.tensor(2.5).item())]


def format_zero_dim_tensor(torch, nn):
    x = torch.tensor(2.5)
    return [f"{x:.2f}", f"{x}", "{}".format(torch.tensor([1.0]))]


def manual_seed_shapes_and_ranges(torch, nn):
    torch.manual_seed(0)
    a = torch.rand(2, 3)
    b = torch.randn(4)
    c = torch.rand(2, requires_grad=True)
    in_range = bool(((a >= 0) & (a < 1)).all())
    return [list(a.shape), str(a.dtype), list(b.shape), str(b.dtype), c.requires_grad, c.is_leaf,
            in_range]


def manual_seed_reproducible(torch, nn):
    torch.manual_seed(123)
    first = torch.randn(5).tolist()
    torch.manual_seed(123)
    second = torch.randn(5).tolist()
    third = torch.randn(5).tolist()
    return [first == second, first == third]


def ragged_nested_list_fails(torch, nn):
    try:
        torch.tensor([[1.0, 2.0], [3.0]])
        return None
    except ValueError as e:
        return _err(e)


def tensor_type_names(torch, nn):
    x = torch.tensor([1.0])
    return [type(x).__name__, isinstance(x, torch.Tensor), type(x.shape).__name__,
            type(x.dtype).__name__, x.type(), torch.tensor([1]).type(),
            torch.tensor([1.0], dtype=torch.float64).type()]


def size_and_dims(torch, nn):
    x = torch.zeros(2, 3, 4)
    return [list(x.size()), x.size(1), x.size(-1), list(x.shape), x.dim(), x.ndim, x.numel(),
            len(x), str(x.shape), repr(x.size())]


def comparison_operators(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0])
    y = torch.tensor([3.0, 2.0, 1.0])
    return [(x < y).tolist(), (x <= y).tolist(), (x > 2).tolist(), (x >= 2).tolist(),
            (x == y).tolist(), (x != y).tolist(), str((x < y).dtype)]


def repr_negative_zero_and_mixed(torch, nn):
    return [repr(torch.tensor([-0.0, 1.0])), repr(torch.tensor([0.001, 1000.0])), repr(torch.tensor([1e-4, 1.0])),
            repr(torch.tensor([99999.0, 1.5])), repr(torch.tensor([1e16])), repr(torch.tensor([-1e-10, 5.0])),
            repr(torch.tensor(123456789.0)), repr(torch.tensor([0.5, 100000.0]))]


def repr_int_negative_widths(torch, nn):
    return [repr(torch.tensor([[-10, 2], [3, 400]])), repr(torch.tensor([-5])), repr(torch.tensor([10**12, 1]))]


def repr_float64_requires_grad_grad_fn(torch, nn):
    x = torch.tensor([1.5, 2.0], dtype=torch.float64, requires_grad=True)
    return [repr(x), repr(x * 2), repr(nn.Parameter(torch.tensor([1.0, 2.0], dtype=torch.float64)))]


def repr_3d_requires_grad(torch, nn):
    x = torch.ones(2, 1, 2, requires_grad=True)
    return repr(x * 1.5)


def repr_long_row_wraps(torch, nn):
    return [repr(torch.arange(30.0)), repr(torch.arange(20.0) / 3), repr(torch.arange(40))]


def tensor_from_tensor_list(torch, nn):
    return [repr(torch.tensor([[1, 2], [3, 4]], dtype=torch.float32)), repr(torch.tensor([1.5], dtype=torch.int64))]


def item_of_grad(torch, nn):
    x = torch.tensor(2.0, requires_grad=True)
    y = x * 3
    return [y.item(), type(y.item()).__name__, y.tolist(), float(y), int(y), bool(y)]


def len_of_zero_dim(torch, nn):
    try:
        len(torch.tensor(1.0))
        return None
    except TypeError as e:
        return _err(e)


def bool_of_multi_element(torch, nn):
    try:
        bool(torch.tensor([1.0, 2.0]))
        return None
    except RuntimeError as e:
        return _err(e)


def repr_grad(torch, nn):
    x = torch.tensor([[1.0, 2.0]], requires_grad=True)
    (x * x).sum().backward()
    return [repr(x.grad), str(x.grad)]


def repr_leaf_after_no_grad_update(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        x.mul_(1.5)
    return repr(x)


def repr_of_detached_and_data(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return [repr(x.detach()), repr((x * 2).data), repr(x.clone().detach())]


def repr_precision_small_mix(torch, nn):
    return [repr(torch.tensor([0.1234567, 12.5])), repr(torch.tensor([1.0, 0.0001])),
            repr(torch.tensor([[1e-3, 1.0], [10.0, 100.0]])), repr(torch.tensor([0.0, 0.0]))]


def repr_int32_float64_empty_and_zero_dim(torch, nn):
    return [repr(torch.zeros(0, 2, dtype=torch.float64)), repr(torch.tensor(0.0, dtype=torch.float64)),
            repr(torch.zeros(2, 0)), repr(torch.tensor([], requires_grad=True))]


def int_pow_negative(torch, nn):
    return _attempt(lambda: torch.tensor([2, 3]) ** -1)


def inplace_add_keeps_dtype(torch, nn):
    x = torch.tensor([1.0, 2.0])
    x.add_(torch.tensor([1.0, 1.0], dtype=torch.float64))
    y = torch.tensor([1, 2])
    y.add_(torch.tensor([1, 1]))
    return [str(x.dtype), x.tolist(), y.tolist()]


def inplace_promotion_float64_into_float32_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
    y = x * 1
    y.mul_(w)
    y.sum().backward()
    return [str(y.dtype), str(x.grad.dtype), str(w.grad.dtype), x.grad.tolist(), w.grad.tolist()]


def setitem_float64_value_into_float32(torch, nn):
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    y = torch.zeros(2)
    y[0] = w * 2
    y.sum().backward()
    return [str(y.dtype), str(w.grad.dtype), w.grad.item()]


def bool_tensor_from_floats(torch, nn):
    return [torch.tensor([0.0, 0.5], dtype=torch.bool).tolist(), torch.tensor([2.7, -1.2], dtype=torch.int64).tolist()]


def arange_variants(torch, nn):
    return [torch.arange(0, 1, 0.1).tolist(), torch.arange(1, 0, -0.25).tolist(), str(torch.arange(1, 0, -0.25).dtype),
            torch.arange(5, 1, -2).tolist(), torch.arange(0).tolist(), str(torch.arange(3, dtype=torch.float64).dtype)]


def arange_bad_step(torch, nn):
    return [_attempt(lambda: torch.arange(0, 5, 0)), _attempt(lambda: torch.arange(5, 0, 1))]


def size_comparisons(torch, nn):
    x = torch.zeros(2, 3)
    return [x.shape == (2, 3), x.size() == torch.zeros(2, 3).shape, x.shape[0], type(x.shape[0]).__name__,
            len(x.shape), list(x.shape[1:]), isinstance(x.shape, tuple)]


def tensor_of_float64_dtype_from_ints(torch, nn):
    t = torch.tensor([1, 2], dtype=torch.float64)
    numpy_dtypes = [u.numpy().dtype.name for u in (t, torch.tensor([1, 2]), torch.tensor([True]))]
    return [t.tolist(), repr(t), numpy_dtypes]


def constructors_with_bad_input(torch, nn):
    return [_attempt(lambda: torch.tensor("abc")), _attempt(lambda: torch.tensor([1, "a"])),
            _attempt(lambda: torch.tensor([[1], 2])), _attempt(lambda: torch.zeros(-1))]


def large_int_item(torch, nn):
    x = torch.tensor([2 ** 40 + 1])
    return [x.item(), x.tolist(), (x * 2).item()]


def rand_dtype_float64_and_randn_requires_grad(torch, nn):
    torch.manual_seed(1)
    a = torch.rand(3, dtype=torch.float64)
    b = torch.randn(2, 2, requires_grad=True)
    c = torch.rand((2, 1))
    return [str(a.dtype), b.requires_grad, b.is_leaf, list(c.shape)]


def item_of_bool_and_int_ops(torch, nn):
    return [torch.tensor(True).item(), (torch.tensor(3) > 2).item(), torch.tensor([7]).item(),
            type(torch.tensor([7]).item()).__name__]


def float_conversion_methods(torch, nn):
    x = torch.tensor(2.5, requires_grad=True)
    return [float(x), int(torch.tensor(3.9)), int(torch.tensor(-3.9)), bool(torch.tensor(0.0))]


def _value_sets():
    # A fixed stdlib stream, the same on both libraries (their RNGs differ).
    rng = _random.Random(1234)
    sets = []
    for scale in (1e-9, 1e-5, 1e-3, 0.1, 1.0, 7.0, 123.0, 1e4, 99999.0, 1e5, 1e8, 1e12, 1e20):
        for n in (1, 3, 7):
            sets.append([round(rng.uniform(-1, 1) * scale, 6 if scale >= 1 else 12) for _ in range(n)])
    sets += [[1.0, 2.0, 3.5], [0.5, 0.25], [1e-4, 1e4], [-0.0, 0.0], [1.0, float("nan")], [float("inf"), -1.5],
             [100.0, 1000.0, 10000.0], [0.1, 0.01, 0.001], [123456.7], [1.0, 1.0001],
             [3.0, 30.0, 300.0, 3000.0, 30000.0]]
    return sets


def repr_sweep_float32_vectors(torch, nn):
    return [repr(torch.tensor(v)) for v in _value_sets()]


def repr_sweep_float64_vectors(torch, nn):
    return [repr(torch.tensor(v, dtype=torch.float64)) for v in _value_sets()]


def repr_sweep_matrices(torch, nn):
    out = []
    for v in _value_sets():
        if len(v) == 7:
            out.append(repr(torch.tensor(v[:6]).reshape(2, 3)))
    return out


def repr_sweep_scalars(torch, nn):
    return [repr(torch.tensor(v[0])) for v in _value_sets()]


def repr_sweep_ints(torch, nn):
    rng = _random.Random(99)
    out = []
    for scale in (1, 9, 10, 99, 1000, 10 ** 6, 10 ** 12):
        v = [rng.randint(-scale, scale) for _ in range(5)]
        out.append(repr(torch.tensor(v)))
        out.append(repr(torch.tensor(v).reshape(5, 1)))
    return out


def tensor_from_zero_dim_list_and_nested_tuples(torch, nn):
    return [repr(torch.tensor(((1.0, 2.0), (3.0, 4.0)))), repr(torch.tensor([[[]]])), list(torch.tensor([[[]]]).shape),
            repr(torch.tensor([[1.5]], dtype=torch.float64))]


def repr_after_inplace_and_views(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v = y[:2]
    y.mul_(2)
    z = x.clone()
    z[0] = 5
    return [repr(y), repr(v), repr(z), repr(z[1:]), repr(x.t()), repr(x.unsqueeze(0).squeeze(0))]


def repr_parameter_states(torch, nn):
    p = nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, 4.5]]))
    q = nn.Parameter(torch.tensor(2.0, dtype=torch.float64))
    e = nn.Parameter(torch.zeros(0))
    return [repr(p), str(p), repr(q), repr(e), repr(p * 1), repr(p[0]), repr(p.detach())]


def repr_custom_function_output(torch, nn):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    y = Twice.apply(torch.tensor([1.0, 2.0], requires_grad=True))
    return repr(y)


def repr_grad_after_create_graph(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    return repr(g)


def repr_int_and_bool_with_no_grad_results(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return [repr(x > 1), repr((x > 1).sum()), repr(x.detach().long())]


def repr_unbind_split_outputs(torch, nn):
    x = torch.arange(4.0, requires_grad=True)
    return [repr(x.unbind()[0]), repr(x.split(2)[1]), repr(x.chunk(2)[0]), repr(x.split([1, 3])[1]),
            repr(x.narrow(0, 1, 2)), repr(x.expand(2, 4)), repr(x.view(2, 2).diagonal()), repr(x.flatten()),
            repr(x.reshape(2, 2).permute(1, 0)), repr(x.reshape(2, 2).transpose(0, 1))]


def zero_dim_float64_scale_on_float32_grad_dtypes(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    y = x * s
    y.sum().backward()
    return [str(y.dtype), str(x.grad.dtype), str(s.grad.dtype), x.grad.tolist(), s.grad.item()]


def int_tensor_times_float_requiring_grad(torch, nn):
    i = torch.tensor([1, 2, 3])
    w = torch.tensor(0.5, requires_grad=True)
    y = i * w
    y.sum().backward()
    return [str(y.dtype), y.tolist(), w.grad.item(), i.grad]


def bool_mask_times_float_requiring_grad(torch, nn):
    m = torch.tensor([True, False, True])
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * m
    y.sum().backward()
    return [str(y.dtype), x.grad.tolist()]


def float64_leaf_through_float32_ops_gets_float64_grad(torch, nn):
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = x.float() * torch.tensor([3.0, 4.0])
    y.sum().backward()
    return [str(y.dtype), str(x.grad.dtype), x.grad.tolist(), type(x.float().grad_fn).__name__]


def mixed_dtype_setitem_and_copy_grads(torch, nn):
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = torch.zeros(3)
    y[:2] = x * 2
    z = torch.zeros(2)
    z.copy_(x)
    (y.sum() + z.sum()).backward()
    return [str(y.dtype), str(x.grad.dtype), x.grad.tolist()]


def sum_of_float32_large_values_precision(torch, nn):
    x = torch.tensor([16777216.0, 1.0, 1.0, 1.0])
    return [x.sum().item(), x.mean().item(), (x[1:] + x[0]).tolist()]


def reprs_inside_containers(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return [str([x, x * 2]), repr((torch.tensor(1), torch.tensor([True]))), str({"w": torch.tensor(0.5)}),
            repr(torch.float32), repr(x.dtype), str(torch.int64), repr(torch.Size([2, 3])), str(torch.Size([]))]


def format_specs_on_tensors(torch, nn):
    x = torch.tensor(3.14159)
    return [f"{x:.3f}", f"{x.item():.1e}", "{:>8.2f}".format(x), f"{torch.tensor(7):d}"]
