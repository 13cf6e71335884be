"""Custom torch.autograd.Function: ctx, saved tensors, mark_dirty, non-differentiable outputs."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def _cube(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 3 * x ** 2
    return Cube


def save_for_backward_and_saved_tensors(torch, nn):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = _cube(torch).apply(x)
    y.sum().backward()
    return [y.tolist(), type(y.grad_fn).__name__, x.grad.tolist(), y.requires_grad, y.is_leaf]


def ctx_arbitrary_attributes_and_non_tensor_args(torch, nn):
    class ScaleShift(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale, shift):
            ctx.scale = scale
            ctx.note = "kept"
            return x * scale + shift

        @staticmethod
        def backward(ctx, g):
            return g * ctx.scale, None, None

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = ScaleShift.apply(x, 4.0, 1.0)
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def needs_input_grad(torch, nn):
    seen = []

    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            seen.append(list(ctx.needs_input_grad))
            ga = g * b if ctx.needs_input_grad[0] else None
            gb = g * a if ctx.needs_input_grad[1] else None
            return ga, gb

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0])
    Mul.apply(a, b).sum().backward()
    return [seen, a.grad.tolist(), b.grad]


def forward_runs_without_grad(torch, nn):
    inside = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            inside.append(torch.is_grad_enabled())
            y = x * 2
            inside.append(y.requires_grad)
            return y

        @staticmethod
        def backward(ctx, g):
            inside.append(torch.is_grad_enabled())
            return g * 2

    x = torch.tensor([1.0], requires_grad=True)
    Probe.apply(x).sum().backward()
    return [inside, x.grad.tolist()]


def apply_without_grad_inputs(torch, nn):
    y = _cube(torch).apply(torch.tensor([2.0]))
    return [y.tolist(), y.requires_grad, y.grad_fn]


def mark_dirty_inplace_function(torch, nn):
    class AddOneInplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = AddOneInplace.apply(y)
    out = [z is y, y.tolist(), type(y.grad_fn).__name__, y._version]
    (z * z).sum().backward()
    return out + [x.grad.tolist()]


def mark_dirty_on_leaf_fails(torch, nn):
    class AddOneInplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    try:
        AddOneInplace.apply(x)
        return None
    except RuntimeError as e:
        return _err(e)


def mark_non_differentiable_output(torch, nn):
    class SortWithIndex(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            idx = (x > 0).long()
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            return g * 2

    x = torch.tensor([-1.0, 3.0], requires_grad=True)
    y, idx = SortWithIndex.apply(x)
    y.sum().backward()
    return [y.requires_grad, idx.requires_grad, idx.tolist(), x.grad.tolist(), str(idx.dtype)]


def backward_returns_wrong_count(torch, nn):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.tensor([1.0], requires_grad=True)
    y = torch.tensor([2.0], requires_grad=True)
    try:
        Bad.apply(x, y).sum().backward()
        return None
    except RuntimeError as e:
        return _err(e)


def backward_returns_wrong_shape(torch, nn):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(3)

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    try:
        Bad.apply(x).sum().backward()
        return None
    except RuntimeError as e:
        return _err(e)


def function_used_twice_in_graph(torch, nn):
    Cube = _cube(torch)
    x = torch.tensor(2.0, requires_grad=True)
    y = Cube.apply(Cube.apply(x))
    y.backward()
    return [y.item(), x.grad.item()]


def custom_function_output_version_check(torch, nn):
    Cube = _cube(torch)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = Cube.apply(h)
    h.add_(1)
    try:
        y.sum().backward()
        return None
    except RuntimeError as e:
        return _err(e)


def multiple_outputs_both_used(torch, nn):
    class SplitScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3

    x = torch.tensor([1.0, 1.0], requires_grad=True)
    a, b = SplitScale.apply(x)
    (a * 10 + b).sum().backward()
    return [x.grad.tolist(), type(a.grad_fn).__name__, a.grad_fn is b.grad_fn]


def multiple_outputs_one_unused_gets_zero(torch, nn):
    seen = []

    class Pair(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append([ga.tolist(), gb.tolist()])
            return ga * 2 + gb * 3

    x = torch.tensor([1.0, 1.0], requires_grad=True)
    a, b = Pair.apply(x)
    a.sum().backward()
    return [seen, x.grad.tolist()]


def custom_function_with_hook_and_retain_grad(torch, nn):
    Cube = _cube(torch)
    calls = []
    x = torch.tensor(2.0, requires_grad=True)
    y = Cube.apply(x)
    y.register_hook(lambda g: calls.append(g.item()))
    y.retain_grad()
    (y * 5).backward()
    return [calls, y.grad.item(), x.grad.item()]


def once_differentiable_style_saved_non_tensor(torch, nn):
    class Clip(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, low, high):
            ctx.mask = (x >= low) & (x <= high)
            return x.clamp(low, high)

        @staticmethod
        def backward(ctx, g):
            return g * ctx.mask.float(), None, None

    x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    y = Clip.apply(x, -1.0, 1.0)
    y.sum().backward()
    return [y.tolist(), x.grad.tolist()]


def function_returns_input_unchanged(torch, nn):
    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Identity.apply(x)
    y.sum().backward()
    return [y is x, y.is_leaf, type(y.grad_fn).__name__, x.grad.tolist()]


def function_returns_view_of_input(torch, nn):
    class First(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:1]

        @staticmethod
        def backward(ctx, g):
            out = torch.zeros(2)
            out[:1] = g
            return out

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = First.apply(x * 1)
    y.sum().backward()
    return [type(y.grad_fn).__name__, x.grad.tolist()]


def function_backward_returns_none(torch, nn):
    class Stop(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return None

    x = torch.tensor([1.0], requires_grad=True)
    w = torch.tensor([3.0], requires_grad=True)
    (Stop.apply(x) + w).sum().backward()
    return [x.grad, w.grad.tolist()]


def function_saved_tensors_twice(torch, nn):
    seen = []

    class Sq(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            (b,) = ctx.saved_tensors
            seen.append(a.tolist() == b.tolist())
            return 2 * a * g

    x = torch.tensor([3.0], requires_grad=True)
    Sq.apply(x).sum().backward(retain_graph=False)
    return [seen, x.grad.tolist()]


def function_double_backward_with_create_graph(torch, nn):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = torch.tensor(2.0, requires_grad=True)
    (g,) = torch.autograd.grad(Cube.apply(x), x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    return [g.item(), h.item()]


def function_save_output(torch, nn):
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    y.sum().backward()
    out = [x.grad.tolist()]
    x2 = torch.tensor([0.0, 1.0], requires_grad=True)
    y2 = Exp.apply(x2)
    y2.mul_(2)
    try:
        y2.sum().backward()
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out


def function_non_tensor_output_passes_through(torch, nn):
    class Num(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 5

        @staticmethod
        def backward(ctx, g, _):
            return g * 2

    x = torch.tensor([1.0], requires_grad=True)
    y, k = Num.apply(x)
    y.sum().backward()
    return [k, x.grad.tolist()]


def function_apply_with_kwargs_fails(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=2.0):
            return x * scale

        @staticmethod
        def backward(ctx, g):
            return g, None
    try:
        F.apply(torch.tensor([1.0]), scale=3.0)
        return None
    except Exception as e:
        return _err(e)


def function_needs_input_grad_with_non_tensor(torch, nn):
    seen = []

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y):
            return x * k + y

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g, None, g

    x = torch.tensor([1.0], requires_grad=True)
    y = torch.tensor([1.0])
    F.apply(x, 3, y).sum().backward()
    return [[list(s) for s in seen], type(seen[0]).__name__]


def no_grad_in_custom_backward(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            with torch.no_grad():
                out = g * 2
            return out

    x = torch.tensor([1.0], requires_grad=True)
    F.apply(x).sum().backward()
    return x.grad.tolist()


def save_for_backward_non_tensor(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g
    return _attempt(lambda: F.apply(torch.tensor([1.0], requires_grad=True)))


def save_for_backward_none_allowed(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, nothing = ctx.saved_tensors
            return g * 2 + 0 * x if nothing is None else g
    x = torch.tensor([1.0], requires_grad=True)
    F.apply(x).sum().backward()
    return x.grad.tolist()


def function_called_without_apply(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g
    return _attempt(lambda: F()(torch.tensor([1.0])))


def backward_returns_python_float(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 2.0
    x = torch.tensor([1.0], requires_grad=True)
    return _attempt(lambda: F.apply(x).sum().backward())


def backward_gives_grad_to_input_without_grad(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g * 2, g * 3
    x = torch.tensor([1.0], requires_grad=True)
    y = torch.tensor([5.0])
    F.apply(x, y).sum().backward()
    return [x.grad.tolist(), y.grad]


def forward_returns_non_tensor_only(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 3

        @staticmethod
        def backward(ctx, g):
            return g
    try:
        r = F.apply(torch.tensor([1.0], requires_grad=True))
        return [type(r).__name__, r]
    except (RuntimeError, TypeError) as e:
        return _err(e)


def mark_dirty_output_not_returned(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 1
    return _attempt(lambda: F.apply(y))


def mark_non_differentiable_then_backward_through_it(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g
    x = torch.tensor([1.0], requires_grad=True)
    y = F.apply(x)
    return [y.requires_grad, y.grad_fn is None, _attempt(lambda: y.sum().backward())]


def set_materialize_grads_default(torch, nn):
    seen = []

    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append([ga is None, gb is None, gb.tolist() if gb is not None else None])
            return ga + (gb if gb is not None else 0)
    x = torch.tensor([1.0], requires_grad=True)
    a, b = Two.apply(x)
    a.sum().backward()
    return [seen, x.grad.tolist()]


def grad_fn_of_function_output_name_with_digits(torch, nn):
    class Scale2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    y = Scale2.apply(torch.tensor([1.0], requires_grad=True))
    return [type(y.grad_fn).__name__, repr(y)]


def custom_function_inplace_without_mark_dirty_is_caught(torch, nn):
    class Sneaky(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = torch.tensor([1.0], requires_grad=True)
    y = x.exp()
    z = Sneaky.apply(y)
    return [y.tolist(), y._version, _attempt(lambda: z.sum().backward())]


def save_intermediate_tensor(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mid = x.exp()
            ctx.save_for_backward(mid)
            return mid * 2

        @staticmethod
        def backward(ctx, g):
            (mid,) = ctx.saved_tensors
            return g * 2 * mid
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    F.apply(x).sum().backward()
    return x.grad.tolist()


def tensors_in_list_argument_not_tracked(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, extras):
            return x * extras[0]

        @staticmethod
        def backward(ctx, g):
            return g * 3, None
    x = torch.tensor([1.0], requires_grad=True)
    w = torch.tensor([3.0], requires_grad=True)
    y = F.apply(x, [w])
    y.sum().backward()
    return [x.grad.tolist(), w.grad]


def function_output_is_view_of_input_then_inplace(torch, nn):
    class View(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(2, 1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = View.apply(h)
    try:
        y.mul_(2)
        first = None
    except RuntimeError as e:
        first = _err(e)
    return [first, type(y.grad_fn).__name__]


def needs_input_grad_all_false_when_no_grad(torch, nn):
    seen = []

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(list(ctx.needs_input_grad))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g
    with torch.no_grad():
        y = F.apply(torch.tensor([1.0], requires_grad=True))
    F.apply(torch.tensor([1.0], requires_grad=True))
    return [seen, y.requires_grad]


def saved_tensors_of_input_modified_after_forward(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    x = torch.tensor([1.0], requires_grad=True)
    h = x * 1
    y = F.apply(h)
    h.add_(1)
    try:
        y.sum().backward()
        return x.grad.tolist()
    except RuntimeError as e:
        return _err(e)


def function_forward_raises(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            raise ValueError("bad input")

        @staticmethod
        def backward(ctx, g):
            return g
    try:
        F.apply(torch.tensor([1.0], requires_grad=True))
        return [None, torch.is_grad_enabled()]
    except ValueError as e:
        return [_err(e), torch.is_grad_enabled()]


def function_backward_raises(torch, nn):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("no backward today")
    x = torch.tensor([1.0], requires_grad=True)
    try:
        F.apply(x).sum().backward()
        return [None, torch.is_grad_enabled()]
    except ValueError as e:
        return [_err(e), torch.is_grad_enabled()]


def function_with_zero_dim_and_int_output(torch, nn):
    class ArgMaxish(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = torch.tensor(1)
            ctx.mark_non_differentiable(idx)
            return x.sum(), idx

        @staticmethod
        def backward(ctx, g, gi):
            return g * torch.ones(2)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s, i = ArgMaxish.apply(x)
    s.backward()
    return [s.item(), i.item(), i.requires_grad, x.grad.tolist()]
