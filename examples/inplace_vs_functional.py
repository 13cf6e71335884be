"""The same computation in funcgrad's two models: functional (JAX-style) and mutable (PyTorch-style).

1. Where they agree: a small regression loss and its gradient, written once with immutable
   arrays and `funcgrad.grad`, once with tensors and `.backward()`.
2. Where in-place mutation breaks the mutable one: overwriting a value that a multiplication
   saved for backward. PyTorch's error comes first; funcgrad adds which op saved the value and
   which op modified it, with file:line. The functional model cannot have this bug: `x.at[i].set`
   makes a new array.
3. The mutation policies: "strict" fails at the write itself; "copy-on-write" keeps the saved
   value so the gradient is the right one, and says so.

Run: python examples/inplace_vs_functional.py
"""
from __future__ import annotations

import warnings

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp

X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
Y = np.array([1.0, -2.0, 0.25])
W0 = np.array([0.3, -0.2])


def functional_loss(w):
    pred = fnp.tanh(X @ w)
    return fnp.mean((pred - Y) ** 2)


def mutable_loss(w):
    pred = torch.tensor(X, dtype=torch.float64) @ w
    pred = pred.tanh()
    return ((pred - torch.tensor(Y, dtype=torch.float64)) ** 2).mean()


def agree() -> None:
    g_functional = np.asarray(fg.grad(functional_loss)(fnp.array(W0)))
    w = torch.tensor(W0, dtype=torch.float64, requires_grad=True)
    mutable_loss(w).backward()
    g_mutable = w.grad.numpy()
    print("1. functional gradient:", g_functional)
    print("   mutable gradient:   ", g_mutable)
    print("   same:", np.allclose(g_functional, g_mutable, rtol=1e-12))


def mutation_breaks_backward() -> None:
    w = torch.tensor(W0, dtype=torch.float64, requires_grad=True)
    hidden = torch.tensor(X, dtype=torch.float64) @ w   # saved by the multiplication below
    loss = (hidden * hidden).sum()
    hidden[0] = 0.0                                     # in-place: bumps hidden's version
    try:
        loss.backward()
    except RuntimeError as err:
        print("2. mutable model, in-place write after use:")
        print("   " + str(err))
        for note in getattr(err, "__notes__", []):
            print("   " + note)
    # The functional model has no in-place write: `.at[0].set` returns a new array,
    # so the value the multiplication used is untouched and the gradient is defined.
    def functional(w):
        h = fnp.array(X) @ w
        loss = fnp.sum(h * h)
        h = h.at[0].set(0.0)  # a new array; `loss` still refers to the old one
        return loss
    print("   functional model, same program:", np.asarray(fg.grad(functional)(fnp.array(W0))))


def policies() -> None:
    w = torch.tensor(W0, dtype=torch.float64, requires_grad=True)
    with torch.mutation_policy("strict"):
        hidden = torch.tensor(X, dtype=torch.float64) @ w
        loss = (hidden * hidden).sum()
        try:
            hidden[0] = 0.0
        except RuntimeError as err:
            print("3. strict policy fails at the write:")
            print("   " + str(err).replace("\n", "\n   "))
    with torch.mutation_policy("copy-on-write"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hidden = torch.tensor(X, dtype=torch.float64) @ w
        loss = (hidden * hidden).sum()
        hidden[0] = 0.0
        loss.backward()
    expected = 2 * X.T @ (X @ W0)  # gradient of sum((Xw)^2) at the value actually used
    print("   copy-on-write gradient:", w.grad.numpy(), "correct:", np.allclose(w.grad.numpy(), expected))
    print("   it reported:", str(caught[0].message))


if __name__ == "__main__":
    agree()
    mutation_breaks_backward()
    policies()
