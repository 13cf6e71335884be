"""funcgrad.numpy's polynomials (coefficients highest power first, as NumPy's `poly1d`
functions): arithmetic, calculus, fitting and roots, differentiable in the coefficients."""
from __future__ import annotations

import builtins

import numpy as np

from .._src.core import Array, Tracer
from . import _helpers as H
from . import _primitives as P
from . import linalg
from ._namespace import ns
from ._creation import asarray, astype
from ._products import convolve
from ._shapes import concatenate, stack
from ._typing import ArrayLike, DTypeLike

export = ns.export


def _coefficients(p: ArrayLike, name: str) -> Array:
    p = asarray(p)
    if H.ndim(p) != 1:
        raise ValueError(f"{name}: coefficients must be a 1-d array, got shape {H.shape(p)}")
    return p


def _pad_front(p, n):
    extra = n - H.shape(p)[0]
    return p if extra <= 0 else P.concatenate(np.zeros(extra, dtype=H.dtype(p)), p, axis=0)


@export(numpy=np.polyadd)
def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Differentiable ``numpy.polyadd``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polyadd(fnp.array([1.0, 2.0]), fnp.array([1.0, 0.0, 1.0])).tolist()
    [1.0, 1.0, 3.0]
    """
    a1, a2 = asarray(a1), asarray(a2)
    n = builtins.max(H.shape(P.flatten(a1))[0], H.shape(P.flatten(a2))[0])
    return P.add(_pad_front(P.flatten(a1), n), _pad_front(P.flatten(a2), n))


@export(numpy=np.polysub)
def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Differentiable ``numpy.polysub``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polysub(fnp.array([1.0, 2.0]), fnp.array([1.0, 0.0, 1.0])).tolist()
    [-1.0, 1.0, 1.0]
    """
    return polyadd(a1, P.negative(asarray(a2)))


@export(numpy=np.polymul)
def polymul(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Differentiable ``numpy.polymul`` (the convolution of the coefficients).

    >>> import funcgrad.numpy as fnp
    >>> fnp.polymul(fnp.array([1.0, 1.0]), fnp.array([1.0, -1.0])).tolist()
    [1.0, 0.0, -1.0]
    """
    return convolve(P.flatten(asarray(a1)), P.flatten(asarray(a2)))


@export(numpy=np.polyder)
def polyder(p: ArrayLike, m: int = 1) -> Array:
    """Differentiable ``numpy.polyder``: the coefficients of the `m`-th derivative.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polyder(fnp.array([1.0, 1.0, 1.0])).tolist()
    [2.0, 1.0]
    """
    if m < 0:
        raise ValueError("polyder: the order of derivative m must be non-negative")
    p = _coefficients(p, "polyder")
    if H.dtype(p).kind not in "fc":
        p = astype(p, np.float64)
    for _ in range(m):
        n = H.shape(p)[0] - 1
        if n <= 0:
            return P.astype(np.zeros(1), H.dtype(p))
        p = P.multiply(P.getitem(p, template=(slice(0, n),)),
                       np.arange(n, 0, -1).astype(H.dtype(p)))
    return p


@export(numpy=np.polyint)
def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.polyint``: the `m`-th antiderivative, with integration
    constants `k` (differentiable too; zeros by default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.polyint(fnp.array([3.0, 2.0])).tolist()
    [1.5, 2.0, 0.0]
    """
    if m < 0:
        raise ValueError("polyint: the order of integral m must be non-negative")
    p = _coefficients(p, "polyint")
    dtype = np.result_type(H.dtype(p), np.float64 if H.dtype(p).kind not in "fc" else H.dtype(p))
    p = astype(p, dtype)
    constants = P.astype(np.zeros(m), dtype) if k is None else asarray(k)
    if H.ndim(constants) == 0:
        constants = P.broadcast_to(P.reshape(constants, (1,)), (m,))
    if m and H.shape(constants)[0] != m:
        raise ValueError("polyint: k must be a scalar or hold m constants")
    for i in range(m):
        n = H.shape(p)[0]
        scaled = P.divide(p, np.arange(n, 0, -1).astype(dtype))
        constant = P.astype(P.getitem(constants, template=(slice(i, i + 1),)), dtype)
        p = P.concatenate(scaled, constant, axis=0)
    return p


@export(numpy=np.polydiv)
def polydiv(u: ArrayLike, v: ArrayLike) -> tuple[Array, Array]:
    """Differentiable ``numpy.polydiv``: ``(quotient, remainder)`` by long division (leading
    remainder coefficients that vanish are dropped, as NumPy does, read off the values).

    >>> import funcgrad.numpy as fnp
    >>> [c.tolist() for c in fnp.polydiv(fnp.array([1.0, 0.0, -1.0]), fnp.array([1.0, 1.0]))]
    [[1.0, -1.0], [0.0]]
    """
    u, v = P.flatten(asarray(u)), P.flatten(asarray(v))
    dtype = np.result_type(H.dtype(u), H.dtype(v), np.float64 if H.dtype(u).kind not in "fc"
                           else H.dtype(u))
    u, v = astype(u, dtype), astype(v, dtype)
    m, n = H.shape(u)[0] - 1, H.shape(v)[0] - 1
    rem = [P.getitem(u, template=(i,)) for i in range(m + 1)]
    divisor = [P.getitem(v, template=(i,)) for i in range(n + 1)]
    scale = P.divide(1.0, divisor[0])
    quotient = []
    for k in range(builtins.max(m - n + 1, 0)):
        d = P.multiply(scale, rem[k])
        quotient.append(d)
        for i in range(n + 1):
            rem[k + i] = P.subtract(rem[k + i], P.multiply(d, divisor[i]))
    q = stack(quotient) if quotient else P.astype(np.zeros(1), dtype)
    # the first m - n + 1 remainder coefficients are eliminated by construction; NumPy then
    # drops further leading ones that vanish (read off the values, outside vmap)
    eliminated = builtins.min(builtins.max(m - n + 1, 0), m)
    r = stack(rem[eliminated:])
    values = np.asarray(H.bottom(r))
    start = 0
    while values.ndim == 1 and start < values.size - 1 and np.allclose(values[start], 0,
                                                                           rtol=1e-14):
        start += 1
    return q, P.getitem(r, template=(slice(start, None),))


@export(numpy=np.vander)
def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:
    """Differentiable ``numpy.vander``: columns are powers of `x`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.vander(fnp.array([2.0, 3.0]), 3).tolist()
    [[4.0, 2.0, 1.0], [9.0, 3.0, 1.0]]
    """
    x = asarray(x)
    if H.ndim(x) != 1:
        raise ValueError("vander: x must be a one-dimensional array or sequence")
    n = H.shape(x)[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    return P.power(P.expand_axis(x, -1), powers.astype(H.dtype(x)))


@export(numpy=np.polyfit)
def polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None,
            full: bool = False, w: ArrayLike | None = None, cov: bool = False) -> Array:
    """Differentiable ``numpy.polyfit`` (least squares on the Vandermonde matrix with
    NumPy's column scaling), in `x`, `y` and `w`; ``full`` and ``cov`` are not supported.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polyfit(fnp.array([0.0, 1.0, 2.0]), fnp.array([1.0, 3.0, 5.0]), 1).round(6).tolist()
    [2.0, 1.0]
    """
    if full or cov:
        raise NotImplementedError("funcgrad.numpy.polyfit: full=True and cov=True are not "
                                  "supported; call linalg.lstsq on vander(x, deg + 1)")
    x, y = asarray(x), asarray(y)
    if H.dtype(x).kind not in "fc":
        x = astype(x, np.float64)
    y = astype(y, np.result_type(H.dtype(y), H.dtype(x)))
    lhs = vander(x, deg + 1)
    rhs = y
    if w is not None:
        w = asarray(w)
        lhs = P.multiply(lhs, P.expand_axis(w, -1))
        rhs = P.multiply(rhs, w if H.ndim(rhs) == 1 else P.expand_axis(w, -1))
    if rcond is None:
        rcond = H.shape(x)[0] * np.finfo(H.dtype(x)).eps
    scale = P.sqrt(P.sum(P.multiply(lhs, lhs), axis=0))
    c = linalg.lstsq(P.divide(lhs, scale), rhs, rcond)[0]
    return P.divide(c, scale if H.ndim(c) == 1 else P.expand_axis(scale, -1))


@export(numpy=np.roots)
def roots(p: ArrayLike) -> Array:
    """Differentiable ``numpy.roots``: the eigenvalues of the companion matrix (complex, as
    JAX's); leading and trailing zero coefficients are stripped, read off the values.

    >>> import funcgrad.numpy as fnp
    >>> fnp.sort_complex(fnp.roots(fnp.array([1.0, -3.0, 2.0]))).real.tolist()
    [1.0, 2.0]
    """
    p = _coefficients(p, "roots")
    values = np.asarray(H.bottom(p))
    if values.ndim == 1:
        nonzero = np.flatnonzero(values)
        if nonzero.size == 0:
            return P.astype(np.zeros(0), np.result_type(H.dtype(p), np.complex64))
        lead, trail = int(nonzero[0]), values.size - int(nonzero[-1]) - 1
    else:  # under vmap: each example's zeros cannot be stripped separately
        lead, trail = 0, 0
    p = P.getitem(p, template=(slice(lead, H.shape(p)[0] - trail),))
    n = H.shape(p)[0]
    zeros = P.astype(np.zeros(trail), np.result_type(H.dtype(p), np.complex64))
    if n < 2:
        return zeros
    dtype = H.dtype(p) if H.dtype(p).kind in "fc" else np.dtype(np.float64)
    p = astype(p, dtype)
    first_row = P.negative(P.divide(P.getitem(p, template=(slice(1, None),)),
                                    P.getitem(p, template=(0,))))
    below = np.eye(n - 2, n - 1, dtype=dtype)
    companion = P.concatenate(P.expand_axis(first_row, 0), below, axis=0)
    found = linalg.eigvals(companion)
    return concatenate([found, zeros]) if trail else found


@export(numpy=np.poly)
def poly(seq_of_zeros: ArrayLike) -> Array:
    """Differentiable ``numpy.poly``: the coefficients of the monic polynomial with these
    roots (of a square matrix: its eigenvalues); real when the roots pair up as conjugates.

    >>> import funcgrad.numpy as fnp
    >>> fnp.poly(fnp.array([1.0, 2.0])).tolist()
    [1.0, -3.0, 2.0]
    """
    z = asarray(seq_of_zeros)
    if H.ndim(z) == 2 and H.shape(z)[0] == H.shape(z)[1] and H.shape(z)[0] != 0:
        z = linalg.eigvals(z)
    elif H.ndim(z) != 1:
        raise ValueError("poly: input must be 1-d or a non-empty square 2-d array")
    dtype = H.dtype(z) if H.dtype(z).kind in "fc" else np.dtype(np.float64)
    coeffs = P.astype(np.ones(1), dtype)
    for k in range(H.shape(z)[0]):
        root = P.astype(P.getitem(z, template=(slice(k, k + 1),)), dtype)
        coeffs = convolve(coeffs, P.concatenate(P.astype(np.ones(1), dtype),
                                                P.negative(root), axis=0))
    if dtype.kind == "c":
        roots_now = np.asarray(H.bottom(z))
        if roots_now.ndim == 1 and np.array_equal(np.sort_complex(roots_now),
                                                  np.sort_complex(np.conjugate(roots_now))):
            coeffs = P.real(coeffs)
    return coeffs
