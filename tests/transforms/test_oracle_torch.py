"""The transform family against the real PyTorch (torch.func): Jacobians, Hessians, HVPs,
per-example gradients and nested vmap on the same functions give the same numbers."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

torch = pytest.importorskip("torch", reason="the oracle needs PyTorch (CI installs torch 2.13.0 CPU)")
func = pytest.importorskip("torch.func", reason="torch.func ships with PyTorch 2")

rng = np.random.default_rng(11)


def t(x):
    return torch.tensor(np.asarray(x), dtype=torch.float64)


def test_hessian_of_the_benchmark_function():
    x = rng.standard_normal(20)
    ours = fg.hessian(lambda x: fnp.sum(fnp.tanh(x) ** 2 * x))(fnp.array(x))
    theirs = func.hessian(lambda x: (torch.tanh(x) ** 2 * x).sum())(t(x))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_jacobians_of_a_matrix_function():
    w = rng.standard_normal((3, 4))
    x = rng.standard_normal(4)
    ours_f = lambda w, x: fnp.exp(fnp.tanh(w @ x) * fnp.sum(w, axis=0)[:3])  # noqa: E731
    theirs_f = lambda w, x: torch.exp(torch.tanh(w @ x) * w.sum(0)[:3])  # noqa: E731
    for ours_jac, theirs_jac in ((fg.jacrev, func.jacrev), (fg.jacfwd, func.jacfwd)):
        ours = ours_jac(ours_f, argnums=(0, 1))(fnp.array(w), fnp.array(x))
        theirs = theirs_jac(theirs_f, argnums=(0, 1))(t(w), t(x))
        for a, b in zip(ours, theirs):
            assert a.shape == tuple(b.shape)
            np.testing.assert_allclose(a, b.numpy(), rtol=1e-12, atol=1e-14)


def test_hvp_and_per_example_gradients():
    x, v = rng.standard_normal(6), rng.standard_normal(6)
    ours = fg.hvp(lambda x: fnp.sum(fnp.sin(x) * fnp.cumsum(x)), (fnp.array(x),), (fnp.array(v),))
    _, theirs = func.jvp(func.grad(lambda x: (torch.sin(x) * torch.cumsum(x, 0)).sum()),
                         (t(x),), (t(v),))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12)
    w = rng.standard_normal(5)
    xs, ys = rng.standard_normal((8, 5)), rng.standard_normal(8)
    ours = fg.vmap(fg.grad(lambda w, x, y: (fnp.tanh(x @ w) - y) ** 2), in_axes=(None, 0, 0))(
        fnp.array(w), fnp.array(xs), fnp.array(ys))
    theirs = func.vmap(func.grad(lambda w, x, y: (torch.tanh(x @ w) - y) ** 2),
                       in_dims=(None, 0, 0))(t(w), t(xs), t(ys))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12)


def test_nested_vmap_with_gathers():
    table = rng.standard_normal((6, 3))
    idx = rng.integers(0, 6, (4, 2))
    scales = rng.standard_normal(4)
    ours = fg.vmap(fg.vmap(lambda i, s: fnp.sum(fnp.array(table)[i] * s), in_axes=(0, None)))(
        idx, fnp.array(scales))
    theirs = func.vmap(func.vmap(lambda i, s: (t(table)[i] * s).sum(), in_dims=(0, None)))(
        torch.tensor(idx), t(scales))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12)
