"""What a node of the op table saves, derived from the shared primitive's one record.

``Primitive.reads`` (funcgrad/_src/residuals.py) names, for each argument's VJP rule, the
values the rule loads. PyTorch saves a little less: a value a rule needs only for its shape
or dtype (``H.ndim(x)`` in matmul's rule, ``ones_like(out)`` in remainder's) is kept as
sizes, not as a tensor, so writing it in place later is no error. This module finds those
shape-only loads in the same bytecode, so the mutable layer saves exactly what PyTorch
saves without a second, hand-kept record. When unsure it says "value" (the tensor is saved
and version-checked): the error then is a spurious version error, never a wrong gradient.
"""
from __future__ import annotations

import dis
from typing import Callable

from .._src.residuals import OUT

__all__ = ["OUT", "value_reads", "SHAPE_FUNCTIONS"]

#: Calls and attributes that read only an array's shape and dtype.
SHAPE_FUNCTIONS = frozenset({"shape", "ndim", "dtype", "size", "ones_like", "zeros_like"})
_CALLEE_LOADS = ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL")


def _shape_only_params(fn: Callable, names: dict) -> set | None:
    """Of `names` (parameter name -> key), the keys whose every load in `fn` feeds only a
    shape function; None when `fn` cannot be read."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "PRECALL")]
    value_read: set = set()
    loaded: set = set()
    for k, i in enumerate(ins):
        if not (i.opname.startswith("LOAD_") and any(
                part in i.opname for part in ("FAST", "DEREF", "CLOSURE"))):
            continue
        if not isinstance(i.argval, str):  # a fused load of several names: read as values
            if isinstance(i.argval, tuple):
                value_read.update(a for a in i.argval if a in names)
            continue
        if i.argval not in names:
            continue
        loaded.add(i.argval)
        before = ins[k - 1] if k else None
        after = ins[k + 1] if k + 1 < len(ins) else None
        attribute = (after is not None and after.opname == "LOAD_ATTR"
                     and after.argval in SHAPE_FUNCTIONS)
        call = (before is not None and before.opname in _CALLEE_LOADS
                and before.argval in SHAPE_FUNCTIONS and after is not None
                and after.opname == "CALL" and after.arg == 1)
        if not (attribute or call) or "CLOSURE" in i.opname:
            value_read.add(i.argval)
    return {names[n] for n in loaded - value_read}


def value_reads(prim) -> tuple | None:
    """For each array argument of `prim`, the values its VJP rule reads beyond their shape
    and dtype (argument positions and `OUT`); None where ``prim.reads`` is None (the
    primitive's reads are unknown) and None for an argument without a rule."""
    reads = prim.reads
    if reads is None:
        return None
    out = []
    for k, found in enumerate(reads):
        if found is None:
            out.append(None)
            continue
        rule = prim.vjps[k]
        deriv = getattr(rule, "deriv", None)
        fn = deriv if deriv is not None else rule
        code = getattr(fn, "__code__", None)
        if code is None or prim.linear:
            out.append(found)
            continue
        params = code.co_varnames[: code.co_argcount]
        skip = 0 if deriv is not None else 1
        names = {params[skip]: OUT}
        names.update((p, n) for n, p in enumerate(params[skip + 1: skip + 1 + len(reads)]))
        shape_only = _shape_only_params(fn, names)
        out.append(found if shape_only is None else frozenset(found - shape_only))
    return tuple(out)
