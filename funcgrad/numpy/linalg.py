"""funcgrad.numpy.linalg: differentiable ``numpy.linalg``, each function declared once here.

Rules act on stacks of matrices (leading axes broadcast, as in NumPy). A VJP is the plain
transpose of the JVP, with no complex conjugation (JAX's convention, docs/complex.md); the
rules of the decompositions are written as adjoints (conjugate transposes), the form the
matrix-calculus references give them in, and `_from_adjoint` turns each into the transpose.
Decompositions whose outputs are only defined up to a choice (eigenvector signs, repeated
eigen- or singular values) have gradients only where that choice is locally unique.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> a = fnp.array([[2.0, 1.0], [1.0, 3.0]])
>>> fnp.allclose(fg.grad(fnp.linalg.det)(a), [[3.0, -1.0], [-1.0, 2.0]])  # det(a) * inv(a).T
True
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from .._src import batching as B
from .._src.core import Array, FuncgradError, wrap
from .._src.declare import Namespace, nondiff, primitive
from .._src.transforms import stop_gradient
from . import _helpers as H
from . import _primitives as P
from ._creation import asarray
from ._examples import EXAMPLES
from ._indexing import diagonal as _diagonal
from ._indexing import trace as _trace
from ._products import cross as _cross
from ._products import outer as _outer
from ._products import tensordot as _tensordot
from ._products import vecdot as _vecdot
from ._typing import ArrayLike, Axis, DTypeLike

ns = Namespace("funcgrad.numpy.linalg", EXAMPLES.get("funcgrad.numpy.linalg"))
public = ns.public
export = ns.export


def _T(x):
    return P.swapaxes(x, -1, -2)


def _H(x):
    return P.conj_if_complex(P.swapaxes(x, -1, -2))


def _diag(x):
    """The diagonal of each matrix of a stack (last axis)."""
    n = builtins.min(H.shape(x)[-2:])
    return P.subscript(x, (Ellipsis, np.arange(n), np.arange(n)))


def _diag_embed(v):
    """Stack of diagonal matrices from a stack of vectors."""
    n = H.shape(v)[-1]
    return P.where(np.eye(n, dtype=bool), P.expand_axis(v, -1), 0)


def _sym(x):
    return (x + _H(x)) / 2


def _eye_like(x):
    return np.eye(H.shape(x)[-1], dtype=H.dtype(x))


def _eye_rows(x):
    return np.eye(H.shape(x)[-2], dtype=H.dtype(x))


def _batch_stack(prim, vals, dims, **params):
    """Functions of stacked matrices: the batch axis joins the leading (stack) axes."""
    moved = []
    for v, d in zip(vals, dims):
        if d is None:
            moved.append(v)
        else:
            moved.append(B.move_to_front(v, d))
    rank = builtins.max(np.ndim(v) - (d is not None) for v, d in zip(vals, dims))
    aligned = []
    for v, d in zip(moved, dims):
        if d is not None and np.ndim(v) - 1 < rank:
            v = P.reshape(v, (v.shape[0],) + (1,) * (rank - np.ndim(v) + 1) + tuple(v.shape[1:]))
        aligned.append(v)
    return prim(*aligned, **params), 0


def _conj_all(v):
    return tuple(_conj_all(c) for c in v) if type(v) is tuple else P.conj_if_complex(v)


def _from_adjoint(adjoint):
    """The VJP (plain transpose) of a rule written as the adjoint ``A^H ct``: since
    ``A^T ct = conj(A^H conj(ct))``, for real values the two are the same rule."""
    def vjp(ct, out, *args, **params):
        return P.conj_if_complex(adjoint(_conj_all(ct), out, *args, **params))
    return vjp


# --- inverse, solve, determinants ----------------------------------------------------------
inv_p = primitive("inv", np.linalg.inv, batch=_batch_stack,
                  vjps=(lambda ct, out, x: -P.matmul(_T(out), P.matmul(ct, _T(out))),),
                  jvps=(lambda t, out, x: -P.matmul(out, P.matmul(t, out)),))
inv = public(inv_p, numpy=np.linalg.inv,
             doc="Differentiable ``numpy.linalg.inv``: d(A^-1) = -A^-1 dA A^-1.")


def _solve_impl(a, b):
    return np.linalg.solve(a, b)


def _solve_vjp_b(ct, out, a, b):
    return solve_p(_T(a), ct)


def _solve_vjp_a(ct, out, a, b):
    return -P.matmul(solve_p(_T(a), ct), _T(out))


solve_p = primitive("solve", _solve_impl, nargs=2, batch=_batch_stack,
                    vjps=(_solve_vjp_a, _solve_vjp_b),
                    jvps=(lambda t, out, a, b: -solve_p(a, P.matmul(t, out)),
                          lambda t, out, a, b: solve_p(a, t)))


@export(numpy=np.linalg.solve)
def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.solve`` (a 1-d `b` is one right-hand side).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.solve(fnp.array([[2.0, 0.0], [0.0, 4.0]]), fnp.array([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    if H.ndim(b) == 1:
        return wrap(P.subscript(solve_p(a, P.expand_axis(b, -1)), (Ellipsis, 0)))
    return wrap(solve_p(a, b))


def _det_vjp(ct, out, x):
    return P.expand_axis(P.expand_axis(out * ct, -1), -1) * _T(inv_p(x))


def _det_jvp(t, out, x):
    return out * P.sum(_T(inv_p(x)) * t, axis=(-2, -1))


det_p = primitive("det", np.linalg.det, vjps=(_det_vjp,), jvps=(_det_jvp,), batch=_batch_stack)
det = public(det_p, numpy=np.linalg.det,
             doc="Differentiable ``numpy.linalg.det`` (needs an invertible matrix for its gradient).")


def _slogdet_impl(x):
    sign, logabsdet = np.linalg.slogdet(x)
    return sign, logabsdet


def _slogdet_vjp(ct, out, x):
    return P.expand_axis(P.expand_axis(ct[1], -1), -1) * _T(inv_p(x))


def _slogdet_jvp(t, out, x):
    return (P.zeros_like(out[0]), P.real(P.sum(_T(inv_p(x)) * t, axis=(-2, -1))))


slogdet_p = primitive("slogdet", _slogdet_impl, vjps=(_slogdet_vjp,), jvps=(_slogdet_jvp,),
                      multiple_results=True, batch=_batch_stack)


@export(numpy=np.linalg.slogdet)
def slogdet(a: ArrayLike) -> tuple[Array, Array]:
    """Differentiable ``numpy.linalg.slogdet``: ``(sign, logabsdet)``; the sign carries no
    derivative (for complex input its phase is held constant).

    >>> import funcgrad.numpy as fnp
    >>> sign, logdet = fnp.linalg.slogdet(fnp.array([[-2.0, 0.0], [0.0, 3.0]]))
    >>> sign.item(), round(logdet.item(), 6)
    (-1.0, 1.791759)
    """
    return tuple(wrap(o) for o in slogdet_p(a))


# --- Cholesky, eigen and singular value decompositions --------------------------------------
def _phi(x):
    """Lower triangle with the diagonal halved."""
    n = H.shape(x)[-1]
    return P.where(np.tri(n, k=-1, dtype=bool), x, 0) + P.where(np.eye(n, dtype=bool), 0.5 * x, 0)


def _cholesky_vjp(ct, out, x):
    l_inv = inv_p(out)
    s = P.matmul(_H(l_inv), P.matmul(_phi(P.matmul(_H(out), ct)), l_inv))
    return _sym(s)


def _cholesky_jvp(t, out, x):
    l_inv = inv_p(out)
    return P.matmul(out, _phi(P.matmul(l_inv, P.matmul(_sym(t), _H(l_inv)))))


cholesky_p = primitive("cholesky", np.linalg.cholesky, vjps=(_from_adjoint(_cholesky_vjp),),
                       jvps=(_cholesky_jvp,), batch=_batch_stack)
cholesky = public(cholesky_p, numpy=np.linalg.cholesky,
                  doc="Differentiable ``numpy.linalg.cholesky``; its gradient is that of the "
                      "symmetric (Hermitian) input, and is returned symmetric.")


def _gap_inverse(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it (infinite for repeated values)."""
    gaps = P.expand_axis(w, -2) - P.expand_axis(w, -1)
    n = H.shape(w)[-1]
    off = ~np.eye(n, dtype=bool)
    return P.where(off, 1 / P.where(off, gaps, 1), 0)


def _eigh_impl(x, UPLO="L"):
    w, v = np.linalg.eigh(x, UPLO=UPLO)
    return w, v


def _eigh_vjp(ct, out, x, UPLO="L"):
    w, v = out
    w_ct, v_ct = ct
    inner = _diag_embed(w_ct) + _gap_inverse(w) * P.matmul(_H(v), v_ct)
    return _sym(P.matmul(v, P.matmul(inner, _H(v))))


def _eigh_jvp(t, out, x, UPLO="L"):
    w, v = out
    m = P.matmul(_H(v), P.matmul(_sym(t), v))
    return P.real(_diag(m)), P.matmul(v, _gap_inverse(w) * m)


eigh_p = primitive("eigh", _eigh_impl, params=("UPLO",), vjps=(_from_adjoint(_eigh_vjp),),
                   jvps=(_eigh_jvp,),
                   multiple_results=True, batch=_batch_stack)


@export(numpy=np.linalg.eigh)
def eigh(a: ArrayLike, UPLO: str = "L") -> tuple[Array, Array]:
    """Differentiable ``numpy.linalg.eigh``: ``(eigenvalues, eigenvectors)``. Gradients assume
    a symmetric (Hermitian) input and distinct eigenvalues.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda a: fnp.linalg.eigh(a)[0][-1])(fnp.array([[2.0, 0.0], [0.0, 1.0]])).tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    # NumPy reads only the UPLO triangle: differentiate the Hermitian matrix built from it,
    # so the gradient lands on that triangle (as autograd's and JAX's do)
    a = asarray(a)
    n = H.shape(a)[-1]
    keep = np.tri(n, dtype=bool) if UPLO.upper() == "L" else np.tri(n, dtype=bool).T
    strict = keep & ~np.eye(n, dtype=bool)
    full = P.where(keep, a, 0) + P.where(strict.T, P.conj_if_complex(_T(a)), 0)
    return tuple(wrap(o) for o in eigh_p(full, UPLO=UPLO))


@export(numpy=np.linalg.eigvalsh)
def eigvalsh(a: ArrayLike, UPLO: str = "L") -> Array:
    """Differentiable ``numpy.linalg.eigvalsh``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.eigvalsh(fnp.array([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    return eigh(a, UPLO)[0]


def _eig_impl(x):
    w, v = np.linalg.eig(x)
    kind = np.result_type(x.dtype, np.complex64)
    return w.astype(kind), v.astype(kind)


def _eig_vjp(ct, out, x):
    w, v = out
    w_ct, v_ct = ct
    # undo the unit-norm normalisation of each eigenvector, then the eigen-equation
    v_ct = v_ct - v * P.expand_axis(P.real(_diag(P.matmul(_H(v), v_ct))), -2)
    inner = _diag_embed(w_ct) + P.conj_if_complex(_gap_inverse(w)) * P.matmul(_H(v), v_ct)
    return P.matmul(solve_p(_H(v), inner), _H(v))


def _eig_jvp(t, out, x):
    w, v = out
    m = solve_p(v, P.matmul(t, v))
    dv = P.matmul(v, _gap_inverse(w) * m)
    dv = dv - v * P.expand_axis(P.real(_diag(P.matmul(_H(v), dv))), -2)
    return _diag(m), dv


eig_p = primitive("eig", _eig_impl, vjps=(_from_adjoint(_eig_vjp),), jvps=(_eig_jvp,),
                  multiple_results=True,
                  batch=_batch_stack)


@export(numpy=np.linalg.eig)
def eig(a: ArrayLike) -> tuple[Array, Array]:
    """Differentiable ``numpy.linalg.eig``: ``(eigenvalues, eigenvectors)``, always complex (as
    in JAX). Gradients need distinct eigenvalues; eigenvectors are unit-norm, and their
    arbitrary phase is not differentiated (use phase-invariant functions of them).

    >>> import funcgrad.numpy as fnp
    >>> w, v = fnp.linalg.eig(fnp.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> w.tolist()
    [(1+0j), (3+0j)]
    """
    return tuple(wrap(o) for o in eig_p(a))


@export(numpy=np.linalg.eigvals)
def eigvals(a: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.eigvals`` (complex).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.eigvals(fnp.array([[0.0, -1.0], [1.0, 0.0]])).tolist()
    [1j, -1j]
    """
    return eig(a)[0]


def _svd_impl(x, full_matrices=False):
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return u, s, vh


def _check_unique(x, full_matrices):
    m, n = H.shape(x)[-2:]
    if full_matrices and m != n:
        raise FuncgradError(
            "svd with full_matrices=True of a non-square matrix: the extra singular vectors "
            "are not unique, so they have no derivative. Pass full_matrices=False")


def _svd_vjp(ct, out, x, full_matrices=False):
    _check_unique(x, full_matrices)
    u, s, vh = out
    u_ct, s_ct, vh_ct = ct
    v, v_ct = _H(vh), _H(vh_ct)
    f = _gap_inverse(s * s)
    uh_uct = P.matmul(_H(u), u_ct)
    j = f * uh_uct
    k = f * P.matmul(_H(v), v_ct)
    s_row = P.expand_axis(s, -2)
    s_col = P.expand_axis(s, -1)
    inner = (j + _H(j)) * s_row + s_col * (k + _H(k)) + _diag_embed(s_ct)
    if H.dtype(u).kind == "c":  # the adjoint of the phase term of the JVP (see _svd_phase)
        inner = inner + _svd_phase(uh_uct, s)
    grad = P.matmul(u, P.matmul(inner, vh))
    m, n = H.shape(x)[-2:]
    if m > n:
        proj = _eye_rows(u) - P.matmul(u, _H(u))
        grad = grad + P.matmul(proj, P.matmul(u_ct / s_row, vh))
    if n > m:
        proj = _eye_rows(v) - P.matmul(v, vh)
        grad = grad + P.matmul(u, P.matmul(_H(v_ct) / s_col, proj))
    return grad


def _svd_phase(m, s):
    """diag(i Im(m_kk) / s_k): for complex matrices the singular vectors are fixed up to a
    phase per pair; LAPACK's choice moves u_k's phase by i Im((U^H dA V)_kk) / s_k, the
    skew-Hermitian diagonal part (JAX's dUdV_diag), and 0 where s_k is 0."""
    zero = P.equal(s, 0)
    s_inv = P.where(zero, 0, 1 / P.where(zero, 1, s))
    return _diag_embed(1j * P.imag(_diag(m)) * s_inv)


def _svd_jvp(t, out, x, full_matrices=False):
    _check_unique(x, full_matrices)
    u, s, vh = out
    v = _H(vh)
    dp = P.matmul(_H(u), P.matmul(t, v))
    ds = P.real(_diag(dp))
    f = _gap_inverse(s * s)
    s_row, s_col = P.expand_axis(s, -2), P.expand_axis(s, -1)
    du = P.matmul(u, f * (dp * s_row + s_col * _H(dp)))
    if H.dtype(u).kind == "c":
        du = du + P.matmul(u, _svd_phase(dp, s))
    dv = P.matmul(v, f * (s_col * dp + _H(dp) * s_row))
    m, n = H.shape(x)[-2:]
    if m > n:
        du = du + P.matmul(_eye_rows(u) - P.matmul(u, _H(u)), P.matmul(t, v) / s_row)
    if n > m:
        dv = dv + P.matmul(_eye_rows(v) - P.matmul(v, vh), P.matmul(_H(t), u) / s_row)
    return du, ds, _H(dv)


svd_p = primitive("svd", _svd_impl, params=("full_matrices",), vjps=(_from_adjoint(_svd_vjp),),
                  jvps=(_svd_jvp,), multiple_results=True, batch=_batch_stack)


def _svdvals_impl(x):
    return np.linalg.svd(x, compute_uv=False)


def _svdvals_vjp(ct, out, x):
    u, s, vh = svd_p(x, full_matrices=False)
    return P.matmul(u * P.expand_axis(ct, -2), vh)


def _svdvals_jvp(t, out, x):
    u, s, vh = svd_p(x, full_matrices=False)
    return P.real(_diag(P.matmul(_H(u), P.matmul(t, _H(vh)))))


svdvals_p = primitive("svdvals", _svdvals_impl, vjps=(_from_adjoint(_svdvals_vjp),),
                      jvps=(_svdvals_jvp,),
                      batch=_batch_stack)


@export(numpy=np.linalg.svd)
def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Array | tuple[Array, Array, Array]:
    """Differentiable ``numpy.linalg.svd``. Singular values: any input. Singular vectors:
    real inputs, distinct nonzero singular values, and (for non-square input)
    ``full_matrices=False``; their arbitrary signs are not differentiated.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda a: fnp.linalg.svd(a, compute_uv=False)[0])(fnp.array([[3.0, 0.0], [0.0, 1.0]])).tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    if not compute_uv:
        return wrap(svdvals_p(a))
    return tuple(wrap(o) for o in svd_p(a, full_matrices=full_matrices))


@export(numpy=np.linalg.svdvals)
def svdvals(x: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.svdvals``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.svdvals(fnp.array([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    return wrap(svdvals_p(x))


def _qr_impl(x, mode="reduced"):
    q, r = np.linalg.qr(x, mode=mode)
    return q, r


def _check_tall(x):
    m, n = H.shape(x)[-2:]
    if m < n:
        raise FuncgradError("qr of a wide matrix (more columns than rows) has no unique "
                            "derivative here; differentiate qr of its leading square block")


def _strictly_lower(x):
    return P.where(np.tri(H.shape(x)[-1], k=-1, dtype=bool), x, 0)


def _qr_vjp(ct, out, x, mode="reduced"):
    _check_tall(x)
    q, r = out
    q_ct, r_ct = ct
    r_inv = inv_p(r)
    z = P.matmul(r_ct, _H(r))
    do_ct = P.matmul(_H(q), q_ct) - z
    c_ct = z - P.matmul(_H(q), q_ct)
    c_ct = c_ct + _strictly_lower(do_ct - _H(do_ct))
    e_ct = q_ct + P.matmul(q, c_ct)
    return P.matmul(e_ct, _H(r_inv))


def _qr_jvp(t, out, x, mode="reduced"):
    _check_tall(x)
    q, r = out
    e = P.matmul(t, inv_p(r))
    c = P.matmul(_H(q), e)
    low = _strictly_lower(c)
    do = low - _H(low)
    return P.matmul(q, do) + e - P.matmul(q, c), P.matmul(c - do, r)


qr_p = primitive("qr", _qr_impl, params=("mode",), vjps=(_from_adjoint(_qr_vjp),), jvps=(_qr_jvp,),
                 multiple_results=True, batch=_batch_stack)


@export(numpy=np.linalg.qr)
def qr(a: ArrayLike, mode: str = "reduced") -> Array | tuple[Array, Array]:
    """Differentiable ``numpy.linalg.qr`` (modes 'reduced', 'complete' for square or tall
    input where Q is square, and 'r'); real input, at least as many rows as columns.

    >>> import funcgrad.numpy as fnp
    >>> q, r = fnp.linalg.qr(fnp.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> fnp.allclose(q @ r, [[3.0, 1.0], [4.0, 2.0]])
    True
    """
    if mode == "r":
        return wrap(qr_p(a, mode="reduced")[1])
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    m, n = H.shape(a)[-2:]
    if mode == "complete" and m > n:
        raise FuncgradError("qr(mode='complete') of a tall matrix: the extra columns of Q "
                            "are not unique, so they have no derivative. Use mode='reduced'")
    return tuple(wrap(o) for o in qr_p(a, mode=mode))


# --- pseudo-inverse and least squares ------------------------------------------------------
def _pinv_impl(x, rcond=None, hermitian=False):
    if rcond is None:
        return np.linalg.pinv(x, hermitian=hermitian)
    return np.linalg.pinv(x, rcond=rcond, hermitian=hermitian)


def _pinv_jvp(t, out, x, rcond=None, hermitian=False):
    a_p, a_ph = out, _H(out)
    left = _eye_like(out) - P.matmul(x, out)      # I - A A+ (rows of A)
    right = _eye_like(x) - P.matmul(out, x)       # I - A+ A (columns of A)
    return (-P.matmul(a_p, P.matmul(t, a_p)) + P.matmul(P.matmul(a_p, a_ph), P.matmul(_H(t), left))
            + P.matmul(right, P.matmul(_H(t), P.matmul(a_ph, a_p))))


def _pinv_vjp(ct, out, x, rcond=None, hermitian=False):
    a_p, a_ph = out, _H(out)
    left = _eye_like(out) - P.matmul(x, out)
    right = _eye_like(x) - P.matmul(out, x)
    return (-P.matmul(a_ph, P.matmul(ct, a_ph)) + P.matmul(left, P.matmul(_H(ct), P.matmul(a_p, a_ph)))
            + P.matmul(P.matmul(a_ph, a_p), P.matmul(_H(ct), right)))


pinv_p = primitive("pinv", _pinv_impl, params=("rcond", "hermitian"),
                   vjps=(_from_adjoint(_pinv_vjp),),
                   jvps=(_pinv_jvp,), batch=_batch_stack)


@export(numpy=np.linalg.pinv)
def pinv(a: ArrayLike, rcond: float | None = None, hermitian: bool = False) -> Array:
    """Differentiable ``numpy.linalg.pinv``; the gradient holds where the rank is constant.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.pinv(fnp.array([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    return wrap(pinv_p(a, rcond=rcond, hermitian=hermitian))


@export(numpy=np.linalg.lstsq)
def lstsq(a: ArrayLike, b: ArrayLike,
          rcond: float | None = None) -> tuple[Array, Array, Any, Array]:
    """Differentiable ``numpy.linalg.lstsq``: ``(x, residuals, rank, s)`` with ``x`` from the
    pseudo-inverse (derivatives in `a` and `b` where the rank is constant).

    >>> import funcgrad.numpy as fnp
    >>> x, residuals, rank, s = fnp.linalg.lstsq(fnp.array([[1.0], [1.0]]), fnp.array([1.0, 3.0]))
    >>> round(x.item(), 9), round(residuals.item(), 9), int(rank)
    (2.0, 2.0, 1)
    """
    a, b = asarray(a), asarray(b)
    m, n = H.shape(a)
    if rcond is None:
        rcond = np.finfo(H.dtype(a)).eps * builtins.max(m, n)
    x = P.matmul(pinv_p(a, rcond=rcond), b)
    rank = matrix_rank_p(a, rtol=rcond)
    if m > n and np.all(np.asarray(H.bottom(rank)) == n):
        r = P.matmul(a, x) - b
        residuals = P.sum(P.real(r * P.conj_if_complex(r)), axis=0)
        residuals = P.reshape(residuals, (1,)) if H.ndim(b) == 1 else residuals
    else:
        residuals = np.zeros((0,), dtype=np.real(np.zeros((), H.dtype(a))).dtype)
    return wrap(x), wrap(residuals), rank, wrap(svdvals_p(a))


matrix_rank_p = nondiff("matrix_rank", np.linalg.matrix_rank, batch=_batch_stack)


# --- norms -----------------------------------------------------------------------------------
def _pnorm_impl(x, p=2.0, axis=None, keepdims=False):
    mag = np.abs(x)
    if p == 2:
        return np.sqrt(np.sum(mag * mag, axis=axis, keepdims=keepdims))
    if p == 1:
        return np.sum(mag, axis=axis, keepdims=keepdims)
    return np.sum(mag ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _pnorm_slope(out, x, p, axis, keepdims):
    """d norm / d x, and 0 where the norm is 0 (the zero subgradient, as PyTorch)."""
    out = out if keepdims else P.reshape(out, H.keepdims_shape(H.shape(x), axis))
    zero = P.equal(out, 0)
    safe = P.where(zero, 1, out)
    # x / |x|: for complex x it varies smoothly with x (a sign is piecewise constant only
    # for real x), which second derivatives must see
    unit = P.safe_div(x, P.absolute(x)) if H.dtype(x).kind == "c" else P.sign(x)
    if p == 2:
        slope = x / safe
    elif p == 1:
        slope = unit * P.ones_like(safe)
    else:
        slope = unit * P.absolute(x) ** (p - 1) / safe ** (p - 1)
    return P.where(zero, 0, slope)


def _pnorm_vjp(ct, out, x, p=2.0, axis=None, keepdims=False):
    return P.expand_reduced(ct, x, axis, keepdims) * _pnorm_slope(out, x, p, axis, keepdims)


def _pnorm_jvp(t, out, x, p=2.0, axis=None, keepdims=False):
    return P.real(P.sum(P.conj_if_complex(_pnorm_slope(out, x, p, axis, keepdims)) * t, axis=axis,
                        keepdims=keepdims))


pnorm_p = primitive("vector_norm", _pnorm_impl, params=("p", "axis", "keepdims"),
                    vjps=(_from_adjoint(_pnorm_vjp),), jvps=(_pnorm_jvp,),
                    batch=B.batch_axis_param)


def _vector_norm(x, ord, axis, keepdims):
    mag = P.absolute(x)
    if ord in (np.inf, float("inf")):
        return P.max(mag, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return P.min(mag, axis=axis, keepdims=keepdims)
    if ord == 0:
        count = P.sum(P.astype(P.not_equal(x, 0), np.real(np.zeros((), H.dtype(x))).dtype),
                      axis=axis, keepdims=keepdims)
        return stop_gradient(count)
    p = 2.0 if ord is None else float(ord)
    if p < 1:
        return P.sum(mag ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)
    return pnorm_p(x, p=p, axis=axis, keepdims=keepdims)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = (a % H.ndim(x) for a in axes)
    if ord in (None, "fro"):
        return pnorm_p(x, p=2.0, axis=(row, col), keepdims=keepdims)
    moved = P.moveaxis(x, (row, col), (-2, -1))
    if ord in ("nuc", 2, -2):
        s = svdvals_p(moved)
        out = (P.sum(s, axis=-1) if ord == "nuc" else
               P.max(s, axis=-1) if ord == 2 else P.min(s, axis=-1))
    elif ord in (1, -1, np.inf, -np.inf):
        sums = P.sum(P.absolute(moved), axis=-2 if ord in (1, -1) else -1)
        out = P.max(sums, axis=-1) if ord in (1, np.inf) else P.min(sums, axis=-1)
    else:
        raise ValueError(f"Invalid norm order {ord!r} for matrices")
    if keepdims:
        out = P.reshape(out, H.keepdims_shape(H.shape(x), (row, col)))
    return out


@export(numpy=np.linalg.norm)
def norm(x: ArrayLike, ord: float | str | None = None, axis: Axis = None,
         keepdims: bool = False) -> Array:
    """Differentiable ``numpy.linalg.norm``, every ``ord`` and ``axis`` form. At a zero
    vector the slope is 0 (the zero subgradient), not NaN.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.linalg.norm)(fnp.array([3.0, 4.0])).tolist()
    [0.6, 0.8]
    >>> fg.grad(fnp.linalg.norm)(fnp.zeros(2)).tolist()
    [0.0, 0.0]
    """
    x = asarray(x)
    if isinstance(axis, list):
        axis = tuple(axis)
    if axis is None:
        if ord is None:
            return wrap(pnorm_p(x, p=2.0, axis=None, keepdims=keepdims))
        axis = (0, 1) if H.ndim(x) == 2 else 0 if H.ndim(x) == 1 else None
        if axis is None:
            raise ValueError("Improper number of dimensions to norm")
    if isinstance(axis, tuple) and len(axis) == 2:
        return wrap(_matrix_norm(x, ord, axis, keepdims))
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError("Improper number of dimensions to norm")
        axis = axis[0]
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order {ord!r} for vectors")
    return wrap(_vector_norm(x, ord, axis, keepdims))


@export(numpy=np.linalg.vector_norm)
def vector_norm(x: ArrayLike, /, *, axis: Axis = None, keepdims: bool = False,
                ord: float | str = 2) -> Array:
    """Differentiable ``numpy.linalg.vector_norm`` (any axis or tuple of axes).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.vector_norm(fnp.array([[3.0], [4.0]])).item()
    5.0
    """
    x = asarray(x)
    if isinstance(axis, list):
        axis = tuple(axis)
    if ord in (np.inf, -np.inf, 0) or (ord is not None and ord < 1):
        if axis is None or isinstance(axis, tuple):
            shape = H.shape(x)
            axes = H.normalize_axes(axis, len(shape))
            rest = tuple(i for i in range(len(shape)) if i not in axes)
            flat = P.reshape(P.transpose(x, rest + axes), tuple(shape[i] for i in rest) + (-1,))
            out = _vector_norm(flat, ord, -1, False)
            return wrap(P.reshape(out, H.keepdims_shape(shape, axis)) if keepdims else out)
    return wrap(_vector_norm(x, ord, axis, keepdims))


@export(numpy=np.linalg.matrix_norm)
def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: float | str = "fro") -> Array:
    """Differentiable ``numpy.linalg.matrix_norm`` over the last two axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matrix_norm(fnp.array([[3.0, 0.0], [0.0, 4.0]]), ord="nuc").item()
    7.0
    """
    return wrap(_matrix_norm(asarray(x), ord, (-2, -1), keepdims))


@export(numpy=np.linalg.cond)
def cond(x: ArrayLike, p: float | str | None = None) -> Array:
    """Differentiable ``numpy.linalg.cond``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.cond(fnp.array([[2.0, 0.0], [0.0, 0.5]])).item()
    4.0
    """
    if p in (None, 2, -2):
        s = svdvals_p(x)
        hi, lo = P.max(s, axis=-1), P.min(s, axis=-1)
        return wrap(lo / hi if p == -2 else hi / lo)
    return wrap(norm(x, p, axis=(-2, -1)) * norm(inv_p(x), p, axis=(-2, -1)))


# --- products and powers ---------------------------------------------------------------------
@export(numpy=np.linalg.matrix_power)
def matrix_power(a: ArrayLike, n: int) -> Array:
    """Differentiable ``numpy.linalg.matrix_power`` (by repeated squaring).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda a: fnp.linalg.matrix_power(a, 3)[0, 0])(fnp.array([[2.0]])).tolist()
    [[12.0]]
    """
    a = asarray(a)
    if n == 0:
        return wrap(np.broadcast_to(_eye_like(a), H.shape(a)).copy())
    if n < 0:
        a, n = inv_p(a), -n
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else P.matmul(result, power)
        n >>= 1
        if n:
            power = P.matmul(power, power)
    return wrap(result)


@export(numpy=np.linalg.multi_dot)
def multi_dot(arrays: Sequence[ArrayLike], *, out: None = None) -> Array:
    """Differentiable ``numpy.linalg.multi_dot`` (left to right).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.multi_dot([fnp.ones(2), fnp.eye(2), fnp.ones(2)]).item()
    2.0
    """
    arrays = list(arrays)
    result = arrays[0]
    for a in arrays[1:]:
        result = P.matmul(result, a)
    return wrap(result)


@export(numpy=np.linalg.tensorsolve)
def tensorsolve(a: ArrayLike, b: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.linalg.tensorsolve``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.tensorsolve(2.0 * fnp.eye(2), fnp.array([2.0, 4.0])).tolist()
    [1.0, 2.0]
    """
    a = asarray(a)
    if axes is not None:
        rest = [k for k in range(H.ndim(a)) if k not in axes]
        a = P.transpose(a, tuple(rest) + tuple(axes))
    out_shape = H.shape(a)[H.ndim(b):]
    n = int(np.prod(out_shape))
    x = solve_p(P.reshape(a, (-1, n)), P.reshape(b, (-1, 1)))
    return wrap(P.reshape(x, out_shape))


@export(numpy=np.linalg.tensorinv)
def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """Differentiable ``numpy.linalg.tensorinv``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.tensorinv(2.0 * fnp.eye(2), ind=1).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    """
    shape = H.shape(a)
    rows = int(np.prod(shape[:ind]))
    return wrap(P.reshape(inv_p(P.reshape(a, (rows, -1))), shape[ind:] + shape[:ind]))


@export(numpy=np.linalg.matrix_transpose)
def matrix_transpose(x: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.matrix_transpose``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matrix_transpose(fnp.ones((2, 3))).shape
    (3, 2)
    """
    return wrap(_T(x))


@export(numpy=np.linalg.trace)
def trace(x: ArrayLike, /, *, offset: int = 0, dtype: DTypeLike | None = None) -> Array:
    """Differentiable ``numpy.linalg.trace`` (over the last two axes).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.trace(fnp.eye(3)).item()
    3.0
    """
    return _trace(x, offset, -2, -1, dtype)


@export(numpy=np.linalg.diagonal)
def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """Differentiable ``numpy.linalg.diagonal`` (of the last two axes).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.diagonal(fnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [1.0, 4.0]
    """
    return _diagonal(x, offset, -2, -1)


@export(numpy=np.linalg.outer)
def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Differentiable ``numpy.linalg.outer`` (1-d inputs).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.outer(fnp.array([1.0, 2.0]), fnp.array([3.0])).tolist()
    [[3.0], [6.0]]
    """
    if H.ndim(x1) != 1 or H.ndim(x2) != 1:
        raise ValueError("linalg.outer: inputs must be 1-d")
    return _outer(x1, x2)


@export(numpy=np.linalg.cross)
def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: Axis = -1) -> Array:
    """Differentiable ``numpy.linalg.cross`` (3-vectors).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.cross(fnp.array([1.0, 0.0, 0.0]), fnp.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    return _cross(x1, x2, axis=axis)


@export(numpy=np.linalg.matmul)
def matmul_public(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Differentiable ``numpy.linalg.matmul``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matmul(fnp.eye(2), fnp.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    return wrap(P.matmul(x1, x2))


@export(numpy=np.linalg.vecdot)
def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: Axis = -1) -> Array:
    """Differentiable ``numpy.linalg.vecdot``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.vecdot(fnp.array([1.0, 2.0]), fnp.array([3.0, 4.0])).item()
    11.0
    """
    return _vecdot(x1, x2, axis=axis)


@export(numpy=np.linalg.tensordot)
def tensordot(x1: ArrayLike, x2: ArrayLike, /, *,
              axes: int | Sequence[int] | Sequence[Sequence[int]] = 2) -> Array:
    """Differentiable ``numpy.linalg.tensordot``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.tensordot(fnp.ones((2, 3)), fnp.ones((3, 2)), axes=1).tolist()
    [[3.0, 3.0], [3.0, 3.0]]
    """
    return _tensordot(x1, x2, axes)


ns.exports["matmul"] = ns.exports.pop("matmul_public")
ns.kinds["matmul"] = ns.kinds.pop("matmul_public")
public(matrix_rank_p, numpy=np.linalg.matrix_rank)

globals().update(ns.exports)
LinAlgError = np.linalg.LinAlgError  # what the functions raise, as NumPy's (one class)
__all__ = sorted(ns.exports) + ["LinAlgError"]


# autograd.numpy.linalg's helpers, which programs written for autograd reach for (not part
# of NumPy's namespace, so not in __all__): the transpose and product of stacked matrices.
def T(x: ArrayLike) -> Array:
    """Stacked matrices transposed (autograd.numpy.linalg.T): ``swapaxes(x, -1, -2)``."""
    return wrap(P.swapaxes(x, -1, -2))


def _dot(a: ArrayLike, b: ArrayLike) -> Array:
    """Stacked matrix products (autograd.numpy.linalg._dot), broadcasting leading axes."""
    return wrap(P.matmul(a, b))


def __getattr__(name: str):
    if hasattr(np.linalg, name):
        raise AttributeError(
            f"funcgrad.numpy.linalg has no {name!r}: numpy.linalg.{name} has not been declared "
            "differentiable yet. Declare it in funcgrad/numpy/linalg.py with its rule")
    raise AttributeError(f"module 'funcgrad.numpy.linalg' has no attribute {name!r}")
