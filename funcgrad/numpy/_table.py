"""funcgrad.numpy's table: every differentiable NumPy function, declared once with its rules.

Reading guide. Names without a leading underscore are engine-level primitives: they return
raw NumPy values when no transform is running, which keeps first-order rules at NumPy speed.
`ns.public(...)` / `@ns.export` make the user-facing functions that always return `Array`s.
Rules are written with these same primitives and operators, so they are differentiable too.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from .._src import batching as B
from .._src.core import Array, Primitive, Tracer, engine, raw, wrap
from .._src.declare import Namespace, elementwise, linear, nondiff, primitive
from ._examples import EXAMPLES
from ._typing import ArrayLike, Axis, DTypeLike, Shape

ns = Namespace("funcgrad.numpy", EXAMPLES.get("funcgrad.numpy"))
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
    vjps=(lambda ct, out, x, y: ct / _conj(y), lambda ct, out, x, y: -ct * _conj(out / y)),
    jvps=(lambda t, out, x, y: t / y, lambda t, out, x, y: -t * out / y))


def _pow_dx(out, x, y):
    # x**0 is constant: slope 0 everywhere, also at x == 0 where 0 * 0**-1 would be nan
    return where(equal(y, 0), 0, y * power(x, y - 1))


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


def where(cond: ArrayLike, x: ArrayLike | None = None,
          y: ArrayLike | None = None) -> Array | tuple[Array, ...]:
    """Differentiable ``numpy.where``: `x` where `cond` holds, else `y` (the slope follows the
    chosen side); with `cond` alone, the indices of its nonzero entries, as ``nonzero``."""
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
absolute = primitive("absolute", np.absolute, batch=B.batch_elementwise,  # slope 0 at 0
                     vjps=(lambda ct, out, x: _abs_vjp(ct, out, x),), jvps=(lambda t, out, x: _abs_jvp(t, out, x),))
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
def clip(a: ArrayLike, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.clip``; inside ``[a_min, a_max]`` (ends included) the slope is 1."""
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min, a_max or both (both are None)")
    return wrap(clip_p(a, a_min, a_max))


# --- non-differentiable functions: pass through, carry no derivative ----------------------
def _nondiff_ufunc(name: str) -> Primitive:
    """A NumPy ufunc whose result carries no derivative, exported under its own name."""
    ufunc = getattr(np, name)
    nargs = 2 if isinstance(ufunc, np.ufunc) and ufunc.nin == 2 else 1
    prim = nondiff(name, ufunc, nargs=nargs)
    public(prim, numpy=ufunc)
    return prim


equal = _nondiff_ufunc("equal")
not_equal = _nondiff_ufunc("not_equal")
less = _nondiff_ufunc("less")
less_equal = _nondiff_ufunc("less_equal")
greater = _nondiff_ufunc("greater")
greater_equal = _nondiff_ufunc("greater_equal")
logical_and = _nondiff_ufunc("logical_and")
sign = _nondiff_ufunc("sign")
floor = _nondiff_ufunc("floor")
for _name in ("logical_or", "logical_xor", "logical_not", "isnan", "isfinite", "isinf", "ceil",
              "trunc", "rint", "signbit", "isneginf", "isposinf"):
    _nondiff_ufunc(_name)


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
# vmap rules of the functions above. argwhere, flatnonzero, unique and bincount keep the
# loop (their output shape depends on the data); nonzero and histogram return tuples of such
# arrays and refuse vmap with an error that says so.
for _name, _rule in (("all", B.batch_axis_param), ("any", B.batch_axis_param),
                     ("count_nonzero", B.batch_axis_param), ("argsort", B.batch_flat_axis),
                     ("isclose", B.batch_elementwise), ("allclose", B.batch_all_axes),
                     ("array_equal", B.batch_all_axes), ("shape", B.batch_query),
                     ("ndim", B.batch_query), ("size", B.batch_query),
                     ("iscomplexobj", B.batch_query), ("isrealobj", B.batch_query),
                     ("isscalar", B.batch_query), ("result_type", B.batch_query),
                     ("digitize", B.batch_first_only), ("searchsorted", B.batch_values_second),
                     ("nonzero", B.batch_unsupported), ("histogram", B.batch_unsupported)):
    ns.exports[_name].primitive.batch = _rule
for _name in ("argwhere", "flatnonzero", "unique", "bincount"):
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
    if np.iscomplexobj(x) and np.dtype(dtype).kind != "c":
        x = np.real(x)  # a real-valued cast keeps the real part (and is real-linear)
    return np.asarray(x).astype(dtype) if not isinstance(x, np.ndarray) else x.astype(dtype)


def _astype_t(ct, out, x, dtype):
    return astype(ct, _dtype(x))


astype = linear("astype", _astype_impl, _astype_t, params=("dtype",), batch=B.batch_elementwise)


@export
def astype_public(x: ArrayLike, dtype: DTypeLike) -> Array:
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
@export(numpy=(np.array,))
def array(object: ArrayLike, dtype: DTypeLike | None = None, copy: bool = True,
          ndmin: int = 0) -> Array:
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
def asarray(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
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


for _name in ("zeros", "ones", "empty", "arange", "linspace", "logspace", "eye",
              "identity", "tri", "indices"):
    _constant(getattr(np, _name), _name)


def _like(np_fn, name):
    def make(a: ArrayLike, *args: ArrayLike, dtype: DTypeLike | None = None,
             **kwargs: Any) -> Array:
        return Array(np_fn(np.empty(_shape(a), dtype=_dtype(a) if dtype is None else dtype),
                           *[raw(x) for x in args], **kwargs))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}``: a constant `Array` shaped like `a`."
    return export(make, numpy=np_fn, kind="constant")


for _name in ("zeros_like", "ones_like", "empty_like"):
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


def _has_zero(x):
    """Whether `x` holds a zero, read off its concrete values (under vmap: in any example,
    so that one branch serves the whole batch; both branches are exact where they apply)."""
    return bool(np.any(_bottom(x) == 0))


def _prod_vjp(ct, out, x, axis=None, keepdims=False):
    if _has_zero(x):
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
    def reduce(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
               keepdims: bool = False, **unsupported: Any) -> Array:
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
    def reduce(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
               **unsupported: Any) -> Array:
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
def var(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
        ddof: float = 0, keepdims: bool = False) -> Array:
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
def std(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
        ddof: float = 0, keepdims: bool = False) -> Array:
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
def concatenate(arrays: Sequence[ArrayLike], axis: Axis = 0) -> Array:
    """Differentiable ``numpy.concatenate``."""
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    return wrap(concatenate_p(*arrays, axis=axis))


@export(numpy=np.stack)
def stack(arrays: Sequence[ArrayLike], axis: Axis = 0) -> Array:
    """Differentiable ``numpy.stack``."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack: need at least one array")
    shapes = {tuple(_shape(raw(a))) for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    return wrap(stack_p(*arrays, axis=axis))


@export(numpy=(np.hstack,))
def hstack(arrays: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.hstack``."""
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1)


@export(numpy=(np.vstack,))
def vstack(arrays: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.vstack``."""
    return concatenate([atleast_2d(a) for a in arrays], axis=0)


@export(numpy=np.reshape)
def reshape_public(a: ArrayLike, shape: Shape | None = None, order: str = "C", *,
                   newshape: Shape | None = None) -> Array:
    """Differentiable ``numpy.reshape`` (C order)."""
    if order != "C":
        raise NotImplementedError("funcgrad.numpy.reshape supports order='C' only")
    shape = newshape if shape is None else shape
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return wrap(reshape(a, _resolve_shape(shape, _shape(a))))


ns.exports["reshape"] = ns.exports.pop("reshape_public")


@export(numpy=np.transpose)
def transpose_public(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.transpose``."""
    return wrap(transpose(a, None if axes is None else tuple(axes)))


ns.exports["transpose"] = ns.exports.pop("transpose_public")


@export(numpy=np.swapaxes)
def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """Differentiable ``numpy.swapaxes``."""
    return wrap(swapaxes_p(a, axis1, axis2))


@export(numpy=np.moveaxis)
def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.moveaxis``."""
    return wrap(moveaxis_p(a, source, destination))


@export(numpy=np.expand_dims)
def expand_dims(a: ArrayLike, axis: Axis) -> Array:
    """Differentiable ``numpy.expand_dims``."""
    shape = list(_shape(a))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = len(shape) + len(axes)
    for ax in sorted(x % n for x in axes):
        shape.insert(ax, 1)
    return wrap(reshape(a, tuple(shape)))


@export(numpy=np.squeeze)
def squeeze(a: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.squeeze``."""
    shape = _shape(a)
    axes = _axes(axis, len(shape)) if axis is not None else tuple(i for i, s in enumerate(shape) if s == 1)
    for ax in axes:
        if shape[ax] != 1:
            raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size "
                             f"not equal to one (axis {ax} has size {shape[ax]})")
    return wrap(reshape(a, tuple(s for i, s in enumerate(shape) if i not in axes)))


@export(numpy=np.ravel)
def ravel(a: ArrayLike, order: str = "C") -> Array:
    """Differentiable ``numpy.ravel``."""
    return wrap(reshape(a, (-1,) if _shape(a) != () else (1,)))


@export(numpy=np.broadcast_to)
def broadcast_to_public(array: ArrayLike, shape: Shape) -> Array:
    """Differentiable ``numpy.broadcast_to``."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return wrap(broadcast_to(array, shape))


ns.exports["broadcast_to"] = ns.exports.pop("broadcast_to_public")


@export(numpy=np.atleast_1d)
def atleast_1d(a: ArrayLike) -> Array:
    """Differentiable ``numpy.atleast_1d``."""
    return wrap(reshape(a, (1,))) if _ndim(a) == 0 else wrap(a)


@export(numpy=np.atleast_2d)
def atleast_2d(a: ArrayLike) -> Array:
    """Differentiable ``numpy.atleast_2d``."""
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
    g = matmul(ct, _conj(swapaxes_p(y, -1, -2)))
    return reshape(g, _shape(g)[:-2] + (_shape(g)[-1],)) if xd == 1 else g


def _matmul_vjp_y(ct, out, x, y):
    xd, yd = _ndim(x), _ndim(y)
    if xd == 1:
        ct = _expand(ct, -2)
        x = reshape(x, (1, _shape(x)[0]))
    if yd == 1:
        ct = _expand(ct, -1)
    g = matmul(_conj(swapaxes_p(x, -1, -2)), ct)
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
def dot(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.dot`` for scalars, vectors and matrices (matmul otherwise)."""
    if _ndim(a) == 0 or _ndim(b) == 0:
        return wrap(multiply(a, b))
    if _ndim(b) > 2:
        return tensordot(a, b, axes=([-1], [-2]))  # NumPy's n-d dot contracts these
    return wrap(matmul(a, b))


@export(numpy=np.outer)
def outer(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.outer``."""
    return wrap(multiply(reshape(a, (-1, 1)), reshape(b, (1, -1))))


@export(numpy=np.vdot)
def vdot(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.vdot`` (real arrays)."""
    return wrap(sum_p(multiply(_conj(reshape(a, (-1,))), reshape(b, (-1,)))))


@export(numpy=np.inner)
def inner(a: ArrayLike, b: ArrayLike) -> Array:
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
        return wrap(index_set_p(self.array, values, *arrays,
                                template=template))

    def add(self, values):
        template, arrays = split_index(self.index)
        return wrap(index_add_p(self.array, values, *arrays,
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


class _At:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdate(self.array, index)


# --- activations (used by funcgrad.mutable; their rules read only the output) --------------
def _sigmoid_impl(x):
    return np.reciprocal(1 + np.exp(-x))


def _relu_impl(x):
    return np.maximum(x, 0)


sigmoid_p = elementwise("sigmoid", _sigmoid_impl, lambda out, x: out * (1 - out))
# slope 0 at 0, as PyTorch's relu
relu_p = elementwise("relu", _relu_impl, lambda out, x: astype(greater(out, 0), _dtype(out)))


# --- complex parts ------------------------------------------------------------------------
# Cotangents are adjoints under the real inner product Re<a, b> (PyTorch's convention, see
# docs/complex.md): a complex slope is conjugated in a VJP, never in a JVP.
def _conj(x):
    """conj(x) for complex values; real values pass through untouched (and cost nothing)."""
    return conj_p(x) if _dtype(x).kind == "c" else x


def _imag_t(ct, out, x):
    return multiply(ct, 1j) if _dtype(x).kind == "c" else zeros_like_p(x)


conj_p = linear("conjugate", np.conjugate, lambda ct, out, x: conj_p(ct), batch=B.batch_elementwise)
real_p = linear("real", np.real, lambda ct, out, x: ct, batch=B.batch_elementwise)
imag_p = linear("imag", np.imag, _imag_t, batch=B.batch_elementwise)
public(conj_p, numpy=np.conjugate)
public(conj_p, name="conj", numpy=np.conj)
public(real_p, numpy=np.real)
public(imag_p, numpy=np.imag)
engine.register(conj=conj_p)


def _abs_vjp(ct, out, x):
    # For complex z the slope z / |z| varies smoothly (it is not a piecewise constant sign).
    return ct * _safe_div(x, out) if _dtype(x).kind == "c" else ct * sign(x)


def _abs_jvp(t, out, x):
    if _dtype(x).kind == "c":
        return real_p(_conj(_safe_div(x, out)) * t)
    return t * sign(x)


@export(numpy=np.angle)
def angle(z: ArrayLike, deg: bool = False) -> Array:
    """Differentiable ``numpy.angle``: ``arctan2(imag(z), real(z))``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.angle(1j).item() == fnp.pi / 2
    True
    """
    out = arctan2(imag_p(z), real_p(z))
    return wrap(out * (180 / np.pi) if deg else out)


@export(numpy=np.real_if_close)
def real_if_close(a: ArrayLike, tol: float = 100) -> Array:
    """Differentiable ``numpy.real_if_close``: the real part when every imaginary part is tiny.

    >>> import funcgrad.numpy as fnp
    >>> fnp.real_if_close(fnp.array([1.0 + 1e-20j])).dtype
    dtype('float64')
    """
    if _dtype(a).kind != "c":
        return wrap(a)
    eps = np.finfo(_dtype(a)).eps if tol > 1 else 1.0
    small = np.all(np.abs(np.imag(_bottom(a))) < tol * eps)
    return wrap(real_p(a) if small else a)


def _bottom(x):
    while isinstance(x, Array):
        x = x._value
    return x


# --- more elementwise functions ------------------------------------------------------------
def _safe_div(num, den):
    """num / den, and 0 where den == 0 (both branches stay finite: the double-where recipe)."""
    zero = equal(den, 0)
    return where_p(zero, 0, num / where_p(zero, 1, den))


def _arctan2_dy(out, y, x):
    return _safe_div(x, x * x + y * y)


def _arctan2_dx(out, y, x):
    return _safe_div(-y, x * x + y * y)


def _sinc_d(out, x):
    return _safe_div(cos(np.pi * x) - out, x)


def _fmax_dx(out, x, y):
    return _choose(logical_or(greater(x, y), isnan(y)), equal(x, y), out)


def _fmax_dy(out, x, y):
    return _choose(logical_or(less(x, y), isnan(x)), equal(x, y), out)


def _fmin_dx(out, x, y):
    return _choose(logical_or(less(x, y), isnan(y)), equal(x, y), out)


def _fmin_dy(out, x, y):
    return _choose(logical_or(greater(x, y), isnan(x)), equal(x, y), out)


def _copysign_dx(out, x, y):
    flips = not_equal(signbit(x), signbit(y))
    return 1 - 2 * astype(flips, _dtype(out))


def _nan_to_num_impl(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


logical_or = ns.exports["logical_or"].primitive
isnan = ns.exports["isnan"].primitive
isfinite = ns.exports["isfinite"].primitive
signbit = ns.exports["signbit"].primitive
trunc = ns.exports["trunc"].primitive
ceil = ns.exports["ceil"].primitive

# Primitives rather than composites: sqrt(x*x + y*y) overflows where hypot does not, and a
# stable logaddexp or arctan2 built from other functions costs several passes and a where.
logaddexp = elementwise("logaddexp", np.logaddexp, lambda out, x, y: exp(x - out),
                        lambda out, x, y: exp(y - out))
logaddexp2 = elementwise("logaddexp2", np.logaddexp2, lambda out, x, y: exp2(x - out),
                         lambda out, x, y: exp2(y - out))
hypot = elementwise("hypot", np.hypot, lambda out, x, y: _safe_div(x, out),
                    lambda out, x, y: _safe_div(y, out))  # slope 0 at (0, 0), as norm
arctan2 = elementwise("arctan2", np.arctan2, _arctan2_dy, _arctan2_dx)
sinc = elementwise("sinc", np.sinc, _sinc_d)
fmax = elementwise("fmax", np.fmax, _fmax_dx, _fmax_dy)
fmin = elementwise("fmin", np.fmin, _fmin_dx, _fmin_dy)
copysign = elementwise("copysign", np.copysign, _copysign_dx, lambda out, x, y: 0 * out)
fmod = elementwise("fmod", np.fmod, lambda out, x, y: _ones_like(out),
                   lambda out, x, y: -trunc(x / y))
def _nan_to_num_slope(out, x):
    return astype(isfinite(x), _dtype(out))


nan_to_num_p = primitive("nan_to_num", _nan_to_num_impl, params=("nan", "posinf", "neginf"),
                         vjps=(lambda ct, out, x, **kw: ct * _nan_to_num_slope(out, x),),
                         jvps=(lambda t, out, x, **kw: t * _nan_to_num_slope(out, x),),
                         batch=B.batch_elementwise)

for _p in (logaddexp, logaddexp2, hypot, arctan2, sinc, fmax, fmin, copysign, fmod):
    public(_p, numpy=getattr(np, _p.name))
public(absolute, name="fabs", numpy=np.fabs)
public(rad2deg, name="degrees", numpy=np.degrees)
public(deg2rad, name="radians", numpy=np.radians)


@export(numpy=np.nan_to_num)
def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """Differentiable ``numpy.nan_to_num``: slope 1 where `x` is finite, 0 where replaced.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sum(fnp.nan_to_num(x)))(fnp.array([1.0, fnp.nan])).tolist()
    [1.0, 0.0]
    """
    return wrap(nan_to_num_p(x, nan=nan, posinf=posinf, neginf=neginf))


@export(numpy=np.float_power)
def float_power(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Differentiable ``numpy.float_power``: `power` computed in float64 (complex128).

    >>> import funcgrad.numpy as fnp
    >>> fnp.float_power(fnp.array([2.0], dtype=fnp.float32), 2).dtype
    dtype('float64')
    """
    kind = np.result_type(_dtype(x1), _dtype(x2)).kind
    dtype = np.complex128 if kind == "c" else np.float64
    return wrap(power(astype(x1, dtype), astype(x2, dtype)))


for _name in ("heaviside", "nextafter", "spacing", "fix", "iscomplex", "isreal"):
    _f = getattr(np, _name)
    _nin = _f.nin if isinstance(_f, np.ufunc) else 1
    public(nondiff(_name, _f, nargs=_nin), numpy=_f)
for _name in ("nanargmax", "nanargmin"):
    _f = getattr(np, _name)
    public(nondiff(_name, _f, params=("axis", "out", "keepdims"), batch=B.batch_flat_axis),
           numpy=_f)
def _constant_tuple(np_fn, name):
    def make(*args, **kwargs):
        return tuple(Array(a) for a in np_fn(*[raw(a) for a in args], **kwargs))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}``: a tuple of constant index `Array`s."
    return export(make, numpy=np_fn, kind="constant")


for _name in ("tril_indices", "triu_indices", "diag_indices"):
    _constant_tuple(getattr(np, _name), _name)


# --- cumulative functions ------------------------------------------------------------------
def _flip_axis(x, axis):
    axis = axis % _ndim(x)
    return getitem_p(x, template=(slice(None),) * axis + (slice(None, None, -1),))


def _cumsum_impl(x, axis):
    return np.cumsum(x, axis=axis)


def _rev_cumsum(x, axis):
    return _flip_axis(cumsum_p(_flip_axis(x, axis), axis=axis), axis)


cumsum_p = linear("cumsum", _cumsum_impl, lambda ct, out, x, axis: _rev_cumsum(ct, axis),
                  params=("axis",), batch=B.batch_axis_param)


def _cumprod_impl(x, axis):
    return np.cumprod(x, axis=axis)


def _cumprod_grid(x, axis):
    """grid[..., k, j] = product of x[..., i] for i <= j, i != k (axis moved last): the exact
    partial derivatives of cumprod, also where x holds zeros."""
    xm = moveaxis_p(x, axis, -1)
    n = _shape(xm)[-1]
    grid = where_p(np.eye(n, dtype=bool), 1, _expand(xm, -2))
    return cumprod_p(grid, axis=-1), np.triu(np.ones((n, n), dtype=bool))


def _cumprod_vjp(ct, out, x, axis):
    if not _has_zero(x):
        return _rev_cumsum(ct * _conj(out), axis) / _conj(x)
    grid, later = _cumprod_grid(x, axis)
    ctm = _expand(moveaxis_p(ct, axis, -1), -2)
    g = sum_p(where_p(later, ctm * _conj(grid), 0), axis=-1)
    return moveaxis_p(g, -1, axis)


def _cumprod_jvp(t, out, x, axis):
    if not _has_zero(x):
        return out * cumsum_p(t / x, axis=axis)
    grid, later = _cumprod_grid(x, axis)
    tm = _expand(moveaxis_p(t, axis, -1), -1)
    return moveaxis_p(sum_p(where_p(later, tm * grid, 0), axis=-2), -1, axis)


cumprod_p = primitive("cumprod", _cumprod_impl, params=("axis",), vjps=(_cumprod_vjp,),
                      jvps=(_cumprod_jvp,), batch=B.batch_axis_param)


def _cumulative(prim, np_fn, name, fill=None):
    def cumulative(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None,
                   out: None = None) -> Array:
        if out is not None:
            raise TypeError(f"funcgrad.numpy.{name}: out= is not supported (arrays are immutable)")
        a = asarray(a)
        if dtype is not None:
            a = astype_public(a, dtype)
        if fill is not None:
            a = where_p(isnan(a), fill, a)
        if axis is None:
            a, axis = ravel(a), 0
        return wrap(prim(a, axis=axis))
    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = f"Differentiable ``numpy.{name}`` (``axis=None`` flattens first)."
    cumulative.primitive = prim
    return export(cumulative, numpy=np_fn)


cumsum = _cumulative(cumsum_p, np.cumsum, "cumsum")
cumprod = _cumulative(cumprod_p, np.cumprod, "cumprod")
nancumsum = _cumulative(cumsum_p, np.nancumsum, "nancumsum", fill=0)
nancumprod = _cumulative(cumprod_p, np.nancumprod, "nancumprod", fill=1)


def _slice_axis(x, axis, start=None, stop=None, step=None):
    axis = axis % _ndim(x)
    return getitem(x, (slice(None),) * axis + (slice(start, stop, step),))


@export(numpy=np.diff)
def diff(a: ArrayLike, n: int = 1, axis: Axis = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.diff``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diff(fnp.array([1.0, 4.0, 9.0])).tolist()
    [3.0, 5.0]
    """
    a = asarray(a)
    parts = []
    for extra in (prepend, append):
        if extra is not None:
            shape = list(_shape(a))
            shape[axis] = 1
            extra = asarray(extra)
            if _ndim(extra) == 0:
                extra = broadcast_to(extra, tuple(shape))
            parts.append(extra)
        else:
            parts.append(None)
    if prepend is not None or append is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    for _ in range(n):
        a = _slice_axis(a, axis, 1) - _slice_axis(a, axis, None, -1)
    return wrap(a)


@export(numpy=np.ediff1d)
def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
            to_begin: ArrayLike | None = None) -> Array:
    """Differentiable ``numpy.ediff1d``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.ediff1d(fnp.array([1.0, 2.0, 4.0])).tolist()
    [1.0, 2.0]
    """
    d = diff(ravel(ary))
    parts = [ravel(to_begin)] if to_begin is not None else []
    parts.append(d)
    if to_end is not None:
        parts.append(ravel(to_end))
    return concatenate(parts) if len(parts) > 1 else d


@export(numpy=np.gradient)
def gradient(f: ArrayLike, *varargs: float, axis: Axis = None,
             edge_order: int = 1) -> Array | tuple[Array, ...]:
    """Differentiable ``numpy.gradient`` with scalar (uniform) spacings.

    >>> import funcgrad.numpy as fnp
    >>> fnp.gradient(fnp.array([1.0, 2.0, 4.0, 7.0])).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    f = asarray(f)
    axes = tuple(range(_ndim(f))) if axis is None else _axes(axis, _ndim(f))
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    else:
        spacing = list(varargs)
    if builtins.any(np.ndim(h) != 0 for h in spacing):
        raise NotImplementedError("funcgrad.numpy.gradient supports scalar spacings only; "
                                  "for coordinate arrays, differentiate with diff() yourself")
    if edge_order not in (1, 2):
        raise ValueError("gradient: edge_order must be 1 or 2")
    outs = []
    for ax, h in zip(axes, spacing):
        s = lambda start=None, stop=None: _slice_axis(f, ax, start, stop)  # noqa: E731
        inner = (s(2, None) - s(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first = (s(1, 2) - s(0, 1)) / h
            last = (s(-1, None) - s(-2, -1)) / h
        else:
            first = (-1.5 * s(0, 1) + 2.0 * s(1, 2) - 0.5 * s(2, 3)) / h
            last = (0.5 * s(-3, -2) - 2.0 * s(-2, -1) + 1.5 * s(-1, None)) / h
        outs.append(concatenate([first, inner, last], axis=ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


@export(numpy=np.trapezoid)
def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: Axis = -1) -> Array:
    """Differentiable ``numpy.trapezoid`` (in `y` and in the sample points `x`).

    >>> import funcgrad.numpy as fnp
    >>> fnp.trapezoid(fnp.array([1.0, 2.0, 3.0])).item()
    4.0
    """
    y = asarray(y)
    mids = (_slice_axis(y, axis, 1) + _slice_axis(y, axis, None, -1)) / 2.0
    widths = dx if x is None else diff(x, axis=axis if _ndim(x) > 1 else -1)
    if x is not None and _ndim(x) == 1 and _ndim(y) > 1:
        shape = [1] * _ndim(y)
        shape[axis] = -1
        widths = reshape(widths, tuple(_resolve_shape(shape, (_shape(x)[0] - 1,))))
    return wrap(sum_p(mids * widths, axis=axis))


# --- statistics ----------------------------------------------------------------------------
@export(numpy=np.average)
def average(a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None,
            returned: bool = False, *, keepdims: bool = False) -> Array | tuple[Array, Array]:
    """Differentiable ``numpy.average`` (in `a` and in `weights`).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda w: fnp.average(fnp.array([1.0, 3.0]), weights=w))(fnp.array([1.0, 1.0])).tolist()
    [-0.5, 0.5]
    """
    a = asarray(a)
    if isinstance(axis, list):
        axis = tuple(axis)
    if weights is None:
        avg = mean_p(a, axis=axis, keepdims=keepdims)
        total = np.asarray(_count(a, axis), dtype=_dtype(avg))
        total = np.broadcast_to(total, _shape(avg))
    else:
        w = asarray(weights)
        if _ndim(w) != _ndim(a):
            if axis is None or not isinstance(axis, int) or _ndim(w) != 1:
                raise TypeError("average: 1-D weights need an int axis; otherwise weights "
                                "must have the shape of a")
            shape = [1] * _ndim(a)
            shape[axis] = _shape(w)[0]
            w = reshape(w, tuple(shape))
        total = sum_p(broadcast_to(w, _shape(a)), axis=axis, keepdims=keepdims)
        avg = sum_p(a * w, axis=axis, keepdims=keepdims) / total
    return (wrap(avg), wrap(total)) if returned else wrap(avg)


def _nan_fill(a, value):
    return where_p(isnan(a), value, a)


def _valid_count(a, axis, keepdims):
    return sum_p(astype(logical_not(isnan(a)), _dtype(a)), axis=axis, keepdims=keepdims)


logical_not = ns.exports["logical_not"].primitive


def _nan_reduction(name, np_fn, compute):
    def reduce(a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
               keepdims: bool = False, **kwargs: Any) -> Array:
        if out is not None:
            raise TypeError(f"funcgrad.numpy.{name}: out= is not supported")
        a = asarray(a)
        if dtype is not None:
            a = astype_public(a, dtype)
        if isinstance(axis, list):
            axis = tuple(axis)
        return wrap(compute(a, axis, keepdims, **kwargs))
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"Differentiable ``numpy.{name}``: NaNs are left out, and receive a zero "
                      "gradient.")
    return export(reduce, numpy=np_fn)


def _nanmax(a, axis, keepdims, fill, prim):
    out = prim(_nan_fill(a, fill), axis=axis, keepdims=keepdims)
    all_nan = logical_not(any_p(logical_not(isnan(a)), axis=axis, keepdims=keepdims))
    return where_p(all_nan, np.nan, out)


def _nanvar(a, axis, keepdims, ddof=0):
    valid = logical_not(isnan(a))
    safe = where_p(valid, a, 0)  # the double-where recipe: NaNs never reach a derivative
    n = _valid_count(a, axis, True)
    centered = where_p(valid, safe - sum_p(safe, axis=axis, keepdims=True) / n, 0)
    ss = sum_p(centered * _conj(centered), axis=axis, keepdims=keepdims)
    return real_p(ss) / (_valid_count(a, axis, keepdims) - ddof)


_nan_reduction("nansum", np.nansum, lambda a, axis, kd: sum_p(_nan_fill(a, 0), axis=axis, keepdims=kd))
_nan_reduction("nanprod", np.nanprod, lambda a, axis, kd: prod_p(_nan_fill(a, 1), axis=axis, keepdims=kd))
_nan_reduction("nanmean", np.nanmean, lambda a, axis, kd: sum_p(_nan_fill(a, 0), axis=axis, keepdims=kd)
               / _valid_count(a, axis, kd))
_nan_reduction("nanmax", np.nanmax, lambda a, axis, kd: _nanmax(a, axis, kd, -np.inf, max_p))
_nan_reduction("nanmin", np.nanmin, lambda a, axis, kd: _nanmax(a, axis, kd, np.inf, min_p))
_nan_reduction("nanvar", np.nanvar, _nanvar)
_nan_reduction("nanstd", np.nanstd, lambda a, axis, kd, ddof=0: sqrt(_nanvar(a, axis, kd, ddof)))


@export(numpy=np.ptp)
def ptp(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.ptp``: ``max - min`` (ties share the slope).

    >>> import funcgrad.numpy as fnp
    >>> fnp.ptp(fnp.array([3.0, -1.0, 2.0])).item()
    4.0
    """
    return wrap(max_p(a, axis=axis, keepdims=keepdims) - min_p(a, axis=axis, keepdims=keepdims))


def _argsort_impl(x, axis=-1):
    return np.argsort(x, axis=axis, kind="stable")


argsort_p = nondiff("argsort", _argsort_impl, params=("axis",), batch=B.batch_axis_param)


def _argpartition_impl(x, kth, axis=-1):
    return np.argpartition(x, kth, axis=axis)


argpartition_p = nondiff("argpartition", _argpartition_impl, params=("kth", "axis"),
                         batch=B.batch_axis_param)
public(argpartition_p, numpy=np.argpartition)


@export(numpy=np.sort)
def sort(a: ArrayLike, axis: Axis = -1, kind: str | None = None, order: str | None = None, *,
         stable: bool | None = None) -> Array:
    """Differentiable ``numpy.sort``: the gradient flows back through the permutation
    (tied elements each keep their own slot, in stable-sort order).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sort(x)[0])(fnp.array([3.0, 1.0, 2.0])).tolist()
    [0.0, 1.0, 0.0]
    """
    if order is not None:
        raise NotImplementedError("funcgrad.numpy.sort: order= (structured arrays) is not supported")
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return take_along_axis(a, argsort_p(a, axis=axis), axis)


@export(numpy=np.partition)
def partition(a: ArrayLike, kth: ArrayLike, axis: Axis = -1, kind: str = "introselect",
              order: str | None = None) -> Array:
    """Differentiable ``numpy.partition``, through ``numpy.argpartition``'s permutation (the
    element at each `kth` is NumPy's; the others are ordered as argpartition leaves them).

    >>> import funcgrad.numpy as fnp
    >>> fnp.partition(fnp.array([3.0, 1.0, 2.0]), 1)[1].item()
    2.0
    """
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return take_along_axis(a, argpartition_p(a, kth=kth, axis=axis), axis)


def _quantile(a, q, axis, keepdims, method, skip_nan):
    if method != "linear":
        raise NotImplementedError(f"funcgrad.numpy quantiles support method='linear' only, got {method!r}")
    if isinstance(q, Tracer):
        raise TypeError("quantile/percentile: q must be a constant (no derivative flows into q)")
    q = np.asarray(raw(q), dtype=np.float64)
    if np.any((q < 0) | (q > 1)):
        raise ValueError("quantiles must be in the range [0, 1] (percentiles in [0, 100])")
    a = asarray(a)
    shape = _shape(a)
    if axis is None:
        axes = tuple(range(len(shape)))
    else:
        axes = _axes(axis, len(shape))
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    moved = reshape(transpose(a, rest + axes), tuple(shape[i] for i in rest) + (-1,))
    if _shape(moved)[-1] == 0:
        raise ValueError("quantile of an empty axis is undefined (NumPy returns NaN with a "
                         "warning; funcgrad refuses, so no NaN gradient appears silently)")
    ordered = sort(moved, axis=-1)  # NaNs sort last
    n = _shape(moved)[-1]
    count = _valid_count(moved, -1, False) if skip_nan else np.full(_shape(moved)[:-1], n)
    pos = reshape(q, q.shape + (1,) * (len(_shape(moved)) - 1)) * (count - 1)
    lo = clip_p(floor(pos), 0, n - 1)
    hi = clip_p(ceil(pos), 0, n - 1)
    frac = pos - lo
    lead = q.shape + tuple(_shape(moved)[:-1])
    ordered = broadcast_to(reshape(ordered, (1,) * q.ndim + tuple(_shape(ordered))),
                           lead + (n,))
    pick = lambda i: take_along_axis(ordered, _expand(astype(i, np.intp), -1), -1)  # noqa: E731
    lo_v = reshape(pick(lo), lead)
    hi_v = reshape(pick(hi), lead)
    out = lo_v + (hi_v - lo_v) * astype(frac, _dtype(lo_v))
    if skip_nan:
        out = where_p(equal(count, 0), np.nan, out)
    if keepdims:
        out = reshape(out, q.shape + _keepdims_shape(shape, axis))
    return out


def _quantile_fn(name, np_fn, scale, skip_nan, fixed_q=None):
    def quantile_fn(a: ArrayLike, q: ArrayLike | None = None, axis: Axis = None, out: None = None,
                    overwrite_input: bool = False, method: str = "linear",
                    keepdims: bool = False) -> Array:
        if out is not None:
            raise TypeError(f"funcgrad.numpy.{name}: out= is not supported")
        if isinstance(q, Tracer):
            raise TypeError(f"{name}: q must be a constant (no derivative flows into q); "
                            "apply funcgrad.stop_gradient to it")
        qq = fixed_q if fixed_q is not None else np.asarray(raw(q), dtype=np.float64) / scale
        return wrap(_quantile(a, qq, axis, keepdims, method, skip_nan))
    if fixed_q is not None:
        def median_fn(a: ArrayLike, axis: Axis = None, out: None = None,
                      overwrite_input: bool = False, keepdims: bool = False) -> Array:
            return quantile_fn(a, None, axis, out, overwrite_input, "linear", keepdims)
        fn = median_fn
    else:
        fn = quantile_fn
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Differentiable ``numpy.{name}`` (method 'linear'): the gradient reaches the "
                  "one or two order statistics it interpolates" + (", NaNs skipped." if skip_nan else "."))
    return export(fn, numpy=np_fn)


_quantile_fn("quantile", np.quantile, 1.0, False)
_quantile_fn("percentile", np.percentile, 100.0, False)
_quantile_fn("median", np.median, 1.0, False, fixed_q=0.5)
_quantile_fn("nanquantile", np.nanquantile, 1.0, True)
_quantile_fn("nanpercentile", np.nanpercentile, 100.0, True)
_quantile_fn("nanmedian", np.nanmedian, 1.0, True, fixed_q=0.5)


@export(numpy=np.cov)
def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: float | None = None) -> Array:
    """Differentiable ``numpy.cov`` (no frequency or analytic weights).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cov(fnp.array([[0.0, 2.0], [1.0, 3.0]])).tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    x = atleast_2d(m)
    if not rowvar and _shape(x)[0] != 1:
        x = transpose(x)
    if y is not None:
        y = atleast_2d(y)
        if not rowvar and _shape(y)[0] != 1:
            y = transpose(y)
        x = concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    centered = x - mean_p(x, axis=1, keepdims=True)
    c = matmul(centered, _conj(transpose(centered))) / (_shape(x)[1] - ddof)
    return wrap(reshape(c, ()) if _shape(c) == (1, 1) else c)


@export(numpy=np.corrcoef)
def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True) -> Array:
    """Differentiable ``numpy.corrcoef``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.corrcoef(fnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar)
    if _ndim(c) == 0:
        return wrap(c / c)
    d = sqrt(real_p(diagonal(c)))
    return wrap(c / reshape(d, (-1, 1)) / reshape(d, (1, -1)))


# --- gathering and selecting ---------------------------------------------------------------
@export(numpy=np.take)
def take(a: ArrayLike, indices: ArrayLike, axis: Axis = None, out: None = None,
         mode: str | None = None) -> Array:
    """Differentiable ``numpy.take``; the gradient scatters back (repeats accumulate).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sum(fnp.take(x, [0, 0, 2])))(fnp.zeros(3)).tolist()
    [2.0, 0.0, 1.0]
    """
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = axis % _ndim(a)
    if mode in ("wrap", "clip"):
        n = _shape(a)[axis]
        idx = np.asarray(raw(indices))
        indices = np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, n - 1)
    return wrap(getitem(a, (slice(None),) * axis + (indices,)))


@export(numpy=np.take_along_axis)
def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: Axis = -1) -> Array:
    """Differentiable ``numpy.take_along_axis``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.take_along_axis(fnp.array([[1.0, 2.0], [3.0, 4.0]]), fnp.array([[1], [0]]), 1).tolist()
    [[2.0], [3.0]]
    """
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    nd = _ndim(arr)
    axis = axis % nd
    if _ndim(indices) != nd:
        raise ValueError(f"take_along_axis: indices must have {nd} dimensions like arr, got {_ndim(indices)}")
    index = []
    for d in range(nd):
        if d == axis:
            index.append(indices)
        else:
            shape = [1] * nd
            shape[d] = _shape(arr)[d]
            index.append(np.arange(_shape(arr)[d]).reshape(shape))
    return wrap(getitem(arr, tuple(index)))


@export(numpy=np.compress)
def compress(condition: ArrayLike, a: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.compress``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.compress([True, False, True], fnp.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 3.0]
    """
    return take(a, np.flatnonzero(np.asarray(_bottom(condition))), axis)


@export(numpy=np.extract)
def extract(condition: ArrayLike, arr: ArrayLike) -> Array:
    """Differentiable ``numpy.extract``.

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.array([1.0, -2.0, 3.0])
    >>> fnp.extract(x > 0, x).tolist()
    [1.0, 3.0]
    """
    return take(ravel(arr), np.flatnonzero(np.asarray(_bottom(condition))))


@export(numpy=np.select)
def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
           default: ArrayLike = 0) -> Array:
    """Differentiable ``numpy.select``: the first true condition picks its choice.

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.array([-1.0, 2.0])
    >>> fnp.select([x < 0, x > 0], [-x, x * 10]).tolist()
    [1.0, 20.0]
    """
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = where_p(cond, choice, out)
    return wrap(broadcast_to(out, np.broadcast_shapes(*[_shape(c) for c in condlist],
                                                      *[_shape(c) for c in choicelist])))


@export(numpy=np.delete)
def delete(arr: ArrayLike, obj: int | slice | Sequence[int], axis: Axis = None) -> Array:
    """Differentiable ``numpy.delete``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.delete(fnp.array([1.0, 2.0, 3.0]), 1).tolist()
    [1.0, 3.0]
    """
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    keep = np.ones(_shape(arr)[axis], dtype=bool)
    keep[obj] = False
    return take(arr, np.flatnonzero(keep), axis)


@export(numpy=np.append)
def append(arr: ArrayLike, values: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.append``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.append(fnp.array([1.0]), fnp.array([[2.0, 3.0]])).tolist()
    [1.0, 2.0, 3.0]
    """
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


# --- triangles and diagonals ---------------------------------------------------------------
@export(numpy=np.diagonal)
def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """Differentiable ``numpy.diagonal`` (the diagonal becomes the last axis).

    >>> import funcgrad.numpy as fnp
    >>> fnp.diagonal(fnp.array([[1.0, 2.0], [3.0, 4.0]]), 1).tolist()
    [2.0]
    """
    a = moveaxis_p(a, (axis1, axis2), (-2, -1))
    rows, cols = _shape(a)[-2:]
    n = builtins.max(0, builtins.min(rows + builtins.min(offset, 0), cols - builtins.max(offset, 0)))
    r = np.arange(n) + builtins.max(-offset, 0)
    c = np.arange(n) + builtins.max(offset, 0)
    return wrap(getitem(a, (Ellipsis, r, c)))


@export(numpy=np.diag)
def diag(v: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.diag``: a 1-d input builds a matrix, a 2-d one gives a diagonal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diag(fnp.array([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if _ndim(v) == 2:
        return diagonal(v, k)
    if _ndim(v) != 1:
        raise ValueError("diag: input must be 1-d or 2-d")
    n = _shape(v)[0] + builtins.abs(k)
    r = np.arange(_shape(v)[0]) + builtins.max(-k, 0)
    c = np.arange(_shape(v)[0]) + builtins.max(k, 0)
    zeros = np.zeros((n, n), dtype=_dtype(v))
    return wrap(index_add_p(zeros, v, r, c, template=(_SLOT, _SLOT)))


@export(numpy=np.diagflat)
def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.diagflat``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diagflat(fnp.array([[1.0], [2.0]])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    return diag(ravel(v), k)


@export(numpy=np.trace)
def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1,
          dtype: DTypeLike | None = None, out: None = None) -> Array:
    """Differentiable ``numpy.trace``.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.trace)(fnp.zeros((2, 2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    d = diagonal(a, offset, axis1, axis2)
    if dtype is not None:
        d = astype_public(d, dtype)
    return wrap(sum_p(d, axis=-1))


def _tri_mask(shape, k, lower):
    rows, cols = shape[-2:]
    return np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)


@export(numpy=np.tril)
def tril(m: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.tril``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tril(fnp.ones((2, 2))).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return wrap(where_p(_tri_mask(_shape(m), k, True), m, 0))


@export(numpy=np.triu)
def triu(m: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.triu``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.triu(fnp.ones((2, 2))).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return wrap(where_p(_tri_mask(_shape(m), k, False), m, 0))


# --- rearranging ---------------------------------------------------------------------------
@export(numpy=np.flip)
def flip(m: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.flip``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.flip(fnp.array([1.0, 2.0, 3.0])).tolist()
    [3.0, 2.0, 1.0]
    """
    m = asarray(m)
    axes = _axes(axis, _ndim(m))
    return wrap(getitem(m, tuple(slice(None, None, -1) if d in axes else slice(None)
                                 for d in range(_ndim(m)))))


@export(numpy=np.fliplr)
def fliplr(m: ArrayLike) -> Array:
    """Differentiable ``numpy.fliplr``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fliplr(fnp.array([[1.0, 2.0]])).tolist()
    [[2.0, 1.0]]
    """
    return flip(m, 1)


@export(numpy=np.flipud)
def flipud(m: ArrayLike) -> Array:
    """Differentiable ``numpy.flipud``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.flipud(fnp.array([[1.0], [2.0]])).tolist()
    [[2.0], [1.0]]
    """
    return flip(m, 0)


@export(numpy=np.rot90)
def rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Array:
    """Differentiable ``numpy.rot90``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.rot90(fnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[2.0, 4.0], [1.0, 3.0]]
    """
    m = asarray(m)
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(_ndim(m)))
    a0, a1 = axes[0] % _ndim(m), axes[1] % _ndim(m)
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return wrap(transpose(flip(m, a1), tuple(perm)))
    return flip(transpose(m, tuple(perm)), a1)


@export(numpy=np.roll)
def roll(a: ArrayLike, shift: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.roll``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.roll(fnp.array([1.0, 2.0, 3.0]), 1).tolist()
    [3.0, 1.0, 2.0]
    """
    a = asarray(a)
    if axis is None:
        return wrap(reshape(roll(ravel(a), shift, 0), _shape(a)))
    shifts, axes = np.broadcast_arrays(np.atleast_1d(shift), np.atleast_1d(axis))
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        n = _shape(a)[ax]
        if n:
            a = take(a, (np.arange(n) - int(s)) % n, int(ax))
    return wrap(a)


@export(numpy=np.rollaxis)
def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """Differentiable ``numpy.rollaxis``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.rollaxis(fnp.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    n = _ndim(a)
    axis %= n
    if start < 0:
        start += n
    if axis < start:
        start -= 1
    if axis == start:
        return wrap(a)
    perm = [d for d in range(n) if d != axis]
    perm.insert(start, axis)
    return wrap(transpose(a, tuple(perm)))


@export(numpy=np.tile)
def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.tile``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tile(fnp.array([1.0, 2.0]), 2).tolist()
    [1.0, 2.0, 1.0, 2.0]
    """
    A = asarray(A)
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    d = builtins.max(_ndim(A), len(reps))
    shape = (1,) * (d - _ndim(A)) + tuple(_shape(A))
    reps = (1,) * (d - len(reps)) + reps
    interleaved = tuple(x for s in shape for x in (1, s))
    grown = broadcast_to(reshape(A, interleaved), tuple(x for r, s in zip(reps, shape) for x in (r, s)))
    return wrap(reshape(grown, tuple(r * s for r, s in zip(reps, shape))))


@export(numpy=np.repeat)
def repeat(a: ArrayLike, repeats: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``numpy.repeat``.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sum(fnp.repeat(x, [1, 3])))(fnp.zeros(2)).tolist()
    [1.0, 3.0]
    """
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis %= _ndim(a)
    if np.ndim(repeats) == 0:
        r = int(repeats)
        shape = _shape(a)
        grown = broadcast_to(_expand(a, axis + 1), shape[:axis + 1] + (r,) + shape[axis + 1:])
        return wrap(reshape(grown, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:]))
    return take(a, np.repeat(np.arange(_shape(a)[axis]), repeats), axis)


@export(numpy=np.pad)
def pad(array: ArrayLike, pad_width: int | Sequence[int] | Sequence[Sequence[int]],
        mode: str = "constant", **kwargs: Any) -> Array:
    """Differentiable ``numpy.pad`` for the modes constant, edge, reflect, symmetric and wrap.

    >>> import funcgrad.numpy as fnp
    >>> fnp.pad(fnp.array([1.0, 2.0]), 1, mode="reflect").tolist()
    [2.0, 1.0, 2.0, 1.0]
    """
    array = asarray(array)
    nd = _ndim(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (nd, 2))
    if mode == "constant":
        frame = np.pad(np.zeros(_shape(array), dtype=_dtype(array)), widths, mode="constant",
                       constant_values=kwargs.get("constant_values", 0))
        inner = tuple(slice(int(b), int(b) + s) for (b, _), s in zip(widths, _shape(array)))
        return wrap(index_set_p(frame, array, template=inner))
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"funcgrad.numpy.pad: mode {mode!r} is not supported; use "
                                  "constant, edge, reflect, symmetric or wrap")
    for ax, (before, after) in enumerate(widths):
        if before or after:
            source = np.pad(np.arange(_shape(array)[ax]), (int(before), int(after)), mode=mode, **kwargs)
            array = take(array, source, ax)
    return wrap(array)


def _split_points(n, sections, equal):
    if np.ndim(sections) == 0:
        sections = int(sections)
        if equal and n % sections:
            raise ValueError("array split does not result in an equal division")
        size, extra = divmod(n, sections)
        sizes = [size + 1] * extra + [size] * (sections - extra)
        return list(np.cumsum([0] + sizes))
    return [0] + [int(i) for i in sections] + [n]


def _split(ary, indices_or_sections, axis, equal):
    ary = asarray(ary)
    points = _split_points(_shape(ary)[axis], indices_or_sections, equal)
    return [wrap(_slice_axis(ary, axis, start, stop)) for start, stop in zip(points[:-1], points[1:])]


@export(numpy=np.split)
def split(ary: ArrayLike, indices_or_sections: int | Sequence[int], axis: Axis = 0) -> list[Array]:
    """Differentiable ``numpy.split``: a list of arrays.

    >>> import funcgrad.numpy as fnp
    >>> [p.tolist() for p in fnp.split(fnp.array([1.0, 2.0, 3.0, 4.0]), 2)]
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _split(ary, indices_or_sections, axis, True)


@export(numpy=np.array_split)
def array_split(ary: ArrayLike, indices_or_sections: int | Sequence[int],
                axis: Axis = 0) -> list[Array]:
    """Differentiable ``numpy.array_split``.

    >>> import funcgrad.numpy as fnp
    >>> [p.tolist() for p in fnp.array_split(fnp.array([1.0, 2.0, 3.0]), 2)]
    [[1.0, 2.0], [3.0]]
    """
    return _split(ary, indices_or_sections, axis, False)


@export(numpy=np.hsplit)
def hsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """Differentiable ``numpy.hsplit``.

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.hsplit(fnp.ones((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    return _split(ary, indices_or_sections, 1 if _ndim(ary) > 1 else 0, True)


@export(numpy=np.vsplit)
def vsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """Differentiable ``numpy.vsplit``.

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.vsplit(fnp.ones((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    if _ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0, True)


@export(numpy=np.dsplit)
def dsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """Differentiable ``numpy.dsplit``.

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.dsplit(fnp.ones((1, 1, 4)), 2)]
    [(1, 1, 2), (1, 1, 2)]
    """
    if _ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2, True)


@export(numpy=np.atleast_3d)
def atleast_3d(a: ArrayLike) -> Array:
    """Differentiable ``numpy.atleast_3d``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.atleast_3d(fnp.ones(3)).shape
    (1, 3, 1)
    """
    shape = _shape(a)
    new = {0: (1, 1, 1), 1: (1,) + tuple(shape) + (1,), 2: tuple(shape) + (1,)}.get(len(shape))
    return wrap(a) if new is None else wrap(reshape(a, new))


@export(numpy=np.dstack)
def dstack(tup: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.dstack``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.dstack([fnp.ones((2, 2)), fnp.ones((2, 2))]).shape
    (2, 2, 2)
    """
    return concatenate([atleast_3d(a) for a in tup], axis=2)


@export(numpy=np.column_stack)
def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.column_stack``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.column_stack([fnp.array([1.0, 2.0]), fnp.array([3.0, 4.0])]).tolist()
    [[1.0, 3.0], [2.0, 4.0]]
    """
    return concatenate([reshape(a, (-1, 1)) if _ndim(a) < 2 else a for a in tup], axis=1)


@export(numpy=np.meshgrid)
def meshgrid(*xi: ArrayLike, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> tuple[Array, ...]:
    """Differentiable ``numpy.meshgrid``: a tuple of arrays.

    >>> import funcgrad.numpy as fnp
    >>> [g.shape for g in fnp.meshgrid(fnp.ones(2), fnp.ones(3))]
    [(3, 2), (3, 2)]
    """
    n = len(xi)
    outs = []
    for i, x in enumerate(xi):
        shape = [1] * n
        shape[i] = -1
        if indexing == "xy" and n > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        outs.append(reshape(x, tuple(_resolve_shape(shape, _shape(x)))))
    if not sparse:
        full = np.broadcast_shapes(*[_shape(o) for o in outs])
        outs = [broadcast_to(o, full) for o in outs]
    return tuple(wrap(o) for o in outs)


@export(numpy=np.broadcast_arrays)
def broadcast_arrays(*args: ArrayLike) -> tuple[Array, ...]:
    """Differentiable ``numpy.broadcast_arrays``: a tuple of arrays.

    >>> import funcgrad.numpy as fnp
    >>> [a.shape for a in fnp.broadcast_arrays(fnp.ones((2, 1)), fnp.ones(3))]
    [(2, 3), (2, 3)]
    """
    full = np.broadcast_shapes(*[_shape(a) for a in args])
    return tuple(wrap(broadcast_to(a, full)) for a in args)


@export(numpy=np.copy)
def copy(a: ArrayLike, order: str = "K", subok: bool = False) -> Array:
    """``numpy.copy``; arrays are immutable, so this is the identity (slope 1).

    >>> import funcgrad.numpy as fnp
    >>> fnp.copy([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    return asarray(a)


@export(numpy=np.matrix_transpose)
def matrix_transpose(x: ArrayLike) -> Array:
    """Differentiable ``numpy.matrix_transpose``: swaps the last two axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.matrix_transpose(fnp.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    return wrap(swapaxes_p(x, -1, -2))


@export(numpy=np.permute_dims)
def permute_dims(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.permute_dims`` (``transpose``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.permute_dims(fnp.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return wrap(transpose(a, None if axes is None else tuple(axes)))


@export(numpy=np.concat)
def concat(arrays: Sequence[ArrayLike], axis: Axis = 0) -> Array:
    """Differentiable ``numpy.concat`` (``concatenate``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.concat([fnp.ones(1), fnp.zeros(1)]).tolist()
    [1.0, 0.0]
    """
    return concatenate(arrays, axis=axis)


@export(numpy=np.unstack)
def unstack(x: ArrayLike, axis: Axis = 0) -> tuple[Array, ...]:
    """Differentiable ``numpy.unstack``: a tuple of the slices along `axis`.

    >>> import funcgrad.numpy as fnp
    >>> [u.tolist() for u in fnp.unstack(fnp.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)]
    [[1.0, 3.0], [2.0, 4.0]]
    """
    x = asarray(x)
    axis %= _ndim(x)
    return tuple(wrap(getitem(x, (slice(None),) * axis + (i,))) for i in range(_shape(x)[axis]))


# --- products ------------------------------------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_spec(subscripts, shapes):
    """Explicit subscripts (ellipses spelled out with fresh letters, the output written)."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    ins = ins.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: {len(ins)} operand subscripts for {len(shapes)} operands")
    used = set(subscripts)
    free = [c for c in _LETTERS if c not in used]
    ell_rank = builtins.max([len(s) - (len(t) - 3) for t, s in zip(ins, shapes) if "..." in t],
                            default=0)
    ell = "".join(free[:ell_rank])
    explicit = []
    for t, s in zip(ins, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - k:])
        if len(t) != len(s):
            raise ValueError(f"einsum: subscripts {t!r} do not match an operand of shape {s}")
        explicit.append(t)
    if out is None:
        letters = "".join(explicit)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return tuple(explicit), out


def _einsum_impl(*operands, spec):
    ins, out = spec
    return np.einsum(",".join(ins) + "->" + out, *operands, optimize=len(operands) > 2)


def _einsum_jvp(k):
    def jvp_k(t, out, *operands, spec):
        ops = list(operands)
        ops[k] = t
        return einsum_p(*ops, spec=spec)
    return jvp_k


def _einsum_vjp(k):
    def vjp_k(ct, out, *operands, spec):
        ins, out_sub = spec
        target = ins[k]
        others = [i for i in range(len(operands)) if i != k]
        present = set(out_sub).union(*[set(ins[i]) for i in others])
        unique = "".join(dict.fromkeys(target))
        kept = "".join(c for c in unique if c in present)
        g = einsum_p(ct, *[_conj(operands[i]) for i in others],
                     spec=((out_sub,) + tuple(ins[i] for i in others), kept))
        # letters summed only inside operand k: the cotangent is constant along them
        sizes = dict(zip(target, _shape(operands[k])))
        sizes.update(zip(kept, _shape(g)))  # a broadcast (size-1) axis: the walker sums it
        g = reshape(g, tuple(sizes[c] if c in kept else 1 for c in unique))
        g = broadcast_to(g, tuple(sizes[c] for c in unique))
        if len(unique) == len(target):
            return transpose(g, tuple(unique.index(c) for c in target))
        # repeated letters (a diagonal such as 'ii'): put the values on that diagonal
        spec, repeated = _diag_spec(unique, target)
        return einsum_p(g, *[np.eye(sizes[c], dtype=bool) for c in repeated], spec=spec)
    return vjp_k


def _diag_spec(unique, target):
    fresh = [c for c in _LETTERS if c not in target]
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
    fresh = next(c for c in _LETTERS if c not in "".join(ins) + out)
    new_ins = tuple(t if d is None else t[:d] + fresh + t[d:] for t, d in zip(ins, dims))
    return einsum_p(*vals, spec=(new_ins, fresh + out)), 0


einsum_p = primitive("einsum", _einsum_impl, nargs=-1, batch=_batch_einsum)
einsum_p.vjps = _EinsumRules(_einsum_vjp)
einsum_p.jvps = _EinsumRules(_einsum_jvp)


@export(numpy=np.einsum)
def einsum(*operands: str | ArrayLike | Sequence[Any], optimize: bool | str = False,
           **kwargs: Any) -> Array:
    """Differentiable ``numpy.einsum``: every subscript form (implicit or explicit output,
    ellipses, repeated letters, the interleaved operand/sublist form).

    >>> import funcgrad.numpy as fnp
    >>> fnp.einsum("ij,j->i", fnp.ones((2, 3)), fnp.array([1.0, 2.0, 3.0])).tolist()
    [6.0, 6.0]
    """
    if kwargs:
        raise TypeError(f"funcgrad.numpy.einsum: unsupported arguments {sorted(kwargs)}")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], operands[1:]
    else:
        subscripts, arrays = _sublist_to_subscripts(operands)
    arrays = [asarray(a) for a in arrays]
    spec = _einsum_spec(subscripts, [_shape(a) for a in arrays])
    return wrap(einsum_p(*arrays, spec=spec))


def _sublist_to_subscripts(operands):
    items = list(operands)
    out = items.pop() if len(items) % 2 else None
    letter = lambda i: "..." if i is Ellipsis else _LETTERS[i]  # noqa: E731
    ins = ["".join(letter(i) for i in sub) for sub in items[1::2]]
    subs = ",".join(ins) + ("" if out is None else "->" + "".join(letter(i) for i in out))
    return subs, items[0::2]


@export(numpy=np.tensordot)
def tensordot(a: ArrayLike, b: ArrayLike,
              axes: int | Sequence[int] | Sequence[Sequence[int]] = 2) -> Array:
    """Differentiable ``numpy.tensordot``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tensordot(fnp.ones((2, 3)), fnp.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    na, nb = _ndim(a), _ndim(b)
    if np.ndim(axes) == 0:
        axes = (list(range(na - axes, na)), list(range(axes)))
    ax_a, ax_b = (np.atleast_1d(axes[0]) % builtins.max(na, 1)).tolist(), (np.atleast_1d(axes[1]) % builtins.max(nb, 1)).tolist()
    sa = list(_LETTERS[:na])
    sb = list(_LETTERS[na:na + nb])
    for i, j in zip(ax_a, ax_b):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in ax_a] + [c for j, c in enumerate(sb) if j not in ax_b]
    return einsum("".join(sa) + "," + "".join(sb) + "->" + "".join(out), a, b)


@export(numpy=np.kron)
def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.kron``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.kron(fnp.array([1.0, 2.0]), fnp.array([1.0, 10.0])).tolist()
    [1.0, 10.0, 2.0, 20.0]
    """
    a, b = asarray(a), asarray(b)
    nd = builtins.max(_ndim(a), _ndim(b))
    sa = (1,) * (nd - _ndim(a)) + tuple(_shape(a))
    sb = (1,) * (nd - _ndim(b)) + tuple(_shape(b))
    ra = reshape(a, tuple(x for s in sa for x in (s, 1)))
    rb = reshape(b, tuple(x for s in sb for x in (1, s)))
    return wrap(reshape(ra * rb, tuple(x * y for x, y in zip(sa, sb))))


@export(numpy=np.cross)
def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: Axis = None) -> Array:
    """Differentiable ``numpy.cross`` of 3-vectors (and 2-vectors, giving the z component).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cross(fnp.array([0.0, 0.0, 1.0]), fnp.array([1.0, 0.0, 0.0])).tolist()
    [0.0, 1.0, 0.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis_p(asarray(a), axisa, -1)
    b = moveaxis_p(asarray(b), axisb, -1)
    ca = [getitem(a, (Ellipsis, i)) for i in range(_shape(a)[-1])]
    cb = [getitem(b, (Ellipsis, i)) for i in range(_shape(b)[-1])]
    if len(ca) == 2 and len(cb) == 2:
        return wrap(ca[0] * cb[1] - ca[1] * cb[0])
    if len(ca) != 3 or len(cb) != 3:
        raise ValueError("cross: vectors must have 3 (or both 2) components")
    c = stack_p(ca[1] * cb[2] - ca[2] * cb[1], ca[2] * cb[0] - ca[0] * cb[2],
                ca[0] * cb[1] - ca[1] * cb[0], axis=-1)
    return wrap(moveaxis_p(c, -1, axisc))


def _full_convolve(a, v):
    """The full discrete convolution as a gather plus a product: differentiable in both."""
    n, m = _shape(a)[0], _shape(v)[0]
    k = np.arange(n + m - 1)[:, None] - np.arange(n)[None, :]   # index into v
    inside = (k >= 0) & (k < m)
    band = where_p(inside, getitem(v, (np.clip(k, 0, m - 1),)), 0)
    return matmul(band, a)


def _conv_mode(full, n, m, mode):
    if mode == "full":
        return full
    if mode == "same":
        start = (builtins.min(n, m) - 1) // 2
        return getitem(full, (slice(start, start + builtins.max(n, m)),))
    if mode == "valid":
        return getitem(full, (slice(builtins.min(n, m) - 1, builtins.max(n, m)),))
    raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")


@export(numpy=np.convolve)
def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Array:
    """Differentiable ``numpy.convolve`` (1-d).

    >>> import funcgrad.numpy as fnp
    >>> fnp.convolve(fnp.array([1.0, 2.0]), fnp.array([1.0, 1.0])).tolist()
    [1.0, 3.0, 2.0]
    """
    a, v = asarray(a), asarray(v)
    return wrap(_conv_mode(_full_convolve(a, v), _shape(a)[0], _shape(v)[0], mode))


@export(numpy=np.correlate)
def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Array:
    """Differentiable ``numpy.correlate`` (1-d).

    >>> import funcgrad.numpy as fnp
    >>> fnp.correlate(fnp.array([1.0, 2.0, 3.0]), fnp.array([1.0, 1.0])).tolist()
    [3.0, 5.0]
    """
    a, v = asarray(a), asarray(v)
    full = _full_convolve(a, flip(_conj(v)))
    return wrap(_conv_mode(full, _shape(a)[0], _shape(v)[0], mode))


@export(numpy=np.polyval)
def polyval(p: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``numpy.polyval`` (in the coefficients and in `x`), by Horner's rule.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.polyval(fnp.array([1.0, 0.0, 0.0]), x))(3.0).item()  # d(x**2)
    6.0
    """
    p = asarray(p)
    out = zeros_like_p(x) if _ndim(x) else 0.0
    for i in range(_shape(p)[0]):
        out = out * x + getitem(p, i)
    return wrap(out)


@export(numpy=np.interp)
def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | None = None,
           right: ArrayLike | None = None, period: float | None = None) -> Array:
    """Differentiable ``numpy.interp`` in `x` and `fp` (the sample points `xp` are constants).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.interp(x, fnp.array([0.0, 1.0]), fnp.array([0.0, 2.0])))(0.25).item()
    2.0
    """
    if period is not None:
        raise NotImplementedError("funcgrad.numpy.interp: period= is not supported")
    if isinstance(xp, Tracer):
        raise TypeError("interp: the sample points xp must be constants (no derivative flows "
                        "into them); differentiate in x and fp")
    xp = np.asarray(raw(xp))
    fp = asarray(fp)
    n = xp.shape[0]
    # the segment of each x (a constant index, computed by primitives so vmap can batch it)
    j = clip_p(ns.exports["searchsorted"].primitive(xp, x, side="right") - 1, 0, n - 2)
    x0, x1 = getitem(xp, (j,)), getitem(xp, (j + 1,))
    f0, f1 = getitem(fp, (j,)), getitem(fp, (j + 1,))
    out = f0 + (f1 - f0) / (x1 - x0) * (x - x0)
    lo = getitem(fp, 0) if left is None else left
    hi = getitem(fp, n - 1) if right is None else right
    out = where_p(less(x, xp[0]), lo, out)
    return wrap(where_p(greater(x, xp[-1]), hi, out))


@export(numpy=np.vecdot)
def vecdot(x1: ArrayLike, x2: ArrayLike, axis: Axis = -1) -> Array:
    """Differentiable ``numpy.vecdot``: ``sum(conj(x1) * x2, axis)``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.vecdot(fnp.array([1j, 1.0]), fnp.array([1j, 2.0])).item()
    (3+0j)
    """
    return wrap(sum_p(_conj(x1) * x2, axis=axis))


@export(numpy=np.full)
def full(shape: Shape, fill_value: ArrayLike, dtype: DTypeLike | None = None,
         order: str = "C") -> Array:
    """``numpy.full``, differentiable in `fill_value` (its gradient sums the cotangent).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda v: fnp.sum(fnp.full((2, 3), v)))(1.0).item()
    6.0
    """
    value = asarray(fill_value) if dtype is None else astype_public(fill_value, dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return wrap(broadcast_to(value, shape))


@export(numpy=np.full_like)
def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None,
              shape: Shape | None = None) -> Array:
    """``numpy.full_like``, differentiable in `fill_value` (not in `a`, whose values are unused).

    >>> import funcgrad.numpy as fnp
    >>> fnp.full_like(fnp.zeros(2), 7.0).tolist()
    [7.0, 7.0]
    """
    dtype = _dtype(a) if dtype is None else dtype
    return full(_shape(a) if shape is None else shape, fill_value, dtype)


# Kinds of names renamed after export ("reshape_public" -> "reshape") follow their names.
for _stale in [k for k in ns.kinds if k not in ns.exports]:
    ns.kinds[_stale.removesuffix("_public")] = ns.kinds.pop(_stale)
# Aliases added straight into exports (amax is max) share their original's kind.
for _alias, _fn in ns.exports.items():
    if _alias not in ns.kinds:
        ns.kinds[_alias] = next(ns.kinds[k] for k, f in ns.exports.items() if f is _fn and k in ns.kinds)


# --- engine registration -------------------------------------------------------------------
def _take0(x, b):
    return getitem_p(x, template=(b,))


engine.register(
    sum_to_shape=sum_to_shape, broadcast_to=broadcast_to, zeros_like=zeros_like_p,
    moveaxis=moveaxis_p, reshape=reshape, take0=_take0,
    astype=astype, expand_dims=lambda x, axis: _expand(x, axis),
    stack=lambda xs: stack_p(*xs, axis=0),
)
