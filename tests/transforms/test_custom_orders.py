"""Custom rules stand for the body at every order, as in JAX: the rule is what the second
derivative differentiates, bodies calling code outside funcgrad work under grad(grad),
custom_jvp runs its rule (not its body) under grad, and rules hold under threads.

Expected values are closed forms, and were recorded from JAX 0.10 (the live comparisons
skip where JAX is not installed)."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:  # CI installs no JAX: closed forms and recorded values still apply
    jax = None

try:  # "code outside funcgrad": SciPy's erf where installed, else the math module's
    from scipy.special import erf as outside_erf
except ImportError:
    outside_erf = np.vectorize(math.erf)

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is not installed (not in CI)")
X = 0.3
ERF_SLOPE = 2 / np.sqrt(np.pi)


def sin_with_doubling_rule(lib):
    """f = sin, declared f' := 2 f (not cos): every order must use the rule."""
    f = lib.custom_vjp(lambda x: lib_np(lib).sin(x))
    f.defvjp(lambda x: (f(x), f(x)), lambda ans, g: (g * 2 * ans,))
    return f


def lib_np(lib):
    return fnp if lib is fg else jnp


def test_custom_vjp_second_order_differentiates_the_rule():
    f = sin_with_doubling_rule(fg)
    # f' = 2f, so f'' = 2f' = 4f = 4 sin(0.7) (recorded JAX: 2.576870748950764); the body's
    # derivative would give 2 cos(0.7) = 1.5297
    assert np.isclose(fg.grad(fg.grad(f))(0.7), 4 * np.sin(0.7), rtol=1e-12)
    assert np.isclose(fg.grad(fg.grad(f))(0.7), 2.576870748950764, rtol=1e-12)
    assert np.isclose(fg.grad(fg.grad(fg.grad(f)))(0.7), 8 * np.sin(0.7), rtol=1e-12)


@needs_jax
def test_custom_vjp_second_order_matches_live_jax():
    ours = fg.grad(fg.grad(sin_with_doubling_rule(fg)))(0.7)
    theirs = jax.grad(jax.grad(sin_with_doubling_rule(jax)))(0.7)
    assert np.isclose(float(ours), float(theirs), rtol=1e-12)


def _erf_vjp(lib):
    np_ = lib_np(lib)

    @lib.custom_vjp
    def erf(x):
        return np_.asarray(outside_erf(np.asarray(x)))

    erf.defvjp(lambda x: (erf(x), x),
               lambda x, g: (g * ERF_SLOPE * np_.exp(-x ** 2),))
    return erf


def _erf_jvp(lib, log):
    np_ = lib_np(lib)

    @lib.custom_jvp
    def erf(x):
        log.append("body")
        return np_.asarray(outside_erf(np.asarray(x)))

    @erf.defjvp
    def erf_jvp(primals, tangents):
        log.append("rule")
        (x,), (t,) = primals, tangents
        return erf(x), t * ERF_SLOPE * np_.exp(-x ** 2)

    return erf


def test_custom_vjp_body_outside_funcgrad_under_second_order():
    erf = _erf_vjp(fg)
    assert np.isclose(fg.grad(erf)(X), ERF_SLOPE * np.exp(-X ** 2))
    # d2/dx2 erf = -2x * 2/sqrt(pi) exp(-x^2); recorded JAX: -0.6187565457713778
    assert np.isclose(fg.grad(fg.grad(erf))(X), -2 * X * ERF_SLOPE * np.exp(-X ** 2))
    assert np.isclose(fg.grad(fg.grad(erf))(X), -0.6187565457713778, rtol=1e-12)


def test_custom_jvp_body_outside_funcgrad_under_second_order_and_call_order():
    log = []
    erf = _erf_jvp(fg, log)
    assert np.isclose(fg.grad(erf)(X), ERF_SLOPE * np.exp(-X ** 2))
    # the rule runs and calls the function one level down, where the body runs: the body
    # never runs first (JAX prints "called rule", "called body")
    assert log == ["rule", "body"]
    log.clear()
    assert np.isclose(fg.grad(fg.grad(erf))(X), -0.6187565457713778, rtol=1e-12)
    assert log == ["rule", "rule", "body"]
    log.clear()
    out, t = fg.jvp(erf, (X,), (1.0,))
    assert np.isclose(t, ERF_SLOPE * np.exp(-X ** 2)) and log == ["rule", "body"]


@needs_jax
def test_custom_jvp_call_order_matches_live_jax():
    ours, theirs = [], []
    fg.grad(fg.grad(_erf_jvp(fg, ours)))(X)
    jax.grad(jax.grad(_erf_jvp(jax, theirs)))(X)
    assert ours == theirs


def test_checkpoint_around_a_custom_call_under_second_order():
    erf = _erf_vjp(fg)
    block = fg.checkpoint(lambda x: erf(x) * 2.0)
    assert np.isclose(fg.grad(block)(X), 2 * ERF_SLOPE * np.exp(-X ** 2))
    assert np.isclose(fg.grad(fg.grad(block))(X), 2 * -0.6187565457713778, rtol=1e-12)
    # and the rule, not the body, is what checkpoint's recomputation differentiates
    f = sin_with_doubling_rule(fg)
    remat = fg.checkpoint(lambda x: f(x) * 1.0)
    assert np.isclose(fg.grad(fg.grad(remat))(0.7), 4 * np.sin(0.7), rtol=1e-12)


def test_custom_jvp_rule_is_transposed_for_reverse_mode_at_every_order():
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):  # f' := 3 f, deliberately not cos
        (x,), (t,) = primals, tangents
        out = f(x)
        return out, 3.0 * out * t

    assert np.isclose(fg.grad(f)(0.4), 3 * np.sin(0.4))
    assert np.isclose(fg.grad(fg.grad(f))(0.4), 9 * np.sin(0.4))
    assert np.isclose(fg.jvp(fg.grad(f), (0.4,), (1.0,))[1], 9 * np.sin(0.4))
    x = fnp.array([0.1, 0.2])
    np.testing.assert_allclose(fg.jacrev(f)(x), np.diag(3 * np.sin([0.1, 0.2])))


def test_defjvps_one_rule_per_argument():
    @fg.custom_jvp
    def f(x, y):
        return fnp.sin(x) * y

    f.defjvps(lambda t, ans, x, y: fnp.cos(x) * t * y, lambda t, ans, x, y: fnp.sin(x) * t)
    gx, gy = fg.grad(f, argnums=(0, 1))(0.5, 2.0)
    assert np.isclose(gx, np.cos(0.5) * 2.0) and np.isclose(gy, np.sin(0.5))
    out, t = fg.jvp(f, (0.5, 2.0), (1.0, 1.0))
    assert np.isclose(t, np.cos(0.5) * 2.0 + np.sin(0.5))

    @fg.custom_jvp
    def g(x, y):
        return x * y

    g.defjvps(None, lambda t, ans, x, y: x * t)  # no dependence on x declared
    assert fg.grad(g, argnums=(0, 1))(3.0, 4.0) == (0.0, 3.0)
    with pytest.raises(TypeError, match="defjvps"):
        g.defjvps()


@needs_jax
def test_defjvps_matches_live_jax():
    def make(lib):
        np_ = lib_np(lib)
        f = lib.custom_jvp(lambda x, y: np_.sin(x) * y)
        f.defjvps(lambda t, ans, x, y: np_.cos(x) * t * y * 1.5,
                  lambda t, ans, x, y: np_.sin(x) * t)
        return f
    ours = fg.grad(make(fg), argnums=(0, 1))(0.5, 2.0)
    theirs = jax.grad(make(jax), argnums=(0, 1))(0.5, 2.0)
    np.testing.assert_allclose([float(v) for v in ours], [float(v) for v in theirs])


def test_jvp_of_custom_vjp_is_a_type_error_as_in_jax():
    f = sin_with_doubling_rule(fg)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff \\(jvp\\) to a "
                                        "custom_vjp function"):
        fg.jvp(f, (0.7,), (1.0,))
    with pytest.raises(TypeError, match="custom_vjp"):
        fg.jacfwd(f)(0.7)


def test_jvp_of_custom_vjp_runs_fwd_first_and_says_jaxs_words():
    # JAX 0.10 prints "called f_fwd!", "called f!", then the one-sentence error
    calls = []
    f = fg.custom_vjp(lambda x: calls.append("f") or fnp.sin(x))
    f.defvjp(lambda x: calls.append("f_fwd") or (f(x), fnp.cos(x)),
             lambda cos_x, g: (cos_x * g,))
    with pytest.raises(TypeError) as err:
        fg.jvp(f, (3.0,), (1.0,))
    assert str(err.value) == "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
    assert "custom_jvp" in "".join(err.value.__notes__)  # the fix, beside the message
    assert calls == ["f_fwd", "f"]


def test_custom_jvp_wrongly_shaped_tangent_is_blamed_on_the_jvp_rule_under_grad():
    @fg.custom_jvp
    def f(x):
        return fnp.sum(x)

    f.defjvp(lambda p, t: (f(p[0]), t[0]))  # tangent of x's shape for a scalar output
    for transform in (fg.grad(f), lambda x: fg.jvp(f, (x,), (fnp.ones(3),))):
        with pytest.raises(ValueError, match="jvp rule returned a tangent of shape \\(3,\\) "
                                             "for output 0 of shape \\(\\)"):
            transform(fnp.ones(3))


def test_custom_vjp_from_many_threads_at_once():
    """No process-wide marker: every thread's gradient uses the rule (64 of them)."""
    f = sin_with_doubling_rule(fg)
    results = {}
    start = threading.Barrier(8)

    def work(k):
        start.wait()
        for j in range(8):
            x = 0.1 + 0.01 * (8 * k + j)
            results[8 * k + j] = (x, float(fg.grad(fg.grad(f))(x)), float(fg.grad(f)(x)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 64
    for x, second, first in results.values():
        assert np.isclose(first, 2 * np.sin(x)) and np.isclose(second, 4 * np.sin(x))
