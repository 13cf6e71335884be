"""Temporary: the old rule table's names for the modules outside funcgrad.numpy that still
import them (funcgrad.mutable, funcgrad.scipy). Each name is the primitive, helper or public
function it always was, now living in `_primitives`, `_helpers` or a family module. Import
from those instead; this shim goes once nothing reads it."""
from __future__ import annotations

from .._src.declare import linear
from . import _helpers as H
from . import _primitives as P
from ._creation import asarray
from ._namespace import ns

# primitives under their unchanged names
absolute, add, astype, broadcast_to, cos, divide = P.absolute, P.add, P.astype, P.broadcast_to, P.cos, P.divide
equal, exp, expm1, floor_divide, isfinite, less = P.equal, P.exp, P.expm1, P.floor_divide, P.isfinite, P.less
log, log1p, logaddexp, matmul, maximum, minimum = P.log, P.log1p, P.logaddexp, P.matmul, P.maximum, P.minimum
multiply, negative, positive, power, reciprocal = P.multiply, P.negative, P.positive, P.power, P.reciprocal
remainder, reshape, sign, sin, sqrt, square = P.remainder, P.reshape, P.sign, P.sin, P.sqrt, P.square
subtract, sum_to_shape, tan, tanh, transpose = P.subtract, P.sum_to_shape, P.tan, P.tanh, P.transpose
# primitives once suffixed _p
clip_p, concatenate_p, getitem_p, index_add_p, index_set_p = P.clip, P.concatenate, P.getitem, P.index_add, P.index_set
max_p, mean_p, min_p, prod_p, relu_p, sigmoid_p = P.max, P.mean, P.min, P.prod, P.relu, P.sigmoid
sum_p, swapaxes_p, where_p, zeros_like_p = P.sum, P.swapaxes, P.where, P.zeros_like
cumsum_p, ones_like_p = P.cumsum, P.ones_like
# helpers
_sum_to_shape_impl = P._sum_to_shape_impl
split_index = H.split_index
_shape, _dtype = H.shape, H.dtype
_axes, _count, _keepdims_shape = H.normalize_axes, H.count, H.keepdims_shape
_chooser_vjp = P._chooser_vjp

__all__ = ["ns", "linear", "asarray", "absolute", "add", "astype", "broadcast_to", "cos", "divide",
           "equal", "exp", "expm1", "floor_divide", "isfinite", "less", "log", "log1p",
           "logaddexp", "matmul", "maximum", "minimum", "multiply", "negative", "positive",
           "power", "reciprocal", "remainder", "reshape", "sign", "sin", "sqrt", "square",
           "subtract", "sum_to_shape", "tan", "tanh", "transpose", "clip_p", "concatenate_p",
           "getitem_p", "index_add_p", "index_set_p", "max_p", "mean_p", "min_p", "prod_p",
           "relu_p", "sigmoid_p", "sum_p", "swapaxes_p", "where_p", "zeros_like_p",
           "_sum_to_shape_impl", "split_index", "_shape", "_dtype", "cumsum_p", "ones_like_p",
           "_axes", "_count", "_keepdims_shape", "_chooser_vjp"]
