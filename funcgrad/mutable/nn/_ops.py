"""The nn functions that PyTorch records as one node (addmm, nll_loss, mse_loss, the binary
cross-entropies): each a funcgrad primitive, forward on NumPy, rules written with funcgrad's
own primitives (so create_graph differentiates them again), declared in the op table under
the grad_fn name PyTorch prints.

Targets, class weights and the reduction are parameters (constants): PyTorch does not
differentiate a loss with respect to its class indices, and neither do we.
"""
from __future__ import annotations

import numpy as np

from ..._src.declare import primitive
from ...numpy import _primitives as NP
from .. import _ops as O
from .._ops import apply
from .._tensor import Tensor

__all__ = ["addmm", "nll_loss", "mse_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]


# --- addmm: bias + input @ weight_t ------------------------------------------------------------
def _addmm_impl(bias, x, wt):
    return bias + x @ wt


addmm_p = primitive("addmm", _addmm_impl, nargs=3, vjps=(
    lambda ct, out, bias, x, wt: NP.sum(ct, axis=0),  # bias: one row, broadcast down
    lambda ct, out, bias, x, wt: NP.matmul(ct, NP.transpose(wt)),
    lambda ct, out, bias, x, wt: NP.matmul(NP.transpose(x), ct)))
ADDMM = O.Op("addmm", addmm_p, "AddmmBackward0", ((), (2,), (1,)))


def addmm(bias: Tensor, x: Tensor, wt: Tensor) -> Tensor:
    """``bias + x @ wt`` for a 1-d `bias` and 2-d `x`, `wt` (``AddmmBackward0``)."""
    return apply(ADDMM, (bias, x, wt))


# --- losses ------------------------------------------------------------------------------------
def _reduced(loss, reduction, denominator=None):
    if reduction == "sum":
        return np.sum(loss)
    if reduction == "mean":
        return np.sum(loss) / denominator if denominator is not None else np.mean(loss)
    return loss


def _reduced_ct(ct, like, reduction, denominator=None):
    """The cotangent of each unreduced element."""
    if reduction == "none":
        return ct
    if reduction == "mean":
        ct = ct / (denominator if denominator is not None else np.size(like))
    return NP.broadcast_to(ct, np.shape(like))


def _nll_impl(logp, picks, weights, reduction, total):
    """`picks`: a (rows, classes) 0/1 mask of each row's target; `weights`: per row."""
    loss = -np.sum(logp * picks, axis=1) * weights
    return _reduced(loss, reduction, total).astype(logp.dtype)


def _nll_vjp(ct, out, logp, picks, weights, reduction, total):
    per_row = _reduced_ct(ct, weights, reduction, total)
    return NP.multiply(NP.reshape(-per_row * weights, (-1, 1)), picks)


nll_loss_p = primitive("nll_loss", _nll_impl, params=("picks", "weights", "reduction", "total"),
                       vjps=(_nll_vjp,))
NLL_LOSS = O.Op("nll_loss", nll_loss_p, "NllLossBackward0", ((),), result="same")


def nll_loss(logp: Tensor, picks: np.ndarray, weights: np.ndarray, reduction: str) -> Tensor:
    """Negative log-likelihood of (rows, classes) `logp` at the rows' target columns."""
    total = float(np.sum(weights)) if reduction == "mean" else None
    return apply(NLL_LOSS, (logp,), {"picks": picks, "weights": weights,
                                     "reduction": reduction, "total": total})


def _mse_impl(x, t, reduction):
    d = x - t
    return np.asarray(_reduced(d * d, reduction), dtype=np.result_type(x, t))


def _mse_vjp_x(ct, out, x, t, reduction):
    return 2 * (x - t) * _reduced_ct(ct, x, reduction)


mse_loss_p = primitive("mse_loss", _mse_impl, nargs=2, params=("reduction",), vjps=(
    _mse_vjp_x, lambda ct, out, x, t, reduction: -_mse_vjp_x(ct, out, x, t, reduction)))
MSE_LOSS = O.Op("mse_loss", mse_loss_p, "MseLossBackward0", ((0, 1), (0, 1)))


def mse_loss(x: Tensor, t: Tensor, reduction: str) -> Tensor:
    """Squared error of same-shaped `x` and `t`, reduced (``MseLossBackward0``)."""
    return apply(MSE_LOSS, (x, t), {"reduction": reduction})


def _bce_impl(p, t, weight, reduction):
    loss = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log1p(-p), -100))
    if weight is not None:
        loss = loss * weight
    return np.asarray(_reduced(loss, reduction), dtype=p.dtype)


def _bce_vjp_p(ct, out, p, t, weight, reduction):
    # PyTorch's formula: (p - t) / max(p (1 - p), 1e-12)
    g = (p - t) / NP.maximum(p * (1 - p), 1e-12) * _reduced_ct(ct, p, reduction)
    return g if weight is None else g * weight


def _bce_vjp_t(ct, out, p, t, weight, reduction):
    g = (NP.log1p(-p) - NP.log(p)) * _reduced_ct(ct, p, reduction)
    return g if weight is None else g * weight


bce_p = primitive("binary_cross_entropy", _bce_impl, nargs=2, params=("weight", "reduction"),
                  vjps=(_bce_vjp_p, _bce_vjp_t))
BCE = O.Op("binary_cross_entropy", bce_p, "BinaryCrossEntropyBackward0", ((0, 1), (0,)))


def binary_cross_entropy(p: Tensor, t: Tensor, weight, reduction: str) -> Tensor:
    """Binary cross-entropy of probabilities (``BinaryCrossEntropyBackward0``)."""
    return apply(BCE, (p, t), {"weight": weight, "reduction": reduction})


def _softplus_neg(x):
    """log(1 + exp(-x)), stably, on arrays."""
    m = np.maximum(-x, 0)
    return m + np.log(np.exp(-m) + np.exp(-x - m))


def _bcel_impl(x, t, weight, pos_weight, reduction):
    if pos_weight is None:
        loss = (1 - t) * x + _softplus_neg(x)
    else:
        loss = (1 - t) * x + (1 + (pos_weight - 1) * t) * _softplus_neg(x)
    if weight is not None:
        loss = loss * weight
    return np.asarray(_reduced(loss, reduction), dtype=x.dtype)


def _sigmoid(x):
    return 1 / (1 + NP.exp(-x))


def _bcel_vjp_x(ct, out, x, t, weight, pos_weight, reduction):
    if pos_weight is None:
        g = _sigmoid(x) - t
    else:
        g = (1 - t) - (1 + (pos_weight - 1) * t) * _sigmoid(-x)
    g = g * _reduced_ct(ct, x, reduction)
    return g if weight is None else g * weight


def _bcel_vjp_t(ct, out, x, t, weight, pos_weight, reduction):
    if pos_weight is None:
        g = -x
    else:
        softplus = NP.log1p(NP.exp(-NP.absolute(x))) + NP.maximum(-x, 0)
        g = -x + (pos_weight - 1) * softplus
    g = g * _reduced_ct(ct, x, reduction)
    return g if weight is None else g * weight


bcel_p = primitive("binary_cross_entropy_with_logits", _bcel_impl, nargs=2,
                   params=("weight", "pos_weight", "reduction"),
                   vjps=(_bcel_vjp_x, _bcel_vjp_t))
BCE_LOGITS = O.Op("binary_cross_entropy_with_logits", bcel_p,
                  "BinaryCrossEntropyWithLogitsBackward0", ((0, 1), (0,)))


def binary_cross_entropy_with_logits(x: Tensor, t: Tensor, weight, pos_weight,
                                     reduction: str) -> Tensor:
    """Sigmoid plus binary cross-entropy (``BinaryCrossEntropyWithLogitsBackward0``)."""
    return apply(BCE_LOGITS, (x, t), {"weight": weight, "pos_weight": pos_weight,
                                      "reduction": reduction})
