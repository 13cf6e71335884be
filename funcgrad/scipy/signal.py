"""funcgrad.scipy.signal: differentiable ``convolve``, written with funcgrad.numpy's
differentiable pad, take and einsum (so every order of derivative, in both arguments, and
vmap come free; no SciPy needed).

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.signal import convolve
>>> convolve(fnp.array([1.0, 2.0, 3.0]), fnp.array([0.0, 1.0, 0.5])).tolist()
[0.0, 1.0, 2.5, 4.0, 1.5]
"""
from __future__ import annotations

import string
from typing import Sequence

import numpy as np

from .. import numpy as fnp
from .._src.core import Array, wrap
from .._src.declare import Namespace
from ._util import ArrayLike

ns = Namespace("funcgrad.scipy.signal")
export = ns.export

_MODES = ("full", "valid", "same")
_METHODS = ("auto", "direct", "fft")


def _axis_pairs(name: str, pair, ndims) -> tuple[list[int], list[int]]:
    first, second = ([int(a) % n if n else int(a) for a in axes] for axes, n in zip(pair, ndims))
    if len(first) != len(second):
        raise ValueError(f"convolve: {name} pairs {len(first)} axes of in1 with "
                         f"{len(second)} of in2; give the same number of each")
    return first, second


def _start(mode: str, n1: int, n2: int) -> tuple[int, int]:
    """(first index into the full convolution, length) of the output along one axis."""
    if mode == "full":
        return 0, n1 + n2 - 1
    if mode == "valid":
        return min(n1, n2) - 1, abs(n1 - n2) + 1
    return (n2 - 1) // 2, n1  # same: centred, of in1's size


@export
def convolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto", *,
             axes: Sequence[Sequence[int]] | None = None,
             dot_axes: Sequence[Sequence[int]] = ((), ())) -> Array:
    """Differentiable ``scipy.signal.convolve`` of n-d arrays (modes full, valid, same).

    Beyond SciPy, as HIPS autograd's: `axes` pairs the axes of `in1` and `in2` to convolve
    (default: all, which needs equal ndim, as SciPy), and `dot_axes` pairs axes summed over
    as in ``tensordot``. The result's axes are in1's others, in2's others, then the
    convolved ones. `method` is accepted for SciPy's signature; the sum is direct.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import convolve
    >>> x, k = fnp.array([1.0, 2.0, 3.0, 4.0]), fnp.array([1.0, -1.0])
    >>> convolve(x, k, mode="valid").tolist()
    [1.0, 1.0, 1.0]
    >>> fg.grad(lambda k: fnp.sum(convolve(x, k, mode="valid")))(k).tolist()
    [9.0, 6.0]
    """
    if mode not in _MODES:
        raise ValueError(f"convolve: mode must be 'full', 'valid' or 'same', got {mode!r}")
    if method not in _METHODS:
        raise ValueError(f"convolve: method must be 'auto', 'direct' or 'fft', got {method!r}")
    a, b = fnp.asarray(in1), fnp.asarray(in2)
    if axes is None:
        if a.ndim != b.ndim:
            raise ValueError(f"convolve: in1 and in2 should have the same dimensionality, got "
                             f"{a.ndim} and {b.ndim} (or pair axes with axes=)")
        axes = (range(a.ndim), range(b.ndim))
    conv_a, conv_b = _axis_pairs("axes", axes, (a.ndim, b.ndim))
    dot_a, dot_b = _axis_pairs("dot_axes", dot_axes, (a.ndim, b.ndim))
    sizes = [(a.shape[i], b.shape[j]) for i, j in zip(conv_a, conv_b)]
    if mode == "valid" and not (all(n1 >= n2 for n1, n2 in sizes)
                                or all(n1 <= n2 for n1, n2 in sizes)):
        raise ValueError("convolve: for 'valid' mode, one must be at least as large as the "
                         "other in every convolved dimension")

    # in1 padded by len(in2) - 1 zeros on each side of each convolved axis; then, along each,
    # the windows a_pad[k + n2 - 1 - j] (output index k, in2 index j): sum_j a[k - j] b[j]
    pad = [(0, 0)] * a.ndim
    for i, (n1, n2) in zip(conv_a, sizes):
        pad[i] = (n2 - 1, n2 - 1)
    windows = fnp.pad(a, pad) if any(n2 > 1 for _, n2 in sizes) else a
    letters = iter(string.ascii_letters)
    a_labels = [[next(letters)] for _ in range(a.ndim)]
    b_labels = [next(letters) for _ in range(b.ndim)]
    out_conv = []
    for (i, j), (n1, n2) in sorted(zip(zip(conv_a, conv_b), sizes), reverse=True):
        first, length = _start(mode, n1, n2)
        k = np.arange(first, first + length)[:, None]
        windows = fnp.take(windows, k + (n2 - 1) - np.arange(n2)[None, :], axis=i)
        a_labels[i] = [a_labels[i][0], b_labels[j]]
    for i, j in zip(conv_a, conv_b):
        out_conv.append(a_labels[i][0])
    for i, j in zip(dot_a, dot_b):
        b_labels[j] = a_labels[i][0]
    spent = set(conv_a) | set(dot_a)
    out = ([a_labels[i][0] for i in range(a.ndim) if i not in spent]
           + [b_labels[j] for j in range(b.ndim) if j not in set(conv_b) | set(dot_b)]
           + out_conv)
    spec = f"{''.join(''.join(l) for l in a_labels)},{''.join(b_labels)}->{''.join(out)}"
    return wrap(fnp.einsum(spec, windows, b))


__all__ = sorted(ns.exports)
