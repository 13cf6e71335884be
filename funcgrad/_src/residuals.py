"""Which values a primitive's VJP rules read, so that the tape keeps only those.

A tape entry could hold every input and the output of its primitive, but the backward pass
rarely needs them all: ``exp`` needs its output, ``sin`` its input, ``sum`` only its input's
shape. Keeping less lets big intermediates die as soon as the forward pass is done with them.
What a rule reads is found once per primitive, from the rule's own bytecode:

* the transpose of a linear function never reads its (differentiable) arguments' values, only
  their shapes and dtypes, and never its output;
* otherwise a value is kept if some rule of the primitive loads the parameter that receives
  it (for an elementwise function, its local derivative is read instead of the generic rule).

Anything the analysis cannot see through (``*args`` rules, builtins) keeps everything.
"""
from __future__ import annotations

import dis
from typing import Callable

import numpy as np

#: Arrays smaller than this stay on the tape whatever the rules read: a stand-in would cost
#: more than it saves.
PRUNE_MIN_SIZE = 64

_LOADS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_FAST_CHECK",
          "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST"}


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


def _loaded_names(fn: Callable) -> set[str] | None:
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    names: set[str] = set()
    for ins in dis.get_instructions(code):
        if ins.opname in _LOADS:
            names.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
    return names


_VARARGS = 0x04  # CO_VARARGS: a rule taking *args hides which argument is which


def _reads(rule: Callable, skip: int, nargs: int) -> tuple[bool, list[bool]] | None:
    """(reads out?, reads argument i?) for a rule whose parameters are `skip` leading ones,
    then out, then the arguments; None when it cannot be told."""
    code = getattr(rule, "__code__", None)
    if code is None or code.co_flags & _VARARGS:
        return None
    params = code.co_varnames[: code.co_argcount]
    if len(params) < skip + 1 + nargs:
        return None
    names = _loaded_names(rule)
    return params[skip] in names, [a in names for a in params[skip + 1: skip + 1 + nargs]]


def keep_mask(prim) -> tuple[bool, tuple[bool, ...] | None]:
    """(keep the output?, keep argument i?) for `prim`'s tape entries; cached on `prim`."""
    mask = _compute(prim)
    prim._keep = mask
    return mask


_KEEP_ALL = (True, None)


def _compute(prim):
    rules = prim.vjps
    nargs = prim.nargs
    if rules is None or nargs < 0 or prim.multiple_results or type(rules) is not tuple:
        return _KEEP_ALL  # (variadic rule tables, which make rules on demand, included)
    if prim.linear:
        return False, tuple(rule is None for rule in rules)
    keep_out = False
    keep_args = [False] * nargs
    for rule in rules:
        if rule is None:
            continue
        deriv = getattr(rule, "deriv", None)
        reads = _reads(deriv, 0, nargs) if deriv is not None else _reads(rule, 1, nargs)
        if reads is None:
            return _KEEP_ALL
        keep_out |= reads[0]
        keep_args = [k or r for k, r in zip(keep_args, reads[1])]
    for i, rule in enumerate(rules):  # an argument without a rule (an index) is kept as is
        if rule is None:
            keep_args[i] = True
    return keep_out, tuple(keep_args)


def pruned(x, keep: bool):
    """`x` itself, or its shape and dtype alone when the rules do not read it and it is big."""
    if keep or type(x) is not np.ndarray or x.size < PRUNE_MIN_SIZE:
        return x
    return ShapeOnly(x)
