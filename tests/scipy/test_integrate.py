"""funcgrad.scipy.integrate.odeint: values against SciPy and closed forms; the adjoint VJP
against finite differences (first and second order) in the initial state, times and
arguments; bad input."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.integrate import odeint
from funcgrad.test_util import check_grads

si = pytest.importorskip("scipy.integrate", reason="SciPy solves the ODE (an optional extra)")

TOL = {"rtol": 1e-11, "atol": 1e-11}
rng = np.random.default_rng(4)


def field(y, t, w, c):
    return -fnp.sqrt(t) * y + fnp.tanh(w * y) + c - 0.1 * fnp.mean(y ** 2)


Y0, T, W, C = rng.normal(size=3), np.linspace(0.1, 0.6, 4), rng.normal(size=3), rng.normal(size=3)


def test_values_match_scipy():
    ours = np.asarray(odeint(field, Y0, T, (W, C), **TOL))
    theirs = si.odeint(lambda y, t, w, c: np.asarray(field(y, t, w, c)), Y0, T, (W, C), **TOL)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_gradients_of_linear_decay_are_the_closed_form():
    t = np.array([0.0, 0.5, 2.0])
    f = lambda y0, k: fnp.sum(odeint(lambda y, s, k: -k * y, y0, t, (k,), **TOL)[1:])  # noqa: E731
    y0, k = np.array([1.5]), 0.7
    g_y0, g_k = fg.grad(f, argnums=(0, 1))(y0, k)
    np.testing.assert_allclose(g_y0, [np.exp(-k * 0.5) + np.exp(-k * 2.0)], rtol=1e-8)
    np.testing.assert_allclose(g_k, -1.5 * (0.5 * np.exp(-k * 0.5) + 2.0 * np.exp(-k * 2.0)),
                               rtol=1e-8)
    # moving the last time moves the solution at the rate of its derivative
    g_t = fg.grad(lambda t: odeint(lambda y, s: -k * y, y0, t, **TOL)[-1, 0])(t)
    np.testing.assert_allclose(g_t, [k * 1.5 * np.exp(-k * 2.0), 0.0, -k * 1.5 * np.exp(-k * 2.0)],
                               rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_adjoint_matches_finite_differences_to_second_order(which):
    args = [Y0, T, W, C]

    def f(x):
        full = list(args)
        full[which] = x
        return odeint(field, full[0], full[1], (full[2], full[3]), **TOL)
    check_grads(f, (args[which],), order=2, modes=("rev",), rtol=1e-4, atol=1e-6)


def test_tfirst_and_bad_input():
    ours = odeint(lambda t, y: -y, np.array([1.0]), np.array([0.0, 1.0]), tfirst=True, **TOL)
    np.testing.assert_allclose(np.asarray(ours)[1], [np.exp(-1.0)], rtol=1e-9)
    with pytest.raises(TypeError, match="args must be a tuple"):
        odeint(field, Y0, T, W)
    with pytest.raises(NotImplementedError, match="full_output"):
        odeint(field, Y0, T, (W, C), full_output=True)
    with pytest.raises(ValueError, match="one-dimensional"):
        odeint(field, np.ones((2, 2)), T, (W, C))


def test_vmap_of_the_gradient_equals_a_loop():
    t = np.array([0.0, 0.5, 1.0])

    def final(k):
        return odeint(lambda y, s, k: -k * y + fnp.sin(s), np.array([1.0]), t, (k,), **TOL)[-1, 0]
    ks = np.array([0.3, 1.0, 2.5])
    g = fg.grad(final)
    np.testing.assert_allclose(np.asarray(fg.vmap(g)(ks)), [np.asarray(g(k)) for k in ks],
                               rtol=1e-10)


def test_args_may_be_nested_containers_as_in_autograds_ode_net():
    """autograd's odeint takes a network's parameters as one argument: a list of (W, b)
    tuples (its ode_net example); dicts nest too."""
    def net(y, t, params):
        (w, b), scale = params["layers"][0], params["scale"]
        return fnp.tanh(w @ y + b) * scale

    w, b, scale = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), 1.3

    def solve(w, b, scale):
        return odeint(net, Y0, T, ({"layers": [(w, b)], "scale": scale},), **TOL)
    plain = lambda y, t: np.tanh(w @ y + b) * scale
    np.testing.assert_allclose(solve(w, b, scale), si.odeint(plain, Y0, T, **TOL), rtol=1e-9)
    check_grads(lambda w, b, s: fnp.sum(solve(w, b, s) ** 2), (w, b, scale), order=1,
                modes=("rev",), rtol=1e-5)
