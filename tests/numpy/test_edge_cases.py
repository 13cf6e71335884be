"""Each convention of docs/edge_cases.md, one test each: ties, kinks, zeros, the where NaN
trap, empty and 0-d arrays, reductions over empty axes."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def grad(f, x):
    return np.asarray(fg.grad(f)(np.asarray(x, dtype=float)))


def fwd(f, x, t):
    return np.asarray(fg.jvp(f, (np.asarray(x, float),), (np.asarray(t, float),))[1])


# --- ties ------------------------------------------------------------------------------------
def test_max_and_min_share_the_slope_among_ties():
    x = [1.0, 3.0, 3.0, 3.0]
    np.testing.assert_allclose(grad(fnp.max, x), [0, 1 / 3, 1 / 3, 1 / 3])
    np.testing.assert_allclose(grad(fnp.min, [2.0, 2.0, 5.0]), [0.5, 0.5, 0])
    np.testing.assert_allclose(fwd(fnp.max, x, [9.0, 1.0, 2.0, 3.0]), 2.0)  # mean of tied tangents


def test_maximum_and_minimum_split_a_tie_in_half():
    f = lambda x: fnp.sum(fnp.maximum(x, 1.0))  # noqa: E731
    np.testing.assert_allclose(grad(f, [1.0, 2.0, 0.0]), [0.5, 1.0, 0.0])
    g = lambda x: fnp.sum(fnp.minimum(x, 1.0))  # noqa: E731
    np.testing.assert_allclose(grad(g, [1.0, 2.0, 0.0]), [0.5, 0.0, 1.0])


# JAX 0.10.2's values (jax.grad, float64) for the cases below, recorded so the check runs
# without JAX too: ties (1 and 1, 0 and 0, inf and inf) split the slope, NaN gives 0 to both.
TIE_X = np.array([1.0, 2.0, 3.0, np.nan, 0.0, np.inf, -1.0])
TIE_Y = np.array([1.0, 1.0, 4.0, 2.0, 0.0, np.inf, -2.0])
TIE_W = np.arange(1.0, 8.0)
JAX_MAXIMUM_GRADS = ([0.5, 2.0, 0.0, 0.0, 2.5, 3.0, 7.0], [0.5, 0.0, 3.0, 0.0, 2.5, 3.0, 0.0])
# diagonal of the Hessian of sum(maximum(x**2, x) * x) and sum(minimum(x**2, x) * sin(x)) at
# X2, where x = 1 and x = 0 are ties of x**2 and x
X2 = np.array([0.5, 2.0, -1.0, 1.0, 0.0])
JAX_MAXIMUM_HESSIAN = [2.0, 12.0, -6.0, 4.0, 1.0]
JAX_MINIMUM_HESSIAN = [2.5941598163381006, -2.6508885267456486, 0.23913362692838303,
                       1.6209069176044193, 1.0]


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_and_minimum_grads_at_ties_nan_and_inf_are_jaxs(name):
    f = getattr(fnp, name)
    got = fg.grad(lambda a, b: fnp.sum(f(a, b) * TIE_W), argnums=(0, 1))(TIE_X, TIE_Y)
    want = JAX_MAXIMUM_GRADS if name == "maximum" else JAX_MAXIMUM_GRADS[::-1]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    jax = pytest.importorskip("jax", reason="JAX is the live oracle; the recorded values ran above")
    jax.config.update("jax_enable_x64", True)
    jf = getattr(jax.numpy, name)
    ref = jax.grad(lambda a, b: jax.numpy.sum(jf(a, b) * TIE_W), argnums=(0, 1))(TIE_X, TIE_Y)
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(r))


def test_maximum_and_minimum_second_order_through_ties_matches_jax_and_differences():
    fmax = lambda a: fnp.sum(fnp.maximum(a ** 2, a) * a)  # noqa: E731
    fmin = lambda a: fnp.sum(fnp.minimum(a ** 2, a) * fnp.sin(a))  # noqa: E731
    for f, want in ((fmax, JAX_MAXIMUM_HESSIAN), (fmin, JAX_MINIMUM_HESSIAN)):
        hess = np.asarray(fg.hessian(f)(X2))
        np.testing.assert_allclose(np.diag(hess), want, rtol=1e-12)
        # away from the ties (x = 1 and 0) the Hessian is a central difference of the gradient
        step = 1e-6
        for i in range(3):
            e = np.zeros(5)
            e[i] = step
            column = (np.asarray(fg.grad(f)(X2 + e)) - np.asarray(fg.grad(f)(X2 - e))) / (2 * step)
            np.testing.assert_allclose(hess[:, i], column, rtol=1e-6, atol=1e-6)
        # forward over reverse agrees with reverse over reverse
        hvp = fg.jvp(fg.grad(f), (X2,), (np.ones(5),))[1]
        np.testing.assert_allclose(np.asarray(hvp), hess.sum(axis=1), rtol=1e-12)


def test_maximum_slope_keeps_float32_broadcasts_and_maps():
    x = np.array([[-1.0, 0.0, 2.0], [3.0, 0.0, -4.0]], dtype=np.float32)
    g = fg.grad(lambda a: fnp.sum(fnp.maximum(a, 0.0)))(x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(g), [[0, 0.5, 1], [1, 0.5, 0]])
    y = np.array([0.0, 1.0, 2.0], dtype=np.float32)  # broadcast along rows: a tie at [0, 2]
    gy = fg.grad(lambda b: fnp.sum(fnp.minimum(x, b)))(y)
    np.testing.assert_array_equal(np.asarray(gy), [1.0, 0.0, 0.5])
    per_row = fg.vmap(fg.grad(lambda a: fnp.sum(fnp.maximum(a, 0.0))))(x)
    np.testing.assert_array_equal(np.asarray(per_row), np.asarray(g))
    tangent = fg.jvp(lambda a: fnp.maximum(a, 0.0), (x,), (np.ones_like(x),))[1]
    np.testing.assert_array_equal(np.asarray(tangent), np.asarray(g))


def test_fmax_and_fmin_pass_over_nan():
    x, y = np.array([np.nan, 1.0, 2.0]), np.array([3.0, np.nan, 2.0])
    gx, gy = fg.grad(lambda a, b: fnp.sum(fnp.fmax(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(np.asarray(gx), [0, 1, 0.5])
    np.testing.assert_array_equal(np.asarray(gy), [1, 0, 0.5])
    gx, gy = fg.grad(lambda a, b: fnp.sum(fnp.fmin(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(np.asarray(gx), [0, 1, 0.5])
    np.testing.assert_array_equal(np.asarray(gy), [1, 0, 0.5])


def test_sort_gives_each_tied_element_its_own_slot_in_stable_order():
    x = [2.0, 1.0, 2.0, 1.0]  # stable order: 1(index 1), 1(index 3), 2(index 0), 2(index 2)
    weights = np.array([10.0, 20.0, 30.0, 40.0])
    np.testing.assert_allclose(grad(lambda x: fnp.sum(fnp.sort(x) * weights), x), [30, 10, 40, 20])


def test_median_of_ties_takes_the_order_statistics_it_averages():
    np.testing.assert_allclose(grad(fnp.median, [1.0, 1.0, 1.0, 5.0]), [0, 0.5, 0.5, 0])


# --- kinks and zeros ---------------------------------------------------------------------------
def test_abs_has_slope_zero_at_zero():
    np.testing.assert_array_equal(grad(lambda x: fnp.sum(fnp.abs(x)), [0.0, -2.0, 3.0]), [0, -1, 1])
    np.testing.assert_array_equal(fwd(fnp.abs, [0.0], [1.0]), [0.0])


def test_sqrt_has_an_infinite_slope_at_zero():
    assert grad(fnp.sqrt, 0.0) == np.inf
    assert fwd(fnp.sqrt, 0.0, 1.0) == np.inf


def test_norm_has_slope_zero_at_the_zero_vector():
    np.testing.assert_array_equal(grad(fnp.linalg.norm, [0.0, 0.0, 0.0]), [0, 0, 0])
    np.testing.assert_array_equal(fwd(fnp.linalg.norm, [0.0, 0.0], [1.0, 2.0]), 0.0)
    np.testing.assert_array_equal(grad(lambda x: fnp.linalg.norm(x, 3), [0.0, 0.0]), [0, 0])
    np.testing.assert_allclose(grad(fnp.linalg.norm, [3.0, 4.0]), [0.6, 0.8])


def test_clip_passes_the_slope_at_its_boundaries():
    np.testing.assert_array_equal(grad(lambda x: fnp.sum(fnp.clip(x, 0.0, 1.0)), [0.0, 1.0, 2.0]),
                                  [1, 1, 0])


# --- the where NaN trap ------------------------------------------------------------------------
def test_where_nan_trap_and_the_double_where_recipe():
    x = [0.0, 2.0]

    def naive(x):  # log(0) = -inf sits in the branch not taken; its slope 1/0 still meets 0
        return fnp.sum(fnp.where(x > 0, fnp.log(x), 0.0))

    def double_where(x):  # make the untaken branch's input safe first
        safe = fnp.where(x > 0, x, 1.0)
        return fnp.sum(fnp.where(x > 0, fnp.log(safe), 0.0))

    assert np.isnan(grad(naive, x)[0])
    np.testing.assert_array_equal(grad(double_where, x), [0.0, 0.5])


# --- empty and 0-d arrays ----------------------------------------------------------------------
def test_empty_arrays_have_empty_gradients():
    for f in (lambda x: fnp.sum(x ** 2), lambda x: fnp.sum(fnp.sort(x)),
              lambda x: fnp.sum(fnp.cumsum(x)), lambda x: fnp.sum(fnp.exp(x) @ fnp.ones((0, 2)))):
        g = fg.grad(f)(np.zeros(0))
        assert g.shape == (0,) and g.dtype == np.float64


def test_zero_dimensional_arrays_stay_zero_dimensional():
    x = np.array(0.5)
    for f in (fnp.sin, fnp.sum, fnp.max, lambda x: fnp.cumsum(x)[0], lambda x: fnp.linalg.norm(x)):
        g = fg.grad(f)(x)
        assert g.shape == () and np.isfinite(g)
    assert fnp.sum(np.array(2.0)).shape == ()


def test_sum_and_prod_over_an_empty_axis_are_their_identities():
    x = np.zeros((2, 0))
    np.testing.assert_array_equal(fnp.sum(x, axis=1), [0.0, 0.0])
    np.testing.assert_array_equal(fnp.prod(x, axis=1), [1.0, 1.0])
    g = fg.grad(lambda x: fnp.sum(fnp.sum(x, axis=1) + fnp.prod(x, axis=1)))(x)
    assert g.shape == (2, 0)


def test_mean_over_an_empty_axis_is_nan_but_the_gradient_is_empty():
    x = np.zeros((2, 0))
    assert np.all(np.isnan(np.asarray(fnp.mean(x, axis=1))))
    assert fg.grad(lambda x: fnp.sum(fnp.mean(x, axis=1)))(x).shape == (2, 0)


def test_max_and_quantiles_of_an_empty_axis_raise_as_numpy_does():
    with pytest.raises(ValueError, match="zero-size array"):
        fnp.max(np.zeros((2, 0)), axis=1)
    with pytest.raises(ValueError, match="empty axis"):
        fnp.median(np.zeros((2, 0)), axis=1)
