"""The reverse walk is iterative: a million-entry tape differentiates without RecursionError."""
from __future__ import annotations

import sys

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp


def test_grad_through_a_million_entry_tape():
    steps = 1_000_000
    rate = 1.0 + 1e-7

    def chain(x):
        for _ in range(steps):
            x = x * rate
        return x

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # anything recursive on depth would fail at once
    try:
        g = fg.grad(chain)(1.0)
    finally:
        sys.setrecursionlimit(old_limit)
    assert np.isclose(g, rate ** steps, rtol=1e-9)


def test_deep_nested_expression_second_order():
    def chain(x):
        for _ in range(2_000):
            x = fnp.sin(x) * 0.5 + x * 0.5
        return x

    x0 = 0.3
    # The same recurrence by hand: first and second derivatives propagated together.
    x, d1, d2 = x0, 1.0, 0.0
    for _ in range(2_000):
        d2 = (0.5 * np.cos(x) + 0.5) * d2 - 0.5 * np.sin(x) * d1 ** 2
        d1 = (0.5 * np.cos(x) + 0.5) * d1
        x = np.sin(x) * 0.5 + x * 0.5
    assert np.isclose(fg.grad(chain)(x0), d1, rtol=1e-10)
    assert np.isclose(fg.grad(fg.grad(chain))(x0), d2, rtol=1e-8)


def test_tape_entries_of_plain_values_are_not_tracked_by_the_cyclic_collector():
    """Entries name declared primitives by number and stand in for unread scalars with
    untracked arrays, so a tuple of plain values is left untracked by CPython's collector:
    a long recording does not make each collection walk the whole tape (W4's
    100,000-step loop paid a quarter of its time for that)."""
    import gc

    from funcgrad._src.core import primitive_of
    from funcgrad._src.reverse import PRIM, ReverseTrace

    trace = ReverseTrace()
    x = trace.leaf(np.asarray(0.5))
    for _ in range(100):
        x = x * 0.999 + 0.001 * fnp.sin(x)
    gc.collect()
    entries = [e for e in trace.tape if e is not None]
    names = [primitive_of(e[PRIM]).name for e in entries]
    assert names[:4] == ["multiply", "sin", "multiply", "add"]
    tracked = [n for e, n in zip(entries, names) if gc.is_tracked(e)]
    # add keeps only shapes, through a shared stand-in that is itself untracked
    assert tracked == []
    trace.alive = False
