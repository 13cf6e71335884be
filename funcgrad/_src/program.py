"""A recorded program: a reverse-mode trace that keeps every tape entry whole (no residual
pruning), and the forward replay of such a tape on new inputs. linearize replays the
tangent part of a JVP with it; make_tape lists it."""
from __future__ import annotations

from typing import Any, Sequence

from .core import Array, Primitive
from .reverse import ReverseTrace, ReverseTracer, _no_rule

__all__ = ["ProgramTrace", "replay"]


class ProgramTrace(ReverseTrace):
    """Records the same entries as `ReverseTrace`, ``(prim, params, out, id0, arg0, ...)``,
    but keeps every argument and output, so the tape can be run forward again."""

    __slots__ = ()
    name = "program"

    def process(self, prim: Primitive, args: Sequence[Any], params: dict):
        entry = [prim, params or None, None]
        traced = False
        for a in args:
            if type(a) is ReverseTracer and a._trace is self:
                entry += (a._id, a._value)
                traced = True
            else:
                entry += (None, a._value if type(a) is Array else a)
        out = prim(*entry[4::2], **params)
        if not prim.differentiable or not traced:
            return out
        vjps = prim.vjps
        for k in range(3, len(entry), 2):
            if entry[k] is not None and (vjps is None or vjps[(k - 3) >> 1] is None):
                raise _no_rule(prim, "a derivative (VJP) rule", (k - 3) >> 1)
        entry[2] = out
        tape = self.tape
        tape.append(tuple(entry))
        if prim.multiple_results:
            first = len(tape) - 1
            tape.extend([None] * (len(out) - 1))
            return tuple(ReverseTracer(self, o, first + k) for k, o in enumerate(out))
        return ReverseTracer(self, out, len(tape) - 1)

    def process1(self, prim: Primitive, x: Any, params: dict):
        return self.process(prim, (x,), params)

    def process2(self, prim: Primitive, x: Any, y: Any, params: dict):
        return self.process(prim, (x, y), params)


def is_custom_call(prim: Primitive) -> bool:
    from .custom import is_custom_call as check  # custom imports this module's users
    return check(prim)


def replay(tape: list, n_leaves: int, leaf_values: Sequence[Any],
           out_ids: Sequence[int | None]) -> list:
    """Run a recorded tape forward on new leaf values; return the values of `out_ids`.

    Each entry is applied as the primitive call it records, so a replay under another
    transform (vmap, grad) is itself transformed. Values are dropped once no later entry
    needs them."""
    last_use = {}
    for i in range(n_leaves, len(tape)):
        entry = tape[i]
        if entry is not None:
            for k in range(3, len(entry), 2):
                if entry[k] is not None:
                    last_use[entry[k]] = i
    keep = {i for i in out_ids if i is not None}
    values: dict = dict(enumerate(leaf_values))
    for i in range(n_leaves, len(tape)):
        entry = tape[i]
        if entry is None:  # the later results of a multiple-result entry
            continue
        prim, params = entry[0], entry[1]
        args = [entry[k + 1] if entry[k] is None else values[entry[k]]
                for k in range(3, len(entry), 2)]
        if is_custom_call(prim):  # the call as a unit, so its rule applies again
            out = params["call"].apply(args)
        else:
            out = prim(*args, **params) if params else prim(*args)
        if prim.multiple_results:
            for k, o in enumerate(out):
                values[i + k] = o
        else:
            values[i] = out
        for k in range(3, len(entry), 2):
            node = entry[k]
            if node is not None and last_use.get(node) == i and node not in keep:
                values.pop(node, None)
    return [None if i is None else values[i] for i in out_ids]
