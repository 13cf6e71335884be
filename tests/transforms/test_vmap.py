"""vmap: in_axes / out_axes (ints, None, pytrees), nesting with itself and with grad / jvp,
composite functions against Python loops, and the errors for bad axes."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

rng = np.random.default_rng(3)


def loop(f, *args, axis=0):
    return np.stack([np.asarray(f(*[fnp.array(np.take(a, b, axis=axis)) for a in args]))
                     for b in range(np.shape(args[0])[axis])])


def mlp(w, b, x):
    return fnp.tanh(x @ w + b).sum() + fnp.max(x) * fnp.prod(fnp.clip(x, -0.5, 0.5) + 1)


def test_composite_function_equals_loop():
    w, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    xs = rng.standard_normal((5, 3))
    got = fg.vmap(mlp, in_axes=(None, None, 0))(fnp.array(w), fnp.array(b), fnp.array(xs))
    expected = [mlp(fnp.array(w), fnp.array(b), fnp.array(x)) for x in xs]
    np.testing.assert_allclose(got, np.array([float(e) for e in expected]), rtol=1e-12)


def test_in_axes_pytree_with_none_and_negative_axis():
    params = {"w": fnp.array(rng.standard_normal((3, 2))), "scale": fnp.array(2.0)}
    xs = fnp.array(rng.standard_normal((3, 4)))  # mapped along its last axis

    def f(params, x):
        return params["scale"] * (x @ params["w"])

    got = fg.vmap(f, in_axes=({"w": None, "scale": None}, -1))(params, xs)
    expected = np.stack([np.asarray(f(params, xs[:, b])) for b in range(4)])
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    got = fg.vmap(f, in_axes=(None, 1))(params, xs)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_out_axes_int_pytree_and_none():
    xs = fnp.array(rng.standard_normal((4, 3)))
    c = fnp.array(7.0)

    def f(x):
        return {"row": x * 2, "const": c}

    out = fg.vmap(f, out_axes={"row": 1, "const": None})(xs)
    np.testing.assert_allclose(out["row"], np.asarray(xs).T * 2)
    assert float(out["const"]) == 7.0
    out = fg.vmap(lambda x: (x, c))(xs)  # an unmapped output is broadcast along out_axes=0
    np.testing.assert_allclose(out[1], np.full(4, 7.0))
    with pytest.raises(ValueError, match="out_axes is None"):
        fg.vmap(lambda x: x, out_axes=None)(xs)


def test_nested_vmap_is_an_outer_product_of_loops():
    a = fnp.array(rng.standard_normal((3, 2)))
    b = fnp.array(rng.standard_normal((4, 2)))
    dist = fg.vmap(fg.vmap(lambda p, q: fnp.sum((p - q) ** 2), in_axes=(None, 0)), in_axes=(0, None))
    expected = ((np.asarray(a)[:, None, :] - np.asarray(b)[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(dist(a, b), expected, rtol=1e-12)
    inner_axis_1 = fg.vmap(fg.vmap(lambda x: fnp.sin(x) * x[0]), in_axes=1)
    x = fnp.array(rng.standard_normal((2, 5, 3)))
    expected = np.stack([np.stack([np.sin(x[:, j, :][i]) * x[:, j, :][i][0] for i in range(2)])
                         for j in range(5)])
    np.testing.assert_allclose(inner_axis_1(x), expected, rtol=1e-12)


def test_vmap_of_grad_is_per_example_gradients():
    w = fnp.array(rng.standard_normal(3))
    xs, ys = fnp.array(rng.standard_normal((6, 3))), fnp.array(rng.standard_normal(6))

    def loss(w, x, y):
        return (fnp.tanh(x @ w) - y) ** 2

    per_example = fg.vmap(fg.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    expected = np.stack([np.asarray(fg.grad(loss)(w, xs[i], ys[i])) for i in range(6)])
    np.testing.assert_allclose(per_example, expected, rtol=1e-12)
    # and the mean of the per-example gradients is the gradient of the mean loss
    mean_grad = fg.grad(lambda w: fnp.mean(fg.vmap(loss, in_axes=(None, 0, 0))(w, xs, ys)))(w)
    np.testing.assert_allclose(mean_grad, expected.mean(0), rtol=1e-12)


def test_grad_of_vmap_and_jvp_of_vmap_against_finite_differences():
    x = fnp.array(rng.uniform(-1, 1, (3, 2)))
    f = lambda x: fg.vmap(lambda r: fnp.sin(r) @ fnp.cos(r[::-1]) * r)(x)
    check_grads(f, (x,), order=2, modes=("rev", "fwd"))


def test_vmap_of_jvp_pushes_a_batch_of_tangents():
    x = fnp.array([0.2, 0.5, -0.4])
    tangents = fnp.array(np.eye(3))
    push = fg.vmap(lambda t: fg.jvp(lambda x: fnp.sin(x) * fnp.sum(x), (x,), (t,))[1])
    np.testing.assert_allclose(push(tangents), np.asarray(fg.jacrev(lambda x: fnp.sin(x) * fnp.sum(x))(x)).T,
                               rtol=1e-12)


def test_vmap_with_batched_index_arrays_and_scatter():
    table = fnp.array(rng.standard_normal((5, 3)))
    idx = np.array([[0, 4], [2, 2], [1, 3]])
    rows = fg.vmap(lambda i: table[i])(idx)
    np.testing.assert_allclose(rows, np.asarray(table)[idx])
    updates = fnp.array(rng.standard_normal((3, 2, 3)))
    scattered = fg.vmap(lambda i, u: fnp.zeros((5, 3)).at[i].add(u))(idx, updates)
    for b in range(3):
        expected = np.zeros((5, 3))
        np.add.at(expected, idx[b], np.asarray(updates[b]))
        np.testing.assert_allclose(scattered[b], expected)
    # gradients flow through the batched gather
    g = fg.grad(lambda t: fnp.sum(fg.vmap(lambda i: t[i] ** 2)(idx)))(table)
    expected = np.zeros((5, 3))
    np.add.at(expected, idx.ravel(), 2 * np.asarray(table)[idx.ravel()])
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_vmap_of_matmul_every_rank_combination():
    for xs, ys in [((4, 3), (3,)), ((4, 3), (3, 2)), ((4, 2, 3), (3, 5)), ((4, 3), (2, 3, 5))]:
        for x_mapped, y_mapped in [(True, True), (True, False), (False, True)]:
            x = rng.standard_normal(xs if x_mapped else xs[1:])
            y = rng.standard_normal((4,) + ys if y_mapped else ys)
            got = fg.vmap(fnp.matmul, in_axes=(0 if x_mapped else None, 0 if y_mapped else None))(
                fnp.array(x), fnp.array(y))
            expected = np.stack([(x[b] if x_mapped else x) @ (y[b] if y_mapped else y)
                                 for b in range(4)])
            np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_vmap_errors_name_the_problem():
    x = fnp.ones((3, 2))
    with pytest.raises(ValueError, match="different sizes"):
        fg.vmap(lambda a, b: a + b)(x, fnp.ones((4, 2)))
    with pytest.raises(ValueError, match="out of range"):
        fg.vmap(lambda a: a, in_axes=2)(x)
    with pytest.raises(ValueError, match="no argument is mapped"):
        fg.vmap(lambda a: a, in_axes=None)(x)
    with pytest.raises(ValueError, match="cannot be vmapped"):
        fg.vmap(fnp.nonzero)(x)


def test_shape_queries_see_the_example_shape():
    seen = []

    def f(x):
        seen.append((fnp.shape(x), fnp.ndim(x), x.shape))
        return x

    fg.vmap(f)(fnp.ones((4, 2, 3)))
    assert seen == [((2, 3), 2, (2, 3))]


def test_keyword_arguments_are_mapped_along_axis_0():
    xs, scale = fnp.array([[1.0, 2.0], [3.0, 4.0]]), fnp.array([10.0, 100.0])
    out = fg.vmap(lambda x, scale: x * scale, in_axes=(0,))(xs, scale=scale)
    np.testing.assert_allclose(out, [[10.0, 20.0], [300.0, 400.0]])
