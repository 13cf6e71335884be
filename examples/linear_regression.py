"""Linear regression trained both ways, with identical losses step by step.

Functional: parameters are values; ``value_and_grad`` returns the loss and the gradient;
an update makes new arrays (``w = w - lr * g``). Mutable: parameters are leaf tensors;
``loss.backward()`` accumulates into ``.grad``; the update is written in place under
``no_grad`` and ``.grad`` is zeroed for the next step, as a PyTorch training loop does.
Both run in float64 on the same data, so the losses agree to the last bit or nearly; the
final weights are compared with the least-squares solution.

Run: python examples/linear_regression.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp

rng = np.random.default_rng(0)
X = rng.standard_normal((64, 3))
TRUE_W, TRUE_B = np.array([2.0, -1.0, 0.5]), 0.3
Y = X @ TRUE_W + TRUE_B + 0.01 * rng.standard_normal(64)
STEPS, LR = 200, 0.1


def train_functional() -> tuple[list[float], np.ndarray]:
    def loss(params):
        w, b = params
        return fnp.mean((X @ w + b - Y) ** 2)

    params = (np.zeros(3), 0.0)
    step = fg.value_and_grad(loss)
    losses = []
    for _ in range(STEPS):
        value, (gw, gb) = step(params)
        losses.append(float(value))
        params = (params[0] - LR * gw, params[1] - LR * gb)
    return losses, np.asarray(params[0])


def train_mutable() -> tuple[list[float], np.ndarray]:
    x, y = torch.tensor(X), torch.tensor(Y)
    w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(STEPS):
        loss = ((x @ w + b - y) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w -= LR * w.grad
            b -= LR * b.grad
        w.grad.zero_()
        b.grad.zero_()
    return losses, w.detach().numpy()


def main() -> None:
    functional, w_functional = train_functional()
    mutable, w_mutable = train_mutable()
    print("step  functional loss   mutable loss")
    for i in (0, 1, 2, 10, 50, STEPS - 1):
        print(f"{i:4d}  {functional[i]:.12f}  {mutable[i]:.12f}")
    print("largest difference over all steps:", max(abs(p - q) for p, q in zip(functional, mutable)))
    solution = np.linalg.lstsq(np.c_[X, np.ones(64)], Y, rcond=None)[0]
    print("functional weights:", np.round(w_functional, 6).tolist())
    print("mutable weights:   ", np.round(w_mutable, 6).tolist())
    print("least squares:     ", np.round(solution[:3], 6).tolist())


if __name__ == "__main__":
    main()
