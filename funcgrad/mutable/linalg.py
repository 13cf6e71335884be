"""``torch.linalg``: vector norms (the part of it the tensor ops build on), qr, and the
determinant, inverse, solve and Cholesky family on the shared table's rules."""
from __future__ import annotations

import contextlib
import warnings

import numpy as np

from .._src.declare import primitive
from ..numpy import _helpers as H
from ..numpy import _primitives as NP
from . import _ops as O
from . import return_types
from ._functions import where
from ._ops import apply
from ._tensor import Tensor
from ._graph import node_class
from ._tensor_ops import _PairBackward, _one_node, vector_norm

__all__ = ["vector_norm", "norm", "qr", "det", "inv", "slogdet", "solve", "cholesky",
           "LinAlgError", "TOP_LEVEL", "eigh", "eigvalsh", "svdvals", "pinv", "matrix_power", "solve_triangular", "svd"]


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):
    """``torch.linalg.norm`` of a vector (or of all elements with ``ord=None``).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.norm(torch.tensor([3.0, 4.0]))
    tensor(5.)
    """
    if ord is not None and A.dim() > 1 and (dim is None or not isinstance(dim, int)):
        raise NotImplementedError("matrix norms are not supported by funcgrad.mutable")
    return vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)


def _qr_impl(a, mode, k):
    """Q (k = 0) or R (k = 1) of `a`; mode 'r' computes both as 'reduced' (torch returns an
    empty Q; R alone is recorded)."""
    return np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")[k]


def _qr_vjp(k: int):
    def vjp(ct, out, a, mode):
        # the rule of the pair (funcgrad's qr), with the other result's cotangent zero; Q and R
        # through the one-result primitives, so that create_graph records them too
        m, n = a.shape[-2:]
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not "
                               "computed when mode='r'. Please use linalg.qr(A, "
                               "mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        q, r = _QR_PRIMS[0](a, mode=mode), _QR_PRIMS[1](a, mode=mode)
        gq, gr = (ct, NP.zeros_like(r)) if k == 0 else (NP.zeros_like(q), ct)
        if m >= n:
            return NP.qr.vjps[0]((gq, gr), (q, r), a, mode=mode)
        # a wide matrix A = [X | Y] (X square): X = QU is a square QR and V = Q^T Y, so Y's
        # gradient is Q gV and V's dependence on Q adds Y gV^T to Q's cotangent (PyTorch
        # differentiates the wide case this way; funcgrad.numpy, like JAX, refuses it)
        gu, gv = gr[..., :, :m], gr[..., :, m:]
        x, y = a[..., :, :m], a[..., :, m:]
        gq = gq + NP.matmul(y, NP.swapaxes(gv, -1, -2))
        gx = NP.qr.vjps[0]((gq, gu), (q, r[..., :, :m]), x, mode="reduced")
        return NP.concatenate(gx, NP.matmul(q, gv), axis=H.ndim(a) - 1)
    return vjp


_QR_PRIMS = tuple(primitive(f"linalg_qr_{'qr'[k]}", lambda a, mode, k=k: _qr_impl(a, mode, k),
                            params=("mode",), vjps=(_qr_vjp(k),)) for k in (0, 1))
_QR = tuple(O.Op(f"linalg_qr_{'qr'[k]}", _QR_PRIMS[k], "LinalgQrBackward0", result="same")
            for k in (0, 1))


def qr(A: Tensor, mode: str = "reduced"):
    """``torch.linalg.qr``: ``(Q, R)`` with orthonormal Q and upper-triangular R, both outputs
    of one ``LinalgQrBackward0`` node (mode 'reduced', 'complete' or 'r').

    >>> import funcgrad.mutable as torch
    >>> q, r = torch.linalg.qr(torch.tensor([[3.0, 0.0], [4.0, 5.0]]))
    >>> (q @ r).round()
    tensor([[3., 0.],
            [4., 5.]])
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.qr: The input tensor A must have at least 2 dimensions.")
    if mode == "r":
        r = apply(_QR[1], (A,), {"mode": "r"})
        return return_types.linalg_qr(Tensor._wrap(np.zeros((0,), A._data.dtype)), r)
    q = apply(_QR[0], (A,), {"mode": mode})
    r = apply(_QR[1], (A,), {"mode": mode})
    return return_types.linalg_qr(*_one_node("LinalgQrBackward0", q, r))


# --- determinants, inverse, solve, Cholesky: the shared table's primitives, torch's names -------
class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a matrix the decomposition cannot handle (singular, not
    positive-definite); a RuntimeError, as in PyTorch."""


LinAlgError.__module__ = "torch._C"
LinAlgError.__qualname__ = LinAlgError.__name__ = "_LinAlgError"

_DET = O.Op("linalg_det", NP.det, "LinalgDetBackward0", result="same")
_INV = O.Op("linalg_inv", NP.inv, "LinalgInvExBackward0", result="same")
_SOLVE = O.Op("linalg_solve", NP.solve, "LinalgSolveExBackward0")
_CHOLESKY = O.Op("linalg_cholesky", NP.cholesky, "LinalgCholeskyExBackward0", result="same")


def _col(v):
    """A stack of vectors as a stack of one-column matrices."""
    return NP.reshape(v, tuple(H.shape(v)) + (1,))


def _uncol(m):
    return NP.reshape(m, tuple(H.shape(m))[:-1])


# a vector right-hand side is one primitive (torch records LinalgSolveExBackward0 alone, with
# B's own edge), its rules the matrix ones on one-column matrices
_SOLVE_VEC_P = primitive(
    "linalg_solve_vector", lambda a, b: np.linalg.solve(a, b[..., None])[..., 0], nargs=2,
    vjps=(lambda ct, out, a, b: NP.solve.vjps[0](_col(ct), _col(out), a, _col(b)),
          lambda ct, out, a, b: _uncol(NP.solve.vjps[1](_col(ct), _col(out), a, _col(b)))),
    jvps=(lambda t, out, a, b: _uncol(NP.solve.jvps[0](t, _col(out), a, _col(b))),
          lambda t, out, a, b: _uncol(NP.solve.jvps[1](_col(t), _col(out), a, _col(b)))))
_SOLVE_VEC = O.Op("linalg_solve_vector", _SOLVE_VEC_P, "LinalgSolveExBackward0")
# upper=True is U = L^H as one primitive: torch records LinalgCholeskyExBackward0 alone
_CHOLESKY_U_P = primitive(
    "linalg_cholesky_upper", lambda a: np.conj(np.swapaxes(np.linalg.cholesky(a), -1, -2)),
    vjps=(lambda ct, out, a: NP.cholesky.vjps[0](NP.conj_if_complex(NP.swapaxes(ct, -1, -2)),
                                                 NP.conj_if_complex(NP.swapaxes(out, -1, -2)),
                                                 a),),
    jvps=(lambda t, out, a: NP.conj_if_complex(NP.swapaxes(
        NP.cholesky.jvps[0](t, NP.conj_if_complex(NP.swapaxes(out, -1, -2)), a), -1, -2)),))
_CHOLESKY_U = O.Op("linalg_cholesky_upper", _CHOLESKY_U_P, "LinalgCholeskyExBackward0",
                   result="same")
# slogdet's two results as two one-result primitives (one node, as torch records them): the
# sign carries no derivative, logabsdet takes the table's slogdet rule
_SIGN_P = primitive("linalg_slogdet_sign", lambda a: np.linalg.slogdet(a)[0],
                    vjps=(lambda ct, out, a: NP.zeros_like(a),))
_LOGABSDET_P = primitive(
    "linalg_slogdet_logabsdet", lambda a: np.linalg.slogdet(a)[1],
    vjps=(lambda ct, out, a: NP.slogdet.vjps[0]((None, ct), None, a),))
_SIGN = O.Op("linalg_slogdet_sign", _SIGN_P, "LinalgSlogdetBackward0", result="same")
_LOGABSDET = O.Op("linalg_slogdet_logabsdet", _LOGABSDET_P, "LinalgSlogdetBackward0",
                  result="real")


def _square(name: str, A: Tensor) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} "
                           f"by {n} matrices")


@contextlib.contextmanager
def _failure(numpy_says: str, torch_says):
    """NumPy's LinAlgError saying `numpy_says` (it reaches here as the RuntimeError the op
    machinery makes of a NumPy error) raised again as torch's LinAlgError, its message
    built by `torch_says()` only then."""
    try:
        yield
    except RuntimeError as e:
        if numpy_says not in str(e):
            raise
        raise LinAlgError(torch_says()) from None


def _matrices(A: Tensor) -> np.ndarray:
    return A._data.reshape((-1,) + A._data.shape[-2:])


def _first_singular(A: Tensor) -> np.ndarray:
    flat = _matrices(A)
    return next((m for m in flat if np.linalg.matrix_rank(m) < m.shape[-1]), flat[0])


def _first_bad_minor(A: Tensor) -> int:
    """The order of the first leading minor that is not positive (of the first matrix with
    one), as PyTorch's Cholesky message names it."""
    return next((k for m in _matrices(A) for k in range(1, m.shape[-1] + 1)
                 if not np.linalg.det(m[:k, :k]).real > 0), 1)


def _first_zero_pivot(a: np.ndarray) -> int:
    """The (1-based) position of the first zero pivot of LU with partial pivoting, as
    PyTorch's message names it (run only once inversion has failed)."""
    a = np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64)
    n = a.shape[-1]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:] -= np.outer(a[k + 1:, k] / a[k, k], a[k])
    return n


def det(A: Tensor) -> Tensor:
    """``torch.linalg.det`` (``LinalgDetBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.det(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(6.)
    """
    _square("linalg.det", A)
    return apply(_DET, (A,), {})


def inv(A: Tensor) -> Tensor:
    """``torch.linalg.inv`` (``LinalgInvExBackward0``); a singular matrix raises torch's
    LinAlgError naming its first zero pivot.

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.inv(torch.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    _square("linalg.inv", A)
    with _failure("Singular matrix", lambda: (
            f"linalg.inv: The diagonal element {_first_zero_pivot(_first_singular(A))} is "
            "zero, the inversion could not be completed because the input matrix is "
            "singular.")):
        return apply(_INV, (A,), {})


def slogdet(A: Tensor):
    """``torch.linalg.slogdet``: ``(sign, logabsdet)``, both outputs of one
    ``LinalgSlogdetBackward0`` node (the sign has no derivative).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.slogdet(torch.tensor([[-2.0, 0.0], [0.0, 3.0]])).sign
    tensor(-1.)
    """
    _square("linalg.slogdet", A)
    sign = apply(_SIGN, (A,), {})
    logabsdet = apply(_LOGABSDET, (A,), {})
    return return_types.linalg_slogdet(*_one_node("LinalgSlogdetBackward0", sign, logabsdet))


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``torch.linalg.solve``: X with AX = B (``LinalgSolveExBackward0``); B a vector or a
    batch of matrices.

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.solve(torch.tensor([[2.0, 0.0], [0.0, 4.0]]), torch.tensor([2.0, 2.0]))
    tensor([1.0000, 0.5000])
    """
    if not left:
        raise NotImplementedError("linalg.solve(left=False) is not supported by "
                                  "funcgrad.mutable: solve the transposed system instead")
    _square("linalg.solve", A)
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    with _failure("Singular matrix", lambda: "torch.linalg.solve: The solver failed because "
                  "the input matrix is singular."):
        if vector:
            return apply(_SOLVE_VEC, (A, B), {})
        return apply(_SOLVE, (A, B), {})


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """``torch.linalg.cholesky``: lower-triangular L with A = L L^H
    (``LinalgCholeskyExBackward0``); ``upper=True`` gives L^H.

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.cholesky(torch.tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    _square("linalg.cholesky", A)
    with _failure("positive definite", lambda: (
            "linalg.cholesky: The factorization could not be completed because the input is "
            f"not positive-definite (the leading minor of order {_first_bad_minor(A)} is not "
            "positive-definite).")):
        return apply(_CHOLESKY_U if upper else _CHOLESKY, (A,), {})


# --- triangular solves ------------------------------------------------------------------------
def _substitute(m: np.ndarray, b: np.ndarray, lower: bool) -> np.ndarray:
    """X with M X = B for triangular M, row by row (forward or back substitution), batched.
    A zero on the diagonal gives inf/nan, not an error, as torch's (BLAS trsm) solve."""
    n = m.shape[-1]
    out = np.zeros(np.broadcast_shapes(m.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                   np.result_type(m, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in (range(n) if lower else range(n - 1, -1, -1)):
            done = slice(0, i) if lower else slice(i + 1, n)
            rest = b[..., i, :] - (m[..., i:i + 1, done] @ out[..., done, :])[..., 0, :]
            out[..., i, :] = rest / m[..., i, i][..., None]
    return out


def _tri_matrix(a, upper: bool, unitriangular: bool):
    """The triangle of `a` a triangular solve reads, with ones on the diagonal if
    `unitriangular` (the diagonal of `a` is then not read)."""
    if unitriangular:
        n = a.shape[-1]
        return (np.triu(a, 1) if upper else np.tril(a, -1)) + np.eye(n, dtype=a.dtype)
    return np.triu(a) if upper else np.tril(a)


def _tri_solve_impl(b, a, upper, transpose, unitriangular, left):
    """X with op(T) X = B (`left`) or X op(T) = B, T the triangle of `a`, op(T) = T^T if
    `transpose`."""
    m = _tri_matrix(a, upper, unitriangular)
    lower = upper == transpose  # op(T)'s triangle
    if transpose:
        m = np.swapaxes(m, -1, -2)
    if left:
        return _substitute(m, b, lower)
    # X M = B is M^T X^T = B^T
    return np.swapaxes(_substitute(np.swapaxes(m, -1, -2), np.swapaxes(b, -1, -2), not lower),
                       -1, -2)


def _tri_vjp_b(ct, out, b, a, upper, transpose, unitriangular, left):
    # B's gradient solves the transposed system: op(T)^T G = ct (or G op(T)^T = ct)
    g = _TRI_SOLVE_P(ct, a, upper=upper, transpose=not transpose,
                     unitriangular=unitriangular, left=left)
    return NP.sum_to_shape(g, tuple(H.shape(b)))


def _tri_vjp_a(ct, out, b, a, upper, transpose, unitriangular, left):
    g_b = _TRI_SOLVE_P(ct, a, upper=upper, transpose=not transpose,
                       unitriangular=unitriangular, left=left)
    x_t = NP.swapaxes(out, -1, -2)
    g_m = -(NP.matmul(g_b, x_t) if left else NP.matmul(x_t, g_b))  # op(T)'s gradient
    if transpose:
        g_m = NP.swapaxes(g_m, -1, -2)
    # only the triangle read has a gradient (not the diagonal, if taken as ones)
    ones = np.ones(H.shape(a)[-2:], bool)
    mask = np.triu(ones, int(unitriangular)) if upper else np.tril(ones, -int(unitriangular))
    return NP.sum_to_shape(NP.where(mask, g_m, NP.zeros_like(g_m)), tuple(H.shape(a)))


_TRI_SOLVE_P = primitive("triangular_solve", _tri_solve_impl, nargs=2,
                         params=("upper", "transpose", "unitriangular", "left"),
                         vjps=(_tri_vjp_b, _tri_vjp_a))
_TRI_SOLVE = O.Op("triangular_solve", _TRI_SOLVE_P, "TriangularSolveBackward0")
_SOLVE_TRIANGULAR = O.Op("linalg_solve_triangular", _TRI_SOLVE_P,
                         "LinalgSolveTriangularBackward0")
# triangular_solve's second result, a copy of A on the same node (B gets nothing from it)
# (broadcast to the common batch shape, as torch returns it)
_COEF_P = primitive(
    "triangular_solve_coefficient",
    lambda b, a: np.broadcast_to(a, np.broadcast_shapes(b.shape[:-2], a.shape[:-2])
                                 + a.shape[-2:]).copy(), nargs=2,
    vjps=(lambda ct, out, b, a: NP.zeros_like(b),
          lambda ct, out, b, a: NP.sum_to_shape(ct, tuple(H.shape(a)))))
_COEF = O.Op("triangular_solve_coefficient", _COEF_P, "TriangularSolveBackward0",
             result="same")
_TRI_WARNED: list = []  # torch warns once per process
_TRI_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
    "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")


class _TwoInputPair(_PairBackward):
    """One node for two results of an op of two inputs (triangular_solve's solution and
    copy of A): each result's gradient runs through its own recorded node, per input sums."""

    __slots__ = ()

    def _apply(self, cts, graph):
        totals: list = [None] * len(self._next)
        for part, ct in zip(self._parts, cts):
            if ct is None:
                continue
            for k, g in enumerate(part._apply([ct], graph)):
                if g is not None:
                    totals[k] = g if totals[k] is None else totals[k] + g
        return totals


def _batch_shape(first: Tensor, second: Tensor) -> tuple:
    """The broadcast of two operands' batch dims (torch's message if they do not broadcast)."""
    return O.broadcast_shape(tuple(first.shape[:-2]), tuple(second.shape[:-2]))


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False):
    """``torch.triangular_solve`` (deprecated in torch, as here): ``(solution,
    cloned_coefficient)`` with op(A) X = b, A read as upper (or lower) triangular, op(A) = A^T
    if `transpose`, the diagonal taken as ones if `unitriangular`; both results on one
    ``TriangularSolveBackward0`` node.

    >>> import funcgrad.mutable as torch
    >>> torch.triangular_solve(torch.tensor([[2.0], [4.0]]), torch.tensor([[2.0, 0.0], [1.0, 4.0]]),
    ...                        upper=False).solution
    tensor([[1.0000],
            [0.7500]])
    """
    if not _TRI_WARNED:
        _TRI_WARNED.append(True)
        warnings.warn(_TRI_DEPRECATED, UserWarning, stacklevel=2)
    for name, t in (("b", b), ("A", A)):
        if t.dim() < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {t.dim()} dimensions instead")
    if b._dtype is not A._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{b._dtype.tensor_type[:-6]} and A of type "
                           f"{A._dtype.tensor_type[:-6]} instead.")
    if not (A._dtype.is_floating_point or A._dtype.is_complex):
        raise NotImplementedError(f'"triangular_solve_cpu" not implemented for '
                                  f"'{A._dtype.tensor_type[:-6]}'")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if b.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    _batch_shape(b, A)
    params = {"upper": bool(upper), "transpose": bool(transpose),
              "unitriangular": bool(unitriangular), "left": True}
    x = apply(_TRI_SOLVE, (b, A), params)
    coef = apply(_COEF, (b, A), {})
    return return_types.triangular_solve(*_one_node("TriangularSolveBackward0", x, coef, _TwoInputPair))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out=None) -> Tensor:
    """``torch.linalg.solve_triangular``: X with AX = B (or XA = B if not `left`), A read as
    upper (or lower) triangular, its diagonal taken as ones if `unitriangular`
    (``LinalgSolveTriangularBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.solve_triangular(torch.tensor([[2.0, 1.0], [0.0, 4.0]]),
    ...                               torch.tensor([[4.0], [4.0]]), upper=True)
    tensor([[1.5000],
            [1.0000]])
    """
    if out is not None:
        raise NotImplementedError("linalg.solve_triangular(out=...) is not supported by "
                                  "funcgrad.mutable")
    for name, t in (("A", A), ("B", B)):
        if t.dim() < 2:
            raise RuntimeError(f"linalg.solve_triangular: The input tensor {name} must have "
                               f"at least 2 dimensions.")
    _square("linalg.solve_triangular", A)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    _batch_shape(B, A)  # (torch names B "tensor a")
    if A._dtype is not B._dtype:  # torch 2.13 computes in A's dtype (float32 A, float64 B: float32)
        B = B.to(A._dtype)
    return apply(_SOLVE_TRIANGULAR, (B, A), {"upper": bool(upper), "transpose": False,
                                             "unitriangular": bool(unitriangular),
                                             "left": bool(left)})


# --- svd: three one-result primitives on the table's rule, one LinalgSvdBackward0 node --------
def _svd_factors(a, full_matrices: bool):
    """U, S, Vh through the one-result primitives (so create_graph records them)."""
    return tuple(_SVD_PRIMS[k](a, full_matrices=full_matrices) for k in range(3))


def _concrete(x) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _svd_part(k: int):
    def vjp(ct, out, a, full_matrices):
        u, s, vh = _svd_factors(a, full_matrices)
        m, n = H.shape(a)[-2:]
        r = min(m, n)
        if full_matrices and k != 1 and (m if k == 0 else n) > r:
            # the singular vectors past the r-th complete an orthonormal basis any way LAPACK
            # likes: nothing depends on them smoothly, so their cotangent must be zero (torch
            # drops it silently; a loss that reads them has no derivative)
            rest = _concrete(ct)[..., :, r:] if k == 0 else _concrete(ct)[..., r:, :]
            if np.any(rest != 0):
                raise RuntimeError(
                    f"linalg.svd: with full_matrices=True the last {(m if k == 0 else n) - r} "
                    f"{'columns of U' if k == 0 else 'rows of Vh'} are not unique, so they have "
                    f"no derivative, yet the loss depends on them (torch 2.13 silently ignores "
                    f"that part). Use full_matrices=False, or only the first {r} "
                    f"{'columns' if k == 0 else 'rows'}.")
        if full_matrices and m != n:
            u = NP.getitem(u, template=(Ellipsis, slice(None), slice(0, r)))
            vh = NP.getitem(vh, template=(Ellipsis, slice(0, r), slice(None)))
            if k == 0:
                ct = NP.getitem(ct, template=(Ellipsis, slice(None), slice(0, r)))
            elif k == 2:
                ct = NP.getitem(ct, template=(Ellipsis, slice(0, r), slice(None)))
        cts = [NP.zeros_like(u), NP.zeros_like(s), NP.zeros_like(vh)]
        cts[k] = ct
        return NP.svd.vjps[0](tuple(cts), (u, s, vh), a, full_matrices=False)
    return vjp


_SVD_PRIMS = tuple(primitive(f"linalg_svd_{'usv'[k]}",
                             lambda a, full_matrices, k=k: np.linalg.svd(
                                 a, full_matrices=full_matrices)[k],
                             params=("full_matrices",), vjps=(_svd_part(k),)) for k in range(3))
_SVD = tuple(O.Op(f"linalg_svd_{'usv'[k]}", _SVD_PRIMS[k], "LinalgSvdBackward0",
                  result="real" if k == 1 else "same") for k in range(3))


class _TripleBackward(_PairBackward):
    """One node for three results of an op of one input (svd's U, S, Vh)."""

    __slots__ = ()
    _nout = 3


def svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """``torch.linalg.svd``: ``(U, S, Vh)`` with A = U diag(S) Vh, S descending; all three on
    one ``LinalgSvdBackward0`` node. Singular vectors are differentiable where the singular
    values are distinct (their signs are LAPACK's); with ``full_matrices=True`` the extra
    vectors of a non-square A have no derivative (a loss reading them raises).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.svd(torch.tensor([[3.0, 0.0], [0.0, -4.0]])).S
    tensor([4., 3.])
    """
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    params = {"full_matrices": bool(full_matrices)}
    outs = [apply(_SVD[k], (A,), params) for k in range(3)]
    parts = tuple(t._grad_fn for t in outs)
    if all(p is not None for p in parts):
        cls = node_class("LinalgSvdBackward0", _TripleBackward)
        node = cls.__new__(cls)
        node._init(parts[0]._next)
        node._parts = parts
        for k, t in enumerate(outs):
            t._grad_fn, t._nr = node, k
    return return_types.linalg_svd(*outs)


def _svd_top(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd`` / ``Tensor.svd``: ``(U, S, V)`` (V, not V^H: a conjugate-transposed view
    of linalg.svd's Vh), reduced unless ``some=False``; ``compute_uv=False`` gives zero
    U and V, as torch."""
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        dt = input._data.dtype
        return return_types.svd(Tensor._wrap(np.zeros(batch + (m, m), dt)), svdvals(input),
                                Tensor._wrap(np.zeros(batch + (n, n), dt)))
    U, S, Vh = svd(input, full_matrices=not some)
    return return_types.svd(U, S, Vh.mH)


# --- eigh, svdvals, pinv, matrix_power ------------------------------------------------------
def _eigh_part(k: int):
    def vjp(ct, out, a, UPLO):
        w, v = _EIGH_PRIMS[0](a, UPLO=UPLO), _EIGH_PRIMS[1](a, UPLO=UPLO)
        cts = (ct, NP.zeros_like(v)) if k == 0 else (NP.zeros_like(w), ct)
        return NP.eigh.vjps[0](cts, (w, v), a, UPLO=UPLO)
    return vjp


# eigh's two results as two one-result primitives on the table's eigh rule (one node, as
# torch records them), as qr above
_EIGH_PRIMS = tuple(primitive(f"linalg_eigh_{'wv'[k]}",
                              lambda a, UPLO, k=k: np.linalg.eigh(a, UPLO=UPLO)[k],
                              params=("UPLO",), vjps=(_eigh_part(k),)) for k in (0, 1))
_EIGH = (O.Op("linalg_eigh_w", _EIGH_PRIMS[0], "LinalgEighBackward0", result="real"),
         O.Op("linalg_eigh_v", _EIGH_PRIMS[1], "LinalgEighBackward0", result="same"))
_SVDVALS = O.Op("linalg_svdvals", NP.svdvals, "LinalgSvdBackward0", result="real")
_PINV = O.Op("linalg_pinv", NP.pinv, "LinalgPinvBackward0", result="same")


def eigh(A: Tensor, UPLO: str = "L"):
    """``torch.linalg.eigh``: eigenvalues (ascending) and eigenvectors of a symmetric
    (Hermitian) matrix, read from its `UPLO` triangle; one ``LinalgEighBackward0`` node.
    Eigenvectors are differentiable where the eigenvalues are distinct.

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.eigh(torch.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([1., 2.])
    """
    _square("linalg.eigh", A)
    w = apply(_EIGH[0], (A,), {"UPLO": UPLO})
    v = apply(_EIGH[1], (A,), {"UPLO": UPLO})
    return return_types.linalg_eigh(*_one_node("LinalgEighBackward0", w, v))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """``torch.linalg.eigvalsh``: the eigenvalues of a symmetric matrix, ascending
    (``LinalgEighBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.eigvalsh(torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([1., 2.])
    """
    _square("linalg.eigvalsh", A)
    return apply(_EIGH[0], (A,), {"UPLO": UPLO})


def svdvals(A: Tensor) -> Tensor:
    """``torch.linalg.svdvals``: singular values, descending (``LinalgSvdBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.svdvals(torch.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor([4., 3.])
    """
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    return apply(_SVDVALS, (A,), {})


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """``torch.linalg.pinv``: the pseudo-inverse (``LinalgPinvBackward0``); singular values
    below ``rtol`` times the largest are dropped (default: the larger side times the
    dtype's epsilon, torch's); differentiable where the rank is constant.

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.pinv(torch.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    if atol is not None:
        raise NotImplementedError("linalg.pinv(atol=...) is not supported by funcgrad.mutable; "
                                  "use rtol")
    if rtol is None:
        rtol = max(A.shape[-2:]) * float(np.finfo(A._data.dtype).eps)
    return apply(_PINV, (A,), {"rcond": float(rtol), "hermitian": bool(hermitian)})


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``torch.linalg.matrix_power``: A to the integer power `n` by repeated squaring
    (negative `n`: of the inverse), recorded as matrix products.

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.matrix_power(torch.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    _square("linalg.matrix_power", A)
    if n == 0:
        eye = Tensor._wrap(np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype),
                                           A._data.shape).copy())
        return eye
    if n < 0:
        A, n = inv(A), -n
    result = None
    power = A
    while n:
        if n & 1:
            result = power if result is None else result @ power
        n >>= 1
        if n:
            power = power @ power
    return result


_QR_WARNED: list = []
_QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
    "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string parameter "
    "'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, "
    "'reduced' if some else 'complete')")


def _qr_top(input: Tensor, some: bool = True):
    """``torch.qr`` / ``Tensor.qr`` (deprecated in torch, with its once-per-process warning):
    linalg.qr in mode 'reduced' (or 'complete' if not `some`) as ``torch.return_types.qr``."""
    if not _QR_WARNED:
        _QR_WARNED.append(True)
        warnings.warn(_QR_DEPRECATED, UserWarning, stacklevel=2)
    return return_types.qr(*qr(input, "reduced" if some else "complete"))


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: linalg.pinv with `rcond` as its relative tolerance.

    >>> import funcgrad.mutable as torch
    >>> torch.pinverse(torch.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    return pinv(input, rtol=rcond)


def _cholesky_inverse_impl(a, upper):
    t = np.triu(a) if upper else np.tril(a)
    t_h = np.conj(np.swapaxes(t, -1, -2))
    return np.linalg.inv(t_h @ t if upper else t @ t_h)


def _cholesky_inverse_vjp(ct, out, a, upper):
    # out = (T T^T)^-1 (lower; T^T T if upper): d out = -out dM out with dM = dT T^T + T dT^T,
    # so T's gradient is -(G + G^T) T (lower) or -T (G + G^T) (upper), G = out^T ct out^T;
    # only the triangle read gets it
    out_t = NP.swapaxes(out, -1, -2)
    g = NP.matmul(NP.matmul(out_t, ct), out_t)
    g = g + NP.swapaxes(g, -1, -2)
    t = _TRIANGLE_P[upper](a)
    return -_TRIANGLE_P[upper](NP.matmul(t, g) if upper else NP.matmul(g, t))


_TRIANGLE_P = {
    True: primitive("cholesky_inverse_triu", np.triu,
                    vjps=(lambda ct, out, a: _TRIANGLE_P[True](ct),), linear=True),
    False: primitive("cholesky_inverse_tril", np.tril,
                     vjps=(lambda ct, out, a: _TRIANGLE_P[False](ct),), linear=True)}
_CHOLESKY_INVERSE_P = primitive("cholesky_inverse", _cholesky_inverse_impl, params=("upper",),
                                vjps=(_cholesky_inverse_vjp,))
_CHOLESKY_INVERSE = O.Op("cholesky_inverse", _CHOLESKY_INVERSE_P, "CholeskyInverseBackward0",
                         result="same")


def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """``torch.cholesky_inverse``: the inverse of L L^T from its Cholesky factor L (read from
    the lower triangle; from the upper one, U^T U, if `upper`). Real dtypes; only the
    triangle read gets a gradient.

    >>> import funcgrad.mutable as torch
    >>> torch.cholesky_inverse(torch.tensor([[2.0, 0.0], [1.0, 1.0]]))
    tensor([[ 0.5000, -0.5000],
            [-0.5000,  1.0000]])
    """
    if out is not None:
        raise NotImplementedError("cholesky_inverse(out=...) is not supported by "
                                  "funcgrad.mutable")
    if input.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    _square("cholesky_inverse", input)
    if input._dtype.is_complex:
        raise NotImplementedError("cholesky_inverse of complex tensors is not supported by "
                                  "funcgrad.mutable")
    diag = np.diagonal(_matrices(input), axis1=-2, axis2=-1)
    zero = diag == 0
    if zero.any():  # a zero on the factor's diagonal: L L^T is singular (torch checks this)
        first = 1 + int(np.argmax(zero[np.argmax(zero.any(axis=-1))]))
        raise LinAlgError(f"cholesky_inverse: The diagonal element {first} is zero, the "
                          f"inversion could not be completed because the input matrix is "
                          f"singular.")
    return apply(_CHOLESKY_INVERSE, (input,), {"upper": bool(upper)})


def _slogdet_top(A: Tensor):
    """``torch.slogdet`` / ``Tensor.slogdet``: linalg.slogdet as ``torch.return_types.slogdet``."""
    return return_types.slogdet(*slogdet(A))


def logdet(A: Tensor) -> Tensor:
    """``torch.logdet``: log of the determinant (nan where it is negative).

    >>> import funcgrad.mutable as torch
    >>> torch.logdet(torch.tensor([[2.0, 0.0], [0.0, 0.5]]))
    tensor(0.)
    """
    sign, logabsdet = slogdet(A)
    return where(sign >= 0, logabsdet, logabsdet.new_full((), float("nan")))


#: torch's top-level names for these (torch.det, torch.inverse...), also Tensor methods
TOP_LEVEL = {"det": det, "inverse": inv, "slogdet": _slogdet_top, "logdet": logdet,
             "triangular_solve": triangular_solve, "qr": _qr_top, "pinverse": pinverse,
             "cholesky_inverse": cholesky_inverse, "svd": _svd_top}
for _name, _fn in TOP_LEVEL.items():
    setattr(Tensor, _name, _fn)
