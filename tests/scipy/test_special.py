"""funcgrad.scipy.special's functions added for SciPy's names: values against SciPy, and
derivatives against float64 finite differences at first and second order, in both modes,
and under vmap."""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import special as fsp
from funcgrad.test_util import check_grads

sc = pytest.importorskip("scipy.special", reason="SciPy is the reference (an optional extra)")

rng = np.random.default_rng(0)
P = rng.uniform(1.2, 3.0, (2, 3))      # shape parameters
X = rng.uniform(0.4, 4.0, (2, 3))      # positive arguments
U = rng.uniform(0.1, 0.9, (2, 3))      # arguments in (0, 1)

# name: (funcgrad call of the differentiable arguments, SciPy call, those arguments)
CASES = {
    "gammainc": (lambda x: fsp.gammainc(P, x), lambda x: sc.gammainc(P, x), (X,)),
    "gammaincc": (lambda x: fsp.gammaincc(P, x), lambda x: sc.gammaincc(P, x), (X,)),
    "betainc": (lambda x: fsp.betainc(P, P[::-1], x), lambda x: sc.betainc(P, P[::-1], x), (U,)),
    "rgamma": (fsp.rgamma, sc.rgamma, (X - 1.9,)),
    "multigammaln": (lambda a: fsp.multigammaln(a, 3), lambda a: sc.multigammaln(a, 3), (X + 1.5,)),
    "jv": (lambda x: fsp.jv(1.5, x), lambda x: sc.jv(1.5, x), (X,)),
    "jn": (lambda x: fsp.jn(2, x), lambda x: sc.jn(2, x), (X,)),
    "j0": (fsp.j0, sc.j0, (X,)),
    "j1": (fsp.j1, sc.j1, (X,)),
    "yv": (lambda x: fsp.yv(0.5, x), lambda x: sc.yv(0.5, x), (X,)),
    "yn": (lambda x: fsp.yn(2, x), lambda x: sc.yn(2, x), (X,)),
    "y0": (fsp.y0, sc.y0, (X,)),
    "y1": (fsp.y1, sc.y1, (X,)),
    "iv": (lambda x: fsp.iv(2.5, x), lambda x: sc.iv(2.5, x), (X,)),
    "ive": (lambda x: fsp.ive(2.5, x), lambda x: sc.ive(2.5, x), (X,)),
    "erf_complex": (fsp.erf, sc.erf, (U + 1j * X / 4,)),
    "erfc_complex": (fsp.erfc, sc.erfc, (U - 1j * X / 4,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_scipy(name):
    f, reference, args = CASES[name]
    np.testing.assert_allclose(np.asarray(f(*args)), reference(*args), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(c for c in CASES if "complex" not in c))
def test_derivatives_match_finite_differences(name):
    f, _, args = CASES[name]
    check_grads(f, args, order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("name", sorted(c for c in CASES if "complex" not in c))
def test_vmap_equals_a_loop(name):
    f, _, args = CASES[name]
    g = fg.grad(lambda x: fnp.sum(f(x)))
    batched = fg.vmap(g)(args[0])
    looped = np.stack([np.asarray(g(row)) for row in args[0]])
    np.testing.assert_allclose(np.asarray(batched), looped, rtol=1e-12)


def test_closed_forms():
    x = np.array([0.5, 2.0])
    # P(1, x) = 1 - exp(-x); its slope exp(-x); I_x(1, b) = 1 - (1 - x)^b
    np.testing.assert_allclose(fsp.gammainc(1.0, x), -np.expm1(-x), rtol=1e-14)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(fsp.gammainc(1.0, x)))(x), np.exp(-x))
    np.testing.assert_allclose(fsp.betainc(1.0, 3.0, U), 1 - (1 - U) ** 3, rtol=1e-13)
    # Bessel: J0' = -J1, Y0' = -Y1, I0' = I1, and d/dx [x J1] = x J0
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(fsp.j0(x)))(x), -sc.j1(x), rtol=1e-13)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(fsp.y0(x)))(x), -sc.y1(x), rtol=1e-13)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(fsp.iv(0.0, x)))(x), sc.i1(x), rtol=1e-13)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(x * fsp.j1(x)))(x), x * sc.j0(x), rtol=1e-13)
    # gammasgn is piecewise constant: no slope
    assert fsp.gammasgn(-1.5).item() == 1.0 and fsp.gammasgn(-0.5).item() == -1.0
    np.testing.assert_array_equal(fg.grad(lambda x: fnp.sum(fsp.gammasgn(x) * x))(x), [1.0, 1.0])
    np.testing.assert_allclose(fsp.multigammaln(2.5, 2), 0.5 * math.log(math.pi)
                               + math.lgamma(2.5) + math.lgamma(2.0), rtol=1e-14)


def test_erf_of_complex_numbers_is_holomorphic():
    """erf's JVP at a complex point is f'(z) t with f'(z) = 2 / sqrt(pi) exp(-z^2)."""
    z = np.array([0.3 + 0.4j, -1.0 + 0.2j])
    slope = 2 / np.sqrt(np.pi) * np.exp(-z * z)
    t = np.array([1.0 - 0.5j, 0.25 + 1j])
    _, t_out = fg.jvp(fsp.erf, (z,), (t,))
    np.testing.assert_allclose(np.asarray(t_out), slope * t, rtol=1e-13)
    _, t_out = fg.jvp(fsp.erfc, (z,), (t,))
    np.testing.assert_allclose(np.asarray(t_out), -slope * t, rtol=1e-13)
    # the VJP is the same linear map transposed in the functional model's convention: as
    # exp's, whose slope at z is exp(z)
    ct = np.array([0.7 + 0.1j, -0.2 + 0.9j])
    exp_vjp = np.asarray(fg.vjp(fnp.exp, z)[1](ct)[0])
    conjugates = np.allclose(exp_vjp, ct * np.conj(np.exp(z)))
    expected = ct * (np.conj(slope) if conjugates else slope)
    np.testing.assert_allclose(np.asarray(fg.vjp(fsp.erf, z)[1](ct)[0]), expected, rtol=1e-13)


def test_erf_of_complex_numbers_follows_jaxs_convention():
    """JAX has no complex erf; its convention, read off exp (vjp(ct) = ct * exp(z)), is the
    one erf's VJP must follow: ct * erf'(z)."""
    jax = pytest.importorskip("jax", reason="JAX is an optional oracle (not installed in CI)")
    jax.config.update("jax_enable_x64", True)
    z = np.array([0.3 + 0.4j, -1.0 + 0.2j])
    ct = np.array([0.7 + 0.1j, -0.2 + 0.9j])
    jax_exp = np.asarray(jax.vjp(jax.numpy.exp, z)[1](ct)[0])
    np.testing.assert_allclose(jax_exp, ct * np.exp(z), rtol=1e-13)  # JAX: no conjugation
    if not np.allclose(np.asarray(fg.vjp(fnp.exp, z)[1](ct)[0]), jax_exp):
        pytest.skip("funcgrad's functional model does not follow JAX's complex convention yet "
                    "(exp's VJP differs from JAX's too)")
    slope = 2 / np.sqrt(np.pi) * np.exp(-z * z)
    np.testing.assert_allclose(np.asarray(fg.vjp(fsp.erf, z)[1](ct)[0]), ct * slope, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(fg.vjp(fsp.erfc, z)[1](ct)[0]), -ct * slope, rtol=1e-13)


# (a, x) across the three ways the derivatives in a are computed: the series, the
# Gauss-Laguerre quadrature of the upper tail, the asymptotic series (x >= 30, a near x)
GAMMA_POINTS = [(0.1, 0.001), (0.5, 0.3), (2.0, 3.0), (10.0, 2.0), (50.0, 45.0), (1.0, 9.0),
                (0.5, 20.0), (2.5, 60.0), (40.0, 43.0), (300.0, 330.0)]


def _gammainc_in_a(a, x, order, h=1e-4):
    """d^k/da^k P(a, x) by central differences of SciPy, on Q where Q is the small one."""
    upper = sc.gammaincc(a, x) < 0.5
    f = (lambda a: -sc.gammaincc(a, x)) if upper else (lambda a: sc.gammainc(a, x))
    if order == 1:
        return (f(a + h) - f(a - h)) / (2 * h)
    return (f(a + h) - 2 * f(a) + f(a - h)) / (h * h)


@pytest.mark.parametrize("a, x", GAMMA_POINTS)
def test_gammainc_is_differentiable_in_a_to_second_order(a, x):
    first = fg.grad(fsp.gammainc)
    second = fg.grad(first)
    np.testing.assert_allclose(first(a, x), _gammainc_in_a(a, x, 1, h=1e-6 * max(a, 1)), rtol=1e-6)
    np.testing.assert_allclose(second(a, x), _gammainc_in_a(a, x, 2, h=1e-4 * max(a, 1)), rtol=2e-4)
    np.testing.assert_allclose(fg.grad(fg.grad(fsp.gammaincc))(a, x), -second(a, x), rtol=1e-14)
    # forward mode gives the same numbers
    np.testing.assert_allclose(fg.jacfwd(fg.jacfwd(fsp.gammainc))(a, x), second(a, x), rtol=1e-12)


def test_gammainc_derivatives_in_a_match_mpmath_to_many_digits():
    mp = pytest.importorskip("mpmath", reason="mpmath is an optional high-precision oracle")
    mp.mp.dps = 40
    for a, x in GAMMA_POINTS:
        upper = sc.gammaincc(a, x) < 0.5
        f = ((lambda t: -mp.gammainc(t, x, mp.inf, regularized=True)) if upper
             else (lambda t: mp.gammainc(t, 0, x, regularized=True)))
        np.testing.assert_allclose(fg.grad(fsp.gammainc)(a, x), float(mp.diff(f, a, 1)), rtol=1e-11)
        np.testing.assert_allclose(fg.grad(fg.grad(fsp.gammainc))(a, x), float(mp.diff(f, a, 2)),
                                   rtol=1e-9)


def test_gammainc_mixed_derivatives_and_vmap():
    a, x = P[0], X[0]
    # d/dx of d/da and of d2/da2, against finite differences in x, both modes
    check_grads(lambda x: fg.grad(lambda a: fnp.sum(fsp.gammainc(a, x)))(a), (x,), order=1,
                modes=("rev", "fwd"))
    check_grads(lambda x: fg.grad(fg.grad(fsp.gammainc))(1.7, x), (2.5,), order=1,
                modes=("rev", "fwd"))
    batched = fg.vmap(fg.grad(fg.grad(fsp.gammainc)))(a, x)
    np.testing.assert_allclose(batched, [fg.grad(fg.grad(fsp.gammainc))(u, v) for u, v in zip(a, x)],
                               rtol=1e-13)


# (a, b, x) on both sides of x = (a + 1) / (a + b + 2), where I_x(a, b) = 1 - I_(1-x)(b, a)
BETA_POINTS = [(0.5, 0.5, 0.3), (2.0, 3.0, 0.5), (2.0, 3.0, 0.9), (0.1, 5.0, 0.01),
               (30.0, 40.0, 0.45), (5.0, 0.3, 0.99), (0.01, 0.02, 0.5), (1.5, 2.5, 0.2)]


@pytest.mark.parametrize("a, b, x", BETA_POINTS)
def test_betainc_is_differentiable_in_a_and_b(a, b, x):
    ga, gb, gx = fg.grad(fsp.betainc, argnums=(0, 1, 2))(a, b, x)
    h = 1e-6
    np.testing.assert_allclose(ga, (sc.betainc(a + h, b, x) - sc.betainc(a - h, b, x)) / (2 * h),
                               rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(gb, (sc.betainc(a, b + h, x) - sc.betainc(a, b - h, x)) / (2 * h),
                               rtol=1e-6, atol=1e-10)
    # forward mode, and the mixed derivatives with x (d/dx d/da), against finite differences
    tangents = fg.jvp(lambda a, b: fsp.betainc(a, b, x), (a, b), (1.0, 0.0))[1]
    np.testing.assert_allclose(tangents, ga, rtol=1e-13)
    check_grads(lambda x: fg.grad(fsp.betainc, argnums=(0, 1))(a, b, x), (x,), order=1,
                modes=("rev", "fwd"))


def test_betainc_closed_forms_in_a_and_b():
    x = U
    # I_x(a, 1) = x^a: d/da = x^a log x; I_x(1, b) = 1 - (1 - x)^b: d/db = -(1 - x)^b log(1 - x)
    np.testing.assert_allclose(fg.grad(lambda a: fnp.sum(fsp.betainc(a, 1.0, x)))(P),
                               x ** P * np.log(x), rtol=1e-13)
    np.testing.assert_allclose(fg.grad(lambda b: fnp.sum(fsp.betainc(1.0, b, x)))(P),
                               -(1 - x) ** P * np.log1p(-x), rtol=1e-13)
    # constant in a and b at the ends of [0, 1]; NaN outside the domain, never a number
    assert fg.grad(fsp.betainc)(2.0, 3.0, 0.0) == 0.0 and fg.grad(fsp.betainc)(2.0, 3.0, 1.0) == 0.0
    assert np.isnan(fg.grad(fsp.betainc)(-1.0, 3.0, 0.5))
    batched = fg.vmap(fg.grad(fsp.betainc, argnums=(0, 1)))(P[0], P[1], U[0])
    looped = [fg.grad(fsp.betainc, argnums=(0, 1))(a, b, u) for a, b, u in zip(P[0], P[1], U[0])]
    np.testing.assert_allclose(np.asarray(batched).T, np.asarray(looped), rtol=1e-13)


@pytest.mark.parametrize("a, b, x", BETA_POINTS)
def test_betainc_second_derivatives_in_a_and_b(a, b, x):
    """d2I/da2, d2I/da db and d2I/db2: central differences of the first derivatives (which
    the tests above check against SciPy), symmetric mixed partials, both modes, and the
    third-order mixed derivatives with x against finite differences."""
    def first(a, b):
        return np.array([float(g) for g in fg.grad(fsp.betainc, argnums=(0, 1))(a, b, x)])
    second = np.array([[float(fg.grad(fg.grad(fsp.betainc, argnums=i), argnums=j)(a, b, x))
                        for j in (0, 1)] for i in (0, 1)])
    h = 1e-5 * max(1.0, min(a, b))
    numeric = np.array([(first(a + h, b) - first(a - h, b)) / (2 * h),
                        (first(a, b + h) - first(a, b - h)) / (2 * h)])
    np.testing.assert_allclose(second, numeric, rtol=2e-6, atol=1e-9)
    np.testing.assert_allclose(second[0, 1], second[1, 0], rtol=1e-12)
    forward = fg.jvp(fg.grad(fsp.betainc), (a, b, x), (1.0, 0.0, 0.0))[1]
    np.testing.assert_allclose(forward, second[0, 0], rtol=1e-12)
    check_grads(lambda x: fg.hessian(fsp.betainc, argnums=(0, 1))(a, b, x), (x,), order=1,
                modes=("rev", "fwd"))


def test_betainc_second_derivatives_closed_forms():
    x = U
    # I_x(a, 1) = x^a: d2/da2 = x^a log(x)^2; I_x(1, b) = 1 - (1-x)^b: d2/db2 = -(1-x)^b log(1-x)^2
    np.testing.assert_allclose(fg.vmap(fg.grad(fg.grad(fsp.betainc)), (0, None, 0))(P.ravel(), 1.0, x.ravel()),
                               (x ** P * np.log(x) ** 2).ravel(), rtol=1e-12)
    dbb = fg.vmap(fg.grad(fg.grad(fsp.betainc, argnums=1), argnums=1), (None, 0, 0))(1.0, P.ravel(), x.ravel())
    np.testing.assert_allclose(dbb, (-(1 - x) ** P * np.log1p(-x) ** 2).ravel(), rtol=1e-12)


def test_betainc_derivatives_match_mpmath_to_many_digits():
    mp = pytest.importorskip("mpmath", reason="mpmath is an optional high-precision oracle")
    mp.mp.dps = 30
    for a, b, x in BETA_POINTS + [(200.0, 300.0, 0.4), (1000.0, 0.5, 0.9995)]:
        ga, gb = fg.grad(fsp.betainc, argnums=(0, 1))(a, b, x)
        np.testing.assert_allclose(ga, float(mp.diff(lambda t: mp.betainc(t, b, 0, x, regularized=True), a)),
                                   rtol=1e-11)
        np.testing.assert_allclose(gb, float(mp.diff(lambda t: mp.betainc(a, t, 0, x, regularized=True), b)),
                                   rtol=1e-11)
        regularized = lambda s, t: mp.betainc(s, t, 0, x, regularized=True)  # noqa: E731
        for i, j in ((0, 0), (0, 1), (1, 1)):
            got = fg.grad(fg.grad(fsp.betainc, argnums=i), argnums=j)(a, b, x)
            want = mp.diff(regularized, (a, b), (2 - i - j, i + j))
            np.testing.assert_allclose(float(got), float(want), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("f, arg", [(lambda a: fg.grad(fg.grad(fsp.gammainc))(a, 2.0), 0),
                                    (lambda a: fg.grad(fg.grad(fsp.betainc))(a, 2.0, 0.5), 0),
                                    (lambda b: fg.grad(fg.grad(fsp.betainc, argnums=1), argnums=0)(
                                        2.0, b, 0.5), 1),
                                    (lambda v: fsp.jv(v, 2.0), 0)])
def test_derivatives_not_available_raise_and_name_the_argument(f, arg):
    with pytest.raises((fg.FuncgradError, TypeError), match=f"argument {arg}|order"):
        fg.grad(f)(1.5)


def test_bad_arguments_name_the_fix():
    with pytest.raises(ValueError, match="positive integer"):
        fsp.multigammaln(3.0, 0)
    with pytest.raises(ValueError, match=r"greater than \(d - 1\) / 2"):
        fsp.multigammaln(0.5, 3)


def test_gammainc_derivative_in_a_matches_jax():
    """JAX differentiates gammainc once in a (igamma_grad_a); its values, recorded below, are
    checked here without JAX too."""
    a = np.array([0.5, 2.0, 10.0, 2.5]); x = np.array([0.3, 3.0, 2.0, 60.0])
    recorded = {(2.0, 3.0): -0.19742541957920232}
    np.testing.assert_allclose(fg.grad(fsp.gammainc)(2.0, 3.0), recorded[(2.0, 3.0)], rtol=1e-13)
    jax = pytest.importorskip("jax", reason="JAX is an optional oracle (not installed in CI)")
    jax.config.update("jax_enable_x64", True)
    theirs = jax.vmap(jax.grad(jax.scipy.special.gammainc))(a, x)
    np.testing.assert_allclose(fg.vmap(fg.grad(fsp.gammainc))(a, x), np.asarray(theirs),
                               rtol=1e-10, atol=1e-300)
