"""Core engine benchmarks: per-op overhead and the long tape, beside hand-written NumPy and
whichever peers (HIPS autograd, PyTorch CPU) are installed.

Targets (issue 2): per-op value+gradient at most 3x hand-written NumPy; the long tape at
most 10 us per step and 300 bytes of peak memory per recorded op.
"""
from __future__ import annotations


import numpy as np

from _measure import median_time, peak_bytes

import funcgrad as fg
import funcgrad.numpy as fnp

N_BLOCKS = 75            # 4 ops each: sin, *1.01, +0.1, tanh -> 300 ops
LONG_STEPS = 100_000     # x = x*0.999 + 0.001*sin(x): 4 recorded ops per step


# --- per-op overhead ---------------------------------------------------------------------
def chain_funcgrad(x):
    for _ in range(N_BLOCKS):
        x = fnp.tanh(fnp.sin(x) * 1.01 + 0.1)
    return fnp.sum(x)


def chain_by_hand(x):
    """Forward and hand-derived backward in plain NumPy: the floor any library pays."""
    saved = []
    for _ in range(N_BLOCKS):
        s = np.sin(x)
        t = np.tanh(s * 1.01 + 0.1)
        saved.append((x, t))
        x = t
    value = np.sum(x)
    g = np.ones_like(x)
    for x_in, t in reversed(saved):
        g = g * (1 - t * t) * 1.01 * np.cos(x_in)
    return value, g


def _peers_chain():
    peers = {}
    try:
        import autograd
        import autograd.numpy as anp

        def chain_autograd(x):
            for _ in range(N_BLOCKS):
                x = anp.tanh(anp.sin(x) * 1.01 + 0.1)
            return anp.sum(x)
        vg = autograd.value_and_grad(chain_autograd)
        peers["HIPS autograd"] = lambda x: vg(x)
    except ImportError:
        pass
    try:
        import torch

        def chain_torch(x):
            t = torch.tensor(x, requires_grad=True)
            y = t
            for _ in range(N_BLOCKS):
                y = torch.tanh(torch.sin(y) * 1.01 + 0.1)
            s = y.sum()
            s.backward()
            return s.detach(), t.grad
        peers["PyTorch CPU"] = chain_torch
    except ImportError:
        pass
    return peers


def per_op_rows(repeat: int = 60) -> list[tuple[str, str, str]]:
    x = np.random.default_rng(0).standard_normal(3)
    value_and_grad = fg.value_and_grad(chain_funcgrad)
    value, g = value_and_grad(x)
    ref_value, ref_g = chain_by_hand(x)
    assert np.allclose(g, ref_g) and np.isclose(value, ref_value), "benchmark gradients disagree"
    n_ops = 4 * N_BLOCKS
    base = median_time(lambda: chain_by_hand(x), repeat)
    rows = [("300 small ops, value+grad, per op", "NumPy by hand", f"{base / n_ops * 1e6:.2f} us (1.00x)")]
    ours = median_time(lambda: value_and_grad(x), repeat)
    rows.append(("300 small ops, value+grad, per op", "funcgrad",
                 f"{ours / n_ops * 1e6:.2f} us ({ours / base:.2f}x; target <= 3x)"))
    for name, fn in _peers_chain().items():
        t = median_time(lambda: fn(x), repeat)
        rows.append(("300 small ops, value+grad, per op", name, f"{t / n_ops * 1e6:.2f} us ({t / base:.2f}x)"))
    return rows


# --- the long tape -----------------------------------------------------------------------
def long_loop(x, steps=LONG_STEPS):
    for _ in range(steps):
        x = x * 0.999 + 0.001 * fnp.sin(x)
    return x



def long_tape_rows(steps: int = LONG_STEPS) -> list[tuple[str, str, str]]:
    g = fg.grad(lambda x: long_loop(x, steps))
    expected = 1.0
    x0 = 0.5
    x = x0
    for _ in range(steps):  # the derivative by hand, to check the answer
        expected *= 0.999 + 0.001 * np.cos(x)
        x = x * 0.999 + 0.001 * np.sin(x)
    assert np.isclose(g(x0), expected), "long-tape gradient is wrong"
    seconds = median_time(lambda: g(x0), repeat=3)
    n_ops = 4 * steps
    peak = peak_bytes(lambda: g(x0))
    rows = [("100,000-step scalar loop, per step", "funcgrad",
             f"{seconds / steps * 1e6:.1f} us (target <= 10 us)"),
            ("same loop, peak memory per recorded op", "funcgrad",
             f"{peak / n_ops:.0f} B (target <= 300 B)")]
    try:
        import torch

        def torch_loop():
            t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
            y = t
            for _ in range(steps):
                y = y * 0.999 + 0.001 * torch.sin(y)
            y.backward()
            return t.grad
        seconds = median_time(torch_loop, repeat=3)
        rows.append(("100,000-step scalar loop, per step", "PyTorch CPU",
                     f"{seconds / steps * 1e6:.1f} us"))
        rows.append(("same loop, peak memory per recorded op", "PyTorch CPU",
                     f"{peak_bytes(torch_loop) / n_ops:.0f} B (Python-side only: tracemalloc "
                     "does not see PyTorch's C++ allocations)"))
    except ImportError:
        pass
    return rows


# --- big arrays: memory, not Python overhead, decides ------------------------------------
BIG = 4_000_000


def big_array_rows() -> list[tuple[str, str, str]]:
    x = np.random.default_rng(1).standard_normal(BIG)
    g = fg.grad(lambda x: fnp.sum(fnp.exp(fnp.sin(x)) * x))

    def by_hand():
        s = np.sin(x)
        e = np.exp(s)
        value = np.sum(e * x)
        return value, e * np.cos(x) * x + e

    np.testing.assert_allclose(g(x), by_hand()[1], rtol=1e-9, atol=1e-14)
    base = peak_bytes(by_hand)
    ours = peak_bytes(lambda: g(x))
    label = "sum(exp(sin(x))*x), x float64[4M]: peak memory"
    return [(label, "NumPy by hand", f"{base / 1e6:.0f} MB (1.00x)"),
            (label, "funcgrad", f"{ours / 1e6:.0f} MB ({ours / base:.2f}x)")]


def run() -> list[tuple[str, str, str]]:
    return per_op_rows() + long_tape_rows() + big_array_rows()


if __name__ == "__main__":
    for row in run():
        print(" | ".join(row))
