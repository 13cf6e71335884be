"""The op table: one declaration per torch function, mapped onto funcgrad's primitives.

A declaration names the torch function, the primitive from funcgrad/numpy/_primitives.py that
computes it (forward *and* derivative rules come from there: nothing is derived twice) and
the grad_fn class PyTorch shows. What a node saves (and so what the version check guards)
is derived from the primitive's one record, ``Primitive.reads`` (see `_saves`). Everything
PyTorch-specific (views, in-place writes, CopySlices, type promotion) is here too.

Layer 3 of the mutable layer: it imports the graph (`_graph`) and the Tensor (`_tensor`);
the backward engine (`_autograd`) imports it.
"""
from __future__ import annotations

import operator
import threading
import warnings
import weakref
from typing import Any, Sequence

import numpy as np

from .._src.core import Array, Tracer
from .._src.transforms import stop_gradient
from ..numpy import _primitives as NP
from . import _dtypes as D
from . import _prims as P
from ._graph import (INFERENCE_INPLACE, PROCESS, RECOMPUTE, STAND_IN, STATE, AccumulateGrad,
                     AsStridedBackward0, Node, Saved, Spec, Version, _seq, _short_name, conj,
                     fix_array, freed_error, node_class, own_copy, replay, stand_in, user_frame,
                     user_site, version_error)
from ._policy import on_write
from ._saves import OUT, value_reads
from ._tensor import (CUSTOM_VIEW_DETAIL, NO_GRAD_VIEW_REBASED, Tensor, _scalar_name, _ViewInfo,
                      edge_of, is_traced)

__all__ = ["Op", "OPS", "OpNode", "apply_primitive", "edge_of", "traced_tensor",
           "traced_apply", "traced_detach", "traced_value", "TRACED", "DualArray", "FORWARD", "drop_tangent"]

# what a node keeps of its output (besides a `Saved` tensor or nothing): its shape and dtype
_OUT_SPEC = object()

# NumPy's floating-point warnings ("invalid value encountered in sqrt", "divide by zero
# encountered in divide"...) raised by this package's own NumPy calls: PyTorch computes the
# same nan and inf silently. A filter on the modules the warning is attributed to costs nothing
# when nothing warns (an errstate block around each op costs 0.3 us, a context-variable switch
# 0.25 us) and leaves the user's own NumPy calls as they were. Filters a program puts in front
# (``simplefilter("always")``, ``-W error``) still take precedence.
NUMPY_FP_WARNINGS = r"(invalid value|divide by zero|overflow|underflow) encountered in "
warnings.filterwarnings("ignore", NUMPY_FP_WARNINGS, RuntimeWarning, r"funcgrad\.mutable(\.|$)")


def _array_out() -> bool:
    """Whether NumPy's ufuncs take ``out=...`` (return an array, never a scalar: 2.3+)."""
    try:
        return type(np.add(np.zeros(()), 0.0, out=...)) is np.ndarray
    except TypeError:
        return False


_ARRAY_OUT = _array_out()


class Op:
    """One torch function: primitive, grad_fn class name, what its node saves.

    What the node saves is derived from ``prim.reads`` (`_saves.value_reads`): for the
    arguments that require grad, the values their rules read; values read only for their
    shape and dtype are kept as stand-ins. ``reads`` is given only for a primitive whose
    rules cannot be read (``prim.reads is None``: variadic primitives such as getitem and
    concatenate): per array argument, the positions (ints) and ``"out"`` (or
    ``"out_shape"``, the output's shape only) its rule reads; a shorter list repeats its
    last entry. ``saves_out``: PyTorch saves the result (else a rule needing it recomputes
    it from the saved inputs). ``result``: how the dtype is found: "promote", "float" (true
    division), "same" (first argument), "real" (the first argument's, made real), "bool",
    "keep".
    """

    __slots__ = ("name", "prim", "node_cls", "values", "shapes", "saves_out", "result",
                 "_plans", "is_view", "inplace_name", "records", "impl", "float_fast",
                 "unary_plan", "binary_plans", "scalar_edge", "saves_index", "ufunc", "ufunc0",
                 "number_cls", "record", "record1", "record2")

    def __init__(self, name: str, prim, grad_fn: str, reads: Sequence | None = None, *,
                 saves_out: bool = False, result: str = "promote", is_view: bool = False,
                 node_base: type | None = None, scalar_edge: bool = False,
                 saves_index: bool = False):
        node_base = OpNode if node_base is None else node_base
        self.name = name
        # an index array among the parameters is saved (torch's scatter, index_add...): the
        # node is freed after backward
        self.saves_index = saves_index
        # PyTorch wraps a Python number operand in a tensor: the node keeps a (None, 0) edge
        self.scalar_edge = scalar_edge
        self.prim = prim
        self.node_cls = node_class(grad_fn, node_base)
        # `apply1`'s nodes of a tensor and a Python number: the class keeps that edge
        self.number_cls = node_class(grad_fn, node_base, number=True) if scalar_edge else None
        if prim is not None:
            _name_saved_params(prim)
        # recorded when an input requires grad: differentiable, or failing only at backward
        self.records = prim is not None and (prim.differentiable
                                             or issubclass(node_base, NotImplementedNode))
        self.values, self.shapes = _what_rules_read(prim, reads, node_base)
        self.saves_out = saves_out
        self.result = result
        self.is_view = is_view
        self._plans: dict = {}
        self.inplace_name = name if name.endswith("_") else name + "_"
        # for `apply1`: a float tensor in, the same float dtype out, and what one input
        # requiring grad makes the node keep (the input?, the output: True / _OUT_SPEC /
        # RECOMPUTE / False)
        self.impl = prim.impl if prim is not None else None
        # the impl as a NumPy ufunc of one output, when it is one: an in-place write then
        # computes straight into the tensor's storage (``out=``), no temporary and no copy
        self.ufunc = _as_ufunc(self.impl)
        # the same, asked for an array even for 0-d operands (``out=...``, NumPy 2.3+), where
        # NumPy would return a scalar to convert: 0.2 us less per 0-d op, 0.02 us more on
        # others (None: this NumPy cannot)
        self.ufunc0 = self.ufunc if _ARRAY_OUT else None
        self.float_fast = (prim is not None and prim.differentiable
                           and result in ("promote", "float"))
        saved, keeps_out = self.plan((True,))
        # a node that saved only a Python number is freed after backward too (as PyTorch)
        self.unary_plan = (0 in saved, keeps_out, bool(saved) or keeps_out is True)
        self.binary_plans: dict = {}
        # `_record`, `_record1` and `_record2` for this op's nodes alone: their writes to the
        # new node's slots then see one class (two with `number_cls`), so CPython specializes
        # them (see `own_copy`)
        self.record = own_copy(_record)
        self.record1 = own_copy(_record1)
        self.record2 = own_copy(_record2)

    def plan2(self, mask: tuple) -> tuple:
        """For `apply2`: (saves x, saves y, keeps the output, frees anything at backward)."""
        saved, keeps_out = self.plan(mask)
        return (0 in saved, 1 in saved, keeps_out, bool(saved) or keeps_out is True)

    def plan(self, mask: tuple):
        """For which arguments require grad: (saved argument positions, what is kept of the
        output: True (saved), `_OUT_SPEC`, `RECOMPUTE` or False)."""
        found = self._plans.get(mask)
        if found is None:
            saved: set = set()
            shapes: set = set()
            values, spec = self.values, self.shapes
            for i, rg in enumerate(mask):
                if rg and values:
                    k = min(i, len(values) - 1)
                    saved.update(values[k])
                    shapes.update(spec[k])
            keeps_out: Any = False
            if OUT in saved:
                saved.discard(OUT)
                if self.saves_out:
                    keeps_out = True
                else:  # recomputed at backward from all the inputs, which are saved
                    keeps_out = RECOMPUTE
                    saved.update(range(len(mask)))
            elif OUT in shapes:
                keeps_out = _OUT_SPEC
            found = self._plans[mask] = (frozenset(saved), keeps_out)
        return found


_UFUNC_OF = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
             operator.truediv: np.divide}


def _as_ufunc(impl):
    ufunc = _UFUNC_OF.get(impl) if callable(impl) else None
    if ufunc is None and isinstance(impl, np.ufunc) and impl.nout == 1:
        ufunc = impl
    return ufunc


def _what_rules_read(prim, reads, node_base) -> tuple:
    """(values, shapes): per array argument, what its rule reads as values and what only
    for the shape and dtype; () for an op whose node never runs a rule."""
    if prim is None or issubclass(node_base, NotImplementedNode):
        return (), ()
    derived = value_reads(prim)
    if derived is not None:
        values = tuple(frozenset() if v is None else v for v in derived)
        shapes = tuple(frozenset() if r is None else r - v
                       for r, v in zip(prim.reads, values))
        return values, shapes
    if reads is None:  # nothing known: the rule may read anything
        n = prim.nargs if prim.nargs > 0 else 1
        everything = frozenset(range(n)) | {OUT}
        return (everything,) * n, (frozenset(),) * n
    values = tuple(frozenset(r for r in entry if r != "out_shape") for entry in reads)
    shapes = tuple(frozenset({OUT} if "out_shape" in entry else ()) for entry in reads)
    return values, shapes


class OpNode(Node):
    """A primitive from funcgrad's tables applied to tensors; its rules run at backward.

    ``_vals`` holds, per array argument, a `Saved` tensor (checked against its version), a
    `Spec` or `STAND_IN` (shape and dtype only: the rule does not read its values, PyTorch
    does not save it) or a constant: a tuple, or for a node of one argument a lone `Saved`,
    or the argument's tensor itself with the version it had in ``_version`` (PyTorch's
    SavedVariable of an input is the tensor itself: backward reads its data then, so
    ``x.data = ...`` after the op changes what backward sees, as in PyTorch). The lone forms
    keep one or two objects fewer per node for the cyclic garbage collector (see `_graph`'s
    note on ``_next``); read ``_vals`` with `_values`, which gives `Saved` records. ``_out``
    holds the saved output (a `Saved`, or for a node of one argument that saves only its
    output, the output's array itself with its version counter in ``_version``, saved at
    version 0: no `Saved` record and no weak reference per op; read it with `_out_saved`),
    a `Spec`, `RECOMPUTE` (made again from the saved inputs when a rule needs it) or None. ``_meta`` lists (argnum or None, shape, dtype) of each argument
    with an edge (a Python number operand that its class keeps an edge for has no entry: its
    gradient is None).
    """

    __slots__ = ("_prim", "_params", "_vals", "_out", "_meta", "_has_saved", "_freed",
                 "_version")
    # copied per node class: they read and write the node's slots (see `_graph.own_copy`)
    _own_copies = ("_apply", "_release", "_stand_ins", "_init")

    def _release(self) -> None:
        if self._has_saved:
            self._freed = True
            self._vals = None
            self._out = None

    def _values(self) -> tuple:
        """``_vals`` as a tuple (one per argument) of `Saved` records, stand-ins and
        constants; None once freed. A tensor saved as itself gets its `Saved` record here,
        kept from then on (hooks may be registered on it)."""
        vals = self._vals
        if vals is None or type(vals) is tuple:
            return vals
        if type(vals) is not Saved:  # a tensor saved as itself
            vals = self._vals = _plain_saved(vals._data, vals._vc, self._version, vals)
        return (vals,)

    def _out_saved(self):
        """``_out``, with an output saved as its array turned into its `Saved` record (kept
        from then on: hooks may be registered on it)."""
        out = self._out
        if type(out) is _ndarray:  # the output's array, its counter in `_version` (`_record1`)
            out = self._out = _plain_saved(out, self._version, 0, None)
            out.output_node = out.owner = weakref.ref(self)
        return out

    def _check_alive(self) -> None:
        if self._freed:
            raise freed_error()

    def _args(self, graph):
        """The rule's arguments and output: arrays, or traced tensors under create_graph."""
        args = []
        create_graph = graph.create_graph
        for v in self._values():
            t = type(v)
            if t is Saved:
                if v.unpack_fn is None and v.counter.value != v.version:
                    # (a value packed by a saved-tensor hook is the hook's to keep: PyTorch
                    # checks no version then)
                    raise version_error(v, self)
                if v.tensor is not None and not v.tensor._rg and v.tensor._grad_node is None:
                    self._check_not_detached(len(args))
                if v.unpack_fn is not None:  # packed by a saved-tensor hook
                    u = unpacked(v, self)
                    args.append(graph.lift(u) if create_graph else u._data)
                    continue
                args.append(graph.lift(saved_tensor(v, self)) if create_graph else _now(v))
            elif v is STAND_IN:
                _, shape, dtype = self._meta[len(args)]
                args.append(stand_in(shape, dtype))
            elif t is Spec:
                args.append(v.make())
            else:
                args.append(v)
        out = self._out_saved()
        if out is RECOMPUTE:
            out = self._prim(*args, **self._params) if self._params else self._prim(*args)
        elif type(out) is Saved:
            if out.unpack_fn is None and out.counter.value != out.version:
                raise version_error(out, self)
            if out.unpack_fn is not None:  # packed by a saved-tensor hook
                u = unpacked(out, self)
                out = graph.lift(u) if create_graph else u._data
            else:
                out = graph.lift(saved_tensor(out, self)) if create_graph else out.data
        elif type(out) is Spec:
            out = out.make()
        return args, out

    def _check_not_detached(self, k: int) -> None:
        """Argument `k` was saved while it required grad and has lost its history since:
        ``detach_()`` was called on it (PyTorch refuses to use it)."""
        if any(argnum == k for argnum, _, _ in self._meta):
            raise RuntimeError("Trying to use a saved tensor that has been detached in-place, "
                               "i.e. with .detach_().This is not supported, please use "
                               "out-of-place `.detach()` instead")

    def _apply(self, cts, graph):
        if self._freed:
            raise freed_error()
        if graph.create_graph:
            return self._apply_recorded(cts, graph)
        # the rule's arguments: `_args`, with the common case (saved values current and not
        # packed by hooks) spelled out; anything else (an error to raise, hooks to unpack)
        # takes `_args`. A `STAND_IN` stays one until a rule is called (`_stand_ins`): the
        # rules read without a call (passes, slopes) never read one, and making each costs
        # a call and a dict lookup (three of W1's four nodes per block have one)
        args = []
        lazy = False
        vals = self._vals
        if type(vals) is not tuple:
            if type(vals) is Saved:
                vals = (vals,)
            else:  # the only argument's tensor, saved as itself
                if vals._vc.value == self._version and (vals._rg or vals._grad_node is not None):
                    args.append(vals._data)
                else:
                    args = None  # written since, or detached in place: `_args` raises
                vals = ()
        for v in vals:
            if v is STAND_IN:
                args.append(v)
                lazy = True
            elif type(v) is Saved:
                t = v.tensor
                if (v.counter.value != v.version or v.unpack_fn is not None
                        or (t is not None and not t._rg and t._grad_node is None)):
                    args = None
                    break
                # (`_now`, spelled out)
                args.append(v.data if t is None or v.counter is not t._vc else t._data)
            elif type(v) is Spec:
                args.append(v.make())
            else:
                args.append(v)
        out = self._out
        if args is None:
            args, out = self._args(graph)
        elif out is not None:
            if type(out) is _ndarray:  # the output's array, saved at version 0 (`_record1`)
                if self._version.value:
                    args, out = self._args(graph)  # written since: `_args` raises
            elif type(out) is Saved:
                if out.counter.value != out.version or out.unpack_fn is not None:
                    args, out = self._args(graph)
                else:
                    out = out.data
            elif out is RECOMPUTE:
                if lazy:  # (every input is saved then: no stand-in, but be sure)
                    args, lazy = self._stand_ins(args), False
                out = self._prim(*args, **self._params) if self._params else self._prim(*args)
            elif type(out) is Spec:
                out = out.make()
        prim = self._prim
        params = self._params
        ct = cts[0] if self._nout == 1 else tuple(cts)
        if type(ct) is _ndarray:
            d = ct.dtype
            if d is not _F64 and d is not _F32 and d.kind == "c":
                ct = conj(ct)
        elif type(ct) not in _REAL_SCALARS:
            ct = conj(ct)
        # the rules the primitive's one record marks as handing back a parameter (see
        # `Primitive._passes`, `_slopes`, `_derivs`) are read, not called, as the functional
        # walk does: one or two Python calls fewer per node (products through np.multiply:
        # the same as ``*``, without the operator's dispatch)
        rules = prim.vjps
        passes = prim._passes
        slopes = prim._slopes
        derivs = prim._derivs
        grads = []
        for argnum, shape, dtype in self._meta:
            if argnum is None:
                grads.append(None)
                continue
            if params:
                if lazy:
                    args, lazy = self._stand_ins(args), False
                g = rules[argnum](ct, out, *args, **params)
            elif passes[argnum]:
                g = ct
            elif slopes is not None:  # (a slope is a saved value: never a stand-in)
                k = slopes[argnum]
                g = _multiply(ct, out if k == 0 else args[k - 1])
            else:
                if lazy:
                    args, lazy = self._stand_ins(args), False
                if derivs is not None:
                    g = _multiply(ct, derivs[argnum](out, *args))
                else:
                    g = rules[argnum](ct, out, *args)
            if type(g) is not _ndarray:
                if g is None:
                    grads.append(None)
                    continue
                if type(g) not in _REAL_SCALARS:  # (rules give 0-d arrays' results as scalars)
                    grads.append(fix_array(conj(g), shape, dtype))
                    continue
                g = np.asarray(g)
            if g.shape != shape or (g.dtype is not dtype and g.dtype != dtype):
                g = fix_array(conj(g), shape, dtype)
            elif dtype is not _F64 and dtype is not _F32 and dtype.kind == "c":
                g = conj(g)
            grads.append(g)
        return grads

    def _stand_ins(self, args: list) -> list:
        """`args` with each `STAND_IN` made: a read-only zeros array of the argument's shape
        and dtype, or None where no rule of the primitive loads that argument at all
        (``Primitive._keep``, derived from the rules' bytecode; a linear primitive's rules
        are not read that way and may read any argument's shape)."""
        prim = self._prim
        keep = None if prim.linear else prim._keep[1]
        meta = self._meta
        return [(stand_in(meta[k][1], meta[k][2]) if keep is None or keep[k] else None)
                if v is STAND_IN else v for k, v in enumerate(args)]

    def _apply_recorded(self, cts, graph) -> list:
        """`_apply` under create_graph: the rules run on graph-recording values."""
        args, out = self._args(graph)
        params = self._params
        rules = self._prim.vjps
        ct = conj(graph.lift(cts[0] if self._nout == 1 else tuple(cts)))
        grads = []
        for argnum, shape, dtype in self._meta:
            if argnum is None:
                grads.append(None)
                continue
            rule = rules[argnum]
            g = conj(rule(ct, out, *args, **params) if params else rule(ct, out, *args))
            grads.append(None if g is None else graph.fix(graph.lower(g), shape, dtype))
        renamed = _DOUBLE_BACKWARD_NAMES.get(type(self).__name__)
        if renamed is not None and grads and isinstance(grads[0], Tensor):
            _rename_new_node(grads[0], cts, renamed)
        return grads

    def _output_specs(self) -> list:
        """Found by running the primitive again on what the node kept (rarely asked)."""
        if self._freed or self._vals is None:
            raise freed_error()
        args = [v.data if type(v) is Saved else v.make() if type(v) is Spec
                else stand_in(self._meta[k][1], self._meta[k][2]) if v is STAND_IN else v
                for k, v in enumerate(self._values())]
        out = self._prim.impl(*args, **self._params) if self._params else self._prim.impl(*args)
        return [(np.shape(o), np.result_type(o)) for o in (out if type(out) is tuple else (out,))]

    def _saved_values(self) -> list:
        """(name, argument position or None, `Saved`) for each tensor this node saved."""
        vals = self._values()
        if self._freed or vals is None:
            return []
        names = _ROLE_NAMES.get(len(vals)) or [f"arg{i}" for i in range(len(vals))]
        found = [(names[i], i, v) for i, v in enumerate(vals) if type(v) is Saved]
        out = self._out_saved()
        if type(out) is Saved:
            found.append(("result", None, out))
        return found

    # PyTorch's names for what a node saved are properties, not a ``__getattr__``: CPython
    # reads attributes fast only on classes without one, and nodes are read on every op
    def _saved_named(self, name: str):
        """``_saved_self``, ``_saved_other``, ``_saved_exponent`` (arguments 0, 1, 1) and
        ``_saved_result`` (the output) as tensors; a Python number operand wrapped."""
        where = _SAVED_NAMES[name]
        if self._freed:
            raise freed_error()
        if where == "out":
            saved = self._out_saved()
        else:
            vals = self._values()
            saved = vals[where] if where < len(vals) else None
        if type(saved) is Saved:
            return saved_tensor(saved, self)
        if saved is not None and saved is not STAND_IN and type(saved) is not Spec \
                and saved is not RECOMPUTE:
            return Tensor._wrap(np.asarray(saved))  # a Python number operand, wrapped
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _raw_saved(self, name: str) -> "SavedTensor":
        """The same under ``_raw_saved_*``, as `SavedTensor` records (hooks can be set)."""
        where = _SAVED_NAMES["_saved_" + name[len("_raw_saved_"):]]
        saved = None
        if not self._freed:
            vals = self._values()
            saved = self._out_saved() if where == "out" else (vals[where] if where < len(vals)
                                                              else None)
            if type(saved) is not Saved:
                raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                     f"'{name}'")
        return SavedTensor._of(saved, self)

    def _saved_attribute(self, name: str):
        """PyTorch's saved non-tensor attributes: ``_saved_self_sym_sizes`` (the first
        argument's shape, kept after backward) and the op's parameters under torch's names
        (``_saved_dim``, ``_saved_keepdim``...)."""
        missing = AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if not name.startswith("_saved_"):
            raise missing
        key = name[len("_saved_"):]
        if key == "self_sym_sizes" and self._meta and self._meta[0][1] is not None:
            return tuple(self._meta[0][1])
        params = self._params or {}
        param = _TORCH_PARAMS.get(key, key)
        if param not in params:
            raise missing
        value = params[param]
        if param == "axis" and "keepdims" in params and type(value) is int:
            return (value,)  # a reduction's dim is a list in PyTorch
        return value


_SAVED_NAMES = {"_saved_self": 0, "_saved_other": 1, "_saved_exponent": 1, "_saved_result": "out"}
# PyTorch's argument names for the primitives' parameters
_TORCH_PARAMS = {"dim": "axis", "keepdim": "keepdims"}


def _saved_property(name: str, read) -> None:
    """OpNode's attribute `name`, read by ``read(node, name)``."""
    setattr(OpNode, name, property(lambda node: read(node, name)))


for _name in _SAVED_NAMES:
    _saved_property(_name, OpNode._saved_named)
    _saved_property("_raw" + _name, OpNode._raw_saved)
_saved_property("_saved_self_sym_sizes", OpNode._saved_attribute)


def _name_saved_params(prim) -> None:
    """OpNode's ``_saved_<parameter>`` for each parameter of `prim`, under torch's name too
    (``_saved_dim`` for ``axis``), made once per name (an op's nodes answer for their own
    parameters: `OpNode._saved_attribute`)."""
    for param in prim.params:
        for key in (param, _TORCH_NAMES.get(param)):
            if key is not None and not hasattr(OpNode, "_saved_" + key):
                _saved_property("_saved_" + key, OpNode._saved_attribute)


_TORCH_NAMES = {v: k for k, v in _TORCH_PARAMS.items()}
_ROLE_NAMES = {1: ["self"], 2: ["self", "other"]}


SAVED_TENSOR_FROM_PYTHON = "Trying to create a SavedTensor object from Python is forbidden."
DETACHED_SAVED = ("Trying to use a saved tensor that has been detached in-place, i.e. with "
                  ".detach_().This is not supported, please use out-of-place `.detach()` instead")


class SavedTensor:
    """PyTorch's ``torch._C._autograd.SavedTensor``: one value a node saved, as
    ``grad_fn._raw_saved_self`` gives it, with hooks for that value alone."""

    __slots__ = ("_saved", "_node")

    def __init__(self, *args) -> None:
        # made only here, from a node's record (`_of`); the two-argument form is that
        # record and its node (the op table's index nodes build theirs so)
        if len(args) == 2 and (args[0] is None or type(args[0]) is Saved) \
                and isinstance(args[1], Node):
            self._saved, self._node = args
            return
        if args:  # (torch's binding declares a constructor of no arguments)
            raise TypeError(
                "__init__(): incompatible constructor arguments. The following argument types "
                "are supported:\n    1. torch._C._autograd.SavedTensor()\n\nInvoked with: "
                + ", ".join(repr(a) for a in args))
        raise RuntimeError(SAVED_TENSOR_FROM_PYTHON)

    @classmethod
    def _of(cls, saved: Saved | None, node: Node | None) -> "SavedTensor":
        """The record of `saved` (None: the value was None, or the node has been freed
        since) as `node` saved it (None: saved by ``torch._C._autograd._make_saved_tensor``,
        outside any node)."""
        out = object.__new__(cls)
        out._saved = saved
        out._node = node
        return out

    def unpack(self):
        """The saved tensor, as the node it belongs to would read it at backward: the version
        checked, the unpack hook run."""
        saved = self._saved
        if getattr(self._node, "_freed", False):
            raise freed_error()
        if saved is None:
            return None
        if saved.tensor is None:
            # a saved output: torch's unpack() is given no grad_fn to attach it to, and
            # refuses it so (as for an output detached in place)
            raise RuntimeError(DETACHED_SAVED)
        if saved.unpack_fn is None and saved.counter.value != saved.version:
            raise version_error(saved, self._node)
        return saved_tensor(saved, self._node)

    def register_hooks(self, *hooks) -> None:
        """Pack the saved value now with ``hooks[0]``; ``hooks[1]`` unpacks it at each use."""
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument types "
                "are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\nInvoked "
                f"with: {self!r}, " + ", ".join(repr(h) for h in hooks))
        saved = self._saved
        if saved is None:
            if getattr(self._node, "_freed", False):
                raise RuntimeError(
                    "Calling register_hooks on a saved tensor after it has been freed. Saved "
                    "intermediate values of the graph are freed when you call .backward() or "
                    "autograd.grad(). Specify retain_graph=True if you need to backward through "
                    "the graph a second time or if you need to access saved variables after "
                    "calling backward.")
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if saved.unpack_fn is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        node = self._node
        saved._pack((hooks[0], hooks[1], lambda s: saved_tensor(s, node)))

    @property
    def data(self):
        """What is stored: the pack hook's result, the input tensor itself, or (for a saved
        output) a detached tensor sharing its data."""
        saved = self._saved
        if saved is None:
            return None
        if saved.unpack_fn is not None:
            return saved.packed
        if saved.tensor is not None:
            return saved.tensor
        out = Tensor._wrap(saved.data)
        out._vc = saved.counter
        return out

    @property
    def unpack_hook(self):
        saved = self._saved
        return None if saved is None else saved.unpack_fn


def saved_tensor(saved: Saved, node: Node) -> Tensor:
    """A saved value as PyTorch unpacks it: the input tensor itself, or for a saved output a
    tensor sharing its version counter whose grad_fn is the node that saved it."""
    if getattr(saved, "unpack_fn", None) is not None:
        return unpacked(saved, node)
    if saved.tensor is not None:
        return saved.tensor
    view = getattr(saved, "view", None)  # an output written into a view (`_attach_inplace`)
    if view is not None and view() is not None:
        return view()
    out = Tensor._wrap(saved.data)
    out._vc = saved.counter
    out._grad_node = node
    out._rg = True
    return out


def unpacked(saved: Saved, node: Node) -> Tensor:
    """A value a saved-tensor pack hook stored, as its unpack hook gives it back, in the saved
    tensor's place in the graph (the input's edge, or output 0 of `node`), as PyTorch does."""
    value = saved.unpack_fn(saved.packed)
    if not isinstance(value, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(value).__name__}")
    t = saved.tensor
    if t is not None and not _requires_grad(t) and not value.requires_grad:
        return value  # nothing to attach: the hook's own tensor (PyTorch's SavedVariable)
    out = Tensor._wrap(value._data)
    out._dtype = value._dtype
    out._vc = value._vc  # the unpacked value's own counter, not the saved tensor's (PyTorch)
    if t is None:
        out._grad_node, out._rg = node, True
    elif _requires_grad(t):
        edge = getattr(saved, "edge", None) or edge_of(t)
        if edge is None or type(edge[0]) is AccumulateGrad:
            # a leaf's value: a leaf itself (no grad_fn), whose gradient goes to the saved
            # leaf's accumulator (PyTorch's SavedVariable keeps it), held here
            acc = t._accumulator()
            out._rg = True
            out._acc = lambda: acc
        else:
            out._grad_node, out._nr, out._rg = edge[0], edge[1], True
    return out


def _kept_out(keeps_out, out: np.ndarray):
    """What a node keeps of its output when it does not save it (see `Op.plan`)."""
    if keeps_out is _OUT_SPEC:
        return Spec(out.shape, out.dtype)
    return RECOMPUTE if keeps_out is RECOMPUTE else None


def _requires_grad(t) -> bool:
    return t._rg if t._base is None else t.requires_grad


# --- recording ----------------------------------------------------------------------------
def _record(op: Op, out: Tensor, args: Sequence, raws: Sequence, params: dict | None,
            inplace_orig=None, where=None) -> Node:
    """Attach a grad_fn for `op` to `out`. `args` are tensors or constants."""
    mask = []
    for a in args:
        if isinstance(a, Tensor):
            mask.append(a._rg if a._base is None else a.requires_grad)
        else:
            mask.append(False)
    mask = tuple(mask)
    plan = op._plans.get(mask)
    saved_idx, keeps_out = plan if plan is not None else op.plan(mask)
    cls = op.node_cls
    node = cls.__new__(cls)
    edges = []
    meta = []
    vals = []
    i = 0
    for a in args:
        if mask[i]:
            raw = raws[i]
            if inplace_orig is not None and i == 0:
                edges.append(inplace_orig[0])
            elif a._base is None:
                fn = a._grad_node
                edges.append((fn, a._nr) if fn is not None else (a._accumulator(), 0))
            else:
                edges.append(edge_of(a) or (a._accumulator(), 0))
            meta.append((i, raw.shape, raw.dtype))
        elif isinstance(a, Tensor):
            raw = raws[i]
            edges.append(None)
            meta.append((None, None, None))
        else:
            vals.append(raws[i])
            if op.scalar_edge and a is not None and not isinstance(a, np.ndarray):
                edges.append(None)
                meta.append((None, None, None))
            i += 1
            continue
        if i in saved_idx:
            if inplace_orig is not None and i == 0:
                vals.append(Saved(inplace_orig[1], Version(), _original(inplace_orig)))
            else:
                saved = Saved(raw, a._vc, a)
                if inplace_orig is not None and a._vc is out._vc:
                    saved.version -= 1  # saved as it was before this in-place write
                vals.append(saved)
        else:
            vals.append(Spec(raw.shape, raw.dtype))
        i += 1
    if cls._no_formula:
        edges = [e for e in edges if e is not None]  # as PyTorch: edges to grad inputs only
    node._init(tuple(edges))
    node._prim = op.prim
    node._params = params
    node._vals = tuple(vals)
    node._meta = meta
    node._freed = False
    if keeps_out is True:
        node._out = Saved(out._data, out._vc, None, weakref.ref(node))
        node._has_saved = True
    else:
        node._out = _kept_out(keeps_out, out._data)
        # index arrays are saved too (PyTorch's IndexBackward0): the node is freed after backward
        node._has_saved = (bool(saved_idx) or op.saves_index
                           or any(type(v) is np.ndarray for v in vals))
    if node._has_saved:
        node._at = where or user_site(3)
        if STATE.policy != "torch":
            ref = weakref.ref(node)
            for v in node._vals:
                if type(v) is Saved:
                    v.owner = ref
    out._grad_node = node
    out._nr = 0
    out._rg = True
    return node


_NO_CONST = object()


def _original(inplace_orig) -> Tensor:
    """The value an in-place op overwrote, as a tensor on the old history (for create_graph)."""
    edge, data = inplace_orig
    t = Tensor._wrap(data)
    if edge is not None:
        t._grad_node, t._nr, t._rg = edge[0], edge[1], True
    return t


def _result_dtype(op: Op, args) -> D.dtype:
    kind = op.result
    if kind == "same":
        return args[0]._dtype
    if kind == "bool":
        return D.bool_
    if kind == "keep":
        return None
    if kind == "real":  # a norm or moment: real for a complex input, as torch
        dt = args[0]._dtype
        return (D.float32 if dt is D.complex64 else D.float64) if dt.is_complex else dt
    dt = D.result_type_of(args)
    if kind == "float" and not (dt.is_floating_point or dt.is_complex):
        return D.DEFAULT_FLOAT
    return dt


def _as_array(out, dt: D.dtype) -> np.ndarray:
    if type(out) is not np.ndarray:
        return np.asarray(out, dtype=dt.np)
    if out.dtype != dt.np:
        return out.astype(dt.np)
    return out


def apply1(op: Op, x: Tensor, const=_NO_CONST, params: dict | None = None) -> Tensor:
    """The hot path of `apply`: one float tensor, optionally one Python float or int
    constant (which keeps the tensor's dtype, as in PyTorch).

    Spelled out (no `_wrap` or `_record`): at a few microseconds per op, every call and
    attribute write here shows in the per-op time."""
    data = x._data
    if type(data) is not np.ndarray and isinstance(data, _ROUTED):
        return traced_apply(op, (x,) if const is _NO_CONST else (x, const), params)
    dt = x._dtype
    if (not dt.is_floating_point or not op.float_fast or (const is not _NO_CONST and (
            type(const) is not float and type(const) is not int))):
        return apply(op, (x,) if const is _NO_CONST else (x, const), params)
    ufunc = op.ufunc0
    if ufunc is not None and not params:
        out = ufunc(data, out=...) if const is _NO_CONST else ufunc(data, const, out=...)
    elif const is _NO_CONST:
        out = op.impl(data, **params) if params else op.impl(data)
    else:
        out = op.impl(data, const)
    if type(out) is not _ndarray or (out.dtype is not data.dtype and out.dtype != data.dtype):
        out = np.asarray(out, dtype=data.dtype)
    res = _new_object(Tensor)
    res._data = out
    res._dtype = dt  # the output has the input's float dtype (checked just above)
    res._vc = vc = _new_object(Version)  # (`Version()` spelled out: no __init__ frame)
    vc.value = 0
    vc.inference = STATE.inference
    vc.writes = vc.watchers = None
    res._nr = 0
    res._grad = None
    res._base = None
    if not (STATE.grad_enabled and (x._rg or (x._base is not None and x.requires_grad))):
        res._grad_node = None
        res._rg = False
        return res
    op.record1(op, x, res, params, const)
    return res


def _record1(op: Op, x: Tensor, res: Tensor, params, const=_NO_CONST) -> None:
    """`_record` for one tensor argument that requires grad, and maybe one constant."""
    data = x._data
    out = res._data
    saves_x, keeps_out, frees = op.unary_plan
    # PyTorch's (None, 0) edge for a number operand: the class keeps it (`_graph.node_class`)
    cls = op.number_cls if op.scalar_edge and const is not _NO_CONST else op.node_cls
    node = _new_object(cls)
    if x._base is None:  # `_next_entry`, spelled out for the common case
        fn = x._grad_node
        if fn is None:
            edge = x._accumulator()
        else:
            edge = fn if x._nr == 0 else (fn, x._nr)
    else:
        edge = _next_entry(x)
    edges = edge if type(edge) is not tuple else (edge,)  # a lone node: no 1-tuple (`_graph`)
    meta = _LAST_META[0]  # (the last one made, when it fits: see `_LAST_META`)
    if meta[0][1] != data.shape or meta[0][2] is not data.dtype:
        meta = _LAST_META[0] = ((0, data.shape, data.dtype),)
    node._meta = meta
    if PROCESS.anomaly:
        node._init(edges)
    else:
        node._next = edges
        node._seq = next(_seq)
        node._x = None
    node._prim = op.prim
    node._params = params
    node._freed = False
    saves = saves_x or keeps_out is True
    if saves:
        # `Saved` made here when no policy watches and no hook packs (its __init__ otherwise)
        policy = STATE.policy
        plain = policy == "torch" and not STATE.saved_hooks
    if saves_x:
        vc = x._vc
        if plain and not vc.inference and const is _NO_CONST:
            node._vals = x  # saved as itself, no `Saved` record (see `OpNode`)
            node._version = vc.value
        elif plain and not vc.inference:
            node._vals = (_plain_saved(data, vc, vc.value, x), const)
        else:
            saved = Saved(data, vc, x)
            node._vals = saved if const is _NO_CONST else (saved, const)
    else:
        node._vals = _STAND_IN_ALONE if const is _NO_CONST else (STAND_IN, const)
    if keeps_out is True:
        vc = res._vc
        if plain and not saves_x and vc.value == 0:
            # the output's array itself, its counter in `_version` (see `OpNode`): tanh, exp,
            # sigmoid... make no `Saved` record and no weak reference to the node
            node._out = out
            node._version = vc
        elif plain:  # (the output's counter is new: never an inference tensor's here)
            saved = node._out = _new_object(Saved)
            saved.data = out
            saved.counter = vc
            saved.version = vc.value
            saved.tensor = saved.fallback = saved.unpack_fn = None
            saved.output_node = saved.owner = weakref.ref(node)
        else:
            node._out = Saved(out, res._vc, None, weakref.ref(node))
    elif keeps_out is False:
        node._out = None
    else:
        node._out = _kept_out(keeps_out, out)
    node._has_saved = frees
    if saves:
        # named in version errors (Saved tensors only). The walk for the user's frame starts
        # past this function, its caller (`apply1`, `view_op`) and theirs: all three are ours
        node._at = user_site(4)
        if policy != "torch":
            ref = weakref.ref(node)
            for v in node._values():
                if type(v) is Saved:
                    v.owner = ref
            if type(node._out) is Saved:
                node._out.owner = ref
    else:
        node._at = None
    res._grad_node = node  # (its callers made `res` with ``_nr = 0``)
    res._rg = True


def _now(saved: Saved):
    """What a rule reads of a saved value: an input saved as itself is read through its tensor,
    as PyTorch's SavedVariable keeps the input tensor itself, so ``x.data = ...`` after the op
    changes what backward sees (any in-place write since is a version error first). Not when
    the copy-on-write policy gave the record its own copy (and counter), nor for an output."""
    t = saved.tensor
    return saved.data if t is None or saved.counter is not t._vc else t._data


def _plain_saved(data, counter: Version, version: int, tensor: Tensor) -> Saved:
    """A `Saved` input tensor, made without ``Saved.__init__``: for when no policy watches
    and no saved-tensor hook packs (``__init__`` looks at both)."""
    saved = _new_object(Saved)
    saved.data = data
    saved.counter = counter
    saved.version = version
    saved.tensor = tensor
    saved.output_node = saved.owner = saved.fallback = saved.unpack_fn = None
    return saved


_new_object = object.__new__
_ndarray = np.ndarray  # (read as a global: CPython 3.11 never specializes ``np.ndarray`` here)
_multiply = np.multiply
# the common real dtypes, tested by identity before reading ``.kind`` (NumPy's builtin dtypes
# are singletons; any other dtype object still takes the ``.kind`` test)
_F64, _F32 = np.dtype(np.float64), np.dtype(np.float32)
_REAL_SCALARS = frozenset((np.float64, np.float32, np.float16))
# `_vals` are tuples, not lists: a tuple of constants and stand-ins is untracked by the cyclic
# garbage collector after its first pass, and every tracked object a graph keeps is rescanned
# at each full collection (the dominant cost of long graphs: see findings, MEASURED.md)
_STAND_IN_ALONE = (STAND_IN,)
_STAND_IN_PAIR = (STAND_IN, STAND_IN)
# `_record1`'s last `_meta`, given again to the next node whose input has the same shape and
# dtype (a loop of ops on one shape: nearly always): no two tuples made per node, and no
# object of its own per node for every full collection of the cyclic GC to visit. A list of
# one, replaced whole (another thread sees the old tuple or the new one, both right for what
# it checked)
_LAST_META = [((0, (), _F64),)]


def _next_entry(t: Tensor):
    """The ``_next`` entry (see `_graph.edge_pair`) for a tensor that requires grad: its
    grad_fn (and output number), or its leaf's accumulator."""
    if t._base is not None and (t._view.version != t._vc.value or t._view.no_grad):
        return edge_of(t) or (t._accumulator(), 0)  # a view written through, or of no_grad
    fn = t._grad_node
    if fn is None:
        return t._accumulator()
    return fn if t._nr == 0 else (fn, t._nr)


def apply2(op: Op, x, y) -> Tensor:
    """The hot path of `apply` for two tensors of one float dtype (``a * b``, ``a + b``...);
    anything else takes the general path. Spelled out as `apply1` is."""
    if type(x) is not Tensor or type(y) is not Tensor:
        return apply(op, (x, y))
    dt = x._dtype
    if y._dtype is not dt or not dt.is_floating_point or not op.float_fast:
        return apply(op, (x, y))
    a, b = x._data, y._data
    if (type(a) is not np.ndarray or type(b) is not np.ndarray) and (
            isinstance(a, _ROUTED) or isinstance(b, _ROUTED)):
        return traced_apply(op, (x, y))
    try:
        ufunc = op.ufunc0
        out = op.impl(a, b) if ufunc is None else ufunc(a, b, out=...)
    except ValueError as exc:
        raise _shape_error((a, b), exc) from None
    if type(out) is not _ndarray or (out.dtype is not a.dtype and out.dtype != a.dtype):
        out = np.asarray(out, dtype=a.dtype)
    res = _new_object(Tensor)
    res._data = out
    res._dtype = dt
    res._vc = vc = _new_object(Version)  # (as in `apply1`)
    vc.value = 0
    vc.inference = STATE.inference
    vc.writes = vc.watchers = None
    res._nr = 0
    res._grad = None
    res._base = None
    rx = ry = False
    if STATE.grad_enabled:
        rx = x._rg or (x._base is not None and x.requires_grad)
        ry = y._rg or (y._base is not None and y.requires_grad)
    if not (rx or ry):
        res._grad_node = None
        res._rg = False
        return res
    op.record2(op, x, y, res, rx, ry)
    return res


def _record2(op: Op, x: Tensor, y: Tensor, res: Tensor, rx: bool, ry: bool) -> None:
    """`apply2`'s node, for x and y of which at least one requires grad (each op has its
    own copy: ``op.record2``, see `_graph.own_copy`)."""
    a, b, out = x._data, y._data, res._data
    plan = op.binary_plans.get((rx, ry))
    if plan is None:
        plan = op.binary_plans[(rx, ry)] = op.plan2((rx, ry))
    saves_x, saves_y, keeps_out, frees = plan
    cls = op.node_cls
    node = _new_object(cls)
    ex = ey = None  # `_next_entry`, without the call for output 0 of a node (not a view)
    if rx:
        ex = x._grad_node
        if ex is None or x._nr or x._base is not None:
            ex = _next_entry(x)
    if ry:
        ey = y._grad_node
        if ey is None or y._nr or y._base is not None:
            ey = _next_entry(y)
    if PROCESS.anomaly:
        node._init((ex, ey))
    else:
        node._next = (ex, ey)
        node._seq = next(_seq)
        node._x = None
    node._prim = op.prim
    node._params = None
    node._meta = ((0 if rx else None, a.shape, a.dtype), (1 if ry else None, b.shape, b.dtype))
    node._freed = False
    policy = STATE.policy
    if saves_x or saves_y:
        # `Saved` made here when no policy watches and no hook packs (as `_record1`)
        plain = policy == "torch" and not STATE.saved_hooks
        sx = sy = STAND_IN
        if saves_x:
            vc = x._vc
            sx = _plain_saved(a, vc, vc.value, x) if plain and not vc.inference else Saved(a, vc, x)
        if saves_y:
            vc = y._vc
            sy = _plain_saved(b, vc, vc.value, y) if plain and not vc.inference else Saved(b, vc, y)
        node._vals = (sx, sy)
    else:
        node._vals = _STAND_IN_PAIR
    if keeps_out is True:
        node._out = Saved(out, res._vc, None, weakref.ref(node))
    else:
        node._out = _kept_out(keeps_out, out)
    node._has_saved = frees
    if frees:
        node._at = user_site(4)  # named in version errors (past `apply2` and its caller)
        if policy != "torch":
            ref = weakref.ref(node)
            for v in node._vals:
                if type(v) is Saved:
                    v.owner = ref
            if type(node._out) is Saved:
                node._out.owner = ref
    else:
        node._at = None
    res._grad_node = node
    res._rg = True


def inplace1(op: Op, x: Tensor, const=_NO_CONST) -> Tensor:
    """The hot path of `inplace`: a float non-view tensor, optionally a Python float."""
    if (x._base is not None or not x._dtype.is_floating_point or op.prim is None
            or (const is not _NO_CONST and type(const) is not float) or x._vc.watchers
            or x._vc.inference or type(x._data) is not np.ndarray):
        return inplace(op, x, () if const is _NO_CONST else (const,))
    rg = STATE.grad_enabled and x._rg
    if rg:
        if x._grad_node is None:
            raise RuntimeError(LEAF_INPLACE)
        saves_x, keeps_out, _ = op.unary_plan
        if saves_x:  # the rule reads the overwritten value: the general path copies it
            return inplace(op, x, () if const is _NO_CONST else (const,))
    data = x._data
    if not data.flags.writeable or (0 in data.strides and _self_overlapping(data)):
        return inplace(op, x, () if const is _NO_CONST else (const,))
    where = user_frame(2)
    vc = x._vc
    vc.written(op.inplace_name, where)
    ufunc = op.ufunc
    if ufunc is not None and ufunc.nin == (1 if const is _NO_CONST else 2):
        if const is _NO_CONST:  # straight into the storage: no temporary, one pass
            ufunc(data, out=data)
        else:
            ufunc(data, const, out=data)
    else:
        np.copyto(data, op.impl(data) if const is _NO_CONST else op.impl(data, const),
                  casting="unsafe")
    vc.value += 1
    if rg:
        # (a number operand's edge: kept by the class, as in `_record1`)
        cls = op.number_cls if op.scalar_edge and const is not _NO_CONST else op.node_cls
        node = _new_object(cls)
        old = x._grad_node
        edges = old if x._nr == 0 else ((old, x._nr),)  # (a lone node: see `_graph`)
        if PROCESS.anomaly:
            node._init(edges)
        else:
            node._next = edges
            node._seq = next(_seq)
            node._x = None
        node._prim = op.prim
        node._params = None
        node._vals = _STAND_IN_ALONE if const is _NO_CONST else (STAND_IN, const)
        node._meta = ((0, data.shape, data.dtype),)
        node._freed = False
        if keeps_out is True:
            node._out = Saved(data, vc, None, weakref.ref(node))
            node._has_saved = True
            node._at = where
            if STATE.policy != "torch":
                node._out.owner = node._out.output_node
        else:
            node._out = _kept_out(keeps_out, data)
            node._has_saved = False
            node._at = None
        if x._retains and old is not None and old._retain:
            old._retain.pop(x._nr, None)
            node._retain = {0: weakref.ref(x)}
        x._grad_node = node
        x._nr = 0
    return x


def apply(op: Op, args: Sequence, params: dict | None = None) -> Tensor:
    """Apply `op` out of place: compute with the primitive's impl, record if needed."""
    raws = [a._data if isinstance(a, Tensor) else a for a in args]
    for r in raws:
        if type(r) is not np.ndarray and isinstance(r, _ROUTED):
            return traced_apply(op, args, params)
    a0 = args[0]
    if op.result == "promote" or (op.result == "float" and len(args) == 1
                                  and a0._dtype.category >= 2):
        a1 = args[1] if len(args) > 1 else None
        if a1 is None:
            dt = a0._dtype
        elif isinstance(a1, Tensor) and isinstance(a0, Tensor) and a0._dtype is a1._dtype:
            dt = a0._dtype
        elif type(a1) is float and isinstance(a0, Tensor) and a0._dtype.is_floating_point:
            dt = a0._dtype
        else:
            dt = _result_dtype(op, args)
    else:
        dt = _result_dtype(op, args)
    if dt is not None and dt.category < 2 and op.prim.differentiable and op.result != "bool" and _int_unsafe(op):
        raws = [r.astype(np.float64) if isinstance(r, np.ndarray) else r for r in raws]
    elif op.result == "float" and dt is not None and dt.category >= 2:
        # integer or bool inputs of a floating function are computed in the result's dtype,
        # as torch promotes them first (NumPy would compute in float64, then round)
        raws = [r.astype(dt.np) if isinstance(r, np.ndarray) and r.dtype.kind in "biu" else r
                for r in raws]
    try:
        out = op.impl(*raws, **params) if params else op.impl(*raws)
    except ValueError as exc:
        raise _shape_error(raws, exc) from None
    if dt is None:
        out = np.asarray(out)
        dt = D.from_numpy_dtype(out.dtype)
    res = Tensor._wrap(_as_array(out, dt))
    if STATE.grad_enabled and op.records:
        for a in args:
            if isinstance(a, Tensor) and (a._rg if a._base is None else a.requires_grad):
                op.record(op, res, args, raws, params)
                break
    return res


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    """The broadcast of shapes `a` and `b`, or PyTorch's RuntimeError naming the last
    dimension that does not match (torch compares from the right)."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for dim in range(n - 1, -1, -1):
        sa, sb = a[dim], b[dim]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor "
                               f"b ({sb}) at non-singleton dimension {dim}")
    return tuple(sb if sa == 1 else sa for sa, sb in zip(a, b))


def _shape_error(raws, exc) -> Exception:
    """PyTorch's message when two shapes do not broadcast."""
    shapes = [tuple(r.shape) for r in raws if isinstance(r, (np.ndarray, Array))]
    if len(shapes) == 2:
        try:
            broadcast_shape(*shapes)
        except RuntimeError as error:
            return error
    return RuntimeError(str(exc))


def _int_unsafe(op: Op) -> bool:
    return op.name in ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid")


_GENERIC: dict = {}


def _generic_op(prim, nargs: int, name: str | None = None) -> Op:
    """The op that records `prim` under create_graph when the table has none: it saves every
    argument and the output; named after the primitive unless `name` is given."""
    everything = tuple(range(nargs)) + ("out",)
    if name is None:
        name = "".join(p.capitalize() for p in prim.name.split("_")) + "Backward0"
    return Op(prim.name, prim, name, [everything] * nargs, saves_out=True, result="keep")


def _getitem_op(template) -> Op:
    """A rule's indexing, recorded under the name PyTorch's own formulas give the same read
    (cat's pieces are slices, stack's selects, a reversal a flip)."""
    ints = slices = flips = 0
    for item in template:
        if item is Ellipsis:
            continue
        if type(item) is int:
            ints += 1
        elif type(item) is slice:
            if item.step is not None and item.step < 0:
                flips += item == slice(None, None, -1)
                slices += item != slice(None, None, -1)
            else:
                slices += item != slice(None)
        else:
            return _GETITEM_OPS["IndexBackward0"]
    if flips and not ints and not slices:
        name = "FlipBackward0"
    elif ints and not flips:
        name = "SelectBackward0"
    elif slices and not flips:
        name = "SliceBackward0"
    else:
        name = "GetitemBackward0"
    return _GETITEM_OPS[name]


def _unsqueezes(before: tuple, after: tuple) -> bool:
    """Whether reshaping `before` to `after` inserts exactly one dimension of size 1."""
    if len(after) != len(before) + 1:
        return False
    for k, n in enumerate(after):
        if n == 1 and after[:k] + after[k + 1:] == before:
            return True
    return False


def _sum_to(g: Tensor, shape: tuple) -> Tensor:
    """A gradient summed to `shape` under create_graph, recorded as PyTorch's ``sum_to``:
    one sum over the broadcast dimensions, keeping them (SumBackward1), then a view dropping
    the leading ones (ViewBackward0)."""
    full = g._data.shape
    lead = len(full) - len(shape)
    axes = tuple(range(lead)) + tuple(k + lead for k, n in enumerate(shape)
                                      if n == 1 and full[k + lead] != 1)
    if axes:
        g = apply_primitive(NP.sum, [g], {"axis": axes, "keepdims": True})
    if lead:
        g = apply_primitive(NP.reshape, [g], {"shape": shape})
    return g


def apply_primitive(prim, args: Sequence, params: dict) -> Tensor:
    """Apply any funcgrad primitive to tensors (used while rules run under create_graph)."""
    if prim is NP.reshape and isinstance(args[0], Tensor) and _unsqueezes(
            args[0]._data.shape, tuple(params["shape"])):
        op = _NAMED_UNSQUEEZE  # (a reduced dimension put back: torch's formulas unsqueeze)
    else:
        op = _BY_PRIM.get(prim)
    if op is None:
        if prim is NP.sum_to_shape and isinstance(args[0], Tensor):
            return _sum_to(args[0], tuple(params["shape"]))
        if prim is NP.sum:
            op = SUM if params.get("axis") is None else SUM_DIM
        elif prim is NP.getitem:
            op = _getitem_op(params["template"])
        elif prim is NP.swapaxes and isinstance(args[0], Tensor) and args[0]._data.ndim == 2:
            op = _NAMED_T  # (a matrix's transpose in a rule: torch's formulas use .t())
        else:
            op = _GENERIC.get(prim)
        if op is None:
            n = prim.nargs if prim.nargs >= 0 else len(args)
            op = _GENERIC[prim] = _generic_op(prim, max(n, len(args)))
    raws = [a._data if isinstance(a, Tensor) else a for a in args]
    if any(isinstance(r, _ROUTED) for r in raws):
        return traced_primitive(prim, args, params)
    out = prim.impl(*raws, **params) if params else prim.impl(*raws)
    if prim.multiple_results:
        raise NotImplementedError(f"create_graph through {prim.name} is not supported")
    res = Tensor._wrap(np.asarray(out))
    if STATE.grad_enabled and prim.differentiable and any(
            isinstance(a, Tensor) and _requires_grad(a) for a in args):
        op.record(op, res, args, raws, params or None)
    return res


# the node PyTorch records for the gradient of a view under create_graph (its own backward
# formula: ``slice_backward``...), where the shared rule records another primitive (index_add)
_DOUBLE_BACKWARD_NAMES = {"SliceBackward0": "SliceBackwardBackward0",
                          "SelectBackward0": "SelectBackwardBackward0",
                          "DiagonalBackward0": "DiagonalBackwardBackward0",
                          "TBackward0": "TBackward0"}


def _rename_new_node(g: Tensor, cts, name: str) -> None:
    """Give the node that recorded `g` PyTorch's name for it, if this rule made that node
    (not when the gradient passed through unchanged)."""
    node = g._grad_fn
    if node is None or any(isinstance(c, Tensor) and c._grad_fn is node for c in cts):
        return
    if type(node).__name__ != name:
        node.__class__ = node_class(name, type(node))


class NotImplementedNode(OpNode):
    """PyTorch's node for an op without a derivative formula: the forward records it (the
    result requires grad), backward through it fails naming the op."""

    __slots__ = ()
    _display = "torch::autograd::NotImplemented"
    _no_formula = True

    def _apply(self, cts, graph):
        raise RuntimeError(f"derivative for aten::{self._prim.name} is not implemented")


# --- the table ------------------------------------------------------------------------------
def _decl(name, prim, grad_fn, reads=None, **kw) -> Op:
    op = Op(name, prim, grad_fn, reads, **kw)
    OPS[name] = op
    return op


OPS: dict = {}
ADD = _decl("add", NP.add, "AddBackward0", scalar_edge=True)
SUB = _decl("sub", NP.subtract, "SubBackward0", scalar_edge=True)
RSUB = _decl("rsub", NP.subtract, "RsubBackward1")
MUL = _decl("mul", NP.multiply, "MulBackward0", scalar_edge=True)
DIV = _decl("div", NP.divide, "DivBackward0", result="float", scalar_edge=True)
RDIV = _decl("rdiv", NP.divide, "DivBackward0", result="float")
POW = _decl("pow", NP.power, "PowBackward0", saves_out=False)
# tensor exponents take PyTorch's rule (its slope at a zero base differs from JAX's)
POW_T = _decl("pow_tensor", P.torch_power_p, "PowBackward1", saves_out=True)
RPOW = _decl("rpow", P.torch_power_p, "PowBackward2", saves_out=True)
NEG = _decl("neg", NP.negative, "NegBackward0")
EXP = _decl("exp", NP.exp, "ExpBackward0", saves_out=True, result="float")
LOG = _decl("log", NP.log, "LogBackward0", result="float")
SQRT = _decl("sqrt", NP.sqrt, "SqrtBackward0", saves_out=True, result="float")
SIN = _decl("sin", NP.sin, "SinBackward0", result="float")
COS = _decl("cos", NP.cos, "CosBackward0", result="float")
TAN = _decl("tan", NP.tan, "TanBackward0", saves_out=True, result="float")
TANH = _decl("tanh", NP.tanh, "TanhBackward0", saves_out=True, result="float")
SIGMOID = _decl("sigmoid", NP.sigmoid, "SigmoidBackward0", saves_out=True, result="float")
RELU = _decl("relu", NP.relu, "ReluBackward0", saves_out=True)
ABS = _decl("abs", NP.absolute, "AbsBackward0")
# |z| of a complex z is real
ABS_COMPLEX = _decl("abs_complex", NP.absolute, "AbsBackward0", result="keep")
LOG1P = _decl("log1p", NP.log1p, "Log1PBackward0", result="float")
EXPM1 = _decl("expm1", NP.expm1, "Expm1Backward0", saves_out=True, result="float")
RECIPROCAL = _decl("reciprocal", NP.reciprocal, "ReciprocalBackward0", saves_out=True,
                   result="float")
REMAINDER = _decl("remainder", NP.remainder, "RemainderBackward0")
REMAINDER_T = _decl("remainder_tensor", NP.remainder, "RemainderBackward1")
# no derivative in PyTorch: a Python number % tensor, and floor division
RREMAINDER = _decl("rremainder", NP.remainder, "NotImplemented",
                   node_base=NotImplementedNode)
FLOOR_DIVIDE = _decl("floor_divide", NP.floor_divide, "NotImplemented",
                     node_base=NotImplementedNode)
SQUARE = _decl("square", NP.square, "PowBackward0")
CLAMP = _decl("clamp", NP.clip, "ClampBackward1")
CLAMP_T = _decl("clamp_tensor", NP.clip, "ClampBackward0")  # (a bound that is a tensor)
MAXIMUM = _decl("maximum", NP.maximum, "MaximumBackward0")
MINIMUM = _decl("minimum", NP.minimum, "MinimumBackward0")
MATMUL = _decl("matmul", NP.matmul, "MmBackward0")
SUM = _decl("sum", NP.sum, "SumBackward0")
SUM_DIM = _decl("sum_dim", NP.sum, "SumBackward1")
MEAN = _decl("mean", NP.mean, "MeanBackward0", result="float")
MEAN_DIM = _decl("mean_dim", NP.mean, "MeanBackward1", result="float")
PROD = _decl("prod", NP.prod, "ProdBackward0", saves_out=True)
PROD_DIM = _decl("prod_dim", NP.prod, "ProdBackward1", saves_out=True)  # (along a dim)
MAX = _decl("max", NP.max, "MaxBackward1", saves_out=True)
MIN = _decl("min", NP.min, "MinBackward1", saves_out=True)
CLONE = _decl("clone", NP.positive, "CloneBackward0", result="same")
# a copy in the input's memory layout (PyTorch's preserve_format): NumPy's copy loop is about
# three times as fast as its `positive` ufunc on float32
CLONE.impl = lambda a: a.copy(order="K")
CLONE.ufunc = None
TO_COPY = _decl("to", NP.astype, "ToCopyBackward0", result="keep")
INDEX = _decl("index", NP.getitem, "IndexBackward0", ((),), result="same")
WHERE = _decl("where", NP.where, "WhereBackward0", scalar_edge=True)
CAT = _decl("cat", NP.concatenate, "CatBackward0", [("out_shape",)])
# views: their forward returns NumPy views of the input's storage
SELECT = _decl("select", NP.getitem, "SelectBackward0", ((),), result="same", is_view=True)
SLICE = _decl("slice", NP.getitem, "SliceBackward0", ((),), result="same", is_view=True)
ALIAS = _decl("alias", NP.getitem, "AliasBackward0", ((),), result="same", is_view=True)
UNSQUEEZE_IDX = _decl("unsqueeze_index", NP.getitem, "UnsqueezeBackward0", ((),),
                      result="same", is_view=True)
VIEW = _decl("view", NP.reshape, "ViewBackward0", result="same", is_view=True)
UNSAFE_VIEW = _decl("unsafe_view", NP.reshape, "UnsafeViewBackward0", result="same")
UNSQUEEZE = _decl("unsqueeze", NP.reshape, "UnsqueezeBackward0", result="same", is_view=True)
SQUEEZE = _decl("squeeze", NP.reshape, "SqueezeBackward0", result="same", is_view=True)
SQUEEZE_DIM = _decl("squeeze_dim", NP.reshape, "SqueezeBackward1", result="same",
                    is_view=True)
T_OP = _decl("t", NP.transpose, "TBackward0", result="same", is_view=True)
TRANSPOSE = _decl("transpose", NP.swapaxes, "TransposeBackward0", result="same",
                  is_view=True)
PERMUTE = _decl("permute", NP.transpose, "PermuteBackward0", result="same", is_view=True)
EXPAND = _decl("expand", NP.broadcast_to, "ExpandBackward0", result="same", is_view=True)
NARROW = _decl("narrow", NP.getitem, "SliceBackward0", ((),), result="same", is_view=True)
DETACH_OP = None
# in-place only
FILL = _decl("fill_", None, "FillBackward2")
ZERO = _decl("zero_", None, "ZeroBackward0")
COPY = _decl("copy_", None, "CopyBackwards")
INDEX_PUT = _decl("index_put_", NP.index_set, "IndexPutBackward0", ((), ()), result="same")

_BY_PRIM = {}
for _op in (ADD, SUB, MUL, DIV, NEG, EXP, LOG, SQRT, SIN, COS, TAN, TANH, SIGMOID, RELU, ABS,
            LOG1P, EXPM1, RECIPROCAL, CLAMP, MAXIMUM, MINIMUM, MATMUL, PROD, MAX, MIN, WHERE):
    _BY_PRIM[_op.prim] = _op
_BY_PRIM[NP.power] = POW_T
_BY_PRIM[P.torch_power_p] = POW_T
_BY_PRIM[NP.astype] = TO_COPY
# (a rule's broadcast and reshape, recorded under create_graph, as PyTorch's own derivative
# formulas record them: expand and view)
_BY_PRIM[NP.broadcast_to] = EXPAND
_BY_PRIM[NP.reshape] = VIEW
_NAMED_T = _generic_op(NP.swapaxes, 1, "TBackward0")
_NAMED_UNSQUEEZE = _generic_op(NP.reshape, 1, "UnsqueezeBackward0")
_GETITEM_OPS = {name: _generic_op(NP.getitem, 1, name) for name in (
    "SliceBackward0", "SelectBackward0", "FlipBackward0", "IndexBackward0", "GetitemBackward0")}


# --- views ----------------------------------------------------------------------------------
def expand_impl(x: np.ndarray, shape) -> np.ndarray:
    """A writable broadcast view (PyTorch lets you write single elements of expanded tensors)."""
    if type(x) is not np.ndarray and isinstance(x, Tracer):
        return NP.broadcast_to(x, shape=tuple(shape))  # a traced value: no storage to share
    b = np.broadcast_to(x, shape)
    return np.lib.stride_tricks.as_strided(x, shape=b.shape, strides=b.strides,
                                           writeable=x.flags.writeable)


def view_op(op: Op, x: Tensor, params: dict, data: np.ndarray | None = None,
            replay_fn=None) -> Tensor:
    """A view of `x`: same storage, same version counter, grad_fn `op`'s node."""
    if op.prim is NP.getitem:
        template = params["template"]
        if not any(item is Ellipsis for item in template):
            # a trailing `...` makes NumPy return a 0-d view, never a scalar copy
            params = {"template": tuple(template) + (Ellipsis,)}
            data = None
    if type(x._data) is not np.ndarray and isinstance(x._data, _ROUTED):
        return _traced_view(op, x, params, data, replay_fn)
    if data is None:
        data = op.prim.impl(x._data, **params)
    if x._vc.inference:
        # a view of an inference tensor, in inference mode or out of it, is a new inference
        # tensor over the same storage: no view of a base, no history (as PyTorch)
        out = Tensor._wrap(data)
        out._vc = x._vc
        return out
    out = _new_object(Tensor)
    out._data = data
    out._dtype = x._dtype
    out._vc = x._vc
    out._nr = 0
    out._grad = None
    out._grad_node = None
    out._rg = False
    base = x._base
    link = (replay_fn or op.impl, params, op)
    if base is None:
        out._base = x
        out._view = _ViewInfo((link,), x._vc.value, not STATE.grad_enabled)
    else:
        info = x._view
        out._base = base
        out._view = view = _ViewInfo(info.chain + (link,), x._vc.value, not STATE.grad_enabled,
                                     info.multi)
        if info.no_grad and STATE.grad_enabled:
            view.from_no_grad = True
            view.from_inference = info.inference
        view.custom = info.custom
    if not STATE.grad_enabled:
        out._view.base_fn = out._base._grad_node
        out._view.inference = STATE.inference
    if STATE.grad_enabled and _requires_grad(x):
        op.record1(op, x, out, params)
    return out


class CopySlices(Node):
    """The base's grad_fn after an in-place op on one of its views."""

    __slots__ = ("_chain", "_base_shape", "_base_dtype", "_fn")
    _display = "torch::autograd::CopySlices"

    def _release(self) -> None:
        self._fn._release()

    def _saved_values(self) -> list:
        return self._fn._saved_values()

    def _output_specs(self) -> list:
        return [(self._base_shape, self._base_dtype)]

    def _apply(self, cts, graph):
        ct = cts[0]
        if isinstance(ct, Tensor):
            res = ct.clone()
            region = _replay_tensor(res, self._chain)
            grads = self._fn._apply([region.clone()], graph)
            if grads and grads[0] is not None:
                region.copy_(grads[0])
            else:
                region.zero_()
            return [res] + list(grads[1:])
        res = np.array(ct, dtype=self._base_dtype, copy=True)
        if res.shape != self._base_shape:
            res = np.broadcast_to(res, self._base_shape).copy()
        region = replay(res, self._chain)
        grads = self._fn._apply([region.copy()], graph)
        if grads and grads[0] is not None:
            region[...] = grads[0]
        else:
            region[...] = 0
        return [res] + list(grads[1:])


def _zeros_tensor(shape, dtype) -> Tensor:
    return Tensor._wrap(np.zeros(shape, dtype))


def _replay_tensor(t: Tensor, chain) -> Tensor:
    for fn, params, op in chain:
        t = view_op(op or _VIEW_BY_IMPL.get(fn, ALIAS), t, params, fn(t._data, **params),
                    None if op is None or fn is op.impl else fn)
        if t._data.dtype != t._dtype.np:  # view_as_real / view_as_complex change the dtype
            t._dtype = D.from_numpy_dtype(t._data.dtype)
    return t


_VIEW_BY_IMPL = {expand_impl: EXPAND, NP.getitem.impl: SLICE, NP.reshape.impl: VIEW, NP.transpose.impl: PERMUTE,
                 NP.swapaxes.impl: TRANSPOSE, NP.broadcast_to.impl: EXPAND}


# --- in-place -----------------------------------------------------------------------------------
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = ("a view of a leaf Variable that requires grad is being used in an "
                        "in-place operation.")

def _mode_view_error(prefix: str, inference: bool, detail: str | None = None) -> RuntimeError:
    """PyTorch's refusal of a write into a view made in no_grad (or inference) mode."""
    made, now, block = (("inference mode", "in normal mode", "inference_mode") if inference
                        else ("no_grad mode", "with grad mode enabled", "no_grad"))
    if detail is None:
        detail = ("Given that this use case is ambiguous and error-prone, it is forbidden. You "
                  "can clarify your code by moving both the view and the inplace either both "
                  f"inside the {block} block (if you don't want the inplace to be tracked) or "
                  "both outside (if you want the inplace to be tracked).")
    return RuntimeError(f"{prefix} created in {made} and is being modified inplace {now}. "
                        f"{detail}")


def check_inplace(self: Tensor, others_require_grad: bool = False) -> None:
    """PyTorch's refusals of an in-place write into `self`: a leaf that requires grad, and
    views whose history the write would make ambiguous, when the result requires grad (self
    does, or an operand does: `others_require_grad`)."""
    if not STATE.grad_enabled:
        return
    base = self._base
    if base is None:
        if self._grad_node is None and self._rg:
            raise RuntimeError(LEAF_INPLACE)
        return
    view = self._view
    rg = (others_require_grad or self._rg or self._grad_node is not None
          or base.requires_grad)
    if rg:
        if view.no_grad:
            if view.custom:
                raise _mode_view_error("A view was", False, CUSTOM_VIEW_DETAIL)
            raise _mode_view_error("A view was", view.inference)
        if view.from_no_grad:
            raise _mode_view_error(f"Output {self._nr} of {_short_name(self.grad_fn)} is a view "
                                   "of a view which was", view.from_inference)
        if view.multi:
            if self.grad_fn is None:  # pieces of a tensor that did not require grad
                raise _mode_view_error("A view was", False, MULTI_VIEW_DETAIL)
            raise RuntimeError(f"Output {self._nr} of {_short_name(self.grad_fn)} is a view and "
                               f"is being modified inplace. {MULTI_VIEW_DETAIL}")
        if view.custom:
            raise RuntimeError(f"Output {self._nr} of {_short_name(self.grad_fn)} is a view and "
                               f"is being modified inplace. {CUSTOM_VIEW_DETAIL}")
    if base.grad_fn is None and base._rg:
        raise RuntimeError(VIEW_OF_LEAF_INPLACE)


MULTI_VIEW_DETAIL = ("This view is the output of a function that returns multiple views. Such "
                     "functions do not allow the output views to be modified inplace. You "
                     "should replace the inplace operation by an out-of-place one.")


def _before_write(self: Tensor, op_name: str, where: tuple) -> None:
    """Record who writes (for error messages) and apply the mutation policy."""
    vc = self._vc
    if vc.inference and not STATE.inference:
        raise RuntimeError(INFERENCE_INPLACE)
    if vc.watchers:
        on_write(vc, self, op_name, where)  # may refuse the write: then it is not recorded
    vc.written(op_name, where)


def inplace(op: Op, self: Tensor, others: Sequence, params: dict | None = None,
            compute=None, check_overlap: bool = True) -> Tensor:
    """``self.<op>_(*others)``: write the result into self's storage, then record it."""
    if len(others) == 1 and compute is None and not params and self._base is None:
        # the short path: a float tensor written from one tensor of its dtype with nothing to
        # record or check beyond the write itself (an SGD update ``p.sub_(lr * p.grad)``
        # under no_grad: 3.0 us by the general path, torch 1.0). Two different arrays that
        # own their memory cannot overlap; anything else takes the general path below.
        y = others[0]
        ufunc = op.ufunc
        if (ufunc is not None and isinstance(y, Tensor) and y._dtype is self._dtype
                and self._dtype.is_floating_point
                and not (STATE.grad_enabled and (self._rg or _requires_grad(y)))):
            a, b = self._data, y._data
            vc = self._vc
            if (type(a) is np.ndarray and type(b) is np.ndarray and ufunc.nin == 2
                    and not vc.watchers and not vc.inference and op.result != "bool"
                    and (b is a or (a.base is None and b.base is None))
                    and (b.shape == a.shape or _fits([a, b]))
                    and a.flags.writeable and 0 not in a.strides):
                vc.written(op.inplace_name, user_frame(2))
                ufunc(a, b, out=a)
                vc.value += 1
                return self
    traced = type(self._data) is not np.ndarray and isinstance(self._data, _ROUTED)
    if not traced:
        for a in others:
            if isinstance(a, Tensor) and type(a._data) is not np.ndarray and isinstance(
                    a._data, _ROUTED):
                traced = True
                break
    if traced:
        return _traced_inplace(op, self, others, params, compute, check_overlap)
    check_inplace(self, any(isinstance(a, Tensor) and (a._rg if a._base is None
                                                       else a.requires_grad) for a in others))
    args = (self,) + tuple(others)
    raws = [self._data]
    mask = [self._rg if self._base is None else self.requires_grad]
    same = True
    sdt = self._dtype
    for a in others:
        if isinstance(a, Tensor):
            raws.append(a._data)
            mask.append(a._rg if a._base is None else a.requires_grad)
            same = same and a._dtype is sdt
        else:
            raws.append(a)
            mask.append(False)
            same = same and (type(a) is float and sdt.is_floating_point or a is None)
    if op.result == "keep" or same:
        dt = sdt
    else:
        dt = _result_dtype(op, args)
    if dt.category > sdt.category or (dt.is_floating_point and sdt.category < 2):
        raise RuntimeError(f"result type {_scalar_name(dt)} can't be cast to the desired output "
                           f"type {_scalar_name(sdt)}")
    ufunc = op.ufunc
    if (ufunc is not None and compute is None and not params and same and dt is sdt
            and sdt.is_floating_point and ufunc.nin == len(raws)
            and op.result != "bool" and _fits(raws)):
        new = None  # computed at the write, into the storage (`Op.ufunc`)
    else:
        try:
            if compute is not None:
                new = compute(*raws)
            else:
                new = op.prim.impl(*raws, **params) if params else op.prim.impl(*raws)
        except ValueError as exc:
            raise _shape_error(raws, exc) from None
        new_shape = np.shape(new)
        if new_shape != self._data.shape:
            if np.broadcast_shapes(new_shape, self._data.shape) != self._data.shape:
                raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match "
                                   "the broadcast shape "
                                   f"{list(np.broadcast_shapes(new_shape, self._data.shape))}")
    for a in others if check_overlap else ():
        if isinstance(a, Tensor) and a._data is not self._data and _overlaps(a._data, self._data):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                               "written-to tensor refer to a single memory location. Please "
                               "clone() the tensor before performing the operation.")
    rg = STATE.grad_enabled and True in mask
    orig = None
    if rg:
        if op.prim is not None:
            mask = tuple(mask)
            plan = op._plans.get(mask)
            saved_idx = (plan if plan is not None else op.plan(mask))[0]
            if 0 in saved_idx:
                orig = self._data.copy()
        old_edge = edge_of(self)
    where = user_frame(2)  # one frame walk, shared by the version record and the node
    _before_write(self, op.inplace_name, where)
    if not self._data.flags.writeable or _self_overlapping(self._data):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    if new is None:
        ufunc(*raws, out=self._data)
    else:
        np.copyto(self._data, new, casting="unsafe")
    self._vc.value += 1
    if rg:
        _record_inplace(op, self, args, raws, params, old_edge, orig, where)
    return self


def _fits(raws: list) -> bool:
    """Whether an in-place ufunc can write ``raws[0]`` from `raws` directly: the others are
    Python floats or arrays whose shapes broadcast to raws[0]'s (or are equal to it)."""
    shape = raws[0].shape
    for r in raws[1:]:
        if type(r) is np.ndarray:
            if r.shape != shape and (r.ndim > len(shape) or any(
                    n != 1 and n != m for n, m in zip(r.shape[::-1], shape[::-1]))):
                return False
        elif type(r) is not float:
            return False
    return True


def _self_overlapping(a: np.ndarray) -> bool:
    return 0 in a.strides and any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape))


def _overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    """Partly shared memory (an exact alias, like ``x.add_(x)``, is fine, as in PyTorch)."""
    if not np.may_share_memory(a, b):
        return False
    same = (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.strides == b.strides and a.shape == b.shape)
    return not same and bool(np.shares_memory(a, b))


class _Plain(Node):
    """A node whose rule is written here (fill_, zero_, copy_): no primitive involved."""

    __slots__ = ("_kind", "_meta")

    def name(self) -> str:  # (copy_'s node is a C++ one in PyTorch: named with its namespace)
        n = type(self).__name__
        return "torch::autograd::" + n if n == "CopyBackwards" else n

    def _output_specs(self) -> list:
        return self._meta[:1]

    def _apply(self, cts, graph):
        ct = cts[0]
        grads = []
        edges = self._edges()
        for i, (shape, dtype) in enumerate(self._meta):
            if edges[i] is None:
                grads.append(None)
            elif i == 0:  # the overwritten value gets no gradient
                grads.append(ct * 0 if isinstance(ct, Tensor) else np.zeros(shape, dtype))
            else:          # copy_/fill_ from a tensor: the source gets the gradient
                grads.append(graph.fix(ct, shape, dtype) if graph.create_graph
                             else fix_array(ct, shape, dtype))
        return grads


def _record_inplace(op, self, args, raws, params, old_edge, orig, where=None) -> None:
    old_fn = self._grad_node
    if op.prim is None:
        node = op.node_cls.__new__(node_class(op.node_cls.__name__, _Plain))
        edges = [old_edge] + [edge_of(a) if isinstance(a, Tensor) and _requires_grad(a) else None
                              for a in args[1:]]
        node._init(tuple(edges))
        node._meta = tuple((a._data.shape, a._data.dtype) if isinstance(a, Tensor) else ((), None)
                           for a in args)
    else:
        node = op.record(op, self, args, raws, params, inplace_orig=(old_edge, orig),
                         where=where)
        self._grad_node = old_fn
    _attach_inplace(self, node)


def _attach_inplace(self: Tensor, node: Node) -> None:
    """Make `node` the new history of self (or, for a view, of its base via CopySlices)."""
    retained = self._retains
    old = self._grad_node
    if retained and old is not None and old._retain:
        old._retain.pop(self._nr, None)  # retain_grad follows the newest version
    if self._base is None:
        self._grad_node = node
        self._nr = 0
        self._rg = True
        if retained:
            node._retain = {0: weakref.ref(self)}
        return
    base = self._base
    cs = CopySlices.__new__(CopySlices)
    edge_of_base = edge_of(base)
    cs._init((edge_of_base,) + node._edges()[1:])
    cs._chain = self._view.chain
    cs._base_shape = base._data.shape
    cs._base_dtype = base._data.dtype
    cs._fn = node
    # the op's own edge to the view's old history is never followed (CopySlices routes that
    # gradient to the base), so drop it: PyTorch keeps no reference to it either
    nexts = node._next
    node._next = (None,) + nexts[1:] if type(nexts) is tuple else (None,)
    base._grad_node = cs
    base._nr = 0
    base._rg = True
    if base._retains:  # retain_grad follows the base's newest version too
        old_base_fn = edge_of_base[0] if edge_of_base is not None else None
        if old_base_fn is not None and old_base_fn._retain:
            old_base_fn._retain.pop(edge_of_base[1], None)
        cs._retain = {0: weakref.ref(base)}
    # the view's own grad_fn is regenerated now (AsStridedBackward0 over the new history)
    self._view.version = -1
    view_fn = self.grad_fn
    if retained and view_fn is not None:
        view_fn._retain = {0: weakref.ref(self)}
    out = getattr(node, "_out", None)
    if type(out) is Saved:
        # As PyTorch: errors name the view's grad_fn of that moment while it lives, else
        # the in-place node itself; create_graph differentiates through the view.
        out.view = weakref.ref(self)  # (a strong reference would be a cycle through base)
        out.output_node = weakref.ref(view_fn) if view_fn is not None else None
        out.fallback = weakref.ref(node)


# --- tensors holding a functional tracer ---------------------------------------------------
# torch.autograd.functional runs the user's function on tensors whose data are tracers of
# funcgrad's transforms (see autograd/functional.py). An op meeting one calls its primitive
# through the functional model's dispatch (`Primitive.__call__`, the path funcgrad.numpy
# takes), so the running transform records it with the rules of the one table, and the
# mutable graph records nothing; torch's dtype rules still decide the result's dtype.
# In-place writes are functionalized: the written tensor's data becomes the new value (a
# write through a view of ``x[...]`` kind is replayed onto its base); the views of a written
# tensor read it again when next used (`traced_value`).

class _TracedState(threading.local):
    """Per thread: while ``constants`` is a list, traced ops append to it every untraced
    operand that requires grad (a tensor the function closed over, whose gradient a
    functional transform cannot see: torch.autograd.functional refuses it with
    create_graph=True)."""

    constants: list | None = None


TRACED = _TracedState()


class DualArray(np.ndarray):
    """The data of a dual tensor (torch.autograd.forward_ad): a view of its primal's storage
    whose type alone sends the tensor's ops to forward mode. The ops' routing tests for
    tracers (``type(data) is not np.ndarray and isinstance(data, _ROUTED)``) see it, so
    tensors without a tangent pay nothing more. NumPy code reading the data elsewhere
    (printing, comparisons) computes on the plain array and gets plain results."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(plain_array(o) for o in out)
        return getattr(ufunc, method)(*[plain_array(i) for i in inputs], **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return func(*_plain_all(args), **{k: _plain_all(v) for k, v in kwargs.items()})


def plain_array(a):
    """`a` as a plain ndarray viewing the same memory (a dual tensor's data unmarked)."""
    return a.view(np.ndarray) if type(a) is DualArray else a


def _plain_all(x):
    if type(x) is DualArray:
        return x.view(np.ndarray)
    if type(x) is tuple or type(x) is list:
        return type(x)(_plain_all(v) for v in x)
    return x


def drop_tangent(t: Tensor) -> None:
    """`t` without its forward-mode tangent, a plain tensor again (leaving the dual level,
    ``detach_()``: PyTorch's detach is forward non-differentiable too)."""
    if t._fw_grad is not None:
        del t._fw_grad
    t._data = plain_array(t._data)


# what the ops' routing tests send here: tensors holding a tracer, and dual tensors
_ROUTED = (Tracer, DualArray)


class _ForwardSlot:
    """Forward mode's entry points (`funcgrad.mutable._forward`), set when that module is
    imported: it runs derivative rules through the engine's graph-recording trace, so it sits
    above this layer. Dual tensors exist only once it is (``make_dual`` lives there)."""

    apply = view = inplace = primitive = None
    enabled = True  # PyTorch's forward-grad mode (torch._C._set_fwd_grad_enabled)


FORWARD = _ForwardSlot()


def _has_dual(args) -> bool:
    for a in args:
        if isinstance(a, Tensor) and type(a._data) is DualArray:
            return True
    return False


def traced_primitive(prim, args: Sequence, params: dict):
    """`apply_primitive` when an operand is traced or dual."""
    if _has_dual(args):
        return FORWARD.primitive(prim, args, params)
    _watch(args)
    raws = [traced_value(a) if isinstance(a, Tensor) else a for a in args]
    out = prim(*raws, **params) if params else prim(*raws)
    if prim.multiple_results:
        return tuple(traced_tensor(o) for o in out)
    return traced_tensor(out)


def _watch(args) -> None:
    seen = TRACED.constants
    if seen is not None:
        for a in args:
            if isinstance(a, Tensor) and not is_traced(a) and _requires_grad(a):
                seen.append(a)


def traced_tensor(value, dtype: D.dtype | None = None) -> Tensor:
    """A tensor holding `value`, the result of a traced op, cast to `dtype` (torch's
    result dtype; None keeps the value's own). A result that is no tracer (a comparison,
    or a value independent of every traced input) makes an ordinary tensor."""
    if type(value) is Array:
        value = value._value
    if not isinstance(value, Tracer):
        return Tensor._wrap(np.array(value, dtype=None if dtype is None else dtype.np))
    if dtype is None:
        dtype = D.from_numpy_dtype(value.dtype)
    elif value.dtype != dtype.np:
        value = NP.astype(value, dtype=dtype.np)
    t = _new_object(Tensor)
    t._data = value
    t._dtype = dtype
    t._vc = Version()
    t._grad_node = None
    t._nr = 0
    t._rg = False
    t._grad = None
    t._base = None
    return t


def traced_detach(t: Tensor) -> Tensor:
    """``t.detach()`` of a traced tensor: its value as a constant of the running transforms
    (`funcgrad.stop_gradient`), sharing t's version counter as a detached tensor does."""
    out = traced_tensor(stop_gradient(traced_value(t)), t._dtype)
    out._vc = t._vc
    return out


def traced_value(t: Tensor):
    """A traced tensor's value; a view whose base was written since it was made reads it
    again from the base (its chain of view ops replayed through the primitives)."""
    if t._base is not None and t._traced_at != t._vc.value and is_traced(t._base):
        value = t._base._data
        for fn, params, _ in t._view.chain:
            view = _VIEW_BY_IMPL.get(fn)
            if view is None:
                raise RuntimeError(f"a view made by {getattr(fn, '__name__', fn)} of a traced "
                                   "tensor cannot be read after its base was written in place "
                                   "(inside torch.autograd.functional): clone() the view "
                                   "before writing into the base")
            value = view.prim(value, **params)
        t._data = value
        t._traced_at = t._vc.value
    return t._data


def traced_apply(op: Op, args: Sequence, params: dict | None = None) -> Tensor:
    """`apply` when an operand is traced: the primitive through the functional dispatch."""
    if _has_dual(args):
        return FORWARD.apply(op, args, params)
    _watch(args)
    dt = _result_dtype(op, args)
    raws = [traced_value(a) if isinstance(a, Tensor) else a for a in args]
    if dt is not None and dt.category < 2 and op.prim.differentiable and op.result != "bool" \
            and _int_unsafe(op):
        raws = [NP.astype(r, dtype=np.float64) if isinstance(r, (np.ndarray, Array)) else r
                for r in raws]
    try:
        out = op.prim(*raws, **params) if params else op.prim(*raws)
    except ValueError as exc:
        raise _shape_error(raws, exc) from None
    return traced_tensor(out, dt)


def _traced_view(op: Op, x: Tensor, params: dict, data, replay_fn) -> Tensor:
    """`view_op` of a traced tensor: the view's value is traced too (no storage is shared);
    it remembers its base and chain, to read the base again after a write."""
    if type(x._data) is DualArray:
        return FORWARD.view(op, x, params, data, replay_fn)
    fn = replay_fn or op.impl
    if x._base is not None and x._traced_at != x._vc.value:
        data = None  # computed from a stale value: read the base again first
    if not isinstance(data, Tracer):
        view = _VIEW_BY_IMPL.get(fn) or (op if replay_fn is None else None)
        if view is None:
            raise RuntimeError(f"the view op {getattr(fn, '__name__', fn)} is not yet "
                               "supported on traced tensors (inside "
                               "torch.autograd.functional)")
        data = view.prim(traced_value(x), **params)
    out = traced_tensor(data, x._dtype)
    out._vc = x._vc
    link = (fn, params, None)
    base = x._base
    if base is None:
        out._base = x
        out._view = _ViewInfo((link,), x._vc.value, not STATE.grad_enabled)
    else:
        out._base = base
        out._view = _ViewInfo(x._view.chain + (link,), x._vc.value, not STATE.grad_enabled,
                              x._view.multi)
    out._traced_at = x._vc.value
    return out


WRITE_INTO_UNTRACED = (
    "An in-place operation ({name}) writes a traced value into a tensor that is not traced. "
    "Inside torch.autograd.functional the function's tensors stand for values being "
    "differentiated; a tensor made outside the function, or a constant made inside it "
    "(torch.zeros(...)), cannot receive one in place. Build the result out of place instead "
    "(torch.stack, torch.cat, torch.where, y = y + ...), or start from a tensor computed "
    "from the inputs (e.g. x.clone()).")
WRITE_THROUGH_VIEW = (
    "An in-place operation ({name}) writes through a view of a traced tensor made by "
    "{view}, which cannot be replayed onto its base inside torch.autograd.functional (only "
    "views made by indexing can). Write into the base tensor itself, clone() the view "
    "first, or compute the result out of place.")


def _traced_inplace(op: Op, self: Tensor, others: Sequence, params: dict | None,
                    compute, check_overlap: bool = True) -> Tensor:
    """`inplace` when self or an operand is traced: the new value replaces self's data
    (functionalized); through an indexing view it is scattered into the base."""
    if _has_dual((self,) + tuple(others)):
        return FORWARD.inplace(op, self, others, params, compute, check_overlap)
    check_inplace(self)
    _watch(others)
    name = op.inplace_name
    if not is_traced(self):
        raise RuntimeError(WRITE_INTO_UNTRACED.format(name=name))
    args = (self,) + tuple(others)
    sdt = self._dtype
    dt = sdt if op.result == "keep" else _result_dtype(op, args)
    if dt is not None and (dt.category > sdt.category
                           or (dt.is_floating_point and sdt.category < 2)):
        raise RuntimeError(f"result type {_scalar_name(dt)} can't be cast to the desired output "
                           f"type {_scalar_name(sdt)}")
    raws = [traced_value(a) if isinstance(a, Tensor) else a for a in args]
    if op is COPY:
        new = raws[1]
    elif compute is not None and op.prim is None:
        new = compute(*raws)  # fill_, zero_: constants made from the shape
    else:
        try:
            new = op.prim(*raws, **params) if params else op.prim(*raws)
        except ValueError as exc:
            raise _shape_error(raws, exc) from None
    if type(new) is Array:
        new = new._value
    shape = tuple(self._data.shape)
    new_shape = tuple(np.shape(new)) if not isinstance(new, Array) else tuple(new.shape)
    if new_shape != shape:
        if np.broadcast_shapes(new_shape, shape) != shape:
            raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                               f"shape {list(np.broadcast_shapes(new_shape, shape))}")
        new = NP.broadcast_to(new, shape=shape)
    if isinstance(new, Tracer):
        if new.dtype != sdt.np:
            new = NP.astype(new, dtype=sdt.np)
    else:
        new = np.array(new, dtype=sdt.np)
    if self._base is not None:
        _write_through_view(self, new, name)
    self._data = new
    self._vc.value += 1
    if self._base is not None:
        self._traced_at = self._vc.value
    return self


def _write_through_view(view: Tensor, new, name: str) -> None:
    """Scatter `new`, the view's new value, into its base along its chain of index views."""
    base = view._base
    values = [traced_value(base)]
    templates = []
    for fn, params, _ in view._view.chain:
        if fn is not NP.getitem.impl:
            label = getattr(_VIEW_BY_IMPL.get(fn), "name", getattr(fn, "__name__", "a view op"))
            raise RuntimeError(WRITE_THROUGH_VIEW.format(name=name, view=label))
        templates.append(params["template"])
        values.append(NP.getitem(values[-1], template=params["template"]))
    for template, outer in zip(reversed(templates), reversed(values[:-1])):
        new = NP.index_set(outer, new, template=template)
    base._data = new
