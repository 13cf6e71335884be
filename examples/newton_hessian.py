"""Newton's method both ways: ``hessian`` in the functional model, double backward in the mutable one.

Minimises the Rosenbrock function from (-1.2, 1). The functional model asks for the
Hessian directly (``funcgrad.hessian``, forward over reverse). The mutable model builds it
row by row, as PyTorch users do: ``torch.autograd.grad(..., create_graph=True)`` gives a
gradient that is itself differentiable, and a second ``grad`` per component gives a row.
Both take the same Newton steps to the minimum at (1, 1).

Run: python examples/newton_hessian.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch

START = np.array([-1.2, 1.0])
STEPS = 8


def rosenbrock(x):
    return (1.0 - x[0]) ** 2 + 100.0 * (x[1] - x[0] ** 2) ** 2


def functional_newton() -> list[np.ndarray]:
    grad, hess = fg.grad(rosenbrock), fg.hessian(rosenbrock)
    x, path = START, [START]
    for _ in range(STEPS):
        x = x - np.linalg.solve(np.asarray(hess(x)), np.asarray(grad(x)))
        path.append(np.asarray(x))
    return path


def mutable_newton() -> list[np.ndarray]:
    x, path = START, [START]
    for _ in range(STEPS):
        xt = torch.tensor(x, requires_grad=True)
        (g,) = torch.autograd.grad(rosenbrock(xt), xt, create_graph=True)
        rows = [torch.autograd.grad(g[i], xt, retain_graph=True)[0].numpy() for i in range(2)]
        x = x - np.linalg.solve(np.stack(rows), g.detach().numpy())
        path.append(x)
    return path


def main() -> None:
    functional, mutable = functional_newton(), mutable_newton()
    print("step  functional x             mutable x")
    for i, (p, q) in enumerate(zip(functional, mutable)):
        print(f"{i:4d}  [{p[0]: .10f}, {p[1]: .10f}]  [{q[0]: .10f}, {q[1]: .10f}]")
    print("largest difference:", max(float(np.abs(p - q).max()) for p, q in zip(functional, mutable)))
    print("Hessian at the minimum:", np.asarray(fg.hessian(rosenbrock)(np.ones(2))).tolist())


if __name__ == "__main__":
    main()
