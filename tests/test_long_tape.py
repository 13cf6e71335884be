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
