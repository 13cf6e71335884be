"""The engine under stress: every transform from dozens of threads at once gives the
single-threaded answers; nothing of a finished transform survives it (no tape, no
intermediate array, no growth over repeated calls); an exception or KeyboardInterrupt
raised anywhere (the user's function, a custom rule, forward or backward) leaves the engine
as it was: the garbage collector on, NumPy's error state, debug_nans and the next
gradient all as before."""
from __future__ import annotations

import gc
import random
import threading
import tracemalloc
import weakref

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

N_THREADS = 48


# --- threads ------------------------------------------------------------------------------
def _custom_vjp_doubling():
    f = fg.custom_vjp(lambda x: fnp.sin(x))
    f.defvjp(lambda x: (f(x), f(x)), lambda ans, g: (g * 2 * ans,))  # f' := 2 f
    return f


def _custom_jvp_tripling():
    f = fg.custom_jvp(lambda x: fnp.sin(x))
    f.defjvps(lambda t, out, x: 3.0 * out * t)  # f' := 3 f
    return f


DOUBLING = _custom_vjp_doubling()
TRIPLING = _custom_jvp_tripling()
BLOCK = fg.checkpoint(lambda x: fnp.sin(fnp.cos(x)) * x)
JIT_GRAD = fg.jit(fg.grad(lambda x: fnp.sum(fnp.tanh(x) * x)))
GRAD_OF_JIT = fg.grad(lambda x: fnp.sum(fg.jit(lambda y: fnp.exp(y) * y)(x)))


def f(x):
    return fnp.sum(fnp.sin(x) * x + fnp.exp(-x * x))


def _workloads(k):
    """Each workload with its closed form (k varies the inputs from thread to thread)."""
    x = np.linspace(0.1, 1.0, 5) + 0.01 * k
    s = 0.3 + 0.01 * k
    d_f = np.cos(x) * x + np.sin(x) - 2 * x * np.exp(-x * x)
    return [
        ("grad", lambda: fg.grad(f)(x), d_f),
        ("value_and_grad", lambda: fg.value_and_grad(f)(x)[1], d_f),
        ("vjp", lambda: fg.vjp(lambda a: fnp.sin(a) * a, x)[1](np.ones(5))[0],
         np.cos(x) * x + np.sin(x)),
        ("jvp", lambda: fg.jvp(f, (x,), (np.ones(5),))[1], d_f.sum()),
        ("vmap(grad)", lambda: fg.vmap(fg.grad(lambda a: fnp.sin(a) * a))(x),
         np.cos(x) * x + np.sin(x)),
        ("hessian", lambda: fg.hessian(lambda a: fnp.sum(fnp.sin(a)))(x),
         np.diag(-np.sin(x))),
        ("custom_vjp", lambda: fg.grad(DOUBLING)(s), 2 * np.sin(s)),
        ("custom_vjp 2nd", lambda: fg.grad(fg.grad(DOUBLING))(s), 4 * np.sin(s)),
        ("custom_jvp", lambda: fg.grad(TRIPLING)(s), 3 * np.sin(s)),
        ("custom_jvp 2nd", lambda: fg.grad(fg.grad(TRIPLING))(s), 9 * np.sin(s)),
        ("custom_jvp jvp", lambda: fg.jvp(TRIPLING, (s,), (1.0,))[1], 3 * np.sin(s)),
        ("checkpoint", lambda: fg.grad(lambda a: fnp.sum(BLOCK(a)))(x),
         np.cos(np.cos(x)) * -np.sin(x) * x + np.sin(np.cos(x))),
        ("jit(grad)", lambda: JIT_GRAD(x), (1 - np.tanh(x) ** 2) * x + np.tanh(x)),
        ("grad(jit)", lambda: GRAD_OF_JIT(x), np.exp(x) * (x + 1)),
    ]


def test_every_transform_from_dozens_of_threads_gives_the_single_threaded_answer():
    expected = {}
    for k in range(N_THREADS):
        for name, work, closed_form in _workloads(k):
            value = np.asarray(work())
            np.testing.assert_allclose(value, closed_form, rtol=1e-10, atol=1e-12,
                                       err_msg=name)
            expected[k, name] = value
    start = threading.Barrier(N_THREADS)
    failures = []

    def run(k):
        order = _workloads(k) * 3
        random.Random(k).shuffle(order)  # threads interleave different transforms
        start.wait()
        try:
            for name, work, _ in order:
                got = np.asarray(work())
                if not np.array_equal(got, expected[k, name]):
                    failures.append((k, name, got, expected[k, name]))
        except BaseException as err:  # noqa: BLE001 - reported below
            failures.append((k, err))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]


def test_debug_nans_in_some_threads_only():
    start = threading.Barrier(16)
    results = {}

    def run(k):
        start.wait()
        try:
            if k % 2:
                with fg.debug_nans():
                    fg.grad(lambda x: fnp.sum(fnp.sin(x) * np.nan))(np.ones(2))
            else:
                for _ in range(20):
                    g = fg.grad(lambda x: fnp.sum(fnp.sin(x) * np.nan))(np.ones(2))
                results[k] = np.isnan(g).all()
        except FloatingPointError as err:
            results[k] = "forward pass of multiply" in str(err)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(16)]
    with np.errstate(invalid="ignore"):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {k: True for k in range(16)}
    assert fnp.sin.primitive.impl is np.sin


# --- leaks --------------------------------------------------------------------------------
def _recording_weakrefs(refs):
    def g(x):
        y = x
        for _ in range(20):
            y = fnp.tanh(fnp.sin(y) * 1.01 + 0.1)
            refs.append(weakref.ref(y._value))   # the intermediate array a tracer stands for
        if y._trace is not None:  # (checkpoint's first run is on plain values)
            refs.append(weakref.ref(y._trace))   # the trace, and with it the tape
        return fnp.sum(y)
    return g


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "checkpoint", "vmap"])
def test_nothing_of_a_finished_transform_survives_it(transform):
    refs = []
    g = _recording_weakrefs(refs)
    x = np.linspace(0.0, 1.0, 4)
    gc.disable()  # freed by reference counting alone: the engine builds no cycles
    try:
        if transform == "grad":
            result = fg.grad(g)(x)
        elif transform == "vjp":
            out, vjp_fn = fg.vjp(g, x)
            result = vjp_fn(1.0)
            assert any(r() is not None for r in refs)  # vjp_fn holds the tape...
            del vjp_fn
        elif transform == "jvp":
            result = fg.jvp(g, (x,), (np.ones(4),))
        elif transform == "checkpoint":
            result = fg.grad(fg.checkpoint(g))(x)
        else:
            result = fg.vmap(g)(np.ones((3, 4)))
        assert refs and all(r() is None for r in refs), transform  # ...until it goes
    finally:
        gc.enable()
    assert result is not None


def test_repeated_gradients_do_not_grow_memory():
    vg = fg.value_and_grad(f)
    x = np.linspace(0.0, 1.0, 50)
    for _ in range(50):
        vg(x)
    tracemalloc.start()
    try:
        vg(x)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(500):
            vg(x)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20_000, grown  # bytes, over 500 calls


def test_a_failed_transform_leaves_nothing_behind():
    refs = []
    g = _recording_weakrefs(refs)

    def failing(x):
        g(x)
        raise ValueError("the user's own error")

    with pytest.raises(ValueError, match="own error"):
        fg.grad(failing)(np.ones(3))
    gc.collect()  # (the traceback held the frames; it is gone now)
    assert refs and all(r() is None for r in refs)


# --- interrupts ---------------------------------------------------------------------------
def _engine_state():
    return (gc.isenabled(), np.geterr(), np.geterrcall(), fg.config.debug_nans,
            fnp.sin.primitive.impl)


def _interrupting_after(n_ops):
    """A function that records `n_ops` operations and then is interrupted."""
    def f(x):
        for _ in range(n_ops):
            x = fnp.sin(x) * 1.1
        raise KeyboardInterrupt
    return f


def _interrupted_backward_rule():
    f = fg.custom_vjp(lambda x: fnp.sin(x))

    def bwd(res, g):
        raise KeyboardInterrupt

    f.defvjp(lambda x: (f(x), x), bwd)
    return lambda x: fnp.sum(f(fnp.cos(x)) * x)


def _interrupted_forward_rule():
    f = fg.custom_vjp(lambda x: fnp.sin(x))

    def fwd(x):
        raise KeyboardInterrupt

    f.defvjp(fwd, lambda res, g: (g,))
    return lambda x: fnp.sum(f(x))


def _interrupted_jvp_rule():
    f = fg.custom_jvp(lambda x: fnp.sin(x))

    def rule(primals, tangents):
        raise KeyboardInterrupt

    f.defjvp(rule)
    return lambda x: fnp.sum(f(x))


def _interrupted_recomputation():
    calls = []

    def body(x):
        calls.append(1)
        if len(calls) == 2:  # the second run is the backward pass's recomputation
            raise KeyboardInterrupt
        return fnp.sin(x) * x

    block = fg.checkpoint(body)
    return lambda x: fnp.sum(block(x))


INTERRUPTIONS = {
    "forward": lambda: fg.grad(lambda x: fnp.sum(_interrupting_after(30)(x)))(np.ones(3)),
    "forward, nested": lambda: fg.grad(fg.grad(
        lambda x: fnp.sum(_interrupting_after(5)(x))))(0.5),
    "custom_vjp bwd": lambda: fg.grad(_interrupted_backward_rule())(np.ones(3)),
    "custom_vjp fwd": lambda: fg.grad(_interrupted_forward_rule())(np.ones(3)),
    "custom_jvp rule, jvp": lambda: fg.jvp(_interrupted_jvp_rule(), (np.ones(3),),
                                           (np.ones(3),)),
    "custom_jvp rule, grad": lambda: fg.grad(_interrupted_jvp_rule())(np.ones(3)),
    "checkpoint recompute": lambda: fg.grad(_interrupted_recomputation())(np.ones(3)),
    "vmap": lambda: fg.vmap(_interrupting_after(3))(np.ones((2, 3))),
    "jvp": lambda: fg.jvp(_interrupting_after(3), (np.ones(3),), (np.ones(3),)),
    "jit": lambda: fg.jit(_interrupting_after(3))(np.ones(3)),
    "debug_nans": lambda: _under_debug_nans(_interrupted_backward_rule()),
}


def _under_debug_nans(fn):
    with fg.debug_nans():
        fg.grad(fn)(np.ones(3))


@pytest.mark.parametrize("where", list(INTERRUPTIONS))
def test_an_interrupt_anywhere_leaves_the_engine_as_it_was(where):
    before = _engine_state()
    with pytest.raises(KeyboardInterrupt):
        INTERRUPTIONS[where]()
    assert _engine_state() == before
    # the next gradient is right
    x = np.linspace(0.1, 1.0, 4)
    np.testing.assert_allclose(fg.grad(f)(x),
                               np.cos(x) * x + np.sin(x) - 2 * x * np.exp(-x * x))
    np.testing.assert_allclose(fg.grad(DOUBLING)(0.3), 2 * np.sin(0.3))


def test_an_interrupted_jit_trace_is_not_cached():
    calls = []

    def f(x):
        calls.append(1)
        y = fnp.sin(x) * 2.0
        if len(calls) == 1:
            raise KeyboardInterrupt
        return y

    jitted = fg.jit(f)
    with pytest.raises(KeyboardInterrupt):
        jitted(np.ones(3))
    np.testing.assert_allclose(jitted(np.ones(3)), 2 * np.sin(np.ones(3)))
    np.testing.assert_allclose(jitted(np.zeros(3)), np.zeros(3))
