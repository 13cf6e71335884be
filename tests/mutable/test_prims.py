"""The primitives declared in funcgrad/mutable/_prims.py on complex tensors: norms and
moments of a complex tensor are real, and their gradients are PyTorch's (the rules follow
JAX's convention; the mutable layer conjugates). Each case is checked against a central
finite difference in float64 of the real and imaginary parts (PyTorch's gradient of a real
function of z is df/dRe + i df/dIm), and against real torch 2.13 when it is installed."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm

from .pytorch_port import real_torch

Z = [1 + 2j, 3 - 1j, -0.5 + 0.25j, 0.75 - 2.5j]

CASES = {
    "vector_norm 2": lambda T, x: T.linalg.vector_norm(x),
    "vector_norm 1": lambda T, x: T.linalg.vector_norm(x, 1),
    "vector_norm 3": lambda T, x: T.linalg.vector_norm(x, 3),
    "vector_norm inf": lambda T, x: T.linalg.vector_norm(x, float("inf")),
    "norm": lambda T, x: x.norm(),
    "var": lambda T, x: x.var(),
    "var correction=0": lambda T, x: T.var(x, correction=0),
    "std": lambda T, x: x.std(),
    "var_mean": lambda T, x: T.var_mean(x)[0],
    "std_mean": lambda T, x: T.std_mean(x)[0],
}


def _finite_difference(fn, z: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    def f(v):
        return float(fn(fm, fm.tensor(v, dtype=fm.complex128)).item())

    grad = np.zeros_like(z)
    for k in range(z.size):
        for step in (1.0, 1j):
            up, down = z.copy(), z.copy()
            up[k] += eps * step
            down[k] -= eps * step
            grad[k] += step * (f(up) - f(down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("name", list(CASES))
def test_real_result_and_pytorchs_gradient(name):
    fn = CASES[name]
    x = fm.tensor(Z, dtype=fm.complex128, requires_grad=True)
    y = fn(fm, x)
    assert y.dtype is fm.float64 and not y.is_complex()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), _finite_difference(fn, np.array(Z)), rtol=1e-6,
                               atol=1e-8)
    x32 = fm.tensor(Z, dtype=fm.complex64)
    assert fn(fm, x32).dtype is fm.float32


@pytest.mark.skipif(real_torch is None, reason="real torch is not installed: no oracle run")
@pytest.mark.parametrize("name", list(CASES))
def test_same_as_torch(name):
    fn = CASES[name]
    results = []
    for T in (fm, real_torch):
        x = T.tensor(Z, dtype=T.complex64, requires_grad=True)
        y = fn(T, x)
        y.backward()
        results.append((str(y.dtype), type(y.grad_fn).__name__, y.item(), x.grad.tolist()))
    (dt, node, value, grad), (dt_t, node_t, value_t, grad_t) = results
    assert (dt, node) == (dt_t, node_t)
    np.testing.assert_allclose(value, value_t, rtol=1e-5)
    np.testing.assert_allclose(np.array(grad), np.array(grad_t), rtol=1e-5, atol=1e-6)


def test_real_inputs_unchanged():
    x = fm.tensor([3.0, -4.0, 1.0], dtype=fm.float64, requires_grad=True)
    fm.linalg.vector_norm(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array([3.0, -4.0, 1.0]) / np.sqrt(26.0))
    x = fm.tensor([1.0, 2.0, 4.0], dtype=fm.float64, requires_grad=True)
    x.var().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (np.array([1.0, 2.0, 4.0]) - 7 / 3) / 2)
