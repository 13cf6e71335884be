"""torch.linalg det, inv, slogdet, solve, cholesky (and torch.det/inverse/slogdet/logdet),
eigh, eigvalsh, svdvals, pinv, matrix_power:
values, node names, gradients against float64 finite differences (gradcheck,
gradgradcheck) and torch's errors. On funcgrad.mutable and real torch 2.13."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, close


def matrix(torch, *shape):
    torch.manual_seed(0)
    return torch.randn(*shape, 3, 3, dtype=torch.float64, requires_grad=True)


@both()
@pytest.mark.parametrize("batch", [(), (2,)])
def test_values_names_and_gradients(torch, batch):
    a = matrix(torch, *batch)
    eye = torch.eye(3, dtype=torch.float64)
    b = torch.randn(*batch, 3, 2, dtype=torch.float64, requires_grad=True)
    checks = {
        "LinalgDetBackward0": (torch.linalg.det, (a,)),
        "LinalgInvExBackward0": (torch.linalg.inv, (a,)),
        "LinalgSolveExBackward0": (torch.linalg.solve, (a, b)),
        "LinalgCholeskyExBackward0": (lambda x: torch.linalg.cholesky(x @ x.mT + eye), (a,)),
    }
    for name, (fn, args) in checks.items():
        assert type(fn(*args).grad_fn).__name__ == name
        assert torch.autograd.gradcheck(fn, args)
        assert torch.autograd.gradgradcheck(fn, args)
    sign, logabsdet = torch.linalg.slogdet(a)
    assert type(logabsdet.grad_fn).__name__ == "LinalgSlogdetBackward0"
    assert sign.grad_fn is logabsdet.grad_fn
    close(sign * logabsdet.exp(), torch.linalg.det(a))
    assert torch.autograd.gradcheck(lambda x: torch.linalg.slogdet(x).logabsdet, (a,))
    close(torch.linalg.inv(a) @ a, eye.expand(*batch, 3, 3), rtol=1e-9)
    # closed form: d det / dA = det(A) inv(A)^T
    (g,) = torch.autograd.grad(torch.linalg.det(a).sum(), a)
    close(g, torch.linalg.det(a)[..., None, None] * torch.linalg.inv(a).mT)


@both()
def test_top_level_names_and_methods(torch):
    a = torch.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=torch.float64, requires_grad=True)
    negative = torch.tensor([[-2.0, 0.0], [0.0, 3.0]], dtype=torch.float64)
    close(torch.det(a), 5.0)
    close(a.inverse(), [[0.6, -0.2], [-0.2, 0.4]])
    assert type(torch.slogdet(a)).__name__ == "slogdet"
    close(a.logdet(), torch.log(torch.tensor(5.0, dtype=torch.float64)))
    assert torch.logdet(negative).isnan()
    (g,) = torch.autograd.grad(torch.logdet(a), a)
    close(g, [[0.6, -0.2], [-0.2, 0.4]])
    close(torch.linalg.solve(a, torch.tensor([5.0, 10.0], dtype=torch.float64)), [1.0, 3.0])


@both()
def test_errors(torch):
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they "
                                           "are 2 by 3 matrices"):
        torch.linalg.det(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        torch.linalg.inv(torch.ones(3))
    with pytest.raises(torch.linalg.LinAlgError, match="The diagonal element 2 is zero, the "
                                                       "inversion could not be completed"):
        torch.linalg.inv(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(torch.linalg.LinAlgError, match="the leading minor of order 2 is not "
                                                       "positive-definite"):
        torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(torch.linalg.LinAlgError, match="The solver failed because the input "
                                                       "matrix is singular"):
        torch.linalg.solve(torch.ones(3, 3), torch.ones(3))


@both()
def test_eigh_svdvals_pinv_matrix_power(torch):
    torch.manual_seed(0)
    a = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    wide = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)

    def sym(x):
        return x + x.mT

    e = torch.linalg.eigh(sym(a))
    assert type(e).__name__ == "linalg_eigh"
    assert e.eigenvalues.grad_fn is e.eigenvectors.grad_fn
    assert type(e.eigenvalues.grad_fn).__name__ == "LinalgEighBackward0"
    close((e.eigenvectors * e.eigenvalues) @ e.eigenvectors.mT, sym(a),
          rtol=1e-9)
    cases = [(lambda x: torch.linalg.eigh(sym(x)).eigenvalues, a),
             (lambda x: torch.linalg.eigh(sym(x)).eigenvectors.abs(), a),  # (signs arbitrary)
             (lambda x: torch.linalg.eigvalsh(sym(x)), a),
             (torch.linalg.svdvals, wide), (torch.linalg.pinv, wide),
             (lambda x: torch.linalg.matrix_power(x, 3), a),
             (lambda x: torch.linalg.matrix_power(x, -2), a)]
    for fn, x in cases:
        assert torch.autograd.gradcheck(fn, (x,))
    close(wide @ torch.linalg.pinv(wide), torch.eye(2, dtype=torch.float64), rtol=1e-9)
    close(torch.linalg.matrix_power(a, 0), torch.eye(3, dtype=torch.float64))
    close(torch.linalg.matrix_power(a, 3), a @ a @ a, rtol=1e-12)
