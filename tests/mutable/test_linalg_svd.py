"""torch.linalg.svd and torch.svd: values (A = U diag(S) Vh, orthonormal factors), one
LinalgSvdBackward0 node for U, S and Vh, gradcheck / gradgradcheck in float64 with the
singular vectors' signs fixed (real and complex singular values), full_matrices both ways,
torch.svd's V as a TransposeBackward0 of Vh; on funcgrad.mutable and on real torch 2.13.
With full_matrices=True a loss reading the non-unique extra vectors raises here (torch
drops that part of the gradient silently): tested on funcgrad only."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm
from tests.mutable.pytorch_port import both, values


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 3)])
@pytest.mark.parametrize("full", [True, False])
@both()
def test_factors_and_node(torch, shape, full):
    a = np.random.default_rng(0).standard_normal(shape)
    A = torch.tensor(a, requires_grad=True)
    U, S, Vh = res = torch.linalg.svd(A, full_matrices=full)
    assert type(res).__name__ == "linalg_svd"
    m, n = shape[-2:]
    k = min(m, n)
    assert tuple(U.shape)[-2:] == ((m, m) if full else (m, k))
    assert tuple(Vh.shape)[-2:] == ((n, n) if full else (k, n))
    u, s, vh = values(U), values(S), values(Vh)
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    assert U.grad_fn is S.grad_fn is Vh.grad_fn
    assert U.grad_fn.name() == "LinalgSvdBackward0"
    assert [nr for _, nr in U.grad_fn.next_functions] == [0]


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@both()
def test_gradcheck_with_signs_fixed(torch, shape):
    A = torch.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)

    def fn(A):
        U, S, Vh = torch.linalg.svd(A, full_matrices=False)
        sign = U[..., :1, :].sign()  # LAPACK's sign choice is not differentiable
        return U * sign, S, Vh * sign.mT

    assert torch.autograd.gradcheck(fn, (A,))
    assert torch.autograd.gradgradcheck(fn, (A,))


@both()
def test_complex_singular_values(torch):
    rng = np.random.default_rng(2)
    Z = torch.tensor(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)),
                     requires_grad=True)
    assert torch.autograd.gradcheck(lambda Z: torch.linalg.svd(Z).S, (Z,))
    assert torch.autograd.gradgradcheck(lambda Z: torch.linalg.svd(Z).S, (Z,))


@both()
def test_torch_svd(torch):
    A = torch.tensor(np.random.default_rng(3).standard_normal((4, 3)), requires_grad=True)
    res = torch.svd(A)
    assert type(res).__name__ == "svd"
    assert [tuple(t.shape) for t in res] == [(4, 3), (3,), (3, 3)]
    assert res.V.grad_fn.name() == "TransposeBackward0"
    assert res.V.grad_fn.next_functions[0][1] == 2
    np.testing.assert_allclose(values(res.U * res.S) @ values(res.V).T, values(A), atol=1e-12)
    assert [tuple(t.shape) for t in torch.svd(A, some=False)] == [(4, 4), (3,), (3, 3)]
    U, S, V = torch.svd(A, compute_uv=False)
    assert not values(U).any() and not values(V).any() and U.grad_fn is None
    assert S.grad_fn.name() == "LinalgSvdBackward0"
    with pytest.raises(RuntimeError, match="linalg.svd: The input tensor A must have at least "
                                           "2 dimensions."):
        torch.linalg.svd(torch.ones(3))


def test_full_matrices_extra_vectors_have_no_derivative():
    A = fm.tensor(np.random.default_rng(4).standard_normal((4, 3)), requires_grad=True)
    U, S, Vh = fm.linalg.svd(A)
    with pytest.raises(RuntimeError, match="the last 1 columns of U are not unique"):
        fm.autograd.grad(U.sum(), A, retain_graph=True)
    # the first min(m, n) columns are fine, and give the reduced svd's gradient
    (g_full,) = fm.autograd.grad(U[:, :3].abs().sum(), A)
    (g_red,) = fm.autograd.grad(fm.linalg.svd(A, full_matrices=False).U.abs().sum(), A)
    np.testing.assert_allclose(values(g_full), values(g_red), rtol=1e-10)
