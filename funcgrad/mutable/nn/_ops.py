"""The nn functions that PyTorch records as one node (addmm, nll_loss, mse_loss, the binary
cross-entropies): each a funcgrad primitive, forward on NumPy, rules written with funcgrad's
own primitives (so create_graph differentiates them again), declared in the op table under
the grad_fn name PyTorch prints.

Targets, class weights and the reduction are parameters (constants): PyTorch does not
differentiate a loss with respect to its class indices, and neither do we.
"""
from __future__ import annotations

import numpy as np

from ..._src.declare import linear, primitive
from ...numpy import _helpers as H
from ...numpy import _primitives as NP
from .. import _functions as T
from .. import _ops as O
from .._ops import apply
from .._tensor import Tensor

__all__ = ["addmm", "nll_loss", "mse_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "embedding", "conv2d", "max_pool2d",
           "average_pool2d", "threshold"]


# --- addmm: bias + input @ weight_t ------------------------------------------------------------
def _addmm_impl(bias, x, wt):
    return bias + x @ wt


addmm_p = primitive("addmm", _addmm_impl, nargs=3, vjps=(
    lambda ct, out, bias, x, wt: NP.sum(ct, axis=0),  # bias: one row, broadcast down
    lambda ct, out, bias, x, wt: NP.matmul(ct, NP.transpose(wt)),
    lambda ct, out, bias, x, wt: NP.matmul(NP.transpose(x), ct)))
ADDMM = O.Op("addmm", addmm_p, "AddmmBackward0")


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
# the node saves the class weights and targets (PyTorch's): freed with the graph
NLL_LOSS = O.Op("nll_loss", nll_loss_p, "NllLossBackward0", result="same", saves_index=True,
                node_base=T.extra_node("_saved_weight", "_saved_target", "_saved_total_weight",
                                       "_saved_ignore_index", "_saved_reduction",
                                       tensors=("_saved_weight", "_saved_target",
                                                "_saved_total_weight")))
_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}  # at::Reduction, as the node shows it


def nll_loss(logp: Tensor, picks: np.ndarray, weights: np.ndarray, reduction: str,
             weight: Tensor | None = None, target: Tensor | None = None,
             ignore_index: int = -100) -> Tensor:
    """Negative log-likelihood of (rows, classes) `logp` at the rows' target columns
    (`weight`, `target`, `ignore_index`: what the node shows as saved)."""
    total = float(np.sum(weights)) if reduction == "mean" else None
    out = apply(NLL_LOSS, (logp,), {"picks": picks, "weights": weights,
                                    "reduction": reduction, "total": total})
    # (PyTorch 2.13 shows the ignore_index as an unsigned 64-bit number: -100 reads
    # 18446744073709551516; shown the same here)
    T.stash(out, _saved_weight=weight, _saved_target=target,
            _saved_ignore_index=ignore_index % 2 ** 64,
            _saved_reduction=_REDUCTION_ENUM[reduction],
            _saved_total_weight=Tensor._wrap(np.asarray(np.sum(weights), logp._data.dtype)))
    return out


def _mse_impl(x, t, reduction):
    d = x - t
    return np.asarray(_reduced(d * d, reduction), dtype=np.result_type(x, t))


def _mse_vjp_x(ct, out, x, t, reduction):
    return 2 * (x - t) * _reduced_ct(ct, x, reduction)


mse_loss_p = primitive("mse_loss", _mse_impl, nargs=2, params=("reduction",), vjps=(
    _mse_vjp_x, lambda ct, out, x, t, reduction: -2 * (x - t) * _reduced_ct(ct, x, reduction)))
MSE_LOSS = O.Op("mse_loss", mse_loss_p, "MseLossBackward0")


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
BCE = O.Op("binary_cross_entropy", bce_p, "BinaryCrossEntropyBackward0")


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
                  "BinaryCrossEntropyWithLogitsBackward0")


def binary_cross_entropy_with_logits(x: Tensor, t: Tensor, weight, pos_weight,
                                     reduction: str) -> Tensor:
    """Sigmoid plus binary cross-entropy (``BinaryCrossEntropyWithLogitsBackward0``)."""
    return apply(BCE_LOGITS, (x, t), {"weight": weight, "pos_weight": pos_weight,
                                      "reduction": reduction})


# --- embedding: rows of a table picked by integer indices ----------------------------------
def _embedding_impl(weight, indices, padding_idx):
    return weight[indices]


def _embedding_vjp(ct, out, weight, indices, padding_idx):
    if padding_idx is not None:  # the padding row gets no gradient
        ct = NP.multiply(ct, (indices != padding_idx)[..., None].astype(H.dtype(ct)))
    template, arrays = H.split_index((indices,))
    return NP.index_add(NP.zeros_like(weight), ct, *arrays, template=template)


embedding_p = primitive("embedding", _embedding_impl, params=("indices", "padding_idx"),
                        vjps=(_embedding_vjp,))
EMBEDDING = O.Op("embedding", embedding_p, "EmbeddingBackward0", result="same")


def embedding(weight: Tensor, indices: np.ndarray, padding_idx: int | None) -> Tensor:
    """``weight[indices]`` as one node (``EmbeddingBackward0``); repeated indices add up."""
    return apply(EMBEDDING, (weight,), {"indices": indices, "padding_idx": padding_idx})


# --- convolution: every output pixel a dot product with its input patch --------------------
# A patch is gathered with index arrays `rows` (kh, 1, oh, 1) and `cols` (1, kw, 1, ow) into
# the unpadded input (clamped), times `mask` (kh, kw, oh, ow), zero where the window lies on
# padding: x[:, :, rows, cols] * mask is (N, C, kh, kw, oh, ow). The input's cotangent
# scatters the patches' cotangents back with the same indices (overlaps add up).
def _patch_index(rows, cols):
    return H.split_index((slice(None), slice(None), rows, cols))


def _conv_impl(x, weight, bias, rows, cols, mask, groups):
    n, c = x.shape[:2]
    o, cg, kh, kw = weight.shape
    oh, ow = mask.shape[2:]
    patches = x[:, :, rows, cols] * mask.astype(x.dtype)
    patches = patches.reshape(n, groups, cg * kh * kw, oh * ow)
    kernels = weight.reshape(groups, o // groups, cg * kh * kw)
    out = np.matmul(kernels, patches).reshape(n, o, oh, ow)
    return out if bias is None else out + bias.reshape(1, o, 1, 1)


def _conv_impl_biased(x, weight, bias, rows, cols, mask, groups):
    return _conv_impl(x, weight, bias, rows, cols, mask, groups)


def _conv_impl_unbiased(x, weight, rows, cols, mask, groups):
    return _conv_impl(x, weight, None, rows, cols, mask, groups)


def _grouped_ct(ct, groups):
    n, o, oh, ow = H.shape(ct)
    return NP.reshape(ct, (n, groups, o // groups, oh * ow))


def _conv_vjp_x(ct, out, x, weight, *rest, rows, cols, mask, groups):
    n, c, h, w = H.shape(x)
    o, cg, kh, kw = H.shape(weight)
    kernels = NP.reshape(weight, (groups, o // groups, cg * kh * kw))
    per_patch = NP.matmul(NP.transpose(kernels, (0, 2, 1)), _grouped_ct(ct, groups))
    per_patch = NP.reshape(per_patch, (n, c, kh, kw) + mask.shape[2:])
    per_patch = NP.multiply(per_patch, mask.astype(H.dtype(ct)))
    template, arrays = _patch_index(rows, cols)
    return NP.index_add(NP.zeros_like(x), per_patch, *arrays, template=template)


def _conv_vjp_w(ct, out, x, weight, *rest, rows, cols, mask, groups):
    n = H.shape(x)[0]
    o, cg, kh, kw = H.shape(weight)
    template, arrays = _patch_index(rows, cols)
    patches = NP.multiply(NP.getitem(x, *arrays, template=template), mask.astype(H.dtype(x)))
    patches = NP.reshape(patches, (n, groups, cg * kh * kw, -1))
    per_sample = NP.matmul(_grouped_ct(ct, groups), NP.transpose(patches, (0, 1, 3, 2)))
    return NP.reshape(NP.sum(per_sample, axis=0), (o, cg, kh, kw))


def _conv_vjp_b(ct, out, x, weight, bias, rows, cols, mask, groups):
    return NP.sum(ct, axis=(0, 2, 3))


_CONV_PARAMS = ("rows", "cols", "mask", "groups")
conv_p = primitive("convolution", _conv_impl_biased, nargs=3, params=_CONV_PARAMS,
                   vjps=(_conv_vjp_x, _conv_vjp_w, _conv_vjp_b))
conv_nobias_p = primitive("convolution_nobias", _conv_impl_unbiased, nargs=2,
                          params=_CONV_PARAMS, vjps=(_conv_vjp_x, _conv_vjp_w))
_CONV_NODE = T.extra_node("_saved_bias_sym_sizes_opt", "_saved_stride", "_saved_padding",
                          "_saved_dilation", "_saved_transposed", "_saved_output_padding")
CONV = O.Op("convolution", conv_p, "ConvolutionBackward0", node_base=_CONV_NODE)
CONV_NOBIAS = O.Op("convolution", conv_nobias_p, "ConvolutionBackward0", node_base=_CONV_NODE)


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None, rows: np.ndarray, cols: np.ndarray,
           mask: np.ndarray, groups: int, stride=(1, 1), padding=(0, 0),
           dilation=(1, 1)) -> Tensor:
    """Batched 2-d cross-correlation over the patches `rows`, `cols`, `mask` describe
    (``ConvolutionBackward0``; `stride`, `padding`, `dilation` as the node shows them)."""
    params = {"rows": rows, "cols": cols, "mask": mask, "groups": groups}
    if bias is None:
        out = apply(CONV_NOBIAS, (x, weight), params)
    else:
        out = apply(CONV, (x, weight, bias), params)
    # PyTorch shows (0,) for a missing bias (its own test notes the quirk)
    T.stash(out, _saved_bias_sym_sizes_opt=(0,) if bias is None else tuple(bias.shape),
            _saved_stride=tuple(stride), _saved_padding=tuple(padding),
            _saved_dilation=tuple(dilation), _saved_transposed=False,
            _saved_output_padding=(0, 0))
    return out


# --- max pooling: each output the input element at a flat index chosen by the forward ------
def _plane_index(planes, index):
    """Index arrays picking, in a (planes, H * W) array, each plane's elements at `index`."""
    return H.split_index((np.arange(planes).reshape(planes, 1), index.reshape(planes, -1)))


def _max_pool_impl(x, index):
    h, w = x.shape[-2:]
    planes = x.reshape(-1, h * w)
    return np.take_along_axis(planes, index.reshape(len(planes), -1), 1).reshape(index.shape)


def _max_pool_vjp(ct, out, x, index):
    shape = H.shape(x)
    planes = NP.reshape(x, (-1, shape[-2] * shape[-1]))
    template, arrays = _plane_index(H.shape(planes)[0], index)
    flat = NP.index_add(NP.zeros_like(planes), NP.reshape(ct, (H.shape(planes)[0], -1)),
                        *arrays, template=template)
    return NP.reshape(flat, shape)


max_pool_p = primitive("max_pool2d_with_indices", _max_pool_impl, params=("index",),
                       vjps=(_max_pool_vjp,))
MAX_POOL2D = O.Op("max_pool2d", max_pool_p, "MaxPool2DWithIndicesBackward0", result="same")


def max_pool2d(x: Tensor, index: np.ndarray) -> Tensor:
    """(..., H, W) -> the elements at flat positions `index` (..., oh, ow) of each plane
    (``MaxPool2DWithIndicesBackward0``)."""
    return apply(MAX_POOL2D, (x,), {"index": index})


# --- average pooling: separable, out = rows @ x @ cols.T over the last two dimensions -------
def _average_impl(x, rows, cols):
    return np.matmul(np.matmul(rows.astype(x.dtype), x), cols.T.astype(x.dtype))


def _average_t(ct, out, x, rows, cols):
    dt = H.dtype(ct)
    return NP.matmul(NP.matmul(rows.T.astype(dt), ct), cols.astype(dt))


average_p = linear("separable_average", _average_impl, _average_t, params=("rows", "cols"))
AVG_POOL2D = O.Op("avg_pool2d", average_p, "AvgPool2DBackward0", result="same")
ADAPTIVE_AVG_POOL2D = O.Op("adaptive_avg_pool2d", average_p, "AdaptiveAvgPool2DBackward0",
                           result="same")


def average_pool2d(x: Tensor, rows: np.ndarray, cols: np.ndarray, adaptive: bool) -> Tensor:
    """Window means as ``rows @ x @ cols.T`` (rows: (oh, H) weights, cols: (ow, W)), named
    ``AvgPool2DBackward0`` or ``AdaptiveAvgPool2DBackward0``."""
    return apply(ADAPTIVE_AVG_POOL2D if adaptive else AVG_POOL2D, (x,),
                 {"rows": rows, "cols": cols})


# --- threshold: x where x > threshold, else value ------------------------------------------
def _threshold_impl(x, threshold, value):
    if type(value) is complex and x.dtype.kind != "c":
        value = value.real  # a complex Scalar is accepted for a real input (PyTorch)
    return np.where(x > threshold, x, np.asarray(value, x.dtype))


def _threshold_backward_impl(ct, x, threshold):
    return np.where(x > threshold, ct, np.zeros((), ct.dtype))


def _threshold_backward_in_ct(g, out, ct, x, threshold):
    return threshold_backward_p(g, x, threshold=threshold)


def _no_derivative(g, out, ct, x, threshold):
    return None  # `x` only chooses where ct passes: its derivative is zero


# The rule as one primitive (linear in `ct`; `x` only masks), so that under create_graph
# it records one node, ``ThresholdBackwardBackward0``, as PyTorch's
threshold_backward_p = primitive("threshold_backward", _threshold_backward_impl, nargs=2,
                                 params=("threshold",),
                                 vjps=(_threshold_backward_in_ct, _no_derivative),
                                 jvps=(_threshold_backward_in_ct, _no_derivative))


def _no_derivative_2(g, out, ct, x, negative_slope, self_is_result):
    return None  # `x` only chooses the slope: its derivative is zero


def _threshold_vjp(ct, out, x, threshold, value):
    return threshold_backward_p(ct, x, threshold=threshold)


threshold_p = primitive("threshold", _threshold_impl, params=("threshold", "value"),
                        vjps=(_threshold_vjp,))
THRESHOLD = O.Op("threshold", threshold_p, "ThresholdBackward0", result="same")
THRESHOLD_ = O.Op("threshold_", threshold_p, "ThresholdBackward1", result="same")


def threshold(x: Tensor, threshold: float, value: float, inplace: bool) -> Tensor:
    """``x if x > threshold else value`` (``ThresholdBackward0``; in place ``...1``)."""
    params = {"threshold": threshold, "value": value}
    if inplace:
        return O.inplace(THRESHOLD_, x, (), params)
    return apply(THRESHOLD, (x,), params)


# --- leaky_relu and rrelu ------------------------------------------------------------------
_LEAKY_INPLACE_NEGATIVE = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
    "backward calculation with negative slope")


def _leaky_impl(x, negative_slope):
    return np.where(x > 0, x, x * np.asarray(negative_slope, x.dtype))


def _leaky_backward_impl(ct, x, negative_slope, self_is_result):
    if self_is_result and negative_slope < 0:
        # from the result alone the sign of the input is lost when the slope is negative
        raise RuntimeError(_LEAKY_INPLACE_NEGATIVE)
    return np.where(x > 0, ct, ct * np.asarray(negative_slope, ct.dtype))


def _leaky_backward_in_ct(g, out, ct, x, negative_slope, self_is_result):
    return leaky_relu_backward_p(g, x, negative_slope=negative_slope, self_is_result=False)


# the rule as one primitive (linear in ct; x only chooses the slope), recorded under
# create_graph as torch's LeakyReluBackwardBackward0
leaky_relu_backward_p = primitive(
    "leaky_relu_backward", _leaky_backward_impl, nargs=2,
    params=("negative_slope", "self_is_result"),
    vjps=(_leaky_backward_in_ct, _no_derivative_2),
    jvps=(_leaky_backward_in_ct, _no_derivative_2))
leaky_relu_p = primitive(
    "leaky_relu", _leaky_impl, params=("negative_slope",),
    vjps=(lambda ct, out, x, negative_slope: leaky_relu_backward_p(
        ct, x, negative_slope=negative_slope, self_is_result=False),))
# in place, torch saves the result (the input is gone), so a negative slope cannot be undone
leaky_relu_inplace_p = primitive(
    "leaky_relu_", _leaky_impl, params=("negative_slope",),
    vjps=(lambda ct, out, x, negative_slope: leaky_relu_backward_p(
        ct, out, negative_slope=negative_slope, self_is_result=True),))
LEAKY_RELU = O.Op("leaky_relu", leaky_relu_p, "LeakyReluBackward0", result="same")
LEAKY_RELU_ = O.Op("leaky_relu_", leaky_relu_inplace_p, "LeakyReluBackward1", result="same",
                   saves_out=True)
# rrelu outside training is leaky_relu at the mean slope, under torch's rrelu node names
RRELU_EVAL = O.Op("rrelu_eval", leaky_relu_p, "RreluWithNoiseBackward0", result="same")
RRELU_EVAL_ = O.Op("rrelu_eval_", leaky_relu_inplace_p, "RreluWithNoiseBackward1",
                   result="same", saves_out=True)


def _float_only(name: str, x: Tensor) -> None:
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{x._dtype.tensor_type[:-6]}'")


def leaky_relu(x: Tensor, negative_slope: float, inplace: bool) -> Tensor:
    """x where x > 0, ``negative_slope * x`` elsewhere (``LeakyReluBackward0``; in place
    ``...1``, whose backward refuses a negative slope as torch's)."""
    _float_only("leaky_relu_cpu", x)
    params = {"negative_slope": float(negative_slope)}
    if inplace:
        return O.inplace(LEAKY_RELU_, x, (), params)
    return apply(LEAKY_RELU, (x,), params)


def _noise_impl(x, noise):
    return x * noise


rrelu_train_p = primitive("rrelu_with_noise", _noise_impl, params=("noise",),
                          vjps=(lambda ct, out, x, noise: ct * noise,), linear=True)
RRELU_TRAIN = O.Op("rrelu_train", rrelu_train_p, "RreluWithNoiseBackward0", result="same")
RRELU_TRAIN_ = O.Op("rrelu_train_", rrelu_train_p, "RreluWithNoiseBackward1", result="same")


def rrelu(x: Tensor, lower: float, upper: float, training: bool, inplace: bool,
          noise: np.ndarray | None) -> Tensor:
    """x where x > 0; elsewhere x times a slope: `noise` (drawn by the caller) in training,
    the mean of `lower` and `upper` otherwise."""
    _float_only("rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu", x)
    if training:
        params = {"noise": noise}
        return O.inplace(RRELU_TRAIN_, x, (), params) if inplace else \
            apply(RRELU_TRAIN, (x,), params)
    params = {"negative_slope": (lower + upper) / 2}
    return O.inplace(RRELU_EVAL_, x, (), params) if inplace else apply(RRELU_EVAL, (x,), params)


# --- resampling (interpolate's nearest and linear modes): one matrix per resized dim ----------
def _resample_impl(x, mats):
    """`x` with its last ``len(mats)`` dims each mapped by a (new size, old size) matrix."""
    first = x.ndim - len(mats)
    for k, m in enumerate(mats):
        x = np.swapaxes(np.swapaxes(x, first + k, -1) @ m.T.astype(x.dtype, copy=False),
                        first + k, -1)
    return x


def _resample_t(ct, out, x, mats):
    return resample_p(ct, mats=tuple(m.T for m in mats))


# linear in x, its transpose is itself with the matrices transposed (so create_graph works)
resample_p = linear("resample", _resample_impl, _resample_t, params=("mats",))
_RESAMPLE_OPS: dict = {}


def _resample_op(name: str, scale_names: tuple, align: bool) -> O.Op:
    op = _RESAMPLE_OPS.get(name)
    if op is None:
        names = ("_saved_output_size",) + scale_names + (("_saved_align_corners",) if align else ())
        op = _RESAMPLE_OPS[name] = O.Op(name, resample_p, name, result="same",
                                        node_base=T.extra_node(*names))
    return op


def resample(x: Tensor, mats: tuple, grad_fn: str, output_size: tuple, scales: tuple,
             align_corners) -> Tensor:
    """Resize `x`'s trailing dims by the matrices `mats` (node `grad_fn`, PyTorch's
    ``UpsampleLinear1DBackward0``..., showing `output_size`, `scales`, `align_corners`)."""
    scale_names = (("_saved_scales",) if len(mats) == 1 else
                   tuple("_saved_scales_" + d for d in "dhw"[3 - len(mats):]))
    op = _resample_op(grad_fn, scale_names, align_corners is not None)
    out = apply(op, (x,), {"mats": tuple(mats)})
    extra = dict(zip(scale_names, scales))
    extra["_saved_output_size"] = tuple(output_size)
    if align_corners is not None:
        extra["_saved_align_corners"] = align_corners
    T.stash(out, **extra)
    return out


# --- unfold (im2col): each sliding block of the (padded) input as a column ------------------
def _im2col_impl(x, rows, cols, mask):
    lead = x.shape[:-2]
    kh, kw, oh, ow = mask.shape
    patches = x[..., rows, cols] * mask.astype(x.dtype)  # (..., C, kh, kw, oh, ow)
    return patches.reshape(lead[:-1] + (lead[-1] * kh * kw, oh * ow))


def _im2col_t(ct, out, x, rows, cols, mask):
    shape = H.shape(x)
    per_patch = NP.reshape(ct, shape[:-2] + mask.shape)
    per_patch = NP.multiply(per_patch, mask.astype(H.dtype(ct)))
    template, arrays = H.split_index((Ellipsis, rows, cols))
    return NP.index_add(NP.zeros_like(x), per_patch, *arrays, template=template)


im2col_p = linear("im2col", _im2col_impl, _im2col_t, params=("rows", "cols", "mask"))
IM2COL = O.Op("im2col", im2col_p, "Im2ColBackward0", result="same", node_base=T.extra_node(
    "_saved_kernel_size", "_saved_dilation", "_saved_padding", "_saved_stride",
    "_saved_self_sym_argsize_minus_1", "_saved_self_sym_argsize_minus_2"))


def im2col(x: Tensor, rows: np.ndarray, cols: np.ndarray, mask: np.ndarray, kernel_size: tuple,
           dilation: tuple, padding: tuple, stride: tuple) -> Tensor:
    """The (C * kh * kw, blocks) columns of each of `x`'s (C, H, W) planes
    (``Im2ColBackward0``)."""
    out = apply(IM2COL, (x,), {"rows": rows, "cols": cols, "mask": mask})
    T.stash(out, _saved_kernel_size=kernel_size, _saved_dilation=dilation,
            _saved_padding=padding, _saved_stride=stride,
            _saved_self_sym_argsize_minus_1=x.shape[-1],
            _saved_self_sym_argsize_minus_2=x.shape[-2])
    return out


# --- p-norm distances (pdist, cdist): the norm along the last axis and its slope -----------
def _p_norm_last(diff, p, dtype):
    """The p-norm of each row of `diff` along its last axis (p = 0 counts the nonzeros), in
    `dtype`: pdist's and cdist's distances."""
    diff = np.abs(diff)
    if p == 0:
        d = np.sum(diff != 0, axis=-1).astype(dtype)
    elif p == np.inf:
        d = np.max(diff, axis=-1, initial=0)
    elif p == 1:
        d = np.sum(diff, axis=-1)
    elif p == 2:
        d = np.sqrt(np.sum(diff * diff, axis=-1))
    else:
        d = np.sum(diff ** p, axis=-1) ** (1.0 / p)
    return np.asarray(d, dtype=dtype)


def _p_norm_slope(diff, dist, p):
    """d dist / d x1 for each pair (x1 - x2 = diff), 0 where the distance is 0: cdist's and
    pdist's backward."""
    zero = dist == 0
    safe = np.where(zero, 1, dist)
    with np.errstate(all="ignore"):
        if p == 0:
            slope = np.zeros_like(diff)
        elif p == 1:
            slope = np.sign(diff)
        elif p == 2:
            slope = diff / safe
        elif p == np.inf:
            slope = np.sign(diff) * (np.abs(diff) == dist)
        else:
            slope = np.sign(diff) * np.abs(diff) ** (p - 1) / safe ** (p - 1)
    return np.where(zero, 0, slope)


# --- pdist: p-norm distances between the rows, pair (i, j) for i < j in row-major order ------
def _pdist_impl(x, p, pairs):
    first, second = pairs
    return _p_norm_last(x[first] - x[second], p, x.dtype)


def _pdist_backward_impl(ct, x, out, p, pairs):
    """PyTorch's _pdist_backward: each pair's slope spread back to its two rows."""
    first, second = pairs
    if p == 0:
        return np.zeros_like(x)
    slope = _p_norm_slope(x[first] - x[second], np.reshape(out, (-1, 1)), p)
    slope = slope * np.reshape(ct, (-1, 1))
    grad = np.zeros(x.shape, np.result_type(x, slope))
    np.add.at(grad, first, slope)
    np.add.at(grad, second, -slope)
    return np.asarray(grad, dtype=x.dtype)


def _pdist_backward_not_differentiable(ct, out, g, x, dist, p, pairs):
    raise NotImplementedError("the derivative for '_pdist_backward' is not implemented.")


# PyTorch has no formula for pdist's backward: its double backward fails at the
# PdistBackwardBackward0 node, as here (one primitive, so create_graph records that node)
pdist_backward_p = primitive("pdist_backward", _pdist_backward_impl, nargs=3,
                             params=("p", "pairs"),
                             vjps=(_pdist_backward_not_differentiable,) * 3)


def _pdist_vjp(ct, out, x, p, pairs):
    return pdist_backward_p(ct, x, out, p, pairs)


pdist_p = primitive("pdist", _pdist_impl, params=("p", "pairs"), vjps=(_pdist_vjp,))
PDIST = O.Op("pdist", pdist_p, "PdistBackward0", result="same", saves_out=True)


def pdist(x: Tensor, p: float) -> Tensor:
    """The p-norm distance of every pair of `x`'s rows (``PdistBackward0``)."""
    # the pairs as two row-index arrays (a dense pair-by-row matrix would be n^3 / 2 numbers)
    return apply(PDIST, (x,), {"p": float(p), "pairs": np.triu_indices(x.shape[0], 1)})


# --- cdist: p-norm distance of every row of x1 to every row of x2 (batched) -----------------
def _sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """`g` summed over the batch dims that were broadcast to reach it from `shape`."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    ones = tuple(k for k, n in enumerate(shape[:-2]) if n == 1 and g.shape[k] != 1)
    return g.sum(axis=ones, keepdims=True) if ones else g


def _cdist_impl(x1, x2, p):
    return _p_norm_last(x1[..., :, None, :] - x2[..., None, :, :], p, x1.dtype)


def _cdist_backward_impl(ct, x1, x2, out, p, which):
    """torch's _cdist_backward: the gradient of x1 (`which` 0) or of x2 (1)."""
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    slope = _p_norm_slope(diff, out[..., None], p) * ct[..., None]
    if which == 0:
        return np.asarray(_sum_to(slope.sum(axis=-2), x1.shape), dtype=x1.dtype)
    return np.asarray(_sum_to(-slope.sum(axis=-3), x2.shape), dtype=x2.dtype)


def _cdist_backward_not_differentiable(g, out, ct, x1, x2, dist, p, which):
    raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


# as pdist: torch has no formula for cdist's backward, whose double backward fails at
# CdistBackwardBackward0 (one primitive, so create_graph records that node)
cdist_backward_p = primitive("cdist_backward", _cdist_backward_impl, nargs=4,
                             params=("p", "which"),
                             vjps=(_cdist_backward_not_differentiable,) * 4)
cdist_p = primitive("cdist", _cdist_impl, nargs=2, params=("p",), vjps=(
    lambda ct, out, x1, x2, p: cdist_backward_p(ct, x1, x2, out, p=p, which=0),
    lambda ct, out, x1, x2, p: cdist_backward_p(ct, x1, x2, out, p=p, which=1)))
CDIST = O.Op("cdist", cdist_p, "CdistBackward0", result="same", saves_out=True)


def _euclid_impl(x1, x2):
    # torch's matrix-product form: |a|^2 + |b|^2 - 2 a.b, clamped at 0 (rounding), rooted
    square = (np.sum(x1 * x1, axis=-1)[..., :, None] + np.sum(x2 * x2, axis=-1)[..., None, :]
              - 2 * (x1 @ np.swapaxes(x2, -1, -2)))
    return np.sqrt(np.maximum(square, 0)).astype(x1.dtype)


def _euclid_ratio(ct, out):
    """ct / out, 0 where the distance is 0 (no division by it, so no nan downstream)."""
    zero = NP.equal(out, 0)
    return NP.where(zero, 0.0, ct / NP.where(zero, 1.0, out))


def _euclid_vjp_x1(ct, out, x1, x2):
    r = _euclid_ratio(ct, out)
    g = x1 * NP.sum(r, axis=-1, keepdims=True) - NP.matmul(r, x2)
    return NP.sum_to_shape(g, H.shape(x1))


def _euclid_vjp_x2(ct, out, x1, x2):
    r = _euclid_ratio(ct, out)
    g = x2 * NP.expand_axis(NP.sum(r, axis=-2), -1) - NP.matmul(NP.swapaxes(r, -1, -2), x1)
    return NP.sum_to_shape(g, H.shape(x2))


# torch's _euclidean_dist (p = 2 with more than 25 rows): its rule is written with
# primitives, so it is differentiable again (torch's is a composite)
euclid_p = primitive("euclidean_dist", _euclid_impl, nargs=2,
                     vjps=(_euclid_vjp_x1, _euclid_vjp_x2))
EUCLID = O.Op("euclidean_dist", euclid_p, "EuclideanDistBackward0", result="same",
              saves_out=True)
_CDIST_MODES = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _legacy_type(t: Tensor) -> str:
    return t._dtype.tensor_type[:-6]


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """``torch.cdist``: the p-norm distance between each row of `x1` and each row of `x2`
    (batch dims broadcast): ``CdistBackward0``, or for p = 2 with more than 25 rows (or
    ``compute_mode='use_mm_for_euclid_dist'``) torch's matrix-product form,
    ``EuclideanDistBackward0`` under a ``ViewBackward0``.

    >>> import funcgrad.mutable as torch
    >>> torch.cdist(torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t.dim()}D")
        if not t._dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_legacy_type(t)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1._dtype is not x2._dtype:
        raise RuntimeError(f"expected scalar type {_legacy_type(x1)} but found "
                           f"{_legacy_type(x2)}")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    batch = O.broadcast_shape(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    mode = _CDIST_MODES[compute_mode]
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    if float(p) == 2.0 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25))):
        out = apply(EUCLID, (x1, x2), {})
        return out.view(batch + (rows1, rows2))
    return apply(CDIST, (x1, x2), {"p": float(p)})


# --- ctc_loss: the negative log-likelihood of each target under monotonic alignments --------
def _ctc_tables(lp, targets, input_lengths, target_lengths, blank):
    """The extended labels (blank, l1, blank, l2, ..., blank) of each batch element, the
    log-probabilities of those labels at each time (T, N, 2S+1), and where a label may be
    reached by skipping the blank before it."""
    n_batch = lp.shape[1]
    width = 2 * int(max(target_lengths, default=0)) + 1
    ext = np.full((n_batch, width), blank, np.int64)
    for n in range(n_batch):
        ext[n, 1:2 * target_lengths[n]:2] = targets[n][:target_lengths[n]]
    lp_ext = np.take_along_axis(lp, np.broadcast_to(ext[None], (lp.shape[0],) + ext.shape),
                                axis=2)
    skip = np.zeros(ext.shape, bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, lp_ext, skip


def _shifted(a, k):
    """`a` moved `k` places right along its last axis, -inf coming in."""
    out = np.full(a.shape, -np.inf)
    out[..., k:] = a[..., :-k]
    return out


def _ctc_alpha(lp_ext, skip, target_lengths):
    alpha = np.full(lp_ext.shape, -np.inf)
    alpha[0, :, 0] = lp_ext[0, :, 0]
    has = np.asarray(target_lengths) > 0
    if has.any():
        alpha[0, has, 1] = lp_ext[0, has, 1]
    for t in range(1, lp_ext.shape[0]):
        prev = alpha[t - 1]
        two = np.where(skip, _shifted(prev, 2), -np.inf)
        alpha[t] = np.logaddexp(np.logaddexp(prev, _shifted(prev, 1)), two) + lp_ext[t]
    return alpha


def _ctc_beta(lp_ext, skip, input_lengths, target_lengths):
    beta = np.full(lp_ext.shape, -np.inf)
    ends = 2 * np.asarray(target_lengths)
    for t in range(lp_ext.shape[0] - 1, -1, -1):
        last = np.asarray(input_lengths) - 1 == t
        if t + 1 < lp_ext.shape[0]:
            nxt = beta[t + 1]
            one = np.full(nxt.shape, -np.inf)
            one[:, :-1] = nxt[:, 1:]
            two = np.full(nxt.shape, -np.inf)
            two[:, :-2] = np.where(skip[:, 2:], nxt[:, 2:], -np.inf)
            beta[t] = np.logaddexp(np.logaddexp(nxt, one), two) + lp_ext[t]
        for n in np.nonzero(last)[0]:
            beta[t, n] = -np.inf
            beta[t, n, ends[n]] = lp_ext[t, n, ends[n]]
            if ends[n] > 0:
                beta[t, n, ends[n] - 1] = lp_ext[t, n, ends[n] - 1]
    return beta


def _ctc_nll(alpha, input_lengths, target_lengths):
    n = np.arange(alpha.shape[1])
    last = alpha[np.asarray(input_lengths) - 1, n]
    ends = 2 * np.asarray(target_lengths)
    end = last[n, ends]
    before = np.where(ends > 0, last[n, np.maximum(ends - 1, 0)], -np.inf)
    return -np.logaddexp(end, before)


def _ctc_impl(lp, targets, input_lengths, target_lengths, blank, zero_infinity):
    work = lp.astype(np.float64)
    ext, lp_ext, skip = _ctc_tables(work, targets, input_lengths, target_lengths, blank)
    nll = _ctc_nll(_ctc_alpha(lp_ext, skip, target_lengths), input_lengths, target_lengths)
    if zero_infinity:
        nll = np.where(np.isinf(nll), 0.0, nll)
    return nll.astype(lp.dtype)


def _ctc_backward_impl(ct, lp, targets, input_lengths, target_lengths, blank, zero_infinity):
    """d nll / d log_probs[t, n, c] = -sum over positions s labelled c of
    exp(alpha + beta - log_probs[t, n, c] + nll), for t inside the input; 0 elsewhere (and
    for an infinite loss with zero_infinity). torch's kernel adds exp(log_probs), a term that
    vanishes only after a log_softmax: this is the derivative of the function computed."""
    work = lp.astype(np.float64)
    ext, lp_ext, skip = _ctc_tables(work, targets, input_lengths, target_lengths, blank)
    alpha = _ctc_alpha(lp_ext, skip, target_lengths)
    beta = _ctc_beta(lp_ext, skip, input_lengths, target_lengths)
    nll = _ctc_nll(alpha, input_lengths, target_lengths)
    with np.errstate(invalid="ignore", over="ignore"):
        share = np.exp(alpha + beta - lp_ext + nll[None, :, None])  # (T, N, 2S+1)
    share = np.where(np.isfinite(share), share, 0.0)
    inside = np.arange(lp.shape[0])[:, None] < np.asarray(input_lengths)[None, :]
    share = share * inside[..., None]
    grad = np.zeros(work.shape)
    t_idx, n_idx, _ = np.indices(share.shape)
    np.add.at(grad, (t_idx, n_idx, np.broadcast_to(ext[None], share.shape)), share)
    grad = -grad * np.asarray(ct, np.float64)[None, :, None]
    if zero_infinity:
        grad = np.where(np.isinf(nll)[None, :, None], 0.0, grad)
    else:
        grad = np.where(np.isinf(nll)[None, :, None], np.nan, grad)
    return grad.astype(lp.dtype)


def _ctc_backward_not_implemented(g, out, ct, lp, *args, **kwargs):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


ctc_backward_p = primitive("ctc_loss_backward", _ctc_backward_impl, nargs=2,
                           params=("targets", "input_lengths", "target_lengths", "blank",
                                   "zero_infinity"),
                           vjps=(_ctc_backward_not_implemented,) * 2)
# recorded under create_graph as torch's NotImplemented node
O._GENERIC[ctc_backward_p] = O.Op("ctc_loss_backward", ctc_backward_p, "NotImplemented",
                                  [()], result="keep")
def _ctc_vjp(ct, out, lp, targets, input_lengths, target_lengths, blank, zero_infinity):
    return ctc_backward_p(ct, lp, targets=targets, input_lengths=input_lengths,
                          target_lengths=target_lengths, blank=blank,
                          zero_infinity=zero_infinity)


ctc_p = primitive("ctc_loss", _ctc_impl,
                  params=("targets", "input_lengths", "target_lengths", "blank", "zero_infinity"),
                  vjps=(_ctc_vjp,))
CTC = O.Op("ctc_loss", ctc_p, "CtcLossBackward0", result="same", saves_out=True)


def ctc_loss(log_probs: Tensor, targets: np.ndarray, input_lengths: tuple,
             target_lengths: tuple, blank: int, zero_infinity: bool) -> Tensor:
    """Per batch element CTC loss of (T, N, C) `log_probs` (``CtcLossBackward0``)."""
    params = {"targets": targets, "input_lengths": tuple(input_lengths),
              "target_lengths": tuple(target_lengths), "blank": int(blank),
              "zero_infinity": bool(zero_infinity)}
    return apply(CTC, (log_probs,), params)


# --- pad: constant (ConstantPadNd), reflect and replicate (a gather of source indices) -------
def _constant_pad_impl(x, pads, value):
    # negative amounts crop first, then NumPy pads the positive ones
    crop = tuple(slice(max(-a, 0), n - max(-b, 0)) for (a, b), n in zip(pads, x.shape))
    width = tuple((max(a, 0), max(b, 0)) for a, b in pads)
    return np.pad(x[crop], width, constant_values=np.asarray(value).astype(x.dtype))


# padding's transpose is the opposite padding (a crop undoes a pad and a zero pad a crop)
constant_pad_p = linear(
    "constant_pad_nd", _constant_pad_impl,
    lambda ct, out, x, pads, value: constant_pad_p(
        ct, pads=tuple((-a, -b) for a, b in pads), value=0),
    params=("pads", "value"))
CONSTANT_PAD = O.Op("constant_pad_nd", constant_pad_p, "ConstantPadNdBackward0", result="same")


def _gather_pad_impl(x, sources):
    for dim, idx in sources:
        x = np.take(x, idx, axis=dim)
    return x


def _scatter_pad_impl(ct, shape, sources):
    for k in range(len(sources) - 1, -1, -1):
        dim, idx = sources[k]
        size = shape[dim]  # (each source dim is a different dim: its size is the input's)
        g = np.zeros(ct.shape[:dim] + (size,) + ct.shape[dim + 1:], ct.dtype)
        np.add.at(np.moveaxis(g, dim, 0), idx, np.moveaxis(ct, dim, 0))
        ct = g
    return ct


scatter_pad_p = linear(
    "pad_backward", _scatter_pad_impl,
    lambda ct, out, g, shape, sources: gather_pad_p(ct, sources=sources),
    params=("shape", "sources"))
gather_pad_p = linear(
    "pad", _gather_pad_impl,
    lambda ct, out, x, sources: scatter_pad_p(ct, shape=tuple(H.shape(x)), sources=sources),
    params=("sources",))
_PAD_OPS = {(mode, k): O.Op(f"{mode}_pad{k}d", gather_pad_p,
                            f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{k}DBackward0",
                            result="same")
            for mode in ("reflect", "replicate") for k in (1, 2, 3)}


def pad(x: Tensor, pad: tuple, mode: str, value) -> Tensor:
    """`x` padded on its last len(pad) // 2 dims (the last dim first, (before, after) pairs)."""
    nd = x.dim()
    pairs = [(int(pad[2 * k]), int(pad[2 * k + 1])) for k in range(len(pad) // 2)]
    dims = [nd - 1 - k for k in range(len(pairs))]
    if mode == "constant":
        per_dim = [(0, 0)] * nd
        for d, pr in zip(dims, pairs):
            per_dim[d] = pr
        return apply(CONSTANT_PAD, (x,), {"pads": tuple(per_dim),
                                          "value": 0 if value is None else value})
    sources = []
    for d, (a, b) in zip(dims, pairs):
        n = x.shape[d]
        if mode == "reflect" and (a >= n or b >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({a}, {b}) at "
                               f"dimension {d} of input {list(x.shape)}")
        j = np.arange(-a, n + b)
        if mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            j = np.abs(np.mod(j, period))
            j = np.where(j >= n, period - j, j)
        else:
            j = np.clip(j, 0, n - 1)
        sources.append((d, j))
    return apply(_PAD_OPS[(mode, len(pairs))], (x,), {"sources": tuple(sources)})


# --- _foreach_maximum / _foreach_minimum with numbers ---------------------------------------
def _extreme_scalar_impl(x, scalar, largest):
    s = np.asarray(scalar, dtype=x.dtype)
    return np.maximum(x, s) if largest else np.minimum(x, s)


def _extreme_scalar_vjp(ct, out, x, scalar, largest):
    # PyTorch's: the whole gradient where x wins, half at a tie
    wins = NP.greater(x, scalar) if largest else NP.less(x, scalar)
    tie = NP.equal(x, scalar)
    dt = H.dtype(x)
    return ct * (NP.astype(wins, dt) + 0.5 * NP.astype(tie, dt))


extreme_scalar_p = primitive("foreach_extreme", _extreme_scalar_impl,
                             params=("scalar", "largest"), vjps=(_extreme_scalar_vjp,))
_FOREACH_OPS = {(largest, many): O.Op(
    "foreach_extreme", extreme_scalar_p,
    f"Foreach{'Maximum' if largest else 'Minimum'}Backward{int(many)}", result="same",
    node_base=T.extra_node("_saved_scalars" if many else "_saved_scalar"))
    for largest in (True, False) for many in (True, False)}


def foreach_extreme(tensors, scalars, largest: bool) -> tuple:
    """torch._foreach_maximum / _foreach_minimum of tensors against a number or one number
    per tensor (``ForeachMaximumBackward0`` / ``...Backward1``)."""
    many = isinstance(scalars, (list, tuple))
    if many and len(scalars) != len(tensors):
        raise RuntimeError(f"Tensor list must have same number of elements as scalar list, got "
                           f"{len(tensors)} and {len(scalars)}")
    op = _FOREACH_OPS[(largest, many)]
    out = []
    for k, t in enumerate(tensors):
        s = scalars[k] if many else scalars
        r = apply(op, (t,), {"scalar": s, "largest": largest})
        if many:
            T.stash(r, _saved_scalars=tuple(scalars))
        else:
            T.stash(r, _saved_scalar=scalars)
        out.append(r)
    return tuple(out)
