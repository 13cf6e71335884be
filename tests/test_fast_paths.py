"""Forwards and slopes that take a faster NumPy route than the obvious one: each must give
exactly the obvious route's values (bit for bit), dtypes and layouts."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src import jit as J
from funcgrad.numpy import _primitives as P


def _with_specials(n, dtype, seed=0):
    x = np.random.default_rng(seed).standard_normal(n).astype(dtype)
    x[::3] = -0.0
    x[1::5] = 0.0
    x[2::7] = np.nan
    x[3::11] = np.inf
    x[4::13] = -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 255, 256, 1000, 16384])
@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("zero", [0.0, 0, -0.0, "0-d +0", "0-d -0", "0-d other dtype"])
def test_maximum_against_a_zero_is_numpys_bit_for_bit(dtype, n, name, zero):
    # (a 0-d zero of x's dtype is how jit passes the constant: `_is_plus_zero`)
    x = _with_specials(n, dtype)
    if isinstance(zero, str):
        zero = np.array(-0.0 if "-0" in zero else 0.0,
                        np.float64 if "other" in zero and dtype != np.float64 else dtype)
    want = getattr(np, name)(x, zero)
    got = getattr(P, name).impl(x, zero)
    assert got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()
    public = np.asarray(getattr(fnp, name)(x, zero))
    assert public.tobytes() == want.tobytes()


def test_maximum_against_zero_keeps_the_layout_and_integer_results():
    x = np.asfortranarray(np.random.default_rng(1).standard_normal((40, 30)))
    got = P.maximum.impl(x, 0.0)
    np.testing.assert_array_equal(got, np.maximum(x, 0.0))
    assert got.flags.f_contiguous  # (a non-C-contiguous array takes NumPy's own call)
    ints = np.arange(-300, 300)
    got = P.maximum.impl(ints, 0)
    assert got.dtype == ints.dtype
    np.testing.assert_array_equal(got, np.maximum(ints, 0))


def test_relu_written_with_maximum_has_the_closed_form_gradient_and_jit_agrees():
    x = _with_specials(1000, np.float32)[np.isfinite(_with_specials(1000, np.float32))]
    w = np.random.default_rng(2).standard_normal(x.shape).astype(np.float32)
    f = lambda x: fnp.sum(fnp.maximum(x, 0.0) * w)  # noqa: E731
    g = np.asarray(fg.grad(f)(x))
    want = np.where(x > 0, w, np.where(x == 0, w * np.float32(0.5), np.float32(0)))
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(np.asarray(fg.jit(fg.grad(f))(x)), g)
    # jit still sees NumPy's ufunc behind the forward (it fuses and computes it in place)
    assert J._ufunc_of(P.maximum.impl) is np.maximum
    assert J._ufunc_of(P.minimum.impl) is np.minimum


def test_jitted_relu_takes_the_zeros_array_route(monkeypatch):
    calls = []
    real_zeros = np.zeros
    monkeypatch.setattr(np, "zeros", lambda *a, **k: calls.append(a) or real_zeros(*a, **k))
    x = np.random.default_rng(4).standard_normal((64, 256)).astype(np.float32)
    relu = fg.jit(lambda x: fnp.maximum(x, 0.0))
    np.testing.assert_array_equal(np.asarray(relu(x)), np.maximum(x, 0.0))
    calls.clear()
    relu(x)  # (the replayed program, not the trace)
    assert calls == [((64, 256), np.float32)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_slope_is_a_float_mask_one_at_nan_and_zero_at_zero(dtype):
    x = _with_specials(5000, dtype)
    w = np.random.default_rng(3).standard_normal(x.shape).astype(dtype)
    g = np.asarray(fg.grad(lambda x: fnp.sum(P.relu(x) * w))(x))
    out = np.maximum(x, 0)
    assert g.dtype == dtype
    np.testing.assert_array_equal(g, np.where(out != 0, w, 0).astype(dtype))
    slope = P._relu_slope(out, x)
    assert slope.dtype == dtype
    np.testing.assert_array_equal(slope, (out != 0).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(), (3,), (64, 256)])
def test_tanh_slope_with_a_0d_one_is_the_python_float_ones(dtype, shape):
    rng = np.random.default_rng(4)
    x = np.asarray(rng.standard_normal(shape)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * np.asarray(rng.standard_normal(shape)).astype(dtype)
    out = np.tanh(x)
    got = P._tanh_slope(out, x)
    want = 1.0 - out * out
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    assert type(got) is type(want)


def test_tanh_gradient_is_one_minus_tanh_squared_in_float64():
    x = np.linspace(-3, 3, 101)
    g = np.asarray(fg.grad(lambda x: fnp.sum(fnp.tanh(x)))(x))
    np.testing.assert_allclose(g, 1 / np.cosh(x) ** 2, rtol=1e-13, atol=1e-15)
    # second order goes through the slope on tracers
    h = np.asarray(fg.grad(lambda x: fnp.sum(fg.grad(lambda y: fnp.sum(fnp.tanh(y)))(x)))(x))
    np.testing.assert_allclose(h, -2 * np.tanh(x) / np.cosh(x) ** 2, rtol=1e-12, atol=1e-14)


def test_matmul_gradients_of_matrices_are_the_closed_forms_bit_for_bit():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((7, 5)).astype(np.float32)
    b = rng.standard_normal((5, 3)).astype(np.float32)
    w = rng.standard_normal((7, 3)).astype(np.float32)
    ga, gb = fg.grad(lambda a, b: fnp.sum((a @ b) * w), argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(np.asarray(ga), w @ b.T)
    np.testing.assert_array_equal(np.asarray(gb), a.T @ w)
    # vectors and stacks take the general rules; second order goes through tracers
    v = rng.standard_normal(5)
    np.testing.assert_allclose(np.asarray(fg.grad(lambda v: fnp.sum(a.astype(float) @ v))(v)),
                               a.astype(float).sum(0), rtol=1e-12)
    h = fg.hessian(lambda a: fnp.sum((a @ b.astype(float)) ** 2))(a.astype(float))
    bb = b.astype(float)
    want = 2 * np.einsum("ik,jl->ijkl", np.eye(7), bb @ bb.T)  # d2/da_ij da_kl
    np.testing.assert_allclose(np.asarray(h), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("index", [(slice(None), 0), (-1,), (slice(1, 3), slice(None, None, 2)),
                                   (None, 2, slice(None)), ()])
def test_basic_index_gradient_scatters_the_cotangent_into_zeros(index):
    x = np.random.default_rng(6).standard_normal((4, 5)).astype(np.float32)
    w = np.random.default_rng(7).standard_normal(x[index].shape).astype(np.float32)
    g = np.asarray(fg.grad(lambda x: fnp.sum(x[index] * w))(x))
    want = np.zeros_like(x)
    want[index] += w
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, want)
    # second order (the rule on tracers): d/dx of sum(x[index]**2 * w) twice is 2 w at index
    h = np.asarray(fg.grad(lambda x: fnp.sum(fg.grad(lambda y: fnp.sum(y[index] ** 2 * w))(x)))(x))
    want2 = np.zeros_like(x)
    want2[index] += 2 * w
    np.testing.assert_allclose(h, want2, rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_and_mean_gradients_broadcast_the_cotangent_back(axis, keepdims):
    x = np.random.default_rng(8).standard_normal((6, 4)).astype(np.float32)
    w = np.random.default_rng(9).standard_normal(np.sum(x, axis=axis, keepdims=keepdims).shape)
    w = w.astype(np.float32)
    gs = np.asarray(fg.grad(lambda x: fnp.sum(fnp.sum(x, axis=axis, keepdims=keepdims) * w))(x))
    gm = np.asarray(fg.grad(lambda x: fnp.sum(fnp.mean(x, axis=axis, keepdims=keepdims) * w))(x))
    wk = w if keepdims or axis is None else np.expand_dims(w, axis)
    n = x.size // np.sum(x, axis=axis, keepdims=keepdims).size
    assert gs.dtype == gm.dtype == np.float32
    np.testing.assert_array_equal(gs, np.broadcast_to(wk, x.shape))
    np.testing.assert_allclose(gm, np.broadcast_to(wk / n, x.shape), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.complex64])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (64,), (3, 5), (2, 3, 4)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_is_numpys_mean_bit_for_bit(dtype, shape, keepdims):
    x = np.random.default_rng(10).standard_normal(shape) * 100
    x = x.astype(dtype) if np.dtype(dtype).kind != "c" else (x + 1j * x[::-1]).astype(dtype)
    axes = [None] + list(range(-len(shape), len(shape))) + ([(0, 1)] if len(shape) > 1 else [])
    for axis in axes:
        with warnings.catch_warnings():  # (an empty mean warns, the same way on both routes)
            warnings.simplefilter("ignore", RuntimeWarning)
            want = x.mean(axis=axis, keepdims=keepdims)
            got = P.mean.impl(x, axis=axis, keepdims=keepdims)
        assert type(got) is type(want) and got.dtype == want.dtype, (axis, got, want)
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (axis, got, want)


def test_mean_keeps_numpys_axis_error():
    with pytest.raises(np.exceptions.AxisError):
        P.mean.impl(np.ones((2, 3), np.float32), axis=2)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_and_min_gradients_share_the_slope_among_ties(name, axis, keepdims):
    x = np.array([[1.0, 3.0, 3.0, -2.0], [5.0, 5.0, 5.0, 0.0], [-1.0, 4.0, 2.0, 4.0]],
                 np.float32)
    if name == "min":
        x = -x
    w = np.random.default_rng(11).standard_normal(
        np.max(x, axis=axis, keepdims=keepdims).shape).astype(np.float32)
    f = getattr(fnp, name)
    g = np.asarray(fg.grad(lambda x: fnp.sum(f(x, axis=axis, keepdims=keepdims) * w))(x))
    # the closed form: each result's weight split evenly among the elements equal to it
    ext = getattr(np, name)(x, axis=axis, keepdims=True)
    hits = (x == ext).astype(np.float32)
    wk = np.reshape(w, ext.shape)
    want = hits * wk / np.sum(hits, axis=axis, keepdims=True)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, want, rtol=1e-6)
    # second order (the rule on tracers): the gradient of sum(f(y)**2 * w) is 2 f(y) w shared
    # among the ties, whose sum over x is sum(2 f(x) w), whose gradient is 2 * want
    h = np.asarray(fg.grad(lambda x: fnp.sum(fg.grad(
        lambda y: fnp.sum(f(y, axis=axis, keepdims=keepdims) ** 2 * w))(x)))(x))
    np.testing.assert_allclose(h, 2 * want, rtol=1e-5)
