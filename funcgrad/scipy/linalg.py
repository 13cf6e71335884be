"""funcgrad.scipy.linalg: differentiable solvers and matrix functions of ``scipy.linalg``
(SciPy computes the values; needs the optional extra).

Each primitive's rules are written with the primitives themselves (a Sylvester solve's
derivative is a Sylvester solve, a triangular solve's a triangular solve, expm's the expm of
a block matrix), so every order of derivative is available. VJPs are transposes of the
linear maps, without conjugation (JAX's and autograd's convention for complex inputs).

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.linalg import expm
>>> a = fnp.array([[0.0, 1.0], [0.0, 0.0]])
>>> expm(a).tolist()
[[1.0, 1.0], [0.0, 1.0]]
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from .._src.core import Array, wrap
from .._src.declare import Namespace, nondiff, primitive
from ._util import ArrayLike, require_scipy

ns = Namespace("funcgrad.scipy.linalg")
export = ns.export


def _sl():
    return require_scipy("linalg", "funcgrad.scipy.linalg")


def _mT(x):
    return fnp.swapaxes(x, -1, -2)


def _outer(g, x):
    """g x^T for a right-hand side that is a vector (outer product) or a matrix."""
    return fnp.outer(g, x) if fnp.ndim(x) == 1 else fnp.matmul(g, _mT(x))


def _square(name: str, a) -> None:
    shape = fnp.shape(a)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name}: expected a square matrix, got shape {shape}")


# --- Sylvester equations: A X + X B = Q --------------------------------------------------------
def _sylvester_impl(a, b, q):
    return _sl().solve_sylvester(a, b, q)


sylvester_p = primitive(
    "solve_sylvester", _sylvester_impl, nargs=3,
    # A dX + dX B = dQ - dA X - X dB
    jvps=(lambda t, out, a, b, q: sylvester_p(a, b, -fnp.matmul(t, out)),
          lambda t, out, a, b, q: sylvester_p(a, b, -fnp.matmul(out, t)),
          lambda t, out, a, b, q: sylvester_p(a, b, t)),
    # G solves A^T G + G B^T = ct; then ct_Q = G, ct_A = -G X^T, ct_B = -X^T G
    vjps=(lambda ct, out, a, b, q: -fnp.matmul(sylvester_p(_mT(a), _mT(b), ct), _mT(out)),
          lambda ct, out, a, b, q: -fnp.matmul(_mT(out), sylvester_p(_mT(a), _mT(b), ct)),
          lambda ct, out, a, b, q: sylvester_p(_mT(a), _mT(b), ct)))


@export
def solve_sylvester(a: ArrayLike, b: ArrayLike, q: ArrayLike) -> Array:
    """Differentiable ``scipy.linalg.solve_sylvester``: X with ``a X + X b = q``, in all three.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import solve_sylvester
    >>> solve_sylvester(fnp.eye(2), fnp.eye(2), fnp.array([[2.0, 4.0], [6.0, 8.0]])).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    for name, m in (("a", a), ("b", b)):
        _square(f"solve_sylvester: {name}", m)
    return wrap(sylvester_p(a, b, q))


# --- matrix square root ------------------------------------------------------------------------
def _sqrtm_impl(a):
    return _sl().sqrtm(a)


sqrtm_p = primitive(
    "sqrtm", _sqrtm_impl,
    jvps=(lambda t, out, a: sylvester_p(out, out, t),),          # S dS + dS S = dA
    vjps=(lambda ct, out, a: sylvester_p(_mT(out), _mT(out), ct),))


@export
def sqrtm(A: ArrayLike) -> Array:
    """Differentiable ``scipy.linalg.sqrtm``: the principal square root S, with S @ S = A
    (complex where A has negative eigenvalues, as SciPy's).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import sqrtm
    >>> sqrtm(fnp.array([[4.0, 0.0], [0.0, 9.0]])).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    >>> fg.grad(lambda a: sqrtm(a)[0, 0])(fnp.array([[4.0, 0.0], [0.0, 9.0]])).tolist()
    [[0.25, 0.0], [0.0, 0.0]]
    """
    _square("sqrtm", A)
    return wrap(sqrtm_p(A))


# --- matrix exponential ------------------------------------------------------------------------
def _expm_impl(a):
    return _sl().expm(a)


def _frechet(a, e):
    """The derivative of expm at `a` along `e`: the top-right block of expm([[a, e], [0, a]])."""
    n = fnp.shape(a)[-1]
    top = fnp.concatenate([a, e], axis=-1)
    bottom = fnp.concatenate([fnp.zeros_like(a), a], axis=-1)
    return expm_p(fnp.concatenate([top, bottom], axis=-2))[..., :n, n:]


expm_p = primitive("expm", _expm_impl,
                   jvps=(lambda t, out, a: _frechet(a, t),),
                   vjps=(lambda ct, out, a: _frechet(_mT(a), ct),))


@export
def expm(A: ArrayLike) -> Array:
    """Differentiable ``scipy.linalg.expm``, of a matrix or a stack of matrices.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import expm
    >>> round(fg.grad(lambda a: expm(a)[0, 0])(fnp.zeros((2, 2)))[0, 0].item(), 12)
    1.0
    """
    shape = fnp.shape(A)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"expm: expected square matrices in the last two axes, got shape {shape}")
    return wrap(expm_p(A))


# --- triangular solves -------------------------------------------------------------------------
def _triangle(m, lower: bool, unit_diagonal: bool):
    """The triangle of `m` a triangular solve reads (strict if the diagonal is taken as 1)."""
    k = -1 if unit_diagonal else 0
    return fnp.tril(m, k) if lower else fnp.triu(m, -k)


def _triangular_impl(a, b, lower=False, unit_diagonal=False):
    return _sl().solve_triangular(a, b, lower=lower, unit_diagonal=unit_diagonal)


def _tri_adjoint(ct, a, lower, unit_diagonal):
    """G with op(a)^T G = ct: a^T's triangle is the other one."""
    return triangular_p(_mT(a), ct, lower=not lower, unit_diagonal=unit_diagonal)


triangular_p = primitive(
    "solve_triangular", _triangular_impl, nargs=2, params=("lower", "unit_diagonal"),
    jvps=(lambda t, out, a, b, lower=False, unit_diagonal=False: triangular_p(
              a, -fnp.matmul(_triangle(t, lower, unit_diagonal), out), lower=lower,
              unit_diagonal=unit_diagonal),
          lambda t, out, a, b, lower=False, unit_diagonal=False: triangular_p(
              a, t, lower=lower, unit_diagonal=unit_diagonal)),
    vjps=(lambda ct, out, a, b, lower=False, unit_diagonal=False: -_triangle(
              _outer(_tri_adjoint(ct, a, lower, unit_diagonal), out), lower, unit_diagonal),
          lambda ct, out, a, b, lower=False, unit_diagonal=False: _tri_adjoint(
              ct, a, lower, unit_diagonal)))

_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}


@export
def solve_triangular(a: ArrayLike, b: ArrayLike, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Array:
    """Differentiable ``scipy.linalg.solve_triangular``: x with ``op(a) x = b``, reading only
    the lower (or upper) triangle of `a` (so only that triangle gets a derivative).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import solve_triangular
    >>> solve_triangular(fnp.array([[2.0, 0.0], [1.0, 1.0]]), fnp.array([2.0, 3.0]), lower=True).tolist()
    [1.0, 2.0]
    """
    if trans not in _TRANS:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    _square("solve_triangular: a", a)
    if fnp.shape(b)[0] != fnp.shape(a)[0]:
        raise ValueError(f"solve_triangular: b has {fnp.shape(b)[0]} rows, a has "
                         f"{fnp.shape(a)[0]}: they must match")
    a = fnp.asarray(a)
    if _TRANS[trans]:
        a = _mT(fnp.conj(a) if _TRANS[trans] == 2 else a)
        lower = not lower
    return wrap(triangular_p(a, b, lower=bool(lower), unit_diagonal=bool(unit_diagonal)))


# --- Cholesky ----------------------------------------------------------------------------------
@export(wraps=False)  # returns the flag `lower` as it is
def cho_factor(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:
    """Differentiable ``scipy.linalg.cho_factor``: ``(c, lower)`` for `cho_solve`. The
    triangle of `c` that SciPy leaves unspecified holds zeros here.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import cho_factor
    >>> c, lower = cho_factor(fnp.array([[4.0, 2.0], [2.0, 5.0]]))
    >>> c.tolist(), lower
    ([[2.0, 1.0], [0.0, 2.0]], False)
    """
    _square("cho_factor", a)
    chol = fnp.linalg.cholesky(a)
    return wrap(chol if lower else _mT(chol)), bool(lower)


@export
def cho_solve(c_and_lower: tuple[ArrayLike, bool], b: ArrayLike, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """Differentiable ``scipy.linalg.cho_solve``: x with ``a x = b`` from ``cho_factor(a)``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import cho_factor, cho_solve
    >>> a = fnp.array([[4.0, 2.0], [2.0, 5.0]])
    >>> cho_solve(cho_factor(a), fnp.array([6.0, 7.0])).tolist()
    [1.0, 1.0]
    """
    c, lower = c_and_lower
    if lower:  # L L^T x = b
        return solve_triangular(c, solve_triangular(c, b, lower=True), trans=1, lower=True)
    return solve_triangular(c, solve_triangular(c, b, trans=1), lower=False)  # U^T U x = b


# --- LU ----------------------------------------------------------------------------------------
def _pivots_impl(a):
    return _sl().lu_factor(a)[1]


def _permutation_impl(piv):
    """The row order LAPACK's successive interchanges `piv` produce: a[perm] = L U."""
    piv = np.asarray(piv)
    perm = np.arange(piv.shape[-1])
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


# integers, no derivative; under vmap they loop over the batch (batch=None)
pivots_p = nondiff("lu_pivots", _pivots_impl, batch=None)
permutation_p = nondiff("lu_permutation", _permutation_impl, batch=None)


def _lu_impl(a, perm):
    return _sl().lu_factor(a)[0]


def _lu_jvp(t, out, a, perm):
    """d(lu) = L tril(F, -1) + triu(F) U with F = L^-1 dA[perm] U^-1."""
    x = triangular_p(out, fnp.take(t, perm, axis=0), lower=True, unit_diagonal=True)
    f = _mT(triangular_p(_mT(out), _mT(x), lower=True, unit_diagonal=False))  # x U^-1
    unit_l = fnp.tril(out, -1) + fnp.eye(fnp.shape(out)[0])
    return fnp.matmul(unit_l, fnp.tril(f, -1)) + fnp.matmul(fnp.triu(f), fnp.triu(out))


def _lu_vjp(ct, out, a, perm):
    """The transpose of `_lu_jvp`: ct_F = tril(L^T C, -1) + triu(C U^T), then
    ct_dA[perm] = L^-T ct_F U^-T."""
    unit_l = fnp.tril(out, -1) + fnp.eye(fnp.shape(out)[0])
    ct_f = fnp.tril(fnp.matmul(_mT(unit_l), ct), -1) + fnp.triu(fnp.matmul(ct, _mT(fnp.triu(out))))
    y = triangular_p(_mT(out), ct_f, lower=False, unit_diagonal=True)        # L^-T ct_F
    ct_t = triangular_p(out, _mT(y), lower=False, unit_diagonal=False)       # (y U^-T)^T
    return fnp.take(_mT(ct_t), fnp.argsort(perm), axis=0)


lu_p = primitive("lu_factor", _lu_impl, nargs=2, jvps=(_lu_jvp, None), vjps=(_lu_vjp, None))


@export
def lu_factor(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Array, Array]:
    """Differentiable ``scipy.linalg.lu_factor`` of a square matrix: ``(lu, piv)``, with the
    derivative flowing through `lu` (the pivots are integers).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import lu_factor
    >>> lu, piv = lu_factor(fnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu.tolist(), piv.tolist()
    ([[3.0, 4.0], [0.3333333333333333, 0.6666666666666667]], [1, 1])
    """
    _square("lu_factor", a)
    piv = wrap(pivots_p(a))
    return wrap(lu_p(a, permutation_p(piv))), piv


@export
def lu_solve(lu_and_piv: tuple[ArrayLike, ArrayLike], b: ArrayLike, trans: int = 0,
             overwrite_b: bool = False, check_finite: bool = True) -> Array:
    """Differentiable ``scipy.linalg.lu_solve``: x with ``a x = b`` (``trans=1``: ``a^T x = b``)
    from ``lu_factor(a)``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import lu_factor, lu_solve
    >>> a = fnp.array([[1.0, 2.0], [3.0, 4.0]])
    >>> lu_solve(lu_factor(a), fnp.array([5.0, 11.0])).tolist()
    [1.0, 2.0]
    """
    lu, piv = lu_and_piv
    perm = permutation_p(piv)
    if _TRANS.get(trans, None) is None:
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    if _TRANS[trans] == 0:  # a[perm] = L U
        y = solve_triangular(lu, fnp.take(b, perm, axis=0), lower=True, unit_diagonal=True)
        return solve_triangular(lu, y, lower=False)
    lu = fnp.conj(lu) if _TRANS[trans] == 2 else lu
    z = solve_triangular(lu, b, trans=1, lower=False)                 # U^T z = b
    w = solve_triangular(lu, z, trans=1, lower=True, unit_diagonal=True)  # L^T w = z
    return wrap(fnp.take(w, fnp.argsort(perm), axis=0))


# --- banded systems ----------------------------------------------------------------------------
def _band_indices(n: int, l: int, u: int):
    """For the dense matrix: the band row of each (i, j) and whether it lies in the band."""
    i, j = np.indices((n, n))
    rows = u + i - j
    inside = (rows >= 0) & (rows <= l + u)
    return np.where(inside, rows, 0), j, inside


def _dense(ab, l: int, u: int):
    """The n x n matrix whose band `ab` holds (``a[u + i - j, j] = A[i, j]``)."""
    n = fnp.shape(ab)[-1]
    rows, cols, inside = _band_indices(n, l, u)
    return wrap(fnp.where(inside, ab[rows, cols], 0.0))


def _band(m, l: int, u: int):
    """The band of the square matrix `m` (the inverse of `_dense` on banded matrices)."""
    n = fnp.shape(m)[-1]
    r, j = np.indices((l + u + 1, n))
    i = r - u + j
    inside = (i >= 0) & (i < n)
    return wrap(fnp.where(inside, m[np.where(inside, i, 0), j], 0.0))


def _band_transpose(ab, l: int, u: int):
    """The band of A^T (lower and upper widths swapped): abT[r, j] = ab[l + u - r, j + r - l]."""
    n = fnp.shape(ab)[-1]
    r, j = np.indices((l + u + 1, n))
    cols = j + r - l
    inside = (cols >= 0) & (cols < n)
    return wrap(fnp.where(inside, ab[l + u - r, np.where(inside, cols, 0)], 0.0))


def _banded_impl(ab, b, l=0, u=0):
    return _sl().solve_banded((l, u), ab, b)


def _banded_adjoint(ct, ab, l, u):
    return banded_p(_band_transpose(ab, l, u), ct, l=u, u=l)


banded_p = primitive(
    "solve_banded", _banded_impl, nargs=2, params=("l", "u"),
    jvps=(lambda t, out, ab, b, l=0, u=0: banded_p(ab, -fnp.matmul(_dense(t, l, u), out), l=l, u=u),
          lambda t, out, ab, b, l=0, u=0: banded_p(ab, t, l=l, u=u)),
    vjps=(lambda ct, out, ab, b, l=0, u=0: -_band(_outer(_banded_adjoint(ct, ab, l, u), out), l, u),
          lambda ct, out, ab, b, l=0, u=0: _banded_adjoint(ct, ab, l, u)))


@export
def solve_banded(l_and_u: tuple[int, int], ab: ArrayLike, b: ArrayLike,
                 overwrite_ab: bool = False, overwrite_b: bool = False,
                 check_finite: bool = True) -> Array:
    """Differentiable ``scipy.linalg.solve_banded``: x with ``A x = b`` for the banded A that
    `ab` holds in SciPy's layout (``ab[u + i - j, j] = A[i, j]``), in `ab` and `b`.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.linalg import solve_banded
    >>> ab = fnp.array([[0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 0.0]])  # tridiagonal
    >>> solve_banded((1, 1), ab, fnp.array([3.0, 4.0, 3.0])).tolist()
    [1.0, 1.0, 1.0]
    """
    l, u = (int(w) for w in l_and_u)
    shape = fnp.shape(ab)
    if len(shape) != 2 or shape[0] != l + u + 1:
        raise ValueError(f"solve_banded: ab has shape {shape}; with (l, u) = ({l}, {u}) it "
                         f"must have l + u + 1 = {l + u + 1} rows")
    if fnp.shape(b)[0] != shape[1]:
        raise ValueError(f"solve_banded: b has {fnp.shape(b)[0]} rows, the matrix {shape[1]}")
    return wrap(banded_p(ab, b, l=l, u=u))


__all__ = sorted(ns.exports)
