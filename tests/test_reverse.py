"""grad, value_and_grad, vjp, stop_gradient: values against closed forms and finite
differences, nesting, pytrees, dtypes."""
from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads, numerical_jvp
from funcgrad.tree_util import register_dataclass, register_pytree_node

rng = np.random.default_rng(42)


def loss(w, x, y):
    return fnp.mean((fnp.tanh(x @ w) - y) ** 2)


def loss_by_hand(w, x, y):
    """The gradient of `loss` w.r.t. w and x, derived by hand."""
    z = x @ w
    t = np.tanh(z)
    r = t - y
    dz = 2 * r / len(y) * (1 - t ** 2)
    return np.mean(r ** 2), x.T @ dz, np.outer(dz, w)


def test_grad_matches_hand_derivation():
    w, x, y = rng.standard_normal(3), rng.standard_normal((5, 3)), rng.standard_normal(5)
    g = fg.grad(loss)(w, x, y)
    value, gw, gx = loss_by_hand(w, x, y)
    assert isinstance(g, fg.Array) and g.shape == w.shape and g.dtype == w.dtype
    np.testing.assert_allclose(g, gw, rtol=1e-12)
    val, (gw2, gx2) = fg.value_and_grad(loss, argnums=(0, 1))(w, x, y)
    np.testing.assert_allclose(val, value, rtol=1e-12)
    np.testing.assert_allclose(gw2, gw, rtol=1e-12)
    np.testing.assert_allclose(gx2, gx, rtol=1e-12)
    check_grads(loss, (w, x, y), order=2)


def test_vjp_conventions():
    x = fnp.array(rng.standard_normal(4))
    out, vjp_fn = fg.vjp(fnp.sin, x)
    np.testing.assert_allclose(out, np.sin(np.asarray(x)))
    (ct_x,) = vjp_fn(fnp.ones_like(out))
    np.testing.assert_allclose(ct_x, np.cos(np.asarray(x)))
    ct = rng.standard_normal(4)
    (again,) = vjp_fn(ct)  # a vjp_fn may be called again, with another cotangent
    np.testing.assert_allclose(again, ct * np.cos(np.asarray(x)))


def test_vjp_of_several_inputs_and_pytree_output():
    def f(a, b):
        return {"sum": a + b, "prod": (a * b, fnp.sin(a))}

    a, b = rng.standard_normal(3), rng.standard_normal(3)
    out, vjp_fn, aux = fg.vjp(lambda a, b: (f(a, b), "aux"), a, b, has_aux=True)
    assert aux == "aux"
    ct = {"sum": np.ones(3), "prod": (2 * np.ones(3), 3 * np.ones(3))}
    ga, gb = vjp_fn(ct)
    np.testing.assert_allclose(ga, 1 + 2 * b + 3 * np.cos(a))
    np.testing.assert_allclose(gb, 1 + 2 * a)


def test_higher_order_by_nesting():
    x = 0.3
    t = np.tanh(x)
    assert np.isclose(fg.grad(fnp.tanh)(x), 1 - t ** 2)
    assert np.isclose(fg.grad(fg.grad(fnp.tanh))(x), -2 * t * (1 - t ** 2))
    third = fg.grad(fg.grad(fg.grad(fnp.sin)))
    assert np.isclose(third(x), -np.cos(x))
    fourth = fg.grad(fg.grad(fg.grad(fg.grad(lambda x: x ** 5))))
    assert np.isclose(fourth(1.5), 120 * 1.5)


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1; confusing the two levels would give 2.
    def outer(x):
        inner = fg.grad(lambda y: x + y)(1.0)
        return x * inner

    assert fg.grad(outer)(2.0) == 1.0
    # The same with a closed-over tracer that the inner function differentiates through.
    f = lambda x: fg.grad(lambda y: x * y ** 2)(3.0)  # = 6x
    assert np.isclose(fg.grad(f)(5.0), 6.0)


def test_has_aux():
    def f(x):
        return fnp.sum(x ** 2), {"norm": fnp.sqrt(fnp.sum(x ** 2))}

    x = fnp.array([3.0, 4.0])
    g, aux = fg.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g, [6.0, 8.0])
    assert np.isclose(aux["norm"], 5.0)
    (value, aux2), g2 = fg.value_and_grad(f, has_aux=True)(x)
    assert np.isclose(value, 25.0) and np.isclose(aux2["norm"], 5.0)


Point = collections.namedtuple("Point", ["x", "y"])


@register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second


register_pytree_node(Pair, lambda p: ((p.first, p.second), None), lambda _, c: Pair(*c))


def test_pytrees_in_and_out():
    params = {"layer": [fnp.array([1.0, 2.0]), (3.0, None)], "pt": Point(0.5, fnp.array(2.0))}

    def f(p):
        a, (b, _) = p["layer"]
        return fnp.sum(a ** 2) * b + p["pt"].x * p["pt"].y

    g = fg.grad(f)(params)
    np.testing.assert_allclose(g["layer"][0], [6.0, 12.0])
    assert np.isclose(g["layer"][1][0], 5.0)
    assert g["layer"][1][1] is None
    assert isinstance(g["pt"], Point) and np.isclose(g["pt"].x, 2.0) and np.isclose(g["pt"].y, 0.5)

    p = Params(w=fnp.array([1.0, -1.0]), b=0.5)
    gp = fg.grad(lambda p: fnp.sum(fnp.tanh(p.w + p.b)))(p)
    assert isinstance(gp, Params)
    np.testing.assert_allclose(gp.w, 1 - np.tanh(np.array([1.5, -0.5])) ** 2)
    assert np.isclose(gp.b, np.sum(1 - np.tanh(np.array([1.5, -0.5])) ** 2))

    gpair = fg.grad(lambda q: q.first * q.second)(Pair(2.0, 7.0))
    assert isinstance(gpair, Pair) and gpair.first == 7.0 and gpair.second == 2.0


def test_dtypes_preserved():
    x32 = np.array([0.1, 0.2], dtype=np.float32)
    g = fg.grad(lambda x: fnp.sum(fnp.tanh(x) * 2.0 + x ** 2 / 3.0))(x32)
    assert g.dtype == np.float32
    value, g = fg.value_and_grad(lambda x: fnp.sum(fnp.exp(x) * x))(x32)
    assert value.dtype == np.float32 and g.dtype == np.float32
    g64 = fg.grad(lambda x: x * x)(3.0)  # a Python float differentiates in float64
    assert g64.dtype == np.float64 and g64 == 6.0
    g16 = fg.grad(lambda x: fnp.sum(x * x))(np.ones(2, dtype=np.float16))
    assert g16.dtype == np.float16


def test_stop_gradient_and_unused_inputs():
    assert fg.grad(lambda x: x * fg.stop_gradient(x))(3.0) == 3.0
    g = fg.grad(lambda x, y: fnp.sum(y * 2.0), argnums=(0, 1))(fnp.ones(2), fnp.ones(3))
    np.testing.assert_array_equal(g[0], np.zeros(2))  # x is unused: zero gradient
    np.testing.assert_array_equal(g[1], 2 * np.ones(3))
    assert fg.grad(lambda x: 4.0)(1.0) == 0.0


def test_argnums_negative_and_kwargs():
    f = lambda a, b, scale=1.0: scale * a * b ** 2
    assert fg.grad(f, argnums=-1)(2.0, 3.0, scale=2.0) == 2.0 * 2 * 2.0 * 3.0


def test_control_flow_on_values():
    def f(x):
        return x ** 2 if x > 0 else -x

    assert fg.grad(f)(3.0) == 6.0 and fg.grad(f)(-3.0) == -1.0


def test_numpy_dispatch_on_traced_arrays():
    def f(x):
        return np.sum(np.sin(x) * np.exp(x)) + x.sum() + np.mean(np.tanh(x))

    x = rng.standard_normal(5)
    g = fg.grad(f)(x)
    expected = np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x) + 1 + (1 - np.tanh(x) ** 2) / 5
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_second_order_mixed_partials():
    f = lambda x, y: fnp.sin(x * y) + x ** 3 * y
    dxy = fg.grad(fg.grad(f, argnums=0), argnums=1)
    x, y = 0.7, -1.3
    expected = np.cos(x * y) - x * y * np.sin(x * y) + 3 * x ** 2
    assert np.isclose(dxy(x, y), expected)


def test_gradient_through_broadcasting_is_summed():
    a = rng.standard_normal((3, 1))
    b = rng.standard_normal((1, 4))
    ga, gb = fg.grad(lambda a, b: fnp.sum(a * b + a), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, np.sum(np.broadcast_to(b, (3, 4)), axis=1, keepdims=True) + 4)
    np.testing.assert_allclose(gb, np.sum(np.broadcast_to(a, (3, 4)), axis=0, keepdims=True))


def test_numerical_jvp_is_a_real_oracle():
    d = numerical_jvp(lambda x: x ** 3, (2.0,), (1.0,))
    assert np.isclose(d[0], 12.0, rtol=1e-8)


def test_linear_transpose_is_the_transposed_map():
    """jax.linear_transpose's contract: cotangent of the output -> a tuple of cotangents of
    the inputs, the same at every point (the primals give only structure, shape, dtype)."""
    linear_transpose = fg.linear_transpose

    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 2))
    ct = rng.standard_normal(3)
    f_t = linear_transpose(lambda x: fnp.asarray(a) @ x, rng.standard_normal(2))
    (g,) = f_t(ct)
    np.testing.assert_allclose(g, a.T @ ct, rtol=1e-14)
    f_t = linear_transpose(lambda d: d["x"] + 2.0 * d["y"], {"x": np.zeros(2), "y": np.zeros(2)})
    (g,) = f_t(np.array([1.0, -1.0]))
    assert g["x"].tolist() == [1.0, -1.0] and g["y"].tolist() == [2.0, -2.0]
    assert [t.item() for t in linear_transpose(lambda x, y: x - y, 1.0, 2.0)(3.0)] == [3.0, -3.0]
    g32 = linear_transpose(lambda x: 3.0 * x, np.zeros(2, np.float32))(np.ones(2, np.float32))
    assert g32[0].dtype == np.float32 and g32[0].tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="shape"):
        f_t(np.ones(3))
    try:
        import jax
    except ImportError:
        return
    jax.config.update("jax_enable_x64", True)
    (expected,) = jax.linear_transpose(lambda x: jax.numpy.asarray(a) @ x, np.zeros(2))(ct)
    np.testing.assert_allclose(linear_transpose(lambda x: fnp.asarray(a) @ x, np.zeros(2))(ct)[0],
                               expected, rtol=1e-14)
