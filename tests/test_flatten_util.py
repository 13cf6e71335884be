"""ravel_pytree: values, dtypes, the inverse, gradients both ways, and JAX's answers."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.flatten_util import ravel_pytree


def test_values_dtypes_and_inverse_as_in_jax():
    tree = {"a": np.ones((2, 2)), "b": np.float32(3.0), "c": [np.arange(3)]}
    flat, unravel = ravel_pytree(tree)
    # JAX (x64): [1. 1. 1. 1. 3. 0. 1. 2.] float64, and each leaf back in its own dtype
    assert flat.tolist() == [1.0, 1.0, 1.0, 1.0, 3.0, 0.0, 1.0, 2.0]
    assert flat.dtype == np.float64
    back = unravel(flat)
    assert back["a"].shape == (2, 2) and back["a"].dtype == np.float64
    assert back["b"].dtype == np.float32 and back["b"].item() == 3.0
    assert back["c"][0].dtype == np.int64 and back["c"][0].tolist() == [0, 1, 2]
    assert fg.tree_util.tree_structure(back) == fg.tree_util.tree_structure(tree)


def test_empty_tree():
    flat, unravel = ravel_pytree([])
    assert flat.shape == (0,) and flat.dtype == np.float32  # as JAX
    assert unravel(flat) == []


def test_wrong_size_is_refused():
    _, unravel = ravel_pytree([np.ones(2), np.ones(3)])
    with pytest.raises(ValueError, match=r"expected an array of shape \(5,\), got shape \(4,\)"):
        unravel(np.ones(4))


def test_gradients_through_ravel_and_unravel():
    params = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": np.array([0.5, -1.0])}
    flat, unravel = ravel_pytree(params)

    def loss(vector):
        p = unravel(vector)
        return fnp.sum(fnp.sin(p["w"]) * 2.0) + fnp.sum(p["b"] ** 3)

    g = fg.grad(loss)(flat)
    expected = np.concatenate([3 * params["b"] ** 2, 2 * np.cos(params["w"]).ravel()])
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-12)

    g_tree = fg.grad(lambda p: fnp.sum(ravel_pytree(p)[0] ** 2))(params)
    np.testing.assert_allclose(np.asarray(g_tree["w"]), 2 * params["w"])
    np.testing.assert_allclose(np.asarray(g_tree["b"]), 2 * params["b"])


def test_against_live_jax():
    pytest.importorskip("jax", reason="JAX is an optional oracle; literal values above")
    from jax.flatten_util import ravel_pytree as jax_ravel
    tree = {"x": np.arange(6.0).reshape(2, 3), "y": (np.float64(7.0), np.ones(2))}
    expected = np.asarray(jax_ravel(tree)[0])  # float32 unless x64 is on: compare values
    np.testing.assert_allclose(np.asarray(ravel_pytree(tree)[0]), expected, rtol=1e-6)
