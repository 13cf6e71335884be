"""Activation functions and friends, as JAX's ``jax.nn``: composites over `funcgrad.numpy`,
so every transform differentiates and batches them.

Where an activation has a kink, its derivative there is JAX's: ``relu`` has slope 0 at 0,
``relu6`` slope 0 at 0 and 6, ``leaky_relu`` and ``elu`` slope 1 at 0.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> fg.nn.relu(fnp.array([-1.0, 0.0, 2.0])).tolist()
[0.0, 0.0, 2.0]
>>> fg.grad(fg.nn.relu)(0.0).item()
0.0
>>> fg.nn.one_hot(fnp.array([0, 2]), 3).tolist()
[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""
from __future__ import annotations

import math
from typing import Any

from . import numpy as fnp
from ._src.transforms import stop_gradient
from .scipy.special import erf, expit, logsumexp

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
           "hard_tanh", "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax",
           "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid",
           "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid",
           "squareplus", "standardize", "swish", "tanh"]

Axis = Any
tanh = fnp.tanh


def identity(x: Any) -> fnp.ndarray:
    """`x` unchanged (as an array).

    >>> identity(2.0).item()
    2.0
    """
    return fnp.asarray(x)


def relu(x: Any) -> fnp.ndarray:
    """``max(x, 0)``, with derivative 0 at 0.

    >>> import funcgrad.numpy as fnp
    >>> relu(fnp.array([-2.0, 3.0])).tolist()
    [0.0, 3.0]
    """
    x = fnp.asarray(x)
    return fnp.where(x > 0, x, fnp.zeros_like(x))


def relu6(x: Any) -> fnp.ndarray:
    """``min(max(x, 0), 6)``, with derivative 0 at both corners.

    >>> import funcgrad.numpy as fnp
    >>> relu6(fnp.array([-1.0, 3.0, 9.0])).tolist()
    [0.0, 3.0, 6.0]
    """
    x = fnp.asarray(x)
    return fnp.where(x >= 6, fnp.full_like(x, 6), relu(x))


def sigmoid(x: Any) -> fnp.ndarray:
    """The logistic function ``1 / (1 + exp(-x))``.

    >>> sigmoid(0.0).item()
    0.5
    """
    return expit(x)


def log_sigmoid(x: Any) -> fnp.ndarray:
    """``log(sigmoid(x))``, computed without overflow: ``-softplus(-x)``.

    >>> round(log_sigmoid(-1000.0).item(), 6)
    -1000.0
    """
    return -softplus(-fnp.asarray(x))


def softplus(x: Any) -> fnp.ndarray:
    """``log(1 + exp(x))``, stable for large ``|x|``.

    >>> round(softplus(0.0).item(), 6)
    0.693147
    """
    x = fnp.asarray(x)
    return fnp.logaddexp(x, fnp.zeros_like(x))


def soft_sign(x: Any) -> fnp.ndarray:
    """``x / (|x| + 1)``.

    >>> soft_sign(3.0).item()
    0.75
    """
    x = fnp.asarray(x)
    return x / (fnp.abs(x) + 1)


def silu(x: Any) -> fnp.ndarray:
    """``x * sigmoid(x)`` (also called swish).

    >>> silu(0.0).item()
    0.0
    """
    x = fnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def mish(x: Any) -> fnp.ndarray:
    """``x * tanh(softplus(x))``.

    >>> mish(0.0).item()
    0.0
    """
    x = fnp.asarray(x)
    return x * fnp.tanh(softplus(x))


def leaky_relu(x: Any, negative_slope: Any = 0.01) -> fnp.ndarray:
    """`x` where ``x >= 0``, else ``negative_slope * x``.

    >>> leaky_relu(-2.0, 0.5).item()
    -1.0
    """
    x = fnp.asarray(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> fnp.ndarray:
    """`x` clipped to ``[-1, 1]`` (slope 1 at the corners, as JAX).

    >>> import funcgrad.numpy as fnp
    >>> hard_tanh(fnp.array([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    x = fnp.asarray(x)
    return fnp.where(x > 1, fnp.ones_like(x), fnp.where(x < -1, -fnp.ones_like(x), x))


def hard_sigmoid(x: Any) -> fnp.ndarray:
    """``relu6(x + 3) / 6``.

    >>> hard_sigmoid(0.0).item()
    0.5
    """
    return relu6(fnp.asarray(x) + 3.0) / 6.0


def hard_silu(x: Any) -> fnp.ndarray:
    """``x * hard_sigmoid(x)`` (also called hard_swish).

    >>> hard_silu(3.0).item()
    3.0
    """
    x = fnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def _negative_part(x, alpha):
    """``alpha * expm1(x)`` where ``x <= 0``; the positive side is masked off first so its
    overflowing ``exp`` cannot poison the gradient."""
    safe = fnp.where(x > 0, fnp.zeros_like(x), x)
    return alpha * fnp.expm1(safe)


def elu(x: Any, alpha: Any = 1.0) -> fnp.ndarray:
    """`x` where positive, else ``alpha * (exp(x) - 1)``.

    >>> round(elu(-1.0).item(), 6)
    -0.632121
    """
    x = fnp.asarray(x)
    return fnp.where(x > 0, x, _negative_part(x, alpha))


def celu(x: Any, alpha: Any = 1.0) -> fnp.ndarray:
    """`x` where positive, else ``alpha * (exp(x / alpha) - 1)``.

    >>> round(celu(-2.0, 2.0).item(), 6)
    -1.264241
    """
    x = fnp.asarray(x)
    return fnp.where(x > 0, x, _negative_part(x / alpha, alpha))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> fnp.ndarray:
    """Scaled ``elu`` with the self-normalising constants.

    >>> round(selu(1.0).item(), 6)
    1.050701
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: Any, approximate: bool = True) -> fnp.ndarray:
    """Gaussian error linear unit: ``x * Phi(x)``, by default with JAX's tanh approximation.

    >>> round(gelu(1.0, approximate=False).item(), 6)
    0.841345
    """
    x = fnp.asarray(x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
        return 0.5 * x * (1 + fnp.tanh(inner))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def squareplus(x: Any, b: Any = 4) -> fnp.ndarray:
    """``(x + sqrt(x**2 + b)) / 2``, a smooth relu.

    >>> squareplus(0.0).item()
    1.0
    """
    x = fnp.asarray(x)
    return (x + fnp.sqrt(x * x + b)) / 2


def sparse_plus(x: Any) -> fnp.ndarray:
    """0 below -1, `x` above 1, ``(x + 1)**2 / 4`` between.

    >>> sparse_plus(0.0).item()
    0.25
    """
    x = fnp.asarray(x)
    middle = (x + 1) ** 2 / 4
    return fnp.where(x <= -1, fnp.zeros_like(x), fnp.where(x >= 1, x, middle))


def sparse_sigmoid(x: Any) -> fnp.ndarray:
    """The derivative of `sparse_plus`: ``(x + 1) / 2`` clipped to ``[0, 1]`` (slope 1/4 at
    the corners, as JAX's, whose max and min split a tie).

    >>> sparse_sigmoid(0.0).item()
    0.5
    """
    return 0.5 * fnp.minimum(fnp.maximum(fnp.asarray(x) + 1, 0.0), 2.0)


def log1mexp(x: Any) -> fnp.ndarray:
    """``log(1 - exp(-x))`` for ``x > 0``, accurate for small and large `x`.

    >>> round(log1mexp(1.0).item(), 6)
    -0.458675
    """
    x = fnp.asarray(x)
    return fnp.where(x > math.log(2), fnp.log1p(-fnp.exp(-x)), fnp.log(-fnp.expm1(-x)))


def glu(x: Any, axis: int = -1) -> fnp.ndarray:
    """Gated linear unit: the first half of `x` along `axis` times the sigmoid of the second.

    >>> import funcgrad.numpy as fnp
    >>> glu(fnp.array([2.0, 0.0])).item()
    1.0
    """
    x = fnp.asarray(x)
    if x.shape[axis] % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even, got {x.shape[axis]}")
    first, second = fnp.split(x, 2, axis=axis)
    return first * sigmoid(second)


def _masked_max(x, axis, where):
    """The max over `axis`, kept as a size-1 axis, of the entries `where` allows (-inf if
    none); a constant, as only the shift it serves for needs it."""
    if where is not None:
        x = fnp.where(where, x, -fnp.inf)
    peak = fnp.max(x, axis=axis, keepdims=True)
    return stop_gradient(fnp.where(fnp.isfinite(peak), peak, fnp.zeros_like(peak)))


def _masked_sum(x, axis, where):
    if where is not None:
        x = fnp.where(where, x, fnp.zeros_like(x))
    return fnp.sum(x, axis=axis, keepdims=True)


def softmax(x: Any, axis: Axis = -1, where: Any = None) -> fnp.ndarray:
    """``exp(x) / sum(exp(x))`` along `axis`; with `where`, over the entries it allows
    (the others are 0).

    >>> import funcgrad.numpy as fnp
    >>> softmax(fnp.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    x = fnp.asarray(x)
    unnormalised = fnp.exp(x - _masked_max(x, axis, where))
    if where is not None:
        unnormalised = fnp.where(where, unnormalised, fnp.zeros_like(unnormalised))
    return unnormalised / _masked_sum(unnormalised, axis, where)


def log_softmax(x: Any, axis: Axis = -1, where: Any = None) -> fnp.ndarray:
    """``x - logsumexp(x)`` along `axis`; with `where`, over the entries it allows (the others
    are -inf).

    >>> import funcgrad.numpy as fnp
    >>> [round(v, 6) for v in log_softmax(fnp.array([0.0, 0.0])).tolist()]
    [-0.693147, -0.693147]
    """
    x = fnp.asarray(x)
    shifted = x - _masked_max(x, axis, where)
    out = shifted - fnp.log(_masked_sum(fnp.exp(shifted), axis, where))
    if where is not None:
        out = fnp.where(where, out, -fnp.inf)
    return out


def logmeanexp(x: Any, axis: Axis = None, where: Any = None,
               keepdims: bool = False) -> fnp.ndarray:
    """``log(mean(exp(x)))`` over `axis`, computed stably.

    >>> import funcgrad.numpy as fnp
    >>> round(logmeanexp(fnp.array([1000.0, 1000.0])).item(), 6)
    1000.0
    """
    x = fnp.asarray(x)
    if where is None:
        total = logsumexp(x, axis=axis, keepdims=keepdims)
        return total - math.log(x.size // max(total.size, 1))
    where = fnp.broadcast_to(fnp.asarray(where), x.shape)
    total = logsumexp(fnp.where(where, x, -fnp.inf), axis=axis, keepdims=keepdims)
    return total - fnp.log(fnp.sum(where, axis=axis, keepdims=keepdims))


def standardize(x: Any, axis: Axis = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None) -> fnp.ndarray:
    """``(x - mean) / sqrt(variance + epsilon)``, the moments taken along `axis` unless given.

    >>> import funcgrad.numpy as fnp
    >>> [round(v, 4) for v in standardize(fnp.array([1.0, 3.0])).tolist()]
    [-1.0, 1.0]
    """
    x = fnp.asarray(x)
    if where is not None:
        where = fnp.broadcast_to(fnp.asarray(where), x.shape)
        count = fnp.sum(where, axis=axis, keepdims=True)
    if mean is None:
        mean = (fnp.mean(x, axis=axis, keepdims=True) if where is None
                else _masked_sum(x, axis, where) / count)
    if variance is None:
        square = x * x if not fnp.iscomplexobj(x) else fnp.real(x * fnp.conj(x))
        mean_square = (fnp.mean(square, axis=axis, keepdims=True) if where is None
                       else _masked_sum(square, axis, where) / count)
        variance = mean_square - fnp.real(mean * fnp.conj(mean))
    return (x - mean) / fnp.sqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> fnp.ndarray:
    """A new axis of length `num_classes` at `axis`, 1 at each entry's class and 0 elsewhere
    (an out-of-range class gives all zeros). Floats by default.

    >>> import funcgrad.numpy as fnp
    >>> one_hot(fnp.array([1, 5]), 3).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    try:
        num_classes = int(num_classes)
    except Exception:
        raise TypeError("one_hot: num_classes must be a concrete int (a traced value has no "
                        "shape to give); pass a Python int") from None
    x = fnp.asarray(x)
    position = axis if axis >= 0 else x.ndim + 1 + axis
    if not 0 <= position <= x.ndim:
        raise ValueError(f"one_hot: axis {axis} is out of bounds for an output of rank "
                         f"{x.ndim + 1}")
    classes = fnp.arange(num_classes).reshape((num_classes,) + (1,) * (x.ndim - position))
    hot = fnp.expand_dims(x, position) == classes
    return hot.astype(dtype if dtype is not None else fnp.float64)
