"""torch.nn.functional: activations, losses, linear/convolution/pooling/normalisation layers.

Each function is composed of funcgrad.mutable's differentiable tensor operations, so its
gradients (and higher orders) come from the shared rules; only index bookkeeping (which
element a max-pool keeps, which rows a loss picks) is computed on plain arrays. Random
masks (dropout) come from PyTorch's CPU stream, so a seeded program drops the same units.

>>> import funcgrad.mutable as torch
>>> import funcgrad.mutable.nn.functional as F
>>> F.cross_entropy(torch.tensor([[2.0, 0.0, -1.0]]), torch.tensor([0]))
tensor(0.1698)
"""
from __future__ import annotations

import math
import warnings
from typing import Sequence

import numpy as np

from .. import _functions as T
from .. import _random
from .. import _tensor_ops
from .._tensor import Tensor
from ..autograd import Function
from . import _ops

__all__ = ["relu", "relu_", "threshold", "threshold_", "leaky_relu", "leaky_relu_", "rrelu",
           "rrelu_", "sigmoid", "tanh", "silu", "gelu", "softmax",
           "log_softmax", "linear", "dropout", "mse_loss", "l1_loss", "nll_loss",
           "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "embedding", "one_hot", "ctc_loss", "pad", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
           "batch_norm", "instance_norm", "interpolate", "upsample", "unfold", "pdist"]


# --- helpers -------------------------------------------------------------------------------
def _reduction(reduction: str, size_average=None, reduce=None) -> str:
    """Validate `reduction` (and the legacy size_average/reduce pair) as PyTorch does."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _lengths(v, name: str) -> tuple:
    if isinstance(v, Tensor):
        v = v.tolist()
    return tuple(int(k) for k in (v if isinstance(v, (list, tuple)) else [v]))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss of (T, N, C) (or (T, C)) log-probabilities
    against targets (N, S) padded or 1-d concatenated: the negative log of the summed
    probability of every alignment (``CtcLossBackward0``; 'mean' divides each by its target
    length first). Its gradient is the derivative of that function in the log-probabilities
    (torch's kernel adds exp(log_probs), which only a following log_softmax cancels).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> lp = torch.tensor([[[0.5, 0.5]], [[0.5, 0.5]]]).log()
    >>> F.ctc_loss(lp, torch.tensor([[1]]), [2], [1], reduction="sum").exp()  # 1 / P
    tensor(1.3333)
    """
    _check_tensor("ctc_loss", log_probs)
    reduction = _reduction(reduction, None, None)
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    tg = targets.unsqueeze(0) if unbatched and targets.dim() == 1 else targets
    ins, outs = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths,
                                                                   "target_lengths")
    values = tg.detach().numpy().astype(np.int64)
    if values.ndim == 1:  # concatenated targets: cut them by the target lengths
        starts = np.concatenate([[0], np.cumsum(outs)[:-1]]).astype(int)
        rows = [values[a:a + n] for a, n in zip(starts, outs)]
    else:
        rows = [values[n] for n in range(values.shape[0])]
    width = max([len(r) for r in rows] + [1])
    padded = np.zeros((len(rows), width), np.int64)
    for n, r in enumerate(rows):
        padded[n, :len(r)] = r
    if len(ins) != lp.shape[1] or len(outs) != lp.shape[1]:
        raise RuntimeError(f"input_lengths must be of size batch_size")
    loss = _ops.ctc_loss(lp, padded, ins, outs, blank, zero_infinity)
    if zero_infinity:
        loss = T.where(loss == math.inf, T.zeros_like(loss), loss)
    if unbatched:
        loss = loss.squeeze(0)
    if reduction == "mean":
        divisor = T.tensor(outs, dtype=loss.dtype).clamp(min=1)
        return (loss / (divisor.squeeze(0) if unbatched else divisor)).mean()
    return _reduce(loss, reduction)


_NON_CONSTANT = ("Supported combinations for non-constant padding:\n"
                 "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                 "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                 "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value=None) -> Tensor:
    """Pad the last len(pad) // 2 dims, `pad` giving (before, after) for the last dim first:
    with `value` ('constant', ``ConstantPadNdBackward0``; negative amounts crop), by
    mirroring ('reflect') or repeating the edge ('replicate'), torch's node names.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.pad(torch.tensor([[1.0, 2.0]]), (1, 2), value=9.0)
    tensor([[9., 1., 2., 9., 9.]])
    """
    _check_tensor("pad", input)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.dim()}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        k = len(pad) // 2
        if k not in (1, 2, 3) or input.dim() not in (k + 1, k + 2):
            raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                      f"{input.dim()}D input tensor.\n{_NON_CONSTANT}")
        if mode == "circular":
            raise NotImplementedError("F.pad(mode='circular') is not supported by "
                                      "funcgrad.mutable yet: use torch.cat of slices")
    return _ops.pad(input, tuple(pad), mode, value)


def _check_tensor(name: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _const(array: np.ndarray) -> Tensor:
    """A constant tensor (no history) holding `array`."""
    return T.from_numpy(np.ascontiguousarray(array))


def _values(x: Tensor) -> np.ndarray:
    """The values of `x` as an array, without touching its history."""
    return x.detach().numpy()


def _dim(dim: int, ndim: int) -> int:
    lo, hi = -max(ndim, 1), max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {dim})")
    return dim % max(ndim, 1)


# --- activations ---------------------------------------------------------------------------
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) elementwise (in place with ``inplace=True``).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.relu(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    _check_tensor("relu", input)
    return input.relu_() if inplace else T.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place relu.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.relu_(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return input.relu_()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """`input` where it exceeds `threshold`, `value` elsewhere (in place with ``inplace``).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.threshold(torch.tensor([-1.0, 0.5, 2.0]), 0.5, 7.0)
    tensor([7., 7., 2.])
    """
    _check_tensor("threshold", input)
    return _ops.threshold(input, _number(threshold), _number(value), inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place `threshold`."""
    return _ops.threshold(input, _number(threshold), _number(value), True)


def _number(v):
    """A one-element tensor given for a Scalar argument, as the Python number PyTorch reads."""
    return v.item() if isinstance(v, Tensor) else v


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, ``negative_slope * x`` otherwise.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.leaky_relu(torch.tensor([-1.0, 2.0]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    _check_tensor("leaky_relu", input)
    return _ops.leaky_relu(input, _number(negative_slope), inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place `leaky_relu` (its backward refuses a negative slope, as torch's)."""
    _check_tensor("leaky_relu_", input)
    return _ops.leaky_relu(input, _number(negative_slope), True)


def _rrelu_noise(input: Tensor, lower: float, upper: float) -> np.ndarray:
    """torch's training noise for rrelu: for each element <= 0 in order, one 53-bit uniform
    on [lower, upper) (bounds first rounded to the input's dtype); 1 elsewhere."""
    x = input._data
    negative = x <= 0
    lo, hi = float(x.dtype.type(lower)), float(x.dtype.type(upper))
    draws = _random.default_generator.unit(int(negative.sum()), True) * (hi - lo) + lo
    noise = np.ones(x.shape, x.dtype)
    noise[negative] = draws.astype(x.dtype)
    return noise


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: in training each element <= 0 is scaled by a slope drawn
    uniformly from [lower, upper) on torch's random stream; otherwise by their mean.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.rrelu(torch.tensor([-2.0, 1.0]), 0.25, 0.75)
    tensor([-1.,  1.])
    """
    _check_tensor("rrelu", input)
    noise = _rrelu_noise(input, lower, upper) if training else None
    return _ops.rrelu(input, float(lower), float(upper), bool(training), inplace, noise)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place `rrelu`."""
    return rrelu(input, lower, upper, training, True)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-input)).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.sigmoid(torch.tensor([0.0]))
    tensor([0.5000])
    """
    return T.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.tanh(torch.tensor([0.0]))
    tensor([0.])
    """
    return T.tanh(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.silu(torch.tensor([1.0]))
    tensor([0.7311])
    """
    out = input * T.sigmoid(input)
    return input.copy_(out) if inplace else out


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


class _Gelu(Function):
    """The exact GELU, x * Phi(x); its derivative Phi(x) + x * phi(x) is a constant of x."""

    @staticmethod
    def forward(ctx, x):
        a = _values(x).astype(np.float64)
        cdf = 0.5 * (1.0 + _erf(a / math.sqrt(2.0)))
        ctx.slope = _const((cdf + a * np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi))
                           .astype(_values(x).dtype))
        return _const((a * cdf).astype(_values(x).dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.slope

    @staticmethod
    def jvp(ctx, tangent):
        return tangent * ctx.slope


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU: ``x * Phi(x)``, or its tanh approximation (``approximate="tanh"``).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.gelu(torch.tensor([1.0, -1.0]))
    tensor([ 0.8413, -0.1587])
    """
    _check_tensor("gelu", input)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + T.tanh(inner))
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return _Gelu.apply(input)


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.softmax(torch.tensor([[1.0, 2.0, 3.0]]), dim=1)
    tensor([[0.0900, 0.2447, 0.6652]])
    """
    _check_tensor("softmax", input)
    if dim is None:
        dim = _softmax_dim("softmax", input.dim())
    return _tensor_ops.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """x - log(sum(exp(x))) along `dim`, computed stably.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.log_softmax(torch.tensor([[1.0, 2.0, 3.0]]), dim=1)
    tensor([[-2.4076, -1.4076, -0.4076]])
    """
    _check_tensor("log_softmax", input)
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim())
    return _tensor_ops.log_softmax(input, dim, dtype)


# --- linear layers -------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.linear(torch.ones(1, 2), torch.tensor([[1.0, 2.0]]), torch.tensor([0.5]))
    tensor([[3.5000]])
    """
    _check_tensor("linear", input)
    if input.dim() == 0 or weight.dim() not in (1, 2):
        raise RuntimeError(f"linear(): input and weight must have at least one dimension and "
                           f"weight at most two, got {input.dim()} and {weight.dim()}")
    if input.shape[-1] != weight.shape[-1]:
        rows = math.prod(input.shape[:-1]) if input.dim() > 1 else 1
        w = list(weight.shape) if weight.dim() == 2 else [weight.shape[0], 1]
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                           f"{input.shape[-1]} and {w[1]}x{w[0]})")
    if input.dim() == 2 and weight.dim() == 2 and bias is not None and bias.dim() == 1:
        return _ops.addmm(bias, input, weight.t())  # one node, as PyTorch
    out = T.matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


# --- dropout -------------------------------------------------------------------------------
def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability `p` (torch's random stream) and scale the rest
    by ``1 / (1 - p)``; the identity when not training.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> _ = torch.manual_seed(0)
    >>> F.dropout(torch.ones(6), p=0.5)
    tensor([0., 0., 2., 0., 0., 0.])
    """
    _check_tensor("dropout", input)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    dtype = input._dtype.np  # (not its values: a traced tensor has none to give)
    if p == 1.0:
        noise = _const(np.zeros((), dtype))
    else:
        keep = _random.bernoulli(tuple(input.shape), 1.0 - p, dtype)
        noise = _const(keep / dtype.type(1.0 - p))
    return input.mul_(noise) if inplace else input * noise


# --- losses --------------------------------------------------------------------------------
def _same_size(name: str, input: Tensor, target: Tensor) -> None:
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight=None) -> Tensor:
    """Squared error, reduced by `reduction` ("mean", "sum" or "none").

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.mse_loss(torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0]), reduction="none")
    tensor([1., 9.])
    """
    reduction = _reduction(reduction, size_average, reduce)
    _same_size("mse_loss", input, target)
    if weight is None and tuple(input.shape) == tuple(target.shape):
        return _ops.mse_loss(input, target, reduction)
    diff = input - target
    loss = diff * diff
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean") -> Tensor:
    """Absolute error, reduced by `reduction`.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.l1_loss(torch.tensor([1.0, -3.0]), torch.tensor([0.0, 0.0]))
    tensor(2.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _same_size("l1_loss", input, target)
    return _reduce(T.abs(input - target), reduction)


def _class_last(input: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N * d1 * ..., C); (C,) -> (1, C)."""
    if input.dim() == 1:
        return input.reshape(1, -1)
    if input.dim() == 2:
        return input
    order = (0,) + tuple(range(2, input.dim())) + (1,)
    return input.permute(*order).reshape(-1, input.shape[1])


def _check_targets(input: Tensor, target: Tensor) -> None:
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() != 0:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported")
        return
    if target.shape[0] != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        if input.dim() == 2:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise RuntimeError(f"Expected target size {list(input.shape[:1]) + list(input.shape[2:])}"
                           f", got {list(target.shape)}")


def _picked_weights(target: Tensor, n_classes: int, weight, ignore_index: int):
    """(safe class index per row, per-row weight array or tensor, valid-row mask)."""
    t = _values(target).reshape(-1)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    valid = t != ignore_index
    bad = t[valid & ((t < 0) | (t >= n_classes))]
    if bad.size:
        raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    safe = np.where(valid, t, 0)
    return safe, valid


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices given log-probabilities (classes on dim 1).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.nll_loss(torch.tensor([[-0.5, -1.0], [-2.0, -0.1]]), torch.tensor([0, 1]))
    tensor(0.3000)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _check_targets(input, target)
    flat = _class_last(input)
    n_classes = flat.shape[1]
    if weight is not None and tuple(weight.shape) != (n_classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    safe, valid = _picked_weights(target, n_classes, weight, ignore_index)
    dtype = input._dtype.np
    picks = (safe[:, None] == np.arange(n_classes)).astype(dtype)
    row_weight = valid.astype(dtype)
    if weight is not None:
        row_weight = row_weight * _values(weight)[safe]
    losses = _ops.nll_loss(flat, picks, row_weight, reduction, weight=weight, target=target,
                           ignore_index=ignore_index)
    if reduction == "none" and tuple(losses.shape) != tuple(target.shape):
        return losses.reshape(tuple(target.shape))
    return losses


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over dim 1 then nll_loss; `target` holds class indices or probabilities.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.cross_entropy(torch.tensor([[1.0, 2.0], [0.0, 0.0]]), torch.tensor([1, 0]))
    tensor(0.5032)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _check_tensor("cross_entropy", input)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    if target.is_floating_point():  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        terms = logp * target if weight is None else logp * target * weight.reshape(shape)
        losses = -terms.sum(class_dim)
        if reduction == "mean":
            return losses.sum() / (input.shape[0] if input.dim() > 1 else 1)
        return _reduce(losses, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    safe, valid = _picked_weights(target, n_classes, weight, ignore_index)
    flat = _class_last(logp)
    mask = _const(valid.astype(input._dtype.np))
    per_class = flat if weight is None else flat * weight
    smooth = -per_class.sum(1) * mask
    if reduction == "none":
        smooth = smooth.reshape(tuple(target.shape))
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        denom = mask.sum() if weight is None else (weight[_const(safe)] * mask).sum()
        smooth = smooth.sum() / denom
    return (1 - label_smoothing) * nll + (label_smoothing / n_classes) * smooth


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-(t log(x) + (1 - t) log(1 - x)), each log clamped at -100 as PyTorch.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.binary_cross_entropy(torch.tensor([0.8, 0.4]), torch.tensor([1.0, 0.0]))
    tensor(0.3670)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         "the same size.")
    if target.dtype != input.dtype:
        names = {"float32": "Float", "float64": "Double", "float16": "Half"}
        raise RuntimeError(f"Found dtype {names.get(str(target.dtype)[6:], target.dtype)} but "
                           f"expected {names.get(str(input.dtype)[6:], input.dtype)}")
    x = _values(input)
    if np.any((x < 0) | (x > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is None or not weight.requires_grad:
        return _ops.binary_cross_entropy(input, target, None if weight is None
                                         else _values(weight), reduction)
    log_x = T.clamp(T.log(input), min=-100)
    log_1mx = T.clamp(T.log(1 - input), min=-100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid then binary cross-entropy, in one numerically stable expression.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(torch.tensor([2.0, -1.0]), torch.tensor([1.0, 0.0]))
    tensor(0.2201)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    if not any(w is not None and w.requires_grad for w in (weight, pos_weight)):
        return _ops.binary_cross_entropy_with_logits(
            input, target, None if weight is None else _values(weight),
            None if pos_weight is None else _values(pos_weight), reduction)
    neg_part = T.clamp(-input, min=0)  # max(-x, 0): log(1 + exp(-x)) without overflow
    softplus = neg_part + T.log(T.exp(-neg_part) + T.exp(-input - neg_part))
    if pos_weight is None:
        loss = (1 - target) * input + softplus
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# --- embedding -----------------------------------------------------------------------------
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm=None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Rows of `weight` picked by the integer tensor `input`; the `padding_idx` row gets
    no gradient.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.embedding(torch.tensor([2, 0]), torch.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
    tensor([[4., 5.],
            [0., 1.]])
    """
    if not isinstance(input, Tensor) or input.is_floating_point():
        kind = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {kind} instead "
                           "(while checking arguments for embedding)")
    idx = _values(input)
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return _ops.embedding(weight, idx.astype(np.int64), padding_idx)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dimension.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.one_hot(torch.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    idx = _values(tensor)
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if idx.min() >= 0
                           else "Class values must be non-negative.")
    return _const((idx[..., None] == np.arange(num_classes)).astype(np.int64))


# --- convolution and pooling ---------------------------------------------------------------
def _pair(v, name: str) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 "
                               f"values to match the convolution dimensions, but got "
                               f"{name}={list(v)}")
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _windows(kh, kw, oh, ow, stride, dilation):
    """Row and column index arrays, shapes (kh, 1, oh, 1) and (1, kw, 1, ow): indexing a
    padded (N, C, H, W) tensor with them gives its (N, C, kh, kw, oh, ow) patches."""
    rows = (np.arange(kh) * dilation[0])[:, None, None, None] + \
        (np.arange(oh) * stride[0])[None, None, :, None]
    cols = (np.arange(kw) * dilation[1])[None, :, None, None] + \
        (np.arange(ow) * stride[1])[None, None, None, :]
    return rows, cols


def _batched(name: str, input: Tensor) -> tuple:
    _check_tensor(name, input)
    if input.dim() == 3:
        return input.unsqueeze(0), True
    if input.dim() != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to {name}, but got "
                           f"input of size: {list(input.shape)}")
    return input, False


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-d cross-correlation of (N, C, H, W) with (O, C / groups, kh, kw) weights.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2))
    tensor([[[[4., 4.],
              [4., 4.]]]])
    """
    x, unbatched = _batched("conv2d", input)
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    if c != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {cg * groups} channels, but "
                           f"got {c} channels instead")
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            th, tw = dilation[0] * (kh - 1), dilation[1] * (kw - 1)
            pads = (th // 2, th - th // 2, tw // 2, tw - tw // 2)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of "
                             "{'valid', 'same'}")
    else:
        ph, pw = _pair(padding, "padding")
        pads = (ph, ph, pw, pw)
    hp, wp = h + pads[0] + pads[1], w + pads[2] + pads[3]
    oh = (hp - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wp - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Calculated padded input size per channel: ({hp} x {wp}). Kernel "
                           f"size: ({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1})."
                           " Kernel size can't be greater than actual input size")
    rows, cols = _windows(kh, kw, oh, ow, stride, dilation)
    rows, cols = rows - pads[0], cols - pads[2]
    inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
    out = _ops.conv2d(x, weight, bias, np.clip(rows, 0, h - 1), np.clip(cols, 0, w - 1),
                      inside.astype(np.float64), groups, stride, (pads[0], pads[2]), dilation)
    return out.squeeze(0) if unbatched else out


def _pool_geometry(size, kernel, stride, padding, dilation, ceil_mode) -> int:
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Maximum over each window; the gradient goes to the first maximal element, as PyTorch.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    x, unbatched = _batched("max_pool2d", input)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride if stride not in (None, ()) else (kh, kw), "stride")
    ph, pw = _pair(padding, "padding")
    dh, dw = _pair(dilation, "dilation")
    if ph > kh // 2 or pw > kw // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={ph if ph > kh // 2 else pw}, kernel_size="
                           f"{kh if ph > kh // 2 else kw} and dilation={dh}")
    n, c, h, w = x.shape
    oh = _pool_geometry(h, kh, sh, ph, dh, ceil_mode)
    ow = _pool_geometry(w, kw, sw, pw, dw, ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    values = _values(x)
    bottom = max(0, (oh - 1) * sh + dh * (kh - 1) + 1 - h - ph)
    right = max(0, (ow - 1) * sw + dw * (kw - 1) + 1 - w - pw)
    padded = np.pad(values, ((0, 0), (0, 0), (ph, bottom), (pw, right)),
                    constant_values=-np.inf)
    rows, cols = _windows(kh, kw, oh, ow, (sh, sw), (dh, dw))
    patches = padded[:, :, rows, cols].reshape(n, c, kh * kw, oh, ow)
    best = np.argmax(patches, axis=2)                       # first maximum, NaN wins
    rows = np.broadcast_to(rows, (kh, kw, oh, ow)).reshape(kh * kw, oh, ow)
    cols = np.broadcast_to(cols, (kh, kw, oh, ow)).reshape(kh * kw, oh, ow)
    at_row = np.take_along_axis(np.broadcast_to(rows, (n, c) + rows.shape), best[:, :, None],
                                2)[:, :, 0] - ph
    at_col = np.take_along_axis(np.broadcast_to(cols, (n, c) + cols.shape), best[:, :, None],
                                2)[:, :, 0] - pw
    flat_index = (at_row * w + at_col).astype(np.int64)     # (N, C, oh, ow)
    if unbatched:  # PyTorch pools a (C, H, W) input as it is: one node, no squeeze
        flat_index = flat_index[0]
    out = _ops.max_pool2d(input, flat_index)
    return (out, _const(flat_index)) if return_indices else out


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """Mean over each window (zero padding counted, as PyTorch's default).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.avg_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """
    x, _ = _batched("avg_pool2d", input)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride if stride not in (None, ()) else (kh, kw), "stride")
    ph, pw = _pair(padding, "padding")
    if ph > kh // 2 or pw > kw // 2:
        raise RuntimeError("pad should be at most half of effective kernel size, but got "
                           f"pad={ph if ph > kh // 2 else pw}, kernel_size="
                           f"{kh if ph > kh // 2 else kw} and dilation=1")
    n, c, h, w = x.shape
    oh = _pool_geometry(h, kh, sh, ph, 1, ceil_mode)
    ow = _pool_geometry(w, kw, sw, pw, 1, ceil_mode)
    rows, row_counts = _average_weights(h, oh, kh, sh, ph, count_include_pad)
    cols, col_counts = _average_weights(w, ow, kw, sw, pw, count_include_pad)
    if divisor_override:
        rows, cols = rows * row_counts[:, None] / divisor_override, cols * col_counts[:, None]
    return _ops.average_pool2d(input, rows, cols, adaptive=False)


def _average_weights(size: int, out: int, kernel: int, stride: int, pad: int,
                     count_include_pad: bool) -> tuple:
    """(out, size) weights averaging each window along one dimension, as PyTorch counts: the
    padding inside the (clipped) window counts when `count_include_pad`; and the counts."""
    weights = np.zeros((out, size))
    counts = np.zeros(out)
    for i in range(out):
        start = i * stride - pad
        end = min(start + kernel, size + pad)
        lo, hi = max(start, 0), min(end, size)
        counts[i] = (end - start) if count_include_pad else (hi - lo)
        weights[i, lo:hi] = 1.0 / counts[i]
    return weights, counts


def _adaptive_weights(size: int, out: int) -> np.ndarray:
    """(out, size) weights of adaptive pooling's windows [floor(i * size / out),
    ceil((i + 1) * size / out))."""
    weights = np.zeros((out, size))
    for i in range(out):
        lo, hi = (i * size) // out, -(-(i + 1) * size // out)
        weights[i, lo:hi] = 1.0 / (hi - lo)
    return weights


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average over `output_size` windows that tile each plane (``None`` keeps a size).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.adaptive_avg_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), (1, 2))
    tensor([[[[6.5000, 8.5000]]]])
    """
    x, _ = _batched("adaptive_avg_pool2d", input)
    h, w = x.shape[-2:]
    oh, ow = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * 2
    oh, ow = h if oh is None else int(oh), w if ow is None else int(ow)
    if (oh, ow) == (1, 1):  # PyTorch takes the mean here (MeanBackward1)
        return input.mean((-2, -1), keepdim=True)
    return _ops.average_pool2d(input, _adaptive_weights(h, oh), _adaptive_weights(w, ow),
                               adaptive=True)


# --- normalisation -------------------------------------------------------------------------
def _update_stat(t: Tensor, values: np.ndarray) -> None:
    """Overwrite a running statistic in place, as PyTorch's kernel does: outside autograd
    and without a version bump."""
    _values(t)[...] = values


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) by the batch's statistics (training) or the running
    ones; training updates the running statistics in place (unbiased variance).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.batch_norm(torch.tensor([[1.0], [3.0]]), None, None, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    _check_tensor("batch_norm", input)
    if input.dim() < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")
    c = input.shape[1]
    dims = (0,) + tuple(range(2, input.dim()))
    shape = (1, c) + (1,) * (input.dim() - 2)
    count = input.numel() // c
    if training:
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {input.shape}")
        mean = input.mean(dims, keepdim=True)
        centred = input - mean
        var = (centred * centred).mean(dims, keepdim=True)
        if running_mean is not None:
            batch_mean = _values(mean).reshape(c).astype(np.float64)
            _update_stat(running_mean, (1 - momentum) * _values(running_mean) + momentum * batch_mean)
        if running_var is not None:
            unbiased = _values(var).reshape(c).astype(np.float64) * count / (count - 1)
            _update_stat(running_var, (1 - momentum) * _values(running_var) + momentum * unbiased)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        centred = input - running_mean.reshape(shape)
        var = running_var.reshape(shape)
    out = centred / T.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over its spatial dimensions: batch_norm of the input
    seen as one sample of N * C channels, as PyTorch computes it; running statistics, when
    given, take the mean over the samples.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.instance_norm(torch.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    _check_tensor("instance_norm", input)
    if use_input_stats and math.prod(input.shape[2:]) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    n, c = input.shape[0], input.shape[1]
    flat = input.reshape(1, n * c, *input.shape[2:])
    stats = [None if t is None else t.repeat(n) for t in (running_mean, running_var)]
    out = batch_norm(flat, stats[0], stats[1], None if weight is None else weight.repeat(n),
                     None if bias is None else bias.repeat(n), use_input_stats, momentum, eps)
    for running, batch in zip((running_mean, running_var), stats):
        if running is not None and use_input_stats:
            _update_stat(running, _values(batch).reshape(n, c).mean(0))
    return out.view_as(input)


# --- interpolate (nearest, nearest-exact, linear, bilinear, trilinear), unfold, pdist ---------
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}
_INTERP_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area",
                 "nearest-exact")


def _resample_matrix(mode: str, n_in: int, n_out: int, scale, align: bool,
                     dtype) -> np.ndarray:
    """(n_out, n_in) weights of one dim, computed as PyTorch's CPU kernels index (single
    precision for float32 and below, double for float64)."""
    acc = np.float64 if dtype == np.float64 else np.float32
    dst = np.arange(n_out, dtype=acc)
    w = np.zeros((n_out, n_in))
    if mode in ("nearest", "nearest-exact"):
        s = acc(1.0 / scale) if scale is not None and scale > 0 else acc(n_in) / acc(n_out)
        src = np.floor((dst + acc(0.5)) * s if mode == "nearest-exact" else dst * s)
        w[np.arange(n_out), np.minimum(src.astype(np.int64), n_in - 1)] = 1.0
        return w
    if n_in == n_out:  # PyTorch's linear kernels copy a dim that keeps its size (any scale)
        return np.eye(n_in)
    if align:
        s = acc(n_in - 1) / acc(n_out - 1) if n_out > 1 else acc(0)
        src = dst * s
    else:
        s = acc(1.0 / scale) if scale is not None and scale > 0 else acc(n_in) / acc(n_out)
        src = np.maximum(s * (dst + acc(0.5)) - acc(0.5), acc(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = (src - i0).astype(np.float64)
    rows = np.arange(n_out)
    np.add.at(w, (rows, i0), 1.0 - lam)
    np.add.at(w, (rows, i1), lam)
    return w


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims (all after the first two) by nearest or (bi/tri)linear
    sampling, as PyTorch's CPU kernels sample.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.interpolate(torch.tensor([[[0.0, 1.0]]]), 4, mode="linear")
    tensor([[[0.0000, 0.2500, 0.7500, 1.0000]]])
    """
    _check_tensor("interpolate", input)
    if mode not in _INTERP_MODES:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
            f"nearest-exact (got {mode})")
    if mode in ("bicubic", "area") or antialias:
        raise NotImplementedError(f"interpolate(mode={mode!r}) is not supported by "
                                  "funcgrad.mutable")
    if mode in ("nearest", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dims = input.dim() - 2
    if mode in _INTERP_DIMS and dims != _INTERP_DIMS[mode]:
        if dims in (1, 2, 3):
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{_INTERP_DIMS[mode] + 2}D input")
    if dims not in (1, 2, 3):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | area | nearest-exact "
                                  f"(got {mode})")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    spatial = tuple(input.shape[2:])
    if size is not None:
        sizes = tuple(int(s) for s in size) if isinstance(size, (list, tuple)) else (int(size),) * dims
        if len(sizes) != dims:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(spatial)} and output size of {list(sizes)}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             f"(o1, o2, ...,oK) format.")
        scales = (None,) * dims
    else:
        scales = (tuple(float(s) for s in scale_factor)
                  if isinstance(scale_factor, (list, tuple)) else (float(scale_factor),) * dims)
        if len(scales) != dims:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(spatial)} and scale_factor of shape {list(scales)}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             f"scale_factor in (s1, s2, ...,sK) format.")
        sizes = tuple(int(math.floor(n * s)) for n, s in zip(spatial, scales))
        if recompute_scale_factor:
            scales = (None,) * dims
    dtype = input._data.dtype
    mats = tuple(_resample_matrix(mode, n, m, s, bool(align_corners), dtype)
                 for n, m, s in zip(spatial, sizes, scales))
    if mode == "nearest":
        name = f"UpsampleNearest{dims}DBackward0"
    elif mode == "nearest-exact":
        name = f"UpsampleNearestExact{dims}DBackward0"
    else:
        name = f"Upsample{mode.capitalize()}{dims}DBackward0"
    return _ops.resample(input, mats, name, sizes, scales,
                         None if mode.startswith("nearest") else bool(align_corners))


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """The older name of `interpolate` (PyTorch warns it is deprecated)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding blocks as columns (im2col): (N, C, H, W) to (N, C * kh * kw, blocks).

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.unfold(torch.arange(9.0).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    _check_tensor("unfold", input)
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    kernel, dil = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    pad, st = _pair(padding, "padding"), _pair(stride, "stride")
    h, w = input.shape[-2:]
    oh = (h + 2 * pad[0] - dil[0] * (kernel[0] - 1) - 1) // st[0] + 1
    ow = (w + 2 * pad[1] - dil[1] * (kernel[1] - 1) - 1) // st[1] + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size="
                           f"({kernel[0]}, {kernel[1]}), dilation=({dil[0]}, {dil[1]}), "
                           f"padding=({pad[0]}, {pad[1]}), calculated shape of the array of "
                           f"sliding blocks as ({oh}, {ow}), but its components must be at "
                           f"least one.")
    rows, cols = _windows(kernel[0], kernel[1], oh, ow, st, dil)
    rows, cols = rows - pad[0], cols - pad[1]
    inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
    return _ops.im2col(input, np.clip(rows, 0, h - 1), np.clip(cols, 0, w - 1),
                       inside.astype(np.float64), kernel, dil, pad, st)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """p-norm distances between the rows of a 2-d tensor, pairs (i, j) with i < j.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.nn.functional as F
    >>> F.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
    tensor([ 5., 10.,  5.])
    """
    _check_tensor("pdist", input)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError(f"pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return _ops.pdist(input, p)
