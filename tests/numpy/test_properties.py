"""Property-based checks: hypothesis draws broadcastable shapes, axes and values, and every
drawn case must match finite differences (and NumPy's forward values)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.special import logsumexp
from funcgrad.test_util import check_grads

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
finite = st.floats(-2.0, 2.0, allow_nan=False, width=64)


def arrays(shape, elements=finite):
    return hnp.arrays(np.float64, shape, elements=elements)


BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "maximum": np.maximum, "arctan2": np.arctan2, "logaddexp": np.logaddexp,
          "hypot": np.hypot}


@SETTINGS
@given(data=st.data(), name=st.sampled_from(sorted(BINARY)),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3))
def test_binary_functions_broadcast_like_numpy_and_differentiate(data, name, shapes):
    x = data.draw(arrays(shapes.input_shapes[0]), label="x")
    y = data.draw(arrays(shapes.input_shapes[1]), label="y")
    if name in ("maximum", "arctan2", "hypot"):  # stay clear of ties and of the origin
        y = y + 3.0
    fn = getattr(fnp, name)
    np.testing.assert_allclose(np.asarray(fn(x, y)), BINARY[name](x, y))
    assert fn(x, y).shape == shapes.result_shape
    check_grads(fn, (x, y), order=1, modes=("rev", "fwd"))


REDUCTIONS = ["sum", "mean", "prod", "max", "var", "logsumexp"]


@SETTINGS
@given(data=st.data(), name=st.sampled_from(REDUCTIONS), keepdims=st.booleans(),
       shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
def test_reductions_over_drawn_axes(data, name, keepdims, shape):
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(0.5, 2.0), unique=True), label="x")
    axis = data.draw(hnp.valid_tuple_axes(len(shape), min_size=1), label="axis")
    fn = logsumexp if name == "logsumexp" else getattr(fnp, name)
    f = lambda a: fn(a, axis=axis, keepdims=keepdims)  # noqa: E731
    if name != "logsumexp":
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(np.asarray(f(x)), expected)
    check_grads(f, (x,), order=1, modes=("rev", "fwd"))


AXIS_FUNCTIONS = {"cumsum": np.cumsum, "cumprod": np.cumprod, "sort": np.sort, "flip": np.flip,
                  "diff": np.diff}


@SETTINGS
@given(data=st.data(), name=st.sampled_from(sorted(AXIS_FUNCTIONS)),
       shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=3))
def test_functions_along_a_drawn_axis(data, name, shape):
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(0.5, 2.0), unique=True), label="x")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    f = lambda a: getattr(fnp, name)(a, axis=axis)  # noqa: E731
    np.testing.assert_allclose(np.asarray(f(x)), AXIS_FUNCTIONS[name](x, axis=axis))
    check_grads(f, (x,), order=2, modes=("rev", "fwd"))


@SETTINGS
@given(data=st.data(), shapes=hnp.mutually_broadcastable_shapes(
    num_shapes=2, base_shape=(), min_dims=0, max_dims=2, max_side=3))
def test_einsum_of_broadcast_operands_matches_numpy(data, shapes):
    a = data.draw(arrays(shapes.input_shapes[0] + (2,)), label="a")
    b = data.draw(arrays(shapes.input_shapes[1] + (2,)), label="b")
    expected = np.einsum("...i,...i->...", a, b)
    np.testing.assert_allclose(np.asarray(fnp.einsum("...i,...i->...", a, b)), expected)
    check_grads(lambda a, b: fnp.einsum("...i,...i->...", a, b), (a, b), order=2,
                modes=("rev", "fwd"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_keeps_the_input_dtype_under_broadcasting(dtype):
    x = np.ones((2, 3), dtype=dtype)
    g = fg.grad(lambda x: fnp.sum(x * np.arange(3.0)))(x)
    assert g.dtype == dtype and g.shape == (2, 3)
