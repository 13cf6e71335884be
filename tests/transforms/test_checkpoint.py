"""checkpoint: equal gradients (first and second order, under vmap and jvp), the forward
really recomputed in the backward pass, one tape entry instead of the body, and lower peak
memory on a deep chain."""
from __future__ import annotations

import gc
import tracemalloc

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads


def block(x, w):
    return fnp.tanh(x * w) * fnp.sin(x) + x


def chain(x, w, depth, remat):
    step = fg.checkpoint(block) if remat else block
    for _ in range(depth):
        x = step(x, w)
    return fnp.sum(x ** 2)


def test_gradients_equal_with_and_without_checkpoint():
    x = fnp.array(np.linspace(-1, 1, 7))
    w = fnp.array(0.7)
    plain = fg.grad(chain, argnums=(0, 1))(x, w, 6, False)
    remat = fg.grad(chain, argnums=(0, 1))(x, w, 6, True)
    for p, r in zip(plain, remat):
        np.testing.assert_allclose(r, p, rtol=1e-13, atol=1e-14)


def test_second_order_vmap_and_forward_mode_through_checkpoint():
    x = fnp.array([0.2, -0.4, 0.9])
    w = fnp.array(1.3)
    H_plain = fg.hessian(lambda x: chain(x, w, 3, False))(x)
    H_remat = fg.hessian(lambda x: chain(x, w, 3, True))(x)
    np.testing.assert_allclose(H_remat, H_plain, rtol=1e-12)
    xs = fnp.array(np.random.default_rng(0).standard_normal((4, 3)))
    per_example = fg.vmap(fg.grad(lambda x: chain(x, w, 2, True)))(xs)
    np.testing.assert_allclose(per_example, fg.vmap(fg.grad(lambda x: chain(x, w, 2, False)))(xs),
                               rtol=1e-12)
    check_grads(lambda x: chain(x, w, 2, True), (x,), order=2, modes=("rev", "fwd"))


def test_the_forward_is_recomputed_in_the_backward_pass():
    runs = []

    def body(x):
        runs.append(1)
        return fnp.exp(fnp.sin(x))

    f = fg.checkpoint(body)
    fg.grad(lambda x: fnp.sum(f(x)))(fnp.array([0.1, 0.2]))
    assert len(runs) == 2  # once forward, once to rebuild the tape for the backward pass
    tape = fg.make_tape(lambda x: fnp.sum(f(x)))(fnp.array([0.1, 0.2]))
    assert tape.primitives() == ["checkpoint(body)", "sum"]  # the body's steps are not kept


def _peak_bytes(fn):
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_falls_on_a_deep_chain():
    x = fnp.array(np.random.default_rng(1).standard_normal(20_000))
    w = fnp.array(0.9)
    grad_of = fg.grad(chain)
    plain = _peak_bytes(lambda: grad_of(x, w, 30, False))
    remat = _peak_bytes(lambda: grad_of(x, w, 30, True))
    assert remat < 0.5 * plain, (remat, plain)


def test_pytree_arguments_several_outputs_and_a_reused_vjp():
    blk = fg.checkpoint(lambda p, x: (fnp.tanh(p["w"] * x), fnp.sum(x * p["b"])))
    params = {"w": fnp.array(0.5), "b": fnp.array([1.0, 2.0])}
    x = fnp.array([0.3, -0.2])

    def loss(block, p, x):
        a, b = block(p, x)
        return fnp.sum(a) * b

    plain = fg.grad(loss, (1, 2))(lambda p, x: (fnp.tanh(p["w"] * x), fnp.sum(x * p["b"])),
                                  params, x)
    remat = fg.grad(loss, (1, 2))(blk, params, x)
    for key in ("w", "b"):
        np.testing.assert_allclose(remat[0][key], plain[0][key], rtol=1e-13)
    np.testing.assert_allclose(remat[1], plain[1], rtol=1e-13)
    _, vjp_fn = fg.vjp(lambda x: blk(params, x)[0], x)
    first = vjp_fn(fnp.ones(2))[0]
    np.testing.assert_allclose(vjp_fn(fnp.array([2.0, 0.0]))[0], [2 * float(first[0]), 0.0])
    np.testing.assert_allclose(vjp_fn(fnp.ones(2))[0], first)  # the same again
