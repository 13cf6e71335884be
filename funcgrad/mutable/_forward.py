"""Forward-mode AD of funcgrad.mutable (torch.autograd.forward_ad): dual tensors and how their
tangents flow through ops.

A dual tensor is an ordinary tensor (its storage, version counter and backward history are
its primal's) with a tangent tensor in ``_fw_grad`` and its data marked as a `DualArray`.
The mark is what the op table's routing tests already look for (they send tensors holding a
tracer to the traced path), so ops on tensors without a tangent pay no extra test; an op
meeting a dual operand lands here. It runs the op on the primals as usual (recording the
backward graph), then computes the output tangent with the primitive's JVP rules from the one
table (funcgrad/numpy/_primitives.py), evaluated through the engine's graph-recording trace
(`GraphTrace`): the tangent is itself a tensor with history, so reverse mode through a
tangent works (``unpack_dual(y).tangent.sum().backward()``), and under no_grad it has none.

Views and in-place writes follow PyTorch: the tangent of a view is the same view of its
base's tangent; an in-place op updates the written tensor's tangent in place (so every view
of it sees the change), gives a base without a tangent a zero one when a view of it is
written with a dual value, and ``make_dual``/``unpack_dual`` make aliases across which
tangents do not flow (forward non-differentiable views).

Layer 5: it imports the engine (`_autograd`) for the graph-recording trace, the op table
(`_ops`), and fills `_ops.FORWARD`, the slot the table's traced path calls.
"""
from __future__ import annotations

import gc
import weakref
from typing import Any, Sequence

import numpy as np

from .._src.core import Array, Tracer
from .._src.reverse import ReverseTracer, backward
from .._src.transforms import _trace_reverse
from ..numpy import _primitives as NP
from . import _ops as O
from ._autograd import GraphTrace, GraphTracer
from ._functions import as_strided
from ._graph import STATE
from ._ops import COPY, FILL, ZERO, DualArray, drop_tangent, plain_array
from ._tensor import Tensor

__all__ = ["LEVEL", "make_dual", "unpack_dual", "tangent_of", "enter_level", "exit_level",
           "duals_in", "zeros_tangent", "set_custom_tangent", "Unmarked", "jvp"]


class _Level:
    """The forward AD level (PyTorch keeps one at most: nesting is refused) and the dual
    tensors made in it, by id, as weak references: leaving the level strips their tangents.
    PyTorch's forward-grad mode (``torch._C._set_fwd_grad_enabled``) is ``_ops.FORWARD.enabled``
    (low enough for ``_C`` to reach)."""

    current = -1
    duals: dict = {}


LEVEL = _Level()


# --- levels ------------------------------------------------------------------------------------
def enter_level() -> int:
    if LEVEL.current >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    LEVEL.current = 0
    return 0


def exit_level(level: int) -> None:
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != LEVEL.current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    duals, LEVEL.duals = LEVEL.duals, {}
    for ref in duals.values():
        t = ref()
        if t is not None:
            drop_tangent(t)
    LEVEL.current = level - 1


def _forget(key: int, _ref=None) -> None:
    LEVEL.duals.pop(key, None)


# --- tangents ----------------------------------------------------------------------------------
def _attach(t: Tensor, tangent: Tensor) -> None:
    """Give `t` its tangent: record it, mark its data so its ops come here."""
    t._fw_grad = tangent
    if type(t._data) is not DualArray:
        t._data = t._data.view(DualArray)
    key = id(t)
    if key not in LEVEL.duals:
        LEVEL.duals[key] = weakref.ref(t, lambda r, key=key: _forget(key))


def tangent_of(t: Tensor) -> Tensor | None:
    """`t`'s tangent, or None. A view made before its base had one gets the same view of the
    base's tangent when first asked (PyTorch's views read their base's forward grad)."""
    if not O.FORWARD.enabled:
        return None  # forward grads off: none is visible (PyTorch's _set_fwd_grad_enabled)
    tangent = t._fw_grad
    if tangent is not None or t._base is None or LEVEL.current < 0:
        return tangent
    base_tangent = t._base._fw_grad
    if base_tangent is None or not _forward_view(t._view.chain):
        return None
    tangent = O._replay_tensor(base_tangent, t._view.chain)
    _attach(t, tangent)
    return tangent


def _forward_view(chain) -> bool:
    """Whether tangents flow along a view's chain (no make_dual/unpack_dual alias in it)."""
    for link in chain:
        if link[0] is _dual_alias:
            return False
    return True


def _dual_alias(x: np.ndarray, shape) -> np.ndarray:
    """The view op of ``make_dual``/``unpack_dual``: an alias tangents do not flow through."""
    return x.reshape(shape)


def _mark_views(base: Tensor) -> None:
    """`base` just got a tangent by an in-place write: its live views, whose data are not
    marked, get theirs now (else their ops would not come here and would drop it). Nothing
    records a base's views, so the garbage collector is asked who refers to it; this runs
    only when a tensor without a tangent is given one in place."""
    for r in gc.get_referrers(base):
        if type(r) is Tensor and r._base is base and r._fw_grad is None:
            tangent_of(r)


class Unmarked:
    """Within: the given dual tensors' data are plain arrays, so the ordinary op code runs on
    their primals (and records their backward history); marks put back on exit. With
    ``hidden``, no tangent is visible within either (a custom Function's forward and jvp)."""

    __slots__ = ("tensors", "hidden", "was")

    def __init__(self, tensors, hidden: bool = False) -> None:
        self.tensors = tensors
        self.hidden = hidden

    def __enter__(self) -> None:
        for t in self.tensors:
            t._data = t._data.view(np.ndarray)
        if self.hidden:
            self.was = O.FORWARD.enabled
            O.FORWARD.enabled = False

    def __exit__(self, *exc) -> None:
        if self.hidden:
            O.FORWARD.enabled = self.was
        for t in self.tensors:
            if t._fw_grad is not None and type(t._data) is not DualArray:
                t._data = t._data.view(DualArray)


def _refuse_traced(args) -> None:
    """Dual tensors meeting tensors of torch.autograd.functional (tracer data) in one op: the
    two mechanisms do not compose yet, so refuse instead of dropping a derivative."""
    for a in args:
        if isinstance(a, Tensor) and isinstance(a._data, Tracer):
            raise RuntimeError("forward-mode AD (dual tensors of torch.autograd.forward_ad) is "
                               "not supported inside torch.autograd.functional (jacobian, hvp, "
                               "jvp...) yet: use torch.autograd.functional.jvp, or make the "
                               "dual tensors outside the function")


def duals_in(args) -> list:
    """The dual tensors among `args` (while a level is open)."""
    return _duals(args) if LEVEL.current >= 0 else []


def _duals(args) -> list:
    found = []
    for a in args:
        if isinstance(a, Tensor) and type(a._data) is DualArray and not any(a is f for f in found):
            found.append(a)
    return found


def _differentiable(t) -> bool:
    return isinstance(t, Tensor) and (t._dtype.is_floating_point or t._dtype.is_complex)


def _no_rule(prim) -> NotImplementedError:
    return NotImplementedError(f"Trying to use forward AD with {prim.name} that does not "
                               "support it because it has not been implemented yet.")


def _lower(value) -> Tensor | None:
    if value is None:
        return None
    if type(value) is GraphTracer:
        return value.tensor
    if type(value) is Array:
        value = value._value
        if type(value) is GraphTracer:
            return value.tensor
    if isinstance(value, Tensor):
        return value
    return Tensor._wrap(np.asarray(value))


def _fit(tangent: Tensor, like: Tensor) -> Tensor:
    """A tangent of `like`'s shape and dtype (rules may give a broadcastable one)."""
    shape = tuple(like._data.shape)
    if tuple(tangent._data.shape) != shape:
        tangent = O.apply_primitive(NP.broadcast_to, [tangent], {"shape": shape})
    if tangent._data.dtype != like._data.dtype:
        tangent = O.apply_primitive(NP.astype, [tangent], {"dtype": like._data.dtype})
    return tangent


def _zeros(like: Tensor) -> Tensor:
    return Tensor._wrap(np.zeros(like._data.shape, like._data.dtype))


def zeros_tangent(t: Tensor) -> Tensor | None:
    """The tangent a custom Function's jvp gets for a tensor input without one: zeros
    (None for an integer or bool tensor, which has no tangent)."""
    return _zeros(t) if _differentiable(t) else None


def _check_size(tensor: Tensor, tangent: Tensor) -> None:
    if tuple(tangent._data.shape) != tuple(tensor._data.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor._data.shape)} while the given forward gradient "
                           f"is of size {list(tangent._data.shape)}.")


def set_custom_tangent(out: Tensor, tangent, inputs, real, versions, dirty: bool) -> None:
    """Give a custom Function's output the tangent its jvp returned, with PyTorch's checks,
    made only against inputs that had a tangent (`real`; `versions`: their tangents' versions
    before jvp): an input written in place must have its tangent written in place and
    returned as-is; an output that is a view of an input (or the input handed back) must get a
    view of that input's tangent (of its base, when that tangent is itself a view)."""
    if not isinstance(tangent, Tensor):
        raise TypeError(f"jvp returned a {type(tangent).__name__} for a tensor output, "
                        "expected a Tensor")
    _check_size(out, tangent)
    root = out if out._base is None else out._base
    for a, given, version in zip(inputs, real, versions):
        if given is None or not isinstance(a, Tensor):
            continue
        if dirty:
            if a is not out:
                continue
            if tangent._vc.value == version:
                raise RuntimeError("An inplace custom Function is not modifying the forward "
                                   "mode gradients inplace. If the forward is modifying an "
                                   "input inplace, then the jvp function must modify the "
                                   "corresponding gradient inplace.")
            if tangent is not given:
                raise RuntimeError("An inplace custom Function is not returning the forward "
                                   "mode gradients as-is. If the forward is modifying an input "
                                   "inplace, then the jvp function must modify the gradient "
                                   "inplace and return it as-is.")
            return  # the input keeps its tangent, now written
        if out._base is None or (a if a._base is None else a._base) is not root:
            continue
        if tangent._base is None:
            raise RuntimeError("A custom Function's forward is returning a view (or an input "
                               "as-is) but the jvp is not returning a view.")
        if given._base is not None:
            if tangent._base is not given._base:
                raise RuntimeError("A custom Function is returning a view but the jvp is not "
                                   "returning a view of the same base as the given grad input.")
        elif tangent._base is not given:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the given grad input.")
        break
    _attach(out, tangent)


def jvp(prim, args: Sequence, tangents: Sequence, out, params: dict | None):
    """The output tangent(s) of ``prim(*args, **params)`` given the arguments' tangents
    (None: zero), from the primitive's rules, as tensors recorded on the backward graph.
    None when no tangent reaches the output."""
    if not prim.differentiable:
        return None
    params = params or {}
    trace = GraphTrace()
    primals = [GraphTracer(trace, a) if isinstance(a, Tensor) else a for a in args]
    if prim.linear:
        # linear in its array arguments: the function itself applied to the tangents (an
        # argument with no derivative, an index, keeps its primal value)
        rules = prim.vjps
        moved = []
        for i, (a, t) in enumerate(zip(args, tangents)):
            if t is not None:
                moved.append(GraphTracer(trace, t))
            elif rules[i] is not None:  # a differentiable argument without a tangent: zero
                moved.append(GraphTracer(trace, _zeros(a)) if isinstance(a, Tensor) else a * 0)
            else:
                moved.append(primals[i])
        result = prim(*moved, **params)
    else:
        lifted_out = (tuple(GraphTracer(trace, o) for o in out) if type(out) is tuple
                      else GraphTracer(trace, out))
        result = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            rule = prim.jvps[i] if prim.jvps is not None and i < len(prim.jvps) else None
            if rule is not None:
                part = rule(GraphTracer(trace, t), lifted_out, *primals, **params)
            else:
                part = _transposed_vjp(prim, i, GraphTracer(trace, t), out, lifted_out,
                                       primals, params)
            if part is None:
                continue
            result = part if result is None else (
                tuple(a + b for a, b in zip(result, part)) if type(part) is tuple
                else result + part)
    if result is None:
        return None
    if type(out) is tuple:
        return tuple(None if r is None else _fit(_lower(r), o) for r, o in zip(result, out))
    return _fit(_lower(result), out)


def _transposed_vjp(prim, i: int, tangent, out, lifted_out, primals, params):
    """Argument `i`'s share of the output tangent for a primitive with a VJP rule but no JVP
    rule: the VJP rule is linear in the cotangent, and its transpose is the JVP (the one
    table's rule, transposed by funcgrad's reverse mode: no second record of the
    derivative). The cotangent's map is closed over graph-recording values, so the tangent
    keeps its backward history."""
    rules = prim.vjps
    rule = rules[i] if rules is not None and i < len(rules) else None
    if rule is None:
        raise _no_rule(prim)
    arg = primals[i]
    shape = tuple(np.shape(arg._value if type(arg) is GraphTracer else arg))
    dtype = (arg._value if type(arg) is GraphTracer else np.asarray(arg)).dtype
    if type(out) is tuple:
        raise _no_rule(prim)

    complex_ = out._data.dtype.kind == "c" or dtype.kind == "c" or tangent.dtype.kind == "c"

    def cotangent_map(ct):
        # PyTorch's VJP, conj(rule(conj(ct))) as the engine applies the rule (`OpNode`): the
        # adjoint of the JVP for the real inner product Re<a, b>, so the JVP is the conjugate
        # of funcgrad's (JAX-convention) transpose at the conjugated tangent
        g = rule(NP.conjugate(ct) if complex_ else ct, lifted_out, *primals, **params)
        if complex_:
            g = NP.conjugate(g)
        if tuple(g.shape) != shape:
            g = NP.sum_to_shape(g, shape=shape)
        return NP.astype(g, dtype=dtype) if g.dtype != dtype else g

    # funcgrad's reverse mode, below its public vjp (whose cotangent check would read the
    # graph-recording tangent's shape through NumPy's dispatch, recording it)
    zeros = np.zeros(out._data.shape, out._data.dtype)
    trace, mapped, _ = _trace_reverse(cotangent_map, (zeros,), {}, (0,), "jvp")
    if not (isinstance(mapped, ReverseTracer) and mapped._trace is trace):
        return None  # the map does not depend on the cotangent: no contribution
    (part,) = backward(trace.tape, [mapped._id], [NP.conjugate(tangent) if complex_ else tangent],
                       1, consume=True)
    return NP.conjugate(part) if complex_ and part is not None else part


# --- ops meeting a dual tensor (called through `_ops.FORWARD`) ---------------------------------
def _give(out, tangent) -> None:
    if type(out) is tuple:
        for o, t in zip(out, tangent if type(tangent) is tuple else (tangent,) * len(out)):
            _give(o, t)
    elif tangent is not None and _differentiable(out):
        _attach(out, tangent)


def forward_apply(op, args: Sequence, params: dict | None):
    """`_ops.apply` with a dual operand."""
    _refuse_traced(args)
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    with Unmarked(_duals(args)):
        out = O.apply(op, args, params)
        if O.FORWARD.enabled and op.records and any(t is not None for t in tangents):
            _give(out, jvp(op.prim, args, tangents, out, params))
    return out


def forward_primitive(prim, args: Sequence, params: dict):
    """`_ops.apply_primitive` with a dual operand."""
    _refuse_traced(args)
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    with Unmarked(_duals(args)):
        out = O.apply_primitive(prim, args, params)
        if O.FORWARD.enabled and any(t is not None for t in tangents):
            _give(out, jvp(prim, args, tangents, out, params))
    return out


def forward_view(op, x: Tensor, params: dict, data, replay_fn):
    """`_ops.view_op` of a dual tensor: the view's tangent is the same view of x's tangent."""
    tangent = tangent_of(x)
    with Unmarked((x,)):
        out = O.view_op(op, x, params, None if data is None else plain_array(data), replay_fn)
        if tangent is not None and O.FORWARD.enabled:
            fn = replay_fn or op.impl
            view_params = params
            if op.prim is NP.getitem and out._base is not None:
                view_params = out._view.chain[-1][1]  # (view_op may have extended the index)
            t_view = O.view_op(op, tangent, view_params, fn(tangent._data, **view_params),
                               replay_fn)
            _attach(out, t_view)
    return out


def forward_inplace(op, self: Tensor, others: Sequence, params: dict | None, compute,
                    check_overlap: bool):
    """`_ops.inplace` with a dual operand: the primal written as usual, then self's tangent
    updated in place (or created)."""
    args = (self,) + tuple(others)
    _refuse_traced(args)
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    prim = op.prim
    with Unmarked(_duals(args)):
        live = O.FORWARD.enabled and any(t is not None for t in tangents) and _differentiable(self)
        old = None
        if live and prim is not None and not prim.linear:
            old = O.apply(O.CLONE, (self,))  # the rules read the value before the write
        O.inplace(op, self, others, params, compute, check_overlap)
        if not live:
            return self
        if op is COPY or (op is FILL and others and isinstance(others[0], Tensor)):
            new = None if tangents[1] is None else _fit(tangents[1], self)
        elif prim is None or op is ZERO or op is FILL:
            new = None  # fill_ with a number, zero_: a constant
        else:
            new = jvp(prim, (old if old is not None else self,) + tuple(others), tangents, self,
                      params)
        _update(self, tangents[0], new, tangents)
    return self


def _update(self: Tensor, old: Tensor | None, new: Tensor | None, inputs) -> None:
    """Self's tangent after an in-place op: `old` (None: self had none) becomes `new`."""
    if new is None:
        if old is not None:
            O.inplace(ZERO, old, (), compute=_zeros_like_raw)
        return
    if old is not None:
        O.inplace(COPY, old, (new,), compute=_second)
        return
    base = self._base
    if base is not None and _forward_view(self._view.chain):
        # a view written with a dual value: its base gets a zero tangent, the view's is the
        # same view of it (so the base's tangent is right where the view is not)
        base_tangent = base._fw_grad
        if base_tangent is None:
            base_tangent = _zeros(base)
            _attach(base, base_tangent)
            _mark_views(base)
        view_tangent = tangent_of(self)
        if view_tangent is None:
            view_tangent = O._replay_tensor(base_tangent, self._view.chain)
            _attach(self, view_tangent)
        O.inplace(COPY, view_tangent, (new,), compute=_second)
        return
    if any(new is t for t in inputs):
        new = O.apply(O.CLONE, (new,))  # self's own tangent, not another tensor's
    _attach(self, new)
    if base is None:
        _mark_views(self)


def _second(_, value):
    return value


def _zeros_like_raw(a):
    return np.zeros_like(a)


O.FORWARD.apply = forward_apply
O.FORWARD.view = forward_view
O.FORWARD.inplace = forward_inplace
O.FORWARD.primitive = forward_primitive


# --- make_dual / unpack_dual -------------------------------------------------------------------
def _check_level(level, where: str) -> int:
    if level is None:
        level = LEVEL.current
    if level != LEVEL.current or level < 0:
        raise RuntimeError(f"Invalid level given to {where}")
    return level


def make_dual(tensor: Tensor, tangent: Tensor, level) -> Tensor:
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {LEVEL.current} is not supported.")
    if tangent_of(tangent) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the "
                           f"same level{LEVEL.current} is not supported.")
    _check_level(level, "_make_dual")
    _check_size(tensor, tangent)
    if not _same_layout(tensor._data, tangent._data):
        tangent = _laid_out_like(tensor, tangent)
    dual = _alias(tensor)
    _attach(dual, tangent)
    return dual


def _alias(t: Tensor) -> Tensor:
    """A view of `t` (same storage and version counter, backward flows through it) across
    which tangents do not flow."""
    shape = tuple(t._data.shape)
    with Unmarked(_duals((t,))):
        return O.view_op(O.VIEW, t, {"shape": shape}, t._data.view(np.ndarray).reshape(shape),
                         replay_fn=_dual_alias)


def _same_layout(primal: np.ndarray, tangent: np.ndarray) -> bool:
    """Whether PyTorch keeps the tangent as it is: same strides and offset over storages of
    one size (in elements)."""
    if primal.size == 0 or tangent.size == 0:
        return True
    p_root, t_root = _root(primal), _root(tangent)
    return ([s // primal.itemsize for s in primal.strides]
            == [s // tangent.itemsize for s in tangent.strides]
            and p_root.size == t_root.size
            and _offset(primal, p_root) == _offset(tangent, t_root))


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _offset(a: np.ndarray, root: np.ndarray) -> int:
    """Where `a` starts in its root array's memory, in elements."""
    return (a.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // a.itemsize


def _laid_out_like(primal: Tensor, tangent: Tensor) -> Tensor:
    """A copy of `tangent` laid out as `primal` is (a storage of the primal's size, the same
    strides and offset), as PyTorch copies a tangent of another layout: views the dual
    tensor makes of its storage (``as_strided``) then fit the tangent too. The copy is
    recorded (``copy_``), so the tangent keeps its backward history."""
    data = primal._data
    root = _root(data)
    if not root.flags.c_contiguous and not root.flags.f_contiguous:
        return O.apply(O.CLONE, (tangent,))
    storage = Tensor._wrap(np.zeros(root.size, tangent._data.dtype))
    view = as_strided(storage, data.shape, [s // data.itemsize for s in data.strides],
                      _offset(data, root))
    return O.inplace(COPY, view, (tangent,), compute=_second)


def unpack_dual(tensor: Tensor, level):
    """(primal, tangent): a fresh alias of `tensor` without tangent, and its tangent as is."""
    _check_level(level, "_fw_primal")
    return _alias(tensor), tangent_of(tensor)
