"""Reverse mode: the tape a transform records, and the iterative walk that replays it.

A tape entry is one flat tuple ``(prim, params, out, id0, arg0, id1, arg1, ...)``: the node
ids of traced arguments (``None`` for constants) interleaved with the argument values, of
which only those the rules read are kept (`residuals.py`). It holds no tracer of its own
trace, no closure and no dict (``params`` is ``None`` when empty): small, and no cycles.
A node's id is its entry's position on the tape; leaves occupy the first positions with
``None`` entries.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import residuals
from .core import Array, FuncgradError, Primitive, Trace, Tracer, engine


class ReverseTracer(Tracer):
    __slots__ = ("_id",)

    def __init__(self, trace: "ReverseTrace", value: Any, node_id: int) -> None:
        self._trace = trace
        self._value = value
        self._id = node_id


_new_object = object.__new__


def _tracer(trace, value, node_id):
    """A ReverseTracer without an __init__ frame: this runs once per recorded operation."""
    t = _new_object(ReverseTracer)
    t._trace = trace
    t._value = value
    t._id = node_id
    return t


class ReverseTrace(Trace):
    __slots__ = ("tape",)
    name = "grad"

    def __init__(self) -> None:
        super().__init__()
        self.tape: list = []

    def leaf(self, value) -> ReverseTracer:
        tape = self.tape
        tape.append(None)
        return ReverseTracer(self, value, len(tape) - 1)

    def process1(self, prim: Primitive, a: Any, params: dict):
        """One argument, necessarily ours: the commonest case, kept short."""
        x = a._value
        if isinstance(x, Tracer):
            out = prim(x, **params)
        elif params:
            out = prim.impl(x, **params)
        else:
            out = prim.impl(x)
        if not prim.differentiable:
            return out
        if prim.vjps is None or prim.vjps[0] is None:
            raise _no_rule(prim, "a derivative (VJP) rule", 0)
        keep = prim._keep or residuals.keep_mask(prim)
        if keep[1] is not None and not keep[1][0] and type(x) is np.ndarray \
                and x.size >= residuals.PRUNE_MIN_SIZE:
            x = residuals.ShapeOnly(x)
        tape = self.tape
        tape.append((prim, params or None, out if keep[0] else None, a._id, x))
        if prim.multiple_results:
            return self._outputs(out)
        return _tracer(self, out, len(tape) - 1)

    def process2(self, prim: Primitive, a: Any, b: Any, params: dict):
        """Two arguments: the next commonest, also spelled out."""
        if type(a) is ReverseTracer and a._trace is self:
            ia, xa = a._id, a._value
        else:
            ia, xa = None, (a._value if type(a) is Array else a)
        if type(b) is ReverseTracer and b._trace is self:
            ib, xb = b._id, b._value
        else:
            ib, xb = None, (b._value if type(b) is Array else b)
        if isinstance(xa, Tracer) or isinstance(xb, Tracer):
            out = prim(xa, xb, **params)
        elif params:
            out = prim.impl(xa, xb, **params)
        else:
            out = prim.impl(xa, xb)
        if not prim.differentiable or (ia is None and ib is None):
            return out
        vjps = prim.vjps
        if vjps is None or (ia is not None and vjps[0] is None) or (ib is not None and vjps[1] is None):
            raise _no_rule(prim, "a derivative (VJP) rule", 0 if ia is not None else 1)
        keep = prim._keep or residuals.keep_mask(prim)
        kept = keep[1]
        if kept is not None:
            if not kept[0]:
                xa = residuals.pruned(xa, False)
            if not kept[1]:
                xb = residuals.pruned(xb, False)
        tape = self.tape
        tape.append((prim, params or None, out if keep[0] else None, ia, xa, ib, xb))
        if prim.multiple_results:
            return self._outputs(out)
        return _tracer(self, out, len(tape) - 1)

    def process(self, prim: Primitive, args: Sequence[Any], params: dict):
        entry = [prim, params or None, None]
        lower = False
        traced = False
        for a in args:
            if type(a) is ReverseTracer and a._trace is self:
                x = a._value
                entry += (a._id, x)
                traced = True
            else:
                x = a._value if type(a) is Array else a
                entry += (None, x)
            if isinstance(x, Tracer):
                lower = True
        vals = entry[4::2]
        out = prim(*vals, **params) if lower else prim.impl(*vals, **params)
        if not prim.differentiable or not traced:
            return out
        vjps = prim.vjps
        for k in range(3, len(entry), 2):
            if entry[k] is not None and (vjps is None or vjps[(k - 3) >> 1] is None):
                raise _no_rule(prim, "a derivative (VJP) rule", (k - 3) >> 1)
        keep = prim._keep or residuals.keep_mask(prim)
        if keep[0]:
            entry[2] = out
        if keep[1] is not None:
            for k, kept in enumerate(keep[1]):
                entry[4 + 2 * k] = residuals.pruned(entry[4 + 2 * k], kept)
        tape = self.tape
        tape.append(tuple(entry))
        if prim.multiple_results:
            return self._outputs(out)
        return ReverseTracer(self, out, len(tape) - 1)

    def _outputs(self, outs: tuple) -> tuple:
        """Tracers for a multiple-result entry; the extra ids are placeholder entries."""
        tape = self.tape
        first = len(tape) - 1
        tape.extend([None] * (len(outs) - 1))
        return tuple(ReverseTracer(self, o, first + k) for k, o in enumerate(outs))


def _no_rule(prim: Primitive, what: str, argnum: int | None) -> FuncgradError:
    where = f"argument {argnum}" if argnum is not None else "its arguments"
    return FuncgradError(
        f"funcgrad cannot differentiate {prim.name} with respect to {where}: it has no "
        f"{what} there. Wrap that argument in funcgrad.stop_gradient if it should be held "
        f"constant, or declare the rule beside {prim.name}'s forward in its namespace table"
    )


def backward(tape: list, out_ids: Sequence[int], out_cts: Sequence[Any], n_leaves: int,
             consume: bool) -> list:
    """Replay `tape` in reverse from the cotangents of `out_ids`; return the leaves' cotangents.

    Iterative, never recursive. Each cotangent is dropped as soon as it has been used, and
    with `consume` each tape entry is dropped too, so memory falls as the walk proceeds.
    Entries whose output received no cotangent are skipped: they do not reach the output.
    """
    cts: dict = {}
    for i, ct in zip(out_ids, out_cts):
        if i is not None:
            cts[i] = cts[i] + ct if i in cts else ct
    pop = cts.pop
    get = cts.get
    unbroadcast = engine.sum_to_shape
    for i in range(len(tape) - 1, n_leaves - 1, -1):
        entry = tape[i]
        if entry is None:
            continue
        prim = entry[0]
        if prim.multiple_results:
            ct = _gather_multiple(cts, i, entry[2])
            if ct is None:
                continue
        else:
            ct = pop(i, None)
            if ct is None:
                if not cts:
                    break
                continue
        if consume:
            tape[i] = None
        params = entry[1]
        rules = prim.vjps
        if len(entry) == 5:  # one argument: no slicing, no inner loop
            x = entry[4]
            g = rules[0](ct, entry[2], x) if params is None else rules[0](ct, entry[2], x, **params)
            if g is not None:
                if type(g) is Array:
                    g = g._value
                if g.shape != x.shape:
                    g = unbroadcast(g, x.shape)
                if g.dtype is not x.dtype:  # float32 stays float32; real inputs get real cts
                    g = engine.astype(g, x.dtype)
                node = entry[3]
                prev = get(node)
                cts[node] = g if prev is None else prev + g
            continue
        if len(entry) == 7:  # two arguments, spelled out likewise
            out, xa, xb = entry[2], entry[4], entry[6]
            node = entry[3]
            if node is not None:
                g = rules[0](ct, out, xa, xb) if params is None else rules[0](ct, out, xa, xb, **params)
                if g is not None:
                    if type(g) is Array:
                        g = g._value
                    if g.shape != xa.shape:
                        g = unbroadcast(g, xa.shape)
                    if g.dtype is not xa.dtype:
                        g = engine.astype(g, xa.dtype)
                    prev = get(node)
                    cts[node] = g if prev is None else prev + g
            node = entry[5]
            if node is not None:
                g = rules[1](ct, out, xa, xb) if params is None else rules[1](ct, out, xa, xb, **params)
                if g is not None:
                    if type(g) is Array:
                        g = g._value
                    if g.shape != xb.shape:
                        g = unbroadcast(g, xb.shape)
                    if g.dtype is not xb.dtype:
                        g = engine.astype(g, xb.dtype)
                    prev = get(node)
                    cts[node] = g if prev is None else prev + g
            continue
        args = entry[4::2]
        for k in range(3, len(entry), 2):
            node = entry[k]
            if node is None:
                continue
            rule = rules[(k - 3) >> 1]
            g = rule(ct, entry[2], *args) if params is None else rule(ct, entry[2], *args, **params)
            if g is None:
                continue
            if type(g) is Array:
                g = g._value
            x = entry[k + 1]
            if g.shape != x.shape:
                g = unbroadcast(g, x.shape)
            if g.dtype is not x.dtype:
                g = engine.astype(g, x.dtype)
            prev = get(node)
            cts[node] = g if prev is None else prev + g
    return [pop(i, None) for i in range(n_leaves)]


def _gather_multiple(cts: dict, first: int, outs: tuple):
    """Cotangents of a multiple-result entry; missing ones are zeros, all missing is None."""
    got = [cts.pop(first + k, None) for k in range(len(outs))]
    if all(g is None for g in got):
        return None
    return tuple(engine.zeros_like(o) if g is None else g for o, g in zip(outs, got))
