"""Reverse mode: the tape a transform records, and the iterative walk that replays it.

The tape entry layout, named once here and read through these names everywhere::

    (prim, params, out, node_0, value_0, node_1, value_1, ...)
     PRIM  PARAMS  OUT  ARGS ...

``prim`` is the primitive, or its number when it is a declared one (`core.declared`; read it
with `core.primitive_of`): then an entry of plain values holds nothing the cyclic garbage
collector tracks, so recording a long tape costs no collections over it.
``params`` is ``None`` when empty; ``node_i`` is the id of the entry that produced argument
``i`` (``None`` for a constant); ``value_i`` is the argument's value, of which only what the
rules read is kept (``Primitive.reads``; `ShapeOnly` stands in for the rest), and likewise
``out``. `arg_slots`, `arg_nodes` and `arg_values` read the argument part. A node's id is
its entry's position on the tape; leaves occupy the first positions with ``None`` entries,
and the later results of a multiple-result entry likewise. An entry holds no tracer of its
own trace, no closure and no dict of its own: small, and no cycles.
"""
from __future__ import annotations

import gc
import sys
from typing import Any, Iterator, Sequence

import numpy as np

from . import residuals
from .config import Recorded, config, nan_error, numpy_errors, user_frame
from .core import (_DECLARED, Array, FuncgradError, Primitive, Trace, Tracer, engine,
                   primitive_of, raw, wrap)
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["ReverseTrace", "ReverseTracer", "backward", "PRIM", "PARAMS", "OUT", "ARGS",
           "arg_slots", "arg_nodes", "arg_values", "CustomCall"]

# --- the tape entry layout ---------------------------------------------------------------
PRIM, PARAMS, OUT, ARGS = 0, 1, 2, 3


def arg_slots(entry: tuple) -> Iterator[tuple[int, int | None, Any]]:
    """``(argnum, node, value)`` for each argument of a tape entry, in order."""
    for k in range(ARGS, len(entry), 2):
        yield (k - ARGS) >> 1, entry[k], entry[k + 1]


def arg_nodes(entry: tuple) -> tuple:
    """The producing node of each argument (``None`` for constants)."""
    return entry[ARGS::2]


def arg_values(entry: tuple) -> tuple:
    """The kept value of each argument."""
    return entry[ARGS + 1::2]


def _scalar_standin(scalar_type) -> np.generic:
    """The stand-in for NumPy scalars of `scalar_type` whose value no rule reads (a linear
    function's arguments, say): the tape keeps their shape and dtype, all a rule may read,
    without one object per op. A shared NumPy scalar of the same type rather than a
    `ShapeOnly`: NumPy scalars are not objects the cyclic garbage collector tracks, so
    neither are the entries holding one (W4's long scalar loop paid for a quarter of its
    entries being tracked). It is NaN where the dtype can be, so that a value read by
    mistake would show."""
    return scalar_type(np.nan if np.dtype(scalar_type).kind in "fc" else 0)


_SCALAR_STANDINS = {t: _scalar_standin(t)
                    for t in (np.float64, np.float32, np.float16, np.complex128, np.complex64,
                              np.int64, np.int32, np.bool_)}


class ReverseTracer(Tracer):
    __slots__ = ("_id",)

    def __init__(self, trace: "ReverseTrace", value: Any, node_id: int) -> None:
        self._trace = trace
        self._value = value
        self._id = node_id


_new_object = object.__new__
_PRUNE_MIN_SIZE = residuals.PRUNE_MIN_SIZE
_ShapeOnly = residuals.ShapeOnly


def _tracer(trace, value, node_id):
    """A ReverseTracer without an __init__ frame: this runs once per recorded operation."""
    t = _new_object(ReverseTracer)
    t._trace = trace
    t._value = value
    t._id = node_id
    return t


class ReverseTrace(Trace):
    """Records one entry per differentiable primitive applied to its tracers.

    ``prune``: whether entries keep only what the rules read (``Primitive.reads``). A
    program trace (`program.ProgramTrace`) is this trace with ``prune = False``, so its
    tape can be run forward again."""

    __slots__ = ("tape",)
    name = "grad"
    prune = True

    def __init__(self) -> None:
        super().__init__()
        self.tape: list = _SourceTape() if config.debug_nans else []

    def leaf(self, value) -> ReverseTracer:
        tape = self.tape
        t = _new_object(ReverseTracer)  # (`_tracer` spelled out: once per input leaf)
        t._trace = self
        t._value = value
        t._id = len(tape)
        tape.append(None)
        return t

    def process1(self, prim: Primitive, a: Any, params: dict):
        """One argument, necessarily ours: the commonest case, kept short."""
        x = a._value
        direct = prim._direct
        if direct is None or isinstance(x, Tracer):
            return self.process(prim, (a,), params)
        out = prim.impl(x, **params) if params else prim.impl(x)
        code, keep_out, shape_only, _ = direct
        if shape_only:  # (`_record`'s pruning, spelled out)
            if type(x) is np.ndarray:
                if x.size >= _PRUNE_MIN_SIZE:
                    kept = _new_object(_ShapeOnly)  # (ShapeOnly(x) without its __init__ frame)
                    kept.shape = x.shape
                    kept.dtype = x.dtype
                    x = kept
            else:
                x = _SCALAR_STANDINS.get(type(x), x)
        tape = self.tape
        t = _new_object(ReverseTracer)  # (`_tracer` spelled out: this runs once per op)
        t._trace = self
        t._value = out
        t._id = len(tape)
        tape.append((code, params or None, out if keep_out else None, a._id, x))
        return t

    def process2(self, prim: Primitive, a: Any, b: Any, params: dict):
        """Two arguments: the next commonest, also spelled out."""
        if type(a) is ReverseTracer and a._trace is self:
            ia = a._id
            xa = a._value
        else:
            ia = None
            xa = a._value if type(a) is Array else a
        if type(b) is ReverseTracer and b._trace is self:
            ib = b._id
            xb = b._value
        else:
            ib = None
            xb = b._value if type(b) is Array else b
        direct = prim._direct
        if direct is None or isinstance(xa, Tracer) or isinstance(xb, Tracer):
            return self.process(prim, (a, b), params)
        out = prim.impl(xa, xb, **params) if params else prim.impl(xa, xb)
        code, keep_out, shape_only_a, shape_only_b = direct
        if shape_only_a:
            if type(xa) is np.ndarray:
                if xa.size >= _PRUNE_MIN_SIZE:
                    kept = _new_object(_ShapeOnly)  # (ShapeOnly(xa) without its __init__ frame)
                    kept.shape = xa.shape
                    kept.dtype = xa.dtype
                    xa = kept
            else:
                xa = _SCALAR_STANDINS.get(type(xa), xa)
        if shape_only_b:
            if type(xb) is np.ndarray:
                if xb.size >= _PRUNE_MIN_SIZE:
                    kept = _new_object(_ShapeOnly)  # (ShapeOnly(xb) without its __init__ frame)
                    kept.shape = xb.shape
                    kept.dtype = xb.dtype
                    xb = kept
            else:
                xb = _SCALAR_STANDINS.get(type(xb), xb)
        tape = self.tape
        t = _new_object(ReverseTracer)
        t._trace = self
        t._value = out
        t._id = len(tape)
        tape.append((code, params or None, out if keep_out else None, ia, xa, ib, xb))
        return t

    def process(self, prim: Primitive, args: Sequence[Any], params: dict):
        nodes = []
        values = []
        lower = False
        for a in args:
            if type(a) is ReverseTracer and a._trace is self:
                nodes.append(a._id)
                x = a._value
            else:
                nodes.append(None)
                x = a._value if type(a) is Array else a
            values.append(x)
            if isinstance(x, Tracer):
                lower = True
        out = prim(*values, **params) if lower else prim.impl(*values, **params)
        return self._record(prim, params, out, nodes, values)

    def _record(self, prim: Primitive, params: dict, out: Any, nodes: Sequence, values: list):
        """The general path of recording: checks the rules, keeps what they read (all of it
        on an unpruned trace), and returns the tracer(s) of `out`."""
        if not prim.differentiable or nodes.count(None) == len(nodes):
            return out
        vjps = prim.vjps
        for argnum, node in enumerate(nodes):
            if node is not None and (vjps is None or vjps[argnum] is None):
                raise _no_rule(prim, "a derivative (VJP) rule", argnum)
        keep_out, keep_args = prim._keep if self.prune else residuals.KEEP_ALL
        if keep_args is not None:
            for k, kept in enumerate(keep_args):
                if not kept:
                    x = values[k]
                    values[k] = (residuals.pruned(x, False) if type(x) is np.ndarray
                                 else _SCALAR_STANDINS.get(type(x), x))
        return self._append(prim, params or None, out if keep_out else None, nodes, values,
                            out)

    def _append(self, prim, params, kept_out, nodes, values, out):
        """Record one entry; the tracer(s) of its result."""
        code = prim._code
        entry = [prim if code is None else code, params, kept_out]
        for node, value in zip(nodes, values):
            entry += (node, value)
        tape = self.tape
        tape.append(tuple(entry))
        if prim.multiple_results:
            return self._outputs(out)
        return _tracer(self, out, len(tape) - 1)

    def _outputs(self, outs: tuple) -> tuple:
        """Tracers for a multiple-result entry; the extra ids are placeholder entries."""
        tape = self.tape
        first = len(tape) - 1
        tape.extend([None] * (len(outs) - 1))
        return tuple(ReverseTracer(self, o, first + k) for k, o in enumerate(outs))

    def process_custom(self, rule: Any, leaves: list, in_def: Any):
        """A custom call (custom_vjp, custom_jvp, checkpoint) becomes ONE entry, whose
        cotangent rule is the one `rule.reverse` returns."""
        traced = [type(leaf) is ReverseTracer and leaf._trace is self for leaf in leaves]
        lower = [leaf._value if t else raw(leaf) for leaf, t in zip(leaves, traced)]
        out, pull = rule.reverse(lower, in_def, traced)
        out_leaves, out_def = tree_flatten(out)
        out_values = tuple(raw(o) for o in out_leaves)
        if not any(traced) or not out_values:
            return tree_unflatten(out_def, [wrap(o) for o in out_values])
        last = max(i for i, t in enumerate(traced) if t)
        call = CustomCall(rule, in_def, pull, out_def, last)
        nodes = [leaf._id if t else None for leaf, t in zip(leaves, traced)]
        outs = self._append(rule.prim, {"call": call}, out_values, nodes, lower, out_values)
        return tree_unflatten(out_def, list(outs))


class _SourceTape(list):
    """A tape that also notes, for each entry, the user's line that recorded it: what
    `debug_nans` reports when that entry's backward rule produces a NaN."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: dict = {}

    def append(self, entry) -> None:
        if entry is not None:
            frame = user_frame(sys._getframe(1))[0]
            self.frames[len(self)] = (frame.f_code.co_filename, frame.f_lineno,
                                      frame.f_code.co_name) if frame is not None else None
        super().append(entry)


def _backward_nan(tape, i, prim) -> FloatingPointError:
    where = getattr(tape, "frames", {}).get(i)
    return nan_error(prim.name, "backward", Recorded(*where) if where else user_frame()[0],
                     "in the cotangent its derivative rule returned")


class CustomCall:
    """The parameters of a recorded custom call: its cotangent rule, and the call itself for
    a forward replay. The walker asks for one argument at a time; the rule runs once per
    cotangent and serves every argument."""

    __slots__ = ("rule", "in_def", "pull", "out_def", "last_traced", "ct", "result")

    def __init__(self, rule, in_def, pull, out_def, last_traced):
        self.rule = rule
        self.in_def = in_def
        self.pull = pull
        self.out_def = out_def
        self.last_traced = last_traced
        self.ct = None
        self.result = None

    def __repr__(self) -> str:
        return self.rule.prim.name

    def apply(self, leaves) -> tuple:
        """The call again, on new inputs (a replayed tape): its flat outputs."""
        out = self.rule.bind(tree_unflatten(self.in_def, list(leaves)))
        return tuple(raw(o) for o in tree_flatten(out)[0])

    def cotangent(self, ct, k):
        if self.ct is not ct:
            self.result = self.pull(tree_unflatten(self.out_def, list(ct)))
            self.ct = ct
        g = self.result[k]
        if k == self.last_traced:  # the walker visits arguments in order: done with this ct
            self.ct = self.result = None
        return g


def _no_rule(prim: Primitive, what: str, argnum: int | None) -> FuncgradError:
    where = f"argument {argnum}" if argnum is not None else "its arguments"
    return FuncgradError(
        f"funcgrad cannot differentiate {prim.name} with respect to {where}: it has no "
        f"{what} there. Wrap that argument in funcgrad.stop_gradient if it should be held "
        f"constant, or declare the rule beside {prim.name}'s forward in its namespace table"
    )


# --- the backward walk ---------------------------------------------------------------------
def _accumulate(cts: dict, node: int, g: Any, x: Any) -> None:
    """Add cotangent `g` to `node`'s, shaped and typed like the argument `x` it is for: the
    engine sums away broadcast dimensions and restores the dtype (float32 stays float32;
    real inputs get real cotangents) once, here, for every rule. The sum is taken in place
    when the walk alone holds the earlier cotangent."""
    if type(g) is Array:
        g = g._value
    # (a plain array goes straight to the forwards: calling the primitive would come to the
    # same after one more Python frame; a tracer, in higher order, is recorded by it)
    plain = type(g) is np.ndarray
    if g.shape != x.shape:
        g = engine.sum_to_shape.impl(g, x.shape) if plain else engine.sum_to_shape(g, x.shape)
    if g.dtype is not x.dtype:
        g = engine.astype.impl(g, x.dtype) if plain else engine.astype(g, x.dtype)
    prev = cts.get(node)
    if prev is None:
        cts[node] = g
    elif (type(prev) is np.ndarray and type(g) is np.ndarray and prev.dtype is g.dtype
          and prev.shape == g.shape and _refcount(prev) == _HELD_BY_CTS_AND_PREV
          and prev.base is None and prev.flags.writeable):
        np.add(prev, g, out=prev)
    else:
        cts[node] = prev + g


_refcount = sys.getrefcount
_HELD_BY_CTS_AND_PREV = 3   # the dict, the local name `prev`, getrefcount's own argument
_HELD_BY_WALK = 3           # the walk's `ct`, the helper's `ct`, getrefcount's argument
_HELD_BY_HELPER = 2         # the helper's local, getrefcount's argument
#: Elementwise cotangents at least this big are multiplied in place (below it the checks
#: cost more than an allocation).
IN_PLACE_MIN_SIZE = 4096


def _elementwise_vjp(rule, ct, out, args, may_overwrite_ct: bool):
    """``rule(ct, out, *args)`` for a rule declared elementwise (``ct * d`` with ``d`` its
    local derivative, `declare.elementwise`), on big real arrays, without a new buffer
    where one can be reused: the product goes into ``d`` when the derivative is a fresh
    temporary, or into ``ct`` when the walk alone holds it and no later rule of the entry
    reads it; a cotangent of broadcast ones (a sum's) times a full ``d`` is ``d`` itself."""
    deriv = getattr(rule, "deriv", None)
    if deriv is None:
        return rule(ct, out, *args)
    if (may_overwrite_ct and ct.size >= BLOCKWISE_MIN_SIZE and ct.dtype.kind == "f"
            and _refcount(ct) == _HELD_BY_WALK and ct.base is None and ct.flags.writeable
            and ct.flags.c_contiguous):
        done = _blockwise_vjp(deriv, ct, out, args)
        if done is not None:
            return done
    d = deriv(out, *args)
    if type(d) is Array:
        d = d._value
    if type(d) is np.ndarray:
        if d.dtype.kind == "c" or ct.dtype.kind == "c":
            return rule(ct, out, *args)  # (the rule conjugates complex slopes)
        dtype = d.dtype if d.dtype == ct.dtype else np.result_type(ct, d)
        if d.shape == ct.shape and d.dtype == dtype:
            if _refcount(d) == _HELD_BY_HELPER and d.base is None and d.flags.writeable:
                return np.multiply(ct, d, out=d)
            if not any(ct.strides) and ct.base is not None and ct.flat[0] == 1:
                return d  # ones * d
    elif type(d) in (float, int):
        dtype = ct.dtype  # a Python number takes the array's dtype
    else:
        return ct * d  # a tracer (higher order) or a NumPy scalar: the rule's own product
    if (may_overwrite_ct and dtype == ct.dtype and _refcount(ct) == _HELD_BY_WALK
            and ct.base is None and ct.flags.writeable
            and np.broadcast_shapes(ct.shape, np.shape(d)) == ct.shape):
        return np.multiply(ct, d, out=ct)
    return ct * d


#: Cotangents this big whose derivative is computed afresh are multiplied in blocks of
#: `BLOCK` elements, each derivative block computed into cache-sized scratch: no temporary
#: as big as the array (one array less at the backward pass's peak), and faster.
BLOCKWISE_MIN_SIZE = 1 << 17
BLOCK = 1 << 14


def _blockwise_vjp(deriv, ct, out, args):
    """``ct *= deriv(out, *args)`` block by block, in place in `ct` (which the walk alone
    holds), for an elementwise derivative over arrays of `ct`'s shape and scalars; None
    (nothing done) where that does not apply: another shape, or a derivative that is not
    a fresh array of `ct`'s dtype (an argument itself, a number)."""
    values = (out,) + tuple(args)
    flat = []
    for v in values:
        if type(v) is np.ndarray and v.ndim:
            if v.shape != ct.shape or not v.flags.c_contiguous:
                return None
            flat.append(v.reshape(-1))
        elif type(v) is np.ndarray or v is None or isinstance(
                v, (residuals.ShapeOnly, float, int, np.generic)):
            flat.append(None)  # a scalar, or a value the derivative does not read
        else:
            return None  # a tracer (higher order): the rule's own product

    def derivative(start, stop):
        d = deriv(*[v if f is None else f[start:stop] for v, f in zip(values, flat)])
        return d._value if type(d) is Array else d

    cts = ct.reshape(-1)
    n = cts.size
    d = derivative(0, BLOCK)
    if not (type(d) is np.ndarray and d.dtype == ct.dtype and d.shape == (BLOCK,)
            and d.base is None):
        return None
    np.multiply(cts[:BLOCK], d, out=cts[:BLOCK])
    for start in range(BLOCK, n, BLOCK):
        stop = start + BLOCK
        np.multiply(cts[start:stop], derivative(start, stop), out=cts[start:stop])
    return ct


def backward(tape: list, out_ids: Sequence[int | None], out_cts: Sequence[Any], n_leaves: int,
             consume: bool) -> list:
    """Replay `tape` in reverse from the cotangents of `out_ids`; return the leaves' cotangents.

    Iterative, never recursive. Each cotangent is dropped as soon as it has been used, and
    with `consume` each tape entry is dropped too, so memory falls as the walk proceeds.
    Entries whose output received no cotangent are skipped: they do not reach the output.
    The cyclic garbage collector is paused during the walk: entries hold no cycles, and it
    would only rescan the tape again and again. NumPy's floating-point warnings raised by
    the rules point at the user's line (`config.numpy_errors`).
    """
    # (a dict, not a list as long as the tape: it holds only the cotangents in flight, so the
    # backward pass adds no memory per recorded operation)
    cts: dict = {}
    for i, ct in zip(out_ids, out_cts):
        if i is not None:
            cts[i] = cts[i] + ct if i in cts else ct
    restart_gc = gc.isenabled()
    if restart_gc:
        gc.disable()
    try:
        with numpy_errors():
            (_walk_checked if config.debug_nans else _walk)(tape, cts, n_leaves, consume)
    finally:
        if restart_gc:
            gc.enable()
    pop = cts.pop
    return [pop(i, None) for i in range(n_leaves)]


_PYTHON_NUMBERS = frozenset((float, int))


def _walk(tape: list, cts: dict, n_leaves: int, consume: bool) -> None:
    """The backward walk itself. Entries of one and two arguments (nearly all) are spelled
    out, their commonest cotangents added inline; the rest take `_entry_cts`."""
    pop = cts.pop
    get = cts.get
    declared = _DECLARED
    in_place_min_size = IN_PLACE_MIN_SIZE
    standins = _SCALAR_STANDINS
    ndarray = np.ndarray
    numbers = _PYTHON_NUMBERS
    one_arg, two_args = ARGS + 2, ARGS + 4
    for i in range(len(tape) - 1, n_leaves - 1, -1):
        entry = tape[i]
        if entry is None:
            continue
        try:
            prim = declared[entry[PRIM]]
        except TypeError:  # an undeclared primitive is named by itself, not by a number
            prim = entry[PRIM]
        if prim.multiple_results:
            ct = _gather_multiple(cts, i, entry[OUT])
            if ct is not None:
                if consume:
                    tape[i] = None
                _entry_cts(entry, prim, ct, cts, _accumulate)
            continue
        ct = pop(i, None)
        if ct is None:  # the entry does not reach the output
            if not cts:
                break  # nor does any before it
            continue
        if consume:
            tape[i] = None
        n = len(entry)
        if n == one_arg:
            # one argument, the commonest entry: unpacked in the layout's order
            _, params, out, node, x = entry
            entry = None
            # An elementwise rule (``ct * d``, the walk multiplies by d itself) gives a
            # cotangent of x's shape: ct has the shape of out, which is x's, and d's shape
            # is within it. Only its dtype is left to check.
            x_shaped = False
            if params is not None:
                g = prim.vjps[0](ct, out, x, **params)
            elif (derivs := prim._derivs) is None:
                g = ct if prim._passes[0] else prim.vjps[0](ct, out, x)
            elif type(ct) is not ndarray or ct.size < in_place_min_size:
                slopes = prim._slopes
                g = ct * (derivs[0](out, x) if slopes is None else (out, x)[slopes[0]])
                x_shaped = True
            else:
                g = _elementwise_vjp(prim.vjps[0], ct, out, (x,), True)
            ct = None  # (so that an in-place sum below sees the walk's true holders)
            if g is not None:
                # the commonest cases inline: a cotangent of the argument's shape and type,
                # the first for its node, or a small one added to the earlier
                tg = type(g)
                if not (g.dtype is x.dtype and (x_shaped or g.shape == x.shape)
                        if tg is ndarray else tg is type(x) and tg in standins):
                    _accumulate(cts, node, g, x)
                elif (prev := get(node)) is None:
                    cts[node] = g
                elif type(prev) is ndarray and prev.size >= in_place_min_size:
                    prev = None
                    _accumulate(cts, node, g, x)  # (in place, where it may be)
                else:
                    cts[node] = prev + g
                g = prev = None
            continue
        if n == two_args:  # two arguments, the next commonest
            _, params, out, node_a, x, node_b, y = entry
            entry = None
            derivs = prim._derivs
            # (an elementwise rule on a big cotangent may reuse a buffer: `_elementwise_vjp`)
            big = (derivs is not None and params is None and type(ct) is ndarray
                   and ct.size >= in_place_min_size)
            if node_a is not None:
                if big:
                    g = _elementwise_vjp(prim.vjps[0], ct, out, (x, y), node_b is None)
                elif params is not None:
                    g = prim.vjps[0](ct, out, x, y, **params)
                elif derivs is not None:
                    slopes = prim._slopes
                    g = ct * (derivs[0](out, x, y) if slopes is None else (out, x, y)[slopes[0]])
                else:
                    g = ct if prim._passes[0] else prim.vjps[0](ct, out, x, y)
                if node_b is None:
                    ct = None
                if g is not None:
                    tg = type(g)
                    # (an elementwise rule's cotangent, or a passed one, has the output's
                    # shape, which beside a Python number is x's: no shape to compare)
                    if not (g.dtype is x.dtype and (type(y) in numbers and (
                            derivs is not None or prim._passes[0]) or g.shape == x.shape)
                            if tg is ndarray else tg is type(x) and tg in standins):
                        _accumulate(cts, node_a, g, x)
                    elif (prev := get(node_a)) is None:
                        cts[node_a] = g
                    elif type(prev) is ndarray and prev.size >= in_place_min_size:
                        prev = None
                        _accumulate(cts, node_a, g, x)
                    else:
                        cts[node_a] = prev + g
                    g = prev = None
            if node_b is not None:
                if big:
                    g = _elementwise_vjp(prim.vjps[1], ct, out, (x, y), True)
                elif params is not None:
                    g = prim.vjps[1](ct, out, x, y, **params)
                elif derivs is not None:
                    slopes = prim._slopes
                    g = ct * (derivs[1](out, x, y) if slopes is None else (out, x, y)[slopes[1]])
                else:
                    g = ct if prim._passes[1] else prim.vjps[1](ct, out, x, y)
                ct = None
                if g is not None:
                    tg = type(g)
                    if not (g.dtype is y.dtype and (type(x) in numbers and (
                            derivs is not None or prim._passes[1]) or g.shape == y.shape)
                            if tg is ndarray else tg is type(y) and tg in standins):
                        _accumulate(cts, node_b, g, y)
                    elif (prev := get(node_b)) is None:
                        cts[node_b] = g
                    elif type(prev) is ndarray and prev.size >= in_place_min_size:
                        prev = None
                        _accumulate(cts, node_b, g, y)
                    else:
                        cts[node_b] = prev + g
                    g = prev = None
            x = y = None  # hold no value of this entry into the next one
            continue
        _entry_cts(entry, prim, ct, cts, _accumulate)


def _walk_checked(tape: list, cts: dict, n_leaves: int, consume: bool) -> None:
    """The walk under `debug_nans`: every entry takes the general path, and each cotangent
    is checked for NaN as it is added."""
    for i in range(len(tape) - 1, n_leaves - 1, -1):
        entry = tape[i]
        if entry is None:
            continue
        prim = primitive_of(entry[PRIM])
        ct = (_gather_multiple(cts, i, entry[OUT]) if prim.multiple_results
              else cts.pop(i, None))
        if ct is None:
            continue
        if consume:
            tape[i] = None
        _entry_cts(entry, prim, ct, cts, _checking(prim, i, tape))


def _entry_cts(entry: tuple, prim: Primitive, ct: Any, cts: dict, accumulate) -> None:
    """Add the cotangents of one entry's arguments, whatever their number, to `cts`."""
    params = entry[PARAMS]
    out = entry[OUT]
    values = arg_values(entry)
    rules = prim.vjps
    for argnum, node, x in arg_slots(entry):
        if node is None:
            continue
        rule = rules[argnum]
        g = rule(ct, out, *values) if params is None else rule(ct, out, *values, **params)
        if g is not None:
            accumulate(cts, node, g, x)


def _checking(prim, i, tape):
    """`_accumulate` that raises `debug_nans`' error at the first NaN cotangent."""
    def accumulate(cts, node, g, x):
        _accumulate(cts, node, g, x)
        value = cts[node]
        if not isinstance(value, Tracer) and np.isnan(value).any():
            raise _backward_nan(tape, i, prim)
    return accumulate


def _gather_multiple(cts: dict, first: int, outs: tuple):
    """Cotangents of a multiple-result entry; missing ones are zeros, all missing is None."""
    got = [cts.pop(first + k, None) for k in range(len(outs))]
    if all(g is None for g in got):
        return None
    return tuple(engine.zeros_like(o) if g is None else g for o, g in zip(outs, got))
