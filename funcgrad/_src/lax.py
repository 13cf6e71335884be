"""Structured control flow as JAX's ``lax``: cond, switch, select, while_loop, fori_loop,
scan, map, associative_scan.

funcgrad's transforms carry concrete values, so a loop here is a Python loop over traced
values and every transform sees each step's operations: forward and reverse mode through
cond, fori_loop and scan come for free, as does vmap of a loop whose trip count does not
depend on the batch. What needs care is done here, as JAX does it:

* a predicate batched by vmap cannot choose one branch: cond and switch run every branch
  and select per example; while_loop runs until every example is done, each example keeping
  its last value once its own predicate is false;
* reverse mode through a while_loop is refused (JAX's ValueError, raised when gradients flow
  back into the loop), since its trip count is dynamic; fori_loop with fixed bounds is a
  scan and differentiates both ways;
* each loop step is one call of one function ``step(carry, x) -> (carry, y)``. Before
  looping, the innermost trace of the inputs is asked for ``process_scan`` (and cond for
  ``process_cond``, while_loop for ``process_while``): a trace that compiles (jit) can
  record the step once and emit a loop, instead of seeing it unrolled; a trace without
  the method gets the Python loop.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .batching import (BatchTrace, BatchTracer, batch_elementwise, front_or_broadcast,
                       move_to_front)
from .core import Array, FuncgradError, Primitive, Trace, Tracer, engine, raw, wrap
from .forward import JVPTrace, JVPTracer
from .reverse import ReverseTrace
from .tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_map, tree_unflatten

__all__ = ["cond", "switch", "select", "while_loop", "fori_loop", "scan", "map",
           "associative_scan"]


# --- select: the one primitive of this module --------------------------------------------
def _select_impl(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


def _select_true_rule(t, out, pred, on_true, on_false):
    return select_p(pred, t, 0)


def _select_false_rule(t, out, pred, on_true, on_false):
    return select_p(pred, 0, t)


select_p = Primitive("select", _select_impl, nargs=3,
                     vjps=(None, _select_true_rule, _select_false_rule),
                     jvps=(None, _select_true_rule, _select_false_rule),
                     batch=batch_elementwise,
                     doc="``on_true`` where ``pred`` holds, else ``on_false`` (broadcasting).")


def _unstack_impl(x):
    return tuple(x)


def _unstack_vjp(ct, out, x):
    return engine.stack(list(ct))


def _unstack_batch(prim, vals, dims):
    (x,), (d,) = vals, dims
    if d != 1:  # the unstacked axis first, the batch axis next: each row batched along 0
        x = engine.moveaxis(x, d, 1)
    return prim(x), 0


# The rows of an array along its first axis, in one step: a loop reads its inputs' rows
# through this, so the backward pass stacks their cotangents once (indexing row by row
# would scatter each into a zero array of the whole input: quadratic in the length).
unstack_p = Primitive("unstack", _unstack_impl, vjps=(_unstack_vjp,), linear=True,
                      multiple_results=True, batch=_unstack_batch,
                      doc="The rows of an array along its first axis, as a tuple.")


def select(pred: Any, on_true: Any, on_false: Any) -> Array:
    """Elementwise choice: `on_true` where `pred` is True, `on_false` elsewhere. Unlike
    ``numpy.where`` it neither broadcasts nor promotes: the two cases share shape and dtype,
    and `pred` is a scalar or of their shape (as JAX's ``lax.select``).

    >>> import funcgrad.numpy as fnp
    >>> select(fnp.array([True, False]), fnp.ones(2), fnp.zeros(2)).tolist()
    [1.0, 0.0]
    """
    shape_t, shape_f, shape_p = _shape(on_true), _shape(on_false), _shape(pred)
    if shape_t != shape_f:
        raise TypeError(f"select cases must have the same shapes, got {list(shape_t)} and "
                        f"{list(shape_f)}. Broadcast them first, or use funcgrad.numpy.where")
    if shape_p and shape_p != shape_t:
        raise TypeError(f"select pred must be scalar or have the same shape as cases, got pred "
                        f"shape {list(shape_p)} for cases of shape {list(shape_t)}")
    if _dtype(pred) != np.bool_:
        raise TypeError(f"select pred must be boolean type, got {_dtype(pred)}. Compare first "
                        "(x > 0), or use funcgrad.numpy.where")
    if _dtype(on_true) != _dtype(on_false):
        raise TypeError("lax.select requires arguments to have the same dtypes, got "
                        f"{_dtype(on_true)}, {_dtype(on_false)}. (Tip: funcgrad.numpy.where "
                        "is a similar function that does automatic type promotion on inputs).")
    return wrap(select_p(pred, on_true, on_false))


def _shape(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _dtype(x) -> np.dtype:
    dtype = getattr(x, "dtype", None)
    return dtype if dtype is not None else np.asarray(x).dtype


# --- what the traces say about a value ---------------------------------------------------
def _traces_of(x):
    """Every live trace that `x` carries, through nested tracers and forward tangents."""
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, Tracer):
            if v._trace.alive:
                yield v._trace
            stack.append(v._value)
            if isinstance(v, JVPTracer) and v._tangent is not None:
                stack.append(v._tangent)


def _is_batched(x) -> bool:
    return any(isinstance(t, BatchTrace) for t in _traces_of(x))


def _concrete_bool(pred) -> bool | None:
    """The predicate's value, or None where no single value exists: batched by vmap, or
    abstract (a trace that knows shapes only, as jit's)."""
    if _is_batched(pred):
        return None
    try:
        return bool(pred)
    except FuncgradError:
        return None


def _concrete_int(bound) -> int | None:
    """A loop bound's value, or None where no single value exists (as `_concrete_bool`)."""
    if _is_batched(bound):
        return None
    try:
        return int(bound)
    except FuncgradError:
        return None


def _bottom(x):
    while isinstance(x, Array):
        x = x._value
    return x


def _hook(name: str, trees: Sequence[Any], functions: Sequence[Callable] = (),
          below: int | None = None):
    """The innermost trace's ``process_<name>``, or None. The trace is looked for among the
    leaves of `trees` and the values `functions` close over (a loop body often reads traced
    values from its closure, not from its carry); with `below`, among traces of lower levels
    only (a loop run beneath a vmap)."""
    top = None
    for leaf in tree_flatten(list(trees))[0] + _closed_over(functions):
        while below is not None and isinstance(leaf, Tracer) and leaf._trace.level >= below:
            leaf = leaf._value  # the value one level down, under the vmap
        if isinstance(leaf, Tracer) and leaf._trace.alive and \
                (top is None or leaf._trace.level > top.level):
            top = leaf._trace
    return None if top is None else getattr(top, "process_" + name, None)


def _closed_over(functions: Sequence[Callable], depth: int = 3) -> list:
    """Tracers in the closures of `functions` (and of the functions those close over)."""
    found: list = []
    seen: set = set()
    todo = [(f, 0) for f in functions]
    while todo:
        f, level = todo.pop()
        if id(f) in seen or level > depth:
            continue
        seen.add(id(f))
        for cell in getattr(f, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(value, Tracer):
                found.append(value)
            elif isinstance(value, (tuple, list, dict)):
                try:
                    found.extend(leaf for leaf in tree_flatten(value)[0]
                                 if isinstance(leaf, Tracer))
                except ValueError:  # a dict with keys of mixed types: no tracers here
                    pass
            elif callable(value):
                todo.append((value, level + 1))
    return found


def _as_arrays(tree):
    """Outputs as JAX gives them: every numeric leaf an Array."""
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [leaf if isinstance(leaf, Array) else wrap(leaf)
                                    if isinstance(leaf, (int, float, complex, np.ndarray,
                                                         np.generic)) else leaf
                                    for leaf in leaves])


def _describe_fun(fun: Callable) -> str:
    """A function as JAX names it in its errors: ``name at file:line``."""
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", type(fun).__name__)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def _type_str(x) -> str:
    return f"{_dtype(x)}{list(_shape(x))}".replace(" ", "")


def _weak_kind(x) -> str | None:
    """The kind of a Python number (weakly typed in JAX: its width follows the other side)."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return "i"
    if isinstance(x, float):
        return "f"
    if isinstance(x, complex):
        return "c"
    return None


def _dtypes_agree(x, y) -> bool:
    kx, ky = _weak_kind(x), _weak_kind(y)
    if kx is None and ky is None:
        return _dtype(x) == _dtype(y)
    dx, dy = _dtype(x), _dtype(y)
    kind_x = kx or ("i" if dx.kind in "iu" else dx.kind)
    kind_y = ky or ("i" if dy.kind in "iu" else dy.kind)
    return kind_x == kind_y


def _check_branches(what: str, names: Sequence[str], funs: Sequence[Callable],
                    outs: Sequence[Any]) -> None:
    """Branch outputs must agree in structure, shapes and dtypes (JAX's TypeError, naming
    both functions). Python numbers are weakly typed: they match arrays of their kind."""
    first_leaves, first_def = tree_flatten(outs[0])
    for name, fun, out in zip(names[1:], funs[1:], outs[1:]):
        leaves, treedef = tree_flatten(out)
        which = (f"{names[0]} is {_describe_fun(funs[0])}\n"
                 f"{name} is {_describe_fun(fun)}\n\n")
        if treedef != first_def:
            def kind(tree, tdef):
                return ("a pytree leaf" if tdef.num_nodes == 1 and tdef.num_leaves == 1
                        else f"a {type(tree)}")
            k0, k1 = kind(outs[0], first_def), kind(out, treedef)
            if k0 != k1:
                detail = (f"{names[0]} output is {k0} but {name} output is {k1}, so their "
                          "Python types differ.")
            else:
                detail = (f"{names[0]} output has structure {first_def} but {name} output "
                          f"has structure {treedef}.")
            raise TypeError(f"{what} branch outputs must have the same pytree structure, but "
                            f"they differ:\n\n{which}{detail}\n\nRevise {names[0]} and/or "
                            f"{name} so that they have the same pytree structure.")
        for x, y in zip(first_leaves, leaves):
            if _shape(x) != _shape(y):
                problem = "shapes"
            elif not _dtypes_agree(x, y):
                problem = "dtypes"
            else:
                continue
            raise TypeError(f"{what} branches must have equal output types but they differ."
                            f"\n\n{which}The output of {names[0]} has type {_type_str(x)} but "
                            f"the corresponding output of {name} has type {_type_str(y)}, so "
                            f"the {problem} do not match.\n\nRevise {names[0]} and/or {name} "
                            "so that all output types match.")


def _run_chosen(what: str, names: Sequence[str], funs: Sequence[Callable], chosen: int,
                operands: tuple) -> Any:
    """The chosen branch's output, every branch having been called in order, as JAX traces
    them all: their outputs must agree in types (a branch not chosen that fails on these
    values, as an index promised in bounds that is not or a singular matrix, is not checked:
    JAX traces it abstractly)."""
    outs = []
    for k, fun in enumerate(funs):
        if k == chosen:
            outs.append(fun(*operands))
            continue
        try:
            with np.errstate(all="ignore"):
                outs.append(fun(*operands))
        except (IndexError, FloatingPointError, ZeroDivisionError, np.linalg.LinAlgError):
            outs.append(_UNKNOWN)
    known = [k for k, out in enumerate(outs) if out is not _UNKNOWN]
    _check_branches(what, [names[k] for k in known], [funs[k] for k in known],
                    [outs[k] for k in known])
    return _as_arrays(outs[chosen])


_UNKNOWN = object()


def _select_trees(pred, on_true, on_false):
    t_leaves, treedef = tree_flatten(on_true)
    f_leaves = tree_flatten(on_false)[0]
    return tree_unflatten(treedef, [wrap(select_p(pred, t, f))
                                    for t, f in zip(t_leaves, f_leaves)])


# --- conditionals ------------------------------------------------------------------------
_NO_OPERAND = object()


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any,
         operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands)`` if `pred` else ``false_fun(*operands)``; the two return pytrees
    of the same structure, shapes and dtypes. Only the branch taken runs and is
    differentiated; under `vmap` with a batched `pred` both run and each example takes its
    own, as in JAX.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> cond(True, lambda x: x + 1, lambda x: x - 1, 1.0).item()
    2.0
    >>> fg.vmap(lambda x: cond(x > 0, lambda v: v * 2, lambda v: -v, x))(
    ...     fnp.array([-1.0, 2.0])).tolist()
    [1.0, 4.0]
    """
    if operand is not _NO_OPERAND:  # JAX's older signature cond(pred, t, f, operand=...)
        if operands:
            raise TypeError("cond: pass the operands positionally or as operand=, not both")
        operands = (operand,)
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("cond: true_fun and false_fun must be callable: "
                        "cond(pred, true_fun, false_fun, *operands)")
    _check_predicate(pred, "Pred")
    hook = _hook("cond", [pred, operands], [true_fun, false_fun])
    if hook is not None:
        return hook(pred, true_fun, false_fun, operands)
    names, funs = ("true_fun", "false_fun"), (true_fun, false_fun)
    taken = _concrete_bool(pred)
    if taken is not None:
        return _run_chosen("cond", names, funs, 0 if taken else 1, operands)
    on_true = true_fun(*operands)
    on_false = false_fun(*operands)
    _check_branches("cond", names, funs, (on_true, on_false))
    if _dtype(pred) != np.bool_:
        pred = pred != 0
    return _select_trees(pred, _as_arrays(on_true), _as_arrays(on_false))


def _check_predicate(pred, what: str) -> None:
    shape = _shape(pred)
    if shape:
        raise TypeError(f"{what} must be a scalar, got {pred} of shape {shape}. Reduce it first "
                        "(e.g. fnp.all(x > 0)), or use funcgrad.numpy.where for an "
                        "elementwise choice")
    kind = _dtype(pred).kind
    if kind not in "biu":
        raise TypeError(f"{what} type must be either boolean or number, got "
                        f"{_dtype(pred)}. Compare first (x > 0)")


def switch(index: Any, branches: Sequence[Callable], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """``branches[index](*operands)``, with `index` clamped into range as in JAX. Under
    `vmap` with a batched `index` every branch runs and each example takes its own.

    >>> import funcgrad.numpy as fnp
    >>> branches = [lambda x: x, lambda x: x * 2, lambda x: x * 3]
    >>> switch(1, branches, 5.0).item(), switch(7, branches, 5.0).item()
    (10.0, 15.0)
    """
    if operand is not _NO_OPERAND:
        operands = operands + (operand,)
    branches = list(branches)
    if not branches or not all(callable(b) for b in branches):
        raise TypeError("switch: branches must be a non-empty sequence of callables")
    if _shape(index):
        raise TypeError(f"Branch index must be scalar, got {index} of shape {_shape(index)}")
    if _dtype(index).kind not in "iub":
        raise TypeError(f"Index type must be an integer, got {index} as {_dtype(index)}. "
                        "Pass an int (or x.astype(int))")
    if len(branches) == 1:
        return _as_arrays(branches[0](*operands))
    names = [f"branch {k}" for k in range(len(branches))]
    batched = _is_batched(index)
    if not batched:
        try:
            k = min(max(int(index), 0), len(branches) - 1)
        except FuncgradError:  # an abstract index (jit): select below
            batched = True
        else:
            return _run_chosen("switch", names, branches, k, operands)
    outs = [b(*operands) for b in branches]
    _check_branches("switch", names, branches, outs)
    outs = [_as_arrays(out) for out in outs]
    # index >= k picks branch k over the ones before: out-of-range indices clamp
    result = outs[0]
    for k, out in enumerate(outs[1:], 1):
        result = _select_trees(index >= k, out, result)
    return result


# --- loops -------------------------------------------------------------------------------
def _while_identity(x):
    return x


def _while_transpose_error(ct, out, x):
    raise _reverse_refused()


def _reverse_refused() -> ValueError:
    return ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop: a loop whose trip count is known in advance differentiates in reverse "
        "mode (jvp and jacfwd work through while_loop)")


def _while_tangent(t, out, x):
    return while_result_p(t)


# A while_loop's results pass through this identity: forward mode and vmap see through it,
# and a backward pass that reaches it refuses as JAX does (at the same moment: when
# gradients flow back into the loop; a loop inside a custom rule's body is never walked).
while_result_p = Primitive("while_loop", _while_identity, vjps=(_while_transpose_error,),
                           jvps=(_while_tangent,), batch=batch_elementwise,
                           doc="The results of a while_loop (an identity; see above).")


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns the final `val`. Forward-mode
    differentiable; reverse mode is refused, as in JAX (use `scan` or `fori_loop` with fixed
    bounds). Under `vmap` with a batched predicate it runs until every example is done.

    >>> while_loop(lambda c: c < 10, lambda c: c * 2, 1).item()
    16
    """
    if not (callable(cond_fun) and callable(body_fun)):
        raise TypeError("while_loop: cond_fun and body_fun must be callable: "
                        "while_loop(cond_fun, body_fun, init_val)")
    return _while(cond_fun, body_fun, init_val)


def _while(cond_fun: Callable, body_fun: Callable, init_val: Any, below: int | None = None):
    hook = _hook("while", [init_val], [cond_fun, body_fun], below)
    if hook is not None:
        return hook(cond_fun, body_fun, init_val)
    given = init_val  # Python scalars in it are weakly typed: their dtype may change
    val = _as_arrays(init_val)
    checked = False
    while True:
        pred = cond_fun(val)
        if _shape(pred) or _dtype(pred) != np.bool_:
            raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                            f"[{_dtype(pred)}{list(_shape(pred))}]. Reduce it (fnp.all, "
                            "fnp.any) or compare (x > 0) to get one boolean")
        batched = _is_batched(pred)
        try:
            going = bool(np.any(_bottom(pred))) if batched else bool(pred)
        except FuncgradError as error:  # abstract (under jit): traces above peeled off
            return _while_below(error, pred, cond_fun, body_fun, val, below)
        if not going:
            return _while_results(val)
        new = _as_arrays(body_fun(val))
        if not checked:
            _check_carry(given, new, "while_loop body function", body_fun)
            checked = True
        val = _select_trees(pred, new, val) if batched else new


def _while_below(error: FuncgradError, pred, cond_fun: Callable, body_fun: Callable, val,
                 below: int | None):
    """A loop whose predicate has no value yet (jit traces it) while traces above the
    compiling one hold the carry: each is peeled off in turn until the compiling trace's
    ``process_while`` can record one loop. A vmap batching the predicate runs the loop one
    level down, over the whole batch; a forward-mode trace carries tangents beside primals;
    a vmap not batching it carries its batch axis. Reverse mode is refused, as in JAX."""
    floor = pred._trace.level if type(pred) is BatchTracer else 0
    above = _innermost_above(floor, val, (cond_fun, body_fun), below)
    if above is None:
        if type(pred) is not BatchTracer:
            raise error
        return _while_one_level_down(pred._trace, cond_fun, body_fun, val)
    if type(above) is JVPTrace:
        return _while_of_tangents(above, cond_fun, body_fun, val)
    if type(above) is BatchTrace:
        return _while_one_level_down(above, cond_fun, body_fun, val)
    if type(above) is ReverseTrace:
        raise _reverse_refused()
    raise error


def _innermost_above(floor: int, val, functions: Sequence[Callable],
                     below: int | None) -> Trace | None:
    """The innermost live trace above level `floor` among the carry's values and those the
    loop's functions close over (with `below`, looking under the traces at or above it, as
    `_hook` does), or None."""
    top = None
    for leaf in tree_flatten(val)[0] + _closed_over(functions):
        while below is not None and isinstance(leaf, Tracer) and leaf._trace.level >= below:
            leaf = leaf._value
        if isinstance(leaf, Tracer) and leaf._trace.alive and leaf._trace.level > floor and \
                (top is None or leaf._trace.level > top.level):
            top = leaf._trace
    return top


def _while_of_tangents(trace: JVPTrace, cond_fun: Callable, body_fun: Callable, val):
    """A while_loop under forward mode `trace`, run as JAX runs it: one loop below the trace
    whose carry is the primals and the tangents side by side (a zero tangent made explicit,
    so the carry keeps its structure), each step pushing both through `body_fun`. What the
    loop meets below (a vmap over a compiling trace) then sees only its own values."""
    leaves, treedef = tree_flatten(val)
    inexact = [_dtype(leaf).kind in "fc" for leaf in leaves]

    def split(out_leaves):
        primals, tangents = [], []
        for leaf, has_tangent in zip(out_leaves, inexact):
            if type(leaf) is JVPTracer and leaf._trace is trace:
                primal, tangent = leaf._value, leaf._tangent
            else:
                primal, tangent = raw(leaf), None
            primals.append(wrap(primal))
            if has_tangent:
                tangents.append(wrap(engine.zeros_like(primal) if tangent is None else tangent))
        return primals, tangents

    def join(state):
        primals, tangents = state
        tangents = iter(tangents)
        return tree_unflatten(treedef, [JVPTracer(trace, raw(p), raw(next(tangents)))
                                        if has_tangent else p
                                        for p, has_tangent in zip(primals, inexact)])

    def step(state):
        v = join(state)
        new = _as_arrays(body_fun(v))
        _check_carry(v, new, "while_loop body function", body_fun)
        return split(tree_flatten(new)[0])

    primals, tangents = _while(lambda state: cond_fun(join(state)), step, split(leaves),
                               below=trace.level)
    return join((primals, tangents))


def _while_one_level_down(trace: BatchTrace, cond_fun: Callable, body_fun: Callable, val):
    """A while_loop whose predicate `trace` (a vmap) batches, as JAX batches it: one loop
    over the whole batch, one level below the vmap, running while any example's predicate
    holds; each step applies the body to every example and keeps the old value of those
    already done. A compiling trace below (jit) then records one loop."""
    leaves, treedef = tree_flatten(val)
    fronts = [move_to_front(leaf._value, leaf._bdim)
              if type(leaf) is BatchTracer and leaf._trace is trace
              else front_or_broadcast(raw(leaf) if not isinstance(leaf, Tracer) else leaf,
                                      None, trace.size)
              for leaf in leaves]

    def batched(us):
        return tree_unflatten(treedef, [BatchTracer(trace, u, 0) for u in us])

    def per_example(pred):
        if type(pred) is BatchTracer and pred._trace is trace:
            return move_to_front(pred._value, pred._bdim)
        return pred

    def any_going(us):
        pred = per_example(cond_fun(batched(us)))
        return engine.sum_to_shape(engine.astype(pred, np.int64), ()) > 0

    def step(us):
        v = batched(us)
        pred = cond_fun(v)
        new = _as_arrays(body_fun(v))
        _check_carry(val, new, "while_loop body function", body_fun)
        chosen = tree_flatten(_select_trees(pred, new, v))[0]
        return [per_example(leaf) if isinstance(leaf, Tracer) else
                front_or_broadcast(raw(leaf), None, trace.size) for leaf in chosen]

    outs = _while(any_going, step, [wrap(u) for u in fronts], below=trace.level)
    return tree_unflatten(treedef, [BatchTracer(trace, raw(u) if not isinstance(u, Tracer)
                                                else u, 0) for u in outs])


def _while_results(val):
    leaves, treedef = tree_flatten(val)
    return tree_unflatten(treedef, [wrap(while_result_p(leaf)) if isinstance(leaf, Tracer)
                                    else leaf for leaf in leaves])


def _check_carry(old, new, what: str, fun: Callable | None = None) -> None:
    """A loop's carry keeps its structure, shapes and dtypes (JAX's TypeError, naming the
    component by the body's parameter and its key path). Python numbers are weakly typed."""
    name = _first_parameter(fun)
    old_leaves, old_def = tree_flatten(old)
    new_leaves, new_def = tree_flatten(new)
    if old_def != new_def:
        raise TypeError(f"{what} carry input and carry output must have the same pytree "
                        f"structure, but they differ:\n\nThe input carry {name} is "
                        f"{_node_kind(old, old_def)} but the corresponding component of the "
                        f"carry output is {_node_kind(new, new_def)}, so their Python types "
                        "differ.\n\nRevise the function so that the carry output has the same "
                        "pytree structure as the carry input.")
    paths = [keystr(path) for path, _ in tree_flatten_with_path(old)[0]]
    for path, x, y in zip(paths, old_leaves, new_leaves):
        if _shape(x) != _shape(y):
            problem = "shapes"
        elif not (_weak_kind(x) or _weak_kind(y)) and _dtype(x) != _dtype(y):
            problem = "dtypes"
        else:
            continue
        which = f"carry {name}" if not path else f"carry component {name}{path}"
        raise TypeError(f"{what} carry input and carry output must have equal types, but they "
                        f"differ:\n\nThe input {which} has type {_type_str(x)} but the "
                        f"corresponding output carry component has type {_type_str(y)}, so the "
                        f"{problem} do not match.\n\nRevise the function so that all output "
                        "types match the corresponding input types.")


def _first_parameter(fun: Callable | None) -> str:
    """The name a loop body gives its carry (JAX's errors use it), else ``carry``."""
    code = getattr(fun, "__code__", None)
    if code is None or code.co_argcount == 0:
        return "carry"
    return code.co_varnames[0]


def _node_kind(tree, treedef) -> str:
    if treedef.num_nodes == 1 and treedef.num_leaves == 1:
        return "an array"
    return f"a {type(tree)}"


def fori_loop(lower: int, upper: int, body_fun: Callable[[Any, Any], Any], init_val: Any,
              *, unroll: int | bool | None = None) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``. With bounds known
    in advance this is a `scan`, differentiable both ways; bounds batched by `vmap`, or
    traced by `jit`, make it a `while_loop`, as in JAX.

    >>> import funcgrad as fg
    >>> fori_loop(0, 5, lambda i, total: total + i, 0).item()
    10
    >>> fg.grad(lambda x: fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0).item()  # d x^3
    12.0
    """
    if not callable(body_fun):
        raise TypeError("fori_loop: body_fun must be callable: body_fun(i, val) -> val")
    for bound in (lower, upper):
        if _shape(bound) or _dtype(bound).kind not in "iu":
            raise TypeError(f"fori_loop bounds must be integer scalars, got {bound!r}. Pass "
                            "Python ints")
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if lo is None or hi is None:  # batched by vmap, or abstract under jit: as in JAX
        def keep_going(state):
            return state[0] < upper

        def step(state):
            return state[0] + 1, body_fun(state[0], state[1])

        start = lower if isinstance(lower, Array) else wrap(np.asarray(lower))
        return while_loop(keep_going, step, (start, init_val))[1]
    dtype = np.result_type(_dtype(lower), _dtype(upper))

    def step(carry, _):
        i, val = carry
        return (i + 1, body_fun(i, val)), None

    start = wrap(np.asarray(lo, dtype=dtype))
    (_, out), _ = scan(step, (start, init_val), None, length=max(hi - lo, 0),
                          unroll=1 if unroll is None else unroll)
    return out


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False, unroll: int | bool = 1,
         _split_transpose: bool = False) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of `xs` (a pytree of arrays);
    returns the final carry and the ``y``'s stacked. ``xs=None`` with ``length`` loops
    without inputs; ``reverse=True`` runs from the last element to the first (``ys`` stay in
    the order of ``xs``); ``unroll`` is accepted for JAX compatibility (every step runs as a
    Python call here). Differentiable in both modes, and under `vmap`.

    >>> import funcgrad.numpy as fnp
    >>> total, running = scan(lambda c, x: (c + x, c + x), 0.0, fnp.arange(1.0, 5.0))
    >>> total.item(), running.tolist()
    (10.0, [1.0, 3.0, 6.0, 10.0])
    """
    if not callable(f):
        raise TypeError("scan: f must be callable: f(carry, x) -> (carry, y)")
    if not (isinstance(unroll, bool) or (isinstance(unroll, int) and unroll >= 1)):
        raise ValueError(f"scan: unroll must be a positive int or a bool, got {unroll!r}")
    xs_leaves, xs_def = tree_flatten(xs)
    sizes = [(_shape(leaf) or (None,))[0] for leaf in xs_leaves]
    if any(s is None for s in sizes):
        scalar = next(leaf for leaf, s in zip(xs_leaves, sizes) if s is None)
        raise ValueError(f"scan got value with no leading axis to scan over: {scalar}.")
    if length is not None:
        length = int(length)
        if any(s != length for s in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {sizes}.")
    elif not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    elif len(set(sizes)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(s) for s in sizes)}.")
    else:
        length = sizes[0]
    hook = _hook("scan", [init, xs], [f])
    return (hook or run_scan)(f, init, xs, length, reverse)


def run_scan(f: Callable, init: Any, xs: Any, length: int, reverse: bool) -> tuple[Any, Any]:
    """`scan`'s loop once its arguments are checked: one call of `f` per step. A trace's
    ``process_scan`` takes the same arguments and may fall back to this."""
    xs_leaves, xs_def = tree_flatten(xs)
    carry = _as_arrays(init)
    ys = []
    rows = [_rows(leaf) for leaf in xs_leaves] if length else []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        x = tree_unflatten(xs_def, [wrap(r[i]) for r in rows])
        new_carry, y = _split_step(f(carry, x))
        if not ys:  # against the given init: its Python scalars are weakly typed
            _check_carry(init, new_carry, "scan body function", f)
        carry = new_carry
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys:  # no step ran: one call on zero rows gives the shapes of the ys
        x = tree_unflatten(xs_def, [wrap(np.zeros(_shape(leaf)[1:], _dtype(leaf)))
                                    for leaf in xs_leaves])
        new_carry, y = _split_step(f(carry, x))
        _check_carry(init, new_carry, "scan body function", f)
        return carry, tree_map(lambda leaf: wrap(np.zeros((0,) + _shape(leaf), _dtype(leaf))),
                               _as_arrays(y))
    return carry, _stack_trees(ys)


def _split_step(out) -> tuple[Any, Any]:
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError("scan body function must return a pair (carry, y), got "
                        f"{type(out).__name__}. Return (new_carry, None) if there is no y")
    return _as_arrays(out[0]), out[1]


def _rows(leaf) -> Sequence:
    """The elements of `leaf` along its leading axis (tracers for a traced leaf)."""
    if isinstance(leaf, Tracer):
        return unstack_p(leaf)
    return leaf._value if isinstance(leaf, Array) else np.asarray(leaf)


def _stack_trees(trees: list) -> Any:
    first_leaves, treedef = tree_flatten(trees[0])
    columns = [[leaf] for leaf in first_leaves]
    for k, t in enumerate(trees[1:], 1):
        leaves, t_def = tree_flatten(t)
        if t_def != treedef:
            raise TypeError(f"scan body function returned ys of different structures: "
                            f"{treedef} at one step and {t_def} at step {k}")
        for column, leaf in zip(columns, leaves):
            column.append(leaf)
    return tree_unflatten(treedef, [wrap(engine.stack(column)) for column in columns])


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    """``f`` applied to each element along the leading axis of `xs` (a pytree), results
    stacked: a `scan` without a carry. `batch_size` is accepted as in JAX (the results are
    the same; here every element is one call).

    >>> import funcgrad.numpy as fnp
    >>> map(lambda x: x ** 2, fnp.arange(4.0)).tolist()
    [0.0, 1.0, 4.0, 9.0]
    """
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"lax.map: batch_size must be a positive int, got {batch_size!r}")
    return scan(lambda _, x: ((), f(x)), (), xs)[1]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """Inclusive prefix combination of `elems` (a pytree of arrays) along `axis` with an
    associative `fn`: result ``i`` is ``fn(... fn(e0, e1) ..., ei)``. `fn` takes and returns
    pytrees like `elems`, vectorised along `axis` (here it is called on slices of length 1
    along it). ``reverse=True`` combines from the end.

    >>> import funcgrad.numpy as fnp
    >>> associative_scan(fnp.add, fnp.arange(1.0, 6.0)).tolist()
    [1.0, 3.0, 6.0, 10.0, 15.0]
    """
    leaves, treedef = tree_flatten(elems)
    if not leaves:
        raise ValueError("associative_scan: elems has no arrays")
    ndim = len(_shape(leaves[0]))
    if not -ndim <= axis < ndim if ndim else True:
        raise ValueError(f"associative_scan: axis {axis} is out of range for elements of "
                         f"rank {ndim}")
    axis %= max(ndim, 1)
    sizes = []
    for leaf in leaves:
        shape = _shape(leaf)
        if len(shape) <= axis:
            raise ValueError(f"associative_scan: an element of shape {shape} has no axis {axis}")
        sizes.append(shape[axis])
    if len(set(sizes)) > 1:
        raise ValueError("Array inputs to associative_scan must have the same first dimension. "
                         f"(saw: {sizes})")
    n = sizes[0]
    rows = [_rows(wrap(engine.moveaxis(leaf, axis, 0)) if axis else leaf) for leaf in leaves]

    def piece(i):  # element i with its axis kept, as fn expects
        return tree_unflatten(treedef, [wrap(engine.expand_dims(r[i], axis)) for r in rows])

    order = range(n - 1, -1, -1) if reverse else range(n)
    results = []
    acc = None
    for i in order:
        e = piece(i)
        acc = e if acc is None else fn(acc, e)
        results.append(acc)
    if reverse:
        results.reverse()
    out_leaves = []
    for k in range(len(leaves)):
        firsts = [_rows(wrap(engine.moveaxis(tree_flatten(r)[0][k], axis, 0)) if axis
                        else tree_flatten(r)[0][k])[0] for r in results]
        stacked = engine.stack(firsts)
        out_leaves.append(wrap(engine.moveaxis(stacked, 0, axis) if axis else stacked))
    return tree_unflatten(treedef, out_leaves)
