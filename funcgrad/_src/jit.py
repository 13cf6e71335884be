"""funcgrad.jit: trace a function once per signature into a straight-line NumPy program, and
replay that program on new inputs with no tracing at all.

How it works. The first call with a new *signature* (the arguments' pytree structure, each
array's shape and dtype, each Python number's type, the static arguments' values) runs `f`
once on `JitTracer`s: every primitive it reaches, including those of the transforms running
inside `f` (grad's backward pass, jvp, vmap, hessian...), is computed on the concrete values
and recorded. The record becomes a program:

* dead code is removed (only what the outputs need is kept);
* shape-only values (``zeros_like``) and what is computed from constants alone are folded;
  small library calls become the NumPy C functions they end in (`_Program._lower_calls`);
* constants are folded: anything computed from constants alone was already computed while
  tracing, and a product with ones or a sum with zeros (a gradient seed) is dropped;
* NumPy ``out=`` buffers are reused: an elementwise result is written into an argument the
  program owns and no longer needs, or into a dead buffer of its shape, so elementwise chains
  are computed in place; a product ``(a * b) * c`` whose ``c`` is such a buffer is computed
  as ``c *= a; c *= b``;
* big buffers are released as soon as nothing reads them;
* ``sin(a)`` and ``cos(a)`` of one big float64 array are computed as ``cos(a)`` and
  ``tan(a) * cos(a)``, with NumPy's SIMD tan (`_Program._fuse_sin_cos`);
* a run of elementwise operations over one big shape, with the whole-array sums that end it,
  is computed block by block (`_Program._find_blocks`): each block passes through the whole
  run while it is in the cache, and values used only inside the run need one block-sized
  buffer each instead of a full array; a run's full result is reused by the next call once
  nothing holds it any more (`_reuse`).

The program is generated as Python source of one function (`Lowered.as_text` shows it) and
cached; later calls with the same signature run it directly.

Tracing uses the concrete values, but a traced value cannot decide Python control flow:
``if x > 0`` on a traced ``x`` raises `ConcretizationTypeError` naming ``static_argnums``, as
JAX does, instead of baking one branch into the program. Python numbers in the arguments are
traced too, as JAX's weakly-typed values: the signature holds their Python type, not their
value (``f(1.0)`` and ``f(2.0)`` share one program), and the program receives the number
itself, so NumPy's weak promotion applies as in eager mode (a float32 array times a Python
float stays float32). ``static_argnums`` makes a number part of the signature by value.

Structured control flow: ``lax.cond`` on a traced predicate runs both branches and selects
(one program serves both); ``lax.fori_loop`` and ``scan`` are unrolled into the program;
``lax.while_loop`` traces its condition and body once each into programs of their own and
loops over them (`JitTrace.process_while`).

Under another transform (``grad(jit(f))``, ``vmap(jit(f))``) the jitted function runs ``f``
itself, so that transform sees every operation and every custom rule; ``jit(grad(f))`` is the
fast order. Under `make_tape` the cached program is replayed operation by operation, so the
tape shows exactly what jit runs.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import operator
import sys
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from . import simd
from .core import Array, FuncgradError, Primitive, Trace, Tracer, raw, wrap
from .program import ProgramTrace
from .tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

__all__ = ["jit", "ConcretizationTypeError", "TracerBoolConversionError",
           "NonConcreteBooleanIndexError", "Lowered", "register_lowering"]


class ConcretizationTypeError(FuncgradError, TypeError):
    """A value traced by `jit` was needed as a concrete Python value (JAX's error class of
    the same name): ``bool``, ``int``, ``float`` or ``np.asarray`` of it, a Python ``if`` on
    it, or an output shape that depends on its values.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> def relu_or_zero(x, positive):
    ...     return fnp.maximum(x, 0.0) if positive else x * 0.0
    >>> fg.jit(relu_or_zero, static_argnums=1)(fnp.array([-1.0, 2.0]), True).tolist()
    [0.0, 2.0]
    >>> try:
    ...     fg.jit(lambda x: fnp.ones(int(x.sum())))(fnp.array([1.0]))
    ... except fg.FuncgradError as err:
    ...     print(type(err).__name__)
    ConcretizationTypeError
    """


def _concretization_error(what: str) -> ConcretizationTypeError:
    return ConcretizationTypeError(
        f"jit: {what} of a traced array: its value is not known when jit traces the function, "
        "only its shape and dtype. If the value decides Python control flow (if, while, "
        "int(), a shape), mark that argument static with jit(f, static_argnums=...) or "
        "static_argnames=...; for a value-dependent choice between arrays use "
        "funcgrad.numpy.where; or call the function without jit"
    )


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a value traced by `jit`: a Python ``if``, ``while``, ``and``/``or`` on
    it (JAX's error class of the same name, a `ConcretizationTypeError`).

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> try:
    ...     fg.jit(lambda x: x if x.sum() > 0 else -x)(fnp.ones(3))
    ... except fg.ConcretizationTypeError as err:
    ...     print(type(err).__name__, str(err).splitlines()[0])
    TracerBoolConversionError Attempted boolean conversion of traced array with shape bool[].
    """


def _abstract_text(dtype, shape) -> str:
    """JAX's way of naming a traced array's type: ``float32[3,4]``, ``bool[]``."""
    return f"{np.dtype(dtype).name}[{','.join(map(str, shape))}]"


class NonConcreteBooleanIndexError(FuncgradError, IndexError):
    """A traced boolean array used as an index under `jit` (JAX's error class of the same
    name, an ``IndexError``): the result's shape would depend on the mask's values, which
    are not known when jit traces the function.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> x = fnp.array([1.0, fnp.nan, 3.0])
    >>> try:
    ...     fg.jit(lambda x: fnp.sum(x[~fnp.isnan(x)]))(x)
    ... except IndexError as err:
    ...     print(type(err).__name__, str(err).splitlines()[0])
    NonConcreteBooleanIndexError Array boolean indices must be concrete; got bool[3]
    >>> fg.jit(lambda x: fnp.nansum(x))(x).item()  # the same sum, with a shape known ahead
    4.0
    >>> fg.jit(lambda x: fnp.sum(fnp.where(fnp.isnan(x), 0.0, x)))(x).item()
    4.0
    """


def _boolean_index_error(shape: tuple) -> NonConcreteBooleanIndexError:
    return NonConcreteBooleanIndexError(
        f"Array boolean indices must be concrete; got {_abstract_text(np.bool_, shape)}\n\n"
        "Under jit a traced boolean mask cannot select elements: the result's shape would "
        "depend on the mask's values, which are not known when jit traces the function. Keep "
        "the shape fixed instead: funcgrad.numpy.where(mask, x, 0.0) (then reduce it), a "
        "reduction that skips NaN (funcgrad.numpy.nansum, nanmean...), or call the function "
        "without jit")


class _Abstract:
    """What a `JitTracer` shows the code it passes through: shape and dtype, no value.

    Transforms nested inside jit reach their bottom value through ``_value`` chains; this is
    that bottom, so asking it for a concrete value (bool, int, comparison, np.asarray) raises
    `ConcretizationTypeError` whichever transform asks."""

    __slots__ = ("value", "shape", "dtype")

    def __init__(self, value) -> None:
        self.value = value
        self.shape = np.shape(value)
        self.dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def _refuse(self, *args, **kwargs):
        raise _concretization_error("the concrete value")

    def __bool__(self):
        raise TracerBoolConversionError(
            "Attempted boolean conversion of traced array with shape "
            f"{_abstract_text(self.dtype, self.shape)}.\n"
            + str(_concretization_error("bool() (a Python if/while/and/or on an array)")))

    def __int__(self):
        raise _concretization_error("int()")

    def __index__(self):
        raise _concretization_error("use as an index or size")

    def __float__(self):
        raise _concretization_error("float()")

    def __array__(self, dtype=None, copy=None):
        raise _concretization_error("np.asarray()")

    __complex__ = __len__ = __iter__ = __getitem__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse  # type: ignore[assignment]
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __neg__ = __abs__ = __pow__ = __matmul__ = _refuse
    __array_ufunc__ = _refuse  # np.shape and the like may still read .shape
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Abstract<{self.dtype}{list(self.shape)}>"


class JitTracer(Tracer):
    """A value inside a function being traced by `jit`: variable ``_var`` of its program."""

    __slots__ = ("_var",)

    def __init__(self, trace: "JitTrace", value: Any, var: int) -> None:
        self._trace = trace
        self._value = _Abstract(value)
        self._var = var

    def __array__(self, dtype=None, copy=None):
        raise _concretization_error("np.asarray()")

    def __float__(self):
        raise _concretization_error("float()")

    def __complex__(self):
        raise _concretization_error("complex()")

    def item(self, *args):
        raise _concretization_error(".item()")

    def __iter__(self):
        if not self.shape:  # a traced number where a shape or a sequence is expected
            raise _concretization_error("iteration (as a shape or a sequence)")
        return super().__iter__()

    def tolist(self):
        raise _concretization_error(".tolist()")


class _Foreign(Exception):
    """A tracer of another transform reached the traced function through a closure: jit
    cannot make it an input of the program, so the call runs the function itself."""


#: Queries answered from shape and dtype alone: under jit they are static Python values.
_STATIC_QUERIES = frozenset({"shape", "ndim", "size", "isscalar", "result_type",
                             "iscomplexobj", "isrealobj"})
#: Functions whose output shape depends on their input's values.
_VALUE_SHAPED = frozenset({"nonzero", "argwhere", "flatnonzero", "unique", "bincount",
                           "histogram"})


class _Var:
    """One value of the program: an input, a constant, or an operation's result."""

    __slots__ = ("kind", "value", "index", "shape", "dtype", "is_array", "owned", "roots")

    def __init__(self, kind: str, value: Any, index: int = -1, owned: bool = False) -> None:
        self.kind = kind            # "in", "const" or "op"
        self.value = value          # the concrete value seen while tracing
        self.index = index          # input position
        self.is_array = type(value) is np.ndarray
        self.shape = np.shape(value)
        self.dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)
        self.owned = owned          # a fresh array nobody else can see
        self.roots: tuple = ()      # the owned variables whose memory this one may show


class _Op:
    __slots__ = ("prim", "params", "args", "outs", "ufunc", "chain", "out_buffer", "fn",
                 "positional")

    def __init__(self, prim: Primitive, params: dict, args: list, outs: list) -> None:
        self.prim = prim
        self.params = params
        self.args = args            # variable numbers
        self.outs = outs            # variable numbers (several for multiple_results)
        self.ufunc = _ufunc_of(prim.impl)
        self.chain: list = []       # further operands multiplied in place (see _reassociate)
        self.out_buffer = None      # the variable whose buffer receives the result
        self.fn = prim.impl         # what the program calls (a fused op calls another)
        self.positional = False     # params passed by position, in order (`_lower_calls`)


_OPERATOR_UFUNCS = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
                    operator.truediv: np.true_divide, operator.neg: np.negative,
                    operator.pow: np.power, operator.matmul: np.matmul}


def _ufunc_of(impl):
    if isinstance(impl, np.ufunc):
        return impl
    # a forward that computes a ufunc's values its own way names that ufunc (maximum's);
    # not once debug_nans wraps it (`core.checked_forwards`): the check must run
    ufunc = getattr(impl, "ufunc", None)
    if isinstance(ufunc, np.ufunc) and not hasattr(impl, "unchecked"):
        return ufunc
    try:
        return _OPERATOR_UFUNCS.get(impl)
    except TypeError:  # an unhashable callable
        return None


class JitTrace(Trace):
    """Records every primitive applied to its tracers, computing it on the concrete values."""

    __slots__ = ("vars", "ops", "seen", "consts", "parent", "captures", "n_inputs")
    name = "jit"

    def __init__(self, parent: "JitTrace | None" = None) -> None:
        super().__init__()
        self.vars: list[_Var] = []
        self.ops: list[_Op] = []
        self.seen: set = set()      # ids of every array the program can see, for ownership
        self.consts: dict = {}      # id(constant) -> variable, so a constant is one variable
        self.parent = parent        # the trace of the enclosing program (a loop's body's)
        self.captures: dict = {}    # an enclosing program's tracer -> our input variable
        self.n_inputs = 0

    def _encloses(self, trace) -> bool:
        t = self.parent
        while t is not None:
            if t is trace:
                return True
            t = t.parent
        return False

    def capture(self, tracer: JitTracer) -> int:
        """An enclosing program's value read here (a loop body's closure): one more input."""
        key = id(tracer)
        found = self.captures.get(key)
        if found is None:
            self.input(tracer._value.value, self.n_inputs)
            found = self.captures[key] = (len(self.vars) - 1, tracer)
        return found[0]

    def input(self, value, index: int) -> JitTracer:
        self.vars.append(_Var("in", value, index))
        self.n_inputs = max(self.n_inputs, index + 1)
        self._see(value)
        return JitTracer(self, value, len(self.vars) - 1)

    def _see(self, value) -> None:
        self.seen.add(id(value))
        base = getattr(value, "base", None)
        while base is not None:
            self.seen.add(id(base))
            base = getattr(base, "base", None)

    def const(self, value) -> int:
        var = self.consts.get(id(value))
        if var is not None and self.vars[var].value is value:
            return var
        self.vars.append(_Var("const", value))
        self._see(value)
        self.consts[id(value)] = len(self.vars) - 1
        return len(self.vars) - 1

    def process(self, prim: Primitive, args: Sequence[Any], params: dict):
        values, refs = [], []
        traced = False
        for a in args:
            if isinstance(a, JitTracer) and a._trace is self:
                values.append(a._value.value)
                refs.append(a._var)
                traced = True
            elif isinstance(a, JitTracer) and self._encloses(a._trace):
                values.append(a._value.value)
                refs.append(self.capture(a))
                traced = True
            elif isinstance(a, Tracer):
                raise _Foreign
            else:
                v = raw(a)
                values.append(v)
                refs.append(None)
        if prim.name in _STATIC_QUERIES and not prim.differentiable:
            return prim.impl(*values, **params)
        if prim.name in _VALUE_SHAPED:
            raise _concretization_error(f"{prim.name}, whose output shape depends on the values,")
        if "template" in params:
            for r in refs[1:]:
                if r is not None and self.vars[r].dtype == np.bool_:
                    raise _boolean_index_error(self.vars[r].shape)
        out = prim.impl(*values, **params)
        refs = [self.const(v) if r is None else r for r, v in zip(refs, values)]
        outs = out if prim.multiple_results else (out,)
        first = len(self.vars)
        for o in outs:
            owned = (type(o) is np.ndarray and o.base is None and id(o) not in self.seen
                     and not isinstance(prim, _LoopPrimitive))  # (a loop may not run at all)
            var = _Var("op", o, owned=owned)
            if not owned and type(o) is np.ndarray:
                # a view or an alias: it shows the memory of any array argument it may share
                var.roots = tuple(r for r, v in zip(refs, values)
                                  if type(v) is np.ndarray and np.may_share_memory(o, v))
            self.vars.append(var)
            self._see(o)
        self.ops.append(_Op(prim, params, refs, list(range(first, first + len(outs)))))
        if not traced:  # (cannot happen: a primitive reaches its trace through a tracer)
            return out
        tracers = [JitTracer(self, o, first + k) for k, o in enumerate(outs)]
        return tuple(tracers) if prim.multiple_results else tracers[0]

    def _value_ref(self, leaf) -> int:
        """The variable of an output leaf of a sub-program traced by this trace."""
        if isinstance(leaf, JitTracer) and leaf._trace is self:
            return leaf._var
        if isinstance(leaf, JitTracer) and self._encloses(leaf._trace):
            return self.capture(leaf)
        if isinstance(leaf, Tracer):
            raise _Foreign
        return self.const(raw(leaf))

    def process_while(self, cond_fun: Callable, body_fun: Callable, init_val: Any):
        """`lax.while_loop` on traced values: the condition and the body are traced once
        each, into programs of their own, and the loop runs them (JAX compiles it alike)."""
        leaves, treedef = tree_flatten(init_val)
        start = [leaf._value.value if isinstance(leaf, JitTracer) else np.asarray(raw(leaf))
                 for leaf in leaves]

        def sub_program(fn, what):
            child = JitTrace(parent=self)
            tracers = [child.input(v, k) for k, v in enumerate(start)]
            try:
                out = fn(tree_unflatten(treedef, tracers))
            finally:
                child.alive = False
            return child, out

        cond_trace, pred = sub_program(cond_fun, "cond_fun")
        pred_value = pred._value.value if isinstance(pred, JitTracer) else raw(pred)
        if np.shape(pred_value) != () or np.result_type(pred_value) != np.bool_:
            raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                            f"[{np.result_type(pred_value)}{list(np.shape(pred_value))}]. "
                            "Reduce it (fnp.all, fnp.any) or compare (x > 0) to get one boolean")
        body_trace, new = sub_program(body_fun, "body_fun")
        new_leaves, new_def = tree_flatten(new)
        if new_def != treedef:
            raise TypeError(f"while_loop body function carry input and carry output must have "
                            f"the same pytree structure, but they differ: the carry input is "
                            f"{treedef} and the carry output is {new_def}")
        for old, leaf in zip(start, new_leaves):
            value = leaf._value.value if isinstance(leaf, JitTracer) else raw(leaf)
            if np.shape(value) != np.shape(old) or np.result_type(value) != old.dtype:
                raise TypeError(
                    "while_loop body function carry input and carry output must have equal "
                    f"types, but the carry input is {old.dtype}{list(np.shape(old))} and the "
                    f"carry output is {np.result_type(value)}{list(np.shape(value))}. Cast "
                    "the initial value (or the body's result) so that they match")
        cond_prog = _Program(cond_trace, [cond_trace._value_ref(pred)], cond_trace.n_inputs)
        body_prog = _Program(body_trace, [body_trace._value_ref(v) for v in new_leaves],
                             body_trace.n_inputs)
        n = len(start)
        cond_caps = [t for _, t in cond_trace.captures.values()]
        body_caps = [t for _, t in body_trace.captures.values()]
        n_cond = len(cond_caps)
        cond_run, body_run = cond_prog.run, body_prog.run

        def loop(*args):
            carry = args[:n]
            cond_extra, body_extra = args[n:n + n_cond], args[n + n_cond:]
            while cond_run(*carry, *cond_extra)[0]:
                carry = body_run(*carry, *body_extra)
            return tuple(carry)

        prim = _LoopPrimitive("while_loop", loop, nargs=-1, multiple_results=True,
                              differentiable=False)
        prim.programs = (cond_prog, body_prog)
        outs = self.process(prim, list(leaves) + cond_caps + body_caps, {})
        return tree_unflatten(treedef, [wrap(o) for o in outs])


class _LoopPrimitive(Primitive):
    """A loop recorded by jit: its impl runs the compiled condition and body."""

    __slots__ = ("programs",)


# --- the program --------------------------------------------------------------------------
#: `_Program._fuse_sin_cos` computes sin and cos through tan where `simd.FAST_TAN`, for
#: arrays of at least this many values (below, the extra call costs more)
_SIN_COS_MIN = 256
_TAN = Primitive("tan", np.tan, differentiable=False)
_MULTIPLY = Primitive("multiply", np.multiply, nargs=2, differentiable=False)
_BIG = 1 << 16  # bytes: buffers at least this big are released as soon as they are dead
#: An elementwise region runs block by block (`_Program._find_blocks`), each block this many
#: bytes of its widest value: a block's few buffers stay in a core's L2 cache.
_BLOCK_BYTES = 1 << 17
#: ... when it spans at least this many blocks (below that the loop's overhead is not repaid).
_BLOCK_MIN = 4


# --- what a primitive's declaration tells a recorded program --------------------------------
# Registered beside each primitive's declaration (as JAX registers a lowering), so this module
# knows no NumPy function by name.
#: primitive -> ``lower(x, **params)`` for an array argument `x` (its shape and dtype):
#: ``(fn, params, positional)``, the plain NumPy call giving the same result that a program
#: makes instead of the primitive's implementation, or None (keep the implementation)
_LOWERINGS: dict = {}
#: primitives whose result depends on their argument's shape and dtype only (``zeros_like``)
_SHAPE_ONLY: set = set()
#: primitives that broadcast their argument to a shape (``broadcast_to``)
_BROADCASTS: set = set()


def register_lowering(prim: Primitive, lower: Callable | None = None, *,
                      shape_only: bool = False, broadcasts: bool = False) -> None:
    """Tell `jit` how a program may run `prim` more cheaply: `lower` (see `_LOWERINGS`) when
    the implementation's Python wrapper costs more than its work on small arrays;
    `shape_only` when the result depends on the argument's shape and dtype alone (a
    constant of the signature); `broadcasts` when it is a broadcast to a shape, which a
    ufunc reading it can skip."""
    if lower is not None:
        _LOWERINGS[prim] = lower
    if shape_only:
        _SHAPE_ONLY.add(prim)
    if broadcasts:
        _BROADCASTS.add(prim)


class _Program:
    """A traced function made straight-line: ``run(*inputs) -> outputs`` plus its source."""

    def __init__(self, trace: JitTrace, out_vars: list, n_inputs: int) -> None:
        self.vars = trace.vars
        self.ops = trace.ops
        self.out_vars = out_vars
        self.n_inputs = n_inputs
        self._simplify()
        self._eliminate_dead_code()
        # make_tape replays the program primitive by primitive: keep it before fusing
        self.replay_ops = [(op.prim, op.params, list(op.args), list(op.outs)) for op in self.ops]
        self._uniform_constants()
        self._fold_constants()
        self._skip_broadcasts()
        self._fuse_sin_cos()
        self._fuse_dot()
        self._reassociate()
        self._array_scalars()
        self._find_blocks()
        self._plan_buffers()
        self._lower_calls()
        self.source, self.run = self._generate()

    # -- passes ------------------------------------------------------------------------
    def _simplify(self) -> None:
        """Products with ones and sums with zeros (constants) become their other operand."""
        alias: dict = {}
        kept = []
        for op in self.ops:
            op.args = [alias.get(a, a) for a in op.args]
            other = self._identity_operand(op)
            if other is not None:
                alias[op.outs[0]] = other
                continue
            kept.append(op)
        self.ops = kept
        self.out_vars = [alias.get(v, v) if v is not None else None for v in self.out_vars]

    #: ufunc -> (its neutral operand, the argument positions where it is neutral)
    _NEUTRAL = {np.multiply: (1, (0, 1)), np.add: (0, (0, 1)), np.power: (1, (1,)),
                np.subtract: (0, (1,)), np.true_divide: (1, (1,))}

    def _identity_operand(self, op: _Op):
        if op.ufunc not in self._NEUTRAL or op.params or len(op.args) != 2:
            return None
        neutral, positions = self._NEUTRAL[op.ufunc]
        out = self.vars[op.outs[0]]
        for k in positions:
            const, other = self.vars[op.args[k]], self.vars[op.args[1 - k]]
            if const.kind != "const" or other.kind == "const":
                continue
            if (other.shape == out.shape and other.dtype == out.dtype
                    and type(other.value) is type(out.value) and np.size(const.value) > 0
                    and np.result_type(other.value, const.value) == out.dtype
                    and bool(np.all(np.asarray(const.value) == neutral))):
                return op.args[1 - k]
        return None

    def _uniform_constants(self) -> None:
        """A constant array of one repeated value (the broadcast cotangent of a mean, say)
        given to an elementwise operation whose other operands already have the result's
        shape becomes a 0-d array of that value and dtype: the same results (NumPy promotes
        by dtype, whatever the ndim), without reading, or keeping, a full array of it."""
        folded: dict = {}
        for op in self.ops:
            uf = op.ufunc
            if uf is None or uf.signature is not None or op.params or len(op.outs) != 1:
                continue
            out = self.vars[op.outs[0]]
            for k, a in enumerate(op.args):
                var = self.vars[a]
                if var.kind != "const" or not var.is_array or var.value.size < 2:
                    continue
                others = [np.shape(self.vars[b].value) for j, b in enumerate(op.args) if j != k]
                try:
                    if np.broadcast_shapes(*others) != out.shape:
                        continue
                except ValueError:
                    continue
                if a not in folded:
                    flat = var.value.reshape(-1)
                    first = flat[0]
                    folded[a] = None
                    if bool(np.all(flat == first)):  # (never true with a NaN)
                        self.vars.append(_Var("const", np.asarray(first, dtype=var.dtype)))
                        folded[a] = len(self.vars) - 1
                if folded[a] is not None:
                    op.args[k] = folded[a]

    def _fold_constants(self) -> None:
        """``zeros_like(x)`` and ``ones_like(x)`` depend on x's shape and dtype only, fixed
        by the signature: they are constants, and so is what is computed from constants
        alone (max's gradient scatters a constant cotangent into zeros): each is the value
        tracing computed. (An output stays computed: the caller may write into it.)"""
        outs = set(self.out_vars)
        kept = []
        for op in self.ops:
            out = op.outs[0]
            if (len(op.outs) == 1 and out not in outs and not isinstance(op.prim, _LoopPrimitive)
                    and (op.prim in _SHAPE_ONLY and op.fn is op.prim.impl
                         or all(self.vars[a].kind == "const" for a in op.args))):
                var = self.vars[out]
                var.kind, var.owned, var.roots = "const", False, ()
                continue
            kept.append(op)
        self.ops = kept

    def _skip_broadcasts(self) -> None:
        """``b = broadcast_to(a, shape)`` read only by ufuncs whose results have that shape
        anyway (a cotangent spread over a reduced axis): they read `a` itself, which NumPy
        broadcasts alike (the same values, without the call that makes the view)."""
        readers: dict = {}
        for op in self.ops:
            for a in set(op.args):
                readers.setdefault(a, []).append(op)
        outs = set(self.out_vars)
        changed = False
        for op in self.ops:
            if (op.fn is not op.prim.impl or op.prim not in _BROADCASTS
                    or len(op.args) != 1 or not self.vars[op.args[0]].is_array):
                continue
            a, b = op.args[0], op.outs[0]
            if b in outs or not all(self._broadcasts_alike(r, b, a) for r in readers.get(b, ())):
                continue
            for r in readers.get(b, ()):
                r.args = [a if x == b else x for x in r.args]
                readers.setdefault(a, []).append(r)
            changed = True
        if changed:
            self._eliminate_dead_code()

    def _broadcasts_alike(self, op: _Op, b: int, a: int) -> bool:
        """Whether ufunc `op` gives a result of the same shape reading `a` for `b`."""
        uf = op.ufunc
        if uf is None or uf.signature is not None or op.params or len(op.outs) != 1:
            return False
        shapes = [self.vars[a if x == b else x].shape for x in op.args]
        try:
            return np.broadcast_shapes(*shapes) == self.vars[op.outs[0]].shape
        except ValueError:
            return False

    def _fuse_sin_cos(self) -> None:
        """``sin(a)`` and ``cos(a)`` of one big float64 array (a function and its gradient)
        become ``c = cos(a); s = tan(a) * c``: NumPy computes float64 sin and cos one value
        at a time (the C library's), tan with SIMD, about ten times faster. Within 2 ulp of
        the C library's sin (0.5 ulp), over any range of arguments; never a special case,
        as float64 cos is never 0 and tan never infinite at a finite argument."""
        if not simd.FAST_TAN:
            return
        sin_of, cos_of = {}, {}
        for i, op in enumerate(self.ops):
            if op.params or op.chain or len(op.args) != 1:
                continue
            a = self.vars[op.args[0]]
            if (a.is_array and a.dtype == np.float64 and a.value.size >= _SIN_COS_MIN
                    and self.vars[op.outs[0]].dtype == np.float64):
                if op.ufunc is np.sin:
                    sin_of.setdefault(op.args[0], i)
                elif op.ufunc is np.cos:
                    cos_of.setdefault(op.args[0], i)
        pairs = {min(i, cos_of[a]): (i, cos_of[a]) for a, i in sin_of.items() if a in cos_of}
        if not pairs:
            return
        dropped = {j for pair in pairs.values() for j in pair}
        ops = []
        for i, op in enumerate(self.ops):
            if i in pairs:
                sin_op, cos_op = (self.ops[k] for k in pairs[i])
                a, s, c = sin_op.args[0], sin_op.outs[0], cos_op.outs[0]
                self.vars.append(_Var("op", np.tan(self.vars[a].value), owned=True))
                t = len(self.vars) - 1
                ops += [cos_op, _Op(_TAN, {}, [a], [t]), _Op(_MULTIPLY, {}, [t, c], [s])]
            elif i not in dropped:
                ops.append(op)
        self.ops = ops

    def _eliminate_dead_code(self) -> None:
        needed = {v for v in self.out_vars if v is not None}
        kept = []
        for op in reversed(self.ops):
            if any(o in needed for o in op.outs):
                kept.append(op)
                needed.update(op.args)
        kept.reverse()
        self.ops = kept

    def _last_uses(self) -> dict:
        last = {}
        for i, op in enumerate(self.ops):
            for a in itertools.chain(op.args, op.chain):
                last[a] = i
        end = len(self.ops)
        for v in self.out_vars:
            if v is not None:
                last[v] = end
        return last

    def _producers(self) -> dict:
        return {o: i for i, op in enumerate(self.ops) for o in op.outs}

    def _fuse_dot(self) -> None:
        """``sum(a * b)`` over whole real arrays of one shape becomes ``vdot(a, b)``: one pass,
        no temporary (the sum is then BLAS's, equal to NumPy's pairwise sum to rounding)."""
        uses: dict = {}
        for op in self.ops:
            for a in op.args:
                uses[a] = uses.get(a, 0) + 1
        for v in self.out_vars:
            if v is not None:
                uses[v] = uses.get(v, 0) + 1
        producer = self._producers()
        removed = set()
        for op in self.ops:
            if (op.prim.name != "sum" or len(op.args) != 1
                    or op.params.get("axis", None) is not None or op.params.get("keepdims")):
                continue
            v = op.args[0]
            pv = producer.get(v)
            if pv is None or uses.get(v) != 1:
                continue
            inner = self.ops[pv]
            if inner.ufunc is not np.multiply or inner.params or len(inner.args) != 2:
                continue
            a, b = (self.vars[x] for x in inner.args)
            out = self.vars[op.outs[0]]
            if not (a.is_array and b.is_array and a.shape == b.shape and a.shape
                    and a.dtype == b.dtype == self.vars[v].dtype == out.dtype
                    and a.dtype.kind == "f"):
                continue
            removed.add(pv)
            op.args = list(inner.args)
            op.params = {}
            op.fn = np.vdot
        self.ops = [op for i, op in enumerate(self.ops) if i not in removed]

    def _reassociate(self) -> None:
        """``w = (a * b) * c`` where ``c`` is a buffer dying at ``w`` and ``a * b`` is used
        only there: compute ``c *= a; c *= b`` in c's buffer instead of a fresh one for a*b."""
        uses: dict = {}
        for op in self.ops:
            for a in op.args:
                uses[a] = uses.get(a, 0) + 1
        for v in self.out_vars:
            if v is not None:
                uses[v] = uses.get(v, 0) + 1
        producer = self._producers()
        last = self._last_uses()
        removed = set()
        for i, op in enumerate(self.ops):
            if op.ufunc is not np.multiply or op.params or len(op.args) != 2 or op.chain:
                continue
            out = self.vars[op.outs[0]]
            if not out.is_array:
                continue
            for k in (0, 1):
                v, c = op.args[k], op.args[1 - k]
                pv = producer.get(v)
                cv = self.vars[c]
                if (pv is None or pv in removed or uses.get(v) != 1 or not cv.owned
                        or cv.shape != out.shape or cv.dtype != out.dtype or last.get(c) != i):
                    continue
                inner = self.ops[pv]
                if inner.ufunc is not np.multiply or inner.params or inner.chain:
                    continue
                a, b = inner.args
                if c in (a, b) or any(c in self._shown(x) for x in (a, b)):
                    continue  # writing c would change a or b before they are read
                if not all(self.vars[x].dtype == out.dtype and (
                        self.vars[x].kind != "op" or last.get(x, -1) >= i) for x in (a, b)):
                    continue
                # any owned buffer a or b could have been overwritten at `inner` stays alive
                # anyway (last use >= i), so nothing grows
                removed.add(pv)
                op.args = [c, a]
                op.chain = [b]
                break
        self.ops = [op for i, op in enumerate(self.ops) if i not in removed]

    def _shown(self, v) -> set:
        """The owned buffers whose memory variable `v` may show."""
        seen, todo = set(), [v]
        while todo:
            for r in self.vars[todo.pop()].roots:
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
        return seen

    def _array_scalars(self) -> None:
        """A Python number beside an array of the result's dtype becomes a 0-d array of that
        dtype: the same value NumPy's weak promotion would make of it, converted once instead
        of at every call (half the cost of a small elementwise operation)."""
        converted: dict = {}
        for op in self.ops:
            if op.ufunc is None or op.ufunc.signature is not None or op.params:
                continue
            out = self.vars[op.outs[0]]
            if not out.is_array or out.dtype.kind not in "fc":
                continue
            if not any(self.vars[a].is_array and self.vars[a].dtype == out.dtype for a in op.args):
                continue
            for k, a in enumerate(op.args):
                var = self.vars[a]
                if var.kind == "const" and type(var.value) in (int, float):
                    key = (a, out.dtype)
                    if key not in converted:
                        self.vars.append(_Var("const", np.asarray(var.value, dtype=out.dtype)))
                        converted[key] = len(self.vars) - 1
                    op.args[k] = converted[key]

    def _find_blocks(self) -> None:
        """Runs of elementwise operations over arrays of one big shape, ending in whole-array
        sums (or dot products) of such arrays, are computed block by block: each block of
        ``_BLOCK_BYTES`` runs the whole run while its values are in the cache, the values used
        only inside the run live in one small buffer each instead of a full array, and a sum
        adds up its blocks' sums (the same value up to rounding: the order of summation
        differs, as with ``vdot``). This is the loop fusion a compiler does; a person writing
        NumPy makes one pass over memory per operation."""
        self.blocks: list = []   # (first op, end op, shape, elements per block)
        ops, vars_ = self.ops, self.vars
        last = self._last_uses()
        i = 0
        while i < len(ops):
            shape = self._block_shape(ops[i])
            if shape is None:
                i += 1
                continue
            made, reduced = set(), set()
            j = i
            while j < len(ops) and self._fits_block(ops[j], shape, reduced):
                (reduced if vars_[ops[j].outs[0]].shape == () else made).update(ops[j].outs)
                j += 1
            if j == i:
                i += 1
                continue
            widest = max(vars_[v].dtype.itemsize for op in ops[i:j]
                         for v in itertools.chain(op.args, op.chain, op.outs)
                         if vars_[v].shape == shape)
            per_block = max(1, _BLOCK_BYTES // widest)
            size = int(np.prod(shape, dtype=np.int64))
            # worth it when values never leave the run (each saves a pass over memory; one
            # alone would mostly be computed in place in a dying buffer anyway)
            if size >= _BLOCK_MIN * per_block and sum(last.get(v, -1) < j for v in made) >= 2:
                self.blocks.append((i, j, shape, per_block))
                i = j
            else:
                i += 1

    def _block_shape(self, op: _Op):
        """The shape an elementwise op (or whole-array sum) runs over, if it may be blocked."""
        out = self.vars[op.outs[0]]
        if out.shape == ():
            arg = self.vars[op.args[0]]
            return arg.shape if arg.is_array and arg.shape != () else None
        return out.shape if out.is_array else None

    def _fits_block(self, op: _Op, shape: tuple, reduced: set) -> bool:
        vars_ = self.vars
        operands = list(itertools.chain(op.args, op.chain))
        if len(op.outs) != 1 or any(a in reduced for a in operands):
            return False  # (a sum of the run is known only after its last block)
        out = vars_[op.outs[0]]
        if out.shape == ():  # a whole-array sum, or the dot product _fuse_dot made of one
            is_sum = (op.prim.name in ("sum", "mean") and len(op.args) == 1
                      and op.fn is op.prim.impl and set(op.params) <= {"axis", "keepdims"}
                      and op.params.get("axis") is None and not op.params.get("keepdims"))
            is_dot = op.fn is np.vdot and len(op.args) == 2
            if not (is_sum or is_dot) or op.chain:
                return False
            dtype = vars_[op.args[0]].dtype
            if not (dtype.kind in "fc" and dtype.itemsize >= 4
                    or dtype.kind in "iub" and op.prim.name != "mean"):
                return False  # (half precision sums keep NumPy's one pairwise sum)
            return all(vars_[a].is_array and vars_[a].shape == shape for a in op.args)
        uf = op.ufunc
        if (uf is None or uf.signature is not None or uf.nout != 1 or op.params
                or not out.is_array or out.shape != shape or out.dtype.kind == "O"):
            return False
        return all(vars_[a].shape == () or (vars_[a].is_array and vars_[a].shape == shape)
                   for a in operands)

    def _plan_buffers(self) -> None:
        """Choose for each elementwise result a buffer it may overwrite: an argument the
        program owns that nothing reads afterwards, else a dead buffer of its shape."""
        last = self._last_uses()
        vars_ = self.vars
        showing: dict = {}  # owned buffer -> the views of it (and views of those)
        for n, var in enumerate(vars_):
            for r in var.roots:
                showing.setdefault(r, []).append(n)

        def life(r):  # the last op reading the buffer of `r`, through any view of it
            m = last.get(r, -1)
            for s in showing.get(r, ()):
                m = max(m, life(s))
            return m

        # blocked runs place their values themselves (_generate_block): the values they make
        # have no full array unless read after the run, where they are fresh arrays
        in_block = {i for start, end, _, _ in self.blocks for i in range(start, end)}
        # buffers already handed on (to a result, or to the free list), or never full arrays
        taken = {o for start, end, _, _ in self.blocks for op in self.ops[start:end]
                 for o in op.outs if last.get(o, -1) < end}
        free: list = []   # dead owned buffers, usable as out= by a later result
        for i, op in enumerate(self.ops):
            out = vars_[op.outs[0]]
            uf = op.ufunc
            if (i not in in_block and uf is not None and uf.nout == 1 and len(op.outs) == 1 and out.is_array
                    and out.shape != () and not op.params
                    and (uf.signature is None or uf is np.matmul)):
                chosen = None
                if uf.signature is None:
                    for a in op.args:
                        av = vars_[a]
                        if (av.owned and av.kind == "op" and a not in taken
                                and av.shape == out.shape and av.dtype == out.dtype
                                and life(a) == i):
                            chosen = a
                            break
                if chosen is None:
                    for k, fr in enumerate(free):
                        if vars_[fr].shape == out.shape and vars_[fr].dtype == out.dtype:
                            chosen = free.pop(k)
                            break
                if chosen is not None:
                    op.out_buffer = chosen
                    taken.add(chosen)
                    out.owned = True
            for a in set(itertools.chain(op.args, op.chain)):
                av = vars_[a]
                if (av.owned and av.kind == "op" and a not in taken and a != op.out_buffer
                        and life(a) == i):
                    free.append(a)
                    taken.add(a)

    def _lower_calls(self) -> None:
        """funcgrad.numpy functions whose Python wrappers cost more than their work on small
        arrays become the NumPy C function they end in, called on an ndarray with the same
        arguments (the same results): ``np.sum`` and ``np.max`` are their ufunc's ``reduce``,
        ``np.reshape`` and ``np.swapaxes`` ndarray methods, a basic index a constant one,
        a sum over broadcast axes one ``np.add.reduce``. (Blocked runs compute their own.)"""
        in_block = {i for start, end, _, _ in self.blocks for i in range(start, end)}
        for i, op in enumerate(self.ops):
            lower = _LOWERINGS.get(op.prim)
            if (i not in in_block and lower is not None and op.fn is op.prim.impl
                    and len(op.args) == 1 and self.vars[op.args[0]].is_array
                    and self.vars[op.args[0]].shape != ()):  # (a 0-d value may be a scalar)
                lowered = lower(self.vars[op.args[0]], **op.params)
                if lowered is not None:
                    op.fn, op.params, op.positional = lowered

    # -- code generation ---------------------------------------------------------------
    def _generate(self):
        names: dict = {}
        env: dict = {}
        lines = []
        params_in = []
        for n, var in enumerate(self.vars):
            if var.kind == "in":
                names[n] = f"x{var.index}"
        for k in range(self.n_inputs):
            params_in.append(f"x{k}")
        used = set()
        for op in self.ops:
            used.update(op.args)
            used.update(op.chain)
        used.update(v for v in self.out_vars if v is not None)
        for n in sorted(used):
            var = self.vars[n]
            if var.kind == "const":
                names[n] = f"c{n}"
                env[f"c{n}"] = var.value
        fn_names: dict = {}
        for i, op in enumerate(self.ops):
            for o in op.outs:
                names[o] = f"v{o}"
        # where each Python name is read for the last time, to release big buffers
        last_line: dict = {}
        for i, op in enumerate(self.ops):
            for a in itertools.chain(op.args, op.chain):
                last_line[names[a]] = i
            if op.out_buffer is not None:
                last_line[names[op.out_buffer]] = max(last_line.get(names[op.out_buffer], i), i)
        outs = {names[v] for v in self.out_vars if v is not None}
        block_of = {}    # op -> the blocked run it belongs to
        internal = set()  # the names that live inside a blocked run only
        last = self._last_uses()
        for block in self.blocks:
            start, end = block[:2]
            for i in range(start, end):
                block_of[i] = block
                internal.update(names[o] for o in self.ops[i].outs if last.get(o, -1) < end)
        release: dict = {}
        for name, i in last_line.items():
            if name.startswith("v") and name not in outs and name not in internal:
                var = self.vars[int(name[1:])]
                if var.is_array and var.value.nbytes >= _BIG:
                    i = block_of[i][1] - 1 if i in block_of else i  # after the run's loop
                    release.setdefault(i, []).append(name)

        def fn_name(fn):
            fname = fn_names.get(id(fn))
            if fname is None:
                fname = fn_names[id(fn)] = f"f{len(fn_names)}"
                env[fname] = fn
            return fname

        def call_args(i, op, arg_names):
            args = list(arg_names)
            for pname, pvalue in op.params.items():
                kname = f"k{i}_{pname}"
                env[kname] = pvalue
                args.append(kname if op.positional else f"{pname}={kname}")
            return ", ".join(args)

        for i, op in enumerate(self.ops):
            if i in block_of:
                if i == block_of[i][0]:
                    lines.extend(self._generate_block(block_of[i], names, env, fn_name,
                                                      call_args, last))
            else:
                fn = op.ufunc if op.out_buffer is not None else op.fn
                fname = fn_name(fn)
                args = call_args(i, op, [names[a] for a in op.args])
                target = ", ".join(names[o] for o in op.outs)
                if op.prim.multiple_results and len(op.outs) == 1:
                    target += ","
                if op.out_buffer is not None:
                    buf = names[op.out_buffer]
                    lines.append(f"{target} = {fname}({args}, {buf})  # into {buf}'s buffer")
                else:
                    lines.append(f"{target} = {fname}({args})")
                if op.chain:  # the first product made a fresh buffer (or reused one): on
                    env.setdefault(f"u{i}", op.ufunc)
                    for extra in op.chain:
                        lines.append(f"u{i}({target}, {names[extra]}, {target})  # in place")
            if i in release:
                lines.append("del " + ", ".join(sorted(release[i])))
        ret = ", ".join("None" if v is None else names[v] for v in self.out_vars)
        lines.append(f"return ({ret}{',' if len(self.out_vars) == 1 else ''})")
        source = f"def program({', '.join(params_in)}):\n" + "\n".join("    " + ln for ln in lines)
        # compiled inside a function of the names it uses, so the program reads them as
        # closure cells (cheaper than globals on every operation)
        free = sorted(env)
        maker = (f"def make({', '.join(free)}):\n"
                 + "\n".join("    " + ln for ln in source.splitlines())
                 + "\n    return program")
        scope: dict = {}
        exec(compile(maker, "<funcgrad.jit program>", "exec"), scope)  # noqa: S102
        return source, scope["make"](**env)

    def _generate_block(self, block, names, env, fn_name, call_args, last) -> list:
        """The source of one blocked run (see `_find_blocks`): a loop over its blocks."""
        start, end, shape, per_block = block
        ops, vars_ = self.ops[start:end], self.vars
        size = int(np.prod(shape, dtype=np.int64))
        made = {o for op in ops for o in op.outs}
        env.setdefault("empty", np.empty)
        lines = [f"# ops {start}-{end - 1} by blocks of {per_block} elements, each block's "
                 "values in small buffers"]
        local = []       # the names the loop binds, deleted after it
        sliced = {}      # a full array read by the run -> the name of its block
        for op in ops:
            for a in itertools.chain(op.args, op.chain):
                if a not in made and vars_[a].shape == shape and a not in sliced:
                    sliced[a] = f"{names[a]}_s"
                    lines.append(f"{names[a]}_b = {names[a]}.reshape(-1)")
                    local += [f"{names[a]}_b", f"{names[a]}_s"]
        kept, sums = [], []  # values read after the run (full arrays), and sums
        for op in ops:
            o = op.outs[0]
            if vars_[o].shape == ():
                sums.append(o)
                lines.append(f"{names[o]} = 0")
            elif last.get(o, -1) >= end:
                kept.append(o)
                env[f"t{o}"] = vars_[o].dtype
                if _REFCOUNTS_EXACT:  # the last call's array, if nothing holds it any more
                    env.setdefault("reuse", _reuse)
                    env.setdefault("pool", [])
                    lines.append(f"{names[o]}_full = reuse(pool, {len(env['pool'])}, "
                                 f"{shape!r}, t{o})")
                    env["pool"].append(None)
                else:
                    lines.append(f"{names[o]}_full = empty({shape!r}, t{o})")
                lines.append(f"{names[o]}_b = {names[o]}_full.reshape(-1)")
                local += [f"{names[o]}_b", f"{names[o]}_full"]
        body = []
        dtypes = {}      # block buffer -> its dtype
        holder = {}      # value made in the run -> its block buffer
        free: list = []  # block buffers no value needs any more
        for k, op in enumerate(ops):
            i = start + k
            o = op.outs[0]
            args = [sliced.get(a, names[a]) for a in op.args]
            if vars_[o].shape == ():  # a sum (a mean is a sum, divided after the loop)
                fn = np.sum if op.prim.name == "mean" and op.fn is op.prim.impl else op.fn
                fn = np.dot if fn is np.vdot else fn  # (real, and 1-d here: the same, faster)
                body.append(f"{names[o]} += {fn_name(fn)}({call_args(i, op, args)})")
            else:
                if o in kept:
                    out = f"{names[o]}_b[s:e]"
                else:
                    dtype = vars_[o].dtype
                    out = next((holder[a] for a in op.args if a in holder
                                and last.get(a) == i and a not in op.chain
                                and dtypes[holder[a]] == dtype), None)
                    if out is None:
                        out = next((b for b in free if dtypes[b] == dtype), None)
                        if out is not None:
                            free.remove(out)
                        else:
                            out = f"b{start}_{len(dtypes)}"
                            dtypes[out] = dtype
                    holder[o] = out
                    local.append(names[o])
                body.append(f"{names[o]} = {fn_name(op.ufunc)}({call_args(i, op, args)}, {out})")
                if op.chain:
                    env.setdefault(f"u{i}", op.ufunc)
                    for extra in op.chain:
                        body.append(f"u{i}({names[o]}, {sliced.get(extra, names[extra])}, "
                                    f"{names[o]})")
            for a in set(itertools.chain(op.args, op.chain)):
                if a in holder and last.get(a) == i and holder[a] != holder.get(o):
                    if holder[a] not in free and all(
                            holder[v] != holder[a] for v in holder if last.get(v, -1) > i):
                        free.append(holder[a])
        for name, dtype in dtypes.items():
            env[f"t_{name}"] = dtype
            lines.append(f"{name} = empty({per_block}, t_{name})")
        local += list(dtypes)
        lines.append(f"for s in range(0, {size}, {per_block}):")
        loop = [f"e = s + {per_block}"]
        if size % per_block:
            loop.append(f"if e > {size}:  # the last, shorter block")
            loop.append("    " + "; ".join(f"{b} = {b}[:{size % per_block}]"
                                           for b in dtypes) if dtypes else "    pass")
        loop += [f"{sliced[a]} = {names[a]}_b[s:e]" for a in sliced]
        lines += ["    " + ln for ln in loop + body]
        lines += [f"{names[o]} = {names[o]}_full" for o in kept]
        lines += [f"{names[o]} = {names[o]} / {size}  # the mean" for op in ops
                  for o in op.outs if o in sums and op.prim.name == "mean" and op.fn is op.prim.impl]
        lines.append("del s, e, " + ", ".join(sorted(set(local))))
        return lines


def _count(pool: list, k: int) -> int:
    """The reference count `_reuse` sees, read the same way (calibrates `_ALONE`)."""
    buf = pool[k]
    return sys.getrefcount(buf)


def _calibrate() -> tuple:
    probe = [np.empty(0)]
    alone = _count(probe, 0)
    held = probe[0]  # noqa: F841 - one reference more
    return alone, _count(probe, 0) == alone + 1


#: The count `_reuse` sees for an array nothing else holds (CPython versions differ in how
#: they count a local), and whether counts can be trusted: one reference more must show,
#: and without a GIL another thread may take one in between.
_ALONE, _COUNTS_SHOW = _calibrate()
_REFCOUNTS_EXACT = _COUNTS_SHOW and getattr(sys, "_is_gil_enabled", lambda: True)()


def _reuse(pool: list, k: int, shape: tuple, dtype) -> np.ndarray:
    """A full array for a blocked run's result: the one the last call made, when nothing
    but the pool holds it any more (its result was dropped), else a new one kept for the
    next call. Reusing it saves the page faults of fresh memory, a few percent of a run:
    glibc gives big freed blocks back to the system, so a new array faults on each page.
    Anything that can still read the array (the Array of a kept result, a view, a
    memoryview) holds a reference, so a reused array is never one that can be seen."""
    buf = pool[k]
    # the pool's reference and our own only (as `_count` reads them); a caller's adds one
    if buf is not None and sys.getrefcount(buf) == _ALONE:
        return buf
    buf = pool[k] = np.empty(shape, dtype)
    return buf


# --- the public transform -----------------------------------------------------------------
def _non_array_error(f, leaf, index: int, dynamic: tuple, static_pos: set) -> TypeError:
    """JAX's error for an argument leaf that is not an array, naming where it was passed."""
    path, _ = tree_flatten_with_path(dynamic)[0][index]
    where = keystr(tuple(path[2:]))
    if path[0].idx == 0:  # a positional argument: its parameter's name where it has one
        position = [k for k in range(len(dynamic[0]) + len(static_pos))
                    if k not in static_pos][path[1].idx]
        try:
            params = list(inspect.signature(f).parameters.values())
        except (TypeError, ValueError):
            params = []
        name = (params[position].name if position < len(params) and params[position].kind
                in (params[position].POSITIONAL_ONLY, params[position].POSITIONAL_OR_KEYWORD)
                else f"args[{position}]")
    else:
        name = str(path[1].key)
    return TypeError(
        f"Error interpreting argument to {f!r} as an abstract array. The problematic value "
        f"is of type {type(leaf)!r} and was passed to the function at path {name}{where}.\n"
        "This typically means that a jit-wrapped function was called with a non-array "
        "argument, and this argument was not marked as static using the static_argnums or "
        "static_argnames parameters of funcgrad.jit.")


class Lowered:
    """The program `jit` runs for one signature: ``as_text()`` gives its Python source."""

    def __init__(self, program: _Program) -> None:
        self._program = program

    def as_text(self) -> str:
        return _source_with_loops(self._program)

    def __str__(self) -> str:
        return self.as_text()


class _Compiled:
    __slots__ = ("program", "in_def", "out_def", "static_outs", "out_slots")

    def __init__(self, program, out_def, static_outs, out_slots) -> None:
        self.program = program
        self.out_def = out_def
        self.static_outs = static_outs  # output leaves that are not traced arrays, as they were
        self.out_slots = out_slots      # for each output leaf, its program output or None


_PY_SCALARS = (bool, int, float, complex)
_NO_POSITIONS: frozenset = frozenset()
_LEAF_TYPES = frozenset({np.ndarray, Array, *_PY_SCALARS})
#: the positional arguments' layout (per argument: None for an array or a number, or a list
#: or tuple type and its length) -> the treedef `tree_flatten` gives arguments of that layout
_FLAT_DEFS: dict = {}


def _flatten_arguments(args: tuple, kwargs: dict):
    """``tree_flatten((args, kwargs))``, quicker on every call when each argument is given by
    position and is an array, a number, or a plain list or tuple of them (a model's
    parameters): the layout's treedef is looked up, not rebuilt."""
    if kwargs:
        return tree_flatten((args, kwargs))
    leaves = []
    layout = []
    for a in args:
        t = type(a)
        if t in _LEAF_TYPES:
            leaves.append(a)
            layout.append(None)
        elif (t is list or t is tuple) and all(type(b) in _LEAF_TYPES for b in a):
            leaves.extend(a)
            layout.append((t, len(a)))
        else:
            return tree_flatten((args, kwargs))
    layout = tuple(layout)
    treedef = _FLAT_DEFS.get(layout)
    if treedef is None:
        treedef = _FLAT_DEFS[layout] = tree_flatten((args, kwargs))[1]
    return leaves, treedef


def _leaf_key(leaf):
    t = type(leaf)
    if t is np.ndarray:
        return (leaf.shape, leaf.dtype)
    if t is Array:
        return _leaf_key(leaf._value)
    if t in _PY_SCALARS:
        # traced, as JAX's weakly-typed scalars: one program per Python type, not per value;
        # the program receives the number itself, so NumPy's weak promotion still applies
        return (t,)
    if isinstance(leaf, np.generic):
        return ("scalar", leaf.dtype)
    return None


def jit(f: Callable | None = None, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> Callable:
    """`f` traced once per signature into a straight-line NumPy program, then replayed.

    The signature is the arguments' pytree structure, each array's shape and dtype, each
    Python number's type (traced weakly, as JAX's: ``f(x, 2.5)`` and ``f(x, 3.5)`` share a
    program) and the values of the static arguments (`static_argnums` by position,
    `static_argnames` by keyword). A new signature traces again. Inside `f`, a traced
    array's value cannot steer Python: ``if x > 0`` raises `ConcretizationTypeError`; mark
    such an argument static. Transforms compose in either order; ``jit(grad(f))`` compiles
    the backward pass too. ``jitted.lower(*args).as_text()`` shows the program.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> step = fg.jit(fg.value_and_grad(lambda x: fnp.sum(fnp.exp(fnp.sin(x)) * x)))
    >>> value, g = step(fnp.array([0.0, 1.0]))
    >>> round(value.item(), 6), [round(v, 6) for v in g.tolist()]
    (2.319777, [1.0, 3.573158])

    Without `f`, as JAX's, it returns a decorator with the options given:

    >>> @fg.jit(static_argnums=1)
    ... def power(x, n):
    ...     return x ** n
    >>> power(fnp.array(2.0), 3).item()
    8.0
    """
    if f is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames)
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if not all(isinstance(n, int) for n in nums):
        raise TypeError(f"jit: static_argnums must be ints, got {static_argnums!r}")
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"jit: static_argnames must be strings, got {static_argnames!r}")
    cache = _programs_of(f, nums, names)

    def split(args, kwargs):
        if not nums and not names:  # (the common case, on every call)
            return (), _NO_POSITIONS, args, kwargs
        n = len(args)
        static_pos = {a % n for a in nums if -n <= a < n}
        static = tuple((k, args[k]) for k in sorted(static_pos))
        static += tuple(sorted((k, v) for k, v in kwargs.items() if k in names))
        dyn_args = tuple(a for k, a in enumerate(args) if k not in static_pos)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names}
        return static, static_pos, dyn_args, dyn_kwargs

    def signature(args, kwargs):
        static, static_pos, dyn_args, dyn_kwargs = split(args, kwargs)
        leaves, treedef = _flatten_arguments(dyn_args, dyn_kwargs)
        keys = []
        for leaf in leaves:
            if type(leaf) is np.ndarray:  # (the commonest leaf, spelled out)
                keys.append((leaf.shape, leaf.dtype))
                continue
            if isinstance(leaf, Tracer):
                return None, leaves, treedef, static_pos
            key = _leaf_key(leaf)
            if key is None:
                raise _non_array_error(f, leaf, len(keys), (dyn_args, dyn_kwargs), static_pos)
            keys.append(key)
        try:
            key = (treedef, tuple(keys), static, len(args))
            hash(key)
        except TypeError:
            raise TypeError(
                "jit: a static argument is not hashable; static arguments are part of the "
                "signature the program is cached under, so pass a hashable value (a tuple, "
                "not a list or an array), or make the argument an array and leave it traced"
            ) from None
        return key, leaves, treedef, static_pos

    def rebuild(args, kwargs, treedef, new_leaves, static_pos):
        dyn_args, dyn_kwargs = tree_unflatten(treedef, new_leaves)
        it = iter(dyn_args)
        full = [args[k] if k in static_pos else next(it) for k in range(len(args))]
        full_kwargs = {k: (kwargs[k] if k in names else dyn_kwargs[k]) for k in kwargs}
        return full, full_kwargs

    def compile_for(args, kwargs, leaves, treedef, static_pos):
        trace = JitTrace()
        tracers = []
        inputs = []
        for leaf in leaves:
            value = raw(leaf)
            tracers.append(trace.input(value, len(inputs)))
            inputs.append(len(tracers) - 1)
        full, full_kwargs = rebuild(args, kwargs, treedef, tracers, static_pos)
        try:
            out = f(*full, **full_kwargs)
        finally:
            trace.alive = False
        out_leaves, out_def = tree_flatten(out)
        out_vars, slots, static_outs = [], [], []
        for leaf in out_leaves:
            if isinstance(leaf, JitTracer) and leaf._trace is trace:
                slots.append(len(out_vars))
                out_vars.append(leaf._var)
                static_outs.append(None)
            elif isinstance(leaf, Tracer):
                raise trace.dead() if not leaf._trace.alive else _Foreign
            else:
                slots.append(None)
                static_outs.append(leaf)
        program = _Program(trace, out_vars, len(inputs))
        return _Compiled(program, out_def, static_outs, slots), inputs

    def entry_for(args, kwargs):
        key, leaves, treedef, static_pos = signature(args, kwargs)
        if key is None:
            return None, leaves, treedef, static_pos
        entry = cache.get(key)
        if entry is None:
            entry = compile_for(args, kwargs, leaves, treedef, static_pos)
            cache[key] = entry
        return entry, leaves, treedef, static_pos

    @functools.wraps(f)
    def jitted(*args, **kwargs):
        try:
            entry, leaves, treedef, static_pos = entry_for(args, kwargs)
            if entry is None:
                return under_transform(args, kwargs, leaves, treedef, static_pos)
        except _Foreign:
            return f(*args, **kwargs)
        compiled, inputs = entry
        values = compiled.program.run(*[raw(leaves[k]) for k in inputs])
        # (a program's values are raw NumPy values, one per output: each becomes an Array)
        outs = [static if slot is None else Array(values[slot])
                for static, slot in zip(compiled.static_outs, compiled.out_slots)]
        return tree_unflatten(compiled.out_def, outs)

    def lower(*args, **kwargs) -> Lowered:
        entry = entry_for(args, kwargs)[0]
        if entry is None:
            raise TypeError("jit: lower() needs concrete arguments, not traced ones")
        return Lowered(entry[0].program)

    def under_transform(args, kwargs, leaves, treedef, static_pos):
        """Called with tracers of another transform: under make_tape, replay the program
        (the tape shows what jit runs); under any other transform, run `f` itself, so that
        transform sees each operation and custom rule as in eager mode."""
        top = max((leaf._trace for leaf in leaves if isinstance(leaf, Tracer)),
                  key=lambda t: t.level)
        concrete = [_bottom_value(leaf) for leaf in leaves]
        if type(top) is not ProgramTrace or any(isinstance(c, _Abstract) for c in concrete):
            return f(*args, **kwargs)
        c_args, c_kwargs = rebuild(args, kwargs, treedef, concrete, static_pos)
        compiled, inputs = entry_for(c_args, c_kwargs)[0]
        values = _replay(compiled.program, [leaves[k] for k in inputs])
        outs = [static if slot is None else values[slot]
                for static, slot in zip(compiled.static_outs, compiled.out_slots)]
        return tree_unflatten(compiled.out_def, outs)

    jitted.lower = lower  # type: ignore[attr-defined]
    jitted._cache = cache  # type: ignore[attr-defined]
    return jitted


#: The cached programs of each jitted function, by its options, held weakly on the function:
#: a `jit(g)` made afresh for each call reuses g's programs, as JAX's cache is keyed on the
#: function (JAX's "Common gotchas": the second call neither traces nor sees a changed global).
_PROGRAMS: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()


def _programs_of(f: Callable, nums: tuple, names: tuple) -> dict:
    """The program cache `jit(f, static_argnums=nums, static_argnames=names)` uses."""
    try:
        per_function = _PROGRAMS.setdefault(f, {})
    except TypeError:  # a callable that cannot be held weakly (a builtin): a cache of its own
        return {}
    return per_function.setdefault((nums, names), {})


def _source_with_loops(program: _Program, indent: str = "") -> str:
    """The program's source, each loop's condition and body listed after it."""
    text = [indent + line for line in program.source.splitlines()]
    for op in program.ops:
        if isinstance(op.prim, _LoopPrimitive):
            cond, body = op.prim.programs
            text.append(f"{indent}# {', '.join(f'v{o}' for o in op.outs)} = while_loop: "
                        "condition, then body")
            text.append(_source_with_loops(cond, indent + "    "))
            text.append(_source_with_loops(body, indent + "    "))
    return "\n".join(text)


def _bottom_value(x):
    while isinstance(x, Array):
        x = x._value
    return x


def _replay(program: _Program, inputs: list) -> list:
    """The program run primitive by primitive on `inputs` (tracers of another transform)."""
    env: dict = {}
    for n, var in enumerate(program.vars):
        if var.kind == "in":
            env[n] = inputs[var.index]
        elif var.kind == "const":
            env[n] = var.value
    for prim, params, args, outs in program.replay_ops:
        out = prim(*[env[a] for a in args], **params)
        if prim.multiple_results:
            for o, v in zip(outs, out):
                env[o] = v
        else:
            env[outs[0]] = out
    return [None if v is None else env[v] for v in program.out_vars]
