"""Forward mode: a tracer carries a tangent beside its primal, and each primitive's JVP rules
push the tangent through in the same pass. ``None`` stands for a zero tangent."""
from __future__ import annotations

from typing import Any, Sequence

from .core import Array, Primitive, Trace, Tracer, _show, engine, raw
from .reverse import _no_rule


class JVPTracer(Tracer):
    __slots__ = ("_tangent",)

    def __init__(self, trace: "JVPTrace", primal: Any, tangent: Any) -> None:
        self._trace = trace
        self._value = primal
        self._tangent = tangent

    def _describe(self) -> str:
        tangent = "0" if self._tangent is None else _show(self._tangent)
        return f"primal {_show(self._value)} and tangent {tangent}"


class JVPTrace(Trace):
    __slots__ = ()
    name = "jvp"

    def process(self, prim: Primitive, args: Sequence[Any], params: dict):
        primals = []
        tangents = []
        for a in args:
            if type(a) is JVPTracer and a._trace is self:
                primals.append(a._value)
                tangents.append(a._tangent)
            else:
                primals.append(a._value if type(a) is Array else a)
                tangents.append(None)
        out = prim(*primals, **params)
        if not prim.differentiable or all(t is None for t in tangents):
            return out
        if prim.linear:
            # Arguments that carry no derivative (index arrays) keep their primal value.
            rules = prim.vjps
            t_out = prim(*[t if t is not None else
                           (engine.zeros_like(p) if rules[i] is not None else p)
                           for i, (p, t) in enumerate(zip(primals, tangents))], **params)
        else:
            if prim.jvps is None:
                raise _no_rule(prim, "a forward-mode (JVP) rule", None)
            t_out = None
            for i, t in enumerate(tangents):
                if t is None:
                    continue
                rule = prim.jvps[i]
                if rule is None:
                    raise _no_rule(prim, "a forward-mode (JVP) rule", i)
                contribution = rule(t, out, *primals, **params)
                if contribution is None:
                    continue
                t_out = contribution if t_out is None else t_out + contribution
        if prim.multiple_results:
            return tuple(JVPTracer(self, o, _fit(t, o)) for o, t in zip(out, t_out))
        return JVPTracer(self, out, _fit(t_out, out))


    def process_custom(self, rule: Any, leaves: list, in_def: Any):
        """A custom call: the rule pushes the tangents (`rule.forward`)."""
        lower = []
        tangents = []
        for leaf in leaves:
            if type(leaf) is JVPTracer and leaf._trace is self:
                lower.append(leaf._value)
                tangents.append(leaf._tangent)
            else:
                lower.append(raw(leaf))
                tangents.append(None)
        return rule.forward(self, lower, tangents, in_def)


def _fit(tangent, primal):
    """A tangent of the primal's shape and dtype (rules may return a broadcastable one)."""
    if tangent is None:
        return None
    if type(tangent) is Array:
        tangent = tangent._value
    if tangent.shape != primal.shape:
        tangent = engine.broadcast_to(tangent, primal.shape)
    if tangent.dtype != primal.dtype:
        tangent = engine.astype(tangent, primal.dtype)
    return tangent
