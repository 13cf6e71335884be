"""torch.triangular_solve (deprecated in torch 2.13, still there) and
torch.linalg.solve_triangular: values against NumPy's general solve on the triangle, the
triangle-only gradient in closed form, gradcheck / gradgradcheck in float64 for every
(upper, transpose, unitriangular) and (upper, left, unitriangular), broadcast batches, the
one-node pair of results and torch's errors; on funcgrad.mutable and on real torch 2.13."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values


def triangle(a, upper, unit):
    t = np.triu(a, int(unit)) if upper else np.tril(a, -int(unit))
    return t + np.eye(a.shape[-1]) if unit else t


def solve_quietly(torch, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.triangular_solve(*args)


@both()
def test_values_and_the_pair_of_results(torch):
    rng = np.random.default_rng(0)
    a = rng.random((3, 3)) + np.eye(3)
    b = rng.random((3, 2))
    A = torch.tensor(a, requires_grad=True)
    B = torch.tensor(b, requires_grad=True)
    for upper, transpose, unit in itertools.product((True, False), repeat=3):
        res = solve_quietly(torch, B, A, upper, transpose, unit)
        m = triangle(a, upper, unit)
        np.testing.assert_allclose(values(res.solution),
                                   np.linalg.solve(m.T if transpose else m, b), rtol=1e-12)
        np.testing.assert_array_equal(values(res.cloned_coefficient), a)
        assert res.solution.grad_fn is res.cloned_coefficient.grad_fn
        assert res.solution.grad_fn.name() == "TriangularSolveBackward0"
        assert type(res).__name__ == "triangular_solve"


@both()
def test_gradient_in_closed_form_reads_only_the_triangle(torch):
    a = np.array([[2.0, 5.0], [1.0, 4.0]])
    A = torch.tensor(a, requires_grad=True)
    B = torch.tensor([[2.0], [6.0]], dtype=torch.float64, requires_grad=True)
    x = solve_quietly(torch, B, A, False).solution  # lower: [[2, 0], [1, 4]]
    gA, gB = torch.autograd.grad(x.sum(), (A, B))
    m = np.tril(a)
    lam = np.linalg.solve(m.T, np.ones((2, 1)))
    np.testing.assert_allclose(values(gB), lam)
    np.testing.assert_allclose(values(gA), np.tril(-lam @ values(x).T))
    assert values(gA)[0, 1] == 0.0


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3, 4)), ((2, 3, 3), (2, 3, 2)),
                                             ((1, 3, 3), (2, 3, 2))])
@both()
def test_triangular_solve_gradcheck(torch, a_shape, b_shape):
    rng = np.random.default_rng(1)
    A = torch.tensor(rng.random(a_shape) + np.eye(3), requires_grad=True)
    B = torch.tensor(rng.random(b_shape), requires_grad=True)
    for upper, transpose, unit in itertools.product((True, False), repeat=3):
        def fn(A, B):
            return solve_quietly(torch, B, A, upper, transpose, unit)
        assert torch.autograd.gradcheck(fn, (A, B))
        assert torch.autograd.gradgradcheck(fn, (A, B))


@both()
def test_linalg_solve_triangular_gradcheck(torch):
    rng = np.random.default_rng(2)
    A = torch.tensor(rng.random((2, 3, 3)) + np.eye(3), requires_grad=True)
    B = torch.tensor(rng.random((2, 3, 3)), requires_grad=True)
    for upper, left, unit in itertools.product((True, False), repeat=3):
        def fn(A, B):
            return torch.linalg.solve_triangular(A, B, upper=upper, left=left,
                                                 unitriangular=unit)
        x = fn(A, B)
        m = triangle(values(A), upper, unit)
        expected = np.linalg.solve(m, values(B)) if left else \
            np.swapaxes(np.linalg.solve(np.swapaxes(m, -1, -2), np.swapaxes(values(B), -1, -2)), -1, -2)
        np.testing.assert_allclose(values(x), expected, rtol=1e-10)
        assert x.grad_fn.name() == "LinalgSolveTriangularBackward0"
        assert torch.autograd.gradcheck(fn, (A, B))
        assert torch.autograd.gradgradcheck(fn, (A, B))


@both()
def test_zero_diagonal_gives_nan_not_an_error(torch):
    res = solve_quietly(torch, torch.ones(2, 1), torch.tensor([[0.0, 1.0], [0.0, 1.0]]))
    assert np.isnan(values(res.solution)[0, 0]) and values(res.solution)[1, 0] == 1.0


@both()
def test_deprecation_warning_and_errors(torch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.triangular_solve(torch.ones(2, 1), torch.eye(2))
    # torch warns once per process: on the first call only
    assert all("torch.triangular_solve is deprecated" in str(w.message) for w in caught)
    cases = [
        (lambda: torch.triangular_solve(torch.ones(2), torch.eye(2)),
         "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has 1 "
         "dimensions instead"),
        (lambda: torch.triangular_solve(torch.ones(3, 1), torch.eye(2)),
         "Incompatible matrix sizes for triangular_solve: each A matrix is 2 by 2 but each b "
         "matrix is 3 by 1"),
        (lambda: torch.triangular_solve(torch.ones(2, 1), torch.eye(2, dtype=torch.float64)),
         "Expected b and A to have the same dtype, but found b of type Float and A of type "
         "Double instead."),
        (lambda: torch.linalg.solve_triangular(torch.eye(2), torch.ones(1, 3), upper=True),
         "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
         "\\(2x2 and 1x3\\)"),
        (lambda: torch.linalg.solve_triangular(torch.ones(2, 3), torch.ones(2, 3), upper=True),
         "linalg.solve_triangular: A must be batches of square matrices, but they are 2 by 3 "
         "matrices"),
        (lambda: torch.linalg.solve_triangular(torch.eye(2), torch.ones(2), upper=True),
         "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."),
    ]
    for call, message in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match=message):
                call()
    # torch 2.13 computes in A's dtype
    x = torch.linalg.solve_triangular(torch.eye(2), torch.ones(2, 1, dtype=torch.float64),
                                      upper=True)
    assert x.dtype == torch.float32
    x = torch.linalg.solve_triangular(torch.eye(2, dtype=torch.float64), torch.ones(2, 1),
                                      upper=True)
    assert x.dtype == torch.float64


@both()
def test_complex_gradcheck(torch):
    rng = np.random.default_rng(3)
    A = torch.tensor(rng.random((3, 3)) + 1j * rng.random((3, 3)) + 2 * np.eye(3),
                     requires_grad=True)
    B = torch.tensor(rng.random((3, 2)) + 1j * rng.random((3, 2)), requires_grad=True)
    for upper, left in itertools.product((True, False), repeat=2):
        def fn(A, B):
            return torch.linalg.solve_triangular(A, B if left else B.mT, upper=upper, left=left)
        assert torch.autograd.gradcheck(fn, (A, B))
        assert torch.autograd.gradgradcheck(fn, (A, B))
