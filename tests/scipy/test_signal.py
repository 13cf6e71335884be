"""funcgrad.scipy.signal.convolve: values against SciPy in every mode and in n dimensions,
autograd's axes/dot_axes generalization, derivatives to second order in both arguments and
both modes, vmap, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.signal import convolve
from funcgrad.test_util import check_grads

rng = np.random.default_rng(3)
SHAPES = [((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((1,), (3,)), ((4, 3), (2, 2)),
          ((5, 4), (3, 2)), ((2, 2), (4, 3)), ((6, 7), (4, 1)), ((3, 4, 2), (2, 3, 2))]


def _direct(a, b):
    """The full convolution by its definition, sum_j a[k - j] b[j], in any dimension."""
    out = np.zeros(tuple(n + m - 1 for n, m in zip(a.shape, b.shape)), np.result_type(a, b))
    for j in np.ndindex(*b.shape):
        window = tuple(slice(i, i + n) for i, n in zip(j, a.shape))
        out[window] += a * b[j]
    return out


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_full_convolution_is_the_definition(shapes):
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    np.testing.assert_allclose(np.asarray(convolve(a, b)), _direct(a, b), atol=1e-13)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_values_match_scipy(shapes, mode):
    ss = pytest.importorskip("scipy.signal", reason="SciPy is the reference (an optional extra)")
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    try:
        expected = ss.convolve(a, b, mode=mode, method="direct")
    except ValueError:
        with pytest.raises(ValueError, match="at least as large"):
            convolve(a, b, mode=mode)
        return
    np.testing.assert_allclose(np.asarray(convolve(a, b, mode=mode)), expected, atol=1e-13)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("shapes", [((5,), (3,)), ((4, 3), (2, 2)), ((2, 3), (3, 4))], ids=str)
def test_derivatives_match_finite_differences(shapes, mode):
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    check_grads(lambda a, b: convolve(a, b, mode=mode), (a, b), order=2, modes=("rev", "fwd"))


def test_axes_and_dot_axes_generalize_tensordot():
    a, b, c = rng.normal(size=(3, 5)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4, 2))
    for mode in ("full", "valid"):
        got = np.asarray(convolve(a, b, axes=([1], [0]), mode=mode))
        assert got.shape[:2] == (3, 4)  # in1's other axes, in2's, then the convolved one
        np.testing.assert_allclose(got[1, 2], np.asarray(convolve(a[1], b[:, 2], mode=mode)))
        np.testing.assert_allclose(np.asarray(convolve(a, b, axes=([], []), dot_axes=([0], [0]))),
                                   np.tensordot(a, b, axes=([0], [0])), atol=1e-13)
        summed = sum(np.asarray(convolve(a[i], c[i, 2], mode=mode)) for i in range(3))
        np.testing.assert_allclose(np.asarray(convolve(a, c, axes=([1], [2]), dot_axes=([0], [0]),
                                                       mode=mode))[2], summed, atol=1e-13)
    check_grads(lambda a, c: convolve(a, c, axes=([1], [2]), dot_axes=([0], [0]), mode="same"),
                (a, c), order=2, modes=("rev", "fwd"))


def test_vmap_equals_a_loop():
    signals, kernel = rng.normal(size=(4, 6)), rng.normal(size=3)
    g = fg.grad(lambda k, x: fnp.sum(convolve(x, k, mode="valid") ** 2))
    batched = np.asarray(fg.vmap(g, in_axes=(None, 0))(kernel, signals))
    np.testing.assert_allclose(batched, np.stack([np.asarray(g(kernel, x)) for x in signals]),
                               rtol=1e-12)


def test_bad_inputs_name_the_fix():
    with pytest.raises(ValueError, match="mode must be"):
        convolve(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(ValueError, match="same dimensionality"):
        convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="same number"):
        convolve(np.ones((3, 3)), np.ones((2, 2)), axes=([0, 1], [0]))
