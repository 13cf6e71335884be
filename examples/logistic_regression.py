"""Logistic regression trained both ways, with identical losses step by step.

Two Gaussian blobs, a linear classifier, the mean binary cross-entropy written with
``log(1 + exp(-y z))`` (labels y in {-1, +1}), plain gradient descent. The functional model
returns new parameters each step; the mutable model updates leaf tensors in place under
``no_grad``. Same float64 arithmetic, same losses.

Run: python examples/logistic_regression.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp

rng = np.random.default_rng(1)
N = 100
X = np.concatenate([rng.normal(-1.0, 1.0, (N, 2)), rng.normal(1.5, 1.0, (N, 2))])
Y = np.concatenate([-np.ones(N), np.ones(N)])
STEPS, LR = 100, 0.5


def train_functional() -> tuple[list[float], float]:
    def loss(w, b):
        return fnp.mean(fnp.log1p(fnp.exp(-Y * (X @ w + b))))

    w, b = np.zeros(2), 0.0
    step = fg.value_and_grad(loss, argnums=(0, 1))
    losses = []
    for _ in range(STEPS):
        value, (gw, gb) = step(w, b)
        losses.append(float(value))
        w, b = w - LR * gw, b - LR * gb
    accuracy = float(np.mean(np.sign(X @ np.asarray(w) + float(b)) == Y))
    return losses, accuracy


def train_mutable() -> tuple[list[float], float]:
    x, y = torch.tensor(X), torch.tensor(Y)
    w = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(STEPS):
        loss = torch.log1p(torch.exp(-y * (x @ w + b))).mean()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w -= LR * w.grad
            b -= LR * b.grad
        w.grad = None                  # as optimizer.zero_grad(set_to_none=True)
        b.grad = None
    with torch.no_grad():
        accuracy = (((x @ w + b) > 0) == (y > 0)).double().mean().item()
    return losses, accuracy


def main() -> None:
    functional, acc_functional = train_functional()
    mutable, acc_mutable = train_mutable()
    print("step  functional loss   mutable loss")
    for i in (0, 1, 5, 20, STEPS - 1):
        print(f"{i:4d}  {functional[i]:.12f}  {mutable[i]:.12f}")
    print("largest difference over all steps:", max(abs(p - q) for p, q in zip(functional, mutable)))
    print("training accuracy: functional", acc_functional, " mutable", acc_mutable)


if __name__ == "__main__":
    main()
