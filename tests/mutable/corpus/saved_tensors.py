"""Which operations save which tensors: modify an op's input, or its output, then run backward.

PyTorch saves exactly what each derivative needs (exp saves its output, log its input, add
nothing), and checks a saved tensor's version at backward; these snippets pin that table down.
"""


def _err(e):
    return [type(e).__name__, str(e)]


def _modify_then_backward(torch, op, modify):
    # x -> a (a non-leaf we may modify) -> b = op(a) -> modify a or b in place -> backward.
    x = torch.tensor([0.5, 2.0], requires_grad=True)
    a = x * 1
    b = op(a)
    target = a if modify == "input" else b
    target.mul_(1.5)
    try:
        (b * torch.tensor([1.0, 3.0])).sum().backward()
        return [type(b.grad_fn).__name__, x.grad.tolist()]
    except RuntimeError as e:
        return [type(b.grad_fn).__name__, _err(e)]


def exp_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.exp(), "input")


def exp_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.exp(), "output")


def log_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.log(), "input")


def log_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.log(), "output")


def sqrt_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.sqrt(), "input")


def sqrt_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.sqrt(), "output")


def sigmoid_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.sigmoid(), "input")


def tanh_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.tanh(), "input")


def tanh_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.tanh(), "output")


def relu_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.relu(), "input")


def relu_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.relu(), "output")


def abs_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.abs(), "input")


def abs_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.abs(), "output")


def clamp_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.clamp(min=1.0), "input")


def clamp_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.clamp(min=1.0), "output")


def pow_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.pow(2), "input")


def pow_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.pow(2), "output")


def neg_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: -a, "input")


def neg_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: -a, "output")


def mul_by_scalar_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a * 2, "input")


def mul_by_scalar_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a * 2, "output")


def div_by_scalar_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a / 2, "input")


def scalar_divided_by_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: 2 / a, "input")


def scalar_divided_by_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: 2 / a, "output")


def add_scalar_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a + 1, "input")


def sub_scalar_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a - 1, "output")


def sum_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.sum(), "input")


def mean_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.mean(), "input")


def clone_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.clone(), "input")


def square_by_mul_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a * a, "output")


def matmul_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a @ torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "input")


def matmul_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a @ torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "output")


def dot_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a @ a, "input")


def expand_input_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.unsqueeze(0).expand(3, 2), "input")


def transpose_then_exp_output_modified(torch, nn):
    return _modify_then_backward(torch, lambda a: a.view(2, 1).t().exp().view(2), "output")


def pow_tensor_exponent_modified(torch, nn):
    x = torch.tensor([1.5, 2.0], requires_grad=True)
    p = torch.tensor([2.0, 3.0])
    y = x ** p
    p.add_(1)
    try:
        y.sum().backward()
        return x.grad.tolist()
    except RuntimeError as e:
        return _err(e)


def data_write_to_saved_sigmoid_output_is_unseen(torch, nn):
    x = torch.tensor([0.5, 2.0], requires_grad=True)
    y = x.sigmoid()
    s = y.sum()
    y.data.mul_(0)  # .data writes bypass the version counter: no error, stale values used
    s.backward()
    return x.grad.tolist()
