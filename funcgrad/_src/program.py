"""A recorded program: the reverse-mode trace without residual pruning, and the forward replay
of such a tape on new inputs. linearize replays the tangent part of a JVP with it; make_tape
lists it; a custom_jvp rule under reverse mode is transposed through it."""
from __future__ import annotations

from typing import Any, Sequence

from .core import primitive_of
from .reverse import ARGS, PARAMS, PRIM, ReverseTrace

__all__ = ["ProgramTrace", "replay"]


class ProgramTrace(ReverseTrace):
    """`ReverseTrace` keeping every argument and output whole, so that the tape can be run
    forward again (`replay`) as well as backward."""

    __slots__ = ()
    name = "program"
    prune = False

    # every entry takes the general path, which keeps what `prune = False` asks
    def process1(self, prim, a, params):
        return self.process(prim, (a,), params)

    def process2(self, prim, a, b, params):
        return self.process(prim, (a, b), params)


def replay(tape: list, n_leaves: int, leaf_values: Sequence[Any],
           out_ids: Sequence[int | None]) -> list:
    """Run a recorded tape forward on new leaf values; return the values of `out_ids`.

    Each entry is applied as the primitive call it records (a custom call's primitive runs
    the call again, rule and all), so a replay under another transform (vmap, grad) is
    itself transformed. Values are dropped once no later entry needs them."""
    last_use = {}
    for i in range(n_leaves, len(tape)):
        entry = tape[i]
        if entry is not None:
            for k in range(ARGS, len(entry), 2):
                if entry[k] is not None:
                    last_use[entry[k]] = i
    keep = {i for i in out_ids if i is not None}
    values: dict = dict(enumerate(leaf_values))
    for i in range(n_leaves, len(tape)):
        entry = tape[i]
        if entry is None:  # the later results of a multiple-result entry
            continue
        prim, params = primitive_of(entry[PRIM]), entry[PARAMS]
        args = [entry[k + 1] if entry[k] is None else values[entry[k]]
                for k in range(ARGS, len(entry), 2)]
        out = prim(*args, **params) if params else prim(*args)
        if prim.multiple_results:
            for k, o in enumerate(out):
                values[i + k] = o
        else:
            values[i] = out
        for k in range(ARGS, len(entry), 2):
            node = entry[k]
            if node is not None and last_use.get(node) == i and node not in keep:
                values.pop(node, None)
    return [None if i is None else values[i] for i in out_ids]
