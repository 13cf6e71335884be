"""funcgrad.random against JAX's jax.random: key words and samples recorded from JAX 0.10
(default configuration: 32-bit draws, partitionable Threefry), compared bit for bit where JAX's
computation is reproduced exactly (keys, uniform, bernoulli) and to one float32 ulp for
normal (XLA's erfinv); the Threefry hash itself against its published known-answer vectors;
live JAX where installed."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.random import _threefry2x32


def words(keys):
    return np.asarray(random.key_data(keys)).tolist()


def test_threefry_known_answers():
    # Threefry-2x32, 20 rounds: the Random123 library's known-answer test vectors
    cases = [((0x0, 0x0), (0x0, 0x0), (0x6B200159, 0x99BA4EFE)),
             ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
             ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]
    for (k0, k1), (x0, x1), expected in cases:
        out = _threefry2x32(k0, k1, np.array([x0], np.uint32), np.array([x1], np.uint32))
        assert (int(out[0][0]), int(out[1][0])) == expected


def test_keys_as_jax_makes_them():
    assert words(random.key(0)) == [0, 0] and words(random.key(42)) == [0, 42]
    assert words(random.key(-1)) == [0, 4294967295]  # the low 32 bits, as JAX by default
    assert np.asarray(random.PRNGKey(7)).tolist() == [0, 7]
    assert words(random.split(random.key(0), 3)) == [
        [1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]]
    assert words(random.fold_in(random.key(42), 7)) == [2547012911, 1371500959]
    assert np.asarray(random.split(random.PRNGKey(5))).tolist() == [
        [2724472204, 3573582090], [202567368, 3886822060]]
    keys = random.split(random.key(0), (2, 3))
    assert keys.shape == (2, 3) and words(keys[1, 2]) == words(random.split(random.key(0), 6)[5])
    key, subkey = random.split(random.key(0))  # keys unpack, index and iterate as arrays
    assert words(subkey) == [928981903, 3453687069] and key.shape == ()
    assert repr(random.key(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert words(random.wrap_key_data(random.key_data(subkey))) == words(subkey)


def test_samples_as_jax_draws_them():
    u = random.uniform(random.key(1), (4,))
    assert u.dtype == np.float64  # JAX's float32 draws, held as funcgrad's float64
    assert np.asarray(u).tolist() == [0.4386324882507324, 0.5337529182434082,
                                      0.44591832160949707, 0.4383963346481323]
    assert np.asarray(random.uniform(random.key(1), (2, 2), minval=-3.0, maxval=2.0)
                      ).tolist() == [[-0.8068375587463379, -0.331235408782959],
                                     [-0.7704083919525146, -0.8080183267593384]]
    assert random.uniform(random.key(1), (3,), dtype=np.float32).dtype == np.float32
    n = np.asarray(random.normal(random.key(2), (5,)))
    jax_values = np.array([0.3605741560459137, 1.2849894762039185, -0.7387343645095825,
                           1.1830744743347168, -0.20641915500164032])
    np.testing.assert_allclose(n, jax_values, rtol=2.5e-7)  # within a float32 ulp
    assert np.asarray(random.bernoulli(random.key(3), 0.3, (6,))).tolist() == \
        [True, False, False, False, True, False]
    assert random.normal(random.key(0)).shape == ()
    # a longer draw's prefix is the shorter draw: each position hashes its own counter
    assert np.asarray(random.normal(random.key(4), (7,)))[:3].tolist() == \
        np.asarray(random.normal(random.key(4), (3,))).tolist()


def test_sample_statistics():
    n = np.asarray(random.normal(random.key(0), (200000,)))
    assert abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01
    u = np.asarray(random.uniform(random.key(0), (200000,)))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01


def test_samples_feed_transforms():
    w = random.normal(random.key(0), (3,))
    g = fg.grad(lambda v: fnp.sum(v * w))(fnp.ones(3))
    assert np.asarray(g).tolist() == np.asarray(w).tolist()


def test_keys_under_vmap_and_jit():
    # JAX's random-numbers page: vmap over a batch of keys draws from each key its own
    # numbers; jit takes keys as arguments (recorded values from JAX 0.10)
    keys = random.split(random.key(0), 3)
    batched = fg.vmap(lambda k: random.normal(k, (2,)))(keys)
    assert batched.shape == (3, 2)
    for k, row in zip(keys, np.asarray(batched)):
        assert row.tolist() == np.asarray(random.normal(k, (2,))).tolist()
    legacy = random.key_data(keys)
    assert np.asarray(fg.vmap(random.uniform)(legacy)).tolist() == \
        [np.asarray(random.uniform(k)).item() for k in keys]
    assert words(fg.vmap(random.split)(keys)) == [words(random.split(k)) for k in keys]
    draw = fg.jit(lambda k: random.uniform(k, (3,), minval=-1.0, maxval=1.0))
    for seed in (0, 1):  # the compiled draw replays on each new key
        assert np.asarray(draw(random.key(seed))).tolist() == np.asarray(
            random.uniform(random.key(seed), (3,), minval=-1.0, maxval=1.0)).tolist()
    first, second = fg.jit(lambda k: tuple(random.split(k)))(random.key(0))
    assert words(second) == [928981903, 3453687069]


def test_errors():
    with pytest.raises(TypeError, match="single key"):
        random.normal(random.split(random.key(0)), (2,))
    with pytest.raises(TypeError, match="invalid PRNG key"):
        random.normal(fnp.ones(2), (2,))
    with pytest.raises(TypeError, match="minval must be concrete"):
        fg.vmap(lambda lo: random.uniform(random.key(0), (2,), minval=lo))(fnp.zeros(3))
    with pytest.raises(ValueError, match="float dtype"):
        random.uniform(random.key(0), (2,), dtype=np.int32)


def test_against_live_jax():
    jax = pytest.importorskip("jax", reason="JAX is an optional oracle; recorded values above")
    # JAX's default configuration (another test may have turned 64-bit mode on globally)
    x64 = getattr(jax, "enable_x64", None)
    with x64(False) if x64 is not None else contextlib.nullcontext():
        _compare_with(jax)


def _compare_with(jax):
    jr = jax.random
    for seed in (0, 1, 12345, 2 ** 31 + 3):
        k, jk = random.key(seed), jr.key(seed)
        for num in (2, 5, (2, 3)):
            assert words(random.split(k, num)) == np.asarray(jr.key_data(jr.split(jk, num))
                                                             ).tolist()
        assert words(random.fold_in(k, seed % 1000)) == \
            np.asarray(jr.key_data(jr.fold_in(jk, seed % 1000))).tolist()
        for shape in ((), (3,), (4, 5)):
            np.testing.assert_array_equal(
                np.asarray(random.uniform(k, shape, dtype=np.float32, minval=-2, maxval=5)),
                np.asarray(jr.uniform(jk, shape, minval=-2, maxval=5)))
            np.testing.assert_allclose(np.asarray(random.normal(k, shape, dtype=np.float32)),
                                       np.asarray(jr.normal(jk, shape)), rtol=3e-7, atol=1e-7)
            np.testing.assert_array_equal(np.asarray(random.bernoulli(k, 0.4, shape)),
                                          np.asarray(jr.bernoulli(jk, 0.4, shape)))
    keys, jkeys = random.split(random.key(5), 4), jr.split(jr.key(5), 4)
    np.testing.assert_allclose(np.asarray(fg.vmap(random.normal)(keys)),
                               np.asarray(jax.vmap(jr.normal)(jkeys)), rtol=3e-7)
