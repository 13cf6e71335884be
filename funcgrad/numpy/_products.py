"""funcgrad.numpy's products: `dot`, `outer`, `einsum`, `tensordot`, `kron`, `cross`, and
the functions built on them (`convolve`, `polyval`, `interp`...)."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from .._src.core import Array, Tracer, raw
from . import _helpers as H
from . import _primitives as P
from ._namespace import ns
from ._creation import asarray
from ._shapes import flip
from ._typing import ArrayLike, Axis

export = ns.export


ns.public(P.matmul, numpy=np.matmul)


@export(numpy=np.dot)
def dot(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.dot`` for scalars, vectors and matrices (matmul otherwise)."""
    if H.ndim(a) == 0 or H.ndim(b) == 0:
        return P.multiply(a, b)
    if H.ndim(b) > 2:
        return tensordot(a, b, axes=([-1], [-2]))  # NumPy's n-d dot contracts these
    return P.matmul(a, b)


@export(numpy=np.outer)
def outer(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.outer``."""
    return P.multiply(P.reshape(a, (-1, 1)), P.reshape(b, (1, -1)))


@export(numpy=np.vdot)
def vdot(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.vdot`` (real arrays)."""
    return P.sum(P.multiply(P.conj_if_complex(P.reshape(a, (-1,))), P.reshape(b, (-1,))))


@export(numpy=np.inner)
def inner(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.inner`` (1-d and n-d)."""
    if H.ndim(a) == 0 or H.ndim(b) == 0:
        return P.multiply(a, b)
    return P.matmul(a, P.swapaxes(b, -1, -2)) if H.ndim(b) > 1 else P.matmul(a, b)


def _einsum_spec(subscripts, shapes):
    """Explicit subscripts (ellipses spelled out with fresh letters, the output written)."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    ins = ins.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: {len(ins)} operand subscripts for {len(shapes)} operands")
    used = set(subscripts)
    free = [c for c in H.LETTERS if c not in used]
    ell_rank = builtins.max([len(s) - (len(t) - 3) for t, s in zip(ins, shapes) if "..." in t],
                            default=0)
    ell = "".join(free[:ell_rank])
    explicit = []
    for t, s in zip(ins, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - k:])
        if len(t) != len(s):
            raise ValueError(f"einsum: subscripts {t!r} do not match an operand of shape {s}")
        explicit.append(t)
    if out is None:
        letters = "".join(explicit)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return tuple(explicit), out


@export(numpy=np.einsum)
def einsum(*operands: str | ArrayLike | Sequence[Any], optimize: bool | str = False,
           **kwargs: Any) -> Array:
    """Differentiable ``numpy.einsum``: every subscript form (implicit or explicit output,
    ellipses, repeated letters, the interleaved operand/sublist form).

    >>> import funcgrad.numpy as fnp
    >>> fnp.einsum("ij,j->i", fnp.ones((2, 3)), fnp.array([1.0, 2.0, 3.0])).tolist()
    [6.0, 6.0]
    """
    if kwargs:
        raise TypeError(f"funcgrad.numpy.einsum: unsupported arguments {sorted(kwargs)}")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], operands[1:]
    else:
        subscripts, arrays = _sublist_to_subscripts(operands)
    arrays = [asarray(a) for a in arrays]
    spec = _einsum_spec(subscripts, [H.shape(a) for a in arrays])
    return P.einsum(*arrays, spec=spec)


def _sublist_to_subscripts(operands):
    items = list(operands)
    out = items.pop() if len(items) % 2 else None
    letter = lambda i: "..." if i is Ellipsis else H.LETTERS[i]  # noqa: E731
    ins = ["".join(letter(i) for i in sub) for sub in items[1::2]]
    subs = ",".join(ins) + ("" if out is None else "->" + "".join(letter(i) for i in out))
    return subs, items[0::2]


@export(numpy=np.tensordot)
def tensordot(a: ArrayLike, b: ArrayLike,
              axes: int | Sequence[int] | Sequence[Sequence[int]] = 2) -> Array:
    """Differentiable ``numpy.tensordot``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tensordot(fnp.ones((2, 3)), fnp.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    na, nb = H.ndim(a), H.ndim(b)
    if np.ndim(axes) == 0:
        axes = (list(range(na - axes, na)), list(range(axes)))
    ax_a, ax_b = (np.atleast_1d(axes[0]) % builtins.max(na, 1)).tolist(), (np.atleast_1d(axes[1]) % builtins.max(nb, 1)).tolist()
    sa = list(H.LETTERS[:na])
    sb = list(H.LETTERS[na:na + nb])
    for i, j in zip(ax_a, ax_b):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in ax_a] + [c for j, c in enumerate(sb) if j not in ax_b]
    return einsum("".join(sa) + "," + "".join(sb) + "->" + "".join(out), a, b)


@export(numpy=np.kron)
def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.kron``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.kron(fnp.array([1.0, 2.0]), fnp.array([1.0, 10.0])).tolist()
    [1.0, 10.0, 2.0, 20.0]
    """
    a, b = asarray(a), asarray(b)
    nd = builtins.max(H.ndim(a), H.ndim(b))
    sa = (1,) * (nd - H.ndim(a)) + tuple(H.shape(a))
    sb = (1,) * (nd - H.ndim(b)) + tuple(H.shape(b))
    ra = P.reshape(a, tuple(x for s in sa for x in (s, 1)))
    rb = P.reshape(b, tuple(x for s in sb for x in (1, s)))
    return P.reshape(ra * rb, tuple(x * y for x, y in zip(sa, sb)))


@export(numpy=np.cross)
def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: Axis = None) -> Array:
    """Differentiable ``numpy.cross`` of 3-vectors (and 2-vectors, giving the z component).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cross(fnp.array([0.0, 0.0, 1.0]), fnp.array([1.0, 0.0, 0.0])).tolist()
    [0.0, 1.0, 0.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a = P.moveaxis(asarray(a), axisa, -1)
    b = P.moveaxis(asarray(b), axisb, -1)
    ca = [P.subscript(a, (Ellipsis, i)) for i in range(H.shape(a)[-1])]
    cb = [P.subscript(b, (Ellipsis, i)) for i in range(H.shape(b)[-1])]
    if len(ca) == 2 and len(cb) == 2:
        return ca[0] * cb[1] - ca[1] * cb[0]
    if len(ca) != 3 or len(cb) != 3:
        raise ValueError("cross: vectors must have 3 (or both 2) components")
    c = P.stack(ca[1] * cb[2] - ca[2] * cb[1], ca[2] * cb[0] - ca[0] * cb[2],
                ca[0] * cb[1] - ca[1] * cb[0], axis=-1)
    return P.moveaxis(c, -1, axisc)


def _full_convolve(a, v):
    """The full discrete convolution as a gather plus a product: differentiable in both."""
    n, m = H.shape(a)[0], H.shape(v)[0]
    k = np.arange(n + m - 1)[:, None] - np.arange(n)[None, :]   # index into v
    inside = (k >= 0) & (k < m)
    band = P.where(inside, P.subscript(v, (np.clip(k, 0, m - 1),)), 0)
    return P.matmul(band, a)


def _conv_mode(full, n, m, mode):
    if mode == "full":
        return full
    if mode == "same":
        start = (builtins.min(n, m) - 1) // 2
        return P.subscript(full, (slice(start, start + builtins.max(n, m)),))
    if mode == "valid":
        return P.subscript(full, (slice(builtins.min(n, m) - 1, builtins.max(n, m)),))
    raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")


@export(numpy=np.convolve)
def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Array:
    """Differentiable ``numpy.convolve`` (1-d).

    >>> import funcgrad.numpy as fnp
    >>> fnp.convolve(fnp.array([1.0, 2.0]), fnp.array([1.0, 1.0])).tolist()
    [1.0, 3.0, 2.0]
    """
    a, v = asarray(a), asarray(v)
    return _conv_mode(_full_convolve(a, v), H.shape(a)[0], H.shape(v)[0], mode)


@export(numpy=np.correlate)
def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Array:
    """Differentiable ``numpy.correlate`` (1-d).

    >>> import funcgrad.numpy as fnp
    >>> fnp.correlate(fnp.array([1.0, 2.0, 3.0]), fnp.array([1.0, 1.0])).tolist()
    [3.0, 5.0]
    """
    a, v = asarray(a), asarray(v)
    full = _full_convolve(a, flip(P.conj_if_complex(v)))
    return _conv_mode(full, H.shape(a)[0], H.shape(v)[0], mode)


@export(numpy=np.polyval)
def polyval(p: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``numpy.polyval`` (in the coefficients and in `x`), by Horner's rule.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.polyval(fnp.array([1.0, 0.0, 0.0]), x))(3.0).item()  # d(x**2)
    6.0
    """
    p = asarray(p)
    out = P.zeros_like(x) if H.ndim(x) else 0.0
    for i in range(H.shape(p)[0]):
        out = out * x + P.subscript(p, i)
    return out


@export(numpy=np.interp)
def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | None = None,
           right: ArrayLike | None = None, period: float | None = None) -> Array:
    """Differentiable ``numpy.interp`` in `x` and `fp` (the sample points `xp` are constants).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.interp(x, fnp.array([0.0, 1.0]), fnp.array([0.0, 2.0])))(0.25).item()
    2.0
    """
    if period is not None:
        raise NotImplementedError("funcgrad.numpy.interp: period= is not supported")
    if isinstance(xp, Tracer):
        raise TypeError("interp: the sample points xp must be constants (no derivative flows "
                        "into them); differentiate in x and fp")
    xp = np.asarray(raw(xp))
    fp = asarray(fp)
    n = xp.shape[0]
    # the segment of each x (a constant index, computed by primitives so vmap can batch it)
    j = P.clip(P.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    x0, x1 = P.subscript(xp, (j,)), P.subscript(xp, (j + 1,))
    f0, f1 = P.subscript(fp, (j,)), P.subscript(fp, (j + 1,))
    out = f0 + (f1 - f0) / (x1 - x0) * (x - x0)
    lo = P.subscript(fp, 0) if left is None else left
    hi = P.subscript(fp, n - 1) if right is None else right
    out = P.where(P.less(x, xp[0]), lo, out)
    return P.where(P.greater(x, xp[-1]), hi, out)


@export(numpy=np.vecdot)
def vecdot(x1: ArrayLike, x2: ArrayLike, axis: Axis = -1) -> Array:
    """Differentiable ``numpy.vecdot``: ``sum(conj(x1) * x2, axis)``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.vecdot(fnp.array([1j, 1.0]), fnp.array([1j, 2.0])).item()
    (3+0j)
    """
    return P.sum(P.conj_if_complex(x1) * x2, axis=axis)


@export(numpy=np.matvec)
def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Differentiable ``numpy.matvec``: stacks of matrix-vector products ``x1 @ x2``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.matvec(fnp.array([[1.0, 2.0], [3.0, 4.0]]), fnp.array([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    return P.getitem(P.matmul(x1, P.expand_axis(x2, -1)), template=(Ellipsis, 0))


@export(numpy=np.vecmat)
def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Differentiable ``numpy.vecmat``: stacks of ``conj(x1) @ x2`` (vector times matrix).

    >>> import funcgrad.numpy as fnp
    >>> fnp.vecmat(fnp.array([1.0, 1.0]), fnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [4.0, 6.0]
    """
    row = P.expand_axis(P.conj_if_complex(x1), -2)
    return P.getitem(P.matmul(row, x2), template=(Ellipsis, 0, slice(None)))
