"""funcgrad.scipy.linalg: values against SciPy; derivatives against float64 finite
differences at first and second order in both modes; vmap against a loop; bad input."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import linalg as fla
from funcgrad.test_util import check_grads

sl = pytest.importorskip("scipy.linalg", reason="SciPy computes these (an optional extra)")

rng = np.random.default_rng(2)
A, B, Q = rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
SPD = A @ A.T + 3 * np.eye(3)
WELL = A + 4 * np.eye(3)
VEC, MAT = rng.normal(size=3), rng.normal(size=(3, 2))
AB = rng.normal(size=(3, 5)) + np.array([[0.0], [4.0], [0.0]])


def _sym(m):
    return 0.5 * (m + fnp.transpose(m))


# name: (ours, SciPy's, arguments)
CASES = {
    "solve_sylvester": (fla.solve_sylvester, sl.solve_sylvester, (A, B, Q)),
    "sqrtm": (lambda a: fla.sqrtm(_sym(a)), lambda a: sl.sqrtm(0.5 * (a + a.T)), (SPD,)),
    "expm": (fla.expm, sl.expm, (A,)),
    "expm_batched": (fla.expm, sl.expm, (rng.normal(size=(2, 3, 3)),)),
    "solve_banded_11": (lambda ab, b: fla.solve_banded((1, 1), ab, b),
                        lambda ab, b: sl.solve_banded((1, 1), ab, b), (AB, VEC[:1].repeat(5))),
    "solve_banded_20": (lambda ab, b: fla.solve_banded((2, 0), ab, b),
                        lambda ab, b: sl.solve_banded((2, 0), ab, b),
                        (AB[::-1].copy(), rng.normal(size=(5, 2)))),
    "cho_solve_lower": (lambda a, b: fla.cho_solve(fla.cho_factor(_sym(a), lower=True), b),
                        lambda a, b: sl.cho_solve(sl.cho_factor(a, lower=True), b), (SPD, MAT)),
    "cho_solve_upper": (lambda a, b: fla.cho_solve(fla.cho_factor(_sym(a)), b),
                        lambda a, b: sl.cho_solve(sl.cho_factor(a), b), (SPD, VEC)),
    "lu_factor": (lambda a: fla.lu_factor(a)[0], lambda a: sl.lu_factor(a)[0], (A,)),
    "lu_solve": (lambda a, b: fla.lu_solve(fla.lu_factor(a), b),
                 lambda a, b: sl.lu_solve(sl.lu_factor(a), b), (A, MAT)),
    "lu_solve_trans": (lambda a, b: fla.lu_solve(fla.lu_factor(a), b, trans=1),
                       lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=1), (A, VEC)),
}
for _lower in (True, False):
    for _trans in (0, 1):
        for _unit in (False, True):
            CASES[f"solve_triangular_{_lower}_{_trans}_{_unit}"] = (
                lambda a, b, lo=_lower, tr=_trans, un=_unit: fla.solve_triangular(
                    a, b, trans=tr, lower=lo, unit_diagonal=un),
                lambda a, b, lo=_lower, tr=_trans, un=_unit: sl.solve_triangular(
                    a, b, trans=tr, lower=lo, unit_diagonal=un),
                (WELL, MAT if _unit else VEC))


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_scipy(name):
    ours, theirs, args = CASES[name]
    np.testing.assert_allclose(np.asarray(ours(*args)), theirs(*args), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_derivatives_match_finite_differences(name):
    ours, _, args = CASES[name]
    check_grads(ours, args, order=2, modes=("rev", "fwd"))


def test_closed_forms():
    # d sqrtm(a) at a diagonal a along e: e_ij / (sqrt(a_i) + sqrt(a_j))
    d = np.array([4.0, 9.0])
    e = np.array([[1.0, 2.0], [3.0, 4.0]])
    _, t = fg.jvp(fla.sqrtm, (np.diag(d),), (e,))
    np.testing.assert_allclose(np.asarray(t), e / (np.sqrt(d)[:, None] + np.sqrt(d)[None, :]))
    # expm of a nilpotent matrix; its gradient at 0 is the identity map
    n = np.array([[0.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(np.asarray(fla.expm(2 * n)), np.eye(2) + 2 * n)
    np.testing.assert_allclose(np.asarray(fg.grad(lambda a: fla.expm(a)[0, 1])(np.zeros((2, 2)))),
                               [[0.0, 1.0], [0.0, 0.0]])
    # only the triangle a triangular solve reads gets a derivative
    g = np.asarray(fg.grad(lambda a: fnp.sum(fla.solve_triangular(a, VEC, lower=True)))(WELL))
    np.testing.assert_array_equal(np.triu(g, 1), 0.0)


def test_vmap_equals_a_loop():
    stack = rng.normal(size=(4, 3, 3)) + 4 * np.eye(3)
    for f in (fla.sqrtm, lambda a: fla.solve_sylvester(a, B, Q),
              lambda a: fla.solve_triangular(a, VEC), lambda a: fla.lu_solve(fla.lu_factor(a), VEC)):
        g = fg.grad(lambda a: fnp.sum(fnp.real(f(a))))
        batched = np.asarray(fg.vmap(g)(stack))
        np.testing.assert_allclose(batched, np.stack([np.asarray(g(a)) for a in stack]), rtol=1e-10)


def test_bad_inputs_name_the_fix():
    with pytest.raises(ValueError, match="square"):
        fla.sqrtm(np.ones((2, 3)))
    with pytest.raises(ValueError, match="l \\+ u \\+ 1 = 3 rows"):
        fla.solve_banded((1, 1), np.ones((2, 4)), np.ones(4))
    with pytest.raises(ValueError, match="trans must be"):
        fla.solve_triangular(WELL, VEC, trans=5)
    with pytest.raises(ValueError, match="b has 2 rows"):
        fla.solve_triangular(WELL, np.ones(2))
