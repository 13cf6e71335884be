"""jacfwd, jacrev, hessian, hvp and linearize: values against finite differences and closed
forms, JAX's output structure for argnums / has_aux / pytrees, Hessian symmetry."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

rng = np.random.default_rng(7)


def numerical_jacobian(f, x, eps=1e-6):
    """d f / d x by central differences, shaped ``f(x).shape + x.shape``."""
    x = np.asarray(x, dtype=np.float64)
    out = np.asarray(f(fnp.array(x)))
    jac = np.zeros(out.shape + x.shape)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        plus = np.asarray(f(fnp.array(x + step)))
        minus = np.asarray(f(fnp.array(x - step)))
        jac[(Ellipsis,) + i] = (plus - minus) / (2 * eps)
    return jac


def vector_fn(x):
    return fnp.concatenate([fnp.sin(x) * x[0], fnp.tanh(x[1:]) ** 2])


def matrix_fn(w):
    return fnp.exp(w @ w.T * 0.3)


@pytest.mark.parametrize("jac", [fg.jacfwd, fg.jacrev], ids=["jacfwd", "jacrev"])
@pytest.mark.parametrize("f, shape", [(vector_fn, (4,)), (matrix_fn, (2, 3)),
                                      (lambda x: fnp.sum(fnp.sin(x) ** 2), (3,))])
def test_jacobian_matches_finite_differences(jac, f, shape):
    x = rng.uniform(-1, 1, shape)
    got = np.asarray(jac(f)(fnp.array(x)))
    expected = numerical_jacobian(f, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_jacfwd_equals_jacrev_on_a_wide_and_a_tall_function():
    x = fnp.array(rng.standard_normal(5))
    for f in (lambda x: fnp.outer(x, x[:2]), lambda x: fnp.sum(x) * x[:2]):
        np.testing.assert_allclose(fg.jacfwd(f)(x), fg.jacrev(f)(x), rtol=1e-12)


def test_hessian_closed_form_and_symmetry():
    x = rng.standard_normal(6)

    def f(x):
        return fnp.sum(fnp.tanh(x) ** 2 * x) + fnp.sum(x[:-1] * x[1:] ** 2)

    H = np.asarray(fg.hessian(f)(fnp.array(x)))
    t = np.tanh(x)
    s = 1 - t ** 2
    diag = 2 * s * s * x - 4 * t * t * s * x + 4 * t * s  # d2/dx2 of tanh(x)^2 x
    expected = np.diag(diag)
    expected += np.diag(np.r_[0.0, 2 * x[:-1]])  # d2/dx_{i+1}^2 of x_i x_{i+1}^2
    off = 2 * x[1:]  # d2 / dx_i dx_{i+1}
    expected += np.diag(off, 1) + np.diag(off, -1)
    np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-12)


def test_hessian_of_a_matrix_argument_against_finite_differences_of_the_gradient():
    w = rng.standard_normal((2, 3))

    def f(w):
        return fnp.sum(fnp.log1p(fnp.exp(w @ w.T)))

    H = np.asarray(fg.hessian(f)(fnp.array(w)))
    assert H.shape == (2, 3, 2, 3)
    numeric = numerical_jacobian(fg.grad(f), w)
    np.testing.assert_allclose(H, numeric, rtol=1e-6, atol=1e-8)
    flat = H.reshape(6, 6)
    np.testing.assert_allclose(flat, flat.T, atol=1e-12)


def test_hvp_equals_hessian_times_vector():
    x = fnp.array(rng.standard_normal(4))
    v = fnp.array(rng.standard_normal(4))

    def f(x):
        return fnp.sum(fnp.sin(x) * fnp.cumsum(x))

    np.testing.assert_allclose(fg.hvp(f, (x,), (v,)), np.asarray(fg.hessian(f)(x)) @ np.asarray(v),
                               rtol=1e-10, atol=1e-12)


def test_hvp_of_two_arguments():
    x, y = fnp.array([0.5, -1.0]), fnp.array(2.0)
    f = lambda x, y: fnp.sum(x ** 2) * y ** 3
    hx, hy = fg.hvp(f, (x, y), (fnp.array([1.0, 0.0]), fnp.array(1.0)))
    # d/dx = 2 x y^3, d/dy = 3 |x|^2 y^2; dotted with the tangent (e0, 1):
    np.testing.assert_allclose(hx, [2 * 8 + 2 * 0.5 * 3 * 4, 2 * -1.0 * 3 * 4])
    np.testing.assert_allclose(hy, 6 * 0.5 * 4 + 6 * 1.25 * 2)


def test_argnums_tuple_gives_a_tuple_per_output_leaf():
    x, y = fnp.array([1.0, 2.0]), fnp.array([3.0, 4.0, 5.0])

    def f(x, y):
        return {"sum": fnp.sum(x) * y, "prod": x * y[0]}

    for jac in (fg.jacfwd, fg.jacrev):
        J = jac(f, argnums=(0, 1))(x, y)
        assert set(J) == {"sum", "prod"}
        assert isinstance(J["sum"], tuple) and len(J["sum"]) == 2
        np.testing.assert_allclose(J["sum"][0], np.outer([3.0, 4.0, 5.0], [1.0, 1.0]))
        np.testing.assert_allclose(J["sum"][1], np.eye(3) * 3.0)
        np.testing.assert_allclose(J["prod"][0], np.eye(2) * 3.0)
        np.testing.assert_allclose(J["prod"][1], [[1.0, 0, 0], [2.0, 0, 0]])


def test_pytree_input_gives_the_input_structure_inside_each_output_leaf():
    params = {"w": fnp.array([[1.0, 2.0], [3.0, 4.0]]), "b": fnp.array([0.5, -0.5])}
    x = fnp.array([1.0, -1.0])

    def f(params, x):
        return fnp.tanh(params["w"] @ x + params["b"])

    for jac in (fg.jacfwd, fg.jacrev):
        J = jac(f)(params, x)
        assert set(J) == {"w", "b"}
        assert J["w"].shape == (2, 2, 2) and J["b"].shape == (2, 2)
        z = np.array([[1.0, 2.0], [3.0, 4.0]]) @ [1.0, -1.0] + [0.5, -0.5]
        s = 1 - np.tanh(z) ** 2
        np.testing.assert_allclose(J["b"], np.diag(s), rtol=1e-12)
        expected_w = np.zeros((2, 2, 2))
        for i in range(2):
            expected_w[i, i] = s[i] * np.array([1.0, -1.0])
        np.testing.assert_allclose(J["w"], expected_w, rtol=1e-12)


def test_has_aux_returns_aux_untouched():
    x = fnp.array([1.0, 2.0])

    def f(x):
        return x ** 2, {"norm": fnp.sum(x)}

    for jac in (fg.jacfwd, fg.jacrev):
        J, aux = jac(f, has_aux=True)(x)
        np.testing.assert_allclose(J, np.diag([2.0, 4.0]))
        assert float(aux["norm"]) == 3.0
        assert type(aux["norm"]) is fg.Array  # a plain value, not a tracer
    H, aux = fg.hessian(lambda x: (fnp.sum(x ** 3), x[0]), has_aux=True)(x)
    np.testing.assert_allclose(H, np.diag([6.0, 12.0]))
    assert float(aux) == 1.0


def test_scalar_input_and_output_shapes():
    assert fg.jacfwd(fnp.sin)(0.5).shape == ()
    assert fg.jacrev(lambda x: fnp.stack([x, x ** 2]))(3.0).tolist() == [1.0, 6.0]
    assert fg.jacfwd(lambda x: fnp.sum(x))(fnp.ones(3)).tolist() == [1.0, 1.0, 1.0]


def test_jacobian_nests_under_vmap_and_grad():
    xs = fnp.array(rng.standard_normal((3, 2)))
    f = lambda x: fnp.sin(x) * fnp.sum(x)
    batched = fg.vmap(fg.jacrev(f))(xs)
    for b in range(3):
        np.testing.assert_allclose(batched[b], fg.jacfwd(f)(xs[b]), rtol=1e-12)
    # the gradient of the Jacobian's trace, against a finite-difference check
    check_grads(lambda x: fnp.sum(fnp.diagonal(fg.jacfwd(f)(x))), (xs[0],), order=1,
                modes=("rev", "fwd"))


def test_linearize_replays_the_jvp_without_recomputing_f():
    calls = []

    def f(x):
        calls.append(1)
        return fnp.sin(x) * fnp.exp(x[0])

    x = fnp.array([0.3, -0.7, 1.1])
    out, f_jvp = fg.linearize(f, x)
    assert len(calls) == 1
    for _ in range(3):
        t = fnp.array(rng.standard_normal(3))
        np.testing.assert_allclose(f_jvp(t), fg.jvp(f, (x,), (t,))[1], rtol=1e-12)
    assert len(calls) == 4  # only the three jvp calls above ran f; f_jvp did not
    np.testing.assert_allclose(out, f(x))
    # the linear map vectorises and is linear
    ts = fnp.array(rng.standard_normal((4, 3)))
    np.testing.assert_allclose(fg.vmap(f_jvp)(ts), np.stack([f_jvp(t) for t in ts]), rtol=1e-12)
    np.testing.assert_allclose(f_jvp(ts[0] * 2.0 + ts[1]), 2 * np.asarray(f_jvp(ts[0])) + f_jvp(ts[1]))


def test_linearize_of_several_arguments_and_constant_outputs():
    out, f_jvp = fg.linearize(lambda x, y: (x * y, fnp.array(3.0)), 2.0, 5.0)
    t_prod, t_const = f_jvp(1.0, 0.0)
    assert float(t_prod) == 5.0 and float(t_const) == 0.0
    with pytest.raises(ValueError, match="shape"):
        f_jvp(fnp.ones(2), 0.0)


def test_check_grads_forward_and_reverse_on_composite_transforms():
    x = fnp.array([0.4, -0.3])
    check_grads(lambda x: fg.grad(lambda y: fnp.sum(fnp.sin(y) ** 3))(x), (x,), order=2,
                modes=("rev", "fwd"))
    check_grads(lambda x: fg.vmap(lambda r: fnp.tanh(r) * r)(x), (x,), order=2,
                modes=("rev", "fwd"))


COMPOSITES = {
    "where": lambda x: fnp.sum(fnp.where(x > 0, x ** 3, fnp.sin(x))),
    "max": lambda x: fnp.max(x ** 2 * fnp.arange(5.0)) + fnp.sum(fnp.maximum(x, 0.1) ** 2),
    "concatenate": lambda x: fnp.sum(fnp.concatenate([x, x[::-1] ** 2]) ** 3),
    "gather": lambda x: fnp.sum(x[np.array([0, 2, 2, 4])] ** 3 * x[1]),
    "scatter": lambda x: fnp.sum(x.at[np.array([1, 3])].set(x[0] ** 2) ** 3),
    "matmul": lambda x: fnp.sum(fnp.tanh(x.reshape(1, 5) @ fnp.outer(x, x))),
    "prod_cumsum": lambda x: fnp.prod(x + 2.0) + fnp.sum(fnp.cumsum(x) ** 2),
    "var_mean": lambda x: fnp.var(x) * fnp.mean(fnp.exp(x)),
    "clip": lambda x: fnp.sum(fnp.clip(x, -0.5, 0.5) ** 3 * x),
    "transpose": lambda x: fnp.sum(fnp.outer(x, x).T @ x * x),
}


@pytest.mark.parametrize("name", list(COMPOSITES))
def test_four_hessians_agree_with_finite_differences_and_vmap(name):
    f = COMPOSITES[name]
    x = np.random.default_rng(0).standard_normal(5)
    numeric = numerical_jacobian(fg.grad(f), x)
    for second in (fg.hessian, lambda f: fg.jacrev(fg.jacrev(f)),
                   lambda f: fg.jacfwd(fg.jacfwd(f)), lambda f: fg.jacrev(fg.jacfwd(f))):
        np.testing.assert_allclose(second(f)(fnp.array(x)), numeric, rtol=1e-5, atol=1e-6)
    xs = np.random.default_rng(1).standard_normal((3, 5))
    xs[1, 2] = 0.0 - 2.0  # a zero of x + 2 for prod: the exact branch of its rule
    batched = fg.vmap(fg.hessian(f))(fnp.array(xs))
    for b in range(3):
        np.testing.assert_allclose(batched[b], fg.hessian(f)(fnp.array(xs[b])), rtol=1e-12,
                                   atol=1e-12)


def test_linearize_nests_under_grad_and_vmap():
    # f_jvp(1) = cos(x): its derivative is -sin(x), through the recorded constants
    g = fg.grad(lambda x: fg.linearize(fnp.sin, x)[1](1.0))(0.7)
    assert float(g) == pytest.approx(-np.sin(0.7), rel=1e-12)
    batched = fg.vmap(lambda x: fg.linearize(fnp.sin, x)[1](1.0))(fnp.array([0.0, 0.7]))
    np.testing.assert_allclose(batched, np.cos([0.0, 0.7]), rtol=1e-12)


def test_jacobians_check_input_dtypes_first_with_jaxs_words():
    with pytest.raises(TypeError, match=r"^jacrev requires real- or complex-valued inputs "
                       r"\(input dtype that is a sub-dtype of np\.inexact\), but got int64"):
        fg.jacrev(lambda x: x)(np.int64(1))
    with pytest.raises(TypeError, match=r"^jacfwd requires real-valued inputs \(input dtype "
                       r"that is a sub-dtype of np\.floating\), but got int64"):
        fg.jacfwd(lambda x: x)(np.int64(1))


def test_jacrev_rebuilds_registered_classes_from_its_check_as_jax():
    # JAX maps its dtype check over the arguments, so a class is rebuilt from None leaves
    # before anything runs: a constructor that validates its children fails there
    from funcgrad.tree_util import register_pytree_node

    built = []

    class Validating:
        def __init__(self, a):
            built.append(a)
            self.a = a

    register_pytree_node(Validating, lambda t: ((t.a,), None), lambda _, c: Validating(*c))
    jac = fg.jacrev(lambda t: t.a * 2.0)(Validating(np.arange(3.0)))
    assert built[1] is None  # the check's rebuild (after the user's own construction)
    np.testing.assert_allclose(jac.a, 2 * np.eye(3))
