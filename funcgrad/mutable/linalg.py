"""``torch.linalg``: vector norms (the part of it the tensor ops build on) and qr."""
from __future__ import annotations

import numpy as np

from .._src.declare import primitive
from ..numpy import _helpers as H
from ..numpy import _primitives as NP
from . import _ops as O
from . import return_types
from ._ops import apply
from ._tensor import Tensor
from ._tensor_ops import _one_node, vector_norm

__all__ = ["vector_norm", "norm", "qr"]


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
