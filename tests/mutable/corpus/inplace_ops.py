"""In-place methods and augmented operators on non-leaf tensors: values, grad_fn names, gradients."""


def _err(e):
    return [type(e).__name__, str(e)]


def _attempt(fn):
    try:
        fn()
        return None
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return _err(e)


def _inplace(torch, apply, values=(0.5, 1.0, 2.0)):
    x = torch.tensor(list(values), requires_grad=True)
    y = x * 1
    result = apply(y)
    out = [result is y, y.tolist(), type(y.grad_fn).__name__, y._version]
    (y * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    return out + [x.grad.tolist()]


def add_(torch, nn):
    return _inplace(torch, lambda y: y.add_(2))


def add_tensor_with_alpha(torch, nn):
    return _inplace(torch, lambda y: y.add_(torch.tensor([1.0, 2.0, 3.0]), alpha=2))


def sub_(torch, nn):
    return _inplace(torch, lambda y: y.sub_(1.5))


def mul_(torch, nn):
    return _inplace(torch, lambda y: y.mul_(3))


def mul_by_tensor_requiring_grad(torch, nn):
    w = torch.tensor([2.0, -1.0, 0.5], requires_grad=True)
    out = _inplace(torch, lambda y: y.mul_(w))
    return out + [w.grad.tolist()]


def div_(torch, nn):
    return _inplace(torch, lambda y: y.div_(4))


def pow_(torch, nn):
    return _inplace(torch, lambda y: y.pow_(2))


def neg_(torch, nn):
    return _inplace(torch, lambda y: y.neg_())


def abs_(torch, nn):
    return _inplace(torch, lambda y: y.abs_(), values=(-0.5, 1.0, -2.0))


def clamp_(torch, nn):
    return _inplace(torch, lambda y: y.clamp_(min=0.75, max=1.5))


def exp_(torch, nn):
    return _inplace(torch, lambda y: y.exp_())


def sqrt_(torch, nn):
    return _inplace(torch, lambda y: y.sqrt_())


def log_(torch, nn):
    return _inplace(torch, lambda y: y.log_())


def sigmoid_(torch, nn):
    return _inplace(torch, lambda y: y.sigmoid_())


def tanh_(torch, nn):
    return _inplace(torch, lambda y: y.tanh_())


def relu_(torch, nn):
    return _inplace(torch, lambda y: y.relu_(), values=(-0.5, 1.0, 2.0))


def fill_(torch, nn):
    return _inplace(torch, lambda y: y.fill_(7))


def copy_(torch, nn):
    src = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    out = _inplace(torch, lambda y: y.copy_(src * 2))
    return out + [src.grad.tolist()]


def copy_broadcast_and_dtype(torch, nn):
    x = torch.zeros(2, 3)
    x.copy_(torch.tensor([1, 2, 3]))
    return [x.tolist(), str(x.dtype), x._version]


def zero_(torch, nn):
    return _inplace(torch, lambda y: y.zero_())


def chained_inplace_methods(torch, nn):
    return _inplace(torch, lambda y: y.mul_(2).add_(1).pow_(2))


def augmented_operators(torch, nn):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    before = y
    y += 1
    y *= 3
    y -= 2
    y /= 2
    out = [y is before, y.tolist(), y._version, type(y.grad_fn).__name__]
    y.sum().backward()
    return out + [x.grad.tolist()]


def augmented_operator_on_int_tensor_with_float_fails(torch, nn):
    x = torch.tensor([1, 2])
    try:
        x *= 1.5
        return [None, x.tolist()]
    except RuntimeError as e:
        return [_err(e), x.tolist()]


def inplace_int_division_fails(torch, nn):
    x = torch.tensor([1, 2])
    try:
        x.div_(2)
        return None
    except RuntimeError as e:
        return _err(e)


def inplace_broadcast_to_larger_fails(torch, nn):
    x = torch.zeros(3)
    try:
        x.add_(torch.ones(2, 3))
        return None
    except RuntimeError as e:
        return _err(e)


def inplace_on_tensor_without_grad_then_used(torch, nn):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([3.0, 4.0])
    t.mul_(w)
    out = [t.requires_grad, t.is_leaf, type(t.grad_fn).__name__, t._version]
    t.sum().backward()
    return out + [w.grad.tolist()]


def operators_do_not_mutate(torch, nn):
    x = torch.tensor([1.0, 2.0])
    y = x + 1
    z = x @ x
    return [x.tolist(), x._version, y.tolist(), z.item()]


def inplace_twice_on_saved_output_in_chain(torch, nn):
    # mul_ by a constant does not need y's old value: tracked through MulBackward0 in place.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(2)
    y.mul_(3)
    z = y.sum()
    z.backward()
    return [type(y.grad_fn).__name__, y._version, x.grad.tolist()]


def inplace_on_broadcast_result_shape(torch, nn):
    x = torch.zeros(2, 1)
    return _attempt(lambda: x.mul_(torch.ones(2, 3)))


def inplace_pow_operator(torch, nn):
    z = torch.tensor([2.0])
    w = z
    z **= 3
    return [z.tolist(), z is w, w._version]
