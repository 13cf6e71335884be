"""funcgrad.mutable's per-op overhead beside PyTorch CPU, in the same run.

Small tensors (float32[3]), forward and backward together: 300 ops (sin, *1.01, +0.1, tanh),
an in-place variant (clone, mul_, add_, tanh_), and tensor-with-tensor ops through views
(t * t, t + t, view, indexing, tanh). Target (issue 3): no slower than PyTorch per op.
Run: python benchmarks/bench_mutable.py
"""
from __future__ import annotations

import gc
import time

import numpy as np

import funcgrad.mutable as fm

N_BLOCKS = 75  # 4 ops per block -> 300 recorded ops


def _interleaved_times(steps: list, repeat: int = 15) -> list:
    """Seconds per round for each step, the steps taking turns round by round, so that load
    from other processes falls on all systems alike (this machine is shared and noisy)."""
    for step in steps:
        step()  # warm-up
    times = [[] for _ in steps]
    for _ in range(repeat):
        for k, step in enumerate(steps):
            start = time.perf_counter()
            step()
            times[k].append(time.perf_counter() - start)
    return times


def chain(torch_like):
    def step():
        x = torch_like.tensor([0.1, 0.2, 0.3], requires_grad=True)
        y = x
        for _ in range(N_BLOCKS):
            y = (y.sin() * 1.01 + 0.1).tanh()
        y.sum().backward()
        return x.grad
    return step


def inplace_chain(torch_like):
    def step():
        x = torch_like.tensor([0.1, 0.2, 0.3], requires_grad=True)
        y = x.clone()
        for _ in range(N_BLOCKS):
            y.mul_(1.01)
            y.add_(0.1)
            y.tanh_()
            y = y * 1.0
        y.sum().backward()
        return x.grad
    return step


def tensor_chain(torch_like):
    """Tensor-with-tensor ops and a view: the paths a model's layers take."""
    def step():
        x = torch_like.tensor([0.1, 0.2, 0.3], requires_grad=True)
        w = torch_like.tensor([0.9, 1.1, 1.0], requires_grad=True)
        y = x
        for _ in range(N_BLOCKS):
            y = (y * w + x).view(3, 1)[:, 0].tanh()
        y.sum().backward()
        return x.grad
    return step


WORKLOADS = [("300 small ops, forward+backward, per op", chain, 4 * N_BLOCKS + 1),
             ("300 in-place ops (mul_, add_, tanh_, *), per op", inplace_chain, 4 * N_BLOCKS + 2),
             ("375 tensor ops (t*t, t+t, view, [:, 0], tanh), per op", tensor_chain,
              5 * N_BLOCKS + 1)]


def _systems():
    systems = [("funcgrad.mutable", fm)]
    try:
        import torch
        torch.set_num_threads(1)
        systems.append((f"PyTorch {torch.__version__} CPU", torch))
    except ImportError:
        pass
    return systems


def run() -> list:
    """Rows (workload, system, result): the median time per op, and for funcgrad.mutable the
    median over rounds of its time divided by PyTorch's time in the same round."""
    rows = []
    systems = _systems()
    for title, make, n_ops in WORKLOADS:
        gc.collect()
        times = _interleaved_times([make(module) for _, module in systems])
        for (name, _), own in zip(systems, times):
            per_op = float(np.median(own)) / n_ops
            ratio = ""
            if name == "funcgrad.mutable" and len(systems) > 1:
                ratio = f" ({float(np.median(np.divide(own, times[1]))):.2f}x PyTorch)"
            rows.append((title, name, f"{per_op * 1e6:.2f} us/op{ratio}"))
        if len(systems) == 1:
            rows.append((title, "PyTorch", "(not installed: no comparison)"))
    return rows


if __name__ == "__main__":
    rows = run()
    widths = [max(len(str(r[i])) for r in rows) for i in range(3)]
    for row in rows:
        print(" | ".join(str(c).ljust(w) for c, w in zip(row, widths)))
