"""torch's remaining pointwise functions (floor, asin, erfc, hypot, fmod, lerp, clamp_min,
xlogy, in-place comparisons...), writes along a dim (scatter, scatter_add, index_add,
index_copy, index_fill) and a few more (tril/triu, cumprod, flip, roll, amax/amin): each a
declaration in the op table over a funcgrad primitive, offered
as ``torch.<name>``, ``Tensor.<name>`` and ``Tensor.<name>_`` (with torch's node name for each
form and a version bump), and as ``torch.<name>_`` where torch has one."""
from __future__ import annotations

import builtins
import types
import warnings

import numpy as np

from ..numpy import _helpers as H
from ..numpy import _primitives as NP
from ..scipy import special as S
from .._src.batching import batch_elementwise
from .._src.declare import elementwise, primitive
from . import _dtypes as D
from . import _functions as F
from . import _ops as O
from . import _random
from . import _tensor_ops as TO
from ._ops import apply, apply1, apply2, inplace, inplace1
from ._tensor import _C_NAMES, Tensor, _scalar_name

__all__ = ["FUNCTIONS", "INPLACE_FUNCTIONS", "scatter", "scatter_add", "lerp", "clamp_min",
           "clamp_max", "fmod", "copysign", "hypot", "logaddexp", "logaddexp2", "float_power",
           "round"]

_decl = O._decl


def _zero_slope(out, x):
    return NP.zeros_like(x)


def _rounding(name: str, impl) -> object:
    """A rounding function: torch records it, its gradient is zero."""
    return elementwise(name, impl, _zero_slope)


floor_p = _rounding("floor", np.floor)
ceil_p = _rounding("ceil", np.ceil)
trunc_p = _rounding("trunc", np.trunc)
round_p = _rounding("round", np.round)
round_decimals_p = primitive("round_decimals", lambda x, decimals: np.round(x, decimals),
                             params=("decimals",),
                             vjps=(lambda ct, out, x, decimals: NP.zeros_like(x),))
frac_p = elementwise("frac", lambda x: x - np.trunc(x), lambda out, x: NP.ones_like(x))
rsqrt_p = elementwise("rsqrt", lambda x: 1 / np.sqrt(x), lambda out, x: -0.5 * out * out * out)
def _nextafter(x, y):
    for v in (x, y):
        if np.asarray(v).dtype.kind not in "fc":
            raise NotImplementedError('"nextafter_cpu" not implemented for '
                                      f"'{_scalar_name(D.from_numpy_dtype(np.asarray(v).dtype))}'")
    return np.nextafter(x, y)


# torch 2.13 differentiates nextafter as the identity in `input` where it moves (the step is
# below rounding), zero where input equals other, and a constant in `other`; funcgrad.numpy
# keeps NumPy's and JAX's: no derivative
nextafter_p = elementwise(
    "torch_nextafter", _nextafter,
    lambda out, x, y: NP.where(NP.equal(x, y), NP.zeros_like(out), NP.ones_like(out)),
    lambda out, x, y: NP.zeros_like(out))


def _digamma(x):
    return S.polygamma_p(x, n=0)


lgamma_p = S.gammaln_p
digamma_p = primitive("digamma", lambda x: S.polygamma_p.impl(x, n=0),
                      vjps=(lambda ct, out, x: ct * S.polygamma_p(x, n=1),))

# (torch name, primitive, grad_fn, in-place grad_fn if torch names it differently,
#  result dtype rule, saves the result, torch has the module-level in-place function)
_UNARY = [
    ("floor", floor_p, "FloorBackward0", None, "promote", False, True),
    ("ceil", ceil_p, "CeilBackward0", None, "promote", False, True),
    ("trunc", trunc_p, "TruncBackward0", None, "promote", False, True),
    ("frac", frac_p, "FracBackward0", None, "promote", False, True),
    ("asin", NP.arcsin, "AsinBackward0", None, "float", False, True),
    ("acos", NP.arccos, "AcosBackward0", None, "float", False, True),
    ("atan", NP.arctan, "AtanBackward0", None, "float", False, True),
    ("sinh", NP.sinh, "SinhBackward0", None, "float", False, True),
    ("cosh", NP.cosh, "CoshBackward0", None, "float", False, True),
    ("asinh", NP.arcsinh, "AsinhBackward0", "AsinhBackward1", "float", False, True),
    ("acosh", NP.arccosh, "AcoshBackward0", "AcoshBackward1", "float", False, True),
    ("atanh", NP.arctanh, "AtanhBackward0", "AtanhBackward1", "float", False, True),
    ("erfc", S.erfc_p, "ErfcBackward0", None, "float", False, True),
    ("erfinv", S.erfinv_p, "ErfinvBackward0", None, "float", False, False),
    ("log2", NP.log2, "Log2Backward0", None, "float", False, True),
    ("log10", NP.log10, "Log10Backward0", None, "float", False, True),
    ("exp2", NP.exp2, "Exp2Backward0", None, "float", True, True),
    ("rsqrt", rsqrt_p, "RsqrtBackward0", None, "float", True, True),
    ("deg2rad", NP.deg2rad, "Deg2RadBackward0", None, "float", False, True),
    ("rad2deg", NP.rad2deg, "Rad2DegBackward0", None, "float", False, True),
    ("sinc", NP.sinc, "SincBackward0", None, "float", False, True),
    ("i0", S.i0_p, "I0Backward0", None, "float", False, True),
    ("lgamma", lgamma_p, "LgammaBackward0", None, "float", False, False),
    ("digamma", digamma_p, "DigammaBackward0", None, "float", False, False),
]
# other names torch gives the same functions
_ALIASES = {"fix": "trunc", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
            "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh"}

FUNCTIONS: dict = {}       # torch.<name>
METHODS: dict = {}         # Tensor.<name> and Tensor.<name>_
INPLACE_FUNCTIONS: list = []  # torch.<name>_ (the method, as a function)


def _check_float_result(op: O.Op, self: Tensor) -> None:
    """An in-place op whose result is a float cannot write into an integer tensor."""
    if op.result == "float" and self._dtype.category < 2:
        raise RuntimeError(f"result type {_scalar_name(D.DEFAULT_FLOAT)} can't be cast to the "
                           f"desired output type {_scalar_name(self._dtype)}")


def _no_inplace_derivative(name: str) -> type:
    """torch records the in-place form (asinh_...) but has no derivative for it."""
    class InplaceNotImplemented(O.OpNode):
        __slots__ = ()

        def _apply(self, cts, graph):
            raise RuntimeError(f"the derivative for 'inplace version of {name}' is not "
                               "implemented.")
    return InplaceNotImplemented


def _unary_family(name, prim, grad_fn, inplace_grad_fn, result, saves_out, module_inplace):
    op = _decl(name, prim, grad_fn, saves_out=saves_out, result=result)
    iop = op if inplace_grad_fn is None else _decl(
        name + "_", prim, inplace_grad_fn, saves_out=saves_out, result=result,
        node_base=_no_inplace_derivative(name))

    def fn(input: Tensor) -> Tensor:
        return apply1(op, input)

    def method_(self: Tensor) -> Tensor:
        _check_float_result(op, self)
        return inplace1(iop, self)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: elementwise, grad_fn ``{grad_fn}``."
    method_.__name__ = method_.__qualname__ = name + "_"
    _offer(name, F.out_variant(fn), method_, module_inplace)


def _offer(name: str, fn, method_=None, module_inplace: bool = False, method=None) -> None:
    FUNCTIONS[name] = fn
    METHODS[name] = fn if method is None else method
    if method_ is not None:
        METHODS[name + "_"] = method_
        if module_inplace:
            INPLACE_FUNCTIONS.append(name + "_")


for _entry in _UNARY:
    _unary_family(*_entry)


# --- round (with decimals), logit, nan_to_num, and torch's other names ----------------------------
ROUND = _decl("round", round_p, "RoundBackward0", result="promote")
ROUND_DECIMALS = _decl("round_decimals", round_decimals_p, "RoundBackward1", result="promote")


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even (``decimals`` places); the gradient is zero.

    >>> import funcgrad.mutable as torch
    >>> torch.round(torch.tensor([0.5, 1.5, 2.567]))
    tensor([0., 2., 3.])
    >>> torch.round(torch.tensor([2.567]), decimals=2)
    tensor([2.5700])
    """
    if decimals:
        return apply(ROUND_DECIMALS, (input,), {"decimals": decimals})
    return apply1(ROUND, input)


def _round_(self: Tensor, *, decimals: int = 0) -> Tensor:
    if decimals:
        return inplace(ROUND_DECIMALS, self, (), {"decimals": decimals})
    return inplace1(ROUND, self)


_offer("round", F.out_variant(round), _round_, True)

class _LogitNode(O.OpNode):
    """LogitBackward0: ``_saved_eps`` is None when no eps was given (as PyTorch's)."""

    __slots__ = ()

    @property
    def _saved_eps(self):
        return (self._params or {}).get("eps")


LOGIT = _decl("logit", S.logit_p, "LogitBackward0", result="float", node_base=_LogitNode)
# with eps, the input is clamped first and the slope is zero outside [eps, 1 - eps]
logit_eps_p = primitive(
    "logit_eps", lambda x, eps: S.logit_p.impl(np.clip(x, eps, 1 - eps)), params=("eps",),
    vjps=(lambda ct, out, x, eps: ct * NP.astype(NP.logical_and(
        NP.greater_equal(x, eps), NP.less_equal(x, 1 - eps)), H.dtype(x)) / (x * (1 - x)),))
LOGIT_EPS = _decl("logit_eps", logit_eps_p, "LogitBackward0", result="float",
                  node_base=_LogitNode)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``; with `eps`, `p` is first clamped to ``[eps, 1 - eps]``.

    >>> import funcgrad.mutable as torch
    >>> torch.logit(torch.tensor([0.25, 0.5]))
    tensor([-1.0986,  0.0000])
    """
    if eps is None:
        return apply1(LOGIT, input)
    return apply(LOGIT_EPS, (input,), {"eps": float(eps)})


def _logit_(self: Tensor, eps: float | None = None) -> Tensor:
    _check_float_result(LOGIT, self)
    if eps is None:
        return inplace1(LOGIT, self)
    return inplace(LOGIT_EPS, self, (), {"eps": float(eps)})


_offer("logit", F.out_variant(logit), _logit_, True)

NAN_TO_NUM = _decl("nan_to_num", NP.nan_to_num, "NanToNumBackward0", result="promote")


def _nan_to_num_params(dtype, nan, posinf, neginf) -> dict:
    info = np.finfo(dtype.np) if dtype.is_floating_point else None
    return {"nan": 0.0 if nan is None else nan,
            "posinf": (info.max if info is not None else None) if posinf is None else posinf,
            "neginf": (info.min if info is not None else None) if neginf is None else neginf}


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN to `nan`, infinities to `posinf`/`neginf` (the dtype's extremes by default).

    >>> import funcgrad.mutable as torch
    >>> torch.nan_to_num(torch.tensor([float("nan"), 1.0]))
    tensor([0., 1.])
    """
    return apply(NAN_TO_NUM, (input,), _nan_to_num_params(input._dtype, nan, posinf, neginf))


def _nan_to_num_(self: Tensor, nan: float = 0.0, posinf: float | None = None,
                 neginf: float | None = None) -> Tensor:
    return inplace(NAN_TO_NUM, self, (), _nan_to_num_params(self._dtype, nan, posinf, neginf))


_offer("nan_to_num", F.out_variant(nan_to_num), _nan_to_num_, True)


def _inplace_of(op: O.Op, name: str):
    def method_(self: Tensor) -> Tensor:
        _check_float_result(op, self)
        return inplace1(op, self)
    method_.__name__ = method_.__qualname__ = name
    return method_


def _sign_(self: Tensor) -> Tensor:
    if self._dtype.is_complex:
        TO.sign(self)  # torch's refusal
    return inplace(TO.SIGN, self, (), {})


def _sgn_(self: Tensor) -> Tensor:
    return inplace(TO.SGN, self, (), {})


METHODS.update({"sign_": _sign_, "sgn_": _sgn_, "erf_": _inplace_of(TO.ERF, "erf_")})
INPLACE_FUNCTIONS.append("erf_")
for _alias, _name in _ALIASES.items():
    FUNCTIONS[_alias] = FUNCTIONS[_name]
    METHODS[_alias] = METHODS[_name]
    METHODS[_alias + "_"] = METHODS[_name + "_"]
    if _name + "_" in INPLACE_FUNCTIONS:
        INPLACE_FUNCTIONS.append(_alias + "_")
FUNCTIONS.update({"absolute": F.abs, "negative": F.neg, "multiply": F.mul, "subtract": F.sub,
                  "divide": F.div, "true_divide": F.div})
METHODS.update({name: FUNCTIONS[name] for name in (
    "absolute", "negative", "multiply", "subtract", "divide", "true_divide")})
for _alias, _name in (("absolute_", "abs_"), ("negative_", "neg_"), ("multiply_", "mul_"),
                      ("subtract_", "sub_"), ("true_divide_", "div_")):
    METHODS[_alias] = getattr(Tensor, _name)
INPLACE_FUNCTIONS.extend(["negative_"])


def _div_(self: Tensor, other, *, rounding_mode=F._NO_MODE) -> Tensor:
    if rounding_mode is F._NO_MODE:
        return _true_div_(self, other)
    op = F._div_mode_op(rounding_mode)
    _check_float_result(op, self)
    return inplace(op, self, (other,), {"rounding_mode": rounding_mode})


_true_div_ = Tensor.div_
METHODS.update({"div_": _div_, "divide_": _div_})


# --- binary functions -------------------------------------------------------------------------
def _binary_family(name, prim, grad_fn, scalar_grad_fn=None, result="promote",
                   module_inplace=True, saves_out=False):
    """A function of two tensors (`grad_fn`), and of a tensor and a Python number where torch
    has that overload (`scalar_grad_fn`)."""
    op = _decl(name, prim, grad_fn, result=result, saves_out=saves_out)
    sop = None if scalar_grad_fn is None else _decl(name + "_scalar", prim, scalar_grad_fn,
                                                   result=result, saves_out=saves_out)

    def pick(other) -> O.Op:
        if isinstance(other, Tensor) or sop is None:
            return op
        return sop

    def fn(input: Tensor, other) -> Tensor:
        if not isinstance(other, Tensor) and sop is None:
            other = F.tensor(other)  # a wrapped number: a tensor operand to torch
        if isinstance(other, Tensor):
            return apply2(op, input, other)
        return apply1(sop, input, other)

    def method_(self: Tensor, other) -> Tensor:
        which = pick(other)
        _check_float_result(which, self)
        return inplace(which, self, (other,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: elementwise, grad_fn ``{grad_fn}``."
    method_.__name__ = method_.__qualname__ = name + "_"
    _offer(name, F.out_variant(fn), method_, module_inplace)
    return op


HYPOT = _binary_family("hypot", NP.hypot, "HypotBackward0", result="float",
                       module_inplace=False)
FMOD = _binary_family("fmod", NP.fmod, "FmodBackward1", "FmodBackward0", module_inplace=False)
COPYSIGN = _binary_family("copysign", NP.copysign, "CopysignBackward0", "CopysignBackward1",
                          result="float", module_inplace=False)
NEXTAFTER = _binary_family("nextafter", nextafter_p, "NextafterBackward0", module_inplace=False)
LOGADDEXP = _binary_family("logaddexp", NP.logaddexp, "LogaddexpBackward0", result="float",
                           module_inplace=False)
LOGADDEXP2 = _binary_family("logaddexp2", NP.logaddexp2, "Logaddexp2Backward0",
                            result="float", module_inplace=False)
del METHODS["logaddexp_"], METHODS["logaddexp2_"]  # torch has no in-place logaddexp
hypot, fmod, copysign, logaddexp, logaddexp2 = (FUNCTIONS[n] for n in (
    "hypot", "fmod", "copysign", "logaddexp", "logaddexp2"))


def _atan2_(self: Tensor, other: Tensor) -> Tensor:
    _check_float_result(TO.ATAN2, self)
    return inplace(TO.ATAN2, self, (other,))


METHODS.update({"atan2_": _atan2_, "arctan2_": _atan2_})
FUNCTIONS["arctan2"] = TO.atan2


# clamp_min / clamp_max: with a number, ClampMin/MaxBackward0 (slope 1 where kept, ends
# included); with a tensor bound, ClampMin/MaxBackward1 (the bound gets the rest)
CLAMP_MIN = _decl("clamp_min", NP.clip, "ClampMinBackward0")
CLAMP_MAX = _decl("clamp_max", NP.clip, "ClampMaxBackward0")


def _keep_ge(out, x, bound):
    return NP.astype(NP.greater_equal(x, bound), H.dtype(out))


def _keep_le(out, x, bound):
    return NP.astype(NP.less_equal(x, bound), H.dtype(out))


def _bound_lt(out, x, bound):
    return NP.astype(NP.less(x, bound), H.dtype(out))


def _bound_gt(out, x, bound):
    return NP.astype(NP.greater(x, bound), H.dtype(out))


clamp_min_p = elementwise("clamp_min", np.maximum, _keep_ge, _bound_lt)
clamp_max_p = elementwise("clamp_max", np.minimum, _keep_le, _bound_gt)
CLAMP_MIN_T = _decl("clamp_min_tensor", clamp_min_p, "ClampMinBackward1")
CLAMP_MAX_T = _decl("clamp_max_tensor", clamp_max_p, "ClampMaxBackward1")


def clamp_min(input: Tensor, min) -> Tensor:
    """``max(input, min)``; the slope goes to `input` where it is kept (ties included).

    >>> import funcgrad.mutable as torch
    >>> torch.clamp_min(torch.tensor([-1.0, 2.0]), 0.0)
    tensor([0., 2.])
    """
    if isinstance(min, Tensor):
        return apply(CLAMP_MIN_T, (input, min))
    return apply(CLAMP_MIN, (input, min, None))


def clamp_max(input: Tensor, max) -> Tensor:
    """``min(input, max)``; the slope goes to `input` where it is kept (ties included).

    >>> import funcgrad.mutable as torch
    >>> torch.clamp_max(torch.tensor([-1.0, 2.0]), 0.0)
    tensor([-1.,  0.])
    """
    if isinstance(max, Tensor):
        return apply(CLAMP_MAX_T, (input, max))
    return apply(CLAMP_MAX, (input, None, max))


def _clamp_min_(self: Tensor, min) -> Tensor:
    if isinstance(min, Tensor):
        return inplace(CLAMP_MIN_T, self, (min,))
    return inplace(CLAMP_MIN, self, (min, None))


def _clamp_max_(self: Tensor, max) -> Tensor:
    if isinstance(max, Tensor):
        return inplace(CLAMP_MAX_T, self, (max,))
    return inplace(CLAMP_MAX, self, (None, max))


_offer("clamp_min", F.out_variant(clamp_min), _clamp_min_, True)
_offer("clamp_max", F.out_variant(clamp_max), _clamp_max_, True)


def _lerp_impl(x, end, weight):
    # torch's two-sided formula (exact at both ends)
    diff = end - x
    return np.where(np.abs(weight) < 0.5, x + weight * diff, end - diff * (1 - weight))


lerp_p = elementwise("lerp", _lerp_impl, lambda out, x, end, w: 1 - w,
                     lambda out, x, end, w: w, lambda out, x, end, w: end - x)
LERP = _decl("lerp", lerp_p, "LerpBackward0")
LERP_T = _decl("lerp_tensor", lerp_p, "LerpBackward1")


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    """``input + weight * (end - input)`` (a number or a tensor `weight`).

    >>> import funcgrad.mutable as torch
    >>> torch.lerp(torch.tensor([0.0, 1.0]), torch.tensor([10.0, 3.0]), 0.5)
    tensor([5., 2.])
    """
    return apply(LERP_T if isinstance(weight, Tensor) else LERP, (input, end, weight))


def _lerp_(self: Tensor, end: Tensor, weight) -> Tensor:
    return inplace(LERP_T if isinstance(weight, Tensor) else LERP, self, (end, weight))


_offer("lerp", F.out_variant(lerp), _lerp_, False)


def float_power(input, exponent) -> Tensor:
    """``input ** exponent`` computed in double precision (float64 or complex128).

    >>> import funcgrad.mutable as torch
    >>> torch.float_power(torch.tensor([2]), 3)
    tensor([8.], dtype=torch.float64)
    """
    def double(v):
        if isinstance(v, Tensor):
            return v.to(D.complex128 if v._dtype.is_complex else D.float64)
        return v
    if not isinstance(input, Tensor):
        return F.pow(complex(input) if isinstance(input, complex) else float(input),
                     double(exponent))
    return F.pow(double(input), double(exponent) if isinstance(exponent, Tensor) else exponent)


def _float_power_(self: Tensor, exponent) -> Tensor:
    if self._dtype not in (D.float64, D.complex128):
        wanted = "ComplexDouble" if self._dtype.is_complex else "Double"
        raise RuntimeError(f"the base given to float_power_ has dtype {_scalar_name(self._dtype)}"
                           f" but the operation's result requires dtype {wanted}")
    return self.pow_(exponent)


_offer("float_power", F.out_variant(float_power), _float_power_, False)


# --- scatter ----------------------------------------------------------------------------------
def _scatter_where(index: np.ndarray, dim: int) -> tuple:
    return TO._scatter_index(index, dim)


def _scatter_impl(x, src, dim, index):
    out = np.array(x, copy=True)
    out[_scatter_where(index, dim)] = TO._scatter_src(src, index)
    return out


def _scatter_value_impl(x, dim, index, value):
    out = np.array(x, copy=True)
    out[_scatter_where(index, dim)] = value
    return out


def _overwritten(ct, dim, index):
    """The written positions get no gradient; the rest passes through."""
    where = _scatter_where(index, dim)
    return NP.index_set(ct, 0, *where, template=(H.SLOT,) * len(where))


def _scattered_src_vjp(ct, out, x, src, dim, index):
    """Each element of `src` written gets the gradient at the place it went."""
    where = _scatter_where(index, dim)
    per = NP.getitem(ct, *where, template=(H.SLOT,) * len(where))
    if tuple(H.shape(src)) == tuple(index.shape):
        return per
    return NP.index_add(NP.zeros_like(src), per,
                        template=tuple(slice(0, n) for n in index.shape))


def _scatter_add_impl(x, src, dim, index):
    out = np.array(x, copy=True)
    np.add.at(out, _scatter_where(index, dim), TO._scatter_src(src, index))
    return out


def _scatter_reduce_impl(x, src, dim, index, reduce):
    out = np.array(x, copy=True)
    ufunc = np.add if reduce == "add" else np.multiply
    part = TO._scatter_src(src, index) if isinstance(src, np.ndarray) else src
    ufunc.at(out, _scatter_where(index, dim), part)
    return out


scatter_p = primitive("scatter", _scatter_impl, nargs=2, params=("dim", "index"),
                      vjps=(lambda ct, out, x, src, dim, index: _overwritten(ct, dim, index),
                            _scattered_src_vjp))
scatter_value_p = primitive("scatter_value", _scatter_value_impl, nargs=1,
                            params=("dim", "index", "value"),
                            vjps=(lambda ct, out, x, dim, index, value: _overwritten(
                                ct, dim, index),))
scatter_add_p = primitive("scatter_add", _scatter_add_impl, nargs=2, params=("dim", "index"),
                          vjps=(lambda ct, out, x, src, dim, index: ct, _scattered_src_vjp))
# torch has no derivative for scatter with reduce=: it records a node that fails at backward
scatter_reduce_p = primitive("scatter", _scatter_reduce_impl, nargs=2,
                             params=("dim", "index", "reduce"), differentiable=False)
scatter_reduce_inplace_p = primitive("scatter_", _scatter_reduce_impl, nargs=2,
                                     params=("dim", "index", "reduce"), differentiable=False)
SCATTER = _decl("scatter", scatter_p, "ScatterBackward0", result="same", saves_index=True)
SCATTER_VALUE = _decl("scatter_value", scatter_value_p, "ScatterBackward1", result="same",
                      saves_index=True)
SCATTER_ADD = _decl("scatter_add", scatter_add_p, "ScatterAddBackward0", result="same",
                    saves_index=True)
SCATTER_REDUCE = _decl("scatter_reduce_add_multiply", scatter_reduce_p, "NotImplemented",
                       result="same", node_base=O.NotImplementedNode)
SCATTER_REDUCE_ = _decl("scatter_reduce_add_multiply_", scatter_reduce_inplace_p,
                        "NotImplemented", result="same", node_base=O.NotImplementedNode)


def _scatter_args(self: Tensor, dim: int, index, src, value, reduce, name: str):
    """Check the arguments as torch does; (op, others, params)."""
    if not isinstance(index, Tensor) or index._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    idx = index._data
    nd = self._data.ndim
    if idx.ndim == 0 and nd <= 1:
        idx = idx.reshape(1)
    if nd == 0:
        nd_check = 1
    else:
        nd_check = nd
    if idx.ndim != nd_check:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    d = F._dim(dim, nd)
    shape = self._data.shape if nd else (1,)
    src_is_tensor = isinstance(src, Tensor)
    if src_is_tensor:
        if src._dtype is not self._dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        sshape = src._data.shape if src._data.ndim else (1,)
        if len(sshape) != nd_check:
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        if any(i > s for i, s in zip(idx.shape, sshape)) or any(
                i > s for k, (i, s) in enumerate(zip(idx.shape, shape)) if k != d):
            raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                               f"{list(shape)} apart from dimension {d} and to be no larger "
                               f"size than src {list(sshape)}")
    elif any(i > s for k, (i, s) in enumerate(zip(idx.shape, shape)) if k != d):
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                           f"{list(shape)} apart from dimension {d}")
    if idx.size and (idx.min() < 0 or idx.max() >= shape[d]):
        bad = int(idx.max() if idx.max() >= shape[d] else idx.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                           f"{shape[d]}")
    idx = idx.astype(np.intp)
    if nd == 0:
        idx = idx.reshape(())
    params = {"dim": d, "index": idx}
    if reduce is not None:
        if src_is_tensor:
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=3)
        params["reduce"] = reduce
        if src_is_tensor:
            return SCATTER_REDUCE, (src,), params
        return SCATTER_REDUCE, (value,), params
    if src_is_tensor:
        return SCATTER, (src,), params
    params["value"] = value
    return SCATTER_VALUE, (), params


def _src_or_value(src, value):
    if src is not None and not isinstance(src, Tensor):
        return None, src  # a number in src's place is the value
    return src, value


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None,
            reduce: str | None = None) -> Tensor:
    """A copy of `input` with `src`'s elements (or `value`) written at `index` along `dim`
    (grad_fn ``ScatterBackward0`` / ``ScatterBackward1`` for a value).

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(5).scatter(0, torch.tensor([1, 3]), value=1.0)
    tensor([0., 1., 0., 1., 0.])
    """
    src, value = _src_or_value(src, value)
    op, others, params = _scatter_args(input, dim, index, src, value, reduce, "scatter")
    return apply(op, (input,) + others, params)


def _scatter_(self: Tensor, dim: int, index: Tensor, src=None, *, value=None,
              reduce: str | None = None) -> Tensor:
    src, value = _src_or_value(src, value)
    op, others, params = _scatter_args(self, dim, index, src, value, reduce, "scatter")
    return inplace(SCATTER_REDUCE_ if op is SCATTER_REDUCE else op, self, others, params)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of `input` with `src`'s elements added at `index` along `dim` (repeated indices
    add up).

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(3).scatter_add(0, torch.tensor([0, 0, 2]), torch.ones(3))
    tensor([2., 0., 1.])
    """
    _, others, params = _scatter_args(input, dim, index, src, None, None, "scatter_add")
    return apply(SCATTER_ADD, (input,) + others, params)


def _scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    _, others, params = _scatter_args(self, dim, index, src, None, None, "scatter_add")
    return inplace(SCATTER_ADD, self, others, params)


_offer("scatter", scatter, _scatter_)
_offer("scatter_add", scatter_add, _scatter_add_)


# --- index_reduce: scatter_reduce of whole slices (each index names a slice along dim) ---------------
# (its own primitive: the same rules, torch's index_reduce message for the 'prod' refusal)
index_reduce_p = TO.scatter_reduce_primitive("index_reduce", "index_reduce", "source")
INDEX_REDUCE = _decl("index_reduce", index_reduce_p, "IndexReduceBackward0", saves_out=True)
_BETA = "index_reduce() is in beta and the API may change at any time. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:1523.)"  # noqa: E501
_WARNED: list = []  # PyTorch warns about index_reduce once per process


def _index_reduce_args(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                       include_self: bool, name: str) -> dict:
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if not isinstance(index, Tensor) or index._dtype not in (D.int64, D.int32):
        got = _scalar_name(index._dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: {got}")
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn(_BETA, UserWarning, stacklevel=3)
    nd = builtins.max(self._data.ndim, 1)
    d = F._dim(dim, nd)
    # the index of every element of `source`: its slice's index, along `dim`
    along = index._data.astype(np.int64).reshape((-1,) + (1,) * (nd - d - 1))
    full = np.broadcast_to(along, source._data.shape if source._data.ndim else (1,))
    return {"dim": d, "index": np.ascontiguousarray(full), "reduce": reduce,
            "include_self": bool(include_self)}


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of `input` whose slices ``index[i]`` along `dim` are reduced ("prod", "mean",
    "amax", "amin") with slice ``i`` of `source` (grad_fn ``IndexReduceBackward0``; ties share
    the gradient).

    >>> import funcgrad.mutable as torch
    >>> import warnings; warnings.simplefilter("ignore")
    >>> torch.zeros(3, 2).index_reduce(0, torch.tensor([0, 0]), torch.tensor([[2.0, 3.0], [4.0, 1.0]]), "amax")
    tensor([[4., 3.],
            [0., 0.],
            [0., 0.]])
    """
    params = _index_reduce_args(input, dim, index, source, reduce, include_self, "index_reduce")
    return apply(INDEX_REDUCE, (input, source), params)


def _index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    params = _index_reduce_args(self, dim, index, source, reduce, include_self, "index_reduce_")
    return inplace(INDEX_REDUCE, self, (source,), params)


_offer("index_reduce", index_reduce, _index_reduce_)

# --- xlogy: x * log(y), 0 where x is 0 (unless y is NaN) -------------------------------------
def _xlogy_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), 0, out).astype(np.result_type(x, y))


def _xlogy_dx(out, x, y):  # torch: xlogy(x != 0, y)
    return xlogy_p(NP.astype(NP.not_equal(x, 0), H.dtype(out)), y)


xlogy_p = elementwise("xlogy", _xlogy_impl, _xlogy_dx, lambda out, x, y: x / y)
XLOGY = _decl("xlogy", xlogy_p, "XlogyBackward0", result="float")
XLOGY_OTHER_NUMBER = _decl("xlogy_scalar_other", xlogy_p, "XlogyBackward2", result="float")
XLOGY_SELF_NUMBER = _decl("xlogy_scalar_self", xlogy_p, "XlogyBackward1", result="float")


def xlogy(input, other) -> Tensor:
    """``input * log(other)``, and 0 where `input` is 0 (unless `other` is NaN).

    >>> import funcgrad.mutable as torch
    >>> torch.xlogy(torch.tensor([0.0, 2.0]), torch.tensor([0.0, 3.0]))
    tensor([0.0000, 2.1972])
    """
    if not isinstance(input, Tensor):
        return apply(XLOGY_SELF_NUMBER, (input, other))
    return apply(XLOGY if isinstance(other, Tensor) else XLOGY_OTHER_NUMBER, (input, other))


def _xlogy_(self: Tensor, other) -> Tensor:
    op = XLOGY if isinstance(other, Tensor) else XLOGY_OTHER_NUMBER
    _check_float_result(op, self)
    return inplace(op, self, (other,))


_offer("xlogy", F.out_variant(xlogy), _xlogy_, True)


# --- comparisons in place: the truth written as self's dtype; torch records a node whose
# gradient is zero (EqBackward0 with a number, EqBackward1 with a tensor)
def _comparison_in_place(name: str, np_fn, node: str):
    prim = elementwise(name + "_", lambda x, y: np_fn(x, y).astype(np.result_type(x)),
                       lambda out, x, y: NP.zeros_like(out), lambda out, x, y: NP.zeros_like(y))
    number = _decl(name + "_scalar_", prim, node + "Backward0", result="keep")
    tensor = _decl(name + "_tensor_", prim, node + "Backward1", result="keep")

    def method_(self: Tensor, other) -> Tensor:
        return inplace(tensor if isinstance(other, Tensor) else number, self, (other,))
    method_.__name__ = method_.__qualname__ = name + "_"
    return method_


for _name, _np_fn, _node, _aliases in (
        ("eq", np.equal, "Eq", ()), ("ne", np.not_equal, "Ne", ("not_equal",)),
        ("lt", np.less, "Lt", ("less",)), ("le", np.less_equal, "Le", ("less_equal",)),
        ("gt", np.greater, "Gt", ("greater",)), ("ge", np.greater_equal, "Ge", ("greater_equal",))):
    METHODS[_name + "_"] = _comparison_in_place(_name, _np_fn, _node)
    for _alias in _aliases:
        METHODS[_alias + "_"] = METHODS[_name + "_"]
        FUNCTIONS[_alias] = METHODS[_alias] = getattr(F, _name)


# --- writes along a dim: index_add, index_copy, index_fill ------------------------------------
def _along(index: np.ndarray, dim: int) -> tuple:
    """(the index template, its arrays) selecting `index` along `dim`."""
    return (slice(None),) * dim + (H.SLOT,), (index,)


def _index_add_impl(x, src, dim, index, alpha):
    out = np.array(x, copy=True)
    np.add.at(out, (slice(None),) * dim + (index,), alpha * src if alpha != 1 else src)
    return out


def _index_copy_impl(x, src, dim, index):
    out = np.array(x, copy=True)
    out[(slice(None),) * dim + (index,)] = src
    return out


def _index_fill_impl(x, dim, index, value):
    out = np.array(x, copy=True)
    out[(slice(None),) * dim + (index,)] = value
    return out


def _picked(ct, dim, index):
    template, arrays = _along(index, dim)
    return NP.getitem(ct, *arrays, template=template)


def _cleared(ct, dim, index):
    template, arrays = _along(index, dim)
    return NP.index_set(ct, 0, *arrays, template=template)


index_add_p = primitive("index_add_dim", _index_add_impl, nargs=2,
                        params=("dim", "index", "alpha"),
                        vjps=(lambda ct, out, x, src, dim, index, alpha: ct,
                              lambda ct, out, x, src, dim, index, alpha:
                              _picked(ct, dim, index) * alpha))
index_copy_p = primitive("index_copy", _index_copy_impl, nargs=2, params=("dim", "index"),
                         vjps=(lambda ct, out, x, src, dim, index: _cleared(ct, dim, index),
                               lambda ct, out, x, src, dim, index: _picked(ct, dim, index)))
index_fill_p = primitive("index_fill", _index_fill_impl, nargs=1,
                         params=("dim", "index", "value"),
                         vjps=(lambda ct, out, x, dim, index, value: _cleared(ct, dim, index),))
# the value a 0-d tensor (torch's second overload): its gradient sums the places it filled
# (each once, however often the index names it)
index_fill_tensor_p = primitive(
    "index_fill_tensor", lambda x, value, dim, index: _index_fill_impl(x, dim, index, value),
    nargs=2, params=("dim", "index"),
    vjps=(lambda ct, out, x, value, dim, index: _cleared(ct, dim, index),
          lambda ct, out, x, value, dim, index: NP.sum(_picked(ct, dim, np.unique(index)))))
INDEX_ADD = _decl("index_add", index_add_p, "IndexAddBackward0", result="same",
                  saves_index=True)
INDEX_COPY = _decl("index_copy", index_copy_p, "IndexCopyBackward0", result="same",
                   saves_index=True)
INDEX_FILL = _decl("index_fill", index_fill_p, "IndexFillBackward0", result="same",
                   saves_index=True)
INDEX_FILL_T = _decl("index_fill_tensor", index_fill_tensor_p, "IndexFillBackward1",
                     result="same", saves_index=True)


# torch's out-of-range errors differ by function: (class, message prefix)
_OUT_OF_RANGE = {"index_add": (RuntimeError, ""), "index_copy": (IndexError, "index_copy_(): "),
                 "index_fill": (IndexError, "")}


def _index_params(self: Tensor, dim: int, index, name: str) -> dict:
    if not isinstance(index, Tensor) or index._dtype not in (D.int64, D.int32):
        got = _scalar_name(index._dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{name.rstrip('_')}_(): Expected dtype int32/int64 for index but "
                           f"got: {got}")
    d = F._dim(dim, self._data.ndim)
    size = self._data.shape[d] if self._data.ndim else 1
    idx = index._data.reshape(-1).astype(np.intp)
    if idx.size and (idx.min() < -size or idx.max() >= size):
        bad = int(idx.max() if idx.max() >= size else idx.min())
        error, prefix = _OUT_OF_RANGE[name.rstrip("_")]
        raise error(f"{prefix}index {bad} is out of bounds for dimension {d} with size {size}")
    return {"dim": d, "index": idx % max(size, 1)}


def _source(self: Tensor, source: Tensor, name: str) -> Tensor:
    if source._dtype is not self._dtype:
        raise RuntimeError(f"{name.rstrip('_')}_(): self ({_scalar_name(self._dtype)}) and source "
                           f"({_scalar_name(source._dtype)}) must have the same scalar type")
    return source


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """A copy of `input` with ``alpha * source`` added at `index` along `dim` (repeated
    indices add up).

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(3).index_add(0, torch.tensor([0, 0, 2]), torch.ones(3))
    tensor([2., 0., 1.])
    """
    params = _index_params(input, dim, index, "index_add")
    params["alpha"] = alpha
    return apply(INDEX_ADD, (input, _source(input, source, "index_add")), params)


def _index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    params = _index_params(self, dim, index, "index_add_")
    params["alpha"] = alpha
    return inplace(INDEX_ADD, self, (_source(self, source, "index_add_"),), params)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of `input` with `source`'s slices written at `index` along `dim`.

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(3).index_copy(0, torch.tensor([2]), torch.ones(1))
    tensor([0., 0., 1.])
    """
    return apply(INDEX_COPY, (input, _source(input, source, "index_copy")),
                 _index_params(input, dim, index, "index_copy"))


def _index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return inplace(INDEX_COPY, self, (_source(self, source, "index_copy_"),),
                   _index_params(self, dim, index, "index_copy_"))


def _fill_value(value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value._data.ndim} dimension(s).")
        if not value.requires_grad:
            return value._data.item()
    return value


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of `input` with `value` written at `index` along `dim`; a 0-d `value` tensor
    that requires grad gets the sum of the gradient at the places it filled
    (``IndexFillBackward1``).

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(3).index_fill(0, torch.tensor([1]), 5.0)
    tensor([0., 5., 0.])
    """
    params = _index_params(input, dim, index, "index_fill")
    value = _fill_value(value)
    if isinstance(value, Tensor):
        return apply(INDEX_FILL_T, (input, value), params)
    params["value"] = value
    return apply(INDEX_FILL, (input,), params)


def _index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    params = _index_params(self, dim, index, "index_fill_")
    value = _fill_value(value)
    if isinstance(value, Tensor):
        return inplace(INDEX_FILL_T, self, (value,), params)
    params["value"] = value
    return inplace(INDEX_FILL, self, (), params)


_offer("index_add", F.out_variant(index_add), _index_add_)
_offer("index_copy", F.out_variant(index_copy), _index_copy_)
_offer("index_fill", index_fill, _index_fill_)


# --- tril, triu, cumprod, cumsum_, flip, roll, amax, amin ---------------------------------------
def _triangle_mask(shape, diagonal: int, lower: bool) -> np.ndarray:
    rows, cols = shape[-2], shape[-1]
    keep = np.tri(rows, cols, diagonal, dtype=bool)
    return keep if lower else ~np.tri(rows, cols, diagonal - 1, dtype=bool)


def _masked(ct, mask):
    return NP.where(mask, ct, NP.zeros_like(ct))


tril_p = primitive("tril", lambda x, diagonal: np.tril(x, diagonal), params=("diagonal",),
                   vjps=(lambda ct, out, x, diagonal: _masked(
                       ct, _triangle_mask(H.shape(ct), diagonal, True)),))
triu_p = primitive("triu", lambda x, diagonal: np.triu(x, diagonal), params=("diagonal",),
                   vjps=(lambda ct, out, x, diagonal: _masked(
                       ct, _triangle_mask(H.shape(ct), diagonal, False)),))
TRIL = _decl("tril", tril_p, "TrilBackward0", result="same")
TRIU = _decl("triu", triu_p, "TriuBackward0", result="same")


def _triangle(op, name):
    def fn(input: Tensor, diagonal: int = 0) -> Tensor:
        if input._data.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return apply(op, (input,), {"diagonal": int(diagonal)})

    def method_(self: Tensor, diagonal: int = 0) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return inplace(op, self, (), {"diagonal": int(diagonal)})
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {'lower' if name == 'tril' else 'upper'} triangle of the last two "
                  f"dims (from `diagonal` on), the rest zero; grad_fn ``{op.node_cls.__name__}``.")
    method_.__name__ = method_.__qualname__ = name + "_"
    return F.out_variant(fn), method_


_offer("tril", *_triangle(TRIL, "tril"))
_offer("triu", *_triangle(TRIU, "triu"))

CUMPROD = _decl("cumprod", NP.cumprod, "CumprodBackward0", result="same")


def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running product along `dim` (exact gradients also where the input holds zeros).

    >>> import funcgrad.mutable as torch
    >>> torch.cumprod(torch.tensor([1.0, 2.0, 3.0]), 0)
    tensor([1., 2., 6.])
    """
    x = input if dtype is None else input.to(dtype)
    if x._data.ndim == 0:
        return apply(O.CLONE, (x,))
    return apply(CUMPROD, (x,), {"axis": F._dim(dim, x._data.ndim)})


def _cumprod_(self: Tensor, dim: int, *, dtype=None) -> Tensor:
    if self._data.ndim == 0:
        return self
    return inplace(CUMPROD, self, (), {"axis": F._dim(dim, self._data.ndim)})


def _cumsum_(self: Tensor, dim: int, *, dtype=None) -> Tensor:
    if self._data.ndim == 0:
        return self
    return inplace(TO.CUMSUM, self, (), {"axis": F._dim(dim, self._data.ndim)})


_offer("cumprod", F.out_variant(cumprod), _cumprod_)
METHODS["cumsum_"] = _cumsum_


def _dims_of(dims, ndim: int) -> tuple:
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return tuple(F._dim(d, ndim) for d in dims)


flip_p = primitive("flip", lambda x, dims: np.flip(x, dims).copy(), params=("dims",),
                   vjps=(lambda ct, out, x, dims: flip_p(ct, dims=dims),), linear=True)
FLIP = _decl("flip", flip_p, "FlipBackward0", result="same")


def flip(input: Tensor, *dims) -> Tensor:
    """A copy with the order of `dims` reversed.

    >>> import funcgrad.mutable as torch
    >>> torch.flip(torch.tensor([1, 2, 3]), [0])
    tensor([3, 2, 1])
    """
    if len(dims) == 1 and not isinstance(dims[0], int):
        dims = dims[0]
    return apply(FLIP, (input,), {"dims": _dims_of(dims, input._data.ndim)})


def _roll_impl(x, shifts, dims):
    if dims is None:
        return np.roll(x.reshape(-1), shifts).reshape(x.shape)
    return np.roll(x, shifts, dims)


def _unroll(shifts):
    return tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts


roll_p = primitive("roll", _roll_impl, params=("shifts", "dims"),
                   vjps=(lambda ct, out, x, shifts, dims: roll_p(ct, shifts=_unroll(shifts),
                                                                 dims=dims),), linear=True)
ROLL = _decl("roll", roll_p, "RollBackward0", result="same")


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Elements shifted cyclically along `dims` (the flattened tensor when None).

    >>> import funcgrad.mutable as torch
    >>> torch.roll(torch.tensor([1, 2, 3]), 1)
    tensor([3, 1, 2])
    """
    if dims is None:
        if not isinstance(shifts, int):
            shifts = tuple(shifts)
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                                   "dims:0")
            shifts = shifts[0]
        return apply(ROLL, (input,), {"shifts": int(shifts), "dims": None})
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = _dims_of(dims, input._data.ndim)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    return apply(ROLL, (input,), {"shifts": shifts, "dims": dims})


_offer("flip", F.out_variant(flip))


# --- diag ---------------------------------------------------------------------------------------
def _diag_at(n: int, k: int) -> tuple:
    """Row and column indices of the `n` elements of diagonal `k`."""
    return np.arange(n) + builtins.max(-k, 0), np.arange(n) + builtins.max(k, 0)


def _diag_place(ct, shape: tuple, k: int):
    """A zero matrix of `shape` with `ct` on its diagonal `k` (diag_part's transpose)."""
    rows, cols = _diag_at(H.shape(ct)[0], k)
    return NP.index_add(np.zeros(shape, H.dtype(ct)), ct, rows, cols,
                        template=(H.SLOT, H.SLOT))


diag_part_p = primitive("diag_part", lambda m, k: np.diagonal(m, k).copy(), params=("k",),
                        vjps=(lambda ct, out, m, k: _diag_place(ct, H.shape(m), k),),
                        linear=True)
diag_matrix_p = primitive("diag_matrix", lambda v, k: np.diag(v, k), params=("k",),
                          vjps=(lambda ct, out, v, k: diag_part_p(ct, k=k),), linear=True)
# torch 2.13's names: a 1-d input goes through diag_embed, a 2-d one is a copied diagonal
DIAG_MATRIX = _decl("diag_matrix", diag_matrix_p, "DiagEmbedBackward0", result="same")
DIAG_PART = _decl("diag_part", diag_part_p, "DiagonalBackward0_copy", result="same")


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-d input as the `diagonal`-th diagonal of a square matrix, or a 2-d input's
    `diagonal`-th diagonal (a copy).

    >>> import funcgrad.mutable as torch
    >>> torch.diag(torch.tensor([1.0, 2.0]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    nd = input._data.ndim
    if nd not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return apply(DIAG_MATRIX if nd == 1 else DIAG_PART, (input,), {"k": int(diagonal)})


_offer("diag", F.out_variant(diag))


# --- logcumsumexp ---------------------------------------------------------------------------------
def _logcumsumexp_impl(x, axis):
    # logaddexp's running fold shifts by the larger term at each step: no overflow, and
    # -inf / inf entries come out as torch's
    return np.logaddexp.accumulate(x, axis=axis)


def _log_parts(w):
    """log(w+) and log(w-) of a signed weight, the lowest finite float where that part is
    zero: exp of it (less anything) is exactly 0, yet no -inf - -inf = nan can arise in a
    later derivative (torch, after TensorFlow, does the same)."""
    pos, neg = NP.greater(w, 0), NP.less(w, 0)
    floor = float(np.finfo(H.dtype(w)).min)
    return (NP.where(pos, NP.log(NP.where(pos, w, 1.0)), floor),
            NP.where(neg, NP.log(NP.where(neg, -w, 1.0)), floor))


def _logcumsumexp_vjp(ct, out, x, axis):
    # dx_j = sum over i >= j of ct_i exp(x_j - out_i): in log space, the positive and negative
    # parts of ct / exp(out) summed from the end (a flipped logcumsumexp), then exp(x + that)
    def from_end(v):
        return flip_p(logcumsumexp_p(flip_p(v, dims=(axis,)), axis=axis), dims=(axis,))
    pos, neg = _log_parts(ct)
    return NP.exp(x + from_end(pos - out)) - NP.exp(x + from_end(neg - out))


def _logcumsumexp_jvp(t, out, x, axis):
    # dout_i = sum over j <= i of t_j exp(x_j - out_i)
    pos, neg = _log_parts(t)
    return (NP.exp(logcumsumexp_p(pos + x, axis=axis) - out)
            - NP.exp(logcumsumexp_p(neg + x, axis=axis) - out))


logcumsumexp_p = primitive("logcumsumexp", _logcumsumexp_impl, params=("axis",),
                           vjps=(_logcumsumexp_vjp,), jvps=(_logcumsumexp_jvp,))
LOGCUMSUMEXP = _decl("logcumsumexp", logcumsumexp_p, "LogcumsumexpBackward0", saves_out=True,
                     result="same")


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along `dim`, computed without overflow.

    >>> import funcgrad.mutable as torch
    >>> torch.logcumsumexp(torch.tensor([0.0, 0.0, 0.0]), 0)
    tensor([0.0000, 0.6931, 1.0986])
    """
    if not input._dtype.is_floating_point:
        if input._dtype.is_complex:
            raise NotImplementedError("logcumsumexp of complex tensors is not supported by "
                                      "funcgrad.mutable")
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{input._dtype.tensor_type[:-6]}'")
    if input._data.ndim == 0:
        F._dim(dim, 1)
        return apply(O.CLONE, (input,))
    return apply(LOGCUMSUMEXP, (input,), {"axis": F._dim(dim, input._data.ndim)})


_offer("logcumsumexp", F.out_variant(logcumsumexp))
_offer("roll", roll)
AMAX = _decl("amax", NP.max, "AmaxBackward0", result="same")
AMIN = _decl("amin", NP.min, "AminBackward0", result="same")


def _extreme(op, name):
    def fn(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
        axes = _dims_of(dim, input._data.ndim) if dim != () and dim is not None else None
        if input._data.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                             f"== 0. Specify the reduction dim with the 'dim' argument.")
        return apply(op, (input,), {"axis": axes, "keepdims": bool(keepdim)})
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {'largest' if name == 'amax' else 'smallest'} value along `dim` (all "
                  "dims by default); ties share the gradient evenly, as in torch.")
    return F.out_variant(fn)


_offer("amax", TO.with_aliases(_extreme(AMAX, "amax")))
_offer("amin", TO.with_aliases(_extreme(AMIN, "amin")))


# --- beta * input + alpha * product: addmm, addmv, addr, baddbmm, addbmm; mv ----------------------
def _swap(x):
    return NP.swapaxes(x, axis1=-1, axis2=-2)


def _column(v):
    return NP.reshape(v, shape=H.shape(v) + (1,))


def _row(v):
    return NP.reshape(v, shape=(1,) + H.shape(v))


_PRODUCT = {"mm": lambda a, b: a @ b, "mv": lambda a, b: a @ b, "bmm": lambda a, b: a @ b,
            "r": np.outer, "addbmm": lambda a, b: (a @ b).sum(0)}


def _add_product_impl(x, a, b, beta, alpha, kind):
    product = _PRODUCT[kind](a, b)
    if beta == 0:  # as torch: the input is ignored (its NaNs too)
        return alpha * product if alpha != 1 else product
    scaled = x if beta == 1 else beta * x
    return scaled + (alpha * product if alpha != 1 else product)


def _product_vjp_a(ct, out, x, a, b, beta, alpha, kind):
    if kind == "mv":
        g = NP.matmul(_column(ct), _row(b))
    elif kind == "r":
        g = NP.matmul(ct, b)
    else:  # mm, bmm, addbmm (a 2-d ct broadcast over the batch)
        g = NP.matmul(ct, _swap(b))
    return g * alpha if alpha != 1 else g


def _product_vjp_b(ct, out, x, a, b, beta, alpha, kind):
    if kind == "mv":
        g = NP.matmul(_swap(a), ct)
    elif kind == "r":
        g = NP.matmul(_swap(ct), a)
    else:
        g = NP.matmul(_swap(a), ct)
    return g * alpha if alpha != 1 else g


add_product_p = primitive(
    "add_product", _add_product_impl, nargs=3, params=("beta", "alpha", "kind"),
    vjps=(lambda ct, out, x, a, b, beta, alpha, kind: ct * beta if beta != 1 else ct,
          _product_vjp_a, _product_vjp_b))
_ADD_PRODUCT = {kind: _decl(f"add{kind}", add_product_p, f"Add{kind}Backward0")
                for kind in ("mm", "mv", "r", "bmm")}
_ADD_PRODUCT["bmm"] = _decl("baddbmm", add_product_p, "BaddbmmBackward0")
_ADD_PRODUCT["addbmm"] = _decl("addbmm", add_product_p, "AddbmmBackward0", node_base=F.extra_node(
    "_saved_batch1_sym_argsize_0", "_saved_batch1_sym_argsize_1", "_saved_batch2_sym_argsize_2"))
_NAMES = {"mm": "addmm", "mv": "addmv", "r": "addr", "bmm": "baddbmm", "addbmm": "addbmm"}
_RANKS = {"mm": (2, 2), "mv": (2, 1), "r": (1, 1), "bmm": (3, 3), "addbmm": (3, 3)}


def _product_check(kind: str, a: Tensor, b: Tensor) -> None:
    name = _NAMES[kind]
    ra, rb = _RANKS[kind]
    if a._data.ndim != ra or b._data.ndim != rb:
        raise RuntimeError(f"{name}: expected {ra}-D and {rb}-D tensors, got "
                           f"{a._data.ndim}-D and {b._data.ndim}-D")
    if kind != "r":
        inner_a = a._data.shape[-1]
        inner_b = b._data.shape[-2] if rb >= 2 else b._data.shape[0]
        if inner_a != inner_b:
            raise RuntimeError(f"{name}: size mismatch: {list(a._data.shape)} and "
                               f"{list(b._data.shape)} cannot be multiplied")


def _sizes(out: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """addbmm's node keeps the batches' sizes it reads at backward (PyTorch's names)."""
    if a._data.ndim == 3:
        F.stash(out, _saved_batch1_sym_argsize_0=a._data.shape[0],
                _saved_batch1_sym_argsize_1=a._data.shape[1],
                _saved_batch2_sym_argsize_2=b._data.shape[2])
    return out


def _add_product(kind: str):
    op = _ADD_PRODUCT[kind]
    name = _NAMES[kind]

    def fn(input: Tensor, a: Tensor, b: Tensor, *, beta=1, alpha=1) -> Tensor:
        _product_check(kind, a, b)
        return _sizes(apply(op, (input, a, b), {"beta": beta, "alpha": alpha, "kind": kind}),
                      a, b)

    def method_(self: Tensor, a: Tensor, b: Tensor, *, beta=1, alpha=1) -> Tensor:
        _product_check(kind, a, b)
        return _sizes(inplace(op, self, (a, b), {"beta": beta, "alpha": alpha, "kind": kind}),
                      a, b)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``beta * input + alpha * product`` ({name}; grad_fn "
                  f"``{op.node_cls.__name__}``).")
    method_.__name__ = method_.__qualname__ = name + "_"
    _offer(name, F.out_variant(fn), method_, kind == "mv")  # (torch has torch.addmv_ only)


for _kind in _NAMES:
    _add_product(_kind)
MV = O._decl("mv_fn", NP.matmul, "MvBackward0")


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector (grad_fn ``MvBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.mv(torch.eye(2), torch.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec._data.ndim}, "
                           f"{input._data.ndim}, {vec._data.ndim}")
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0]}), mat "
                           f"({input._data.shape[0]}x{input._data.shape[1]}), vec "
                           f"({vec._data.shape[0]})")
    return apply(MV, (input, vec))


_offer("mv", F.out_variant(mv))


# --- in-place random fills beyond normal_ and uniform_, on PyTorch's CPU stream (_random) --------------
RANDOM_FROM_TO = _decl("random_from_to_", None, "RandomBackward0")
RANDOM_TO = _decl("random_to_", None, "RandomBackward1")
RANDOM = _decl("random_", None, "RandomBackward2")
EXPONENTIAL = _decl("exponential_", None, "ExponentialBackward0")
CAUCHY = _decl("cauchy_", None, "CauchyBackward0")
GEOMETRIC = _decl("geometric_", None, "GeometricBackward0")
LOG_NORMAL = _decl("log_normal_", None, "LogNormalBackward0")


def _filled(self: Tensor, op: O.Op, draw, *args) -> Tensor:
    """`self` filled in place with ``draw(shape, dtype, *args)`` (drawn once the write is
    allowed: a refused write consumes no random numbers, as in PyTorch)."""
    return inplace(op, self, (), compute=lambda s: draw(s.shape, s.dtype, *args))


def _check_random_bounds(self: Tensor, low: int, high: int) -> None:
    """PyTorch's checks of random_(from, to) against the tensor's dtype."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    name = self._dtype.name
    digits = _random.FLOAT_DIGITS.get(self._data.dtype)
    if digits is not None:
        for label, value in (("from", low), ("to - 1", high - 1)):
            if not -(1 << digits) <= value <= (1 << digits):
                warnings.warn(
                    f"{label} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {_C_NAMES[name]} can support discrete uniform distribution "
                    "only within this range. This warning will become an error in version 1.7 "
                    "release, please fix the code in advance (Triggered internally at "
                    "/__w/pytorch/pytorch/aten/src/ATen/native/DistributionTemplates.h:111.)",
                    UserWarning, stacklevel=3)
        return
    if self._dtype.category >= 2:
        raise RuntimeError(f"random_ is not implemented for {_scalar_name(self._dtype)}")
    info = (0, 1) if name == "bool" else (np.iinfo(self._data.dtype).min,
                                          np.iinfo(self._data.dtype).max)
    for label, value in (("from", low), ("to - 1", high - 1)):
        if not info[0] <= value <= info[1]:
            raise RuntimeError(f"{label} is out of bounds for {_C_NAMES[name]}")


def _random_(self: Tensor, from_=None, to=None, *, generator=None, **kwargs) -> Tensor:
    """``Tensor.random_()``, ``random_(to)``, ``random_(from, to)`` (``from=`` by keyword)."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if from_ is None and to is None:
        return _filled(self, RANDOM, _random.random_values, generator)
    if to is None:
        low, high, op = 0, int(from_), RANDOM_TO
    else:
        low, high, op = int(0 if from_ is None else from_), int(to), RANDOM_FROM_TO
    _check_random_bounds(self, low, high)
    return _filled(self, op, _random.random_between, low, high, generator)


def _continuous(self: Tensor, what: str) -> None:
    if not self._dtype.is_floating_point:
        name = _scalar_name(self._dtype) if what == "Exponential" else _C_NAMES[self._dtype.name]
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {name}")


def _exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous(self, "Exponential")
    return _filled(self, EXPONENTIAL, _random.exponential, lambd, generator)


def _cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous(self, "Cauchy")
    return _filled(self, CAUCHY, _random.cauchy, median, sigma, generator)


def _geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _filled(self, GEOMETRIC, _random.geometric, p, generator)


def _log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    if not self._dtype.is_floating_point:
        raise NotImplementedError(f'"log_normal_cpu" not implemented for '
                                  f"'{_scalar_name(self._dtype)}'")
    return _filled(self, LOG_NORMAL, _random.log_normal, mean, std, generator)


METHODS.update({"random_": _random_, "exponential_": _exponential_, "cauchy_": _cauchy_,
                "geometric_": _geometric_, "log_normal_": _log_normal_})


# --- gcd, lcm (integers; no gradient) and heaviside (recorded, no derivative) ---------------------------
def _integer_pair(name: str, input: Tensor, other: Tensor) -> tuple:
    for t in (input, other):
        if t._dtype.category != 1:
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{_scalar_name(t._dtype)}'")
    return input._data, other._data


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise greatest common divisor of two integer tensors (non-negative).

    >>> import funcgrad.mutable as torch
    >>> torch.gcd(torch.tensor([12, 18, -4]), torch.tensor([8, 27, 6]))
    tensor([4, 9, 2])
    """
    return Tensor._wrap(np.gcd(*_integer_pair("gcd", input, other)))


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise least common multiple of two integer tensors (non-negative).

    >>> import funcgrad.mutable as torch
    >>> torch.lcm(torch.tensor([12, 18, 0]), torch.tensor([8, 27, 5]))
    tensor([24, 54,  0])
    """
    return Tensor._wrap(np.lcm(*_integer_pair("lcm", input, other)))


GCD_ = _decl("gcd_", None, "GcdBackward0")
LCM_ = _decl("lcm_", None, "LcmBackward0")


def _gcd_(self: Tensor, other: Tensor) -> Tensor:
    _integer_pair("gcd", self, other)
    return inplace(GCD_, self, (), compute=lambda s: np.gcd(s, other._data))


def _lcm_(self: Tensor, other: Tensor) -> Tensor:
    _integer_pair("lcm", self, other)
    return inplace(LCM_, self, (), compute=lambda s: np.lcm(s, other._data))


def _heaviside_impl(x, values):
    return np.heaviside(x, values).astype(np.result_type(x, values))


# recorded, with no derivative: backward fails naming aten::heaviside (or heaviside_)
HEAVISIDE = _decl("heaviside", primitive("heaviside", _heaviside_impl, nargs=2,
                                         differentiable=False),
                  "NotImplemented", node_base=O.NotImplementedNode)
HEAVISIDE_ = _decl("heaviside_", primitive("heaviside_", _heaviside_impl, nargs=2,
                                           differentiable=False),
                   "NotImplemented", node_base=O.NotImplementedNode)


def _heaviside_args(input: Tensor, values: Tensor) -> None:
    if input._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 below zero, 1 above, `values` at zero (no derivative: torch
    records a node that fails at backward).

    >>> import funcgrad.mutable as torch
    >>> torch.heaviside(torch.tensor([-1.5, 0.0, 2.0]), torch.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    _heaviside_args(input, values)
    return apply(HEAVISIDE, (input, values))


def _heaviside_(self: Tensor, values: Tensor) -> Tensor:
    _heaviside_args(self, values)
    return inplace(HEAVISIDE_, self, (values,))


_offer("gcd", gcd, _gcd_, True)
_offer("lcm", lcm, _lcm_, True)
_offer("heaviside", heaviside, _heaviside_)


# --- put, index_put, masked_scatter: writes at indices, with their gradients ----------------------------
def _put_impl(x, src, index, accumulate):
    out = np.array(x, copy=True)
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, index, np.ravel(src))
    else:
        flat[index] = np.ravel(src)
    return out


def _put_vjp_x(ct, out, x, src, index, accumulate):
    if accumulate:
        return ct
    flat = NP.index_set(NP.reshape(ct, (-1,)), 0, index, template=(H.SLOT,))
    return NP.reshape(flat, H.shape(x))


def _put_vjp_src(ct, out, x, src, index, accumulate):
    return NP.reshape(NP.getitem(NP.reshape(ct, (-1,)), index, template=(H.SLOT,)), H.shape(src))


put_p = primitive("put", _put_impl, nargs=2, params=("index", "accumulate"),
                  vjps=(_put_vjp_x, _put_vjp_src))
PUT = _decl("put", put_p, "PutBackward0", result="same", saves_index=True)


def _put_args(self: Tensor, index: Tensor, source: Tensor, accumulate: bool) -> dict:
    n = self._data.size
    idx = np.asarray(index._data, np.int64).reshape(-1)
    bad = idx[(idx >= n) | (idx < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of "
                         f"{n} elements.")
    if idx.size != source._data.size:
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source._data.size}, "
                           f"index.numel() = {idx.size}")
    return {"index": np.where(idx < 0, idx + n, idx), "accumulate": bool(accumulate)}


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of `input` with `source`'s values written (or added) at flat indices `index`.

    >>> import funcgrad.mutable as torch
    >>> torch.put(torch.zeros(2, 2), torch.tensor([1, -1]), torch.tensor([9.0, 7.0]))
    tensor([[0., 9.],
            [0., 7.]])
    """
    return apply(PUT, (input, source), _put_args(input, index, source, accumulate))


def _put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    return inplace(PUT, self, (source,), _put_args(self, index, source, accumulate))


def _index_put_impl(x, values, arrays, template, accumulate):
    out = np.array(x, copy=True)
    index = H.build_index(template, arrays)
    if accumulate:
        np.add.at(out, index, np.broadcast_to(values, out[index].shape))
    else:
        out[index] = values
    return out


def _index_put_vjp_x(ct, out, x, values, arrays, template, accumulate):
    return ct if accumulate else NP.index_set(ct, 0, *arrays, template=template)


def _index_put_vjp_values(ct, out, x, values, arrays, template, accumulate):
    return NP.getitem(ct, *arrays, template=template)  # (summed to values' shape by the walk)


index_put_p = primitive("index_put", _index_put_impl, nargs=2,
                        params=("arrays", "template", "accumulate"), vjps=(_index_put_vjp_x,
                                                                 _index_put_vjp_values))
INDEX_PUT = _decl("index_put", index_put_p, "IndexPutBackward0", result="same")


def _index_put_args(indices) -> tuple:
    """(index arrays, template) for a tuple of index tensors (None: a whole dimension)."""
    arrays, template = [], []
    for t in indices:
        if t is None:
            template.append(slice(None))
            continue
        data = t._data if isinstance(t, Tensor) else np.asarray(t)
        if data.dtype == np.bool_:
            for part in np.nonzero(data):
                arrays.append(part)
                template.append(H.SLOT)
            continue
        if data.dtype.kind not in "iu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        arrays.append(data.astype(np.intp))
        template.append(H.SLOT)
    return tuple(arrays), tuple(template)


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of `input` with ``out[indices] = values`` (``+=`` with `accumulate`).

    >>> import funcgrad.mutable as torch
    >>> torch.index_put(torch.zeros(2, 3), (torch.tensor([0, 1]), torch.tensor([2, 0])), torch.tensor([3.0, 4.0]))
    tensor([[0., 0., 3.],
            [4., 0., 0.]])
    """
    arrays, template = _index_put_args(indices)
    return apply(INDEX_PUT, (input, values), {"arrays": arrays, "template": template,
                                              "accumulate": bool(accumulate)})


def _index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    arrays, template = _index_put_args(indices)
    return inplace(INDEX_PUT, self, (values,), {"arrays": arrays, "template": template,
                                                "accumulate": bool(accumulate)})


def _masked_scatter_impl(x, source, mask):
    out = np.array(x, copy=True)
    where = np.broadcast_to(mask, out.shape)
    out[where] = np.ravel(source)[:int(where.sum())]
    return out


def _masked_scatter_vjp_source(ct, out, x, source, mask):
    where = np.broadcast_to(mask, H.shape(x))
    taken = NP.getitem(ct, *np.nonzero(where), template=(H.SLOT,) * where.ndim)
    size = int(np.prod(H.shape(source), dtype=np.int64))
    flat = NP.index_add(np.zeros(size, H.dtype(ct)), taken,
                        template=(slice(0, int(where.sum())),))
    return NP.reshape(flat, H.shape(source))


masked_scatter_p = primitive(
    "masked_scatter", _masked_scatter_impl, nargs=2, params=("mask",),
    vjps=(lambda ct, out, x, source, mask: NP.where(mask, 0.0, ct), _masked_scatter_vjp_source))
MASKED_SCATTER = _decl("masked_scatter", masked_scatter_p, "MaskedScatterBackward0",
                       result="same")


def _masked_scatter_args(self: Tensor, mask: Tensor, source: Tensor) -> dict:
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_scalar_name(mask._dtype)}")
    where = np.broadcast_to(mask._data, self._data.shape)
    if source._data.size < int(where.sum()):
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return {"mask": where}


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of `input` whose elements where `mask` is True take `source`'s values in order.

    >>> import funcgrad.mutable as torch
    >>> torch.zeros(4).masked_scatter(torch.tensor([True, False, True, False]), torch.tensor([1.0, 2.0]))
    tensor([1., 0., 2., 0.])
    """
    return apply(MASKED_SCATTER, (input, source), _masked_scatter_args(input, mask, source))


def _masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return inplace(MASKED_SCATTER, self, (source,), _masked_scatter_args(self, mask, source))


_offer("put", put, _put_)
_offer("index_put", index_put, _index_put_, True)
_offer("masked_scatter", masked_scatter, _masked_scatter_)


# --- renorm: each slice along dim scaled down to a p-norm of at most maxnorm ----------------------------
def _others(x, dim: int) -> tuple:
    return tuple(k for k in range(len(H.shape(x))) if k != dim)


def _renorm_impl(x, p, dim, maxnorm):
    norm = np.sum(np.abs(x) ** p, axis=_others(x, dim), keepdims=True) ** (1.0 / p)
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return (x * factor).astype(x.dtype)


def _renorm_vjp(ct, out, x, p, dim, maxnorm):
    """PyTorch's renorm_backward: where a slice was scaled (norm > maxnorm), the scale's own
    derivative through the norm is subtracted."""
    axes = _others(x, dim)
    norm = NP.sum(NP.absolute(x) ** p, axis=axes, keepdims=True) ** (1.0 / p)
    inv = 1.0 / (norm + 1e-7)
    factor = inv * maxnorm
    along = NP.sum(x * ct, axis=axes, keepdims=True)
    norm_grad = along * NP.sign(x) * NP.absolute(x) ** (p - 1) / norm ** (p - 1)
    return NP.where(norm > maxnorm, factor * ct - factor * inv * norm_grad, ct)


renorm_p = primitive("renorm", _renorm_impl, params=("p", "dim", "maxnorm"), vjps=(_renorm_vjp,))
RENORM = _decl("renorm", renorm_p, "RenormBackward0", result="same")


def _renorm_args(self: Tensor, p, dim: int, maxnorm) -> dict:
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    return {"p": float(p), "dim": F._dim(dim, builtins.max(self._data.ndim, 1)),
            "maxnorm": float(maxnorm)}


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Each slice of `input` along `dim` whose `p`-norm exceeds `maxnorm` scaled to norm
    `maxnorm` (``RenormBackward0``).

    >>> import funcgrad.mutable as torch
    >>> torch.renorm(torch.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    return apply(RENORM, (input,), _renorm_args(input, p, dim, maxnorm))


def _renorm_(self: Tensor, p, dim: int, maxnorm) -> Tensor:
    return inplace(RENORM, self, (), _renorm_args(self, p, dim, maxnorm))


_offer("renorm", renorm, _renorm_)



# --- small torch functions and methods written with the ops above (their nodes are those ops') -----
def _flags(input: Tensor, test) -> Tensor:
    """A bool tensor of `test` on the values (no history, as PyTorch's comparisons)."""
    data = input._data
    if input._dtype.category < 2:  # integers and bools are always finite
        return Tensor._wrap(np.zeros(data.shape, bool) if test is not np.isfinite
                            else np.ones(data.shape, bool))
    return Tensor._wrap(np.asarray(test(data)))


def isnan(input: Tensor) -> Tensor:
    """Where `input` is NaN.

    >>> import funcgrad.mutable as torch
    >>> torch.isnan(torch.tensor([1.0, float("nan")]))
    tensor([False,  True])
    """
    return _flags(input, np.isnan)


def isinf(input: Tensor) -> Tensor:
    """Where `input` is +-inf."""
    return _flags(input, np.isinf)


def isfinite(input: Tensor) -> Tensor:
    """Where `input` is neither NaN nor +-inf."""
    return _flags(input, np.isfinite)


def isposinf(input: Tensor) -> Tensor:
    """Where `input` is +inf."""
    return _flags(input, np.isposinf)


def isneginf(input: Tensor) -> Tensor:
    """Where `input` is -inf."""
    return _flags(input, np.isneginf)


def isreal(input: Tensor) -> Tensor:
    """Where `input` has no imaginary part."""
    if input._dtype.is_complex:
        return Tensor._wrap(np.asarray(input._data.imag == 0))
    return Tensor._wrap(np.ones(input._data.shape, bool))


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of the nonzero elements: an (n, ndim) int64 tensor, or one per dim.

    >>> import funcgrad.mutable as torch
    >>> torch.nonzero(torch.tensor([0.0, 1.0, 2.0]))
    tensor([[1],
            [2]])
    """
    found = np.nonzero(np.atleast_1d(input._data))
    if as_tuple:
        return tuple(Tensor._wrap(f.astype(np.int64)) for f in found)
    return Tensor._wrap(np.stack(found, axis=1).astype(np.int64).reshape(-1, input._data.ndim))


def argwhere(input: Tensor) -> Tensor:
    """``torch.argwhere``: `nonzero` as one (n, ndim) tensor."""
    return nonzero(input)


def is_complex(input: Tensor) -> bool:
    """Whether the dtype is complex."""
    return input._dtype.is_complex


def is_floating_point(input: Tensor) -> bool:
    """Whether the dtype is a floating one."""
    return input.is_floating_point()


def is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor (PyTorch's errors otherwise)."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()))


def ravel(input: Tensor) -> Tensor:
    """All elements as one dim (a view when it can be)."""
    return input.reshape(-1)


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose`` under NumPy's name."""
    return F.transpose(input, axis0, axis1)


def movedim(input: Tensor, source, destination) -> Tensor:
    """Move dims `source` to `destination` (ints or sequences), as a permute view."""
    n = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [F._dim(d, n) for d in src]
    dst = [F._dim(d, n) for d in dst]
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return F.permute(input, tuple(order))


def broadcast_to(input: Tensor, size) -> Tensor:
    """``expand`` under NumPy's name."""
    return F.expand(input, *size) if not isinstance(size, int) else F.expand(input, size)


def tile(input: Tensor, dims) -> Tensor:
    """Repeat `input` along each dim (leading ones added to whichever is shorter)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(dims) < input._data.ndim:
        dims = (1,) * (input._data.ndim - len(dims)) + dims
    return input.repeat(*dims)


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Split dim `dim` into `sizes` (one entry may be -1)."""
    shape = list(input.shape)
    dim = F._dim(dim, len(shape))
    return input.reshape(tuple(shape[:dim]) + tuple(sizes) + tuple(shape[dim + 1:]))


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum with NaNs counted as zero."""
    clean = F.where(isnan(input), F.zeros_like(input), input)
    if dim is None:
        return clean.sum(dtype=dtype) if dtype is not None else clean.sum()
    return clean.sum(dim, keepdim) if dtype is None else clean.sum(dim, keepdim, dtype=dtype)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements where `mask` (broadcast against `input`) is True, as one dim."""
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return F.expand(input, *shape)[Tensor._wrap(np.broadcast_to(mask._data, shape).copy())]


def broadcast_tensors(*tensors) -> tuple:
    """Each tensor expanded to their common shape (views)."""
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(F.expand(t, *shape) for t in tensors)


def _stack_along(name: str, tensors, dim: int, least: int) -> Tensor:
    def lift(t):
        while t.dim() < least:
            t = t.unsqueeze(0) if t.dim() == 0 or least == 2 else t.unsqueeze(-1)
        return t
    tensors = [lift(t) for t in tensors]
    if name == "hstack" and tensors[0].dim() == 1:
        dim = 0
    return F.cat(tensors, dim)


def hstack(tensors) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-d tensors)."""
    return _stack_along("hstack", list(tensors), 1, 1)


def vstack(tensors) -> Tensor:
    """Concatenate along dim 0, 1-d tensors as rows."""
    return _stack_along("vstack", list(tensors), 0, 2)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids (views of the inputs, expanded); ``indexing`` "ij" or "xy"."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        indexing = "ij"
    n = len(tensors)
    shape = [t.numel() for t in tensors]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for k, t in enumerate(tensors):
        pos = k
        if indexing == "xy" and n >= 2 and k < 2:
            pos = 1 - k
        view = [1] * n
        view[pos] = -1
        out.append(F.expand(t.reshape(tuple(view)), *shape))
    return tuple(out)


def _cast(dtype_name: str):
    def cast(self: Tensor, memory_format=None) -> Tensor:
        return self.to(getattr(D, dtype_name))
    cast.__name__ = dtype_name
    return cast


for _name, _fn in (("isnan", isnan), ("isinf", isinf), ("isfinite", isfinite),
                   ("isposinf", isposinf), ("isneginf", isneginf), ("isreal", isreal),
                   ("nonzero", nonzero), ("argwhere", argwhere), ("is_complex", is_complex),
                   ("is_nonzero", is_nonzero), ("ravel", ravel), ("swapaxes", swapaxes),
                   ("swapdims", swapaxes), ("movedim", movedim), ("moveaxis", movedim),
                   ("broadcast_to", broadcast_to), ("tile", tile), ("unflatten", unflatten),
                   ("nansum", nansum), ("masked_select", masked_select)):
    if not hasattr(Tensor, _name):
        METHODS[_name] = _fn
for _name, _fn in (("isnan", isnan), ("isinf", isinf), ("isfinite", isfinite),
                   ("isposinf", isposinf), ("isneginf", isneginf), ("isreal", isreal),
                   ("nonzero", nonzero), ("argwhere", argwhere), ("is_complex", is_complex),
                   ("is_floating_point", is_floating_point), ("is_nonzero", is_nonzero),
                   ("ravel", ravel), ("swapaxes", swapaxes), ("swapdims", swapaxes),
                   ("movedim", movedim), ("moveaxis", movedim), ("broadcast_to", broadcast_to),
                   ("tile", tile), ("unflatten", unflatten), ("nansum", nansum),
                   ("masked_select", masked_select), ("broadcast_tensors", broadcast_tensors),
                   ("hstack", hstack), ("vstack", vstack), ("meshgrid", meshgrid)):
    FUNCTIONS.setdefault(_name, _fn)
Tensor.ndimension = lambda self: self.dim()
Tensor.reshape_as = lambda self, other: self.reshape(tuple(other.shape))
Tensor.get_device = lambda self: -1  # the CPU
Tensor.is_signed = lambda self: self._dtype.is_signed if hasattr(self._dtype, "is_signed") \
    else self._dtype.np.kind in "ifc"
Tensor.is_same_size = lambda self, other: tuple(self.shape) == tuple(other.shape)
Tensor.nbytes = property(lambda self: self._data.nbytes)
Tensor.itemsize = property(lambda self: self._data.itemsize)
for _name in ("byte", "char", "short", "cfloat", "cdouble"):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _cast({"byte": "uint8", "char": "int8", "short": "int16",
                                      "cfloat": "complex64", "cdouble": "complex128"}[_name]))

# --- igamma / igammac: the regularized incomplete gamma functions P(a, x) and Q(a, x) --------
# torch differentiates them in x only: backward into `input` (a) raises its NotImplementedError,
# and forward-mode AD through `input` raises the forward-AD one (torch refuses it entirely).
def _igamma_no_input_grad(name: str):
    def rule(ct, out, a, x):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return rule


def _igamma_no_forward(name: str):
    def rule(t, out, a, x):
        raise NotImplementedError(f"Trying to use forward AD with {name} that does not support "
                                  "it because it has not been implemented yet.")
    return rule


igamma_p = primitive("igamma", S.gammainc_p.impl, nargs=2, batch=batch_elementwise,
                     vjps=(_igamma_no_input_grad("igamma"),
                           lambda ct, out, a, x: ct * S._gammainc_dx(out, a, x)),
                     jvps=(_igamma_no_forward("igamma"), None))
igammac_p = primitive("igammac", S.gammaincc_p.impl, nargs=2, batch=batch_elementwise,
                      vjps=(_igamma_no_input_grad("igammac"),
                            lambda ct, out, a, x: -ct * S._gammainc_dx(out, a, x)),
                      jvps=(_igamma_no_forward("igammac"), None))
IGAMMA = _decl("igamma", igamma_p, "IgammaBackward0", result="float")
IGAMMAC = _decl("igammac", igammac_p, "IgammacBackward0", result="float")


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other) (SciPy's
    ``gammainc``); differentiable in `other` only, as in torch.

    >>> import funcgrad.mutable as torch
    >>> torch.igamma(torch.tensor([1.0]), torch.tensor([2.0]))
    tensor([0.8647])
    """
    return apply(IGAMMA, (input, other))


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P.

    >>> import funcgrad.mutable as torch
    >>> torch.igammac(torch.tensor([1.0]), torch.tensor([2.0]))
    tensor([0.1353])
    """
    return apply(IGAMMAC, (input, other))


def _igamma_(self: Tensor, other: Tensor) -> Tensor:
    _check_float_result(IGAMMA, self)
    return inplace(IGAMMA, self, (other,))


def _igammac_(self: Tensor, other: Tensor) -> Tensor:
    _check_float_result(IGAMMAC, self)
    return inplace(IGAMMAC, self, (other,))


_offer("igamma", F.out_variant(igamma), _igamma_)
_offer("igammac", F.out_variant(igammac), _igammac_)


# --- stacking helpers and small compositions: gradients come from the ops they are made of ----
def atleast_1d(*tensors):
    """Each tensor with at least one dim (a 0-d tensor becomes shape (1,)); a tuple when
    given several tensors or a sequence, as torch."""
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    """Each tensor with at least two dims (1-d of size N becomes (1, N))."""
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    """Each tensor with at least three dims: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    return _atleast(tensors, 3)


def _lift(t: Tensor, least: int) -> Tensor:
    n = t.dim()
    if n >= least:
        return t
    if least == 1:
        return t.reshape(1)
    if least == 2:
        return t.reshape(1, -1) if n == 1 else t.reshape(1, 1)
    if n == 0:
        return t.reshape(1, 1, 1)
    return t.reshape(1, -1, 1) if n == 1 else t.unsqueeze(-1)


def _atleast(tensors, least: int):
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _lift(tensors[0], least)
    if len(tensors) == 1:
        tensors = tensors[0]
    return tuple(_lift(t, least) for t in tensors)


def dstack(tensors) -> Tensor:
    """Concatenate along dim 2, after lifting each tensor to three dims (``atleast_3d``)."""
    return F.cat([_lift(t, 3) for t in tensors], 2)


def column_stack(tensors) -> Tensor:
    """Concatenate along dim 1; 0-d and 1-d tensors become columns."""
    return F.cat([t.reshape(-1, 1) if t.dim() < 2 else t for t in tensors], 1)


def block_diag(*tensors) -> Tensor:
    """A 2-d tensor with the given 0-, 1- or 2-d tensors along its diagonal, zeros elsewhere.

    >>> import funcgrad.mutable as torch
    >>> torch.block_diag(torch.tensor([[1, 2]]), torch.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
        blocks.append(_lift(t, 2))
    dt = D.result_type_of(blocks) if blocks else D.DEFAULT_FLOAT
    blocks = [b if b._dtype is dt else b.to(dt) for b in blocks]
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape[0], b.shape[1]
        parts = [F.zeros(r, left, dtype=dt), b, F.zeros(r, width - left - c, dtype=dt)]
        rows.append(F.cat(parts, 1))
        left += c
    if not rows:
        return F.zeros(1, 0, dtype=dt)
    return F.cat(rows, 0)


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoid rule along `dim`: sample spacing from `x` (1-d, or y's shape) or the
    number `dx` (1 by default).

    >>> import funcgrad.mutable as torch
    >>> torch.trapezoid(torch.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    dim = F._dim(dim, y.dim())
    n = y.shape[dim]
    if n == 0:
        return y.sum(dim) * 0
    pair = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    if x is None:
        return pair.sum(dim) * ((1 if dx is None else dx) / 2)
    if not isinstance(x, Tensor):
        x = F.tensor(x)
    if x.dim() == 1:
        steps = x[1:] - x[:-1]
        shape = [1] * y.dim()
        shape[dim] = n - 1
        steps = steps.reshape(shape)
    else:
        m = x.shape[dim]
        steps = x.narrow(dim, 1, m - 1) - x.narrow(dim, 0, m - 1)
    return (steps * pair).sum(dim) / 2


def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


_CHAIN_WARNED = [False]


def chain_matmul(*matrices, out=None) -> Tensor:
    """The product of the matrices, left to right (deprecated in torch: warns once, as torch,
    pointing to ``torch.linalg.multi_dot``)."""
    if not _CHAIN_WARNED[0]:
        _CHAIN_WARNED[0] = True
        warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                      "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
                      "or more tensors rather than multiple parameters.", UserWarning,
                      stacklevel=2)
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    result = matrices[0]
    if len(matrices) == 1:
        result = result.clone()
    for m in matrices[1:]:
        result = F.mm(result, m)
    if out is not None:
        out.copy_(result)
        return out
    return result


for _name, _fn in (("atleast_1d", atleast_1d), ("atleast_2d", atleast_2d),
                   ("atleast_3d", atleast_3d), ("dstack", dstack), ("column_stack", column_stack),
                   ("block_diag", block_diag), ("trapezoid", trapezoid), ("trapz", trapz),
                   ("chain_matmul", chain_matmul)):
    FUNCTIONS.setdefault(_name, _fn)


# --- conjugate and negative bits: funcgrad computes conj eagerly, so no tensor carries a lazy
# conjugate or negative bit; torch's queries and resolvers answer for that state ---------------
CONJ_PHYSICAL = _decl("conj_physical", NP.conjugate, "ConjPhysicalBackward0", result="same")


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (grad_fn ``ConjPhysicalBackward0``); a real tensor
    itself, as torch."""
    return apply(CONJ_PHYSICAL, (input,), {}) if input._dtype.is_complex else input


def resolve_conj(input: Tensor) -> Tensor:
    """`input` itself: funcgrad never defers a conjugation, so there is nothing to resolve
    (torch returns the tensor itself when its conjugate bit is off)."""
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """`input` itself: funcgrad never defers a negation (see `resolve_conj`)."""
    return input


def is_conj(input: Tensor) -> bool:
    """False: funcgrad's conj computes the values, it sets no lazy conjugate bit."""
    return False


def is_neg(input: Tensor) -> bool:
    """False: funcgrad sets no lazy negative bit."""
    return False


for _name, _fn in (("conj_physical", conj_physical), ("resolve_conj", resolve_conj),
                   ("resolve_neg", resolve_neg), ("is_conj", is_conj), ("is_neg", is_neg)):
    FUNCTIONS.setdefault(_name, _fn)
    METHODS.setdefault(_name, _fn)


# --- Tensor.storage(): torch's (deprecated) typed view of the memory a tensor lies in ---------
_TYPED_STORAGE_WARNED = [False]


class TypedStorage:
    """The memory a tensor's elements lie in, counted in elements of its dtype: ``len`` is the
    whole buffer's length (a slice's storage is its base's), ``data_ptr`` its start."""

    __slots__ = ("_owner", "dtype")

    def __init__(self, owner: np.ndarray, dtype) -> None:
        self._owner = owner
        self.dtype = dtype

    def __len__(self) -> int:
        return self._owner.nbytes // self._owner.itemsize

    def size(self) -> int:
        return len(self)

    def data_ptr(self) -> int:
        return self._owner.__array_interface__["data"][0]

    def element_size(self) -> int:
        return self._owner.itemsize

    def nbytes(self) -> int:
        return self._owner.nbytes

    @property
    def device(self):
        return F.device("cpu")

    def tolist(self) -> list:
        return self._owner.reshape(-1).tolist()

    def __repr__(self) -> str:
        values = "\n".join(" " + repr(v) for v in self.tolist())
        return f"{values}\n[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {len(self)}]"


def _storage(self: Tensor) -> TypedStorage:
    if not _TYPED_STORAGE_WARNED[0]:
        _TYPED_STORAGE_WARNED[0] = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=2)
    return TypedStorage(F._memory_owner(self._data), self._dtype)


Tensor.storage = _storage


# --- torch's lower-level unique entry points (torch._unique, torch._unique2,
# torch._VF.unique_dim): fixed-arity tuples, an empty int64 tensor for what was not asked ------
UNIQUE_LEGACY = TO._no_derivative("unique_legacy", "_unique", "UniqueBackward0")


def _empty_index() -> Tensor:
    return Tensor._wrap(np.zeros(0, np.int64))


def _unique_legacy(input: Tensor, sorted: bool = True, return_inverse: bool = False) -> tuple:
    """``torch._unique``: (values, inverse), the inverse empty unless asked for."""
    values, inverse = TO._unique(UNIQUE_LEGACY, input, None, False, True, False)
    return values, inverse if return_inverse else _empty_index()


def _unique2(input: Tensor, sorted: bool = True, return_inverse: bool = False,
             return_counts: bool = False) -> tuple:
    """``torch._unique2``: (values, inverse, counts), empty where not asked for."""
    values, inverse, counts = TO._unique(TO.UNIQUE, input, None, False, True, True)
    return (values, inverse if return_inverse else _empty_index(),
            counts if return_counts else _empty_index())


def _unique_dim(input: Tensor, dim: int, sorted: bool = True, return_inverse: bool = False,
                return_counts: bool = False) -> tuple:
    """``torch._VF.unique_dim``: (values, inverse, counts) along `dim`, all three computed
    whatever is asked, as torch."""
    return TO._unique(TO.UNIQUE_DIM, input, dim, False, True, True)


_VF = types.SimpleNamespace(unique_dim=_unique_dim)
FUNCTIONS.setdefault("_unique", _unique_legacy)
FUNCTIONS.setdefault("_unique2", _unique2)
FUNCTIONS.setdefault("_VF", _VF)


# --- memory formats (the layouts themselves are in _functions: clone, contiguous, to) -------
_dense_is_contiguous = Tensor.is_contiguous


def _is_contiguous(self: Tensor, memory_format=None) -> bool:
    """``Tensor.is_contiguous``, for row-major order or the `memory_format` asked for."""
    if memory_format is None or memory_format is F.contiguous_format:
        return _dense_is_contiguous(self)
    if F.is_traced(self):
        return True  # a traced value has no memory layout
    return F._has_layout(self._data, memory_format)


Tensor.is_contiguous = _is_contiguous


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of the given sizes and strides (in elements) over fresh memory (zeros here;
    torch leaves it uninitialized).

    >>> import funcgrad.mutable as torch
    >>> torch.empty_strided((2, 2), (4, 2)).stride()
    (4, 2)
    """
    F.check_device(device)
    size, stride = tuple(int(n) for n in size), tuple(int(n) for n in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    dt = D.DEFAULT_FLOAT if dtype is None else D.to_dtype(dtype)
    extent = 0 if 0 in size else 1 + builtins.sum((n - 1) * st for n, st in zip(size, stride))
    buffer = np.zeros(extent, dt.np)
    data = np.ndarray(size, dt.np, buffer=buffer,
                      strides=tuple(st * buffer.itemsize for st in stride))
    out = Tensor._wrap(data)
    return out.requires_grad_() if requires_grad else out


for _name, _fn in (("memory_format", F.memory_format), ("contiguous_format", F.contiguous_format),
                   ("channels_last", F.channels_last), ("channels_last_3d", F.channels_last_3d),
                   ("preserve_format", F.preserve_format), ("empty_strided", empty_strided)):
    FUNCTIONS.setdefault(_name, _fn)


for _name, _fn in METHODS.items():
    setattr(Tensor, _name, F.as_method(_fn))
