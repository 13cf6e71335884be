"""Whole derivatives from the three building blocks: linearize (a recorded JVP), jacfwd and
jacrev (vmap over a basis of tangents or cotangents), hessian and hvp (forward over reverse).

Output structure follows JAX: a Jacobian is a pytree shaped like the output whose every leaf
is a pytree shaped like the differentiated argument(s) (a tuple of them when `argnums` is a
tuple); a block for output leaf of shape ``S`` and input leaf of shape ``T`` has shape
``S + T``.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from .core import Array, Tracer, engine, raw, wrap
from .program import ProgramTrace, replay
from .reverse import ReverseTracer
from .transforms import _argnums_tuple, _as_input, grad, jvp, vjp, vmap
from .tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["linearize", "jacfwd", "jacrev", "jacobian", "hessian", "hvp"]


# --- linearize ----------------------------------------------------------------------------
def linearize(f: Callable, *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(f(*primals), f_jvp)``: `f_jvp(*tangents)` evaluates the JVP at `primals` without
    running `f` again. The primal part runs once; the tangent part is recorded as a program
    of primitives on constants computed then, and `f_jvp` replays only that program.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> out, f_jvp = fg.linearize(fnp.sin, fnp.array([0.0, 3.14159265]))
    >>> f_jvp(fnp.array([1.0, 2.0])).round(6).tolist()
    [1.0, -2.0]
    """
    p_leaves, p_def = tree_flatten(tuple(primals))
    values = [_as_input(p, f"primal {i}", "linearize", True) for i, p in enumerate(p_leaves)]
    recorder = ProgramTrace()
    placeholders = [recorder.leaf(engine.zeros_like(v)) for v in values]
    n_leaves = len(recorder.tape)
    try:
        out, t_out = jvp(f, tree_unflatten(p_def, values), tree_unflatten(p_def, placeholders))
    finally:
        recorder.alive = False
    t_leaves, out_def = tree_flatten(t_out)
    out_ids = []
    constants = []
    for t in t_leaves:
        if isinstance(t, ReverseTracer) and t._trace is recorder:
            out_ids.append(t._id)
            constants.append(None)
        else:  # an output whose tangent does not depend on the inputs' tangents
            out_ids.append(None)
            constants.append(raw(t))
    tape = recorder.tape
    shapes = [(np.shape(v) if not isinstance(v, Tracer) else v.shape, v.dtype) for v in values]

    def f_jvp(*tangents):
        leaves, t_def = tree_flatten(tuple(tangents))
        if t_def != p_def:
            raise TypeError(f"f_jvp: tangents have structure {t_def}, the primals had "
                            f"{p_def}; pass one tangent per primal, shaped like it")
        checked = []
        for i, (t, (shape, dtype)) in enumerate(zip(leaves, shapes)):
            t = raw(t)
            if isinstance(t, (int, float)):
                t = np.asarray(t, dtype=dtype)
            if tuple(t.shape) != tuple(shape):
                raise ValueError(f"f_jvp: tangent {i} has shape {tuple(t.shape)}, its primal "
                                 f"has {tuple(shape)}")
            checked.append(t)
        results = replay(tape, n_leaves, checked, out_ids)
        return tree_unflatten(out_def, [wrap(c if r is None else r)
                                        for r, c in zip(results, constants)])

    return out, f_jvp


# --- Jacobians ----------------------------------------------------------------------------
def _shape_dtype(x):
    if isinstance(x, Array):
        return tuple(x.shape), x.dtype
    value = np.asarray(x)
    return value.shape, (value.dtype if np.issubdtype(value.dtype, np.inexact)
                         else np.dtype(np.float64))


def _basis(shapes_dtypes):
    """One identity, cut into one slab per leaf: slab k has shape ``(total,) + shape_k``."""
    sizes = [int(np.prod(s, dtype=np.int64)) for s, _ in shapes_dtypes]
    total = sum(sizes)
    slabs = []
    offset = 0
    for (shape, dtype), size in zip(shapes_dtypes, sizes):
        eye = np.zeros((total, size), dtype=dtype)
        eye[offset:offset + size] = np.eye(size, dtype=dtype)
        slabs.append(eye.reshape((total,) + tuple(shape)))
        offset += size
    return slabs, sizes, total


def _offsets(sizes):
    out = [0]
    for s in sizes:
        out.append(out[-1] + s)
    return out


def _with_dynamic(f, args, nums):
    """`f` as a function of the `nums` arguments only, the others held fixed."""
    def partial(*dynamic):
        full = list(args)
        for n, d in zip(nums, dynamic):
            full[n] = d
        return f(*full)
    return partial


def _check_input_dtypes(transform: str, dynamic: tuple) -> None:
    """JAX's first step: a check mapped over the differentiated arguments (so a registered
    class is rebuilt from the check's None results, as JAX rebuilds it)."""
    def check(x):
        dtype = x.dtype if isinstance(x, (Array, np.ndarray, np.generic)) else \
            np.asarray(x).dtype
        if dtype.kind not in "fc":
            if transform == "jacrev":
                raise TypeError(
                    "jacrev requires real- or complex-valued inputs (input dtype that is a "
                    f"sub-dtype of np.inexact), but got {dtype}. Pass float values "
                    "(2.0, not 2; x.astype(float)), or leave the argument out of argnums")
            raise TypeError(
                "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                f"np.floating), but got {dtype}. Pass float values (2.0, not 2; "
                "x.astype(float)), or leave the argument out of argnums")
        return None
    tree_map(check, dynamic)


def _input_tree(argnums, nums, args):
    """The structure a Jacobian's inner pytree takes: the argument's, or a tuple of them."""
    dynamic = tuple(args[n] for n in nums)
    return dynamic[0] if isinstance(argnums, int) else dynamic


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of `f` by reverse mode: one vectorised VJP over a basis of output
    cotangents. Best when outputs are fewer than inputs.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.jacrev(lambda x: x ** 2)(fnp.array([1.0, 3.0])).tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """
    @functools.wraps(f)
    def jacobian_fn(*args):
        nums = _argnums_tuple(argnums, len(args), "jacrev")
        dynamic = tuple(args[n] for n in nums)
        _check_input_dtypes("jacrev", dynamic)
        result = vjp(_with_dynamic(f, args, nums), *dynamic, has_aux=has_aux)
        out, vjp_fn = result[0], result[1]
        out_leaves, out_def = tree_flatten(out)
        slabs, sizes, total = _basis([_shape_dtype(o) for o in out_leaves])
        in_tree = _input_tree(argnums, nums, args)
        in_leaves, in_def = tree_flatten(in_tree)
        in_info = [_shape_dtype(x) for x in in_leaves]
        if total == 0:
            cts = [np.zeros((0,) + tuple(s), dtype=d) for s, d in in_info]
        else:
            pulled = vmap(vjp_fn)(tree_unflatten(out_def, slabs))
            cts = tree_flatten(pulled[0] if isinstance(argnums, int) else pulled)[0]
        offsets = _offsets(sizes)
        blocks = []
        for k, (o, size) in enumerate(zip(out_leaves, sizes)):
            o_shape = _shape_dtype(o)[0]
            per_input = [engine.reshape(_rows(ct, offsets[k], size, total), o_shape + tuple(s))
                         for ct, (s, _) in zip(cts, in_info)]
            blocks.append(tree_unflatten(in_def, [wrap(b) for b in per_input]))
        jac = tree_unflatten(out_def, blocks)
        return (jac, result[2]) if has_aux else jac

    return jacobian_fn


jacobian = jacrev


def _rows(x, start, size, total):
    x = raw(x)
    if start == 0 and size == total:
        return x
    return engine.take0(x, slice(start, start + size))


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of `f` by forward mode: one vectorised JVP over a basis of input
    tangents. Best when inputs are fewer than outputs.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.jacfwd(lambda x: fnp.sin(x) * x[0])(fnp.array([0.0, 1.0])).round(4).tolist()
    [[0.0, 0.0], [0.8415, 0.0]]
    """
    @functools.wraps(f)
    def jacobian_fn(*args):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        dynamic = tuple(args[n] for n in nums)
        _check_input_dtypes("jacfwd", dynamic)
        d_leaves, d_def = tree_flatten(dynamic)
        in_info = [_shape_dtype(x) for x in d_leaves]
        slabs, sizes, total = _basis(in_info)
        partial = _with_dynamic(f, args, nums)

        def push(*tangent_leaves):
            result = jvp(partial, dynamic, tree_unflatten(d_def, list(tangent_leaves)),
                         has_aux=has_aux)
            return (result[1], result[2]) if has_aux else result[1]

        if has_aux:
            t_out, aux = vmap(push, out_axes=(0, None))(*slabs)
        else:
            t_out = vmap(push)(*slabs)
        t_leaves, out_def = tree_flatten(t_out)
        offsets = _offsets(sizes)
        in_tree_def = tree_flatten(_input_tree(argnums, nums, args))[1]
        blocks = []
        for t in t_leaves:
            o_shape = tuple(t.shape[1:])
            o_size = int(np.prod(o_shape, dtype=np.int64))
            per_input = []
            for j, (shape, _) in enumerate(in_info):
                rows = _rows(t, offsets[j], sizes[j], total)
                rows = engine.reshape(rows, (sizes[j], o_size))
                per_input.append(wrap(engine.reshape(engine.moveaxis(rows, 0, 1),
                                                     o_shape + tuple(shape))))
            blocks.append(tree_unflatten(in_tree_def, per_input))
        jac = tree_unflatten(out_def, blocks)
        return (jac, aux) if has_aux else jac

    return jacobian_fn


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Hessian of scalar `f`: ``jacfwd(jacrev(f))``, forward over reverse.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.hessian(lambda x: fnp.sum(x ** 3))(fnp.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(f, argnums, has_aux), argnums, has_aux)


def hvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """The Hessian of scalar `f` at `primals` applied to `tangents`, without forming it:
    the JVP of the gradient (forward over reverse). All arguments are differentiated; the
    result has the structure of `primals` (a single array for a single primal).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> x, v = fnp.array([1.0, 2.0]), fnp.array([1.0, 1.0])
    >>> fg.hvp(lambda x: fnp.sum(x ** 3), (x,), (v,)).tolist()
    [6.0, 12.0]
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("hvp(f, primals, tangents): primals and tangents must be tuples, "
                        "e.g. hvp(f, (x,), (v,))")
    nums = tuple(range(len(primals)))
    gradient = grad(f, argnums=nums[0] if len(nums) == 1 else nums)
    return jvp(gradient, tuple(primals), tuple(tangents))[1]
