"""What a primitive's VJP rules read, worked out once from their bytecode when the primitive is
declared, and how the tape keeps only that.

A tape entry could hold every input and the output of its primitive, but the backward pass
rarely needs them all: ``exp`` needs its output, ``sin`` its input, ``sum`` only its input's
shape. Keeping less lets big intermediates die as soon as the forward pass is done with them.

* the transpose of a linear function never reads its (differentiable) arguments' values, only
  their shapes and dtypes, and never its output;
* otherwise a value is read if the rule loads the parameter that receives it (for an
  elementwise function, its local derivative ``rule.deriv`` is read instead of the generic
  ``ct * deriv`` rule).

The analysis errs on the side of keeping: a rule it cannot see through (``*args`` rules,
builtins, callables without bytecode, an instruction it does not know that might read a
local) reads everything. Loads are recognised by opcode family, not by exact name, so new
spellings in later Pythons (``LOAD_FAST_BORROW`` in 3.14, ``LOAD_FAST_LOAD_FAST`` in 3.13)
are still loads.
"""
from __future__ import annotations

import dis
from typing import Callable, Iterable, Sequence

import numpy as np

__all__ = ["rule_reads", "keep_mask", "loaded_names", "returned_param", "ShapeOnly", "pruned",
           "PRUNE_MIN_SIZE", "OUT"]

#: Arrays smaller than this stay on the tape whatever the rules read: a stand-in would cost
#: more than it saves.
PRUNE_MIN_SIZE = 64

#: How ``Primitive.reads`` names the primitive's output (arguments are named by position).
OUT = "out"

_VARARGS = 0x04  # CO_VARARGS: a rule taking *args hides which argument is which
_VARKEYWORDS = 0x08  # CO_VARKEYWORDS


class ShapeOnly:
    """What the tape keeps of an array whose values the backward pass does not read."""

    __slots__ = ("shape", "dtype")

    def __init__(self, value) -> None:
        self.shape = value.shape
        self.dtype = value.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        return f"ShapeOnly({self.shape}, {self.dtype})"


def _is_local_load(opname: str) -> bool:
    """Whether an instruction reads a local or closure variable, by opcode family: every
    ``LOAD_*`` opcode naming FAST, DEREF or CLOSURE (and their fused pairs)."""
    return opname.startswith("LOAD_") and any(
        part in opname for part in ("FAST", "DEREF", "CLOSURE"))


def _reads_locals_wholesale(opname: str) -> bool:
    """Instructions that hand every local to someone else (``locals()`` in a class body,
    ``LOAD_LOCALS``): after one of them, any parameter may be read."""
    return "LOCALS" in opname


def loaded_names(instructions: Iterable[tuple[str, object]]) -> set[str] | None:
    """The local names a stream of ``(opname, argval)`` instructions loads; None when it
    cannot be told (then every value must be kept)."""
    names: set[str] = set()
    for opname, argval in instructions:
        if _reads_locals_wholesale(opname):
            return None
        if not _is_local_load(opname):
            continue
        if isinstance(argval, str):
            names.add(argval)
        elif isinstance(argval, tuple) and all(isinstance(a, str) for a in argval):
            names.update(argval)
        else:  # a load whose operand we cannot read: assume it reads anything
            return None
    return names


def _params_read(fn: Callable, skip: int, nargs: int) -> tuple[bool, list[bool]] | None:
    """(reads out?, reads argument i?) for a rule whose parameters are `skip` leading ones,
    then out, then the arguments; None when it cannot be told."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & _VARARGS:
        return None
    params = code.co_varnames[: code.co_argcount]
    if len(params) < skip + 1 + nargs:
        return None
    names = loaded_names((ins.opname, ins.argval) for ins in dis.get_instructions(code))
    if names is None:
        return None
    return params[skip] in names, [a in names for a in params[skip + 1: skip + 1 + nargs]]


def returned_param(fn: Callable) -> int | None:
    """The position of the parameter `fn` returns as it is, when that is all its body does
    (``lambda out, x, y: y``, a transpose ``return ct``); None for anything else, or when it
    cannot be told. The backward walk then reads that value instead of calling `fn`."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & (_VARARGS | _VARKEYWORDS) or getattr(fn, "__defaults__", None):
        return None
    body = [(ins.opname, ins.argval) for ins in dis.get_instructions(code)
            if ins.opname not in ("RESUME", "NOP", "CACHE", "EXTENDED_ARG")]
    params = code.co_varnames[: code.co_argcount]
    if (len(body) == 2 and body[0][0].startswith("LOAD_FAST") and body[1][0] == "RETURN_VALUE"
            and body[0][1] in params):
        return params.index(body[0][1])
    return None


def rule_reads(vjps: Sequence[Callable | None] | None, nargs: int,
               linear: bool) -> tuple[frozenset | None, ...] | None:
    """``Primitive.reads``: for each array argument ``i``, the set of values its VJP rule
    reads, named by argument position (ints) and `OUT`; None for an argument without a rule.
    None altogether when the primitive has no rules or a variable number of arguments."""
    if vjps is None or nargs < 0 or type(vjps) is not tuple:
        return None  # (variadic rule tables, which make rules on demand, included)
    everything = frozenset(range(nargs)) | {OUT}
    # an argument without a rule (an index, a mask) is read as it is by the others' rules
    undifferentiated = frozenset(i for i, rule in enumerate(vjps) if rule is None)
    reads = []
    for rule in vjps:
        if rule is None:
            reads.append(None)
        elif linear:
            reads.append(undifferentiated)
        else:
            deriv = getattr(rule, "deriv", None)
            found = (_params_read(deriv, 0, nargs) if deriv is not None
                     else _params_read(rule, 1, nargs))
            if found is None:
                reads.append(everything)
            else:
                reads_out, reads_args = found
                reads.append(frozenset(i for i, r in enumerate(reads_args) if r)
                             | ({OUT} if reads_out else frozenset()))
    return tuple(reads)


#: The tape mask of a primitive whose reads are unknown: keep the output and every argument.
KEEP_ALL: tuple[bool, tuple[bool, ...] | None] = (True, None)


def keep_mask(reads: tuple[frozenset | None, ...] | None,
              multiple_results: bool = False) -> tuple[bool, tuple[bool, ...] | None]:
    """What the tape keeps of an entry, from ``Primitive.reads``: (the output?, argument i?);
    ``None`` for the arguments means all of them. Derived, never declared."""
    if reads is None or multiple_results:
        return KEEP_ALL
    keep_out = any(r is not None and OUT in r for r in reads)
    keep_args = tuple(r is None or any(i in other for other in reads if other is not None)
                      for i, r in enumerate(reads))
    return keep_out, keep_args


def pruned(x, keep: bool):
    """`x` itself, or its shape and dtype alone when the rules do not read it and it is big."""
    if keep or type(x) is not np.ndarray or x.size < PRUNE_MIN_SIZE:
        return x
    return ShapeOnly(x)
