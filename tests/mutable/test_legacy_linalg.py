"""torch.cholesky_inverse, torch.qr / Tensor.qr (deprecated), torch.pinverse and torch.diag,
which PyTorch's older autograd tests reach for: values against NumPy closed forms, node
names, gradcheck / gradgradcheck in float64 and torch's errors; on funcgrad.mutable and on
real torch 2.13."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import funcgrad.mutable as fm
from tests.mutable.pytorch_port import both, values


def factor(dims, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(dims)
    for k in range(dims[-1]):
        a[..., k, k] = rng.uniform(0.5, 3.0, dims[:-2])
    return a


@pytest.mark.parametrize("upper,dims", list(itertools.product([True, False], [(3, 3), (2, 4, 4)])))
@both()
def test_cholesky_inverse_values_and_gradients(torch, upper, dims):
    a = factor(dims)
    t = np.triu(a) if upper else np.tril(a)
    m = np.swapaxes(t, -1, -2) @ t if upper else t @ np.swapaxes(t, -1, -2)
    A = torch.tensor(t, requires_grad=True)
    y = torch.cholesky_inverse(A, upper)
    np.testing.assert_allclose(values(y), np.linalg.inv(m), rtol=1e-10)
    assert y.grad_fn.name() == "CholeskyInverseBackward0"

    def fn(A):
        return torch.cholesky_inverse(A.triu() if upper else A.tril(), upper)
    assert torch.autograd.gradcheck(fn, (torch.tensor(a, requires_grad=True),))
    assert torch.autograd.gradgradcheck(fn, (torch.tensor(a, requires_grad=True),))


def test_cholesky_inverse_gradient_only_on_the_triangle_read():
    # (funcgrad only: torch 2.13 gives the upper entries of a full input a nonzero gradient
    # although its forward never reads them; here they get the true derivative, 0)
    A = fm.tensor(factor((3, 3)), requires_grad=True)
    (g,) = fm.autograd.grad(fm.cholesky_inverse(A).sum(), A)
    assert (np.triu(values(g), 1) == 0).all() and (np.tril(values(g)) != 0).any()


@both()
def test_cholesky_inverse_errors(torch):
    with pytest.raises(torch.linalg.LinAlgError, match="cholesky_inverse: The diagonal element "
                                                       "2 is zero, the inversion could not be "
                                                       "completed because the input matrix is "
                                                       "singular."):
        torch.cholesky_inverse(torch.tensor([[1.0, 0.0], [2.0, 0.0]]))
    with pytest.raises(RuntimeError, match="cholesky_inverse: The input tensor A must have at "
                                           "least 2 dimensions."):
        torch.cholesky_inverse(torch.zeros(2))
    with pytest.raises(RuntimeError, match="cholesky_inverse: A must be batches of square "
                                           "matrices, but they are 2 by 3 matrices"):
        torch.cholesky_inverse(torch.zeros(2, 3))


@both()
def test_deprecated_qr_and_pinverse(torch):
    a = np.random.default_rng(1).standard_normal((5, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = torch.tensor(a).qr()
        full = torch.qr(torch.tensor(a), some=False)
    assert type(res).__name__ == "qr" and tuple(res.Q.shape) == (5, 3)
    assert tuple(full.Q.shape) == (5, 5) and tuple(full.R.shape) == (5, 3)
    np.testing.assert_allclose(values(res.Q @ res.R), a, atol=1e-12)
    x = torch.tensor(a, requires_grad=True)
    p = x.pinverse()
    np.testing.assert_allclose(values(p), np.linalg.pinv(a), atol=1e-12)
    assert p.grad_fn.name() == "LinalgPinvBackward0"
    assert torch.autograd.gradcheck(torch.pinverse, (x,))


@pytest.mark.parametrize("k", [0, 1, -2, 5])
@both()
def test_diag_both_ways(torch, k):
    v = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    m = torch.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    built, taken = torch.diag(v, k), torch.diag(m, k)
    np.testing.assert_array_equal(values(built), np.diag(values(v), k))
    np.testing.assert_array_equal(values(taken).reshape(-1), np.diag(values(m), k))
    assert built.grad_fn.name() == "DiagEmbedBackward0"
    assert taken.grad_fn.name() == "DiagonalBackward0_copy"
    for fn, arg in ((lambda v: torch.diag(v, k), v), (lambda m: torch.diag(m, k), m)):
        assert torch.autograd.gradcheck(fn, (arg,))
        assert torch.autograd.gradgradcheck(fn, (arg,))
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors. Got 3D"):
        torch.diag(torch.zeros(2, 2, 2))
