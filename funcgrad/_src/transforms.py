"""The transforms users call: grad, value_and_grad, vjp, jvp, vmap, stop_gradient.

Each one checks its inputs at the boundary (so errors name the problem and the fix), starts
a trace, runs the user's function on tracers, and reads the answer back off the trace.
"""
from __future__ import annotations

import math
import functools
from typing import Any, Callable, Sequence

import numpy as np

from .batching import AxisError, BatchTrace, BatchTracer, batch_elementwise
from .config import numpy_errors
from .core import Array, Primitive, Tracer, engine, raw, wrap
from .forward import JVPTrace, JVPTracer
from .reverse import ReverseTrace, ReverseTracer, backward
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["grad", "value_and_grad", "vjp", "linear_transpose", "jvp", "vmap",
           "stop_gradient"]


def _identity(x):
    return x


_stop_gradient = Primitive("stop_gradient", _identity, differentiable=False,
                           batch=batch_elementwise)


def stop_gradient(x: Any) -> Any:
    """`x` as a constant: no derivative flows through it. Works on pytrees.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: x * fg.stop_gradient(x))(3.0).item()
    3.0
    """
    leaves, treedef = tree_flatten(x)
    return tree_unflatten(treedef, [wrap(_stop_gradient(leaf)) for leaf in leaves])


# --- checking inputs ------------------------------------------------------------------
def _as_input(x: Any, what: str, transform: str, need_inexact: bool) -> Any:
    """An engine value for an input leaf, or an error naming the problem and the fix."""
    if type(x) is np.ndarray:  # the commonest input first
        value = x
        dtype = x.dtype
    elif isinstance(x, Tracer):
        value = x
        dtype = x.dtype
    else:
        if type(x) is Array:
            x = x._value
        if isinstance(x, (bool, np.bool_)):
            value = np.asarray(x)
        elif isinstance(x, (int, float, complex, np.number, np.ndarray)):
            value = np.asarray(x) if not isinstance(x, (np.ndarray, np.number)) else x
        else:
            raise TypeError(
                f"{transform}: {what} is a {type(x).__name__}, not an array. Pass a float, "
                "a NumPy or funcgrad array, or a pytree (tuple, list, dict, registered class) "
                "of them; mark non-array arguments as static by leaving them out of argnums"
            )
        dtype = value.dtype
    if need_inexact and dtype.kind not in "fc":  # (np.issubdtype(dtype, np.inexact), faster)
        raise TypeError(
            f"{transform}: {what} has dtype {dtype}, but derivatives are only defined for "
            "float (or complex) inputs. Pass a float value (2.0, not 2; x.astype(float) for "
            "an array), or leave the argument out of argnums"
        )
    return value


def _argnums_tuple(argnums, nargs: int, transform: str) -> tuple[int, ...]:
    if type(argnums) is int and 0 <= argnums < nargs:  # the commonest case, checked
        return (argnums,)
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums or not all(isinstance(a, int) and not isinstance(a, bool) for a in nums):
        raise TypeError(f"{transform}: argnums must be an int or a non-empty tuple of ints, "
                        f"got {argnums!r}")
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(
                f"{transform}: argnums={argnums!r} asks for argument {a}, but the function "
                f"was called with {nargs} positional argument(s)"
            )
    normalised = tuple(a % nargs for a in nums)
    if len(set(normalised)) != len(normalised):
        raise ValueError(f"{transform}: argnums={argnums!r} names an argument more than once; "
                         "list each argument once (e.g. argnums=(0, 1))")
    return normalised


def _split_aux(out, has_aux: bool, transform: str, trace=None):
    """(output, aux); aux leaves traced by `trace` come back as plain values, as in JAX."""
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{transform} with has_aux=True needs the function to return a pair "
                        f"(output, aux), got {type(out).__name__}")
    leaves, treedef = tree_flatten(out[1])
    aux = tree_unflatten(treedef, [wrap(_strip(leaf, trace)) if isinstance(leaf, Array) else leaf
                                   for leaf in leaves])
    return out[0], aux


def _strip(x, trace):
    """The value one level below `trace` (constants are already there)."""
    if isinstance(x, Tracer) and x._trace is trace:
        return x._value
    return raw(x)


# --- reverse mode -----------------------------------------------------------------------
def _trace_reverse(f, args, kwargs, argnums, transform):
    """Run `f` with the `argnums` arguments traced; return (trace, out, leaf ids, treedefs)."""
    trace = ReverseTrace()
    args = list(args)
    leaves_per_arg = []
    leaf = trace.leaf
    for a in argnums:
        leaves, treedef = tree_flatten(args[a])
        what = f"argument {a}"
        tracers = [leaf(_as_input(x, what, transform, True)) for x in leaves]
        leaves_per_arg.append((treedef, tracers))
        args[a] = tree_unflatten(treedef, tracers)
    try:
        with numpy_errors():
            out = f(*args, **kwargs)
    finally:
        trace.alive = False
    return trace, out, leaves_per_arg


def _leaf_cts(cts, leaves_per_arg):
    grads = []
    k = 0
    for treedef, tracers in leaves_per_arg:
        leaf_cts = []
        for t in tracers:
            ct = cts[k]
            k += 1
            leaf_cts.append(wrap(engine.zeros_like(t._value) if ct is None else ct))
        grads.append(tree_unflatten(treedef, leaf_cts))
    return grads


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """A function returning ``(f(*args), gradient)``; see `grad` for the arguments.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> value, g = fg.value_and_grad(lambda x: fnp.sum(x ** 2))(fnp.array([1.0, 2.0]))
    >>> value.item(), g.tolist()
    (5.0, [2.0, 4.0])
    """
    return _value_and_grad(f, argnums, has_aux, holomorphic, "value_and_grad")


def _value_and_grad(f, argnums, has_aux, holomorphic, transform):
    """value_and_grad, with errors naming `transform` (grad's say grad)."""

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), transform)
        with numpy_errors():  # (set up once here: the forward and backward passes reuse it)
            trace, out, leaves_per_arg = _trace_reverse(f, args, kwargs, nums, transform)
            out, aux = _split_aux(out, has_aux, transform, trace)
            out_value, dtype, shape = _scalar_output(out, trace, transform, has_aux)
            if holomorphic:
                _check_holomorphic(leaves_per_arg, dtype, transform)
            elif dtype.kind != "f":
                raise TypeError(
                    f"{transform} needs a real float output, got dtype {dtype}. "
                    + ("Use grad(..., holomorphic=True) or take the real part (.real) "
                       "of a complex output" if dtype.kind == "c"
                       else "Differentiate a float quantity (integers and bools have no "
                       "derivative)")
                )
            n_leaves = _count_leaves(leaves_per_arg)
            if type(out) is ReverseTracer and out._trace is trace:
                # (np.array, not np.ones, for the usual 0-d output: 0.14 us against 1.2)
                seed = np.array(1, dtype) if shape == () else np.ones(shape, dtype)
                cts = backward(trace.tape, [out._id], [seed], n_leaves,
                               consume=True)
            else:
                cts = [None] * n_leaves
        grads = _leaf_cts(cts, leaves_per_arg)
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        value = wrap(out_value)
        return ((value, aux), g) if has_aux else (value, g)

    return value_and_grad_f


def _scalar_output(out, trace, transform: str, has_aux: bool):
    """(the value below `trace`, its dtype, its shape) of a scalar output, or JAX's
    TypeError."""
    if isinstance(out, (tuple, list, dict)) or out is None:
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output was {out!r}. "
            f"{transform} needs the function to return one scalar array, got a "
            f"{type(out).__name__}; sum its parts, or use vjp / jacrev for several "
            "outputs" + ("" if has_aux else " (has_aux=True returns (output, aux))")
        )
    out_value = _strip(out, trace)
    shape = out_value.shape if isinstance(out_value, (np.ndarray, np.generic, Array)) \
        else np.shape(out_value)
    if shape != () and math.prod(shape) != 1:
        # One element in any shape is accepted, as HIPS autograd accepts it (its own tests
        # take grad of sum(..., keepdims=True)); JAX refuses shape (1,). The gradient is
        # that element's, so nothing is lost by the leniency.
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had shape: {shape}. "
            f"{transform} needs a scalar output: reduce it first (.sum(), .mean()), or use "
            "vjp or jacrev for a non-scalar output"
        )
    dtype = out_value.dtype if isinstance(out_value, (np.ndarray, np.generic, Array)) \
        else np.result_type(out_value)
    return out_value, dtype, shape


def _count_leaves(leaves_per_arg) -> int:
    return sum(len(tracers) for _, tracers in leaves_per_arg)


def _check_holomorphic(leaves_per_arg, out_dtype, transform):
    for _, tracers in leaves_per_arg:
        for t in tracers:
            if t.dtype.kind != "c":
                raise TypeError(f"{transform}(..., holomorphic=True) needs complex inputs, got "
                                f"dtype {t.dtype}: cast with x.astype(complex)")
    if np.dtype(out_dtype).kind != "c":
        raise TypeError(f"{transform}(..., holomorphic=True) needs a complex output, got dtype "
                        f"{out_dtype}; for a real output leave holomorphic=False")


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """The gradient of scalar-valued `f` with respect to argument(s) `argnums`.

    The gradient has the structure, shape and dtype of the differentiated argument(s); a
    tuple of them when `argnums` is a tuple. With ``has_aux=True``, `f` returns
    ``(output, aux)`` and the result is ``(gradient, aux)``. With ``holomorphic=True``, a
    complex function of complex inputs gets its complex derivative f'(z).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.sin)(0.0).item()
    1.0
    >>> fg.grad(fg.grad(fnp.tanh))(0.0).item()  # higher order by nesting
    -0.0
    """
    value_and_grad_f = _value_and_grad(f, argnums, has_aux, holomorphic, "grad")

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(out, vjp_fn)``: `f` evaluated at `primals`, and the function that maps an output
    cotangent to the cotangents of `primals` (a tuple, one per primal). `vjp_fn` may be
    called many times.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> out, vjp_fn = fg.vjp(fnp.sin, fnp.array([0.0, 1.0]))
    >>> (ct_x,) = vjp_fn(fnp.ones_like(out))
    >>> fnp.allclose(ct_x, fnp.cos(fnp.array([0.0, 1.0])))
    True
    """
    transform = "vjp"
    trace, out, leaves_per_arg = _trace_reverse(f, primals, {}, tuple(range(len(primals))),
                                                transform)
    out, aux = _split_aux(out, has_aux, transform, trace)
    out_leaves, out_def = tree_flatten(out)
    out_ids = []
    out_values = []
    for leaf in out_leaves:
        if isinstance(leaf, ReverseTracer) and leaf._trace is trace:
            out_ids.append(leaf._id)
        else:
            out_ids.append(None)
        out_values.append(_strip(leaf, trace))
    n_leaves = _count_leaves(leaves_per_arg)
    tape = trace.tape

    def vjp_fn(ct):
        ct_leaves, ct_def = tree_flatten(ct)
        if ct_def != out_def:
            raise TypeError(f"vjp_fn: the cotangent's structure {ct_def} does not match the "
                            f"output's structure {out_def}; pass one array per output leaf")
        checked = [_check_cotangent(c, v, i) for i, (c, v) in enumerate(zip(ct_leaves, out_values))]
        cts = backward(tape, out_ids, checked, n_leaves, consume=False)
        return tuple(_leaf_cts(cts, leaves_per_arg))

    out_wrapped = tree_unflatten(out_def, [wrap(v) for v in out_values])
    return (out_wrapped, vjp_fn, aux) if has_aux else (out_wrapped, vjp_fn)


def _check_cotangent(ct, out_value, i):
    # The output may be an outer transform's tracer: read its dtype, never convert it.
    out_dtype = getattr(out_value, "dtype", None)
    out_dtype = np.result_type(out_value) if out_dtype is None else np.dtype(out_dtype)
    value = raw(ct)
    if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
        # a Python number takes the output's dtype (a complex one stays complex, so a
        # complex cotangent for a real output is refused below, not silently made real)
        value = np.asarray(value, dtype=np.result_type(out_dtype, value))
    shape = np.shape(value)
    out_shape = np.shape(out_value)
    if shape != out_shape:
        raise ValueError(f"vjp_fn: cotangent {i} has shape {shape}, but the output it "
                         f"belongs to has shape {out_shape}; pass an array of that shape "
                         "(e.g. funcgrad.numpy.ones_like(out))")
    if out_dtype.kind not in "fc":
        # an integer or bool output carries no derivative: JAX takes any cotangent of its
        # shape for it (HIPS autograd's tests pass 1.0 for x == y), and it contributes zero
        return np.zeros(out_shape, out_dtype)
    dtype = value.dtype
    if dtype != out_dtype:
        raise TypeError(f"vjp_fn: cotangent {i} has dtype {dtype}, but its output has dtype "
                        f"{out_dtype}; cast it with .astype({out_dtype.name!r})")
    return value


def linear_transpose(f: Callable, *primals: Any) -> Callable:
    """The transpose of a linear function `f`, as ``jax.linear_transpose``: a function
    mapping a cotangent of `f`'s output to the cotangents of its inputs, a tuple with one
    per primal. `primals` give the inputs' structures, shapes and dtypes; their values do
    not matter (a linear map's transpose is the same everywhere, so `f` runs on zeros). `f`
    must be linear in its inputs: for any other function this is its VJP at zero.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> a = fnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> f_t = fg.linear_transpose(lambda x: a @ x, fnp.zeros(2))
    >>> f_t(fnp.array([1.0, 1.0, 0.0]))[0].tolist()
    [4.0, 6.0]
    """
    zeros = []
    for p in primals:
        leaves, treedef = tree_flatten(p)
        zeros.append(tree_unflatten(treedef, [
            np.zeros(np.shape(leaf), _as_input(leaf, "a primal", "linear_transpose", True).dtype)
            for leaf in leaves]))
    _, vjp_fn = vjp(f, *zeros)

    @functools.wraps(f)
    def transposed_f(ct):
        return vjp_fn(ct)

    return transposed_f


# --- forward mode -----------------------------------------------------------------------
def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(f(*primals), J @ tangents)`` in one forward pass; with ``has_aux=True``, `f`
    returns ``(output, aux)`` and the result is ``(output, tangent, aux)``.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> out, t = fg.jvp(fnp.sin, (0.0,), (2.0,))
    >>> out.item(), t.item()
    (0.0, 2.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(f, primals, tangents): primals and tangents must be tuples or "
                        "lists with one entry per argument of f, e.g. jvp(f, (x,), (v,))")
    p_leaves, p_def = tree_flatten(tuple(primals))
    t_leaves, t_def = tree_flatten(tuple(tangents))
    if p_def != t_def:
        raise TypeError(f"jvp: tangents have structure {t_def}, primals have {p_def}; "
                        "give one tangent per primal, of the same structure")
    trace = JVPTrace()
    tracers = []
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        p_value = _as_input(p, f"primal {i}", "jvp", True)
        t_value = _check_tangent(t, p_value, i)
        tracers.append(JVPTracer(trace, p_value, t_value))
    try:
        with numpy_errors():
            out = f(*tree_unflatten(p_def, tracers))
    finally:
        trace.alive = False
    out, aux = _split_aux(out, has_aux, "jvp", trace)
    out_leaves, out_def = tree_flatten(out)
    outs, t_outs = [], []
    for leaf in out_leaves:
        if isinstance(leaf, JVPTracer) and leaf._trace is trace:
            outs.append(leaf._value)
            t_outs.append(leaf._tangent if leaf._tangent is not None
                          else engine.zeros_like(leaf._value))
        else:
            v = raw(leaf)
            outs.append(v)
            t_outs.append(engine.zeros_like(v))
    out = tree_unflatten(out_def, [wrap(o) for o in outs])
    t_out = tree_unflatten(out_def, [wrap(t) for t in t_outs])
    return (out, t_out, aux) if has_aux else (out, t_out)


def _check_tangent(t, primal, i):
    value = raw(t)
    if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
        # a Python number takes the primal's dtype (a complex one stays complex, so that a
        # complex tangent for a real primal is refused below, not silently made real)
        value = np.asarray(value, dtype=np.result_type(primal.dtype, value))
    if not hasattr(value, "shape"):
        raise TypeError(f"jvp: tangent {i} is a {type(value).__name__}, not an array")
    if value.shape != primal.shape:
        raise ValueError(f"jvp: tangent {i} has shape {value.shape}, its primal has "
                         f"{primal.shape}; tangents must match their primals' shapes")
    if value.dtype != primal.dtype:
        raise TypeError(f"jvp: tangent {i} has dtype {value.dtype}, its primal has "
                        f"{primal.dtype}; cast it with .astype({primal.dtype.name!r})")
    return value


# --- batching ---------------------------------------------------------------------------
def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None) -> Callable:
    """Map `f` over an axis of its arguments, as one vectorised call.

    `in_axes` is an int (the mapped axis of every argument), None (not mapped: the same
    value for every example) or a pytree prefix of the arguments holding ints and Nones;
    `out_axes` likewise for the output, where None is allowed only for outputs that do not
    depend on the mapped arguments. Keyword arguments are mapped along axis 0, as in JAX.
    `axis_size` gives the batch size where no argument is mapped (and is checked against
    it where some are); `axis_name` is accepted for JAX code and names nothing yet (funcgrad
    has no collectives).
    Every primitive has a batch rule, so `f` runs once on whole batches; vmap nests with
    itself and with grad, jvp and the other transforms.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.vmap(lambda row: fnp.sum(row ** 2))(fnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [5.0, 25.0]
    >>> fg.vmap(lambda x, w: x @ w, in_axes=(1, None))(fnp.eye(2), fnp.array([3.0, 4.0])).tolist()
    [3.0, 4.0]
    """

    if axis_size is not None and (not isinstance(axis_size, int) or isinstance(axis_size, bool)
                                  or axis_size < 0):
        raise TypeError(f"vmap: axis_size must be a non-negative int, got {axis_size!r}")
    _check_axes_spec(in_axes, "in_axes", in_axes)
    _check_axes_spec(out_axes, "out_axes", out_axes)
    if isinstance(in_axes, list):  # JAX reads a list as a tuple here
        in_axes = tuple(in_axes)

    @functools.wraps(f)
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                f"the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        axes = _broadcast_prefix(in_axes, tuple(args), "in_axes")
        axes += [0] * len(tree_flatten(kwargs)[0])
        leaves, treedef = tree_flatten((tuple(args), kwargs))
        values = [leaf if isinstance(leaf, Tracer) else np.asarray(raw(leaf)) for leaf in leaves]
        size = None
        traced = []
        for leaf, value, ax in zip(leaves, values, axes):
            if ax is None:
                traced.append(leaf)
                continue
            shape = tuple(value.shape)
            if not -len(shape) <= ax < len(shape):
                raise ValueError(f"vmap: in_axes {ax} is out of range for an argument of "
                                 f"shape {shape}")
            if size is not None and shape[ax] != size:
                raise ValueError(f"vmap: mapped axes have different sizes ({size} and "
                                 f"{shape[ax]}); every mapped argument needs the same length "
                                 "along its axis")
            size = shape[ax]
            traced.append(ax % len(shape))  # the tracer is made once the trace exists
        if axis_size is not None:
            if size is not None and size != axis_size:
                raise ValueError(f"vmap: axis_size={axis_size}, but the mapped axes have "
                                 f"size {size}; give the same size, or leave axis_size out")
            size = axis_size
        if size is None:
            raise ValueError("vmap: no argument is mapped (every in_axes is None); map one, "
                             "or give axis_size=n to repeat the function n times")
        trace = BatchTrace(size)
        traced = [BatchTracer(trace, value, t) if ax is not None else t
                  for t, value, ax in zip(traced, values, axes)]
        args, kwargs = tree_unflatten(treedef, traced)
        try:
            with numpy_errors():
                out = f(*args, **kwargs)
        finally:
            trace.alive = False
        out_leaves, out_def = tree_flatten(out)
        o_axes = _broadcast_prefix(out_axes, out, "out_axes")
        return tree_unflatten(out_def, [_unbatch(leaf, ax, trace, size)
                                        for leaf, ax in zip(out_leaves, o_axes)])

    return vmapped


def _unbatch(leaf, ax, trace, size):
    """One output of a vmapped function, with its batch axis at `ax`."""
    if isinstance(leaf, BatchTracer) and leaf._trace is trace:
        if ax is None:
            raise ValueError(
                "vmap: out_axes is None for an output that varies along the mapped axis; "
                "give it an axis (e.g. out_axes=0), or return only the parts that do not "
                "depend on the mapped arguments there")
        value = leaf._value
        dest = _out_axis(ax, len(value.shape))
        return wrap(engine.moveaxis(value, leaf._bdim, dest) if leaf._bdim != dest else value)
    value = raw(leaf)
    if ax is None:
        return wrap(value)
    # the same for every example: broadcast along a new batch axis
    shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
    dest = _out_axis(ax, len(shape) + 1)
    value = engine.broadcast_to(engine.expand_dims(value, 0), (size,) + shape)
    return wrap(engine.moveaxis(value, 0, dest) if dest else value)


def _out_axis(ax, ndim):
    """`out_axes` entry `ax` for a batched output of `ndim` dimensions, checked."""
    if not -ndim <= ax < ndim:
        raise AxisError(f"vmap: out_axes={ax} is out of bounds for an output of "
                        f"{ndim - 1} dimension(s) (plus the mapped axis: {ndim}); use an "
                        f"axis in [{-ndim}, {ndim - 1}]")
    return ax % ndim


def _check_axes_spec(spec, what, whole):
    """An axis spec holds ints and Nones, in tuples, lists and dicts: anything else is a
    TypeError at the boundary (a float, a string or a bool is no axis)."""
    if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
        return
    if isinstance(spec, (tuple, list)):
        for s in spec:
            _check_axes_spec(s, what, whole)
        return
    if isinstance(spec, dict):
        for s in spec.values():
            _check_axes_spec(s, what, whole)
        return
    raise TypeError(
        f"vmap {what} must be an int, None, or a tuple of entries corresponding to the "
        f"{'positional arguments passed to the function' if what == 'in_axes' else 'outputs'}"
        f", but got {whole!r}: {spec!r} is not an axis. Use an int (the mapped axis), None "
        "(not mapped), or a tuple/list/dict of those shaped like the "
        f"{'arguments' if what == 'in_axes' else 'output'}")


def _broadcast_prefix(prefix, tree, what):
    """One axis per leaf of `tree`, from an axis spec that is a prefix of its structure."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(prefix) != len(tree):
            raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                             f"corresponding value: it has {len(prefix)} entries where the "
                             f"value has {len(tree)}; give one per entry")
        return [ax for p, t in zip(prefix, tree) for ax in _broadcast_prefix(p, t, what)]
    if isinstance(prefix, dict) and isinstance(tree, dict):
        missing = [k for k in tree if k not in prefix]
        extra = [k for k in prefix if k not in tree]
        if missing or extra:
            raise ValueError(
                f"vmap {what} specification must be a tree prefix of the corresponding "
                f"value: a dict in {what} "
                + (f"lacks the key(s) {', '.join(map(repr, missing))}" if missing else "")
                + (" and " if missing and extra else "")
                + (f"has key(s) {', '.join(map(repr, extra))} the value does not have"
                   if extra else "")
                + f"; give the dict exactly the value's keys ({', '.join(map(repr, tree))})")
        return [ax for k in sorted(tree)
                for ax in _broadcast_prefix(prefix[k], tree[k], what)]
    raise ValueError(f"vmap {what} specification must be a tree prefix of the corresponding "
                     f"value: {what}={prefix!r} does not match a {type(tree).__name__}; use "
                     "an int, None, or a tuple/list/dict shaped like it")
