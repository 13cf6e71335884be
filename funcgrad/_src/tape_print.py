"""A printable tape: `make_tape(f)(*args)` records what reverse mode records for `f` and
lists it, one numbered entry per primitive, with nested transforms shown as nested blocks.

It is visualisation only. The recording has the entries `grad` records, in the same flat
form ``(prim, params, out, id0, arg0, ...)`` (a `ProgramTrace` keeps them whole, where
grad's tape drops the values its rules never read), and the listing reads them.
"""
from __future__ import annotations

import functools
import sys
import types
from typing import Callable

import numpy as np

from . import custom, jacobians, program, reverse, transforms
from .core import Tracer, primitive_of, raw
from .program import ProgramTrace
from .reverse import OUT, PARAMS, PRIM, ReverseTracer, arg_nodes, arg_values
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["make_tape", "Tape", "TapeEntry"]


def _describe(value) -> str:
    """``float64[3,2]`` for an array, the number itself for a Python scalar."""
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return repr(value)
    shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
    dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)
    return f"{dtype}[{','.join(str(s) for s in shape)}]"


class TapeEntry:
    """One recorded primitive application.

    ``number``: its position on the tape (inputs come first); ``primitive``: its name;
    ``inputs``: for each argument, the number of the entry that produced it, or None for a
    constant; ``input_types`` / ``output_types``: shapes and dtypes as ``float64[3]``;
    ``params``: the primitive's static parameters; ``block``: the transforms it ran in."""

    __slots__ = ("number", "primitive", "inputs", "input_types", "output_types", "params",
                 "block", "constants")

    def __init__(self, number, primitive, inputs, input_types, output_types, params, block,
                 constants):
        self.number = number
        self.primitive = primitive
        self.inputs = inputs
        self.input_types = input_types
        self.output_types = output_types
        self.params = params
        self.block = block
        self.constants = constants

    def line(self) -> str:
        args = []
        for node, kind, const in zip(self.inputs, self.input_types, self.constants):
            if node is not None:
                args.append(f"%{node}")
            elif const is not None:
                args.append(const)
            else:
                args.append(f"const:{kind}")
        outs = ", ".join(f"%{self.number + k}" for k in range(len(self.output_types)))
        text = f"{outs} = {self.primitive}({', '.join(args)})"
        if self.params:
            text += " {" + ", ".join(f"{k}={_param(v)}" for k, v in self.params.items()) + "}"
        types = (", ".join(self.input_types) or "()") + " -> " + ", ".join(self.output_types)
        return f"{text:<58} ; {types}"

    def __repr__(self) -> str:
        return f"TapeEntry({self.line()})"


def _param(value) -> str:
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name
    if isinstance(value, tuple):
        return "(" + ", ".join(_param(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, slice):
        parts = ["" if p is None else str(p) for p in (value.start, value.stop, value.step)]
        return ":".join(parts[:2]) + (f":{parts[2]}" if value.step is not None else "")
    return repr(value)


class Tape:
    """The program reverse mode records for one call: `inputs` (numbered first), `entries`
    in order, and `outputs` (the entry numbers of the function's results, None for a
    result that does not depend on the inputs). ``str(tape)`` gives the listing."""

    def __init__(self, name: str, inputs: list, entries: list, outputs: list) -> None:
        self.name = name
        self.inputs = inputs
        self.entries = entries
        self.outputs = outputs

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def __getitem__(self, i: int) -> TapeEntry:
        return self.entries[i]

    def primitives(self) -> list[str]:
        """The primitives' names in tape order."""
        return [e.primitive for e in self.entries]

    def __str__(self) -> str:
        lines = [f"tape of {self.name}"]
        lines += [f"  in  %{i} : {kind}" for i, kind in enumerate(self.inputs)]
        open_blocks: list = []
        for entry in self.entries:
            common = 0
            while (common < len(open_blocks) and common < len(entry.block)
                   and open_blocks[common] == entry.block[common]):
                common += 1
            while len(open_blocks) > common:
                open_blocks.pop()
                lines.append("  " + "  " * (len(open_blocks) + 1) + "}")
            while len(open_blocks) < len(entry.block):
                label = entry.block[len(open_blocks)][0]
                lines.append("  " + "  " * (len(open_blocks) + 1) + f"{label} {{")
                open_blocks.append(entry.block[len(open_blocks)])
            lines.append("  " + "  " * (len(open_blocks) + 1) + entry.line())
        while open_blocks:
            open_blocks.pop()
            lines.append("  " + "  " * (len(open_blocks) + 1) + "}")
        outs = ", ".join("const" if o is None else f"%{o}" for o in self.outputs)
        lines.append(f"  out {outs}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


# --- which transform is running: read off the Python stack --------------------------------
def _block_codes() -> dict:
    """The code objects of the transforms' working functions, with the label each block
    gets. They are found by building each transform once on a dummy function."""
    def dummy(x):
        return x

    codes = {
        transforms.value_and_grad(dummy).__code__: "grad",
        transforms.grad(dummy).__code__: "grad",
        transforms.vjp.__code__: "vjp",
        transforms.jvp.__code__: "jvp",
        transforms.vmap(dummy).__code__: "vmap",
        reverse.backward.__code__: "backward pass",
        jacobians.jacrev(dummy).__code__: "jacrev",
        jacobians.jacfwd(dummy).__code__: "jacfwd",
        jacobians.linearize.__code__: "linearize",
        program.replay.__code__: "replay",
        reverse.CustomCall.cotangent.__code__: "custom rule",
    }
    codes[transforms.vjp(dummy, 1.0)[1].__code__] = "vjp_fn"
    return codes


#: Built once, at import, and never written: make_tape's readers share it across threads.
_CODES = types.MappingProxyType(_block_codes())


def _current_block(stop_frame) -> tuple:
    """The transforms running between the recording and the primitive call, outermost first."""
    frame = sys._getframe(2)
    found = []
    inner = None  # the frame of the last transform found (deeper in the stack)
    while frame is not None and frame is not stop_frame:
        label = _CODES.get(frame.f_code)
        if label is not None:
            # a transform calling its own helper directly (grad -> value_and_grad) is one
            # block, not two
            if found and found[-1][0] == label and inner is not None and inner.f_back is frame:
                found[-1] = (label, id(frame))
            else:
                found.append((label, id(frame)))
            inner = frame
        frame = frame.f_back
    found.reverse()
    return tuple(found)


class _RecordingTape(list):
    """The tape list, noting for each entry which transforms were running."""

    def __init__(self, stop_frame) -> None:
        super().__init__()
        self.blocks: list = []
        self.stop_frame = stop_frame

    def append(self, entry) -> None:
        super().append(entry)
        self.blocks.append(_current_block(self.stop_frame))

    def extend(self, entries) -> None:
        entries = list(entries)
        super().extend(entries)
        block = _current_block(self.stop_frame)
        self.blocks.extend([block] * len(entries))


def make_tape(f: Callable) -> Callable:
    """``make_tape(f)(*args)``: the `Tape` reverse mode records for ``f(*args)``, with every
    array leaf of `args` as an input. Transforms running inside `f` (grad, vjp, jvp, vmap,
    jacobians, their backward passes) show as nested blocks.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> tape = fg.make_tape(lambda x: fnp.sum(fnp.sin(x) * x))(fnp.array([1.0, 2.0]))
    >>> tape.primitives()
    ['sin', 'multiply', 'sum']
    >>> print(tape)  # doctest: +NORMALIZE_WHITESPACE
    tape of <lambda>
      in  %0 : float64[2]
        %1 = sin(%0)                                  ; float64[2] -> float64[2]
        %2 = multiply(%1, %0)                         ; float64[2], float64[2] -> float64[2]
        %3 = sum(%2) {axis=None, keepdims=False}      ; float64[2] -> float64[]
      out %3
    """
    @functools.wraps(f)
    def recorded(*args):
        leaves, treedef = tree_flatten(tuple(args))
        trace = ProgramTrace()
        trace.tape = _RecordingTape(sys._getframe(0))
        inputs = []
        traced = []
        for leaf in leaves:
            value = leaf if isinstance(leaf, Tracer) else raw(leaf)
            if not isinstance(value, Tracer):
                value = np.asarray(value)
            traced.append(trace.leaf(value))
            inputs.append(_describe(value))
        try:
            out = f(*tree_unflatten(treedef, traced))
        finally:
            trace.alive = False
        outputs = []
        for leaf in tree_flatten(out)[0]:
            outputs.append(leaf._id if isinstance(leaf, ReverseTracer) and leaf._trace is trace
                           else None)
        tape = trace.tape
        entries = []
        for i, entry in enumerate(tape):
            if entry is None:
                continue
            prim, params, result = primitive_of(entry[PRIM]), entry[PARAMS], entry[OUT]
            results = result if prim.multiple_results else (result,)
            nodes = list(arg_nodes(entry))
            values = arg_values(entry)
            constants = [_describe(v) if n is None and np.size(v) == 1 and not hasattr(v, "shape")
                         else None for n, v in zip(nodes, values)]
            entries.append(TapeEntry(i, prim.name, nodes, [_describe(v) for v in values],
                                     [_describe(r) for r in results],
                                     {k: v for k, v in (params or {}).items() if k != "call"},
                                     tape.blocks[i], constants))
        return Tape(getattr(f, "__name__", "function"), inputs, entries, outputs)

    return recorded
