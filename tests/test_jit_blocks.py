"""funcgrad.jit's blocked runs: elementwise operations over one big shape (and the sums that
end them) computed block by block, equal to eager to rounding. test_jit.py runs the whole
declaration sweep this way too (its ``tiny_blocks`` sweep)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src import jit as jit_module

rng = np.random.default_rng(31)


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 24 bytes (3 float64, 6 float32) from two blocks on, so small arrays take
    the blocked path with a shorter last block."""
    monkeypatch.setattr(jit_module, "_BLOCK_BYTES", 24)
    monkeypatch.setattr(jit_module, "_BLOCK_MIN", 2)


def w6(x):
    return fnp.sum(fnp.exp(fnp.sin(x)) * x)


def test_value_and_grad_of_a_big_vector_runs_by_blocks_with_one_full_array():
    n = 5 * (jit_module._BLOCK_BYTES // 8) + 3  # five blocks and a short one
    x = rng.standard_normal(n)
    vg = fg.jit(fg.value_and_grad(lambda x: w6(x)))
    text = vg.lower(x).as_text()
    # one full array, the gradient's
    assert "by blocks" in text and text.count("empty((") + text.count("reuse(") == 1, text
    value, grad = vg(x)
    e = np.exp(np.sin(x))
    # the value is summed block by block: equal to NumPy's pairwise sum to rounding
    np.testing.assert_allclose(value, np.sum(e * x), rtol=1e-13)
    eager_value, eager_grad = fg.value_and_grad(w6)(x)
    np.testing.assert_allclose(value, eager_value, rtol=1e-13)
    np.testing.assert_allclose(grad, eager_grad, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(grad, e * np.cos(x) * x + e, rtol=1e-14, atol=1e-15)
    assert grad.shape == x.shape and grad.dtype == x.dtype


def test_small_arrays_are_not_blocked():
    x = rng.standard_normal(100)
    assert "by blocks" not in fg.jit(fg.grad(lambda x: w6(x))).lower(x).as_text()


@pytest.mark.parametrize("n", [2, 3, 7, 12, 13])
def test_block_boundaries(n, tiny_blocks):
    x = rng.standard_normal(n)
    vg = fg.jit(fg.value_and_grad(lambda x: w6(x)))
    if n >= 6:
        assert "by blocks" in vg.lower(x).as_text()
    for xs in (x, x * 3.0):
        got, expected = vg(xs), fg.value_and_grad(w6)(xs)
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-14)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-14, atol=1e-15)


def test_values_read_after_the_run_and_sums_read_after_it(tiny_blocks):
    def f(x, y):
        e = fnp.exp(x)                  # read after the run: a full array
        s = fnp.sum(e * y)              # a sum ending the run
        t = fnp.sum(fnp.cos(y) + y * y)  # another
        return e / s + t, s, e
    x, y = rng.standard_normal(11), rng.standard_normal(11)
    jf = fg.jit(f)
    assert "by blocks" in jf.lower(x, y).as_text()
    for args in ((x, y), (y, x)):
        for got, expected in zip(jf(*args), f(*args)):
            np.testing.assert_allclose(got, expected, rtol=1e-14)
            assert np.shape(got) == np.shape(expected)
            assert np.asarray(got).dtype == np.asarray(expected).dtype


def test_dtypes_of_a_blocked_run_are_eagers(tiny_blocks):
    def f(x32, k):
        y = fnp.sin(x32) * 2.5 + k      # float32 with a Python float and an int64 array
        z = fnp.tanh(x32) * 3.0         # float32 throughout
        return y, fnp.sum(z * x32), fnp.sum(x32 > 0), fnp.sum(k * k)
    x32 = rng.standard_normal(13).astype(np.float32)
    k = np.arange(13)
    got, expected = fg.jit(f)(x32, k), f(x32, k)
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-6)
    assert int(got[2]) == int(np.sum(x32 > 0)) and int(got[3]) == int(np.sum(k * k))


def test_non_contiguous_and_two_dimensional_inputs(tiny_blocks):
    f = fg.jit(fg.grad(lambda x: w6(x)))
    base = rng.standard_normal((6, 8))
    for x in (base, base.T, base[:, ::2], base[::-1]):
        np.testing.assert_allclose(f(x), fg.grad(w6)(x), rtol=1e-14, atol=1e-15)


def test_a_zero_dimensional_input_inside_the_run(tiny_blocks):
    def f(x, a):
        return fnp.sum(fnp.sin(x) * a + a * fnp.cos(x))
    x, a = rng.standard_normal(10), np.array(0.7)
    for g, e in zip(fg.jit(fg.grad(f, argnums=(0, 1)))(x, a), fg.grad(f, argnums=(0, 1))(x, a)):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-15)


def test_inputs_and_earlier_results_are_never_overwritten(tiny_blocks):
    vg = fg.jit(fg.value_and_grad(lambda x: w6(x)))
    x = rng.standard_normal(14)
    keep = x.copy()
    v1, g1 = vg(x)
    g1_copy = np.array(g1)
    vg(x * 2.0)
    assert np.array_equal(x, keep) and np.array_equal(np.asarray(g1), g1_copy)


def test_concurrent_calls_do_not_share_block_buffers():
    n = 8 * (jit_module._BLOCK_BYTES // 8)
    vg = fg.jit(fg.value_and_grad(lambda x: w6(x)))
    inputs = [rng.standard_normal(n) for _ in range(4)]
    vg(inputs[0])
    results: dict = {}

    def work(k):
        for _ in range(3):
            results[k] = vg(inputs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, x in enumerate(inputs):
        e = np.exp(np.sin(x))
        np.testing.assert_allclose(results[k][1], e * np.cos(x) * x + e, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-14), (np.float32, 1e-6),
                                        (np.complex128, 1e-14)])
def test_a_mean_ends_a_run_and_is_its_blocks_sum_over_the_size(dtype, rtol, tiny_blocks):
    def f(x):
        return fnp.mean(fnp.exp(fnp.sin(x)) * x)
    x = rng.standard_normal(13).astype(dtype)
    if dtype == np.complex128:
        x = x + 0.5j * rng.standard_normal(13)
        f = lambda x: fnp.mean(fnp.exp(fnp.sin(x)) * x)  # noqa: E731 (holomorphic value only)
        got, expected = fg.jit(f)(x), f(x)
    else:
        vg = fg.jit(fg.value_and_grad(f))
        assert "the mean" in vg.lower(x).as_text()
        got, expected = vg(x), fg.value_and_grad(f)(x)
        np.testing.assert_allclose(got[1], expected[1], rtol=rtol, atol=rtol)
        assert got[1].dtype == expected[1].dtype
        got, expected = got[0], expected[0]
    assert got.dtype == expected.dtype == dtype and got.shape == ()
    e = np.exp(np.sin(x.astype(np.complex128 if dtype == np.complex128 else np.float64)))
    np.testing.assert_allclose(got, np.mean(e * x), rtol=max(rtol, 1e-6 if dtype == np.float32 else 0))
    np.testing.assert_allclose(got, expected, rtol=rtol)


def test_an_integer_mean_is_not_blocked(tiny_blocks):
    f = fg.jit(lambda k: fnp.mean(k * k + k * 3))
    k = np.arange(13)
    assert "the mean" not in f.lower(k).as_text()
    assert f(k).item() == np.mean(k * k + k * 3) and f(k).dtype == np.float64


def test_uniform_constants_become_scalars_and_neutral_operands_vanish():
    """The mean's cotangent (1/n broadcast to x's shape) is a full constant array: the
    program uses one 0-d value instead; x ** 1, x - 0 and x / 1 are x."""
    x = rng.standard_normal(50)
    vg = fg.jit(fg.value_and_grad(lambda x: fnp.mean(fnp.tanh(x) ** 2)))
    program = vg.lower(x)._program
    full_consts = [v for v in program.vars if v.kind == "const" and v.is_array and v.value.size > 1
                   and any(v is program.vars[a] for op in program.ops for a in op.args)]
    assert full_consts == []
    value, grad = vg(x)
    t = np.tanh(x)
    np.testing.assert_allclose(value, np.mean(t ** 2), rtol=1e-14)
    np.testing.assert_allclose(grad, 2 * t * (1 - t * t) / x.size, rtol=1e-13, atol=1e-16)
    same = fg.jit(lambda x: (x ** 1) - 0.0 + (x / 1.0) * 0.0)
    assert "power" not in str([op.prim.name for op in same.lower(x)._program.ops])
    assert "divide" not in str([op.prim.name for op in same.lower(x)._program.ops])
    np.testing.assert_array_equal(same(x), x ** 1 - 0.0 + (x / 1.0) * 0.0)
    signed = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, -2.5])
    np.testing.assert_array_equal(fg.jit(lambda x: (x ** 1) / 1.0 - 0.0)(signed), signed)
    assert np.signbit(np.asarray(fg.jit(lambda x: x ** 1 - 0.0)(signed)))[0]


def test_a_dropped_result_array_is_reused_and_a_held_one_never_written():
    """A blocked run's full result array is made once and reused by later calls while
    nothing else holds it (no page faults on fresh memory); anything that can still read
    it (the Array, a NumPy view of it, a memoryview) keeps it from being reused."""
    n = 5 * (jit_module._BLOCK_BYTES // 8)
    vg = fg.jit(fg.value_and_grad(lambda x: w6(x)))
    x = rng.standard_normal(n)
    expected = fg.value_and_grad(w6)(x)[1]

    def buffer(g):
        return g._value if g._value.base is None else g._value.base

    _, g = vg(x)
    first = id(buffer(g))
    del g, _
    _, g = vg(x * 2.0)
    if jit_module._REFCOUNTS_EXACT:
        assert id(buffer(g)) == first  # dropped, then reused
    held = [vg(x)[1]]                                   # the Array itself
    held.append(np.asarray(vg(x)[1]))                   # a NumPy view of it
    held.append(memoryview(np.asarray(vg(x)[1])))       # a buffer export
    held.append(np.asarray(vg(x)[1])[::2])              # a view of a view
    for _ in range(3):
        vg(x * 3.0)
    del g
    vg(x * 4.0)
    for h in held[:3]:
        np.testing.assert_allclose(np.asarray(h), expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(held[3], np.asarray(expected)[::2], rtol=1e-14, atol=1e-15)
    fresh = vg(x)[1]
    assert buffer(fresh) is not buffer(held[0])
