"""The names jax.numpy offers beyond the sweep's standard cases: functional writers refusing
to write in place, data-dependent shapes, files and buffers, vectorize's signatures, and
gradients against JAX (skipped without it; the sweep checks them against finite
differences everywhere)."""
from __future__ import annotations

import io

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

rng = np.random.default_rng(7)


@pytest.mark.parametrize("call", [
    lambda: fnp.put(fnp.zeros(3), [0], 1.0),
    lambda: fnp.place(fnp.zeros(3), [True, False, True], [1.0]),
    lambda: fnp.fill_diagonal(fnp.zeros((2, 2)), 1.0),
    lambda: fnp.put_along_axis(fnp.zeros((2, 2)), np.array([[0], [1]]), 1.0, 1),
])
def test_writers_refuse_to_write_in_place_and_name_the_fix(call):
    with pytest.raises(ValueError, match="inplace=False"):
        call()


def test_put_follows_numpys_rules_for_repeats_and_modes():
    expected = np.zeros(5)
    np.put(expected, [0, 7, 0], [1.0, 2.0, 3.0], mode="wrap")
    got = fnp.put(fnp.zeros(5), [0, 7, 0], fnp.array([1.0, 2.0, 3.0]), mode="wrap", inplace=False)
    np.testing.assert_array_equal(np.asarray(got), expected)
    # the overwritten value gets no gradient, the last write gets it all
    g = fg.grad(lambda v: fnp.sum(fnp.put(fnp.zeros(5), [0, 7, 0], v, mode="wrap",
                                          inplace=False) * np.arange(1.0, 6.0)))(np.ones(3))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 3.0, 1.0])


def test_trim_zeros_values_and_gradient():
    x = np.array([0.0, 0.0, 1.5, 0.0, -2.0, 0.0])
    for trim in ("f", "b", "fb"):
        np.testing.assert_array_equal(np.asarray(fnp.trim_zeros(x, trim)), np.trim_zeros(x, trim))
    g = fg.grad(lambda v: fnp.sum(fnp.trim_zeros(v) * 3.0))(x)
    np.testing.assert_array_equal(np.asarray(g), [0.0, 0.0, 3.0, 3.0, 3.0, 0.0])


def test_trim_zeros_refuses_vmap():
    with pytest.raises(ValueError, match="vmap"):
        fg.vmap(fnp.trim_zeros)(np.array([[0.0, 1.0], [1.0, 0.0]]))


def test_save_load_round_trip_and_buffers(tmp_path):
    x = rng.standard_normal(4)
    buf = io.BytesIO()
    fnp.save(buf, fnp.array(x))
    buf.seek(0)
    loaded = fnp.load(buf)
    assert isinstance(loaded, fnp.ndarray)
    np.testing.assert_array_equal(np.asarray(loaded), x)
    path = tmp_path / "x.bin"
    x.tofile(path)
    np.testing.assert_array_equal(np.asarray(fnp.fromfile(path)), x)
    np.testing.assert_array_equal(np.asarray(fnp.frombuffer(x.tobytes())), x)
    np.testing.assert_array_equal(np.asarray(fnp.fromiter(iter(x), float)), x)
    np.testing.assert_array_equal(np.asarray(fnp.fromstring("1 2.5", sep=" ")), [1.0, 2.5])
    np.testing.assert_array_equal(np.asarray(fnp.from_dlpack(x)), x)


def test_vectorize_with_a_signature_and_excluded_arguments():
    def weighted(a, b, scale):
        return fnp.sum(a * b) * scale
    f = fnp.vectorize(weighted, signature="(n),(n)->()", excluded={2})
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    np.testing.assert_allclose(np.asarray(f(a, b, 2.0)), 2.0 * (a @ b))
    g = fg.grad(lambda b: fnp.sum(f(a, b, 2.0)))(b)
    np.testing.assert_allclose(np.asarray(g), 2.0 * a.sum(axis=(0, 1)))
    with pytest.raises(ValueError, match="signature"):
        fnp.vectorize(weighted, signature="(n)->")(a)


def test_i0_slope_is_i1():
    x = np.array([0.0, 0.3, -2.0, 7.5, 40.0])
    # I1 from its power series sum (x/2)^(2k+1) / (k! (k+1)!)
    k = np.arange(80)
    log_fact = np.cumsum(np.log(np.maximum(np.arange(81), 1)))
    terms = lambda v: np.exp((2 * k + 1) * np.log(np.abs(v) / 2 + 1e-300) - log_fact[k] - log_fact[k + 1])  # noqa: E731
    i1 = np.array([np.sign(v) * terms(v).sum() for v in x])
    g = fg.vmap(fg.grad(fnp.i0))(x)
    np.testing.assert_allclose(np.asarray(g), i1, rtol=1e-12, atol=1e-300)


def test_frexp_ldexp_modf_divmod_match_numpy():
    x = rng.standard_normal(5) * 100
    for got, expected in zip(fnp.frexp(x), np.frexp(x)):
        np.testing.assert_array_equal(np.asarray(got), expected)
    for got, expected in zip(fnp.modf(x), np.modf(x)):
        np.testing.assert_array_equal(np.asarray(got), expected)
    for got, expected in zip(fnp.divmod(x, 7.0), np.divmod(x, 7.0)):
        np.testing.assert_array_equal(np.asarray(got), expected)
    np.testing.assert_array_equal(np.asarray(fnp.ldexp(x, 3)), np.ldexp(x, 3))
    with pytest.raises(TypeError, match="integers"):
        fnp.ldexp(x, 0.5)


def _jax():
    jax = pytest.importorskip("jax", reason="JAX is the oracle for the functional model")
    jax.config.update("jax_enable_x64", True)
    return jax


JAX_CASES = {
    "unwrap": (lambda np_, x: np_.sum(np_.unwrap(x * 4) * np.arange(6.0)), 6),
    "polyfit": (lambda np_, y: np_.sum(np_.polyfit(np.linspace(0, 1, 6), y, 2) * np.arange(3.0)), 6),
    "roots": (lambda np_, p: np_.sum(np_.abs(np_.roots(p + np.array([1.0, -3.0, 2.0, 0.5]))) ** 2), 4),
    "poly": (lambda np_, r: np_.sum(np_.poly(r) * np.arange(5.0)), 4),
    "polydiv": (lambda np_, u: np_.sum(np_.polydiv(u, np.array([1.0, 0.5]))[0] * np.arange(5.0)), 6),
    "geomspace": (lambda np_, a: np_.sum(np_.geomspace(np_.exp(a[0]), np_.exp(a[1]) + 2.0, 5)), 2),
    "vander": (lambda np_, x: np_.sum(np_.vander(x, 4) * np.arange(12.0).reshape(3, 4)), 3),
    "insert": (lambda np_, x: np_.sum(np_.insert(x, np.array([1, 2]), x[:2] * 3) * np.arange(7.0)), 5),
    "i0": (lambda np_, x: np_.sum(np_.i0(x * 3)), 4),
    "block": (lambda np_, x: np_.sum(np_.block([[x[:2], x[2:4]], [x[1:5]]]) ** 2 * np.arange(4.0)), 5),
    "cumulative_prod": (lambda np_, x: np_.sum(np_.cumulative_prod(x, include_initial=True)), 4),
    "matvec": (lambda np_, x: np_.sum(np_.matvec(np_.reshape(x, (2, 2)), x[:2]) ** 2), 4),
    "apply_along_axis": (lambda np_, x: np_.sum(np_.apply_along_axis(
        lambda r: r * r[0], 1, np_.reshape(x, (2, 3)))), 6),
    "piecewise": (lambda np_, x: np_.sum(np_.piecewise(x, [x < 0], [lambda v: v ** 3, lambda v: np_.sin(v)])), 5),
}


@pytest.mark.parametrize("name", sorted(JAX_CASES))
def test_gradients_match_jax(name):
    jax = _jax()
    f, n = JAX_CASES[name]
    x = rng.standard_normal(n) * 0.5
    got = fg.value_and_grad(lambda v: f(fnp, v))(x)
    expected = jax.value_and_grad(lambda v: f(jax.numpy, v))(jax.numpy.asarray(x))
    np.testing.assert_allclose(float(got[0]), float(expected[0]), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(expected[1]), rtol=1e-8, atol=1e-10)


def test_functions_that_read_values_are_refused_by_jit_with_its_clear_error():
    from .test_sweep import ALL_CASES, READS_VALUES
    for name in READS_VALUES:
        f, args = ALL_CASES[name][1 if name == "numpy.poly" else 0]  # poly: complex roots
        args = tuple(np.asarray(a) for a in args)

        def pullback(*a, f=f):
            out, vjp_fn = fg.vjp(f, *a)
            return vjp_fn(out)
        with pytest.raises(fg.ConcretizationTypeError):
            fg.jit(f)(*args)
            fg.jit(pullback)(*args)
