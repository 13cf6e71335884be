"""funcgrad.jit computes sin(a) and cos(a) of one float64 array together, as cos(a) and
tan(a) * cos(a) (`_Program._fuse_sin_cos`): within 2 ulp of eager, at every argument."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src import jit as jit_module, simd

rng = np.random.default_rng(41)


@pytest.fixture
def fused(monkeypatch):
    """The fusion on for any size, whatever the machine (tan is then only slower)."""
    monkeypatch.setattr(simd, "FAST_TAN", True)
    monkeypatch.setattr(jit_module, "_SIN_COS_MIN", 1)


def _arguments():
    special = [0.0, -0.0, 5e-324, -1e-300, 1e-8, np.pi / 2, -np.pi, 1e22, -1e300,
               np.finfo(np.float64).max, np.inf, -np.inf, np.nan]
    k = np.arange(-50, 51, dtype=np.float64)
    return np.concatenate([special, k * np.pi, (k + 0.5) * np.pi, rng.standard_normal(200),
                           10.0 ** rng.uniform(-300, 300, 200) * rng.choice([-1, 1], 200)])


def _ulps(got, expected):
    both = np.isfinite(expected)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    return np.max(np.abs(got[both] - expected[both]) / np.spacing(np.abs(expected[both])))


@pytest.mark.parametrize("first", ["sin", "cos"])
def test_sin_and_cos_together_within_two_ulp(first, fused):
    sin, cos = fnp.sin, fnp.cos

    def f(x):
        return (sin(x), cos(x)) if first == "sin" else (cos(x), sin(x))

    x = _arguments()
    jf = fg.jit(f)
    assert _calls_tan(jf, x)
    with np.errstate(invalid="ignore"):
        got = dict(zip((first, "other"), jf(x)))
        s, c = (got[first], got["other"]) if first == "sin" else (got["other"], got[first])
        assert _ulps(np.asarray(c), np.cos(x)) == 0  # cos is the C library's, unchanged
        assert _ulps(np.asarray(s), np.sin(x)) <= 2
        assert np.signbit(np.asarray(s)[1])  # sin(-0.0) is -0.0


def _calls_tan(jf, x):
    return any(op.ufunc is np.tan for op in jf.lower(x)._program.ops)


@pytest.mark.parametrize("f", [
    lambda x: fnp.sum(fnp.exp(fnp.sin(x)) * x),
    lambda x: fnp.sum(fnp.cos(x) ** 2),
    lambda x: fnp.sum(fnp.sin(x) * fnp.cos(x)),
    lambda x: fnp.sum(fnp.sin(fnp.sin(x))),
])
def test_value_and_grad_equal_eager(f, fused):
    x = rng.standard_normal((7, 5)) * 3
    jvg = fg.jit(fg.value_and_grad(f))
    assert _calls_tan(jvg, x)
    value, grad = jvg(x)
    eager_value, eager_grad = fg.value_and_grad(f)(x)
    np.testing.assert_allclose(value, eager_value, rtol=1e-14)
    np.testing.assert_allclose(grad, eager_grad, rtol=1e-14, atol=1e-15)


def test_only_float64_and_big_arrays(monkeypatch):
    monkeypatch.setattr(simd, "FAST_TAN", True)
    f = fg.jit(fg.value_and_grad(lambda x: fnp.sum(fnp.sin(x))))
    assert not _calls_tan(f, np.ones(3))  # too small to pay
    assert not _calls_tan(f, np.ones(1000, np.float32))  # float32 sin is SIMD already
    assert _calls_tan(f, np.ones(1000))
    monkeypatch.setattr(simd, "FAST_TAN", False)  # no SIMD tan: unchanged
    assert not _calls_tan(fg.jit(fg.value_and_grad(lambda x: fnp.sum(fnp.sin(x)))),
                          np.ones(1000))
