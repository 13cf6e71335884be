"""funcgrad.numpy.fft: differentiable ``numpy.fft``, each transform declared once here over
the four n-dimensional transform primitives of `_primitives` (fftn, ifftn, rfftn, irfftn).

Every transform is linear, so its JVP is itself; its VJP is its plain transpose (JAX's
convention, docs/complex.md): the DFT matrix is symmetric, so fft's VJP is fft itself (same
normalisation), cut or zero-padded back to the input's length. Real-input transforms (rfft)
take the real part of it; the half-spectrum inverse (irfft) weighs the bins its input stands
for twice by 2.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> x = fnp.array([1.0, 2.0, 3.0, 4.0])
>>> fg.grad(lambda x: fnp.sum(fnp.abs(fnp.fft.fft(x)) ** 2))(x).tolist()  # Parseval: 2 n x
[8.0, 16.0, 24.0, 32.0]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .._src import batching as B
from .._src.core import Array
from .._src.declare import Namespace
from . import _helpers as H
from . import _primitives as P
from ._creation import asarray
from ._examples import EXAMPLES
from ._shapes import roll
from ._typing import ArrayLike

ns = Namespace("funcgrad.numpy.fft", EXAMPLES.get("funcgrad.numpy.fft"))
export = ns.export


def _resolve(x, s, axes):
    """Explicit non-negative axes and sizes, as NumPy's n-dimensional transforms read them."""
    nd = H.ndim(x)
    if axes is None:
        axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    axes = tuple(B.checked_axis(a, nd) for a in axes)   # AxisError out of range, no wrap
    if len(set(axes)) != len(axes):
        raise ValueError("funcgrad.numpy.fft: repeated axes are not supported")
    s = tuple(H.shape(x)[a] for a in axes) if s is None else tuple(s)
    return s, axes


def _irfft_sizes(x, s, axes):
    if s is None:
        s, axes = _resolve(x, None, axes)
        s = s[:-1] + (2 * (s[-1] - 1),)
        return s, axes
    return _resolve(x, s, axes)


def _transform_nd(prim, name, np_fn, default_axes, half_inverse=False):
    def transform(a: ArrayLike, s: Sequence[int] | None = None,
                  axes: Sequence[int] | None = default_axes, norm: str | None = None,
                  out: None = None) -> Array:
        if out is not None:
            raise TypeError(f"funcgrad.numpy.fft.{name}: out= is not supported")
        a = asarray(a)
        sizes, ax = _irfft_sizes(a, s, axes) if half_inverse else _resolve(a, s, axes)
        return prim(a, s=sizes, axes=ax, norm=norm)
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"Differentiable ``numpy.fft.{name}``."
    return export(transform, numpy=np_fn)


def _transform_1d(prim, name, np_fn, half_inverse=False):
    def transform(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None,
                  out: None = None) -> Array:
        if out is not None:
            raise TypeError(f"funcgrad.numpy.fft.{name}: out= is not supported")
        a = asarray(a)
        s = None if n is None else (n,)
        sizes, ax = _irfft_sizes(a, s, (axis,)) if half_inverse else _resolve(a, s, (axis,))
        return prim(a, s=sizes, axes=ax, norm=norm)
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"Differentiable ``numpy.fft.{name}``."
    return export(transform, numpy=np_fn)


fft = _transform_1d(P.fftn, "fft", np.fft.fft)
ifft = _transform_1d(P.ifftn, "ifft", np.fft.ifft)
rfft = _transform_1d(P.rfftn, "rfft", np.fft.rfft)
irfft = _transform_1d(P.irfftn, "irfft", np.fft.irfft, half_inverse=True)
fft2 = _transform_nd(P.fftn, "fft2", np.fft.fft2, (-2, -1))
ifft2 = _transform_nd(P.ifftn, "ifft2", np.fft.ifft2, (-2, -1))
rfft2 = _transform_nd(P.rfftn, "rfft2", np.fft.rfft2, (-2, -1))
irfft2 = _transform_nd(P.irfftn, "irfft2", np.fft.irfft2, (-2, -1), half_inverse=True)
fftn = _transform_nd(P.fftn, "fftn", np.fft.fftn, None)
ifftn = _transform_nd(P.ifftn, "ifftn", np.fft.ifftn, None)
rfftn = _transform_nd(P.rfftn, "rfftn", np.fft.rfftn, None)
irfftn = _transform_nd(P.irfftn, "irfftn", np.fft.irfftn, None, half_inverse=True)

@export(numpy=np.fft.hfft)
def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: None = None) -> Array:
    """Differentiable ``numpy.fft.hfft``: the real spectrum of a Hermitian-symmetric signal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.hfft(fnp.array([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return irfft(P.conjugate(asarray(a)), n, axis, P.DUAL_NORM[norm])


@export(numpy=np.fft.ihfft)
def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None,
          out: None = None) -> Array:
    """Differentiable ``numpy.fft.ihfft``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.allclose(fnp.fft.ihfft(fnp.array([1.0, 1.0, 1.0, 1.0])), [1.0, 0.0, 0.0])
    True
    """
    return P.conjugate(rfft(a, n, axis, P.DUAL_NORM[norm]))


@export(numpy=np.fft.fftshift)
def fftshift(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.fft.fftshift``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.fftshift(fnp.array([0.0, 1.0, 2.0, 3.0])).tolist()
    [2.0, 3.0, 0.0, 1.0]
    """
    x = asarray(x)
    axes = tuple(range(H.ndim(x))) if axes is None else np.atleast_1d(axes).tolist()
    return roll(x, [H.shape(x)[a] // 2 for a in axes], axes)


@export(numpy=np.fft.ifftshift)
def ifftshift(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.fft.ifftshift``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.ifftshift(fnp.array([2.0, 3.0, 0.0, 1.0])).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    x = asarray(x)
    axes = tuple(range(H.ndim(x))) if axes is None else np.atleast_1d(axes).tolist()
    return roll(x, [-(H.shape(x)[a] // 2) for a in axes], axes)


for _name in ("fftfreq", "rfftfreq"):
    _f = getattr(np.fft, _name)

    def _make(*args, _f=_f, **kwargs):
        return Array(_f(*args, **kwargs))
    _make.__name__ = _make.__qualname__ = _name
    _make.__doc__ = f"``numpy.fft.{_name}`` as a constant `Array`."
    export(_make, numpy=_f, kind="constant")

globals().update(ns.exports)
__all__ = sorted(ns.exports)


def __getattr__(name: str):
    if hasattr(np.fft, name):
        raise AttributeError(
            f"funcgrad.numpy.fft has no {name!r}: numpy.fft.{name} has not been declared "
            "differentiable yet. Declare it in funcgrad/numpy/fft.py (a primitive with its "
            "rules goes in funcgrad/numpy/_primitives.py)")
    raise AttributeError(f"module 'funcgrad.numpy.fft' has no attribute {name!r}")
