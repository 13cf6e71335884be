"""funcgrad.numpy.fft: differentiable ``numpy.fft``, each transform declared once here.

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
from .._src.core import Array, wrap
from .._src.declare import Namespace, linear
from . import _helpers as H
from . import _primitives as P
from ._creation import asarray
from ._examples import EXAMPLES
from ._shapes import roll
from ._typing import ArrayLike

ns = Namespace("funcgrad.numpy.fft", EXAMPLES.get("funcgrad.numpy.fft"))
export = ns.export

_DUAL = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _fit_axes(x, shape, axes):
    """`x` cut or zero-padded along `axes` to the sizes in `shape` (a full shape)."""
    for ax in axes:
        have, want = H.shape(x)[ax], shape[ax]
        if have > want:
            x = P.subscript(x, (slice(None),) * ax + (slice(0, want),))
        elif have < want:
            pad_shape = list(H.shape(x))
            pad_shape[ax] = want - have
            x = P.concatenate(x, np.zeros(pad_shape, dtype=H.dtype(x)), axis=ax)
    return x


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


def _batch_fft(prim, vals, dims, s, axes, norm):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    return prim(x, s=s, axes=tuple(a + 1 for a in axes), norm=norm), 0


def _fftn_impl(x, s, axes, norm):
    return np.fft.fftn(x, s=s, axes=axes, norm=norm)


def _ifftn_impl(x, s, axes, norm):
    return np.fft.ifftn(x, s=s, axes=axes, norm=norm)


def _rfftn_impl(x, s, axes, norm):
    return np.fft.rfftn(x, s=s, axes=axes, norm=norm)


def _irfftn_impl(x, s, axes, norm):
    return np.fft.irfftn(x, s=s, axes=axes, norm=norm)


# A transform's VJP is its plain transpose (docs/complex.md). The DFT matrix is symmetric, so
# fftn and ifftn are their own transposes; the cotangent is then cut or padded back to the
# input's sizes, the transpose of the padding or cutting the forward pass did.
def _fftn_t(ct, out, x, s, axes, norm):
    return _fit_axes(fftn_p(ct, s=s, axes=axes, norm=norm), H.shape(x), axes)


def _ifftn_t(ct, out, x, s, axes, norm):
    return _fit_axes(ifftn_p(ct, s=s, axes=axes, norm=norm), H.shape(x), axes)


def _rfftn_t(ct, out, x, s, axes, norm):
    # rfftn is fftn of a real signal, keeping the first half of the last axis's bins: its
    # transpose zero-fills the dropped bins, applies fftn, and keeps the real part.
    full = list(H.shape(ct))
    full[axes[-1]] = s[-1]
    spectrum = _fit_axes(ct, tuple(full), axes[-1:])
    return _fit_axes(P.real(fftn_p(spectrum, s=s, axes=axes, norm=norm)), H.shape(x), axes)


def _hermitian_weights(n, ndim, axis, dtype):
    """Each half-spectrum bin stands for itself and its mirror image: weight 2, except the
    zero-frequency bin and (for even n) the Nyquist bin."""
    w = np.full(n // 2 + 1, 2.0, dtype=dtype)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = w.shape[0]
    return w.reshape(shape)


def _irfftn_t(ct, out, x, s, axes, norm):
    # the transpose of irfftn (ct is real): conj(rfftn(ct)) in the dual normalisation, each
    # half-spectrum bin weighted by how many bins of the full spectrum it stands for
    half = P.conjugate(fftn_real_p(ct, s=s, axes=axes, norm=_DUAL[norm]))
    half = half * _hermitian_weights(s[-1], H.ndim(half), axes[-1], np.real(np.zeros((), H.dtype(ct))).dtype)
    return _fit_axes(half, H.shape(x), axes)


fftn_p = linear("fftn", _fftn_impl, _fftn_t, params=("s", "axes", "norm"), batch=_batch_fft)
ifftn_p = linear("ifftn", _ifftn_impl, _ifftn_t, params=("s", "axes", "norm"), batch=_batch_fft)
fftn_real_p = linear("rfftn", _rfftn_impl, _rfftn_t, params=("s", "axes", "norm"), batch=_batch_fft)
irfftn_p = linear("irfftn", _irfftn_impl, _irfftn_t, params=("s", "axes", "norm"), batch=_batch_fft)


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
        return wrap(prim(a, s=sizes, axes=ax, norm=norm))
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
        return wrap(prim(a, s=sizes, axes=ax, norm=norm))
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"Differentiable ``numpy.fft.{name}``."
    return export(transform, numpy=np_fn)


fft = _transform_1d(fftn_p, "fft", np.fft.fft)
ifft = _transform_1d(ifftn_p, "ifft", np.fft.ifft)
rfft = _transform_1d(fftn_real_p, "rfft", np.fft.rfft)
irfft = _transform_1d(irfftn_p, "irfft", np.fft.irfft, half_inverse=True)
fft2 = _transform_nd(fftn_p, "fft2", np.fft.fft2, (-2, -1))
ifft2 = _transform_nd(ifftn_p, "ifft2", np.fft.ifft2, (-2, -1))
rfft2 = _transform_nd(fftn_real_p, "rfft2", np.fft.rfft2, (-2, -1))
irfft2 = _transform_nd(irfftn_p, "irfft2", np.fft.irfft2, (-2, -1), half_inverse=True)
fftn = _transform_nd(fftn_p, "fftn", np.fft.fftn, None)
ifftn = _transform_nd(ifftn_p, "ifftn", np.fft.ifftn, None)
rfftn = _transform_nd(fftn_real_p, "rfftn", np.fft.rfftn, None)
irfftn = _transform_nd(irfftn_p, "irfftn", np.fft.irfftn, None, half_inverse=True)

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


@export(numpy=np.fft.hfft)
def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: None = None) -> Array:
    """Differentiable ``numpy.fft.hfft``: the real spectrum of a Hermitian-symmetric signal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.hfft(fnp.array([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return irfft(P.conjugate(asarray(a)), n, axis, _SWAP[norm])


@export(numpy=np.fft.ihfft)
def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None,
          out: None = None) -> Array:
    """Differentiable ``numpy.fft.ihfft``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.allclose(fnp.fft.ihfft(fnp.array([1.0, 1.0, 1.0, 1.0])), [1.0, 0.0, 0.0])
    True
    """
    return wrap(P.conjugate(rfft(a, n, axis, _SWAP[norm])))


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
            "differentiable yet. Declare it in funcgrad/numpy/fft.py with its rule")
    raise AttributeError(f"module 'funcgrad.numpy.fft' has no attribute {name!r}")
