"""``torch.linalg``: vector norms (the part of it the tensor ops build on)."""
from __future__ import annotations

from ._tensor_ops import vector_norm

__all__ = ["vector_norm", "norm"]


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):
    """``torch.linalg.norm`` of a vector (or of all elements with ``ord=None``).

    >>> import funcgrad.mutable as torch
    >>> torch.linalg.norm(torch.tensor([3.0, 4.0]))
    tensor(5.)
    """
    if ord is not None and A.dim() > 1 and (dim is None or not isinstance(dim, int)):
        raise NotImplementedError("matrix norms are not supported by funcgrad.mutable")
    return vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)
