"""The dtype rules of docs/dtypes.md: float16/32/64 kept forward and backward, NumPy's
promotion, Python scalars weak, integer and bool inputs non-differentiable with clear errors."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.special import logsumexp


def loss(x):
    return fnp.sum(fnp.tanh(x) * fnp.exp(-x * x) + fnp.sqrt(x * x + 1.0)) / 2


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_each_float_dtype_is_kept_forward_and_backward(dtype):
    x = np.linspace(-1, 1, 5).astype(dtype)
    value, g = fg.value_and_grad(loss)(x)
    assert value.dtype == dtype and g.dtype == dtype
    _, t = fg.jvp(loss, (x,), (np.ones_like(x),))
    assert t.dtype == dtype
    exact = fg.grad(loss)(x.astype(np.float64))
    tol = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(np.asarray(g, dtype=np.float64), np.asarray(exact), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_python_scalars_do_not_upcast(dtype):
    x = fnp.array([1.0, 2.0], dtype=dtype)
    for out in (x * 2.5, 2.5 + x, x ** 2, fnp.maximum(x, 0.5), fnp.where(x > 1, x, 0.0),
                fnp.clip(x, 0.0, 1.5), logsumexp(x)):
        assert out.dtype == dtype
    g = fg.grad(lambda x: fnp.sum(3.0 * x ** 2))(x)
    assert g.dtype == dtype


def test_numpy_promotion_rules_apply():
    f32 = np.ones(2, np.float32)
    f64 = np.ones(2, np.float64)
    i64 = np.ones(2, np.int64)
    assert (fnp.asarray(f32) + f64).dtype == np.float64
    assert (fnp.asarray(f32) + i64).dtype == np.result_type(f32, i64)
    assert (fnp.asarray(i64) / 2).dtype == np.float64
    assert fnp.sin(fnp.asarray(i64)).dtype == np.float64
    assert (fnp.asarray(f32) * np.float64(2.0)).dtype == np.float64  # NumPy scalars are strong


def test_gradient_of_a_float32_input_mixed_with_float64_stays_float32():
    x = np.ones(3, np.float32)
    g = fg.grad(lambda x: fnp.sum(x * np.array([1.0, 2.0, 3.0])))(x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("bad", [np.arange(3), 2, True, np.array([True, False])])
def test_integer_and_bool_inputs_are_not_differentiable(bad):
    with pytest.raises(TypeError, match="only defined for float"):
        fg.grad(lambda x: fnp.sum(x * 1.0))(bad)
    with pytest.raises(TypeError, match="only defined for float"):
        fg.jvp(lambda x: x * 1.0, (bad,), (bad,))


def test_integer_output_cannot_be_differentiated():
    with pytest.raises(TypeError, match="real float output"):
        fg.grad(lambda x: fnp.argmax(x))(np.array([1.0, 2.0]))


def test_cast_to_integer_carries_no_derivative():
    g = fg.grad(lambda x: fnp.sum(x.astype(np.int64) * x))(np.array([1.5, 2.5]))
    np.testing.assert_array_equal(g, [1.0, 2.0])


def test_gradients_keep_every_float_dtype_autograd_tests():
    # autograd's test_wrappers.py::test_dtypes: float16 and extended precision included
    f = lambda x: fnp.real(fnp.sum(x ** 2))  # noqa: E731
    x = np.random.default_rng(2).standard_normal((4, 4))
    for kind in (np.float32, np.float16, fnp.longdouble, fnp.clongdouble):
        value = x.astype(kind)
        g = fg.grad(f)(value)
        assert g.dtype.type is np.dtype(kind).type
        np.testing.assert_allclose(np.asarray(g).astype(complex), 2 * value.astype(complex),
                                   rtol=1e-3 if kind is np.float16 else 1e-12)
