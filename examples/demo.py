"""A short tour of funcgrad's two models: functional (JAX-style) and mutable (PyTorch-style).

Run: python examples/demo.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp


def functional_model() -> None:
    print("== funcgrad.numpy: functional, JAX-style ==")
    rng = np.random.default_rng(0)
    w, x, y = rng.standard_normal(3), rng.standard_normal((8, 3)), rng.standard_normal(8)

    def loss(w, x, y):
        return fnp.mean((fnp.tanh(x @ w) - y) ** 2)

    value, g = fg.value_and_grad(loss)(w, x, y)
    print("loss:", round(value.item(), 6), " d loss / d w:", np.round(np.asarray(g), 6))
    print("d2/dx2 tanh at 0.3 (grad of grad):", round(fg.grad(fg.grad(fnp.tanh))(0.3).item(), 6))

    out, vjp_fn = fg.vjp(fnp.sin, fnp.array([0.0, 1.0]))
    print("vjp of sin at [0, 1] with ones:", vjp_fn(fnp.ones_like(out))[0])

    z = fnp.zeros(3)
    z2 = z.at[1].set(5.0)  # arrays are immutable: updates return new arrays
    print("z.at[1].set(5.0):", z2, " z itself:", z)
    try:
        z[1] = 5.0
    except TypeError as err:
        print("z[1] = 5.0 ->", type(err).__name__ + ":", err)


def mutable_model() -> None:
    print("\n== funcgrad.mutable: PyTorch-style ==")
    try:
        import funcgrad.mutable as torch
    except ImportError as err:  # the mutable layer is optional to this demo while it grows
        print("funcgrad.mutable is not available:", err)
        return
    w1 = torch.tensor(2.0, requires_grad=True)
    x = torch.ones(2, 2)
    loss = ((x * w1 + 3.0) * (x * w1 * 3.0)).mean()
    loss.backward()
    print("loss:", loss, " w1.grad:", w1.grad)

    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0  # an in-place write to a tensor the backward pass needs
    try:
        loss.backward()
    except RuntimeError as err:
        print("in-place write, then backward ->", str(err).splitlines()[0])


if __name__ == "__main__":
    functional_model()
    mutable_model()
