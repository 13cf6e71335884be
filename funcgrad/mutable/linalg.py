"""``torch.linalg``: vector norms (the part of it the tensor ops build on), qr, and the
determinant, inverse, solve and Cholesky family on the shared table's rules."""
from __future__ import annotations

import contextlib

import numpy as np

from .._src.declare import primitive
from ..numpy import _helpers as H
from ..numpy import _primitives as NP
from . import _ops as O
from . import return_types
from ._functions import where
from ._ops import apply
from ._tensor import Tensor
from ._tensor_ops import _one_node, vector_norm

__all__ = ["vector_norm", "norm", "qr", "det", "inv", "slogdet", "solve", "cholesky",
           "LinAlgError", "TOP_LEVEL", "eigh", "eigvalsh", "svdvals", "pinv", "matrix_power"]


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
TOP_LEVEL = {"det": det, "inverse": inv, "slogdet": _slogdet_top, "logdet": logdet}
for _name, _fn in TOP_LEVEL.items():
    setattr(Tensor, _name, _fn)
