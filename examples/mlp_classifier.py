"""A small MLP classifier trained both ways, with identical losses step by step.

Three interleaved spiral arms in the plane (generated here), a 2-16-3 network with a tanh
hidden layer, softmax cross-entropy, full-batch gradient descent. The functional model
keeps the parameters in a dict (a pytree) and maps the update over it; the mutable model
keeps leaf tensors and updates them in place under ``no_grad``. The log-softmax subtracts
the row maximum, held constant (``stop_gradient`` / ``detach``), as both libraries' own
``log_softmax`` do.

Run: python examples/mlp_classifier.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp
from funcgrad import tree_util

rng = np.random.default_rng(2)
PER_CLASS, CLASSES, HIDDEN = 40, 3, 16
radius = np.tile(np.linspace(0.1, 1.0, PER_CLASS), CLASSES)
angle = np.concatenate([np.linspace(4.0 * k, 4.0 * (k + 1), PER_CLASS) for k in range(CLASSES)])
angle = angle + 0.2 * rng.standard_normal(angle.shape)
X = np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1)
LABELS = np.repeat(np.arange(CLASSES), PER_CLASS)
ONE_HOT = np.eye(CLASSES)[LABELS]
INIT = {"W1": rng.standard_normal((2, HIDDEN)) * 0.5, "b1": np.zeros(HIDDEN),
        "W2": rng.standard_normal((HIDDEN, CLASSES)) * 0.5, "b2": np.zeros(CLASSES)}
STEPS, LR = 300, 1.0


def train_functional() -> tuple[list[float], float]:
    def loss(p):
        logits = fnp.tanh(X @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
        shifted = logits - fg.stop_gradient(fnp.max(logits, axis=1, keepdims=True))
        log_probs = shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis=1, keepdims=True))
        return -fnp.mean(fnp.sum(log_probs * ONE_HOT, axis=1))

    params = dict(INIT)
    step = fg.value_and_grad(loss)
    losses = []
    for _ in range(STEPS):
        value, grads = step(params)
        losses.append(float(value))
        params = tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    logits = np.tanh(X @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]
    return losses, float(np.mean(np.argmax(logits, axis=1) == LABELS))


def train_mutable() -> tuple[list[float], float]:
    x, one_hot = torch.tensor(X), torch.tensor(ONE_HOT)
    params = {k: torch.tensor(v, requires_grad=True) for k, v in INIT.items()}
    losses = []
    for _ in range(STEPS):
        logits = torch.tanh(x @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]
        shifted = logits - logits.max(dim=1, keepdim=True)[0].detach()
        log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
        loss = -(log_probs * one_hot).sum(dim=1).mean()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in params.values():
                p -= LR * p.grad
                p.grad = None
    with torch.no_grad():
        logits = torch.tanh(x @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]
        predicted = logits.argmax(dim=1).numpy()
    return losses, float(np.mean(predicted == LABELS))


def main() -> None:
    functional, acc_functional = train_functional()
    mutable, acc_mutable = train_mutable()
    print("step  functional loss   mutable loss")
    for i in (0, 1, 10, 100, STEPS - 1):
        print(f"{i:4d}  {functional[i]:.12f}  {mutable[i]:.12f}")
    print("largest difference over all steps:", max(abs(p - q) for p, q in zip(functional, mutable)))
    print("training accuracy: functional", round(acc_functional, 4), " mutable", round(acc_mutable, 4))


if __name__ == "__main__":
    main()
