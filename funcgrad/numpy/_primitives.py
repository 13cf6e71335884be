"""funcgrad.numpy's primitives: each differentiable NumPy operation declared once, with its
VJP, JVP and vmap rules beside its forward, and the helpers those rules share; those of
``numpy.linalg`` and ``numpy.fft`` included (their sections at the end), so every rule of the
namespace lives here and the family modules hold composites only.

Names are NumPy's (`sum`, `where`, `getitem`, `inv`, `fftn`...), so they shadow builtins here:
this module is read as ``P.sum``, never star-imported. A primitive returns raw NumPy values
when no transform is running, which keeps first-order rules at NumPy speed; the public
functions in the family modules (`_elementwise`, `_reductions`, `linalg`...) are exported
through their namespace, which wraps results as `Array`s. Rules are written with these same
primitives, so they are differentiable too.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .._src import batching as B, simd
from .._src.core import FuncgradError, Tracer, engine
from .._src.declare import elementwise, linear, nondiff, primitive
from .._src.jit import register_lowering
from . import _helpers as H


# --- elementwise arithmetic --------------------------------------------------------------


def _add_t(ct, out, x, y):
    return ct


def _sub_t1(ct, out, x, y):
    return -ct


# NumPy's operators, not its ufuncs, as forwards: on NumPy scalars `x * y` is ten times
# faster than np.multiply(x, y), and on arrays they are the same call.
add = linear("add", operator.add, _add_t, _add_t, batch=B.batch_elementwise)
subtract = linear("subtract", operator.sub, _add_t, _sub_t1, batch=B.batch_elementwise)
negative = linear("negative", operator.neg, lambda ct, out, x: -ct, batch=B.batch_elementwise)
positive = linear("positive", np.positive, lambda ct, out, x: ct, batch=B.batch_elementwise)
multiply = elementwise("multiply", operator.mul, lambda out, x, y: y, lambda out, x, y: x)
divide = primitive(
    "divide", np.divide, nargs=2, batch=B.batch_elementwise,
    vjps=(lambda ct, out, x, y: ct / y, lambda ct, out, x, y: -ct * out / y),
    jvps=(lambda t, out, x, y: t / y, lambda t, out, x, y: -t * out / y))


def _pow_dx(out, x, y):
    # x**0 is constant: slope 0 everywhere, also at x == 0 where 0 * 0**-1 would be nan; the
    # untaken branch gets a safe exponent too, so no nan appears in higher derivatives either
    if type(y) is float or type(y) is int:  # a Python exponent stays weakly typed (float32 x)
        return y * power(x, y - 1) if y != 0 else zeros_like(x)
    constant = equal(y, 0)
    return where(constant, 0, y * power(x, where(constant, 1, y - 1)))


def _pow_dy(out, x, y):
    # log(x) is -inf at x == 0, where x**y is 0 for y > 0: define the product as 0 there.
    safe = where(equal(x, 0), 1, x)
    return where(equal(x, 0), 0, out * log(safe))


power = elementwise(
    "power", np.power, _pow_dx, _pow_dy,
    doc="Differentiable ``numpy.power``. At x = 0 it follows autograd: ``x ** 0`` is constant "
        "(slope 0 in x at every order), the slope in x is ``y * x ** (y - 1)`` (0 for y > 1), "
        "and the slope in y, ``log(x) * x ** y``, is taken as 0 there (never nan).")


def _mod_dy(out, x, y):
    return -floor_divide(x, y)


remainder = elementwise("remainder", np.remainder, lambda out, x, y: ones_like(out), _mod_dy)
floor_divide = nondiff("floor_divide", np.floor_divide, nargs=2)


def _pick_slope_impl(x, y, smallest=False, skip_nan=False):
    # The comparison and, where it cannot settle the pick, the ties: the slope is this
    # primitive's whole work, so a rule is `ct * slope` (two passes over a ReLU's
    # activations, where building it from comparison primitives took seven).
    wins = np.less(x, y) if smallest else np.greater(x, y)
    if skip_nan:
        wins |= np.isnan(y)
    # The result's dtype, worked out from x and y so the rules never read the result (and
    # the tape need not keep it); integers (which carry no derivative) get a float slope.
    if type(x) is np.ndarray and type(y) is float and x.dtype.kind in "fc":
        dtype = x.dtype  # (a Python float takes the array's type: result_type's answer)
    else:
        dtype = np.result_type(x, y)
        if dtype.kind not in "fc":
            dtype = np.dtype(float)
    ties = np.equal(x, y)
    if _any(ties):
        return np.where(ties, 0.5, wins).astype(dtype, copy=False)
    return wins.astype(dtype)


def _any(mask) -> bool:
    """Whether boolean `mask` holds a True: for a big array, read at its first True, whose
    position argmax finds in a fast scan (a quarter of the time of mask.any())."""
    if type(mask) is np.ndarray and mask.size >= 1024:
        return bool(mask.flat[mask.argmax()])
    return bool(mask.any())


# The slope in x of the larger (the `smallest`: the smaller) of x and y: 1 where x is picked,
# 1/2 where x and y tie (the two halves of a tie share the slope, as in JAX), 0 where y is
# picked or either is NaN; with `skip_nan` (NumPy's fmax and fmin) a NaN y is never picked.
# Its own derivative is zero wherever it is defined.
pick_slope = nondiff("pick_slope", _pick_slope_impl, nargs=2,
                     params=("smallest", "skip_nan"))

def _against_zero(ufunc):
    """`ufunc` (NumPy's maximum or minimum) with a float array's zero operand (a ReLU
    written ``maximum(x, 0.0)``; jit passes the zero as a 0-d array of x's dtype) given as
    an array of zeros: NumPy's SIMD loop takes no scalar operand (64x256 float32: 2.2 us
    instead of 6). The same values bit for bit, signed zeros and NaNs included (+0.0 only:
    a -0.0 operand takes the scalar loop)."""
    def impl(x, y):
        if (type(x) is np.ndarray and x.size >= _SIMD_MIN_SIZE and x.dtype.kind == "f"
                and x.flags.c_contiguous and _is_plus_zero(y, x.dtype)):
            return ufunc(x, np.zeros(x.shape, x.dtype))
        return ufunc(x, y)
    impl.__name__ = impl.__qualname__ = ufunc.__name__
    impl.ufunc = ufunc  # (jit computes the ufunc itself, into buffers it owns)
    return impl


def _is_plus_zero(y, dtype) -> bool:
    """Whether `y` is +0.0 as a Python number, or as a 0-d array of `dtype`."""
    if type(y) is float or type(y) is int:
        return y == 0 and math.copysign(1.0, y) > 0
    return (type(y) is np.ndarray and y.ndim == 0 and y.dtype == dtype and y == 0
            and not np.signbit(y))


#: Below this many elements the zeros cost more than NumPy's scalar loop saves.
_SIMD_MIN_SIZE = 256

maximum = elementwise("maximum", _against_zero(np.maximum),
                      lambda out, x, y: pick_slope(x, y),
                      lambda out, x, y: pick_slope(y, x))
minimum = elementwise("minimum", _against_zero(np.minimum),
                      lambda out, x, y: pick_slope(x, y, smallest=True),
                      lambda out, x, y: pick_slope(y, x, smallest=True))


def _clip_impl(x, lo, hi):
    return np.clip(x, lo, hi)


# Inside [lo, hi], boundaries included, the slope goes to x (PyTorch's clamp convention).
clip = elementwise(
    "clip", _clip_impl,
    lambda out, x, lo, hi: astype(logical_and(_ge_or_none(x, lo), _le_or_none(x, hi)), H.dtype(out)),
    lambda out, x, lo, hi: astype(less(x, lo), H.dtype(out)),
    lambda out, x, lo, hi: astype(greater(x, hi), H.dtype(out)))


def _ge_or_none(x, lo):
    return True if lo is None else greater_equal(x, lo)


def _le_or_none(x, hi):
    return True if hi is None else less_equal(x, hi)


def _where_impl(cond, x, y):
    return np.where(cond, x, y)


where = primitive(
    "where", _where_impl, nargs=3, batch=B.batch_elementwise, linear=False,
    vjps=(None, lambda ct, out, c, x, y: where(c, ct, 0), lambda ct, out, c, x, y: where(c, 0, ct)),
    jvps=(None, lambda t, out, c, x, y: where(c, t, 0), lambda t, out, c, x, y: where(c, 0, t)))


# --- elementwise math: f(x) with its derivative f'(x) --------------------------------------
# Read-only 0-d arrays of one dtype, by dtype, for the constants of the hottest slopes: NumPy 2
# converts a Python number beside an array on every call (0.12 us), and then takes a slower
# scalar loop for some ufuncs (1.0 - a on 64x256 float32: 3.4 us instead of 2.2). A 0-d array
# of the array's own dtype gives the same bits (the number is cast to that dtype either way).
_ONES: dict = {}
_ZEROS: dict = {}


def _one_of(dtype):
    one = _ONES.get(dtype)
    if one is None:
        one = _ONES[dtype] = _read_only(np.ones((), dtype))
    return one


def _zero_of(dtype):
    zero = _ZEROS.get(dtype)
    if zero is None:
        zero = _ZEROS[dtype] = _read_only(np.zeros((), dtype))
    return zero


def _read_only(a):
    a.flags.writeable = False
    return a


# (Constants beside a float array are written as floats: NumPy 2 takes a Python int there
# through a slower conversion, 0.13 us per call, most of a small array's product.)
exp = elementwise("exp", np.exp, lambda out, x: out)
exp2 = elementwise("exp2", np.exp2, lambda out, x: out * np.log(2.0))
expm1 = elementwise("expm1", np.expm1, lambda out, x: out + 1.0)
log = elementwise("log", np.log, lambda out, x: 1.0 / x)
log2 = elementwise("log2", np.log2, lambda out, x: 1.0 / (x * np.log(2.0)))
log10 = elementwise("log10", np.log10, lambda out, x: 1.0 / (x * np.log(10.0)))
log1p = elementwise("log1p", np.log1p, lambda out, x: 1.0 / (x + 1.0))
sqrt = elementwise("sqrt", np.sqrt, lambda out, x: 0.5 / out)
cbrt = elementwise("cbrt", np.cbrt, lambda out, x: 1.0 / (3.0 * out * out))
square = elementwise("square", np.square, lambda out, x: 2.0 * x)
reciprocal = elementwise("reciprocal", np.reciprocal, lambda out, x: -out * out)
absolute = primitive("absolute", np.absolute, batch=B.batch_elementwise,  # slope 0 at 0
                     vjps=(lambda ct, out, x: _abs_vjp(ct, out, x),), jvps=(lambda t, out, x: _abs_jvp(t, out, x),))


# --- sin's and cos's slopes ---------------------------------------------------------------
# Where `simd.FAST_TAN` (NumPy's float64 tan nine times faster than its sin and cos), the
# slope of sin or cos over a big float64 array is computed from tan: with t = tan(x/2),
# sin x = 2t / (1 + t^2), a formula that cancels nowhere, and cos x = sin x / tan x. That is
# within 4 ulp of the C library's at every argument (tests/numpy/test_trig_slopes.py) and 2.5
# times faster than its cos; the forwards stay NumPy's sin and cos, bit for bit. An array
# holding a value where the formulas would not do (|x| below 2^-27, where x/2 may round or
# tan(x) be 0; an infinity; a NaN) takes the C library's, as do small arrays, other dtypes
# and tracers (higher order, vmap, jit: a tracer hands the ufunc on to funcgrad's cos
# through Tracer.__array_ufunc__).

#: The slopes take tan's route for float64 arrays of at least this many values: below, its
#: NumPy calls cost more than the C library's cos.
_BY_TAN_MIN = 2048
_TINY = 2.0 ** -27


def _by_tan(x: np.ndarray) -> bool:
    """Whether `x`, a big enough array, takes tan's route."""
    if x.dtype != np.float64 or not simd.FAST_TAN:
        return False
    magnitude = np.abs(x)
    return bool(magnitude.min() >= _TINY) and bool(magnitude.max() < math.inf)


def _sin_by_tan(x: np.ndarray) -> np.ndarray:
    t = np.tan(x * 0.5)
    s = t * t
    s += 1.0
    np.divide(t, s, out=s)
    s *= 2.0
    return s


def _cos_slope(out, x):
    """sin's derivative, cos(x)."""
    if type(x) is np.ndarray and x.size >= _BY_TAN_MIN and _by_tan(x):
        c = _sin_by_tan(x)
        c /= np.tan(x)
        return c
    return np.cos(x)


def _minus_sin_slope(out, x):
    """cos's derivative, -sin(x)."""
    if type(x) is np.ndarray and x.size >= _BY_TAN_MIN and _by_tan(x):
        s = _sin_by_tan(x)
        return np.negative(s, out=s)
    return -sin(x)


sin = elementwise("sin", np.sin, _cos_slope)
cos = elementwise("cos", np.cos, _minus_sin_slope)
tan = elementwise("tan", np.tan, lambda out, x: 1.0 + out * out)
arcsin = elementwise("arcsin", np.arcsin, lambda out, x: 1.0 / sqrt(1.0 - x * x))
arccos = elementwise("arccos", np.arccos, lambda out, x: -1.0 / sqrt(1.0 - x * x))
arctan = elementwise("arctan", np.arctan, lambda out, x: 1.0 / (1.0 + x * x))
sinh = elementwise("sinh", np.sinh, lambda out, x: cosh(x))
cosh = elementwise("cosh", np.cosh, lambda out, x: sinh(x))


def _tanh_slope(out, x):
    if type(out) is np.ndarray:  # (see `_one_of`: 64x256 float32, 2.2 us instead of 3.4)
        return _one_of(out.dtype) - out * out
    return 1.0 - out * out


tanh = elementwise("tanh", np.tanh, _tanh_slope)
arcsinh = elementwise("arcsinh", np.arcsinh, lambda out, x: 1.0 / sqrt(x * x + 1.0))
arccosh = elementwise("arccosh", np.arccosh, lambda out, x: 1.0 / sqrt(x * x - 1.0))
arctanh = elementwise("arctanh", np.arctanh, lambda out, x: 1.0 / (1.0 - x * x))
deg2rad = linear("deg2rad", np.deg2rad, lambda ct, out, x: ct * (np.pi / 180),
                 batch=B.batch_elementwise)
rad2deg = linear("rad2deg", np.rad2deg, lambda ct, out, x: ct * (180 / np.pi),
                 batch=B.batch_elementwise)

# --- non-differentiable functions: their results carry no derivative ----------------------
equal = nondiff("equal", np.equal, nargs=2)
not_equal = nondiff("not_equal", np.not_equal, nargs=2)
less = nondiff("less", np.less, nargs=2)
less_equal = nondiff("less_equal", np.less_equal, nargs=2)
greater = nondiff("greater", np.greater, nargs=2)
greater_equal = nondiff("greater_equal", np.greater_equal, nargs=2)
logical_and = nondiff("logical_and", np.logical_and, nargs=2)
logical_or = nondiff("logical_or", np.logical_or, nargs=2)
logical_xor = nondiff("logical_xor", np.logical_xor, nargs=2)
logical_not = nondiff("logical_not", np.logical_not)
isnan = nondiff("isnan", np.isnan)
isfinite = nondiff("isfinite", np.isfinite)
isinf = nondiff("isinf", np.isinf)
isneginf = nondiff("isneginf", np.isneginf)
isposinf = nondiff("isposinf", np.isposinf)
signbit = nondiff("signbit", np.signbit)
sign = nondiff("sign", np.sign)
floor = nondiff("floor", np.floor)
ceil = nondiff("ceil", np.ceil)
trunc = nondiff("trunc", np.trunc)
rint = nondiff("rint", np.rint)
fix = nondiff("fix", np.fix)
heaviside = nondiff("heaviside", np.heaviside, nargs=2)
nextafter = nondiff("nextafter", np.nextafter, nargs=2)
spacing = nondiff("spacing", np.spacing)
iscomplex = nondiff("iscomplex", np.iscomplex)
isreal = nondiff("isreal", np.isreal)


def _round_impl(x, decimals=0):
    return np.round(x, decimals)


round = nondiff("round", _round_impl, params=("decimals",))
around = nondiff("around", _round_impl, params=("decimals",))
argmax = nondiff("argmax", np.argmax, params=("axis", "out", "keepdims"), batch=B.batch_flat_axis)
argmin = nondiff("argmin", np.argmin, params=("axis", "out", "keepdims"), batch=B.batch_flat_axis)
nanargmax = nondiff("nanargmax", np.nanargmax, params=("axis", "out", "keepdims"),
                    batch=B.batch_flat_axis)
nanargmin = nondiff("nanargmin", np.nanargmin, params=("axis", "out", "keepdims"),
                    batch=B.batch_flat_axis)
all = nondiff("all", np.all, batch=B.batch_axis_param)
any = nondiff("any", np.any, batch=B.batch_axis_param)
count_nonzero = nondiff("count_nonzero", np.count_nonzero, batch=B.batch_axis_param)
isclose = nondiff("isclose", np.isclose, nargs=2, batch=B.batch_elementwise)
allclose = nondiff("allclose", np.allclose, nargs=2, batch=B.batch_all_axes)
array_equal = nondiff("array_equal", np.array_equal, nargs=2, batch=B.batch_all_axes)
searchsorted = nondiff("searchsorted", np.searchsorted, nargs=2, batch=B.batch_values_second)
digitize = nondiff("digitize", np.digitize, nargs=2, batch=B.batch_first_only)
# Output shapes that depend on the data: vmap loops, or (a tuple of such arrays) refuses.
argwhere = nondiff("argwhere", np.argwhere, batch=B.batch_by_loop)
flatnonzero = nondiff("flatnonzero", np.flatnonzero, batch=B.batch_by_loop)
unique = nondiff("unique", np.unique, batch=B.batch_by_loop)
bincount = nondiff("bincount", np.bincount, batch=B.batch_by_loop)
nonzero = nondiff("nonzero", np.nonzero, batch=B.batch_unsupported)
histogram = nondiff("histogram", np.histogram, batch=B.batch_unsupported)
# Questions about an array rather than about its values.
shape = nondiff("shape", np.shape, batch=B.batch_query)
ndim = nondiff("ndim", np.ndim, batch=B.batch_query)
size = nondiff("size", np.size, batch=B.batch_query)
iscomplexobj = nondiff("iscomplexobj", np.iscomplexobj, batch=B.batch_query)
isrealobj = nondiff("isrealobj", np.isrealobj, batch=B.batch_query)
isscalar = nondiff("isscalar", np.isscalar, batch=B.batch_query)
result_type = nondiff("result_type", np.result_type, batch=B.batch_query)


# --- dtype casts and constants -------------------------------------------------------------
def _astype_impl(x, dtype):
    if type(x) is np.ndarray and x.dtype.kind != "c":  # (np.iscomplexobj costs 0.5 us)
        return x.astype(dtype)
    if np.iscomplexobj(x) and np.dtype(dtype).kind != "c":
        x = np.real(x)  # a real-valued cast keeps the real part (and is real-linear)
    return np.asarray(x).astype(dtype) if not isinstance(x, np.ndarray) else x.astype(dtype)


def _astype_t(ct, out, x, dtype):
    return astype(ct, H.dtype(x))


astype = linear("astype", _astype_impl, _astype_t, params=("dtype",), batch=B.batch_elementwise)


def _lower_astype(x, dtype):  # (jit: the ndarray method, but a complex-to-real cast)
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        return None  # (keeps the real part: the implementation itself)
    return np.ndarray.astype, {"dtype": dtype}, True


register_lowering(astype, _lower_astype)


def _zeros_like_impl(x):
    if type(x) is np.ndarray:  # (np.shape is a Python-level wrapper)
        return np.zeros(x.shape, x.dtype)
    return np.zeros(np.shape(x), dtype=H.dtype(x))


def _ones_like_impl(x):
    return np.ones(np.shape(x), dtype=H.dtype(x))


zeros_like = nondiff("zeros_like", _zeros_like_impl)
ones_like = nondiff("ones_like", _ones_like_impl)
register_lowering(zeros_like, shape_only=True)
register_lowering(ones_like, shape_only=True)


# --- reductions ----------------------------------------------------------------------------
# (sum, mean, max and min of an array call the ufunc's reduce, or the method, that NumPy's
# function calls: the same result without its Python-level wrapper, ~0.8 us a call)
def _sum_impl(x, axis=None, keepdims=False):
    if type(x) is np.ndarray:
        return np.add.reduce(x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


def _mean_impl(x, axis=None, keepdims=False):
    if type(x) is np.ndarray:
        if x.dtype in _MEAN_BY_DIVISION:
            # (x.mean's Python-level set-up, counting and dividing, costs ~3 us: the sum over
            # the count, divided in x's dtype, is the same value; see `_lower_mean`)
            count = x.size if axis is None else (
                x.shape[axis] if type(axis) is int and -x.ndim <= axis < x.ndim else 0)
            if 0 < count < 1 << 24:
                return np.true_divide(np.add.reduce(x, axis=axis, keepdims=keepdims),
                                      x.dtype.type(count))
        return x.mean(axis=axis, keepdims=keepdims)
    return np.mean(x, axis=axis, keepdims=keepdims)


_MEAN_BY_DIVISION = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


sum = linear("sum", _sum_impl,
               lambda ct, out, x, axis=None, keepdims=False: expand_reduced(ct, x, axis, keepdims),
               params=("axis", "keepdims"), batch=B.batch_axis_param)
mean = linear("mean", _mean_impl,
                lambda ct, out, x, axis=None, keepdims=False:
                expand_reduced(ct / H.count(x, axis), x, axis, keepdims),
                params=("axis", "keepdims"), batch=B.batch_axis_param)


def _chooser_vjp(ct, out, x, axis=None, keepdims=False):
    """max/min: the slope goes to the elements equal to the extremum, shared among ties.
    The cotangent is divided by the tie counts while it is still reduced, and the hits
    (1 or 0 in x's dtype) scale it as they broadcast it: four passes over `x` (compare,
    cast, count, multiply)."""
    if type(ct) is np.ndarray and type(x) is np.ndarray:
        # the first-order walk: the same steps on NumPy's functions, without the seven
        # primitive calls
        if not keepdims:
            reduced = H.keepdims_shape(x.shape, axis)
            out, ct = np.reshape(out, reduced), ct.reshape(reduced)
        hits = np.equal(x, out).astype(x.dtype)
        return (ct / np.add.reduce(hits, axis=axis, keepdims=True)) * hits
    if keepdims:
        out_kd, ct_kd = out, ct
    else:
        reduced = H.keepdims_shape(H.shape(x), axis)
        out_kd, ct_kd = reshape(out, reduced), reshape(ct, reduced)
    hits = astype(equal(x, out_kd), H.dtype(x))  # (cast once: the sum and the product
    count = sum(hits, axis=axis, keepdims=True)  # then run NumPy's same-type loops)
    return (ct_kd / count) * hits


def _chooser_jvp(t, out, x, axis=None, keepdims=False):
    out_kd = out if keepdims else reshape(out, H.keepdims_shape(H.shape(x), axis))
    hits = astype(equal(x, out_kd), H.dtype(x))
    return sum(t * hits, axis=axis, keepdims=keepdims) / sum(hits, axis=axis, keepdims=keepdims)


def _max_impl(x, axis=None, keepdims=False):
    if type(x) is np.ndarray:
        return np.maximum.reduce(x, axis=axis, keepdims=keepdims)
    return np.max(x, axis=axis, keepdims=keepdims)


def _min_impl(x, axis=None, keepdims=False):
    if type(x) is np.ndarray:
        return np.minimum.reduce(x, axis=axis, keepdims=keepdims)
    return np.min(x, axis=axis, keepdims=keepdims)


max = primitive("max", _max_impl, params=("axis", "keepdims"), vjps=(_chooser_vjp,),
                  jvps=(_chooser_jvp,), batch=B.batch_axis_param)
min = primitive("min", _min_impl, params=("axis", "keepdims"), vjps=(_chooser_vjp,),
                  jvps=(_chooser_jvp,), batch=B.batch_axis_param)


# (jit) sum, max and min of an array are their ufunc's reduce; mean its sum over its count
def _reduce_lowering(reduce_):
    def lower(x, axis=None, keepdims=False):
        return reduce_, {"axis": axis, "keepdims": keepdims}, False
    return lower


def _mean_of(x, axis, keepdims, count):
    return np.true_divide(np.add.reduce(x, axis=axis, keepdims=keepdims), count)


def _lower_mean(x, axis=None, keepdims=False):
    """``np.mean`` of a float32 or float64 array: its sum over its count, divided in the
    array's dtype (np.mean divides in float64 and rounds back: the same value, as float64
    has more than twice float32's precision)."""
    count = int(np.prod([x.shape[a] for a in np.atleast_1d(
        np.arange(len(x.shape)) if axis is None else axis)], dtype=np.int64))
    if x.dtype not in (np.float32, np.float64) or not 0 < count < 1 << 24:
        return None
    return _mean_of, {"axis": axis, "keepdims": keepdims,
                      "count": np.asarray(count, x.dtype)}, True


register_lowering(sum, _reduce_lowering(np.add.reduce))
register_lowering(max, _reduce_lowering(np.maximum.reduce))
register_lowering(min, _reduce_lowering(np.minimum.reduce))
register_lowering(mean, _lower_mean)


def _prod_impl(x, axis=None, keepdims=False):
    return np.prod(x, axis=axis, keepdims=keepdims)


def _prod_others(x, axis):
    """For each element, the product of the others in its reduction group; exact with zeros."""
    shape = H.shape(x)
    axes = H.normalize_axes(axis, len(shape))
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    moved = transpose(x, rest + axes)
    n = H.count(x, axis)
    flat = reshape(moved, tuple(shape[i] for i in rest) + (n, 1))
    eye = np.eye(n, dtype=bool)
    grid = where(eye, 1, broadcast_to(swapaxes(flat, -1, -2), tuple(shape[i] for i in rest) + (n, n)))
    others = prod(grid, axis=-1)
    others = reshape(others, tuple(shape[i] for i in rest) + tuple(shape[i] for i in axes))
    return transpose(others, tuple(np.argsort(rest + axes)))


def _has_zero(x):
    """Whether `x` holds a zero, read off its concrete values (under vmap: in any example,
    so that one branch serves the whole batch; both branches are exact where they apply)."""
    return bool(np.any(H.bottom(x) == 0))


def _prod_vjp(ct, out, x, axis=None, keepdims=False):
    if _has_zero(x):
        return expand_reduced(ct, x, axis, keepdims) * _prod_others(x, axis)
    out_kd = out if keepdims else reshape(out, H.keepdims_shape(H.shape(x), axis))
    return expand_reduced(ct, x, axis, keepdims) * out_kd / x


def _prod_jvp(t, out, x, axis=None, keepdims=False):
    ones = ones_like(out)
    return sum(_prod_vjp(ones, out, x, axis, keepdims) * t, axis=axis, keepdims=keepdims)


prod = primitive("prod", _prod_impl, params=("axis", "keepdims"), vjps=(_prod_vjp,),
                   jvps=(_prod_jvp,), batch=B.batch_axis_param)


# --- shape functions -----------------------------------------------------------------------
def _reshape_impl(x, shape):
    # (the method itself for arrays: np.reshape adds a Python wrapper, 0.6 us)
    return x.reshape(shape) if type(x) is np.ndarray else np.reshape(x, shape)


reshape = linear("reshape", _reshape_impl, lambda ct, out, x, shape: reshape(ct, H.shape(x)),
                 params=("shape",), batch=None)
register_lowering(reshape, lambda x, shape: (np.ndarray.reshape, {"shape": shape}, True))


def _batch_reshape(prim, vals, dims, shape):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    return reshape(x, (x.shape[0],) + tuple(H.resolve_shape(shape, x.shape[1:]))), 0


reshape.batch = _batch_reshape


def _transpose_impl(x, axes=None):
    return np.transpose(x, axes)


def _transpose_t(ct, out, x, axes=None):
    if axes is None:
        return transpose(ct)
    return transpose(ct, tuple(np.argsort([a % len(axes) for a in axes])))


transpose = linear("transpose", _transpose_impl, _transpose_t, params=("axes",), batch=None)


def _batch_transpose(prim, vals, dims, axes=None):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    n = x.ndim - 1
    perm = tuple(reversed(range(n))) if axes is None else tuple(a % n for a in axes)
    return transpose(x, (0,) + tuple(p + 1 for p in perm)), 0


transpose.batch = _batch_transpose


def _broadcast_to_impl(x, shape):
    if ((type(x) is np.ndarray and x.ndim == 0 or isinstance(x, (np.number, np.bool_)))
            and type(shape) is tuple and builtins.min(shape, default=0) >= 0):
        # a whole reduction's cotangent (every backward pass of a scalar loss has one): the
        # same read-only view as np.broadcast_to gives, without its Python-level set-up
        # (0.4-0.75 us instead of 2.5-3)
        out = np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
        out.flags.writeable = False
        return out
    if type(x) is np.ndarray and type(shape) is tuple and x.ndim == len(shape) \
            and x.flags.c_contiguous:
        # a reduction's cotangent with its reduced axes kept (sum(x, axis=1)'s): the view
        # built from strides, 0 along the stretched axes (1.6 us; np.broadcast_to 2.7)
        strides = []
        for n, m, stride in zip(x.shape, shape, x.strides):
            if n != m:
                if n != 1 or m < 0:
                    break  # not broadcastable: NumPy's error below
                stride = 0
            strides.append(stride)
        else:
            out = np.ndarray(shape, x.dtype, x, 0, tuple(strides))
            out.flags.writeable = False
            return out
    return np.broadcast_to(x, shape)


broadcast_to = linear("broadcast_to", _broadcast_to_impl,
                      lambda ct, out, x, shape: sum_to_shape(ct, H.shape(x)),
                      params=("shape",), batch=None)
register_lowering(broadcast_to, broadcasts=True)


def _batch_broadcast_to(prim, vals, dims, shape):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    shape = tuple(shape)
    x = reshape(x, (x.shape[0],) + (1,) * (len(shape) - (x.ndim - 1)) + tuple(x.shape[1:]))
    return broadcast_to(x, (x.shape[0],) + shape), 0


broadcast_to.batch = _batch_broadcast_to


def _sum_to_shape_impl(x, shape):
    """Sum away the dimensions that broadcasting added or stretched (the ufunc's own reduce,
    without NumPy's Python wrappers: this runs for every broadcast operand)."""
    shape = tuple(shape)
    full = x.shape if type(x) is np.ndarray else np.shape(x)
    lead = len(full) - len(shape)
    if shape and full[lead:] == shape:  # only leading axes added (a bias's cotangent)
        return (x if not lead else np.add.reduce(x, axis=0) if lead == 1
                else np.add.reduce(x, axis=tuple(range(lead))))
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and full[i + lead] != 1)
    if not axes:  # (a leading axis is always summed: no axes means no leading ones)
        return x
    out = np.add.reduce(x, axis=axes, keepdims=True)
    return out.reshape(shape) if lead else out


sum_to_shape = linear("sum_to_shape", _sum_to_shape_impl,
                      lambda ct, out, x, shape: broadcast_to(ct, H.shape(x)),
                      params=("shape",), batch=B.batch_by_loop)


def _lower_sum_to_shape(x, shape):
    """(jit) `sum_to_shape`'s one reduction, its axes found once: the leading axes
    broadcasting added (the result without them), or the stretched ones (kept, length 1)."""
    shape, full = tuple(shape), x.shape
    lead = len(full) - len(shape)
    stretched = tuple(i + lead for i, n in enumerate(shape) if n == 1 and full[i + lead] != 1)
    if lead and not stretched:
        return np.add.reduce, {"axis": tuple(range(lead)), "keepdims": False}, False
    if stretched and not lead:
        return np.add.reduce, {"axis": stretched, "keepdims": True}, False
    return None


register_lowering(sum_to_shape, _lower_sum_to_shape)


def _batch_sum_to_shape(prim, vals, dims, shape):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    example = tuple(H.shape(x))[1:]
    shape = tuple(shape)
    lead = len(example) - len(shape)
    axes = tuple(range(1, lead + 1)) + tuple(i + lead + 1 for i, s in enumerate(shape)
                                             if s == 1 and example[i + lead] != 1)
    if not axes:
        return x, 0
    return reshape(sum(x, axis=axes, keepdims=True), (H.shape(x)[0],) + shape), 0


sum_to_shape.batch = _batch_sum_to_shape


def _moveaxis_impl(x, source, destination):
    return np.moveaxis(x, source, destination)


moveaxis = linear("moveaxis", _moveaxis_impl,
                    lambda ct, out, x, source, destination: moveaxis(ct, destination, source),
                    params=("source", "destination"), batch=None)


def _batch_moveaxis(prim, vals, dims, source, destination):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    n = x.ndim - 1
    src = [B.shift_axis(s, n) for s in np.atleast_1d(source)]
    dst = [B.shift_axis(s, n) for s in np.atleast_1d(destination)]
    return moveaxis(x, src, dst), 0


moveaxis.batch = _batch_moveaxis


def _swapaxes_impl(x, axis1, axis2):
    if type(x) is np.ndarray:  # (the method np.swapaxes calls, without its wrapper)
        return x.swapaxes(axis1, axis2)
    return np.swapaxes(x, axis1, axis2)


swapaxes = linear("swapaxes", _swapaxes_impl,
                    lambda ct, out, x, axis1, axis2: swapaxes(ct, axis1, axis2),
                    params=("axis1", "axis2"), batch=None)
register_lowering(swapaxes, lambda x, axis1, axis2: (np.ndarray.swapaxes,
                                                     {"axis1": axis1, "axis2": axis2}, True))


def _batch_swapaxes(prim, vals, dims, axis1, axis2):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    n = x.ndim - 1
    return swapaxes(x, B.shift_axis(axis1, n), B.shift_axis(axis2, n)), 0


swapaxes.batch = _batch_swapaxes


def _concat_impl(*xs, axis=0):
    return np.concatenate(xs, axis=axis)


def _concat_t(k):
    def transpose_k(ct, out, *xs, axis=0):
        ax = axis % H.ndim(out)
        start = builtins.sum(H.shape(x)[ax] for x in xs[:k])
        index = (slice(None),) * ax + (slice(start, start + H.shape(xs[k])[ax]),)
        return subscript(ct, index)
    return transpose_k


class _ConcatRules(tuple):
    """Concatenation is variadic: its k-th transpose is made on demand."""

    def __getitem__(self, k):
        return _concat_t(k)


concatenate = linear("concatenate", _concat_impl, nargs=-1, batch=None)
concatenate.vjps = _ConcatRules()


def _batch_concat(prim, vals, dims, axis=0):
    n = B._size(vals, dims)
    moved = []
    for v, d in zip(vals, dims):
        if d is None:
            v = broadcast_to(reshape(v, (1,) + tuple(H.shape(v))), (n,) + tuple(H.shape(v)))
        else:
            v = B.move_to_front(v, d)
        moved.append(v)
    ndim = moved[0].ndim - 1
    return concatenate(*moved, axis=B.shift_axis(axis, ndim)), 0


concatenate.batch = _batch_concat


def _stack_impl(*xs, axis=0):
    return np.stack(xs, axis=axis)


def expand_axis(x, axis):
    shape = list(H.shape(x))
    axis = axis % (len(shape) + 1)
    shape.insert(axis, 1)
    return reshape(x, tuple(shape))


def stack(*xs, axis=0):
    return concatenate(*[expand_axis(x, axis) for x in xs], axis=axis)


# --- products ------------------------------------------------------------------------------
def _matmul_vjp_x(ct, out, x, y):
    if type(ct) is np.ndarray and type(y) is np.ndarray and ct.ndim == 2 and y.ndim == 2:
        return np.matmul(ct, y.swapaxes(-1, -2))  # (the first-order walk: no primitive calls)
    xd, yd = H.ndim(x), H.ndim(y)
    if yd == 1:
        ct = expand_axis(ct, -1)
        y = reshape(y, (H.shape(y)[0], 1))
    if xd == 1:
        ct = expand_axis(ct, -2)
    g = matmul(ct, swapaxes(y, axis1=-1, axis2=-2))  # (by keyword: the shortest call)
    return reshape(g, H.shape(g)[:-2] + (H.shape(g)[-1],)) if xd == 1 else g


def _matmul_vjp_y(ct, out, x, y):
    if type(ct) is np.ndarray and type(x) is np.ndarray and ct.ndim == 2 and x.ndim == 2:
        return np.matmul(x.swapaxes(-1, -2), ct)  # (as in `_matmul_vjp_x`)
    xd, yd = H.ndim(x), H.ndim(y)
    if xd == 1:
        ct = expand_axis(ct, -2)
        x = reshape(x, (1, H.shape(x)[0]))
    if yd == 1:
        ct = expand_axis(ct, -1)
    g = matmul(swapaxes(x, axis1=-1, axis2=-2), ct)
    return reshape(g, H.shape(g)[:-1]) if yd == 1 else g


def _batch_matmul(prim, vals, dims):
    """Batch axes to the front; vectors become matrices so the batch axis never meets the
    contracted axis; the batched operand gets size-1 axes so both stacks align."""
    (x, y), (dx, dy) = vals, dims
    xn = H.ndim(x) - (dx is not None)
    yn = H.ndim(y) - (dy is not None)
    if dx is not None:
        x = B.move_to_front(x, dx)
    if dy is not None:
        y = B.move_to_front(y, dy)
    if xn == 1:
        x = expand_axis(x, -2)
    if yn == 1:
        y = expand_axis(y, -1)
    lead = builtins.max(xn, 2, yn) - 2
    if dx is not None and builtins.max(xn, 2) - 2 < lead:
        shape = H.shape(x)
        x = reshape(x, (shape[0],) + (1,) * (lead - (len(shape) - 3)) + tuple(shape[1:]))
    if dy is not None and builtins.max(yn, 2) - 2 < lead:
        shape = H.shape(y)
        y = reshape(y, (shape[0],) + (1,) * (lead - (len(shape) - 3)) + tuple(shape[1:]))
    out = matmul(x, y)
    shape = tuple(H.shape(out))
    if xn == 1 and yn == 1:
        shape = shape[:-2]
    elif xn == 1:
        shape = shape[:-2] + shape[-1:]
    elif yn == 1:
        shape = shape[:-1]
    return (reshape(out, shape) if shape != tuple(H.shape(out)) else out), 0


matmul = primitive("matmul", np.matmul, nargs=2, vjps=(_matmul_vjp_x, _matmul_vjp_y),
                   jvps=(lambda t, out, x, y: matmul(t, y), lambda t, out, x, y: matmul(x, t)),
                   batch=_batch_matmul)


# --- indexing: gather, scatter-add, scatter-set ---------------------------------------------
def _getitem_impl(x, *arrays, template):
    return (x if type(x) is np.ndarray else np.asarray(x))[H.build_index(template, arrays)]


def _index_add_impl(x, update, *arrays, template):
    out = np.array(x, copy=True)
    index = H.build_index(template, arrays)
    if H.is_basic(template):
        out[index] += update
    else:
        np.add.at(out, index, update)
    return out


def _index_set_impl(x, update, *arrays, template):
    out = np.array(x, copy=True)
    out[H.build_index(template, arrays)] = update
    return out


def _getitem_t(ct, out, x, *arrays, template):
    if not arrays and type(ct) is np.ndarray:
        # a basic index in the first-order walk (m[:, 0]): `index_add`'s own steps, without
        # its two primitive calls and the copy of the fresh zeros
        g = np.zeros(H.shape(x), H.dtype(x))
        g[template] += ct
        return g
    return index_add(zeros_like(x), ct, *arrays, template=template)


getitem = linear("getitem", _getitem_impl, _getitem_t, nargs=-1, batch=B.batch_by_loop)
index_add = linear(
    "index_add", _index_add_impl,
    lambda ct, out, x, u, *arrays, template: ct,
    lambda ct, out, x, u, *arrays, template: getitem(ct, *arrays, template=template),
    nargs=-1, batch=B.batch_by_loop)
index_set = linear(
    "index_set", _index_set_impl,
    lambda ct, out, x, u, *arrays, template: index_set(ct, 0, *arrays, template=template),
    lambda ct, out, x, u, *arrays, template: getitem(ct, *arrays, template=template),
    nargs=-1, batch=B.batch_by_loop)


class _VariadicRules(tuple):
    """Rules for the array arguments, then ``None`` for every index array after them."""

    def __new__(cls, *rules):
        return super().__new__(cls, rules)

    def __getitem__(self, k):
        return tuple.__getitem__(self, k) if k < len(self) else None


getitem.vjps = _VariadicRules(*getitem.vjps)
index_add.vjps = _VariadicRules(*index_add.vjps)
index_set.vjps = _VariadicRules(*index_set.vjps)
# (jit) an index with no arrays in it (a one-argument getitem) is a constant one
register_lowering(getitem, lambda x, template: (operator.getitem, {"index": tuple(template)}, True))


def _index_layout(template, arrays, adims, ndim):
    """Where numpy puts the advanced-index block of ``x[index]`` for an example of rank
    `ndim`: ``(p, block_ndim)``, the block's first result axis and its rank. NumPy moves
    the block to the front when advanced indices (arrays, and ints or bools beside them)
    are not next to each other; otherwise it stays where the first one stands."""
    if not arrays:
        return 0, 0
    block = builtins.max(H.ndim(a) - (d is not None) for a, d in zip(arrays, adims))
    advanced = [(t is H.SLOT or isinstance(t, (bool, int, np.integer))) for t in template]
    first = advanced.index(True)
    last = len(advanced) - 1 - advanced[::-1].index(True)
    if not builtins.all(advanced[first:last + 1]):
        return 0, block
    used = builtins.sum(1 for t in template if t is not None and t is not Ellipsis
                        and not isinstance(t, bool))
    p = 0
    for t in template[:first]:
        if t is Ellipsis:
            p += ndim - used
        elif t is None or isinstance(t, slice):
            p += 1
    return p, block


def _batched_index(vals, dims, template, x_batched_front):
    """The index of a gather/scatter whose index arrays are batched: (template, arrays,
    layout). With the array batched in front, a batch-position index array joins the
    advanced block, and the result is laid out "block": batch axis, the example's advanced
    block, its other axes. Otherwise (layout None) the batch axis leads the block."""
    arrays, adims = vals, dims
    ndim_ex = builtins.max([H.ndim(a) - (d is not None) for a, d in zip(arrays, adims)] + [0])
    n = B._size(arrays, adims)
    aligned = []
    for a, d in zip(arrays, adims):
        if d is not None:
            a = B.move_to_front(a, d)
            shape = H.shape(a)
            a = reshape(a, (shape[0],) + (1,) * (ndim_ex - (len(shape) - 1)) + tuple(shape[1:]))
        aligned.append(a)
    if not x_batched_front:
        return tuple(template), tuple(aligned), None
    arange = np.arange(n).reshape((n,) + (1,) * ndim_ex)
    return (H.SLOT,) + tuple(template), (arange,) + tuple(aligned), "block"


def _contiguous(template):
    advanced = [(t is H.SLOT or isinstance(t, (bool, int, np.integer))) for t in template]
    if True not in advanced:
        return True
    first = advanced.index(True)
    last = len(advanced) - 1 - advanced[::-1].index(True)
    return builtins.all(advanced[first:last + 1])


def _example_result_shape(x_shape, arrays, adims, template):
    """The shape of one example's ``x[index]``, from zero-filled stand-ins."""
    stand_ins = []
    for a, d in zip(arrays, adims):
        shape = tuple(H.shape(a))
        if d is not None:
            shape = shape[:d] + shape[d + 1:]
        stand_ins.append(np.zeros(shape, dtype=np.intp))
    probe = np.broadcast_to(np.zeros((), dtype=np.int8), tuple(x_shape))
    return np.shape(probe[H.build_index(template, stand_ins)])


def _block_to_example(out, p, block):
    """A "block" layout (batch, advanced block, others) as (batch, example result)."""
    if p == 0 or block == 0:
        return out
    src = list(range(1, 1 + block))
    return moveaxis(out, src, [p + 1 + i for i in range(block)])


def _example_to_block(u, p, block):
    if p == 0 or block == 0:
        return u
    return moveaxis(u, [p + 1 + i for i in range(block)], list(range(1, 1 + block)))


def _batch_getitem(prim, vals, dims, template):
    x, dx = vals[0], dims[0]
    arrays, adims = vals[1:], dims[1:]
    x_ndim = H.ndim(x) - (dx is not None)
    if dx is not None:
        x = B.move_to_front(x, dx)
    if builtins.all(d is None for d in adims):
        if dx is None:
            return getitem(x, *arrays, template=template), None
        p, block = _index_layout(template, arrays, adims, x_ndim)
        out = getitem(x, *arrays, template=(slice(None),) + tuple(template))
        return out, (0 if _contiguous(template) else block)
    p, block = _index_layout(template, arrays, adims, x_ndim)
    tmpl, arrs, layout = _batched_index(arrays, adims, template, dx is not None)
    out = getitem(x, *arrs, template=tmpl)
    if layout is None:  # x unbatched: the batch axis leads the advanced block
        return out, (p if _contiguous(template) else 0)
    return _block_to_example(out, p if _contiguous(template) else 0, block), 0


def _batch_index_update(prim, vals, dims, template):
    """index_add / index_set: the array is batched (broadcast if it was not), the update
    laid out like the batched gather's result."""
    n = B._size(vals, dims)
    (x, u), (dx, du) = vals[:2], dims[:2]
    arrays, adims = vals[2:], dims[2:]
    x = B.front_or_broadcast(x, dx, n)
    x_shape = tuple(H.shape(x))[1:]
    result = _example_result_shape(x_shape, arrays, adims, template)
    u = B.front_or_broadcast(u, du, n)
    u_shape = tuple(H.shape(u))[1:]
    u = reshape(u, (n,) + (1,) * (len(result) - len(u_shape)) + u_shape)
    u = broadcast_to(u, (n,) + tuple(result))
    p, block = _index_layout(template, arrays, adims, len(x_shape))
    if builtins.all(d is None for d in adims):
        tmpl = (slice(None),) + tuple(template)
        if not _contiguous(template):  # numpy puts the block first, before the batch axis
            u = moveaxis(u, 0, block)
        return prim(x, u, *arrays, template=tmpl), 0
    tmpl, arrs, _ = _batched_index(arrays, adims, template, True)
    u = _example_to_block(u, p if _contiguous(template) else 0, block)
    return prim(x, u, *arrs, template=tmpl), 0


getitem.batch = _batch_getitem
index_add.batch = _batch_index_update
index_set.batch = _batch_index_update


# --- indices out of bounds: JAX's modes ----------------------------------------------------
# An integer index outside its axis does not raise, as in JAX: a gather ("clip", the default
# of x[i]) reads the nearest element, "fill" reads a fill value, and a scatter ("drop", the
# default of x.at[i].set) writes nothing. "fill"/"drop" point such an index one past the end
# of its axis and pad the array there with one slot, so the same gather and scatter
# primitives (and their rules) serve: what lands in the slot is cut off again, and its
# derivative with it. "promise_in_bounds" leaves the index to NumPy, which raises IndexError.
GATHER_MODES = (None, "clip", "fill", "drop", "promise_in_bounds")
SCATTER_MODES = GATHER_MODES


def _bound_int(i, n, mode):
    """An integer index into an axis of length n: (index, whether it points at the pad)."""
    if mode == "clip":
        return (i if -n <= i < n else (0 if i < 0 else n - 1)), False
    if -n <= i < n:
        return (i + n if i < 0 else i), False
    return n, True


def _bound_array(a, n, mode):
    """An integer index array into an axis of length n: (array, whether it may point at
    the pad). A traced one (under vmap or jit) is bounded with primitives; a concrete one
    is left as it is when it is in bounds (the usual case costs one min and one max)."""
    if isinstance(a, Tracer):
        if H.dtype(a) == np.bool_:
            return a, False
        a = where(less(a, 0), add(a, n), a)
        if mode == "clip":
            return clip(a, 0, n - 1), False
        return where(logical_or(less(a, 0), greater_equal(a, n)), n, a), True
    unsigned = a.view(np.uintp) if a.dtype == np.intp else a.astype(np.uintp)
    if a.size == 0 or np.maximum.reduce(unsigned, axis=None) < n:
        return a, False  # all in [0, n): as unsigned, a negative index is larger than any n
    if mode == "clip":
        return np.clip(np.where(a < 0, a + n, a), 0, n - 1), False
    a = np.where(a < 0, a + n, a)
    outside = (a < 0) | (a >= n)
    return (np.where(outside, n, a), True) if outside.any() else (a, False)


def bound_index(template, arrays, shape, mode):
    """(template, arrays, padded axes) with every integer index brought into bounds under
    `mode` ("clip" or "fill"); the padded axes are those an index may point one past."""
    if mode == "promise_in_bounds":
        return template, arrays, ()
    ints = False
    for t in template:  # the common case, slices only, returns here
        if t.__class__ is not slice:
            if t.__class__ is int:
                ints = True
            elif t is not None and t is not Ellipsis and t is not True and t is not False:
                break
    else:
        if not ints:
            return template, arrays, ()
        if len(template) <= len(shape) and None not in template and Ellipsis not in template:
            # slices and integers, one per leading axis (m[:, 0]): in bounds, only the
            # negative integers change, and no axis is padded
            index = list(template)
            for k, t in enumerate(template):
                if t.__class__ is int:
                    n = shape[k]
                    if t < 0:
                        if t < -n:
                            break
                        index[k] = t + n
                    elif t >= n:
                        break
            else:
                return tuple(index), arrays, ()
    ndim = len(shape)
    used = builtins.sum(1 for t in template if t is not None and t is not Ellipsis
                        and not isinstance(t, bool))
    template, arrays, padded = list(template), list(arrays), []
    axis = k = 0
    for i, t in enumerate(template):
        if t is Ellipsis:
            axis += ndim - used
            continue
        if t is None or isinstance(t, bool):
            continue
        if axis < ndim and shape[axis] > 0:
            if t is H.SLOT:
                arrays[k], pad = _bound_array(arrays[k], shape[axis], mode)
            elif not isinstance(t, slice):
                template[i], pad = _bound_int(operator.index(t), shape[axis], mode)
            else:
                pad = False
            if pad:
                padded.append(axis)
        k += t is H.SLOT
        axis += 1
    return tuple(template), tuple(arrays), tuple(padded)


def _fill_value(dtype, fill_value):
    """JAX's default fill: NaN for floats, the lowest value for signed integers, the
    highest for unsigned ones, True for booleans."""
    if fill_value is not None:
        return fill_value
    if np.issubdtype(dtype, np.inexact):
        return np.nan
    if dtype == np.bool_:
        return True
    info = np.iinfo(dtype)
    return info.min if np.issubdtype(dtype, np.signedinteger) else info.max


def pad_axes(x, axes, value):
    """`x` with one more slot, holding `value`, at the end of each of `axes`."""
    for axis in axes:
        shape = list(H.shape(x))
        shape[axis] = 1
        x = concatenate(x, np.full(shape, value, dtype=H.dtype(x)), axis=axis)
    return x


def unpad_axes(x, axes):
    if not axes:
        return x
    index = [slice(None)] * H.ndim(x)
    for axis in axes:
        index[axis] = slice(0, H.shape(x)[axis] - 1)
    return getitem(x, template=tuple(index))


def _checked_mode(mode, modes, what):
    if mode not in modes:
        raise ValueError(f'Unknown {what} mode "{mode}"; use one of '
                         + ", ".join(repr(m) for m in modes))


def subscript(x, index, mode=None, fill_value=None):
    """``x[index]`` (a gather): out-of-bounds integer indices are clamped (mode None or
    "clip", JAX's x[i]) or read `fill_value` ("fill", "drop"; JAX's default fill)."""
    template, arrays = H.split_index(index)
    if mode is not None:
        _checked_mode(mode, GATHER_MODES, "gather")
    bounded = "clip" if mode is None or mode == "clip" else \
        ("fill" if mode != "promise_in_bounds" else mode)
    template, arrays, padded = bound_index(template, arrays, H.shape(x), bounded)
    if padded:
        x = pad_axes(x, padded, _fill_value(H.dtype(x), fill_value))
    return getitem(x, *arrays, template=template)


def scatter(x, index, update, mode=None):
    """``update(padded x, template, arrays)`` at `index` with JAX's scatter modes:
    out-of-bounds integer indices write nothing (None, "drop", "fill") or are clamped
    ("clip"); `update` is handed the array (padded where an index may point past its
    axis) and returns the updated one, cut back here."""
    if mode is not None:
        _checked_mode(mode, SCATTER_MODES, "scatter")
    template, arrays = H.split_index(index)
    bounded = "clip" if mode == "clip" else ("fill" if mode != "promise_in_bounds" else mode)
    template, arrays, padded = bound_index(template, arrays, H.shape(x), bounded)
    if padded:
        x = pad_axes(x, padded, 0)
    return unpad_axes(update(x, template, arrays), padded)


# --- activations (used by funcgrad.mutable; their rules read only the output) --------------


def _sigmoid_impl(x):
    return np.reciprocal(1 + np.exp(-x))


def _relu_impl(x):
    # against an array of zeros, not the number 0: NumPy's SIMD loop takes no scalar operand
    # (64x256 float32: 2 us instead of 7.6; 1e6 float32: 130 us instead of 300)
    if type(x) is np.ndarray:
        return np.maximum(x, np.zeros(x.shape, x.dtype))
    return np.maximum(x, 0)


sigmoid = elementwise("sigmoid", _sigmoid_impl, lambda out, x: out * (1.0 - out))


def _relu_slope(out, x):
    # slope 0 at 0 and 1 at NaN, as PyTorch's relu (the output is never negative). As floats
    # of out's dtype where it is a float array: a cotangent times a bool mask casts the
    # mask element by element inside the product (64x256 float32: 4.1 us, against 2.3 for
    # the comparison, the cast and the product of floats); elsewhere a mask (multiplied by
    # it, the cotangent keeps its dtype)
    if type(out) is np.ndarray and out.dtype.kind == "f":
        return np.not_equal(out, _zero_of(out.dtype)).astype(out.dtype)
    return out != 0


relu = elementwise("relu", _relu_impl, _relu_slope)


# --- complex parts ------------------------------------------------------------------------
# A VJP is the plain transpose of the JVP under the pairing Re sum(a * b), with no complex
# conjugation (JAX's convention, docs/complex.md): for a holomorphic f, ct * f'(z).


def conj_if_complex(x):
    """conj(x) for complex values; real values pass through untouched (and cost nothing)."""
    return conjugate(x) if H.dtype(x).kind == "c" else x


def _imag_t(ct, out, x):
    # imag(z) = Re(-1j * z): its transpose multiplies by -1j
    return multiply(ct, -1j) if H.dtype(x).kind == "c" else zeros_like(x)


conjugate = linear("conjugate", np.conjugate, lambda ct, out, x: conjugate(ct), batch=B.batch_elementwise)
real = linear("real", np.real, lambda ct, out, x: ct, batch=B.batch_elementwise)
imag = linear("imag", np.imag, _imag_t, batch=B.batch_elementwise)

engine.register(conj=conjugate)


def _abs_vjp(ct, out, x):
    # For complex z, d|z| = Re(conj(z) dz) / |z|: the transpose multiplies by conj(z) / |z|
    # (smooth, not a piecewise constant sign).
    return ct * safe_div(conjugate(x), absolute(x)) if H.dtype(x).kind == "c" else ct * sign(x)


def _abs_jvp(t, out, x):
    if H.dtype(x).kind == "c":
        return real(conj_if_complex(safe_div(x, out)) * t)
    return t * sign(x)


# --- more elementwise functions ------------------------------------------------------------
def _arctan2_dy(out, y, x):
    return safe_div(x, x * x + y * y)


def _arctan2_dx(out, y, x):
    return safe_div(-y, x * x + y * y)


def _sinc_d(out, x):
    return safe_div(cos(np.pi * x) - out, x)


def _fmax_dx(out, x, y):
    return pick_slope(x, y, skip_nan=True)


def _fmax_dy(out, x, y):
    return pick_slope(y, x, skip_nan=True)


def _fmin_dx(out, x, y):
    return pick_slope(x, y, smallest=True, skip_nan=True)


def _fmin_dy(out, x, y):
    return pick_slope(y, x, smallest=True, skip_nan=True)


def _copysign_dx(out, x, y):
    flips = not_equal(signbit(x), signbit(y))
    return 1 - 2 * astype(flips, H.dtype(out))


def _nan_to_num_impl(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


# Primitives rather than composites: sqrt(x*x + y*y) overflows where hypot does not, and a
# stable logaddexp or arctan2 built from other functions costs several passes and a where.
logaddexp = elementwise("logaddexp", np.logaddexp, lambda out, x, y: exp(x - out),
                        lambda out, x, y: exp(y - out))
logaddexp2 = elementwise("logaddexp2", np.logaddexp2, lambda out, x, y: exp2(x - out),
                         lambda out, x, y: exp2(y - out))
hypot = elementwise("hypot", np.hypot, lambda out, x, y: safe_div(x, out),
                    lambda out, x, y: safe_div(y, out))  # slope 0 at (0, 0), as norm
arctan2 = elementwise("arctan2", np.arctan2, _arctan2_dy, _arctan2_dx)
sinc = elementwise("sinc", np.sinc, _sinc_d)
fmax = elementwise("fmax", np.fmax, _fmax_dx, _fmax_dy)
fmin = elementwise("fmin", np.fmin, _fmin_dx, _fmin_dy)
copysign = elementwise("copysign", np.copysign, _copysign_dx, lambda out, x, y: 0 * out)
fmod = elementwise("fmod", np.fmod, lambda out, x, y: ones_like(out),
                   lambda out, x, y: -trunc(x / y))


def _nan_to_num_slope(out, x):
    return astype(isfinite(x), H.dtype(out))


nan_to_num = primitive("nan_to_num", _nan_to_num_impl, params=("nan", "posinf", "neginf"),
                         vjps=(lambda ct, out, x, **kw: ct * _nan_to_num_slope(out, x),),
                         jvps=(lambda t, out, x, **kw: t * _nan_to_num_slope(out, x),),
                         batch=B.batch_elementwise)

# --- cumulative functions ------------------------------------------------------------------


def _flip_axis(x, axis):
    axis = axis % H.ndim(x)
    return getitem(x, template=(slice(None),) * axis + (slice(None, None, -1),))


def _cumsum_impl(x, axis):
    return np.cumsum(x, axis=axis)


def _rev_cumsum(x, axis):
    return _flip_axis(cumsum(_flip_axis(x, axis), axis=axis), axis)


cumsum = linear("cumsum", _cumsum_impl, lambda ct, out, x, axis: _rev_cumsum(ct, axis),
                  params=("axis",), batch=B.batch_axis_param)


def _cumprod_impl(x, axis):
    return np.cumprod(x, axis=axis)


def _cumprod_grid(x, axis):
    """grid[..., k, j] = product of x[..., i] for i <= j, i != k (axis moved last): the exact
    partial derivatives of cumprod, also where x holds zeros."""
    xm = moveaxis(x, axis, -1)
    n = H.shape(xm)[-1]
    grid = where(np.eye(n, dtype=bool), 1, expand_axis(xm, -2))
    return cumprod(grid, axis=-1), np.triu(np.ones((n, n), dtype=bool))


def _cumprod_vjp(ct, out, x, axis):
    if not _has_zero(x):
        return _rev_cumsum(ct * out, axis) / x
    grid, later = _cumprod_grid(x, axis)
    ctm = expand_axis(moveaxis(ct, axis, -1), -2)
    g = sum(where(later, ctm * grid, 0), axis=-1)
    return moveaxis(g, -1, axis)


def _cumprod_jvp(t, out, x, axis):
    if not _has_zero(x):
        return out * cumsum(t / x, axis=axis)
    grid, later = _cumprod_grid(x, axis)
    tm = expand_axis(moveaxis(t, axis, -1), -1)
    return moveaxis(sum(where(later, tm * grid, 0), axis=-2), -1, axis)


cumprod = primitive("cumprod", _cumprod_impl, params=("axis",), vjps=(_cumprod_vjp,),
                      jvps=(_cumprod_jvp,), batch=B.batch_axis_param)


# --- sorting permutations (no derivative; sort and partition gather through them) ----------
def _argsort_impl(x, axis=-1, kind=None, order=None, *, stable=None):
    return np.argsort(x, axis=axis, kind=kind, order=order, stable=stable)


argsort = nondiff("argsort", _argsort_impl, params=("axis", "kind", "order"),
                  batch=B.batch_flat_axis)


def _argpartition_impl(x, kth, axis=-1):
    return np.argpartition(x, kth, axis=axis)


argpartition = nondiff("argpartition", _argpartition_impl, params=("kth", "axis"),
                         batch=B.batch_axis_param)


# --- einsum --------------------------------------------------------------------------------
def _einsum_impl(*operands, spec):
    ins, out = spec
    return np.einsum(",".join(ins) + "->" + out, *operands, optimize=len(operands) > 2)


def _einsum_jvp(k):
    def jvp_k(t, out, *operands, spec):
        ops = list(operands)
        ops[k] = t
        return einsum(*ops, spec=spec)
    return jvp_k


def _einsum_vjp(k):
    def vjp_k(ct, out, *operands, spec):
        ins, out_sub = spec
        target = ins[k]
        others = [i for i in range(len(operands)) if i != k]
        present = set(out_sub).union(*[set(ins[i]) for i in others])
        unique = "".join(dict.fromkeys(target))
        kept = "".join(c for c in unique if c in present)
        g = einsum(ct, *[operands[i] for i in others],
                     spec=((out_sub,) + tuple(ins[i] for i in others), kept))
        # letters summed only inside operand k: the cotangent is constant along them
        sizes = dict(zip(target, H.shape(operands[k])))
        sizes.update(zip(kept, H.shape(g)))  # a broadcast (size-1) axis: the walker sums it
        g = reshape(g, tuple(sizes[c] if c in kept else 1 for c in unique))
        g = broadcast_to(g, tuple(sizes[c] for c in unique))
        if len(unique) == len(target):
            return transpose(g, tuple(unique.index(c) for c in target))
        # repeated letters (a diagonal such as 'ii'): put the values on that diagonal
        spec, repeated = _diag_spec(unique, target)
        return einsum(g, *[np.eye(sizes[c], dtype=bool) for c in repeated], spec=spec)
    return vjp_k


def _diag_spec(unique, target):
    fresh = [c for c in H.LETTERS if c not in target]
    seen = set()
    out = []
    eyes = []
    for c in target:
        if c in seen:
            d = fresh.pop()
            eyes.append(c + d)
            out.append(d)
        else:
            seen.add(c)
            out.append(c)
    return ((unique,) + tuple(eyes), "".join(out)), [e[0] for e in eyes]


class _EinsumRules(tuple):
    def __new__(cls, make):
        self = super().__new__(cls, ())
        self.make = make
        return self

    def __getitem__(self, k):
        return self.make(k)


def _batch_einsum(prim, vals, dims, spec):
    ins, out = spec
    fresh = next(c for c in H.LETTERS if c not in "".join(ins) + out)
    new_ins = tuple(t if d is None else t[:d] + fresh + t[d:] for t, d in zip(ins, dims))
    return einsum(*vals, spec=(new_ins, fresh + out)), 0


einsum = primitive("einsum", _einsum_impl, nargs=-1, batch=_batch_einsum)
einsum.vjps = _EinsumRules(_einsum_vjp)
einsum.jvps = _EinsumRules(_einsum_jvp)


# --- Bessel I0 (NumPy's i0), with the I1 it differentiates into --------------------------
def _i0_impl(x):
    return np.asarray(np.i0(x)).astype(H.dtype(x), copy=False)


def _i1_impl(x):
    """I1(x) = (1/pi) * integral_0^pi exp(x cos t) cos t dt, by the trapezoid rule, which
    converges geometrically for this periodic integrand once the nodes outnumber |x|."""
    x = np.asarray(x)
    a = np.asarray(x, dtype=np.float64)
    n = 32 + int(np.ceil(np.max(np.abs(a), initial=0.0)))
    t = np.linspace(0.0, np.pi, n + 1)
    w = np.full(n + 1, 1.0 / n)
    w[[0, -1]] /= 2
    c = np.cos(t)
    out = np.sign(a) * (np.exp(np.abs(a)[..., None] * c) @ (w * c))  # odd, and 0 at 0
    return out.astype(x.dtype if x.dtype.kind == "f" else np.float64, copy=False)


def _i1_slope(out, x):
    # I1'(x) = I0(x) - I1(x) / x, which is 1/2 at x = 0
    zero = equal(x, 0)
    return i0(x) - where(zero, -0.5, out / where(zero, 1, x))


i0 = elementwise("i0", _i0_impl, lambda out, x: bessel_i1(x),
                 doc="Differentiable ``numpy.i0`` (the modified Bessel function I0); its "
                     "slope is I1.")
bessel_i1 = elementwise("bessel_i1", _i1_impl, _i1_slope,
                        doc="The modified Bessel function I1 (the slope of `i0`).")


# --- more functions without derivatives: bits, integers, sets, index arithmetic -----------
def _frexp_exponent_impl(x):
    return np.frexp(x)[1]


frexp_exponent = nondiff("frexp_exponent", _frexp_exponent_impl)
bitwise_and = nondiff("bitwise_and", np.bitwise_and, nargs=2)
bitwise_or = nondiff("bitwise_or", np.bitwise_or, nargs=2)
bitwise_xor = nondiff("bitwise_xor", np.bitwise_xor, nargs=2)
bitwise_not = nondiff("bitwise_not", np.bitwise_not)
bitwise_count = nondiff("bitwise_count", np.bitwise_count)
left_shift = nondiff("left_shift", np.left_shift, nargs=2)
right_shift = nondiff("right_shift", np.right_shift, nargs=2)
gcd = nondiff("gcd", np.gcd, nargs=2)
lcm = nondiff("lcm", np.lcm, nargs=2)
isin = nondiff("isin", np.isin, nargs=2, params=("assume_unique", "invert", "kind"),
               batch=B.batch_first_only)
array_equiv = nondiff("array_equiv", np.array_equiv, nargs=2, batch=B.batch_all_axes)


def _lexsort_impl(*keys, axis=-1):
    return np.lexsort(keys, axis=axis)


lexsort = nondiff("lexsort", _lexsort_impl, nargs=-1, params=("axis",), batch=B.batch_by_loop)


def _set_impl(np_fn):
    def impl(a, b, **params):
        out = np_fn(a, b, **params)
        return tuple(out) if isinstance(out, tuple) else out
    impl.__name__ = np_fn.__name__
    return impl


# Output sizes depend on the values: vmap loops (one call per example).
union1d = nondiff("union1d", np.union1d, nargs=2, batch=B.batch_by_loop)
setdiff1d = nondiff("setdiff1d", np.setdiff1d, nargs=2, params=("assume_unique",),
                    batch=B.batch_by_loop)
setxor1d = nondiff("setxor1d", np.setxor1d, nargs=2, params=("assume_unique",),
                   batch=B.batch_by_loop)
intersect1d = nondiff("intersect1d", _set_impl(np.intersect1d), nargs=2,
                      params=("assume_unique", "return_indices"), batch=B.batch_unsupported)


def _unique_parts_impl(x, which):
    out = getattr(np, which)(x)
    return tuple(out) if isinstance(out, tuple) else out


unique_parts = nondiff("unique_parts", _unique_parts_impl, params=("which",),
                       batch=B.batch_unsupported)


def _ravel_multi_index_impl(*index, shape, mode="raise", order="C"):
    return np.ravel_multi_index(index, shape, mode=mode, order=order)


ravel_multi_index = nondiff("ravel_multi_index", _ravel_multi_index_impl, nargs=-1,
                            params=("shape", "mode", "order"), batch=B.batch_elementwise)


def _unravel_index_impl(indices, shape, order="C"):
    return tuple(np.unravel_index(indices, shape, order=order))


unravel_index = nondiff("unravel_index", _unravel_index_impl, params=("shape", "order"),
                        batch=B.batch_unsupported)
packbits = nondiff("packbits", np.packbits, params=("axis", "bitorder"), batch=B.batch_by_loop)
unpackbits = nondiff("unpackbits", np.unpackbits, params=("axis", "count", "bitorder"),
                     batch=B.batch_by_loop)


def _tuple_impl(np_fn):
    def impl(*args, **params):
        return tuple(np_fn(*args, **params))
    impl.__name__ = np_fn.__name__
    return impl


histogram_bin_edges = nondiff("histogram_bin_edges", np.histogram_bin_edges,
                              params=("bins", "range", "weights"), batch=B.batch_by_loop)
histogram2d = nondiff("histogram2d", _tuple_impl(np.histogram2d), nargs=2,
                      params=("bins", "range", "density", "weights"), batch=B.batch_unsupported)
histogramdd = nondiff("histogramdd", _tuple_impl(np.histogramdd),
                      params=("bins", "range", "density", "weights"), batch=B.batch_unsupported)


# --- engine registration -------------------------------------------------------------------


def _take0(x, b):
    return getitem(x, template=(b,))


engine.register(
    sum_to_shape=sum_to_shape, broadcast_to=broadcast_to, zeros_like=zeros_like,
    moveaxis=moveaxis, reshape=reshape, take0=_take0,
    astype=astype, expand_dims=lambda x, axis: expand_axis(x, axis),
    stack=lambda xs: stack(*xs, axis=0),
)


# --- helpers the rules (and the family modules) share -------------------------------------


def expand_reduced(ct, x, axis, keepdims):
    """A reduction's cotangent broadcast back over the axes it reduced."""
    shape = H.shape(x)
    if type(ct) is np.ndarray:  # the first-order walk: the forwards, without primitive calls
        if not keepdims and axis is not None:
            ct = ct.reshape(H.keepdims_shape(shape, axis))
        return _broadcast_to_impl(ct, tuple(shape))
    if not keepdims and axis is not None:  # (a reduction over every axis: ct broadcasts as it is)
        ct = reshape(ct, shape=H.keepdims_shape(shape, axis))
    return broadcast_to(ct, shape=shape)  # (by keyword: the primitive's shortest call)


def flatten(x):
    """`x` as a 1-d array (a 0-d `x` becomes one element), as ``numpy.ravel``."""
    return reshape(x, (-1,) if H.shape(x) != () else (1,))


def slice_axis(x, axis, start=None, stop=None, step=None):
    """``x[..., start:stop:step, ...]`` along one axis."""
    axis = axis % H.ndim(x)
    return subscript(x, (slice(None),) * axis + (slice(start, stop, step),))


def safe_div(num, den):
    """num / den, and 0 where den == 0 (both branches stay finite: the double-where recipe)."""
    zero = equal(den, 0)
    return where(zero, 0, num / where(zero, 1, den))


def nan_fill(a, value):
    """`a` with its NaNs replaced by `value` (which then receive no gradient)."""
    return where(isnan(a), value, a)


def valid_count(a, axis, keepdims):
    """How many entries of `a` along `axis` are not NaN, in `a`'s dtype."""
    return sum(astype(logical_not(isnan(a)), H.dtype(a)), axis=axis, keepdims=keepdims)


# --- linear algebra: functions of stacks of matrices -------------------------------------
# Leading axes are stacks, as in NumPy. The rules of the decompositions are written as
# adjoints (conjugate transposes), the form the matrix-calculus references give them in, and
# `_from_adjoint` turns each into the plain transpose (docs/complex.md).
def _T(x):
    return swapaxes(x, -1, -2)


def _H(x):
    return conj_if_complex(swapaxes(x, -1, -2))


def _diag(x):
    """The diagonal of each matrix of a stack (last axis)."""
    n = builtins.min(H.shape(x)[-2:])
    return subscript(x, (Ellipsis, np.arange(n), np.arange(n)))


def _diag_embed(v):
    """Stack of diagonal matrices from a stack of vectors."""
    n = H.shape(v)[-1]
    return where(np.eye(n, dtype=bool), expand_axis(v, -1), 0)


def _sym(x):
    return (x + _H(x)) / 2


def _eye_like(x):
    return np.eye(H.shape(x)[-1], dtype=H.dtype(x))


def _eye_rows(x):
    return np.eye(H.shape(x)[-2], dtype=H.dtype(x))


def _batch_stack(prim, vals, dims, **params):
    """Functions of stacked matrices: the batch axis joins the leading (stack) axes."""
    moved = []
    for v, d in zip(vals, dims):
        if d is None:
            moved.append(v)
        else:
            moved.append(B.move_to_front(v, d))
    rank = builtins.max(np.ndim(v) - (d is not None) for v, d in zip(vals, dims))
    aligned = []
    for v, d in zip(moved, dims):
        if d is not None and np.ndim(v) - 1 < rank:
            v = reshape(v, (v.shape[0],) + (1,) * (rank - np.ndim(v) + 1) + tuple(v.shape[1:]))
        aligned.append(v)
    return prim(*aligned, **params), 0


def _conj_all(v):
    return tuple(_conj_all(c) for c in v) if type(v) is tuple else conj_if_complex(v)


def _from_adjoint(adjoint):
    """The VJP (plain transpose) of a rule written as the adjoint ``A^H ct``: since
    ``A^T ct = conj(A^H conj(ct))``, for real values the two are the same rule."""
    def vjp(ct, out, *args, **params):
        return conj_if_complex(adjoint(_conj_all(ct), out, *args, **params))
    return vjp


inv = primitive("inv", np.linalg.inv, batch=_batch_stack,
                  vjps=(lambda ct, out, x: -matmul(_T(out), matmul(ct, _T(out))),),
                  jvps=(lambda t, out, x: -matmul(out, matmul(t, out)),))


def _solve_impl(a, b):
    return np.linalg.solve(a, b)


def _solve_vjp_b(ct, out, a, b):
    return solve(_T(a), ct)


def _solve_vjp_a(ct, out, a, b):
    return -matmul(solve(_T(a), ct), _T(out))


solve = primitive("solve", _solve_impl, nargs=2, batch=_batch_stack,
                    vjps=(_solve_vjp_a, _solve_vjp_b),
                    jvps=(lambda t, out, a, b: -solve(a, matmul(t, out)),
                          lambda t, out, a, b: solve(a, t)))


def _det_vjp(ct, out, x):
    return expand_axis(expand_axis(out * ct, -1), -1) * _T(inv(x))


def _det_jvp(t, out, x):
    return out * sum(_T(inv(x)) * t, axis=(-2, -1))


det = primitive("det", np.linalg.det, vjps=(_det_vjp,), jvps=(_det_jvp,), batch=_batch_stack)


def _slogdet_impl(x):
    sign, logabsdet = np.linalg.slogdet(x)
    return sign, logabsdet


def _slogdet_vjp(ct, out, x):
    return expand_axis(expand_axis(ct[1], -1), -1) * _T(inv(x))


def _slogdet_jvp(t, out, x):
    return (zeros_like(out[0]), real(sum(_T(inv(x)) * t, axis=(-2, -1))))


slogdet = primitive("slogdet", _slogdet_impl, vjps=(_slogdet_vjp,), jvps=(_slogdet_jvp,),
                      multiple_results=True, batch=_batch_stack)


def _phi(x):
    """Lower triangle with the diagonal halved."""
    n = H.shape(x)[-1]
    return where(np.tri(n, k=-1, dtype=bool), x, 0) + where(np.eye(n, dtype=bool), 0.5 * x, 0)


def _cholesky_vjp(ct, out, x):
    l_inv = inv(out)
    s = matmul(_H(l_inv), matmul(_phi(matmul(_H(out), ct)), l_inv))
    return _sym(s)


def _cholesky_jvp(t, out, x):
    l_inv = inv(out)
    return matmul(out, _phi(matmul(l_inv, matmul(_sym(t), _H(l_inv)))))


cholesky = primitive("cholesky", np.linalg.cholesky, vjps=(_from_adjoint(_cholesky_vjp),),
                       jvps=(_cholesky_jvp,), batch=_batch_stack)


def _gap_inverse(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it (infinite for repeated values)."""
    gaps = expand_axis(w, -2) - expand_axis(w, -1)
    n = H.shape(w)[-1]
    off = ~np.eye(n, dtype=bool)
    return where(off, 1 / where(off, gaps, 1), 0)


def _eigh_impl(x, UPLO="L"):
    w, v = np.linalg.eigh(x, UPLO=UPLO)
    return w, v


def _eigh_vjp(ct, out, x, UPLO="L"):
    w, v = out
    w_ct, v_ct = ct
    inner = _diag_embed(w_ct) + _gap_inverse(w) * matmul(_H(v), v_ct)
    return _sym(matmul(v, matmul(inner, _H(v))))


def _eigh_jvp(t, out, x, UPLO="L"):
    w, v = out
    m = matmul(_H(v), matmul(_sym(t), v))
    return real(_diag(m)), matmul(v, _gap_inverse(w) * m)


eigh = primitive("eigh", _eigh_impl, params=("UPLO",), vjps=(_from_adjoint(_eigh_vjp),),
                   jvps=(_eigh_jvp,),
                   multiple_results=True, batch=_batch_stack)


def _eig_impl(x):
    w, v = np.linalg.eig(x)
    kind = np.result_type(x.dtype, np.complex64)
    return w.astype(kind), v.astype(kind)


def _eig_vjp(ct, out, x):
    w, v = out
    w_ct, v_ct = ct
    # undo the unit-norm normalisation of each eigenvector, then the eigen-equation
    v_ct = v_ct - v * expand_axis(real(_diag(matmul(_H(v), v_ct))), -2)
    inner = _diag_embed(w_ct) + conj_if_complex(_gap_inverse(w)) * matmul(_H(v), v_ct)
    return matmul(solve(_H(v), inner), _H(v))


def _eig_jvp(t, out, x):
    w, v = out
    m = solve(v, matmul(t, v))
    dv = matmul(v, _gap_inverse(w) * m)
    dv = dv - v * expand_axis(real(_diag(matmul(_H(v), dv))), -2)
    return _diag(m), dv


eig = primitive("eig", _eig_impl, vjps=(_from_adjoint(_eig_vjp),), jvps=(_eig_jvp,),
                  multiple_results=True,
                  batch=_batch_stack)


def _svd_impl(x, full_matrices=False):
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return u, s, vh


def _check_unique(x, full_matrices):
    m, n = H.shape(x)[-2:]
    if full_matrices and m != n:
        raise FuncgradError(
            "svd with full_matrices=True of a non-square matrix: the extra singular vectors "
            "are not unique, so they have no derivative. Pass full_matrices=False")


def _svd_vjp(ct, out, x, full_matrices=False):
    _check_unique(x, full_matrices)
    u, s, vh = out
    u_ct, s_ct, vh_ct = ct
    v, v_ct = _H(vh), _H(vh_ct)
    f = _gap_inverse(s * s)
    uh_uct = matmul(_H(u), u_ct)
    j = f * uh_uct
    k = f * matmul(_H(v), v_ct)
    s_row = expand_axis(s, -2)
    s_col = expand_axis(s, -1)
    inner = (j + _H(j)) * s_row + s_col * (k + _H(k)) + _diag_embed(s_ct)
    if H.dtype(u).kind == "c":  # the adjoint of the phase term of the JVP (see _svd_phase)
        inner = inner + _svd_phase(uh_uct, s)
    grad = matmul(u, matmul(inner, vh))
    m, n = H.shape(x)[-2:]
    if m > n:
        proj = _eye_rows(u) - matmul(u, _H(u))
        grad = grad + matmul(proj, matmul(u_ct / s_row, vh))
    if n > m:
        proj = _eye_rows(v) - matmul(v, vh)
        grad = grad + matmul(u, matmul(_H(v_ct) / s_col, proj))
    return grad


def _svd_phase(m, s):
    """diag(i Im(m_kk) / s_k): for complex matrices the singular vectors are fixed up to a
    phase per pair; LAPACK's choice moves u_k's phase by i Im((U^H dA V)_kk) / s_k, the
    skew-Hermitian diagonal part (JAX's dUdV_diag), and 0 where s_k is 0."""
    zero = equal(s, 0)
    s_inv = where(zero, 0, 1 / where(zero, 1, s))
    return _diag_embed(1j * imag(_diag(m)) * s_inv)


def _svd_jvp(t, out, x, full_matrices=False):
    _check_unique(x, full_matrices)
    u, s, vh = out
    v = _H(vh)
    dp = matmul(_H(u), matmul(t, v))
    ds = real(_diag(dp))
    f = _gap_inverse(s * s)
    s_row, s_col = expand_axis(s, -2), expand_axis(s, -1)
    du = matmul(u, f * (dp * s_row + s_col * _H(dp)))
    if H.dtype(u).kind == "c":
        du = du + matmul(u, _svd_phase(dp, s))
    dv = matmul(v, f * (s_col * dp + _H(dp) * s_row))
    m, n = H.shape(x)[-2:]
    if m > n:
        du = du + matmul(_eye_rows(u) - matmul(u, _H(u)), matmul(t, v) / s_row)
    if n > m:
        dv = dv + matmul(_eye_rows(v) - matmul(v, vh), matmul(_H(t), u) / s_row)
    return du, ds, _H(dv)


svd = primitive("svd", _svd_impl, params=("full_matrices",), vjps=(_from_adjoint(_svd_vjp),),
                  jvps=(_svd_jvp,), multiple_results=True, batch=_batch_stack)


def _svdvals_impl(x):
    return np.linalg.svd(x, compute_uv=False)


def _svdvals_vjp(ct, out, x):
    u, s, vh = svd(x, full_matrices=False)
    return matmul(u * expand_axis(ct, -2), vh)


def _svdvals_jvp(t, out, x):
    u, s, vh = svd(x, full_matrices=False)
    return real(_diag(matmul(_H(u), matmul(t, _H(vh)))))


svdvals = primitive("svdvals", _svdvals_impl, vjps=(_from_adjoint(_svdvals_vjp),),
                      jvps=(_svdvals_jvp,),
                      batch=_batch_stack)


def _qr_impl(x, mode="reduced"):
    q, r = np.linalg.qr(x, mode=mode)
    return q, r


def _check_tall(x):
    m, n = H.shape(x)[-2:]
    if m < n:
        raise FuncgradError("qr of a wide matrix (more columns than rows) has no unique "
                            "derivative here; differentiate qr of its leading square block")


def _strictly_lower(x):
    return where(np.tri(H.shape(x)[-1], k=-1, dtype=bool), x, 0)


def _qr_vjp(ct, out, x, mode="reduced"):
    _check_tall(x)
    q, r = out
    q_ct, r_ct = ct
    r_inv = inv(r)
    z = matmul(r_ct, _H(r))
    do_ct = matmul(_H(q), q_ct) - z
    c_ct = z - matmul(_H(q), q_ct)
    c_ct = c_ct + _strictly_lower(do_ct - _H(do_ct))
    e_ct = q_ct + matmul(q, c_ct)
    return matmul(e_ct, _H(r_inv))


def _qr_jvp(t, out, x, mode="reduced"):
    _check_tall(x)
    q, r = out
    e = matmul(t, inv(r))
    c = matmul(_H(q), e)
    low = _strictly_lower(c)
    do = low - _H(low)
    return matmul(q, do) + e - matmul(q, c), matmul(c - do, r)


qr = primitive("qr", _qr_impl, params=("mode",), vjps=(_from_adjoint(_qr_vjp),), jvps=(_qr_jvp,),
                 multiple_results=True, batch=_batch_stack)


def _pinv_impl(x, rcond=None, hermitian=False):
    if rcond is None:
        return np.linalg.pinv(x, hermitian=hermitian)
    return np.linalg.pinv(x, rcond=rcond, hermitian=hermitian)


def _pinv_jvp(t, out, x, rcond=None, hermitian=False):
    a_p, a_ph = out, _H(out)
    left = _eye_like(out) - matmul(x, out)      # I - A A+ (rows of A)
    right = _eye_like(x) - matmul(out, x)       # I - A+ A (columns of A)
    return (-matmul(a_p, matmul(t, a_p)) + matmul(matmul(a_p, a_ph), matmul(_H(t), left))
            + matmul(right, matmul(_H(t), matmul(a_ph, a_p))))


def _pinv_vjp(ct, out, x, rcond=None, hermitian=False):
    a_p, a_ph = out, _H(out)
    left = _eye_like(out) - matmul(x, out)
    right = _eye_like(x) - matmul(out, x)
    return (-matmul(a_ph, matmul(ct, a_ph)) + matmul(left, matmul(_H(ct), matmul(a_p, a_ph)))
            + matmul(matmul(a_ph, a_p), matmul(_H(ct), right)))


pinv = primitive("pinv", _pinv_impl, params=("rcond", "hermitian"),
                   vjps=(_from_adjoint(_pinv_vjp),),
                   jvps=(_pinv_jvp,), batch=_batch_stack)


matrix_rank = nondiff("matrix_rank", np.linalg.matrix_rank, batch=_batch_stack)


def _pnorm_impl(x, p=2.0, axis=None, keepdims=False):
    mag = np.abs(x)
    if p == 2:
        return np.sqrt(np.sum(mag * mag, axis=axis, keepdims=keepdims))
    if p == 1:
        return np.sum(mag, axis=axis, keepdims=keepdims)
    return np.sum(mag ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _pnorm_slope(out, x, p, axis, keepdims):
    """d norm / d x, and 0 where the norm is 0 (the zero subgradient, as PyTorch)."""
    out = out if keepdims else reshape(out, H.keepdims_shape(H.shape(x), axis))
    zero = equal(out, 0)
    safe = where(zero, 1, out)
    # x / |x|: for complex x it varies smoothly with x (a sign is piecewise constant only
    # for real x), which second derivatives must see
    unit = safe_div(x, absolute(x)) if H.dtype(x).kind == "c" else sign(x)
    if p == 2:
        slope = x / safe
    elif p == 1:
        slope = unit * ones_like(safe)
    else:
        slope = unit * absolute(x) ** (p - 1) / safe ** (p - 1)
    return where(zero, 0, slope)


def _pnorm_vjp(ct, out, x, p=2.0, axis=None, keepdims=False):
    return expand_reduced(ct, x, axis, keepdims) * _pnorm_slope(out, x, p, axis, keepdims)


def _pnorm_jvp(t, out, x, p=2.0, axis=None, keepdims=False):
    return real(sum(conj_if_complex(_pnorm_slope(out, x, p, axis, keepdims)) * t, axis=axis,
                        keepdims=keepdims))


vector_norm = primitive("vector_norm", _pnorm_impl, params=("p", "axis", "keepdims"),
                    vjps=(_from_adjoint(_pnorm_vjp),), jvps=(_pnorm_jvp,),
                    batch=B.batch_axis_param)



# --- discrete Fourier transforms --------------------------------------------------------
# n-dimensional, over resolved sizes `s` and axes (funcgrad.numpy.fft resolves NumPy's
# defaults and builds the 1-d and 2-d transforms on these four).
# The normalisation whose transform is the transpose of one in `norm` (hfft, ihfft read it too)
DUAL_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _fit_axes(x, shape, axes):
    """`x` cut or zero-padded along `axes` to the sizes in `shape` (a full shape)."""
    for ax in axes:
        have, want = H.shape(x)[ax], shape[ax]
        if have > want:
            x = subscript(x, (slice(None),) * ax + (slice(0, want),))
        elif have < want:
            pad_shape = list(H.shape(x))
            pad_shape[ax] = want - have
            x = concatenate(x, np.zeros(pad_shape, dtype=H.dtype(x)), axis=ax)
    return x


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
    return _fit_axes(fftn(ct, s=s, axes=axes, norm=norm), H.shape(x), axes)


def _ifftn_t(ct, out, x, s, axes, norm):
    return _fit_axes(ifftn(ct, s=s, axes=axes, norm=norm), H.shape(x), axes)


def _rfftn_t(ct, out, x, s, axes, norm):
    # rfftn is fftn of a real signal, keeping the first half of the last axis's bins: its
    # transpose zero-fills the dropped bins, applies fftn, and keeps the real part.
    full = list(H.shape(ct))
    full[axes[-1]] = s[-1]
    spectrum = _fit_axes(ct, tuple(full), axes[-1:])
    return _fit_axes(real(fftn(spectrum, s=s, axes=axes, norm=norm)), H.shape(x), axes)


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
    half = conjugate(rfftn(ct, s=s, axes=axes, norm=DUAL_NORM[norm]))
    half = half * _hermitian_weights(s[-1], H.ndim(half), axes[-1], np.real(np.zeros((), H.dtype(ct))).dtype)
    return _fit_axes(half, H.shape(x), axes)


fftn = linear("fftn", _fftn_impl, _fftn_t, params=("s", "axes", "norm"), batch=_batch_fft)
ifftn = linear("ifftn", _ifftn_impl, _ifftn_t, params=("s", "axes", "norm"), batch=_batch_fft)
rfftn = linear("rfftn", _rfftn_impl, _rfftn_t, params=("s", "axes", "norm"), batch=_batch_fft)
irfftn = linear("irfftn", _irfftn_impl, _irfftn_t, params=("s", "axes", "norm"), batch=_batch_fft)

