"""A PyTorch training loop (``nn.Sequential``, ``optim.SGD`` with momentum) and its functional twin.

The mutable side is an ordinary PyTorch program: modules own their parameters, the
optimizer updates them in place and keeps a momentum buffer per parameter. The functional
side spells out the same thing with values: the parameters are a pytree, the momentum is
another, and one step maps (params, momentum) to new ones. The network starts from the
same weights (``torch.manual_seed`` gives PyTorch's own initialisation), and the losses
agree step by step.

Run: python examples/nn_and_optim.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.mutable import nn, optim

rng = np.random.default_rng(5)
X = rng.standard_normal((64, 4)).astype(np.float32)
LABELS = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.int64)
STEPS, LR, MOMENTUM = 60, 0.2, 0.9


def train_mutable() -> tuple[list[float], dict]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
    initial = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    opt = optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = nn.CrossEntropyLoss()
    x, y = torch.tensor(X), torch.tensor(LABELS)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, initial


def train_functional(initial: dict) -> list[float]:
    one_hot = np.eye(2, dtype=np.float32)[LABELS]

    def loss(p):
        hidden = fnp.tanh(X @ p["0.weight"].T + p["0.bias"])
        logits = hidden @ p["2.weight"].T + p["2.bias"]
        shifted = logits - fg.stop_gradient(fnp.max(logits, axis=1, keepdims=True))
        log_probs = shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis=1, keepdims=True))
        return -fnp.mean(fnp.sum(log_probs * one_hot, axis=1))

    params, velocity = dict(initial), None
    step = fg.value_and_grad(loss)
    losses = []
    for _ in range(STEPS):
        value, grads = step(params)
        # SGD with momentum as PyTorch defines it: v = momentum v + g (v = g at first); p -= lr v
        velocity = grads if velocity is None else tree_util.tree_map(
            lambda v, g: MOMENTUM * v + g, velocity, grads)
        params = tree_util.tree_map(lambda p, v: p - LR * v, params, velocity)
        losses.append(float(value))
    return losses


def main() -> None:
    mutable, initial = train_mutable()
    functional = train_functional(initial)
    print("step  mutable (nn + optim)  functional (pytrees)")
    for i in (0, 1, 10, 30, STEPS - 1):
        print(f"{i:4d}  {mutable[i]:.7f}  {functional[i]:.7f}")
    print("largest difference over all steps:", max(abs(p - q) for p, q in zip(functional, mutable)))


if __name__ == "__main__":
    main()
