"""funcgrad.numpy's table: every differentiable NumPy function, declared once with its rules.

Reading guide. Names without a leading underscore are engine-level primitives: they return
raw NumPy values when no transform is running, which keeps first-order rules at NumPy speed.
`ns.public(...)` / `@ns.export` make the user-facing functions that always return `Array`s.
Rules are written with these same primitives and operators, so they are differentiable too.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .._src import batching as B
from .._src.core import Array, FuncgradError, Primitive, Tracer, engine, raw, wrap
from .._src.declare import Namespace, elementwise, linear, nondiff, primitive

ns = Namespace("funcgrad.numpy")
public = ns.public
export = ns.export


def _ndim(x):
    return len(x.shape) if hasattr(x, "shape") else np.ndim(x)


def _shape(x):
    return x.shape if hasattr(x, "shape") else np.shape(x)


def _dtype(x):
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


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
    return y * power(x, y - 1)


def _pow_dy(out, x, y):
    # log(x) is -inf at x == 0, where x**y is 0 for y > 0: define the product as 0 there.
    safe = where(equal(x, 0), 1, x)
    return where(equal(x, 0), 0, out * log(safe))


power = elementwise("power", np.power, _pow_dx, _pow_dy)


def _mod_dy(out, x, y):
    return -floor_divide(x, y)


remainder = elementwise("remainder", np.remainder, lambda out, x, y: _ones_like(out), _mod_dy)
floor_divide = nondiff("floor_divide", np.floor_divide, nargs=2)


def _ones_like(x):
    return ones_like_p(x)


def _choose(mask_win, mask_tie, like):
    """1 where an argument wins, 1/2 where it ties (both halves of a tie share the slope)."""
    return astype(mask_win, _dtype(like)) + 0.5 * astype(mask_tie, _dtype(like))


maximum = elementwise("maximum", np.maximum,
                      lambda out, x, y: _choose(greater(x, y), equal(x, y), out),
                      lambda out, x, y: _choose(less(x, y), equal(x, y), out))
minimum = elementwise("minimum", np.minimum,
                      lambda out, x, y: _choose(less(x, y), equal(x, y), out),
                      lambda out, x, y: _choose(greater(x, y), equal(x, y), out))


def _clip_impl(x, lo, hi):
    return np.clip(x, lo, hi)


# Inside [lo, hi], boundaries included, the slope goes to x (PyTorch's clamp convention).
clip_p = elementwise(
    "clip", _clip_impl,
    lambda out, x, lo, hi: astype(logical_and(_ge_or_none(x, lo), _le_or_none(x, hi)), _dtype(out)),
    lambda out, x, lo, hi: astype(less(x, lo), _dtype(out)),
    lambda out, x, lo, hi: astype(greater(x, hi), _dtype(out)))


def _ge_or_none(x, lo):
    return True if lo is None else greater_equal(x, lo)


def _le_or_none(x, hi):
    return True if hi is None else less_equal(x, hi)


def _where_impl(cond, x, y):
    return np.where(cond, x, y)


where_p = primitive(
    "where", _where_impl, nargs=3, batch=B.batch_elementwise, linear=False,
    vjps=(None, lambda ct, out, c, x, y: where_p(c, ct, 0), lambda ct, out, c, x, y: where_p(c, 0, ct)),
    jvps=(None, lambda t, out, c, x, y: where_p(c, t, 0), lambda t, out, c, x, y: where_p(c, 0, t)))


def where(cond, x=None, y=None):
    if x is None and y is None:
        return nonzero(cond)
    return where_p(cond, x, y)


# --- elementwise math: f(x) with its derivative f'(x) --------------------------------------
exp = elementwise("exp", np.exp, lambda out, x: out)
exp2 = elementwise("exp2", np.exp2, lambda out, x: out * np.log(2.0))
expm1 = elementwise("expm1", np.expm1, lambda out, x: out + 1)
log = elementwise("log", np.log, lambda out, x: 1 / x)
log2 = elementwise("log2", np.log2, lambda out, x: 1 / (x * np.log(2.0)))
log10 = elementwise("log10", np.log10, lambda out, x: 1 / (x * np.log(10.0)))
log1p = elementwise("log1p", np.log1p, lambda out, x: 1 / (x + 1))
sqrt = elementwise("sqrt", np.sqrt, lambda out, x: 0.5 / out)
cbrt = elementwise("cbrt", np.cbrt, lambda out, x: 1 / (3 * out * out))
square = elementwise("square", np.square, lambda out, x: 2 * x)
reciprocal = elementwise("reciprocal", np.reciprocal, lambda out, x: -out * out)
absolute = elementwise("absolute", np.absolute, lambda out, x: sign(x))  # slope 0 at 0
sin = elementwise("sin", np.sin, lambda out, x: cos(x))
cos = elementwise("cos", np.cos, lambda out, x: -sin(x))
tan = elementwise("tan", np.tan, lambda out, x: 1 + out * out)
arcsin = elementwise("arcsin", np.arcsin, lambda out, x: 1 / sqrt(1 - x * x))
arccos = elementwise("arccos", np.arccos, lambda out, x: -1 / sqrt(1 - x * x))
arctan = elementwise("arctan", np.arctan, lambda out, x: 1 / (1 + x * x))
sinh = elementwise("sinh", np.sinh, lambda out, x: cosh(x))
cosh = elementwise("cosh", np.cosh, lambda out, x: sinh(x))
tanh = elementwise("tanh", np.tanh, lambda out, x: 1 - out * out)
arcsinh = elementwise("arcsinh", np.arcsinh, lambda out, x: 1 / sqrt(x * x + 1))
arccosh = elementwise("arccosh", np.arccosh, lambda out, x: 1 / sqrt(x * x - 1))
arctanh = elementwise("arctanh", np.arctanh, lambda out, x: 1 / (1 - x * x))
deg2rad = linear("deg2rad", np.deg2rad, lambda ct, out, x: ct * (np.pi / 180),
                 batch=B.batch_elementwise)
rad2deg = linear("rad2deg", np.rad2deg, lambda ct, out, x: ct * (180 / np.pi),
                 batch=B.batch_elementwise)

for _p in (add, subtract, negative, positive, multiply, divide, power, remainder, maximum,
           minimum, exp, exp2, expm1, log, log2, log10, log1p, sqrt, cbrt, square, reciprocal,
           absolute, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh,
           arccosh, arctanh, deg2rad, rad2deg, floor_divide):
    public(_p, numpy=getattr(np, _p.name))
public(divide, name="true_divide", numpy=np.true_divide)
public(absolute, name="abs")
public(remainder, name="mod", numpy=np.mod)
public(power, name="pow")
public(where_p, name="_where")
export(where, numpy=np.where)


@export(numpy=np.clip)
def clip(a, a_min=None, a_max=None):
    """Differentiable ``numpy.clip``; inside ``[a_min, a_max]`` (ends included) the slope is 1."""
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min, a_max or both (both are None)")
    return wrap(clip_p(a, a_min, a_max))


# --- non-differentiable functions: pass through, carry no derivative ----------------------
_NONDIFF_UFUNCS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                   "logical_and", "logical_or", "logical_xor", "logical_not", "isnan",
                   "isfinite", "isinf", "floor", "ceil", "trunc", "rint", "sign", "signbit",
                   "isneginf", "isposinf")
for _name in _NONDIFF_UFUNCS:
    _f = getattr(np, _name)
    _nargs = 2 if isinstance(_f, np.ufunc) and _f.nin == 2 else 1
    globals()[_name] = public(nondiff(_name, _f, nargs=_nargs), numpy=_f)
    globals()[_name] = globals()[_name].primitive
equal = globals()["equal"]
not_equal = globals()["not_equal"]
less = globals()["less"]
less_equal = globals()["less_equal"]
greater = globals()["greater"]
greater_equal = globals()["greater_equal"]
logical_and = globals()["logical_and"]
sign = globals()["sign"]
floor = globals()["floor"]


def _round_impl(x, decimals=0):
    return np.round(x, decimals)


public(nondiff("round", _round_impl, params=("decimals",)), numpy=(np.round, np.around))
public(nondiff("around", _round_impl, params=("decimals",)))
for _name in ("argmax", "argmin"):
    _f = getattr(np, _name)
    public(nondiff(_name, _f, params=("axis", "out", "keepdims"),
                   batch=B.batch_flat_axis), numpy=_f)
for _name in ("all", "any", "count_nonzero", "argsort", "nonzero", "argwhere", "flatnonzero",
              "isclose", "allclose", "array_equal", "shape", "ndim", "size", "searchsorted",
              "histogram", "bincount", "unique", "digitize", "iscomplexobj", "isrealobj",
              "isscalar", "result_type"):
    _f = getattr(np, _name)
    _two = _name in ("isclose", "allclose", "array_equal", "searchsorted", "digitize")
    _p = nondiff(_name, _f, nargs=2 if _two else 1, batch=None)
    _p.params = ()
    public(_p, numpy=_f)
nonzero = ns.exports["nonzero"]
# vmap rules of the functions above. nonzero, argwhere, flatnonzero, unique, histogram and
# bincount keep the loop: their output shape depends on the data.
for _name, _rule in (("all", B.batch_axis_param), ("any", B.batch_axis_param),
                     ("count_nonzero", B.batch_axis_param), ("argsort", B.batch_flat_axis),
                     ("isclose", B.batch_elementwise), ("allclose", B.batch_all_axes),
                     ("array_equal", B.batch_all_axes), ("shape", B.batch_query),
                     ("ndim", B.batch_query), ("size", B.batch_query),
                     ("iscomplexobj", B.batch_query), ("isrealobj", B.batch_query),
                     ("isscalar", B.batch_query), ("result_type", B.batch_query),
                     ("digitize", B.batch_elementwise)):
    ns.exports[_name].primitive.batch = _rule
for _name in ("nonzero", "argwhere", "flatnonzero", "unique", "histogram", "bincount",
              "searchsorted"):
    ns.exports[_name].primitive.batch = B.batch_by_loop


def _plain_answer(name):
    """Questions about arrays (allclose, shape...) answer with plain Python values, as
    NumPy's do; under a transform they stay primitives (so vmap can batch them)."""
    prim = ns.exports[name].primitive
    np_fn = prim.impl

    def ask(*args, **kwargs):
        if builtins.any(isinstance(a, Tracer) for a in args):
            return wrap(prim(*args, **kwargs))
        return np_fn(*[raw(a) for a in args], **kwargs)
    ask.__name__ = ask.__qualname__ = name
    ask.__doc__ = f"``numpy.{name}``, answered with a plain Python value (no derivative)."
    ask.primitive = prim
    return export(ask, numpy=np_fn, kind="non-differentiable")


for _name in ("allclose", "array_equal", "shape", "ndim", "size", "iscomplexobj",
              "isrealobj", "isscalar", "result_type"):
    _plain_answer(_name)


# --- dtype casts ---------------------------------------------------------------------------
def _astype_impl(x, dtype):
    return np.asarray(x).astype(dtype) if not isinstance(x, np.ndarray) else x.astype(dtype)


def _astype_t(ct, out, x, dtype):
    return astype(ct, _dtype(x))


astype = linear("astype", _astype_impl, _astype_t, params=("dtype",), batch=B.batch_elementwise)


@export
def astype_public(x, dtype):
    """``x.astype(dtype)``; a cast to an integer or bool dtype carries no derivative."""
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.inexact):
        x = _stop(x)
    return wrap(astype(x, dtype))


ns.exports["astype"] = ns.exports.pop("astype_public")


def _stop(x):
    from .._src.transforms import _stop_gradient
    return _stop_gradient(x)


# --- array creation (constants) ------------------------------------------------------------
def _float_default(dtype):
    return dtype


@export(numpy=(np.array,))
def array(object, dtype=None, copy=True, ndmin=0):
    """An `Array` from nested lists, NumPy arrays or Arrays; traced entries stay traced."""
    if isinstance(object, Tracer):
        out = object if dtype is None else astype_public(object, dtype)
        return out
    if isinstance(object, (list, tuple)) and _contains_tracer(object):
        return wrap(stack_p(*[array(o, dtype) for o in object], axis=0))
    value = np.array(raw(object) if isinstance(object, Array) else object, dtype=dtype,
                     copy=copy, ndmin=ndmin)
    return Array(value)


def _contains_tracer(seq):
    return builtins.any(isinstance(o, Tracer) or (isinstance(o, (list, tuple)) and _contains_tracer(o))
                        for o in seq)


@export(numpy=np.asarray)
def asarray(a, dtype=None):
    """Like `array`, without a copy where none is needed."""
    if isinstance(a, Array) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return array(a, dtype=dtype, copy=None)


def _constant(np_fn, name):
    def make(*args, **kwargs):
        return Array(np_fn(*[raw(a) for a in args], **kwargs))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}`` as a constant `Array` (no derivative flows into it)."
    return export(make, numpy=np_fn, kind="constant")


for _name in ("zeros", "ones", "full", "empty", "arange", "linspace", "logspace", "eye",
              "identity", "tri", "indices"):
    _constant(getattr(np, _name), _name)


def _like(np_fn, name):
    def make(a, *args, dtype=None, **kwargs):
        return Array(np_fn(np.empty(_shape(a), dtype=_dtype(a) if dtype is None else dtype),
                           *[raw(x) for x in args], **kwargs))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}``: a constant `Array` shaped like `a`."
    return export(make, numpy=np_fn, kind="constant")


for _name in ("zeros_like", "ones_like", "full_like", "empty_like"):
    _like(getattr(np, _name), _name)


def _zeros_like_impl(x):
    return np.zeros(np.shape(x), dtype=_dtype(x))


def _ones_like_impl(x):
    return np.ones(np.shape(x), dtype=_dtype(x))


zeros_like_p = nondiff("zeros_like", _zeros_like_impl)
ones_like_p = nondiff("ones_like", _ones_like_impl)


# --- reductions ----------------------------------------------------------------------------
def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(a % ndim for a in axis) if ndim else ()
    return (axis % ndim,) if ndim else ()


def _keepdims_shape(shape, axis):
    axes = _axes(axis, len(shape))
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _expand_reduced(ct, x, axis, keepdims):
    """A reduction's cotangent broadcast back over the axes it reduced."""
    if not keepdims:
        ct = reshape(ct, _keepdims_shape(_shape(x), axis))
    return broadcast_to(ct, _shape(x))


def _sum_impl(x, axis=None, keepdims=False):
    return np.sum(x, axis=axis, keepdims=keepdims)


def _mean_impl(x, axis=None, keepdims=False):
    return np.mean(x, axis=axis, keepdims=keepdims)


def _count(x, axis):
    shape = _shape(x)
    return int(np.prod([shape[a] for a in _axes(axis, len(shape))], dtype=np.int64))


sum_p = linear("sum", _sum_impl,
               lambda ct, out, x, axis=None, keepdims=False: _expand_reduced(ct, x, axis, keepdims),
               params=("axis", "keepdims"), batch=B.batch_axis_param)
mean_p = linear("mean", _mean_impl,
                lambda ct, out, x, axis=None, keepdims=False:
                _expand_reduced(ct, x, axis, keepdims) / _count(x, axis),
                params=("axis", "keepdims"), batch=B.batch_axis_param)


def _chooser_vjp(ct, out, x, axis=None, keepdims=False):
    """max/min: the slope goes to the elements equal to the extremum, shared among ties."""
    out_kd = out if keepdims else reshape(out, _keepdims_shape(_shape(x), axis))
    hits = astype(equal(x, out_kd), _dtype(x))
    count = sum_p(hits, axis=axis, keepdims=True)
    return _expand_reduced(ct, x, axis, keepdims) * hits / count


def _chooser_jvp(t, out, x, axis=None, keepdims=False):
    out_kd = out if keepdims else reshape(out, _keepdims_shape(_shape(x), axis))
    hits = astype(equal(x, out_kd), _dtype(x))
    return sum_p(t * hits, axis=axis, keepdims=keepdims) / sum_p(hits, axis=axis, keepdims=keepdims)


def _max_impl(x, axis=None, keepdims=False):
    return np.max(x, axis=axis, keepdims=keepdims)


def _min_impl(x, axis=None, keepdims=False):
    return np.min(x, axis=axis, keepdims=keepdims)


max_p = primitive("max", _max_impl, params=("axis", "keepdims"), vjps=(_chooser_vjp,),
                  jvps=(_chooser_jvp,), batch=B.batch_axis_param)
min_p = primitive("min", _min_impl, params=("axis", "keepdims"), vjps=(_chooser_vjp,),
                  jvps=(_chooser_jvp,), batch=B.batch_axis_param)


def _prod_impl(x, axis=None, keepdims=False):
    return np.prod(x, axis=axis, keepdims=keepdims)


def _prod_others(x, axis):
    """For each element, the product of the others in its reduction group; exact with zeros."""
    shape = _shape(x)
    axes = _axes(axis, len(shape))
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    moved = transpose(x, rest + axes)
    n = _count(x, axis)
    flat = reshape(moved, tuple(shape[i] for i in rest) + (n, 1))
    eye = np.eye(n, dtype=bool)
    grid = where_p(eye, 1, broadcast_to(swapaxes_p(flat, -1, -2), tuple(shape[i] for i in rest) + (n, n)))
    others = prod_p(grid, axis=-1)
    others = reshape(others, tuple(shape[i] for i in rest) + tuple(shape[i] for i in axes))
    return transpose(others, tuple(np.argsort(rest + axes)))


def _prod_vjp(ct, out, x, axis=None, keepdims=False):
    if bool(any_p(equal(x, 0))):
        return _expand_reduced(ct, x, axis, keepdims) * _prod_others(x, axis)
    out_kd = out if keepdims else reshape(out, _keepdims_shape(_shape(x), axis))
    return _expand_reduced(ct, x, axis, keepdims) * out_kd / x


def _prod_jvp(t, out, x, axis=None, keepdims=False):
    ones = _ones_like(out)
    return sum_p(_prod_vjp(ones, out, x, axis, keepdims) * t, axis=axis, keepdims=keepdims)


prod_p = primitive("prod", _prod_impl, params=("axis", "keepdims"), vjps=(_prod_vjp,),
                   jvps=(_prod_jvp,), batch=B.batch_axis_param)
any_p = nondiff("any", np.any, batch=B.batch_axis_param)


def _reduction(prim, np_fn, name):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, **unsupported):
        if out is not None or unsupported:
            raise TypeError(f"funcgrad.numpy.{name}: the out= and where= arguments are not "
                            "supported (arrays are immutable); use the returned value")
        if isinstance(axis, list):
            axis = tuple(axis)
        if dtype is not None:
            a = astype_public(a, dtype)
        return wrap(prim(a, axis=axis, keepdims=keepdims))
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"Differentiable ``numpy.{name}`` with ``axis`` and ``keepdims``."
    reduce.primitive = prim
    return export(reduce, numpy=np_fn)


sum = _reduction(sum_p, np.sum, "sum")
mean = _reduction(mean_p, np.mean, "mean")
prod = _reduction(prod_p, np.prod, "prod")


def _chooser(prim, np_fns, name):
    def reduce(a, axis=None, out=None, keepdims=False, **unsupported):
        if out is not None or unsupported:
            raise TypeError(f"funcgrad.numpy.{name}: out=, initial= and where= are not supported")
        if isinstance(axis, list):
            axis = tuple(axis)
        return wrap(prim(a, axis=axis, keepdims=keepdims))
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"Differentiable ``numpy.{name}``; where several elements tie for the "
                      "extremum, the slope is shared equally among them.")
    reduce.primitive = prim
    return export(reduce, numpy=np_fns)


max = _chooser(max_p, (np.max, np.amax), "max")
min = _chooser(min_p, (np.min, np.amin), "min")
ns.exports["amax"] = max
ns.exports["amin"] = min


@export(numpy=np.var)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Differentiable ``numpy.var`` (``ddof`` as in NumPy)."""
    if out is not None:
        raise TypeError("funcgrad.numpy.var: out= is not supported")
    if isinstance(axis, list):
        axis = tuple(axis)
    if dtype is not None:
        a = astype_public(a, dtype)
    centered = a - mean_p(a, axis=axis, keepdims=True)
    n = _count(a, axis)
    return wrap(sum_p(centered * centered, axis=axis, keepdims=keepdims) / builtins.max(n - ddof, 0))


@export(numpy=np.std)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Differentiable ``numpy.std``; its slope is undefined (NaN) where the spread is zero."""
    return wrap(sqrt(var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)))


# --- shape functions -----------------------------------------------------------------------
def _reshape_impl(x, shape):
    return np.reshape(x, shape)


reshape = linear("reshape", _reshape_impl, lambda ct, out, x, shape: reshape(ct, _shape(x)),
                 params=("shape",), batch=None)


def _batch_reshape(prim, vals, dims, shape):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    return reshape(x, (x.shape[0],) + tuple(_resolve_shape(shape, x.shape[1:]))), 0


def _resolve_shape(shape, old):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        total = int(np.prod(old, dtype=np.int64))
        shape = tuple(total // known if s == -1 else s for s in shape)
    return shape


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
    return np.broadcast_to(x, shape)


broadcast_to = linear("broadcast_to", _broadcast_to_impl,
                      lambda ct, out, x, shape: sum_to_shape(ct, _shape(x)),
                      params=("shape",), batch=None)


def _batch_broadcast_to(prim, vals, dims, shape):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    shape = tuple(shape)
    x = reshape(x, (x.shape[0],) + (1,) * (len(shape) - (x.ndim - 1)) + tuple(x.shape[1:]))
    return broadcast_to(x, (x.shape[0],) + shape), 0


broadcast_to.batch = _batch_broadcast_to


def _sum_to_shape_impl(x, shape):
    """Sum away the dimensions that broadcasting added or stretched."""
    shape = tuple(shape)
    lead = np.ndim(x) - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and np.shape(x)[i + lead] != 1)
    out = np.sum(x, axis=axes, keepdims=True) if axes else x
    if lead:
        out = np.reshape(out, shape)
    return out


sum_to_shape = linear("sum_to_shape", _sum_to_shape_impl,
                      lambda ct, out, x, shape: broadcast_to(ct, _shape(x)),
                      params=("shape",), batch=B.batch_by_loop)


def _batch_sum_to_shape(prim, vals, dims, shape):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    example = tuple(_shape(x))[1:]
    shape = tuple(shape)
    lead = len(example) - len(shape)
    axes = tuple(range(1, lead + 1)) + tuple(i + lead + 1 for i, s in enumerate(shape)
                                             if s == 1 and example[i + lead] != 1)
    if not axes:
        return x, 0
    return reshape(sum_p(x, axis=axes, keepdims=True), (_shape(x)[0],) + shape), 0


sum_to_shape.batch = _batch_sum_to_shape


def _moveaxis_impl(x, source, destination):
    return np.moveaxis(x, source, destination)


moveaxis_p = linear("moveaxis", _moveaxis_impl,
                    lambda ct, out, x, source, destination: moveaxis_p(ct, destination, source),
                    params=("source", "destination"), batch=None)


def _batch_moveaxis(prim, vals, dims, source, destination):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    n = x.ndim - 1
    src = [s % n + 1 for s in np.atleast_1d(source)]
    dst = [s % n + 1 for s in np.atleast_1d(destination)]
    return moveaxis_p(x, src, dst), 0


moveaxis_p.batch = _batch_moveaxis


def _swapaxes_impl(x, axis1, axis2):
    return np.swapaxes(x, axis1, axis2)


swapaxes_p = linear("swapaxes", _swapaxes_impl,
                    lambda ct, out, x, axis1, axis2: swapaxes_p(ct, axis1, axis2),
                    params=("axis1", "axis2"), batch=None)


def _batch_swapaxes(prim, vals, dims, axis1, axis2):
    (x,), (d,) = vals, dims
    x = B.move_to_front(x, d)
    n = x.ndim - 1
    return swapaxes_p(x, axis1 % n + 1, axis2 % n + 1), 0


swapaxes_p.batch = _batch_swapaxes


def _concat_impl(*xs, axis=0):
    return np.concatenate(xs, axis=axis)


def _concat_t(k):
    def transpose_k(ct, out, *xs, axis=0):
        ax = axis % _ndim(out)
        start = builtins.sum(_shape(x)[ax] for x in xs[:k])
        index = (slice(None),) * ax + (slice(start, start + _shape(xs[k])[ax]),)
        return getitem(ct, index)
    return transpose_k


class _ConcatRules(tuple):
    """Concatenation is variadic: its k-th transpose is made on demand."""

    def __getitem__(self, k):
        return _concat_t(k)


concatenate_p = linear("concatenate", _concat_impl, nargs=-1, batch=None)
concatenate_p.vjps = _ConcatRules()


def _batch_concat(prim, vals, dims, axis=0):
    n = B._size(vals, dims)
    moved = []
    for v, d in zip(vals, dims):
        if d is None:
            v = broadcast_to(reshape(v, (1,) + tuple(_shape(v))), (n,) + tuple(_shape(v)))
        else:
            v = B.move_to_front(v, d)
        moved.append(v)
    ndim = moved[0].ndim - 1
    return concatenate_p(*moved, axis=axis % ndim + 1), 0


concatenate_p.batch = _batch_concat


def _stack_impl(*xs, axis=0):
    return np.stack(xs, axis=axis)


def _expand(x, axis):
    shape = list(_shape(x))
    axis = axis % (len(shape) + 1)
    shape.insert(axis, 1)
    return reshape(x, tuple(shape))


def stack_p(*xs, axis=0):
    return concatenate_p(*[_expand(x, axis) for x in xs], axis=axis)


@export(numpy=np.concatenate)
def concatenate(arrays, axis=0):
    """Differentiable ``numpy.concatenate``."""
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    return wrap(concatenate_p(*arrays, axis=axis))


@export(numpy=np.stack)
def stack(arrays, axis=0):
    """Differentiable ``numpy.stack``."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack: need at least one array")
    shapes = {tuple(_shape(raw(a))) for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    return wrap(stack_p(*arrays, axis=axis))


@export(numpy=(np.hstack,))
def hstack(arrays):
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1)


@export(numpy=(np.vstack,))
def vstack(arrays):
    return concatenate([atleast_2d(a) for a in arrays], axis=0)


@export(numpy=np.reshape)
def reshape_public(a, shape=None, order="C", *, newshape=None):
    """Differentiable ``numpy.reshape`` (C order)."""
    if order != "C":
        raise NotImplementedError("funcgrad.numpy.reshape supports order='C' only")
    shape = newshape if shape is None else shape
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return wrap(reshape(a, _resolve_shape(shape, _shape(a))))


ns.exports["reshape"] = ns.exports.pop("reshape_public")


@export(numpy=np.transpose)
def transpose_public(a, axes=None):
    """Differentiable ``numpy.transpose``."""
    return wrap(transpose(a, None if axes is None else tuple(axes)))


ns.exports["transpose"] = ns.exports.pop("transpose_public")


@export(numpy=np.swapaxes)
def swapaxes(a, axis1, axis2):
    """Differentiable ``numpy.swapaxes``."""
    return wrap(swapaxes_p(a, axis1, axis2))


@export(numpy=np.moveaxis)
def moveaxis(a, source, destination):
    """Differentiable ``numpy.moveaxis``."""
    return wrap(moveaxis_p(a, source, destination))


@export(numpy=np.expand_dims)
def expand_dims(a, axis):
    """Differentiable ``numpy.expand_dims``."""
    shape = list(_shape(a))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = len(shape) + len(axes)
    for ax in sorted(x % n for x in axes):
        shape.insert(ax, 1)
    return wrap(reshape(a, tuple(shape)))


@export(numpy=np.squeeze)
def squeeze(a, axis=None):
    """Differentiable ``numpy.squeeze``."""
    shape = _shape(a)
    axes = _axes(axis, len(shape)) if axis is not None else tuple(i for i, s in enumerate(shape) if s == 1)
    for ax in axes:
        if shape[ax] != 1:
            raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size "
                             f"not equal to one (axis {ax} has size {shape[ax]})")
    return wrap(reshape(a, tuple(s for i, s in enumerate(shape) if i not in axes)))


@export(numpy=np.ravel)
def ravel(a, order="C"):
    """Differentiable ``numpy.ravel``."""
    return wrap(reshape(a, (-1,) if _shape(a) != () else (1,)))


@export(numpy=np.broadcast_to)
def broadcast_to_public(array, shape):
    """Differentiable ``numpy.broadcast_to``."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return wrap(broadcast_to(array, shape))


ns.exports["broadcast_to"] = ns.exports.pop("broadcast_to_public")


@export(numpy=np.atleast_1d)
def atleast_1d(a):
    return wrap(reshape(a, (1,))) if _ndim(a) == 0 else wrap(a)


@export(numpy=np.atleast_2d)
def atleast_2d(a):
    n = _ndim(a)
    return wrap(reshape(a, (1,) * (2 - n) + tuple(_shape(a)))) if n < 2 else wrap(a)


# --- products ------------------------------------------------------------------------------
def _matmul_vjp_x(ct, out, x, y):
    xd, yd = _ndim(x), _ndim(y)
    if yd == 1:
        ct = _expand(ct, -1)
        y = reshape(y, (_shape(y)[0], 1))
    if xd == 1:
        ct = _expand(ct, -2)
    g = matmul(ct, swapaxes_p(y, -1, -2))
    return reshape(g, _shape(g)[:-2] + (_shape(g)[-1],)) if xd == 1 else g


def _matmul_vjp_y(ct, out, x, y):
    xd, yd = _ndim(x), _ndim(y)
    if xd == 1:
        ct = _expand(ct, -2)
        x = reshape(x, (1, _shape(x)[0]))
    if yd == 1:
        ct = _expand(ct, -1)
    g = matmul(swapaxes_p(x, -1, -2), ct)
    return reshape(g, _shape(g)[:-1]) if yd == 1 else g


def _batch_matmul(prim, vals, dims):
    """Batch axes to the front; vectors become matrices so the batch axis never meets the
    contracted axis; the batched operand gets size-1 axes so both stacks align."""
    (x, y), (dx, dy) = vals, dims
    xn = _ndim(x) - (dx is not None)
    yn = _ndim(y) - (dy is not None)
    if dx is not None:
        x = B.move_to_front(x, dx)
    if dy is not None:
        y = B.move_to_front(y, dy)
    if xn == 1:
        x = _expand(x, -2)
    if yn == 1:
        y = _expand(y, -1)
    lead = builtins.max(xn, 2, yn) - 2
    if dx is not None and builtins.max(xn, 2) - 2 < lead:
        shape = _shape(x)
        x = reshape(x, (shape[0],) + (1,) * (lead - (len(shape) - 3)) + tuple(shape[1:]))
    if dy is not None and builtins.max(yn, 2) - 2 < lead:
        shape = _shape(y)
        y = reshape(y, (shape[0],) + (1,) * (lead - (len(shape) - 3)) + tuple(shape[1:]))
    out = matmul(x, y)
    shape = tuple(_shape(out))
    if xn == 1 and yn == 1:
        shape = shape[:-2]
    elif xn == 1:
        shape = shape[:-2] + shape[-1:]
    elif yn == 1:
        shape = shape[:-1]
    return (reshape(out, shape) if shape != tuple(_shape(out)) else out), 0


matmul = primitive("matmul", np.matmul, nargs=2, vjps=(_matmul_vjp_x, _matmul_vjp_y),
                   jvps=(lambda t, out, x, y: matmul(t, y), lambda t, out, x, y: matmul(x, t)),
                   batch=_batch_matmul)
public(matmul, numpy=np.matmul)


@export(numpy=np.dot)
def dot(a, b):
    """Differentiable ``numpy.dot`` for scalars, vectors and matrices (matmul otherwise)."""
    if _ndim(a) == 0 or _ndim(b) == 0:
        return wrap(multiply(a, b))
    if _ndim(b) > 2:
        raise NotImplementedError("funcgrad.numpy.dot with a >2-d second argument is not "
                                  "supported; use matmul, tensordot or einsum")
    return wrap(matmul(a, b))


@export(numpy=np.outer)
def outer(a, b):
    """Differentiable ``numpy.outer``."""
    return wrap(multiply(reshape(a, (-1, 1)), reshape(b, (1, -1))))


@export(numpy=np.vdot)
def vdot(a, b):
    """Differentiable ``numpy.vdot`` (real arrays)."""
    return wrap(sum_p(multiply(reshape(a, (-1,)), reshape(b, (-1,)))))


@export(numpy=np.inner)
def inner(a, b):
    """Differentiable ``numpy.inner`` (1-d and n-d)."""
    if _ndim(a) == 0 or _ndim(b) == 0:
        return wrap(multiply(a, b))
    return wrap(matmul(a, swapaxes_p(b, -1, -2)) if _ndim(b) > 1 else matmul(a, b))


# --- indexing ------------------------------------------------------------------------------
class _Slot:
    """Where an index array sits in an index template."""
    __slots__ = ()

    def __repr__(self):
        return "<array>"


_SLOT = _Slot()


def split_index(index):
    """An index as (static template, index arrays); arrays become primitive arguments so a
    batch trace can see them. Boolean masks become integer arrays here."""
    if not isinstance(index, tuple):
        index = (index,)
    template = []
    arrays = []
    for item in index:
        if isinstance(item, Tracer):
            if np.issubdtype(item.dtype, np.inexact):
                raise IndexError("an index must be integers or booleans, got a float array")
            template.append(_SLOT)
            arrays.append(item)
            continue
        if isinstance(item, Array):
            item = item._value
        if isinstance(item, (list, np.ndarray)) or (isinstance(item, np.generic) and item.dtype == bool):
            arr = np.asarray(item)
            if arr.dtype == bool:
                for nz in np.nonzero(arr):
                    template.append(_SLOT)
                    arrays.append(nz)
                continue
            if not np.issubdtype(arr.dtype, np.integer) and arr.size:
                raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                                 f"got {arr.dtype}")
            template.append(_SLOT)
            arrays.append(arr.astype(np.intp))
        elif isinstance(item, bool):
            template.append(item)
        elif item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice)):
            template.append(item)
        else:
            raise IndexError(f"funcgrad arrays cannot be indexed by a {type(item).__name__}; use "
                             "ints, slices, None, Ellipsis, integer arrays or boolean masks")
    return tuple(template), tuple(arrays)


def build_index(template, arrays):
    it = iter(arrays)
    return tuple(next(it) if t is _SLOT else t for t in template)


def _is_basic(template):
    return _SLOT not in template


def _getitem_impl(x, *arrays, template):
    return np.asarray(x)[build_index(template, arrays)]


def _index_add_impl(x, update, *arrays, template):
    out = np.array(x, copy=True)
    index = build_index(template, arrays)
    if _is_basic(template):
        out[index] += update
    else:
        np.add.at(out, index, update)
    return out


def _index_set_impl(x, update, *arrays, template):
    out = np.array(x, copy=True)
    out[build_index(template, arrays)] = update
    return out


getitem_p = linear(
    "getitem", _getitem_impl,
    lambda ct, out, x, *arrays, template: index_add_p(zeros_like_p(x), ct, *arrays, template=template),
    nargs=-1, batch=B.batch_by_loop)
index_add_p = linear(
    "index_add", _index_add_impl,
    lambda ct, out, x, u, *arrays, template: ct,
    lambda ct, out, x, u, *arrays, template: getitem_p(ct, *arrays, template=template),
    nargs=-1, batch=B.batch_by_loop)
index_set_p = linear(
    "index_set", _index_set_impl,
    lambda ct, out, x, u, *arrays, template: index_set_p(ct, 0, *arrays, template=template),
    lambda ct, out, x, u, *arrays, template: getitem_p(ct, *arrays, template=template),
    nargs=-1, batch=B.batch_by_loop)


class _VariadicRules(tuple):
    """Rules for the array arguments, then ``None`` for every index array after them."""

    def __new__(cls, *rules):
        return super().__new__(cls, rules)

    def __getitem__(self, k):
        return tuple.__getitem__(self, k) if k < len(self) else None


getitem_p.vjps = _VariadicRules(*getitem_p.vjps)
index_add_p.vjps = _VariadicRules(*index_add_p.vjps)
index_set_p.vjps = _VariadicRules(*index_set_p.vjps)


def _index_layout(template, arrays, adims, ndim):
    """Where numpy puts the advanced-index block of ``x[index]`` for an example of rank
    `ndim`: ``(p, block_ndim)``, the block's first result axis and its rank. NumPy moves
    the block to the front when advanced indices (arrays, and ints or bools beside them)
    are not next to each other; otherwise it stays where the first one stands."""
    if not arrays:
        return 0, 0
    block = builtins.max(_ndim(a) - (d is not None) for a, d in zip(arrays, adims))
    advanced = [isinstance(t, (_Slot, bool, int, np.integer)) for t in template]
    first = advanced.index(True)
    last = len(advanced) - 1 - advanced[::-1].index(True)
    if not all(advanced[first:last + 1]):
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
    ndim_ex = builtins.max([_ndim(a) - (d is not None) for a, d in zip(arrays, adims)] + [0])
    n = B._size(arrays, adims)
    aligned = []
    for a, d in zip(arrays, adims):
        if d is not None:
            a = B.move_to_front(a, d)
            shape = _shape(a)
            a = reshape(a, (shape[0],) + (1,) * (ndim_ex - (len(shape) - 1)) + tuple(shape[1:]))
        aligned.append(a)
    if not x_batched_front:
        return tuple(template), tuple(aligned), None
    arange = np.arange(n).reshape((n,) + (1,) * ndim_ex)
    return (_SLOT,) + tuple(template), (arange,) + tuple(aligned), "block"


def _contiguous(template):
    advanced = [isinstance(t, (_Slot, bool, int, np.integer)) for t in template]
    if True not in advanced:
        return True
    first = advanced.index(True)
    last = len(advanced) - 1 - advanced[::-1].index(True)
    return all(advanced[first:last + 1])


def _example_result_shape(x_shape, arrays, adims, template):
    """The shape of one example's ``x[index]``, from zero-filled stand-ins."""
    stand_ins = []
    for a, d in zip(arrays, adims):
        shape = tuple(_shape(a))
        if d is not None:
            shape = shape[:d] + shape[d + 1:]
        stand_ins.append(np.zeros(shape, dtype=np.intp))
    probe = np.broadcast_to(np.zeros((), dtype=np.int8), tuple(x_shape))
    return np.shape(probe[build_index(template, stand_ins)])


def _block_to_example(out, p, block):
    """A "block" layout (batch, advanced block, others) as (batch, example result)."""
    if p == 0 or block == 0:
        return out
    src = list(range(1, 1 + block))
    return moveaxis_p(out, src, [p + 1 + i for i in range(block)])


def _example_to_block(u, p, block):
    if p == 0 or block == 0:
        return u
    return moveaxis_p(u, [p + 1 + i for i in range(block)], list(range(1, 1 + block)))


def _batch_getitem(prim, vals, dims, template):
    x, dx = vals[0], dims[0]
    arrays, adims = vals[1:], dims[1:]
    x_ndim = _ndim(x) - (dx is not None)
    if dx is not None:
        x = B.move_to_front(x, dx)
    if all(d is None for d in adims):
        if dx is None:
            return getitem_p(x, *arrays, template=template), None
        p, block = _index_layout(template, arrays, adims, x_ndim)
        out = getitem_p(x, *arrays, template=(slice(None),) + tuple(template))
        return out, (0 if _contiguous(template) else block)
    p, block = _index_layout(template, arrays, adims, x_ndim)
    tmpl, arrs, layout = _batched_index(arrays, adims, template, dx is not None)
    out = getitem_p(x, *arrs, template=tmpl)
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
    x_shape = tuple(_shape(x))[1:]
    result = _example_result_shape(x_shape, arrays, adims, template)
    u = B.front_or_broadcast(u, du, n)
    u_shape = tuple(_shape(u))[1:]
    u = reshape(u, (n,) + (1,) * (len(result) - len(u_shape)) + u_shape)
    u = broadcast_to(u, (n,) + tuple(result))
    p, block = _index_layout(template, arrays, adims, len(x_shape))
    if all(d is None for d in adims):
        tmpl = (slice(None),) + tuple(template)
        if not _contiguous(template):  # numpy puts the block first, before the batch axis
            u = moveaxis_p(u, 0, block)
        return prim(x, u, *arrays, template=tmpl), 0
    tmpl, arrs, _ = _batched_index(arrays, adims, template, True)
    u = _example_to_block(u, p if _contiguous(template) else 0, block)
    return prim(x, u, *arrs, template=tmpl), 0


getitem_p.batch = _batch_getitem
index_add_p.batch = _batch_index_update
index_set_p.batch = _batch_index_update


def getitem(x, index):
    template, arrays = split_index(index)
    return getitem_p(x, *arrays, template=template)


def _no_duplicates(shape, template, arrays, what):
    if _is_basic(template):
        return
    probe = np.zeros(shape, dtype=np.int64)
    np.add.at(probe, build_index(template, [raw(a) for a in arrays]), 1)
    if probe.size and probe.max() > 1:
        raise NotImplementedError(
            f"x.at[...].{what}: the index hits some element more than once, and funcgrad "
            "only supports that for set and add; apply the updates one index at a time")


class _IndexUpdate:
    """``x.at[index]``: functional, differentiable updates (see `Array.at`)."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def get(self):
        return wrap(getitem(self.array, self.index))

    def set(self, values):
        template, arrays = split_index(self.index)
        return wrap(index_set_p(self.array, _broadcast_update(self, values), *arrays,
                                template=template))

    def add(self, values):
        template, arrays = split_index(self.index)
        return wrap(index_add_p(self.array, _broadcast_update(self, values), *arrays,
                                template=template))

    def _combine(self, values, combine, what):
        template, arrays = split_index(self.index)
        _no_duplicates(_shape(self.array), template, arrays, what)
        current = getitem_p(self.array, *arrays, template=template)
        return wrap(index_set_p(self.array, combine(current, values), *arrays, template=template))

    def multiply(self, values):
        return self._combine(values, multiply, "multiply")

    def divide(self, values):
        return self._combine(values, divide, "divide")

    def power(self, values):
        return self._combine(values, power, "power")

    def min(self, values):
        return self._combine(values, minimum, "min")

    def max(self, values):
        return self._combine(values, maximum, "max")


def _broadcast_update(upd, values):
    return values


class _At:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdate(self.array, index)


# --- engine registration -------------------------------------------------------------------
def _take0(x, b):
    return getitem_p(x, template=(b,))


engine.register(
    sum_to_shape=sum_to_shape, broadcast_to=broadcast_to, zeros_like=zeros_like_p,
    moveaxis=moveaxis_p, reshape=reshape, take0=_take0, add=add, multiply=multiply,
    astype=astype, expand_dims=lambda x, axis: _expand(x, axis),
    stack=lambda xs: stack_p(*xs, axis=0),
)
