"""The backward walk's memory: cotangents multiplied and summed in place where the walk alone
holds the buffer (funcgrad/_src/reverse.py), never where anyone else can see it.

Every case of the declaration sweep is differentiated with the in-place paths on for every
size and compared with the plain rules; user inputs, tape values and earlier results are
checked untouched; the peak of a big elementwise gradient is measured with tracemalloc.
"""
from __future__ import annotations

import importlib.util
import pathlib
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src import reverse
from funcgrad._src.core import Array
from funcgrad.tree_util import tree_flatten, tree_unflatten

N = 20_000  # above IN_PLACE_MIN_SIZE: the in-place paths run
rng = np.random.default_rng(7)


def _w6(x):
    return fnp.sum(fnp.exp(fnp.sin(x)) * x)


def _w6_grad_by_hand(x):
    e = np.exp(np.sin(x))
    return e * np.cos(x) * x + e


def test_gradient_is_right_and_inputs_untouched():
    x = rng.standard_normal(N)
    keep = x.copy()
    g = fg.grad(_w6)(x)
    np.testing.assert_allclose(g, _w6_grad_by_hand(x), rtol=1e-13, atol=1e-14)
    assert np.array_equal(x, keep)


def test_an_input_used_as_a_cotangent_is_never_written():
    """d(sum(x * y))/dx is y itself (ones times y): y's buffer must not take later sums."""
    x, y = rng.standard_normal(N), rng.standard_normal(N)
    keep_x, keep_y = x.copy(), y.copy()

    def f(x, y):
        return fnp.sum(x * y) + fnp.sum(fnp.sin(x) * 3.0) + fnp.sum(y * y)
    gx, gy = fg.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, keep_y + 3 * np.cos(keep_x), rtol=1e-13)
    np.testing.assert_allclose(gy, keep_x + 2 * keep_y, rtol=1e-13)
    assert np.array_equal(x, keep_x) and np.array_equal(y, keep_y)


def test_vjp_fn_called_twice_sees_an_intact_tape():
    x = rng.standard_normal(N)
    out, vjp_fn = fg.vjp(lambda x: fnp.exp(fnp.sin(x)) * x, x)
    ct = rng.standard_normal(N)
    first = np.array(vjp_fn(ct)[0])
    second = np.array(vjp_fn(ct)[0])
    e = np.exp(np.sin(x))
    np.testing.assert_allclose(first, ct * (e * np.cos(x) * x + e), rtol=1e-13, atol=1e-14)
    assert np.array_equal(first, second)
    np.testing.assert_array_equal(out, e * x)  # the forward result the tape kept, intact


def test_blockwise_derivatives_cover_every_element(monkeypatch):
    """Blocks of 7 over 100 elements (the last one short), in several shapes; a derivative
    that is an argument itself (exp's output) is not computed block by block."""
    monkeypatch.setattr(reverse, "BLOCKWISE_MIN_SIZE", 1)
    monkeypatch.setattr(reverse, "BLOCK", 7)
    for shape in [(100,), (4, 25), (2, 5, 10)]:
        x = rng.standard_normal(shape)
        np.testing.assert_allclose(fg.grad(_w6)(x), _w6_grad_by_hand(x), rtol=1e-13)
        g = fg.grad(lambda x: fnp.sum(fnp.tanh(fnp.cos(x) * 2.0)))(x)
        np.testing.assert_allclose(g, (1 - np.tanh(np.cos(x) * 2) ** 2) * -2 * np.sin(x),
                                   rtol=1e-12)


def test_a_shared_cotangent_is_not_multiplied_in_place():
    """add's rule hands the same cotangent object to both arguments."""
    x = rng.standard_normal(N)

    def f(x):
        a = fnp.sin(x)
        b = fnp.cos(x)
        return fnp.sum(fnp.exp(a + b) * 2.0)
    e = np.exp(np.sin(x) + np.cos(x))
    np.testing.assert_allclose(fg.grad(f)(x), 2 * e * (np.cos(x) - np.sin(x)), rtol=1e-12, atol=1e-14)


def test_backward_peak_is_two_arrays_for_a_big_elementwise_chain():
    """sum(exp(sin(x)) * x): its own result and the cotangent of sin are alive at once in
    the backward pass; cos(x) is computed block by block into the cotangent (hand-written
    NumPy needs two arrays too)."""
    x = rng.standard_normal(500_000)
    grad = fg.grad(_w6)
    grad(x)
    tracemalloc.start()
    try:
        grad(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 2.1 * x.nbytes, f"peak {peak / x.nbytes:.2f} arrays"


# --- the sweep with the in-place paths on for every size -----------------------------------
def _sweep_module():
    path = pathlib.Path(__file__).parent / "numpy" / "test_sweep.py"
    spec = importlib.util.spec_from_file_location("_in_place_sweep_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SWEEP = _sweep_module()
SWEPT = [(name, i) for name in sorted(SWEEP.CASES) for i in range(len(SWEEP.CASES[name]))]


@pytest.mark.parametrize("name,i", SWEPT, ids=[f"{n}[{i}]" for n, i in SWEPT])
def test_sweep_in_place_backward_equals_the_plain_rules(name, i, monkeypatch):
    SWEEP._need(name)
    f, args = SWEEP.CASES[name][i]
    args = tuple(np.asarray(a) for a in args)
    keep = [a.copy() for a in args]
    out = f(*args)
    ct_leaves = [np.asarray(c) for c in tree_flatten(SWEEP._cotangents(out))[0]]
    out_def = tree_flatten(out)[1]

    def pullback():
        cts = tree_unflatten(out_def, [Array(c.copy()) for c in ct_leaves])
        return [np.asarray(g) for g in fg.vjp(f, *args)[1](cts)]

    monkeypatch.setattr(reverse, "IN_PLACE_MIN_SIZE", 10**12)
    plain = pullback()
    monkeypatch.setattr(reverse, "IN_PLACE_MIN_SIZE", 1)
    monkeypatch.setattr(reverse, "BLOCKWISE_MIN_SIZE", 10**12)
    in_place = pullback()
    monkeypatch.setattr(reverse, "BLOCKWISE_MIN_SIZE", 1)
    monkeypatch.setattr(reverse, "BLOCK", 2)  # several blocks, the last one short
    blockwise = pullback()
    for p, q, b in zip(plain, in_place, blockwise):
        assert p.dtype == q.dtype == b.dtype and p.shape == q.shape == b.shape, name
        np.testing.assert_allclose(q, p, rtol=1e-13, atol=1e-14, equal_nan=True, err_msg=name)
        np.testing.assert_allclose(b, p, rtol=1e-13, atol=1e-14, equal_nan=True, err_msg=name)
    for a, k in zip(args, keep):
        np.testing.assert_array_equal(a, k, err_msg=f"{name}: an input was written")
