"""Primitives torch has and funcgrad.numpy does not (softmax family, vector norms, moments,
addcmul/addcdiv), declared as funcgrad.numpy's are: forward on NumPy, rules written with
funcgrad's own primitives, so a rule is itself differentiable (create_graph comes free)."""
from __future__ import annotations

import numpy as np

from .._src.declare import elementwise, linear, primitive
from ..numpy import _helpers as H
from ..numpy import _primitives as NP

__all__ = ["softmax_p", "log_softmax_p", "logsumexp_p", "vector_norm_p", "var_p", "std_p",
           "addcmul_p", "addcdiv_p", "median_p", "repeat_p",
           "masked_fill_p", "trace_p", "torch_power_p", "complex_p"]


def _keep(v, x, axis, keepdims):
    """A reduced value with the reduced axes put back (size 1), to broadcast against `x`."""
    if keepdims:
        return v
    return NP.reshape(v, H.keepdims_shape(H.shape(x), axis))


# --- softmax, log_softmax, logsumexp ----------------------------------------------------------
def _softmax_impl(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def _softmax_vjp(ct, out, x, axis):
    return out * (ct - NP.sum(ct * out, axis=axis, keepdims=True))


softmax_p = primitive("softmax", _softmax_impl, params=("axis",), vjps=(_softmax_vjp,),
                      jvps=(_softmax_vjp,))


def _log_softmax_impl(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _log_softmax_vjp(ct, out, x, axis):
    return ct - NP.exp(out) * NP.sum(ct, axis=axis, keepdims=True)


def _log_softmax_jvp(t, out, x, axis):
    return t - NP.sum(t * NP.exp(out), axis=axis, keepdims=True)


log_softmax_p = primitive("log_softmax", _log_softmax_impl, params=("axis",),
                          vjps=(_log_softmax_vjp,), jvps=(_log_softmax_jvp,))


def _logsumexp_impl(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)  # all -inf (or an inf) along the axis: no shift
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=H.normalize_axes(axis, np.ndim(x)))


def _logsumexp_vjp(ct, out, x, axis=None, keepdims=False):
    return _keep(ct, x, axis, keepdims) * NP.exp(x - _keep(out, x, axis, keepdims))


def _logsumexp_jvp(t, out, x, axis=None, keepdims=False):
    return NP.sum(t * NP.exp(x - _keep(out, x, axis, keepdims)), axis=axis, keepdims=keepdims)


logsumexp_p = primitive("logsumexp", _logsumexp_impl, params=("axis", "keepdims"),
                        vjps=(_logsumexp_vjp,), jvps=(_logsumexp_jvp,))


# --- vector norms -------------------------------------------------------------------------------
def _vector_norm_impl(x, ord=2.0, axis=None, keepdims=False):
    a = np.abs(x)
    if ord == np.inf:
        return np.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(a.dtype)
    if ord == 1:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    return np.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _safe_divisor(d):
    """`d` with zeros replaced by ones (where the numerator is zero too: slope 0, as torch)."""
    return NP.where(NP.equal(d, 0), 1.0, d)


# The rules here follow JAX's convention, as every rule of the table: the VJP of a real
# function of a complex x is the plain transpose, whose slope is conj(x) / |x| where PyTorch
# shows x / |x| (the mutable layer conjugates it back: `_graph.conj`).
def _vector_norm_vjp(ct, out, x, ord=2.0, axis=None, keepdims=False):
    ct = _keep(ct, x, axis, keepdims)
    out = _keep(out, x, axis, keepdims)
    if ord == 0:
        return ct * 0.0 * x
    if ord == 1:
        return ct * NP.conj_if_complex(NP.sign(x))
    if ord == 2:
        return ct * NP.conj_if_complex(x) / _safe_divisor(out)
    if ord in (np.inf, -np.inf):
        hits = NP.astype(NP.equal(NP.absolute(x), out), H.dtype(out))
        return ct * NP.conj_if_complex(NP.sign(x)) * hits / NP.sum(hits, axis=axis, keepdims=True)
    a = NP.absolute(x)
    return (ct * NP.conj_if_complex(NP.sign(x)) * NP.power(a, ord - 1)
            / _safe_divisor(NP.power(out, ord - 1)))


vector_norm_p = primitive("vector_norm", _vector_norm_impl, params=("ord", "axis", "keepdims"),
                          vjps=(_vector_norm_vjp,))


# --- variance and standard deviation --------------------------------------------------------------
def _var_impl(x, axis=None, correction=1, keepdims=False):
    return np.var(x, axis=axis, ddof=correction, keepdims=keepdims)


def _std_impl(x, axis=None, correction=1, keepdims=False):
    return np.std(x, axis=axis, ddof=correction, keepdims=keepdims)


def _centered(x, axis):
    return x - NP.mean(x, axis=axis, keepdims=True)


def _var_vjp(ct, out, x, axis=None, correction=1, keepdims=False):
    n = H.count(x, axis) - correction
    return _keep(ct, x, axis, keepdims) * NP.conj_if_complex(_centered(x, axis)) * (2.0 / n)


def _std_vjp(ct, out, x, axis=None, correction=1, keepdims=False):
    n = H.count(x, axis) - correction
    return (_keep(ct, x, axis, keepdims) * NP.conj_if_complex(_centered(x, axis))
            / (n * _keep(out, x, axis, keepdims)))


var_p = primitive("var", _var_impl, params=("axis", "correction", "keepdims"),
                  vjps=(_var_vjp,))
std_p = primitive("std", _std_impl, params=("axis", "correction", "keepdims"),
                  vjps=(_std_vjp,))


# --- addcmul / addcdiv: x + value * a * b, x + value * a / b -----------------------------------------
addcmul_p = elementwise("addcmul", lambda x, a, b, value=1: x + value * a * b,
                        lambda out, x, a, b, value=1: NP.ones_like(x),
                        lambda out, x, a, b, value=1: value * b,
                        lambda out, x, a, b, value=1: value * a, params=("value",))
addcdiv_p = elementwise("addcdiv", lambda x, a, b, value=1: x + value * a / b,
                        lambda out, x, a, b, value=1: NP.ones_like(x),
                        lambda out, x, a, b, value=1: value / b,
                        lambda out, x, a, b, value=1: -value * a / (b * b), params=("value",))


# --- median of all elements: the slope is shared among the elements equal to it -----------------
def _median_impl(x, axis=None, keepdims=False):
    flat = np.sort(np.ravel(x))
    return flat[(flat.size - 1) // 2]  # torch's median is the lower of the two middle values


median_p = primitive("median", _median_impl, params=("axis", "keepdims"),
                     vjps=(NP._chooser_vjp,))


# --- repeat, masked_fill, trace ------------------------------------------------------------------
def _repeat_impl(x, repeats):
    extra = len(repeats) - np.ndim(x)
    return np.tile(np.reshape(x, (1,) * extra + np.shape(x)), repeats)


def _repeat_vjp(ct, out, x, repeats):
    shape = H.shape(x)
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    split = []
    for r, s in zip(repeats, padded):
        split += [r, s]
    summed = NP.sum(NP.reshape(ct, tuple(split)), axis=tuple(range(0, 2 * len(repeats), 2)))
    return NP.reshape(summed, tuple(shape))


repeat_p = primitive("repeat", _repeat_impl, params=("repeats",), vjps=(_repeat_vjp,))


def _masked_fill_impl(x, value, mask):
    return np.where(mask, value, x).astype(np.result_type(x), copy=False)


masked_fill_p = primitive(
    "masked_fill", _masked_fill_impl, nargs=2, params=("mask",),
    vjps=(lambda ct, out, x, value, mask: NP.where(mask, 0.0, ct),
          lambda ct, out, x, value, mask: NP.sum(NP.where(mask, ct, 0.0))))


def _trace_vjp(ct, out, x):
    n, m = H.shape(x)
    return ct * np.eye(n, m, dtype=H.dtype(x))


trace_p = primitive("trace", lambda x: np.trace(x), vjps=(_trace_vjp,))


# --- PyTorch's power: d(x**y)/dy at x == 0 is 0 for y >= 0 and -inf for y < 0 (out * log 0) ----
def _torch_pow_dy(out, x, y):
    at_zero = NP.equal(x, 0)
    safe = NP.where(at_zero, 1, x)
    if np.dtype(H.dtype(out)).kind == "c" and np.dtype(H.dtype(x)).kind != "c":
        safe = NP.astype(safe, H.dtype(out))  # a negative real base: log|x| + i pi, not nan
    return NP.where(at_zero, NP.where(NP.less(y, 0), -out, 0), out * NP.log(safe))


torch_power_p = elementwise("power", NP.power.impl, NP._pow_dx, _torch_pow_dy)


# --- torch.complex(real, imag): real + i imag, linear in both -------------------------------------
def _complex_impl(real, imag):
    out = np.empty(np.broadcast_shapes(np.shape(real), np.shape(imag)),
                   np.complex128 if real.dtype == np.float64 else np.complex64)
    out.real, out.imag = real, imag
    return out


# the transposes in funcgrad's convention (plain, no conjugation): Re ct and Re(i ct) = -Im ct
complex_p = linear("complex", _complex_impl, lambda ct, out, re, im: NP.real(ct),
                   lambda ct, out, re, im: NP.negative(NP.imag(ct)))
