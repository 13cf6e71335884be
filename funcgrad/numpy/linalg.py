"""funcgrad.numpy.linalg: differentiable ``numpy.linalg``, each public function declared
once here over the primitives of `_primitives` (``P.inv``, ``P.svd``...), where the rules live.

Functions act on stacks of matrices (leading axes broadcast, as in NumPy). A VJP is the plain
transpose of the JVP, with no complex conjugation (JAX's convention, docs/complex.md).
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

from .._src.core import Array, FuncgradError, wrap
from .._src.declare import Namespace
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
# --- inverse, solve, determinants ----------------------------------------------------------
inv = public(P.inv, numpy=np.linalg.inv,
             doc="Differentiable ``numpy.linalg.inv``: d(A^-1) = -A^-1 dA A^-1.")


@export(numpy=np.linalg.solve)
def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.solve`` (a 1-d `b` is one right-hand side).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.solve(fnp.array([[2.0, 0.0], [0.0, 4.0]]), fnp.array([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    if H.ndim(b) == 1:
        return P.subscript(P.solve(a, P.expand_axis(b, -1)), (Ellipsis, 0))
    return P.solve(a, b)
det = public(P.det, numpy=np.linalg.det,
             doc="Differentiable ``numpy.linalg.det`` (needs an invertible matrix for its gradient).")


@export(numpy=np.linalg.slogdet)
def slogdet(a: ArrayLike) -> tuple[Array, Array]:
    """Differentiable ``numpy.linalg.slogdet``: ``(sign, logabsdet)``; the sign carries no
    derivative (for complex input its phase is held constant).

    >>> import funcgrad.numpy as fnp
    >>> sign, logdet = fnp.linalg.slogdet(fnp.array([[-2.0, 0.0], [0.0, 3.0]]))
    >>> sign.item(), round(logdet.item(), 6)
    (-1.0, 1.791759)
    """
    return P.slogdet(a)
# --- Cholesky, eigen and singular value decompositions --------------------------------------
cholesky = public(P.cholesky, numpy=np.linalg.cholesky,
                  doc="Differentiable ``numpy.linalg.cholesky``; its gradient is that of the "
                      "symmetric (Hermitian) input, and is returned symmetric.")


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
    full = P.where(keep, a, 0) + P.where(strict.T, P.conj_if_complex(P.swapaxes(a, -1, -2)), 0)
    return P.eigh(full, UPLO=UPLO)


@export(numpy=np.linalg.eigvalsh)
def eigvalsh(a: ArrayLike, UPLO: str = "L") -> Array:
    """Differentiable ``numpy.linalg.eigvalsh``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.eigvalsh(fnp.array([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    return eigh(a, UPLO)[0]


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
    return P.eig(a)


@export(numpy=np.linalg.eigvals)
def eigvals(a: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.eigvals`` (complex).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.eigvals(fnp.array([[0.0, -1.0], [1.0, 0.0]])).tolist()
    [1j, -1j]
    """
    return eig(a)[0]


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
        return P.svdvals(a)
    return P.svd(a, full_matrices=full_matrices)


@export(numpy=np.linalg.svdvals)
def svdvals(x: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.svdvals``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.svdvals(fnp.array([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    return P.svdvals(x)


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
        return P.qr(a, mode="reduced")[1]
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    m, n = H.shape(a)[-2:]
    if mode == "complete" and m > n:
        raise FuncgradError("qr(mode='complete') of a tall matrix: the extra columns of Q "
                            "are not unique, so they have no derivative. Use mode='reduced'")
    return P.qr(a, mode=mode)
# --- pseudo-inverse and least squares ------------------------------------------------------


@export(numpy=np.linalg.pinv)
def pinv(a: ArrayLike, rcond: float | None = None, hermitian: bool = False) -> Array:
    """Differentiable ``numpy.linalg.pinv``; the gradient holds where the rank is constant.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.pinv(fnp.array([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    return P.pinv(a, rcond=rcond, hermitian=hermitian)


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
    x = P.matmul(P.pinv(a, rcond=rcond), b)
    rank = P.matrix_rank(a, rtol=rcond)
    if m > n and np.all(np.asarray(H.bottom(rank)) == n):
        r = P.matmul(a, x) - b
        residuals = P.sum(P.real(r * P.conj_if_complex(r)), axis=0)
        residuals = P.reshape(residuals, (1,)) if H.ndim(b) == 1 else residuals
    else:
        residuals = np.zeros((0,), dtype=np.real(np.zeros((), H.dtype(a))).dtype)
    return x, residuals, rank, P.svdvals(a)
# --- norms -----------------------------------------------------------------------------------


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
    return P.vector_norm(x, p=p, axis=axis, keepdims=keepdims)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = (a % H.ndim(x) for a in axes)
    if ord in (None, "fro"):
        return P.vector_norm(x, p=2.0, axis=(row, col), keepdims=keepdims)
    moved = P.moveaxis(x, (row, col), (-2, -1))
    if ord in ("nuc", 2, -2):
        s = P.svdvals(moved)
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
            return P.vector_norm(x, p=2.0, axis=None, keepdims=keepdims)
        axis = (0, 1) if H.ndim(x) == 2 else 0 if H.ndim(x) == 1 else None
        if axis is None:
            raise ValueError("Improper number of dimensions to norm")
    if isinstance(axis, tuple) and len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError("Improper number of dimensions to norm")
        axis = axis[0]
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order {ord!r} for vectors")
    return _vector_norm(x, ord, axis, keepdims)


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
            return P.reshape(out, H.keepdims_shape(shape, axis)) if keepdims else out
    return _vector_norm(x, ord, axis, keepdims)


@export(numpy=np.linalg.matrix_norm)
def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: float | str = "fro") -> Array:
    """Differentiable ``numpy.linalg.matrix_norm`` over the last two axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matrix_norm(fnp.array([[3.0, 0.0], [0.0, 4.0]]), ord="nuc").item()
    7.0
    """
    return _matrix_norm(asarray(x), ord, (-2, -1), keepdims)


@export(numpy=np.linalg.cond)
def cond(x: ArrayLike, p: float | str | None = None) -> Array:
    """Differentiable ``numpy.linalg.cond``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.cond(fnp.array([[2.0, 0.0], [0.0, 0.5]])).item()
    4.0
    """
    if p in (None, 2, -2):
        s = P.svdvals(x)
        hi, lo = P.max(s, axis=-1), P.min(s, axis=-1)
        return lo / hi if p == -2 else hi / lo
    return norm(x, p, axis=(-2, -1)) * norm(P.inv(x), p, axis=(-2, -1))


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
        return np.broadcast_to(np.eye(H.shape(a)[-1], dtype=H.dtype(a)), H.shape(a)).copy()
    if n < 0:
        a, n = P.inv(a), -n
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else P.matmul(result, power)
        n >>= 1
        if n:
            power = P.matmul(power, power)
    return result


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
    return result


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
    x = P.solve(P.reshape(a, (-1, n)), P.reshape(b, (-1, 1)))
    return P.reshape(x, out_shape)


@export(numpy=np.linalg.tensorinv)
def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """Differentiable ``numpy.linalg.tensorinv``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.tensorinv(2.0 * fnp.eye(2), ind=1).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    """
    shape = H.shape(a)
    rows = int(np.prod(shape[:ind]))
    return P.reshape(P.inv(P.reshape(a, (rows, -1))), shape[ind:] + shape[:ind])


@export(numpy=np.linalg.matrix_transpose)
def matrix_transpose(x: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.matrix_transpose``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matrix_transpose(fnp.ones((2, 3))).shape
    (3, 2)
    """
    return P.swapaxes(x, -1, -2)


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
def matmul(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Differentiable ``numpy.linalg.matmul``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matmul(fnp.eye(2), fnp.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    return P.matmul(x1, x2)


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


public(P.matrix_rank, numpy=np.linalg.matrix_rank)

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
            "differentiable yet. Declare it in funcgrad/numpy/linalg.py (a primitive with its "
            "rules goes in funcgrad/numpy/_primitives.py)")
    raise AttributeError(f"module 'funcgrad.numpy.linalg' has no attribute {name!r}")
