"""funcgrad.nn against closed forms written here in NumPy (float64), finite differences away
from the kinks, the slopes JAX gives at the kinks (JAX 0.10, recorded), and live JAX when
installed."""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import nn

POINTS = np.array([-7.0, -3.0, -1.5, -1.0, -0.3, 0.0, 0.4, 1.0, 2.5, 3.0, 6.0, 8.0])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.log1p(np.exp(-abs(x))) + np.maximum(x, 0)


ALPHA, SCALE = 1.6732632423543772, 1.0507009873554805
CLOSED_FORMS = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": _sigmoid,
    "log_sigmoid": lambda x: -_softplus(-x),
    "softplus": _softplus,
    "soft_sign": lambda x: x / (abs(x) + 1),
    "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "selu": lambda x: SCALE * np.where(x > 0, x, ALPHA * np.expm1(np.minimum(x, 0))),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "identity": lambda x: x,
    "tanh": np.tanh,
}

# d/dx at the kinks, as JAX 0.10 gives them (jax.vmap(jax.grad(f)) at these points)
KINK_SLOPES = {
    "relu": ([0.0], [0.0]),
    "relu6": ([0.0, 6.0], [0.0, 0.0]),
    "hard_tanh": ([-1.0, 1.0], [1.0, 1.0]),
    "leaky_relu": ([0.0], [1.0]),
    "elu": ([0.0], [1.0]),
    "celu": ([0.0], [1.0]),
    "selu": ([0.0], [1.7580993408473766]),
    "hard_sigmoid": ([-3.0, 3.0], [0.0, 0.0]),
    "hard_silu": ([-3.0, 0.0, 3.0], [0.0, 0.5, 1.0]),
    "sparse_plus": ([-1.0, 0.0, 1.0], [0.0, 0.5, 1.0]),
    "sparse_sigmoid": ([-1.0, 0.0, 1.0], [0.25, 0.5, 0.25]),
}
KINKS = {-3.0, -1.0, 0.0, 1.0, 3.0, 6.0}


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_activation_values_and_derivatives(name):
    f, ref = getattr(nn, name), CLOSED_FORMS[name]
    np.testing.assert_allclose(np.asarray(f(fnp.asarray(POINTS))), ref(POINTS), rtol=1e-12,
                               atol=1e-14)
    eps = 1e-6
    smooth = np.array([x for x in POINTS if all(abs(x - k) > 1e-3 for k in KINKS)])
    slopes = fg.vmap(fg.grad(f))(fnp.asarray(smooth))
    np.testing.assert_allclose(np.asarray(slopes), (ref(smooth + eps) - ref(smooth - eps)) /
                               (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(KINK_SLOPES))
def test_slopes_at_the_kinks_are_jax_s(name):
    points, expected = KINK_SLOPES[name]
    got = fg.vmap(fg.grad(getattr(nn, name)))(fnp.asarray(points))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)


def test_no_nan_gradient_from_the_masked_branch():
    # elu's exp overflows at large x on the side where masks it off: the gradient stays 1
    assert fg.grad(nn.elu)(1000.0).item() == 1.0
    assert fg.grad(nn.softplus)(1000.0).item() == 1.0
    assert fg.grad(nn.log_sigmoid)(-1000.0).item() == 1.0


def test_gelu_exact_is_x_times_normal_cdf():
    x = np.array([-2.0, -0.5, 0.0, 0.7, 3.0])
    phi = 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    np.testing.assert_allclose(np.asarray(nn.gelu(fnp.asarray(x), approximate=False)),
                               x * phi, rtol=1e-12)
    pdf = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(np.asarray(fg.vmap(fg.grad(
        lambda v: nn.gelu(v, approximate=False)))(fnp.asarray(x))), phi + x * pdf, rtol=1e-10)


def test_softmax_and_log_softmax():
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0]])
    e = np.exp(x - x.max(-1, keepdims=True))
    expected = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(nn.softmax(fnp.asarray(x))), expected, rtol=1e-12)
    shifted = x - x.max(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(nn.log_softmax(fnp.asarray(x))),
                               shifted - np.log(np.exp(shifted).sum(-1, keepdims=True)),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.softmax(fnp.asarray(x), axis=0)),
                               np.exp(x - x.max(0)) / np.exp(x - x.max(0)).sum(0), rtol=1e-12)
    # d softmax_i / dx_j = s_i (delta_ij - s_j)
    s = expected[0]
    jac = fg.jacobian(nn.softmax)(fnp.asarray(x[0]))
    np.testing.assert_allclose(np.asarray(jac), np.diag(s) - np.outer(s, s), atol=1e-14)
    jac = fg.jacobian(nn.log_softmax)(fnp.asarray(x[0]))
    np.testing.assert_allclose(np.asarray(jac), np.eye(3) - s[None, :], atol=1e-14)


def test_softmax_where_masks_entries():
    x = fnp.asarray([1.0, 2.0, 3.0])
    mask = fnp.asarray([True, False, True])
    e = np.exp([1.0, 3.0])
    np.testing.assert_allclose(np.asarray(nn.softmax(x, where=mask)),
                               [e[0] / e.sum(), 0.0, e[1] / e.sum()], rtol=1e-12)
    out = np.asarray(nn.log_softmax(x, where=mask))
    assert out[1] == -np.inf
    np.testing.assert_allclose(out[[0, 2]], np.log(e / e.sum()), rtol=1e-12)
    g = fg.grad(lambda v: nn.softmax(v, where=mask)[0])(x)
    assert np.asarray(g)[1] == 0.0 and np.all(np.isfinite(np.asarray(g)))


def test_logsumexp_logmeanexp_standardize_glu():
    x = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]])
    np.testing.assert_allclose(np.asarray(nn.logsumexp(fnp.asarray(x), axis=1)),
                               np.log(np.exp(x).sum(1)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(fnp.asarray(x), axis=1)),
                               np.log(np.exp(x).mean(1)), rtol=1e-12)
    np.testing.assert_allclose(nn.logmeanexp(fnp.asarray(x)).item(),
                               np.log(np.exp(x).mean()), rtol=1e-12)
    z = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(fnp.asarray(x))), z, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.glu(fnp.asarray([[1.0, 2.0, 0.0, -1.0]]))),
                               [[1.0 * _sigmoid(0.0), 2.0 * _sigmoid(-1.0)]], rtol=1e-12)
    with pytest.raises(ValueError, match="even"):
        nn.glu(fnp.ones(3))


def test_one_hot():
    out = nn.one_hot(fnp.asarray([0, 2, -1, 3]), 3)
    assert out.dtype == np.float64
    assert np.asarray(out).tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]
    out = nn.one_hot(fnp.asarray([[1, 0]]), 2, axis=0, dtype=np.int32)
    assert out.shape == (2, 1, 2) and out.dtype == np.int32
    assert np.asarray(out).tolist() == [[[0, 1]], [[1, 0]]]


def test_against_live_jax():
    jax = pytest.importorskip("jax", reason="JAX is an optional oracle; closed forms above")
    jnp = jax.numpy
    x = POINTS.astype(np.float32)
    for name in sorted(CLOSED_FORMS):
        ours, theirs = getattr(nn, name), getattr(jax.nn, name)
        np.testing.assert_allclose(np.asarray(ours(fnp.asarray(x))),
                                   np.asarray(theirs(jnp.asarray(x))), rtol=2e-6, atol=1e-6,
                                   err_msg=name)
        np.testing.assert_allclose(np.asarray(fg.vmap(fg.grad(ours))(fnp.asarray(x))),
                                   np.asarray(jax.vmap(jax.grad(theirs))(jnp.asarray(x))),
                                   rtol=2e-5, atol=1e-6, err_msg=name)
    y = np.array([[1.0, -2.0, 0.5, 4.0]], np.float32)
    for name in ["softmax", "log_softmax", "standardize", "glu"]:
        np.testing.assert_allclose(np.asarray(getattr(nn, name)(fnp.asarray(y))),
                                   np.asarray(getattr(jax.nn, name)(jnp.asarray(y))),
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_array_equal(np.asarray(nn.one_hot(fnp.asarray([2, 0, 5]), 4, axis=0)),
                                  np.asarray(jax.nn.one_hot(jnp.asarray([2, 0, 5]), 4, axis=0)))
