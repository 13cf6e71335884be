"""linalg.solve with a vector right-hand side and linalg.cholesky(upper=True) are one node
each, as torch records them (LinalgSolveExBackward0 with B's own edge, no Unsqueeze/Squeeze
around it; LinalgCholeskyExBackward0, no TransposeBackward0 after it). Values, first and
second derivatives (gradcheck / gradgradcheck in float64, real and complex, batched) and
forward mode on funcgrad.mutable and on real torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values


def cvalues(t) -> np.ndarray:
    return np.asarray(t.detach().resolve_conj().tolist(), dtype=complex)


def graph(t) -> str:
    def walk(fn):
        if fn is None:
            return "None"
        name = fn.name().replace("torch::autograd::", "")
        inner = ", ".join(walk(f) for f, _ in fn.next_functions)
        return f"{name}({inner})"
    return walk(t.grad_fn)


def spd(torch, n, dtype, batch=()):
    rng = np.random.default_rng(0)
    m = rng.standard_normal(batch + (n, n))
    if dtype in (torch.complex128,):
        m = m + 1j * rng.standard_normal(batch + (n, n))
    a = m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)
    return torch.tensor(a, dtype=dtype)


@both()
def test_solve_with_a_vector_is_one_node(torch):
    A = torch.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([9.0, 8.0], dtype=torch.float64, requires_grad=True)
    x = torch.linalg.solve(A, b)
    np.testing.assert_allclose(values(x), [2.0, 3.0])
    assert graph(x) == "LinalgSolveExBackward0(AccumulateGrad(), AccumulateGrad())"
    # closed form: d(w.x)/db = A^-T w, d(w.x)/dA = -(A^-T w) x^T
    w = torch.tensor([1.0, -2.0], dtype=torch.float64)
    gA, gb = torch.autograd.grad((x * w).sum(), (A, b))
    lam = np.linalg.solve(values(A).T, values(w))
    np.testing.assert_allclose(values(gb), lam)
    np.testing.assert_allclose(values(gA), -np.outer(lam, values(x)))


@pytest.mark.parametrize("complex_", [False, True])
@both()
def test_solve_vector_gradcheck_batched(torch, complex_):
    dtype = torch.complex128 if complex_ else torch.float64
    A = (spd(torch, 3, dtype, (2,)) + torch.eye(3, dtype=dtype)).requires_grad_()
    b = torch.arange(6.0, dtype=torch.float64).reshape(2, 3).to(dtype).requires_grad_()
    assert torch.autograd.gradcheck(torch.linalg.solve, (A, b))
    assert torch.autograd.gradgradcheck(torch.linalg.solve, (A, b))
    assert torch.autograd.gradcheck(torch.linalg.solve, (A, b), check_forward_ad=True,
                                    check_backward_ad=False, check_undefined_grad=False,
                                    check_batched_grad=False)


@both()
def test_solve_matrix_keeps_its_own_node(torch):
    A = torch.eye(2, dtype=torch.float64, requires_grad=True)
    B = torch.ones(2, 1, dtype=torch.float64, requires_grad=True)
    assert graph(torch.linalg.solve(A, B)) == \
        "LinalgSolveExBackward0(AccumulateGrad(), AccumulateGrad())"


@both()
def test_cholesky_upper_is_one_node(torch):
    A = torch.tensor([[4.0, 2.0], [2.0, 5.0]], dtype=torch.float64, requires_grad=True)
    U = torch.linalg.cholesky(A, upper=True)
    np.testing.assert_allclose(values(U), [[2.0, 1.0], [0.0, 2.0]])
    assert graph(U) == "LinalgCholeskyExBackward0(AccumulateGrad())"
    L = torch.linalg.cholesky(A)
    g_u, = torch.autograd.grad((U * torch.tensor([[1.0, 2.0], [3.0, 4.0]],
                                                 dtype=torch.float64)).sum(), A)
    g_l, = torch.autograd.grad((L * torch.tensor([[1.0, 3.0], [2.0, 4.0]],
                                                 dtype=torch.float64)).sum(), A)
    np.testing.assert_allclose(values(g_u), values(g_l))  # U = L^T, weights transposed


@pytest.mark.parametrize("complex_", [False, True])
@both()
def test_cholesky_upper_gradcheck(torch, complex_):
    dtype = torch.complex128 if complex_ else torch.float64
    A = spd(torch, 3, dtype, (2,)).requires_grad_()

    def upper(a):  # symmetrised, so that the perturbed input stays Hermitian
        return torch.linalg.cholesky((a + a.mH) / 2, upper=True)

    assert torch.autograd.gradcheck(upper, (A,))
    assert torch.autograd.gradgradcheck(upper, (A,))
    assert torch.autograd.gradcheck(upper, (A,), check_forward_ad=True,
                                    check_backward_ad=False, check_undefined_grad=False,
                                    check_batched_grad=False)


@both()
def test_conjugate_transposes(torch):
    z = torch.tensor([[1 + 2j, 3j], [4.0, 5 - 1j]], dtype=torch.complex128, requires_grad=True)
    expected = np.conj(cvalues(z).T)
    for t in (z.mH, z.H, z.adjoint()):
        np.testing.assert_array_equal(cvalues(t), expected)
        assert graph(t) == "ConjBackward0(TransposeBackward0(AccumulateGrad()))"
    np.testing.assert_array_equal(cvalues(z.mT), cvalues(z).T)
    v = torch.ones(3)
    for what, expr in (("mT", lambda: v.mT), ("mH", lambda: v.mH),
                       ("adjoint\\(\\)", lambda: v.adjoint())):
        with pytest.raises(RuntimeError, match=f"tensor.{what} is only supported on matrices "
                                               "or batches of matrices. Got 1-D tensor."):
            expr()
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices \\(2-D "
                                           "tensors\\). Got 1-D tensor."):
        v.H
