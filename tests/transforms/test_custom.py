"""custom_vjp and custom_jvp: the custom rule is the one used (rules chosen to differ from the
true derivative, and call counters), under nesting, under vmap, with pytrees; bad rules
fail with errors that say what to fix."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads


def make_cube_with_fake_rule():
    """cube(x) = x**3 whose declared derivative is 2 * x (deliberately not 3 x**2), so any
    result can tell whether the rule or the body was differentiated."""
    calls = {"fwd": 0, "bwd": 0}

    @fg.custom_vjp
    def cube(x):
        return x ** 3

    def fwd(x):
        calls["fwd"] += 1
        return cube(x), x

    def bwd(x, ct):
        calls["bwd"] += 1
        return (ct * 2 * x,)

    cube.defvjp(fwd, bwd)
    return cube, calls


def test_custom_vjp_rule_is_used_by_grad_vjp_and_jacrev():
    cube, calls = make_cube_with_fake_rule()
    x = fnp.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(cube(x), np.asarray(x) ** 3)  # no transform: the body
    assert calls == {"fwd": 0, "bwd": 0}
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(cube(x)))(x), 2 * np.asarray(x))
    assert calls == {"fwd": 1, "bwd": 1}
    out, vjp_fn = fg.vjp(cube, x)
    np.testing.assert_allclose(vjp_fn(fnp.ones(3))[0], 2 * np.asarray(x))
    np.testing.assert_allclose(fg.jacrev(cube)(x), np.diag(2 * np.asarray(x)))


def test_nested_grad_differentiates_the_rule_itself():
    cube, _ = make_cube_with_fake_rule()
    # d/dx of the rule's 2x is 2, where the body would give 6x
    assert float(fg.grad(fg.grad(cube))(3.0)) == 2.0
    H = fg.jacrev(fg.jacrev(lambda x: fnp.sum(cube(x))))(fnp.array([1.0, 4.0]))
    np.testing.assert_allclose(H, 2 * np.eye(2))
    # hessian is forward over reverse, and a custom_vjp function has no forward rule: JAX
    # refuses it with a TypeError, and so does funcgrad
    with pytest.raises(TypeError, match="forward-mode autodiff"):
        fg.hessian(lambda x: fnp.sum(cube(x)))(fnp.array([1.0, 4.0]))


def test_custom_vjp_under_vmap_vmaps_the_rule_once():
    cube, calls = make_cube_with_fake_rule()
    xs = fnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    per_row = fg.vmap(fg.grad(lambda r: fnp.sum(cube(r))))(xs)
    np.testing.assert_allclose(per_row, 2 * np.asarray(xs))
    g = fg.grad(lambda xs: fnp.sum(fg.vmap(cube)(xs)))(xs)
    np.testing.assert_allclose(g, 2 * np.asarray(xs))
    assert calls["bwd"] == 2  # one vectorised call each time, not one per row


def test_custom_vjp_unmapped_argument_gets_the_summed_cotangent():
    @fg.custom_vjp
    def scale(x, s):
        return x * s

    scale.defvjp(lambda x, s: (x * s, (x, s)),
                 lambda res, ct: (ct * res[1] * 10, fnp.sum(ct * res[0]) * 10))
    xs = fnp.array([[1.0, 2.0], [3.0, 4.0]])
    s = fnp.array(0.5)
    gx, gs = fg.grad(lambda xs, s: fnp.sum(fg.vmap(scale, in_axes=(0, None))(xs, s)),
                     argnums=(0, 1))(xs, s)
    np.testing.assert_allclose(gx, np.full((2, 2), 5.0))
    assert float(gs) == pytest.approx(100.0)  # 10 * (1 + 2 + 3 + 4)


def test_custom_vjp_with_pytree_arguments_and_none_cotangent():
    @fg.custom_vjp
    def affine(params, x, label):
        return params["w"] * x + params["b"]

    def fwd(params, x, label):
        return affine(params, x, label), (params, x)

    def bwd(res, ct):
        params, x = res
        return {"w": ct * x, "b": ct}, ct * params["w"], None

    affine.defvjp(fwd, bwd)
    params = {"w": fnp.array(2.0), "b": fnp.array(1.0)}
    g_params, g_x = fg.grad(lambda p, x: affine(p, x, fnp.array(7.0)), argnums=(0, 1))(params, fnp.array(3.0))
    assert float(g_params["w"]) == 3.0 and float(g_params["b"]) == 1.0 and float(g_x) == 2.0


def test_clip_gradient_pattern():
    @fg.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, ct: (fnp.clip(ct, -1.0, 1.0),))
    g = fg.grad(lambda x: fnp.sum(clip_gradient(x) * fnp.array([5.0, -0.5, -3.0])))(fnp.zeros(3))
    np.testing.assert_allclose(g, [1.0, -0.5, -1.0])


def test_custom_vjp_errors():
    @fg.custom_vjp
    def f(x, y):
        return x * y

    with pytest.raises(TypeError, match="defvjp"):
        fg.grad(f)(1.0, 2.0)
    f.defvjp(lambda x, y: (x * y, None), lambda res, ct: (ct,))
    with pytest.raises(TypeError, match="one cotangent per argument"):
        fg.grad(f)(1.0, 2.0)
    f.defvjp(lambda x, y: (x * y, None), lambda res, ct: (fnp.ones(3), ct))
    with pytest.raises(ValueError, match="shape"):
        fg.grad(f)(1.0, 2.0)
    with pytest.raises(TypeError, match="forward-mode autodiff \\(jvp\\) to a custom_vjp"):
        fg.jvp(f, (1.0, 2.0), (1.0, 0.0))


def make_softplus():
    calls = []

    @fg.custom_jvp
    def softplus(x):
        return fnp.log1p(fnp.exp(x))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        calls.append(1)
        (x,), (t,) = primals, tangents
        return softplus(x), t * (1 / (1 + fnp.exp(-x)))

    return softplus, calls


def test_custom_jvp_stable_where_the_body_is_not():
    softplus, calls = make_softplus()
    with np.errstate(over="ignore"):
        body = fg.grad(lambda x: fnp.log1p(fnp.exp(x)))(1000.0)
        assert np.isnan(float(body))  # exp overflows: inf / inf
        assert float(fg.grad(softplus)(1000.0)) == 1.0
        _, t = fg.jvp(softplus, (1000.0,), (2.0,))
        assert float(t) == 2.0
    assert calls


def test_custom_jvp_rule_is_used_in_both_modes():
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 3.0 * t[0] * p[0]))  # not cos: the rule's 3 x
    x = fnp.array([0.5, 2.0])
    np.testing.assert_allclose(fg.jvp(f, (x,), (fnp.ones(2),))[1], 3 * np.asarray(x))
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(f(x)))(x), 3 * np.asarray(x))
    np.testing.assert_allclose(fg.jacfwd(f)(x), np.diag(3 * np.asarray(x)))
    np.testing.assert_allclose(fg.jacrev(f)(x), np.diag(3 * np.asarray(x)))
    np.testing.assert_allclose(fg.hessian(lambda x: fnp.sum(f(x)))(x), 3 * np.eye(2))
    assert float(fg.grad(fg.grad(f))(1.5)) == 3.0
    out, f_jvp = fg.linearize(f, x)
    np.testing.assert_allclose(f_jvp(fnp.ones(2)), 3 * np.asarray(x))


def test_custom_jvp_under_vmap_and_with_two_arguments():
    @fg.custom_jvp
    def weighted(x, w):
        return x * w

    @weighted.defjvp
    def weighted_jvp(primals, tangents):
        (x, w), (tx, tw) = primals, tangents
        return weighted(x, w), 10 * (tx * w + x * tw)

    xs = fnp.array([[1.0, 2.0], [3.0, 4.0]])
    w = fnp.array([0.5, -1.0])
    batched = fg.vmap(fg.grad(lambda x, w: fnp.sum(weighted(x, w))), in_axes=(0, None))(xs, w)
    np.testing.assert_allclose(batched, 10 * np.broadcast_to(np.asarray(w), (2, 2)))
    gw = fg.grad(lambda w: fnp.sum(fg.vmap(weighted, in_axes=(0, None))(xs, w)))(w)
    np.testing.assert_allclose(gw, 10 * np.asarray(xs).sum(0))
    _, t = fg.jvp(lambda xs: fg.vmap(weighted, in_axes=(0, None))(xs, w), (xs,), (fnp.ones((2, 2)),))
    np.testing.assert_allclose(t, 10 * np.broadcast_to(np.asarray(w), (2, 2)))


def test_custom_rules_pass_finite_difference_checks_when_they_are_right():
    softplus, _ = make_softplus()
    check_grads(lambda x: fnp.sum(softplus(x) ** 2), (fnp.array([0.3, -1.0]),), order=2,
                modes=("rev", "fwd"))

    @fg.custom_vjp
    def sin_(x):
        return fnp.sin(x)

    sin_.defvjp(lambda x: (sin_(x), fnp.cos(x)), lambda c, ct: (ct * c,))
    check_grads(lambda x: fnp.sum(sin_(x) * x), (fnp.array([0.3, -1.0]),), order=2)


def test_nondiff_argnums_pass_static_values_to_the_rules():
    def apply(fn, x):
        return fn(x)

    f = fg.custom_vjp(apply, nondiff_argnums=(0,))
    f.defvjp(lambda fn, x: (fn(x), x), lambda fn, x, ct: (ct * 100 * x,))
    assert float(fg.grad(lambda x: f(fnp.sin, x))(2.0)) == 200.0
    xs = fnp.array([1.0, 2.0])
    np.testing.assert_allclose(fg.vmap(fg.grad(lambda x: f(fnp.sin, x)))(xs), [100.0, 200.0])

    g = fg.custom_jvp(lambda x, power: x ** power, nondiff_argnums=(1,))
    g.defjvp(lambda power, primals, tangents: (primals[0] ** power, 7.0 * tangents[0]))
    assert float(fg.grad(g)(3.0, 2)) == 7.0
    assert float(fg.jvp(lambda x: g(x, 3), (1.0,), (2.0,))[1]) == 14.0


def test_linearize_replays_a_custom_call_with_its_rule():
    @fg.custom_vjp
    def clip_gradient(t):
        return t

    clip_gradient.defvjp(lambda t: (t, None), lambda _, ct: (fnp.clip(ct, -1.0, 1.0),))

    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), clip_gradient(t[0]) * 2.0))
    _, f_jvp = fg.linearize(f, fnp.array([1.0, 2.0]))
    np.testing.assert_allclose(f_jvp(fnp.array([1.0, 3.0])), [2.0, 6.0])
    np.testing.assert_allclose(fg.vmap(f_jvp)(fnp.eye(2)), 2 * np.eye(2))
    # reverse mode through the replayed tangent program meets clip_gradient's rule
    g = fg.grad(lambda t: fnp.sum(f_jvp(t) * 10.0))(fnp.array([1.0, 3.0]))
    np.testing.assert_allclose(g, [1.0, 1.0])  # the cotangent 10 * 2 reaching it is clipped to 1
