"""An unrolled RNN trained both ways, with identical losses step by step.

A one-layer tanh RNN reads a noisy sine wave and predicts its next value. The functional
model writes the recurrence as a Python loop over immutable arrays (``h = tanh(...)``); the
mutable model writes the same loop over tensors. Backpropagation through time is nothing
special in either: the loop is recorded, step by step, and the backward pass walks it back.

Run: python examples/rnn_unrolled.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp

rng = np.random.default_rng(3)
T, HIDDEN = 20, 8
t = np.linspace(0.0, 4.0 * np.pi, T + 1)
SERIES = np.sin(t) + 0.05 * rng.standard_normal(T + 1)
INPUTS, TARGETS = SERIES[:-1], SERIES[1:]
INIT = [rng.standard_normal((1, HIDDEN)) * 0.5, rng.standard_normal((HIDDEN, HIDDEN)) * 0.3,
        np.zeros(HIDDEN), rng.standard_normal(HIDDEN) * 0.5]
STEPS, LR = 100, 0.05


def functional_loss(params):
    w_in, w_rec, b, w_out = params
    h = fnp.zeros(HIDDEN)
    total = 0.0
    for k in range(T):
        h = fnp.tanh(INPUTS[k] * w_in[0] + h @ w_rec + b)
        total = total + (h @ w_out - TARGETS[k]) ** 2
    return total / T


def mutable_loss(params):
    w_in, w_rec, b, w_out = params
    h = torch.zeros(HIDDEN, dtype=torch.float64)
    total = 0.0
    for k in range(T):
        h = torch.tanh(float(INPUTS[k]) * w_in[0] + h @ w_rec + b)
        total = total + (h @ w_out - float(TARGETS[k])) ** 2
    return total / T


def main() -> None:
    params = list(INIT)
    step = fg.value_and_grad(functional_loss)
    functional = []
    for _ in range(STEPS):
        value, grads = step(params)
        functional.append(float(value))
        params = [p - LR * g for p, g in zip(params, grads)]

    tensors = [torch.tensor(p, requires_grad=True) for p in INIT]
    mutable = []
    for _ in range(STEPS):
        loss = mutable_loss(tensors)
        mutable.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in tensors:
                p -= LR * p.grad
                p.grad.zero_()

    print(f"backpropagation through {T} time steps, {STEPS} training steps")
    print("step  functional loss   mutable loss")
    for i in (0, 1, 10, 50, STEPS - 1):
        print(f"{i:4d}  {functional[i]:.12f}  {mutable[i]:.12f}")
    print("largest difference over all steps:", max(abs(p - q) for p, q in zip(functional, mutable)))


if __name__ == "__main__":
    main()
