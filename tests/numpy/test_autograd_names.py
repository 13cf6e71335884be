"""Names and behaviours that HIPS autograd's tests and programs use (issue 9, item 2): each
checked against NumPy's value and a closed form or finite differences."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

rng = np.random.default_rng(3)


def test_r_and_c_join_traced_values_constants_and_ranges():
    x, c = rng.standard_normal(3), rng.standard_normal(4)
    np.testing.assert_array_equal(np.asarray(fnp.r_[x, c, 1:4]), np.r_[x, c, 1:4])
    np.testing.assert_array_equal(np.asarray(fnp.c_[x, x * 2]), np.c_[x, x * 2])
    # d/dx sum(r_[x, 2x, c]) = 3, and c_ of the same columns has the same gradient
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(fnp.r_[x, 2 * x, c]))(x), np.full(3, 3.0))
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(fnp.c_[x, 2 * x]))(x), np.full(3, 3.0))
    check_grads(lambda x: fnp.r_[x, x[:2] * x[1:]], (x,), order=2, modes=("rev", "fwd"))
    with pytest.raises(NotImplementedError, match="string directives"):
        fnp.r_["0,2", x]


def test_row_stack_is_vstack():
    a, b = rng.standard_normal(3), rng.standard_normal((2, 3))
    np.testing.assert_array_equal(np.asarray(fnp.row_stack([a, b])), np.vstack([a, b]))


def test_errstate_and_seterr_are_numpys():
    with fnp.errstate(divide="ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.isinf(float(fnp.divide(1.0, 0.0)))
    old = fnp.seterr(all="ignore")
    assert fnp.geterr()["divide"] == "ignore"
    fnp.seterr(**old)


@pytest.mark.parametrize("num", [0, 1, 5])
def test_linspace_is_differentiable_in_its_endpoints(num):
    np.testing.assert_allclose(np.asarray(fnp.linspace(1.2, 3.4, num)), np.linspace(1.2, 3.4, num))
    points = fg.jacobian(lambda ab: fnp.linspace(ab[0], ab[1], num))(np.array([1.2, -3.4]))
    t = np.linspace(0.0, 1.0, num)  # point k is (1 - t_k) a + t_k b
    np.testing.assert_allclose(np.asarray(points), np.stack([1 - t, t], axis=-1).reshape(num, 2))
    check_grads(lambda a, b: fnp.linspace(a, b, num), (1.2, 3.4), order=2, modes=("rev", "fwd"))


def test_linspace_of_arrays_with_axis_endpoint_and_retstep():
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    got, step = fg.vjp(lambda a: fnp.linspace(a, b, 4, endpoint=False, retstep=True, axis=1), a)[0]
    expected, expected_step = np.linspace(a, b, 4, endpoint=False, retstep=True, axis=1)
    np.testing.assert_allclose(np.asarray(got), expected)
    np.testing.assert_allclose(np.asarray(step), expected_step)


@pytest.mark.parametrize("name", ["mean", "sum", "prod", "max", "min", "var", "std"])
def test_reductions_over_lists_of_traced_values(name):
    f = getattr(fnp, name)
    a, b, c = 0.3, -1.2, 2.0
    np.testing.assert_allclose(float(f([a, b, c])), getattr(np, name)([a, b, c]))
    check_grads(lambda a, b, c: f([a, b, c]), (a, b, c), order=2, modes=("rev", "fwd"))


def test_array_concatenate_and_append_over_lists_of_traced_values():
    check_grads(lambda a, b: fnp.array([[a, b], [b, a * b]]), (0.5, -2.0), order=2)
    check_grads(lambda a, b: fnp.append([[a, b]], [[b, 1.0]], axis=0), (0.5, -2.0), order=2)
    check_grads(lambda a, b: fnp.concatenate([fnp.array([a]), fnp.array([b, a])]), (0.5, -2.0),
                order=2)
    # a list in place of an array is refused, as JAX does (tests/numpy/test_errors.py)
    with pytest.raises(TypeError, match="concatenate requires ndarray or scalar arguments"):
        fnp.concatenate([[0.5], [-2.0, 0.5]])


def test_where_takes_condition_as_a_keyword():
    x = rng.standard_normal(4)
    np.testing.assert_array_equal(np.asarray(fnp.where(condition=x > 0, x=x, y=0.0)),
                                  np.where(x > 0, x, 0.0))
    np.testing.assert_array_equal(fg.grad(lambda x: fnp.sum(fnp.where(condition=x > 0, x=x, y=0.0)))(x),
                                  (x > 0).astype(float))


def test_power_at_zero_is_autograds():
    """0 ** 0 is constant (slope 0 at every order); for y > 0 the slope of x ** y at 0 is
    y * 0 ** (y - 1), and of 0 ** y in y is 0 (log 0 times 0 ** y = 0)."""
    assert float(fg.grad(lambda x: x ** 0.0)(0.0)) == 0.0
    assert float(fg.grad(fg.grad(lambda x: x ** 0.0))(0.0)) == 0.0
    assert float(fg.grad(fg.grad(fg.grad(lambda x: fnp.power(x, 0.0))))(0.0)) == 0.0
    assert float(fg.grad(lambda x: x ** 2.0)(0.0)) == 0.0
    assert float(fg.grad(fg.grad(lambda x: x ** 2.0))(0.0)) == 2.0
    assert float(fg.grad(lambda y: 0.0 ** y)(2.0)) == 0.0


def test_std_of_one_value_has_slope_zero():
    assert float(fg.jvp(fnp.std, (2.0,), (1.0,))[1]) == 0.0
    assert float(fg.grad(fnp.std)(2.0)) == 0.0
    assert np.all(np.asarray(fg.grad(lambda x: fnp.sum(fnp.std(x, axis=0)))(np.ones((1, 3)))) == 0.0)
    check_grads(fnp.std, (rng.standard_normal(5),), order=2, modes=("rev", "fwd"))


def test_eigh_differentiates_the_triangle_it_reads():
    """numpy.linalg.eigh reads only the UPLO triangle: the gradient lands there alone."""
    a = rng.standard_normal((4, 4))
    for uplo, tri in (("L", np.tril), ("U", np.triu)):
        g = np.asarray(fg.grad(lambda a: fnp.linalg.eigh(a, uplo)[0][-1])(a))
        other = np.ones_like(a, dtype=bool) & ~tri(np.ones_like(a, dtype=bool))
        assert np.all(g[other] == 0.0)
        check_grads(lambda a: fnp.linalg.eigh(a, uplo)[0], (a,), order=2, modes=("rev", "fwd"))
        sym = tri(a) + tri(a, -1 if uplo == "L" else 1).T
        np.testing.assert_allclose(np.asarray(fnp.linalg.eigvalsh(a, uplo)), np.linalg.eigvalsh(sym))


def test_an_index_may_hold_tuples_as_numpy_reads_them():
    x = rng.standard_normal((4, 4, 3))
    np.testing.assert_array_equal(np.asarray(fnp.asarray(x)[(0, 1, 0), (3, 3, 2)]), x[(0, 1, 0), (3, 3, 2)])
    g = np.asarray(fg.grad(lambda x: fnp.sum(x[(0, 1, 0), (3, 3, 2)]))(x))
    expected = np.zeros_like(x)
    np.add.at(expected, ((0, 1, 0), (3, 3, 2)), 1.0)
    np.testing.assert_array_equal(g, expected)


def test_rfftn_and_irfftn_over_a_subset_of_axes():
    x = rng.standard_normal((4, 4, 4)) / 10
    check_grads(lambda x: fnp.fft.rfftn(x, axes=(0, 2))[(0, 1, 0), (3, 3, 2)], (x,), order=2)
    check_grads(lambda x: fnp.fft.irfftn(x, axes=(1, 2)), (x,), order=2)


@pytest.mark.parametrize("axes", [None, (0, 2), (1,)])
def test_rfftn_and_irfftn_of_odd_sizes(axes):
    # autograd refuses odd sizes (its test_rfftn_odd_not_implemented); the transpose rules
    # here hold for any size: finite differences at second order, and JAX's gradients
    x = rng.standard_normal((5, 3, 5)) / 10
    sizes = [x.shape[a] for a in (axes or (0, 1, 2))]
    spectrum = np.fft.rfftn(x, axes=axes)
    check_grads(lambda x: fnp.fft.rfftn(x, axes=axes), (x,), order=2, modes=("rev", "fwd"))
    check_grads(lambda y: fnp.fft.irfftn(y, s=sizes, axes=axes), (spectrum,), order=2,
                modes=("rev", "fwd"))
    jax = pytest.importorskip("jax", reason="JAX is the oracle; finite differences ran above")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def power(x, m):
        return m.sum(m.abs(m.fft.rfftn(x, axes=axes)) ** 3)

    def back(y, m):
        return m.sum(m.fft.irfftn(y, s=sizes, axes=axes) * x)

    np.testing.assert_allclose(np.asarray(fg.grad(lambda x: power(x, fnp))(x)),
                               np.asarray(jax.grad(lambda x: power(x, jnp))(x)), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(fg.grad(lambda y: back(y, fnp))(spectrum)),
                               np.asarray(jax.grad(lambda y: back(y, jnp))(spectrum)),
                               rtol=1e-10, atol=1e-15)


def test_version_is_numpys():
    assert fnp.__version__ == np.__version__
