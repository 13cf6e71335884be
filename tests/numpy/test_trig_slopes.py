"""sin's and cos's slopes on big float64 arrays come from NumPy's SIMD tan where the CPU has
it (`_primitives`, "sin's and cos's slopes"): within 4 ulp (cos) and 2 ulp (sin) of the C
library's at every argument; NumPy's own functions wherever the formulas would not do; the
forwards untouched."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src import simd
from funcgrad.numpy import _primitives as P

rng = np.random.default_rng(12)
N = 1 << 15  # above `_BY_TAN_MIN`, and two of the backward walk's blocks


@pytest.fixture
def by_tan(monkeypatch):
    """The tan route on, whatever the machine (without SIMD tan it is only slower)."""
    monkeypatch.setattr(simd, "FAST_TAN", True)


def _ulps(got, expected):
    assert got.dtype == expected.dtype == np.float64
    return float(np.max(np.abs(got - expected) / np.spacing(np.abs(expected))))


def _exactly(got, expected):
    return np.array_equal(got, expected, equal_nan=True) and \
        np.array_equal(np.signbit(got), np.signbit(expected))


ARGUMENTS = {
    "normal": rng.standard_normal(N),
    "wide": rng.uniform(-1e4, 1e4, N),
    "up to 1e300": 10.0 ** rng.uniform(-8, 300, N) * rng.choice([-1, 1], N),
    "near multiples of pi/2": np.repeat(np.arange(1, N // 8 + 1) * (np.pi / 2), 8)
    * (1 + rng.uniform(-4e-16, 4e-16, N)),
    "down to 2^-27": 10.0 ** rng.uniform(np.log10(2.0 ** -27), -3, N),
}


@pytest.mark.parametrize("name", ARGUMENTS)
def test_slopes_within_a_few_ulp_of_the_c_library(name, by_tan):
    x = ARGUMENTS[name]
    assert P._by_tan(x)
    assert _ulps(P._cos_slope(None, x), np.cos(x)) <= 4
    assert _ulps(P._minus_sin_slope(None, x), -np.sin(x)) <= 2


@pytest.mark.parametrize("special", [0.0, -0.0, 5e-324, -1e-310, 1e-9, np.inf, -np.inf, np.nan])
def test_an_array_holding_a_value_the_formulas_cannot_take_gets_numpys(special, by_tan):
    x = rng.standard_normal(N)
    x[N // 3] = special
    assert not P._by_tan(x)
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("error")  # (no warning of the formulas' own)
        assert _exactly(P._cos_slope(None, x), np.cos(x))
        assert _exactly(P._minus_sin_slope(None, x), -np.sin(x))


def test_small_arrays_other_dtypes_and_no_simd_tan_get_numpys(monkeypatch, by_tan):
    small = rng.standard_normal(P._BY_TAN_MIN - 1)
    single = rng.standard_normal(N).astype(np.float32)
    for x in (small, single):
        assert _exactly(P._cos_slope(None, x), np.cos(x))
        assert _exactly(P._minus_sin_slope(None, x), -np.sin(x))
    monkeypatch.setattr(simd, "FAST_TAN", False)
    x = ARGUMENTS["normal"]
    assert _exactly(P._cos_slope(None, x), np.cos(x))


def test_gradients_and_tangents_of_sin_and_cos(by_tan):
    x = ARGUMENTS["wide"]
    assert _ulps(np.asarray(fg.grad(lambda x: fnp.sum(fnp.sin(x)))(x)), np.cos(x)) <= 4
    assert _ulps(np.asarray(fg.grad(lambda x: fnp.sum(fnp.cos(x)))(x)), -np.sin(x)) <= 2
    value, tangent = fg.jvp(fnp.sin, (x,), (np.ones(N),))
    assert _exactly(np.asarray(value), np.sin(x))  # the forward is NumPy's, bit for bit
    assert _ulps(np.asarray(tangent), np.cos(x)) <= 4
    assert _exactly(np.asarray(fnp.cos(x)), np.cos(x))


def test_through_the_backward_walks_blocks(by_tan):
    # sin's cotangent is the walk's own here, so the slope is taken block by block
    x = ARGUMENTS["normal"]
    value, grad = fg.value_and_grad(lambda x: fnp.sum(fnp.exp(fnp.sin(x)) * x))(x)
    e = np.exp(np.sin(x))
    np.testing.assert_allclose(value, np.sum(e * x), rtol=1e-13)
    # (absolute slack where the two terms cancel: they are of order 10)
    np.testing.assert_allclose(grad, e * np.cos(x) * x + e, rtol=1e-14, atol=1e-14)


def test_second_order_takes_the_differentiable_path(by_tan):
    x = ARGUMENTS["normal"]
    d2 = fg.grad(lambda x: fnp.sum(fg.grad(lambda y: fnp.sum(fnp.sin(y)))(x)))(x)
    np.testing.assert_allclose(d2, -np.sin(x), rtol=1e-14, atol=1e-300)
    d2 = fg.grad(lambda x: fnp.sum(fg.grad(lambda y: fnp.sum(fnp.cos(y)))(x)))(x)
    np.testing.assert_allclose(d2, -np.cos(x), rtol=1e-14, atol=1e-300)
