"""Reverse mode: the tape a transform records, and the iterative walk that replays it.

A tape entry is one flat tuple ``(prim, params, out, id0, arg0, id1, arg1, ...)``: the node
ids of traced arguments (``None`` for constants) interleaved with the argument values. It
holds no tracers, no closures and no dicts (``params`` is ``None`` when empty), so after the
first collection Python's cyclic GC stops scanning it and a long tape stays linear in time.
A node's id is its entry's position on the tape; leaves occupy the first positions with
``None`` entries.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .core import Array, FuncgradError, Primitive, Trace, Tracer, engine


class ReverseTracer(Tracer):
    __slots__ = ("_id",)

    def __init__(self, trace: "ReverseTrace", value: Any, node_id: int) -> None:
        self._trace = trace
        self._value = value
        self._id = node_id


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

    def process(self, prim: Primitive, args: Sequence[Any], params: dict):
        entry = [prim, params or None, None]
        vals = []
        traced = False
        for a in args:
            if type(a) is ReverseTracer and a._trace is self:
                vals.append(a._value)
                entry.append(a._id)
                entry.append(a._value)
                traced = True
            else:
                if type(a) is Array:
                    a = a._value
                vals.append(a)
                entry.append(None)
                entry.append(a)
        out = prim(*vals, **params)
        if not prim.differentiable or not traced:
            return out
        if prim.vjps is None:
            raise _no_rule(prim, "a derivative (VJP) rule", None)
        vjps = prim.vjps
        for i in range(3, len(entry), 2):
            if entry[i] is not None and vjps[(i - 3) // 2] is None:
                raise _no_rule(prim, "a derivative (VJP) rule", (i - 3) // 2)
        entry[2] = out
        tape = self.tape
        tape.append(tuple(entry))
        if prim.multiple_results:
            first = len(tape) - 1
            tape.extend([None] * (len(out) - 1))
            return tuple(ReverseTracer(self, o, first + k) for k, o in enumerate(out))
        return ReverseTracer(self, out, len(tape) - 1)


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
    unbroadcast = engine.sum_to_shape
    for i in range(len(tape) - 1, n_leaves - 1, -1):
        entry = tape[i]
        if entry is None:
            continue
        prim, params, out = entry[0], entry[1], entry[2]
        if prim.multiple_results:
            ct = _gather_multiple(cts, i, out)
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
        args = entry[4::2]
        rules = prim.vjps
        for k in range(3, len(entry), 2):
            node = entry[k]
            if node is None:
                continue
            argnum = (k - 3) >> 1
            if params is None:
                g = rules[argnum](ct, out, *args)
            else:
                g = rules[argnum](ct, out, *args, **params)
            if g is None:
                continue
            if type(g) is Array:
                g = g._value
            if g.shape != entry[k + 1].shape:
                g = unbroadcast(g, entry[k + 1].shape)
            if node in cts:
                cts[node] = cts[node] + g
            else:
                cts[node] = g
        del ct, entry
    return [pop(i, None) for i in range(n_leaves)]


def _gather_multiple(cts: dict, first: int, outs: tuple):
    """Cotangents of a multiple-result entry; missing ones are zeros, all missing is None."""
    got = [cts.pop(first + k, None) for k in range(len(outs))]
    if all(g is None for g in got):
        return None
    return tuple(engine.zeros_like(o) if g is None else g for o, g in zip(outs, got))
