"""The engine keeps no module-level mutable state on its paths: transforms run from many
threads at once give each thread its own right answer."""
from __future__ import annotations

import threading

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp


def _run_in_threads(work, n_threads=8):
    start = threading.Barrier(n_threads)
    results, failures = {}, []

    def run(k):
        start.wait()
        try:
            results[k] = work(k)
        except BaseException as err:  # noqa: BLE001 - reported below
            failures.append(err)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    return results


def test_every_transform_from_many_threads():
    def f(x):
        return fnp.sum(fnp.sin(x) * x)

    def work(k):
        x = np.linspace(0.1, 1.0, 5) + k
        out = []
        for _ in range(20):
            out.append((
                fg.grad(f)(x),
                fg.grad(fg.grad(lambda a: fnp.sin(a) * a))(float(k)),
                fg.jvp(f, (x,), (np.ones(5),))[1],
                fg.vmap(fg.grad(lambda a: fnp.sin(a) * a))(x),
                fg.checkpoint(f)(x),
            ))
        return x, out

    for x, out in _run_in_threads(work).values():
        first = np.cos(x) * x + np.sin(x)
        k = x[0] - 0.1
        for g, h, t, per, value in out:
            np.testing.assert_allclose(g, first)
            assert np.isclose(h, 2 * np.cos(k) - k * np.sin(k))
            assert np.isclose(t, first.sum())
            np.testing.assert_allclose(per, first)
            assert np.isclose(value, np.sum(np.sin(x) * x))


def test_custom_jvp_and_checkpoint_from_many_threads():
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvps(lambda t, out, x: 3.0 * out * t)  # f' := 3 f
    block = fg.checkpoint(lambda x: f(x) * 2.0)

    def work(k):
        x = 0.1 * (k + 1)
        return x, [(float(fg.grad(fg.grad(f))(x)), float(fg.grad(block)(x))) for _ in range(10)]

    for x, pairs in _run_in_threads(work).values():
        for second, remat in pairs:
            assert np.isclose(second, 9 * np.sin(x)) and np.isclose(remat, 6 * np.sin(x))
