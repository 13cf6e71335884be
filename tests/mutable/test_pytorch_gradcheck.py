"""torch.autograd.gradcheck and gradgradcheck as PyTorch's test_autograd.py uses them, ported:
each test runs on funcgrad.mutable and on real torch 2.13 (CPU) with the same assertions."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pytorch_port import both


def shifted(x):
    y = x.clone()
    y.register_hook(lambda g: g + 1e-2)  # a backward that adds a constant: wrong everywhere
    return y


@both()
@pytest.mark.parametrize("fast_mode", [False, True])
def test_single_input_first_and_second_order(torch, fast_mode):
    x = torch.rand(6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: t.mul(5), x, fast_mode=fast_mode)
    assert torch.autograd.gradgradcheck(lambda t: t.mul(5), x, fast_mode=fast_mode)
    assert torch.autograd.gradgradcheck(lambda t: (t * t).sin(), (x,), fast_mode=fast_mode)


@both()
def test_unrelated_input_is_fine(torch):
    x = torch.rand(5, dtype=torch.float64, requires_grad=True)
    y = torch.rand(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: a * a, (x, y))
    assert torch.autograd.gradgradcheck(lambda a, b: a * a, (x, y))


@both()
def test_jacobian_mismatch_raises_or_returns_false(torch):
    x = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        torch.autograd.gradcheck(shifted, (x,))
    assert torch.autograd.gradcheck(shifted, (x,), raise_exception=False) is False


@both()
def test_backward_not_multiplied_by_grad_output(torch):
    x = torch.ones(1, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="backward not multiplied by grad_output"):
        torch.autograd.gradcheck(shifted, (x,), atol=1e-1)
    assert torch.autograd.gradcheck(shifted, (x,), atol=1e-1, raise_exception=False) is False


@both()
def test_gradcheck_error_class_and_foreign_errors(torch):
    import importlib
    GradcheckError = importlib.import_module(
        torch.__name__ + ".autograd.gradcheck").GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    x = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        torch.autograd.gradcheck(shifted, (x,))

    def broken(t):
        raise RuntimeError("Not a GradcheckError!")

    with pytest.raises(RuntimeError, match="Not a GradcheckError!"):
        torch.autograd.gradcheck(broken, (x,), raise_exception=False)


@both()
def test_input_validation(torch):
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        torch.autograd.gradcheck(lambda t: t, (torch.rand(3),), raise_exception=False)
    x = torch.ones(1, dtype=torch.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double "
                                         "precision"):
        assert torch.autograd.gradcheck(lambda t: t, (x,), atol=1e-1)
    x = torch.ones(1, dtype=torch.float64, requires_grad=True).expand((2, 2))
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        torch.autograd.gradcheck(lambda t: t, (x,), raise_exception=False)


@both()
def test_outputs_without_derivative(torch):
    x = torch.ones((1,), dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Numerical gradient for function expected to "
                                               "be zero"):
            torch.autograd.gradcheck(lambda t: torch.tensor([t]), x)
        assert torch.autograd.gradcheck(lambda t: torch.tensor([t]), x,
                                        raise_exception=False) is False
    assert torch.autograd.gradcheck(lambda t: (), (x,))


@both()
def test_outputs_must_keep_shape_and_dtype(torch):
    a = torch.ones(1, dtype=torch.float64, requires_grad=True)

    def grows(t):
        return torch.cat([t, t]) if torch.all(t >= 1) else t

    def casts(t):
        return t.to(torch.float32) if torch.all(t >= 1) else t

    with pytest.raises(AssertionError, match="return outputs with the same shape when inputs "
                                             "are perturbed"):
        torch.autograd.gradcheck(grows, (a,))
    with pytest.raises(AssertionError, match="return outputs with the same dtype when inputs "
                                             "are perturbed"):
        torch.autograd.gradcheck(casts, (a,))


@both()
def test_nondeterministic_backward(torch):
    class Jitter(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, jitter=0.0):
            ctx.jitter = jitter
            return x

        @staticmethod
        def backward(ctx, g):
            return Jitter.apply(g, ctx.jitter) * (1 + torch.rand_like(g) * ctx.jitter), None

    inp = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: Jitter.apply(x, 0.0), inp, check_batched_grad=False)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        torch.autograd.gradcheck(lambda x: Jitter.apply(x, 1e-6), inp, check_batched_grad=False)
    assert torch.autograd.gradcheck(lambda x: Jitter.apply(x, 1e-6), inp, nondet_tol=1e-5,
                                    check_batched_grad=False)


@both()
def test_custom_function_with_outputs_of_mixed_kinds(torch):
    class Mixed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            ctx.scale = scale
            ctx.save_for_backward(t1, t2, t3)
            return scale, (t1 + t2 * t3) * scale, None, True, (t1 * t2 + t3) * scale, "x", t1

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *g):
            s = ctx.scale
            a, b, c = ctx.saved_tensors
            return (g[1] * s + g[4] * b * s + g[6], g[1] * c * s + g[4] * a * s, None,
                    g[1] * b * s + g[4] * s)

    t1, t2, t3 = (torch.rand(4, dtype=torch.float64, requires_grad=True) for _ in range(3))

    def run(a, b, c):
        res = Mixed.apply(a, b, 3, c)
        return res[1], res[4], res[6]

    assert torch.autograd.gradcheck(run, (t1, t2, t3))


@both()
def test_functions_returning_views_or_duplicates(torch):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            return out, out

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 2

    def fn(x):
        a, b = Twice.apply(x)
        return a + b

    x = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fn, [x])
    assert torch.autograd.gradgradcheck(fn, [x])
    assert torch.autograd.gradcheck(lambda t: t.select(0, 1).sum(), [x])
    assert torch.autograd.gradgradcheck(lambda t: t.select(0, 1).sum(), [x])


@both()
def test_scatter_reduce_extremes_pass_gradcheck(torch):
    for reduction in ("amin", "amax", "sum", "mean"):
        inp = torch.randn((2, 3), dtype=torch.float64, requires_grad=True)
        src = inp.clone().detach_().requires_grad_(True)
        idx = torch.arange(2).unsqueeze(-1).expand((2, 3))
        assert torch.autograd.gradcheck(torch.scatter_reduce, (inp, 0, idx, src, reduction),
                                        check_batched_grad=False)


@both()
def test_gradcheck_checks_complex_inputs_and_outputs_by_parts(torch):
    z = torch.tensor([[0.5 + 1j, -1.0 + 0.25j], [2.0 - 0.5j, 0.1 + 0.2j]],
                     dtype=torch.complex128, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: (t * t).exp(), (z,))  # C -> C
    assert torch.autograd.gradcheck(lambda t: torch.real(t * t.conj()), (z,))  # C -> R
    x = torch.tensor([0.5, -1.5], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([2.0, 0.25], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: (torch.complex(a, b) ** 2, a + 1), (x, y))

    def hooked(make):
        def fn(t):
            out = make(t)
            out.register_hook(lambda g: g + 1e-2)
            return out
        return fn

    with pytest.raises(RuntimeError, match="^While considering the imaginary part of complex "
                       "outputs only, Jacobian mismatch for output 0 with respect to input 0"):
        torch.autograd.gradcheck(hooked(lambda t: t.clone()), (z,))
    with pytest.raises(RuntimeError, match="^While considering the imaginary part of complex "
                       "outputs only, Jacobian mismatch for output 0 with respect to input 0"):
        torch.autograd.gradcheck(hooked(lambda t: torch.complex(t, t)), (x,))
    with pytest.raises(RuntimeError, match="^Jacobian mismatch for output 0 with respect to "
                       "input 0"):
        torch.autograd.gradcheck(hooked(lambda t: torch.real(t)), (z,))
    assert not torch.autograd.gradcheck(hooked(lambda t: t.clone()), (z,), raise_exception=False)


@both()
def test_complex_from_parts_values_gradients_and_errors(torch):
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([3.0, -1.0], dtype=torch.float64, requires_grad=True)
    z = torch.complex(x, y)
    assert z.dtype == torch.complex128
    assert torch.complex(x.float(), y.float()).dtype == torch.complex64
    w = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128)
    (z * w).abs().sum().backward()
    zw = (np.array([1.0, 2.0]) + 1j * np.array([3.0, -1.0])) * np.array([1 + 2j, 3 - 1j])
    g = np.conj(np.array([1 + 2j, 3 - 1j])) * zw / np.abs(zw)  # d|zw| = Re(conj(dz) ...)
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), g.real, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(y.grad.tolist()), g.imag, rtol=1e-12)
    with pytest.raises(RuntimeError, match="^Expected object of scalar type Double but got scalar "
                       "type Float for second argument$"):
        torch.complex(x, y.float())
    with pytest.raises(RuntimeError, match="^Expected both inputs to be Half, Float or Double "
                       "tensors but got Long and Long$"):
        torch.complex(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64))


@both()
@pytest.mark.parametrize("fast_mode", [False, True])
def test_backward_must_handle_undefined_output_grads(torch, fast_mode):
    def refuses_undefined(x):
        def hook(g):
            if g is None:
                raise RuntimeError("x is undefined")
        y = x.clone()
        y.register_hook(hook)
        return y

    x = torch.ones(1, dtype=torch.double, requires_grad=True)
    with pytest.warns(UserWarning, match="New undefined gradient support checking feature"):
        with pytest.raises(RuntimeError, match="Expected backward function to handle undefined "
                                               "output grads"):
            torch.autograd.gradcheck(refuses_undefined, (x,), fast_mode=fast_mode)
        assert not torch.autograd.gradcheck(refuses_undefined, (x,), raise_exception=False,
                                            fast_mode=fast_mode)
    assert torch.autograd.gradcheck(refuses_undefined, (x,), fast_mode=fast_mode,
                                    check_undefined_grad=False)



@both()
def test_undefined_grad_and_delayed_error_nodes(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch._C._functions.UndefinedGrad()(x * 3)
    assert type(y.grad_fn).__name__ == "UndefinedGradBackward" and y.tolist() == [3.0, 6.0]
    assert y.grad_fn.name() == "torch::autograd::UndefinedGradBackward"
    seen = []
    mid = x * 2
    mid.register_hook(seen.append)
    (torch._C._functions.UndefinedGrad()(mid) * 5).sum().backward()
    assert seen == [None] and x.grad is None  # the hook sees the undefined gradient
    assert torch._C._functions.UndefinedGrad()(torch.ones(2)).grad_fn is None
    with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
        torch._C._functions.UndefinedGrad()(x, x)
    a, b = torch._C._functions.DelayedError("Boom!", 2)(x, x * 2)
    assert a.grad_fn is b.grad_fn and b.output_nr == 1 and a.grad_fn.name() == "torch::autograd::Error"
    with pytest.raises(RuntimeError, match="Boom!"):
        b.sum().backward()
    (g,) = torch.autograd.grad((x * 1).sum(), x)  # a graph that does not reach it
    assert g.tolist() == [1.0, 1.0]
