"""The engine's heart: arrays, tracers, traces, and primitives, whose call dispatches to the
innermost live trace (JAX calls this bind). Knows no NumPy function.

Vocabulary (see docs/concepts.md): a *primal* is an ordinary value, a *tangent* travels
forward beside it, a *cotangent* (``ct``) travels backward. Inside the engine a value is
either *raw* (a NumPy array, NumPy scalar or Python number) or a `Tracer` belonging to one
live transform. A plain `Array` is a raw value wrapped for the user; the engine unwraps it
on sight, so rules only ever meet raw values and tracers.
"""
from __future__ import annotations

import functools
import itertools
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from . import residuals

__all__ = [
    "Array", "Tracer", "Trace", "Primitive", "wrap", "raw", "engine",
    "FuncgradError", "new_level", "is_traced", "declared", "primitive_of",
]


class FuncgradError(Exception):
    """Errors that funcgrad raises on purpose: a misuse it can name, with its fix.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> leaked = []
    >>> _ = fg.grad(lambda x: leaked.append(x) or x)(1.0)
    >>> try:
    ...     fnp.sin(leaked[0])
    ... except fg.FuncgradError as err:
    ...     print(str(err)[:46])
    a tracer of a finished grad transform was used
    """


class Array:
    """An immutable n-dimensional array, returned by every `funcgrad.numpy` function.

    It wraps a NumPy array and behaves like one for reading; it cannot be written to.
    Use ``x.at[idx].set(v)`` for a functional update, or `funcgrad.mutable` for
    PyTorch-style in-place semantics.

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.array([1.0, 2.0, 3.0])
    >>> (x * 2).sum().item()
    12.0
    """

    __slots__ = ("_value",)
    __array_priority__ = 1000  # NumPy binary operators defer to ours
    _trace: "Trace | None" = None  # tracers shadow this with a slot

    def __init__(self, value: Any) -> None:
        self._value = value

    # --- reading -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        value = self._value  # a nested tracer answers itself (np.shape would dispatch)
        if type(value) is np.ndarray or isinstance(value, Array):
            return value.shape  # (np.shape is a Python-level wrapper: 0.3 us)
        return np.shape(value)

    @property
    def dtype(self) -> np.dtype:
        return _dtype_of(self._value)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d funcgrad array")
        return shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d funcgrad array")
        return (self[i] for i in range(self.shape[0]))

    def __array__(self, dtype=None, copy=None):
        # NumPy gets a read-only view (no copy): writing through np.asarray(x) would change
        # an immutable Array. An explicit copy is the caller's own, writable.
        value = np.asarray(self._value, dtype=dtype)
        if copy:
            return value.copy()
        if value.flags.writeable:
            value = value.view()
            value.flags.writeable = False
        return value

    def item(self, *args):
        return np.asarray(self._value).item(*args)

    def block_until_ready(self) -> "Array":
        """The array itself, as JAX's: funcgrad computes eagerly, so it is always ready."""
        return self

    def tolist(self):
        return np.asarray(self._value).tolist()

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __index__(self) -> int:
        return int(np.asarray(self._value).__index__())

    def __complex__(self) -> complex:
        return complex(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __hash__(self):  # arrays are compared elementwise, so they cannot be dict keys
        raise TypeError("unhashable type: 'funcgrad.Array'")

    def __repr__(self) -> str:
        body = np.array2string(np.asarray(self._value), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype})"

    def __str__(self) -> str:  # as NumPy prints: 3.0, [1. 2.]
        return str(np.asarray(self._value))

    def __format__(self, spec: str) -> str:
        # f"{x:.3f}" formats a 0-d array as its number; an n-d one refuses a spec as NumPy does
        return format(np.asarray(self._value), spec) if spec else str(self)

    if TYPE_CHECKING:
        # Operators and methods are attached at import by funcgrad.numpy._methods (the core
        # knows no NumPy function); they are declared here for type checkers only.
        def __add__(self, other: Any) -> Array: ...
        def __radd__(self, other: Any) -> Array: ...
        def __sub__(self, other: Any) -> Array: ...
        def __rsub__(self, other: Any) -> Array: ...
        def __mul__(self, other: Any) -> Array: ...
        def __rmul__(self, other: Any) -> Array: ...
        def __truediv__(self, other: Any) -> Array: ...
        def __rtruediv__(self, other: Any) -> Array: ...
        def __floordiv__(self, other: Any) -> Array: ...
        def __rfloordiv__(self, other: Any) -> Array: ...
        def __mod__(self, other: Any) -> Array: ...
        def __rmod__(self, other: Any) -> Array: ...
        def __pow__(self, other: Any) -> Array: ...
        def __rpow__(self, other: Any) -> Array: ...
        def __matmul__(self, other: Any) -> Array: ...
        def __rmatmul__(self, other: Any) -> Array: ...
        def __neg__(self) -> Array: ...
        def __pos__(self) -> Array: ...
        def __abs__(self) -> Array: ...
        def __invert__(self) -> Array: ...
        def __and__(self, other: Any) -> Array: ...
        def __rand__(self, other: Any) -> Array: ...
        def __or__(self, other: Any) -> Array: ...
        def __ror__(self, other: Any) -> Array: ...
        def __xor__(self, other: Any) -> Array: ...
        def __rxor__(self, other: Any) -> Array: ...
        def __lshift__(self, other: Any) -> Array: ...
        def __rlshift__(self, other: Any) -> Array: ...
        def __rshift__(self, other: Any) -> Array: ...
        def __rrshift__(self, other: Any) -> Array: ...
        def __lt__(self, other: Any) -> Array: ...
        def __le__(self, other: Any) -> Array: ...
        def __gt__(self, other: Any) -> Array: ...
        def __ge__(self, other: Any) -> Array: ...
        def __eq__(self, other: Any) -> Array: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Array: ...  # type: ignore[override]
        def __getitem__(self, index: Any) -> Array: ...
        @property
        def at(self) -> Any: ...
        @property
        def T(self) -> Array: ...
        @property
        def mT(self) -> Array: ...
        @property
        def real(self) -> Array: ...
        @property
        def imag(self) -> Array: ...
        def sum(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
                out: None = None, keepdims: bool = False) -> Array: ...
        def mean(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
                 out: None = None, keepdims: bool = False) -> Array: ...
        def prod(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
                 out: None = None, keepdims: bool = False) -> Array: ...
        def max(self, axis: int | tuple[int, ...] | None = None, out: None = None,
                keepdims: bool = False) -> Array: ...
        def min(self, axis: int | tuple[int, ...] | None = None, out: None = None,
                keepdims: bool = False) -> Array: ...
        def var(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
                out: None = None, ddof: int = 0, keepdims: bool = False) -> Array: ...
        def std(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
                out: None = None, ddof: int = 0, keepdims: bool = False) -> Array: ...
        def reshape(self, *shape: Any, order: str = "C") -> Array: ...
        def transpose(self, *axes: Any) -> Array: ...
        def astype(self, dtype: Any, copy: bool = True) -> Array: ...
        def clip(self, a_min: Any = None, a_max: Any = None) -> Array: ...
        def dot(self, b: Any) -> Array: ...
        def ravel(self, order: str = "C") -> Array: ...
        def flatten(self, order: str = "C") -> Array: ...
        def squeeze(self, axis: int | tuple[int, ...] | None = None) -> Array: ...
        def swapaxes(self, axis1: int, axis2: int) -> Array: ...
        def copy(self) -> Array: ...
        def sort(self, axis: int = -1, kind: Any = None, order: Any = None) -> Array: ...
        def argmax(self, *args: Any, **kwargs: Any) -> Array: ...
        def argmin(self, *args: Any, **kwargs: Any) -> Array: ...
        def argsort(self, *args: Any, **kwargs: Any) -> Array: ...
        def all(self, *args: Any, **kwargs: Any) -> Array: ...
        def any(self, *args: Any, **kwargs: Any) -> Array: ...
        def round(self, *args: Any, **kwargs: Any) -> Array: ...
        def nonzero(self) -> tuple[Array, ...]: ...
        def cumsum(self, *args: Any, **kwargs: Any) -> Array: ...
        def cumprod(self, *args: Any, **kwargs: Any) -> Array: ...
        def conj(self) -> Array: ...
        def conjugate(self) -> Array: ...
        def trace(self, *args: Any, **kwargs: Any) -> Array: ...
        def diagonal(self, *args: Any, **kwargs: Any) -> Array: ...
        def repeat(self, *args: Any, **kwargs: Any) -> Array: ...
        def take(self, *args: Any, **kwargs: Any) -> Array: ...
        def argpartition(self, *args: Any, **kwargs: Any) -> Array: ...
        def searchsorted(self, *args: Any, **kwargs: Any) -> Array: ...

    def __setitem__(self, index, value):
        raise TypeError(
            "funcgrad arrays are immutable: use `x = x.at[index].set(value)` for a "
            "functional update, or funcgrad.mutable for PyTorch-style in-place writes"
        )

    def __reduce__(self):
        return (Array, (np.asarray(self._value),))

ufunc_handlers: dict = {}     # numpy ufunc -> funcgrad public function; filled by namespaces
function_handlers: dict = {}  # numpy function -> funcgrad public function


def _any_tracer(obj) -> bool:
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_any_tracer(o) for o in obj)
    if isinstance(obj, dict):
        return any(_any_tracer(o) for o in obj.values())
    return False


def _unwrap_all(obj):
    if type(obj) is Array:
        return obj._value
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap_all(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _unwrap_all(v) for k, v in obj.items()}
    return obj


def _dtype_of(value) -> np.dtype:
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return dtype
    return np.asarray(value).dtype


class Tracer(Array):
    """An `Array` that stands for a value inside a running transform.

    ``_value`` is the value one level down: raw, or a tracer of an enclosing transform.
    """

    __slots__ = ("_trace",)

    def __array__(self, dtype=None, copy=None):
        # An integer or bool conversion (np.int64(x), as HIPS autograd allows) drops no
        # derivative, like int(x): it reads the concrete value through the levels below.
        if dtype is not None and np.dtype(dtype).kind in "iub":
            value = self._value
            if isinstance(value, Tracer):
                return value.__array__(dtype)
            return np.asarray(value).astype(dtype)
        raise TypeError(
            f"a traced funcgrad array ({self._trace.name}) cannot become a NumPy array: "
            "that would silently drop its derivative. Use funcgrad.numpy functions on it, "
            "or funcgrad.stop_gradient(x) if a constant is what you mean"
        )

    def _concrete(self, what: str):
        raise TypeError(
            f"{what}() of a traced funcgrad array ({self._trace.name}) would silently drop "
            "its derivative. Keep it an array, or apply funcgrad.stop_gradient first"
        )

    def __float__(self):
        self._concrete("float")

    def __complex__(self):
        self._concrete("complex")

    def item(self, *args):
        self._concrete("item")

    def tolist(self):
        self._concrete("tolist")

    # Each level decides through its own value: a batched value (vmap) has no single one.
    def __int__(self) -> int:  # integers carry no derivative, so nothing is lost
        value = self._value
        return int(value) if isinstance(value, Tracer) else int(np.asarray(value))

    def __index__(self) -> int:
        value = self._value
        return value.__index__() if isinstance(value, Tracer) else \
            int(np.asarray(value).__index__())

    def __bool__(self) -> bool:  # control flow on values is allowed, as in autograd
        return bool(self._value)

    def __repr__(self) -> str:
        return f"Traced<{self.dtype}{list(self.shape)}, {self._trace.name}> with {self._describe()}"

    def _describe(self) -> str:
        """What the repr shows of the value: the primal (tracers add their own parts)."""
        return f"primal {_show(self._value)}"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if not spec:
            return repr(self)
        return format(np.asarray(self._value) if not isinstance(self._value, Tracer)
                      else self._value, spec)

    def __reduce__(self):
        self._concrete("pickle")

    # --- NumPy's dispatch protocols: np.sin(x), np.sum(x) on a tracer reach funcgrad --------
    # (as HIPS autograd users write). A concrete Array has neither protocol: NumPy's own
    # functions convert it and return NumPy results, as with JAX's arrays, so SciPy and other
    # NumPy code take funcgrad's results (scipy.optimize with jac=grad(f)); operators with an
    # ndarray still give an Array through __array_priority__ and the reflected operators.
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        handler = ufunc_handlers.get(ufunc) if method == "__call__" else None
        if handler is not None and not kwargs:
            return handler(*inputs)
        if _any_tracer((inputs, kwargs)):
            detail = f"np.{ufunc.__name__}" + (f".{method}" if method != "__call__" else "")
            raise TypeError(
                f"{detail} has no funcgrad derivative rule{' for these arguments' if handler else ''}"
                f"{' (keyword arguments ' + ', '.join(kwargs) + ')' if kwargs else ''}. Use the "
                "funcgrad.numpy function of the same name, or declare one in its namespace table"
            )
        return wrap(getattr(ufunc, method)(*_unwrap_all(inputs), **_unwrap_all(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        handler = function_handlers.get(func)
        if handler is not None:
            return handler(*args, **kwargs)
        if _any_tracer((args, kwargs)):
            raise TypeError(
                f"numpy.{func.__name__} has no funcgrad derivative rule. Use a funcgrad.numpy "
                "function, declare one in its namespace table, or stop_gradient the input"
            )
        out = func(*_unwrap_all(args), **_unwrap_all(kwargs))
        return wrap(out) if isinstance(out, np.ndarray) else out


def _show(value) -> str:
    if isinstance(value, Tracer):
        return f"({value!r})"
    return np.array2string(np.asarray(value), threshold=20)


def is_traced(x: Any) -> bool:
    """Whether `x` is a tracer: a value standing for an array inside a running transform
    (grad, jvp, vmap, ...), rather than a concrete `Array`, NumPy value or Python number.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.is_traced(fnp.array(1.0))
    False
    >>> seen = []
    >>> _ = fg.grad(lambda x: seen.append(fg.is_traced(x)) or fnp.sin(x))(1.0)
    >>> seen
    [True]
    """
    return isinstance(x, Tracer)


def _bottom(x):
    while isinstance(x, Array):
        x = x._value
    return x


def raw(x):
    """The engine-level value of `x`: unwraps a constant `Array`, leaves tracers alone."""
    return x._value if type(x) is Array else x


def wrap(out):
    """What a public function returns: raw results become constant Arrays."""
    if isinstance(out, Array):
        return out
    if type(out) is tuple:
        return tuple(wrap(o) for o in out)
    return Array(out)


# --- traces and levels ------------------------------------------------------------------
_level_counter = itertools.count(1)


def new_level() -> int:
    """A fresh level: every trace started later sits above every trace started earlier."""
    return next(_level_counter)


class Trace:
    """One running transform. Subclasses implement `process`."""

    __slots__ = ("level", "alive", "__weakref__")
    name = "trace"

    def __init__(self) -> None:
        self.level = new_level()
        self.alive = True

    def process(self, prim: "Primitive", args: Sequence[Any], params: dict) -> Any:
        raise NotImplementedError

    # One- and two-argument calls arrive here first; a trace may spell them out for speed.
    def process1(self, prim: "Primitive", x: Any, params: dict) -> Any:
        return self.process(prim, (x,), params)

    def process2(self, prim: "Primitive", x: Any, y: Any, params: dict) -> Any:
        return self.process(prim, (x, y), params)

    def process_custom(self, rule: Any, leaves: list, in_def: Any) -> Any:
        """A custom call (custom_vjp, custom_jvp, checkpoint) whose arguments' innermost
        trace is this one: `leaves` are the flattened arguments, `in_def` their structure.
        Each trace handles it in its own module (reverse mode records one entry with the
        rule's cotangent, forward mode pushes tangents through the rule, vmap vmaps the
        rule); a trace that knows nothing of custom rules runs the function's body."""
        return rule.body(leaves, in_def)

    def dead(self) -> FuncgradError:
        return FuncgradError(
            f"a tracer of a finished {self.name} transform was used after the transform "
            "returned (it leaked out through a global, a closure or a returned container). "
            "Return it from the transformed function instead, or stop_gradient it first"
        )


class Primitive:
    """A function the engine records as one step, with its derivative rules.

    * ``impl(*args, **params)``: the forward computation on raw values.
    * ``nargs``: how many leading positional arguments are arrays; further positional
      arguments are taken as the parameters named in ``params``, in order.
    * ``vjps[i](ct, out, *args, **params)``: the cotangent of array argument ``i``, or
      ``None`` where the argument is not differentiable. The engine sums away broadcast
      dimensions, so a rule may return a cotangent of the broadcast shape.
    * ``jvps[i](t, out, *args, **params)``: the output tangent due to tangent ``t`` of
      argument ``i``; contributions are summed and broadcast to the output's shape.
    * ``linear``: the function is linear in its array arguments jointly; then the JVP is
      the function itself applied to the tangents, and no ``jvps`` are needed.
    * ``batch(prim, args, dims, **params) -> (out, out_dim)``: the vmap rule.
    * ``differentiable=False``: the output never carries a derivative (argmax, floor,
      comparisons); it passes through every transform as a constant.

    Derived once, when the primitive is declared (and again if its rules are replaced):

    * ``reads``: for each array argument ``i``, a frozenset naming what the VJP rule of
      ``i`` reads: argument positions (ints) and ``"out"``; ``None`` for an argument with
      no rule. ``reads`` itself is ``None`` when there are no rules or the arity is
      variable (then everything is kept). Found from the rules' bytecode and erring on the
      side of keeping (see ``residuals.py``); the reverse tape keeps exactly this, and the
      mutable layer saves exactly this. A linear primitive's rules read no values of its
      differentiable arguments (only shapes), and never its output.

    Rules are written with funcgrad operations, so every rule can itself be
    differentiated: that is what makes ``grad(grad(f))`` work.
    """

    __slots__ = ("name", "impl", "nargs", "params", "vjps", "jvps", "linear", "batch",
                 "differentiable", "multiple_results", "doc", "reads", "_keep", "_direct",
                 "_derivs", "_slopes", "_passes", "_code", "__weakref__")

    def __init__(self, name: str, impl: Callable, *, nargs: int = 1,
                 params: Sequence[str] = (), vjps: Sequence[Callable | None] | None = None,
                 jvps: Sequence[Callable | None] | None = None, linear: bool = False,
                 batch: Callable | None = None, differentiable: bool = True,
                 multiple_results: bool = False, doc: str = "") -> None:
        _PRIMITIVES.add(self)
        self._code = None  # its number among the declared primitives (`declared`)
        self.name = name
        self.impl = impl
        self.nargs = nargs
        self.params = tuple(params)
        self.vjps = tuple(vjps) if vjps is not None else None
        self.jvps = tuple(jvps) if jvps is not None else None
        self.linear = linear
        self.batch = batch
        self.differentiable = differentiable
        self.multiple_results = multiple_results
        self.doc = doc

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _RULE_FIELDS and hasattr(self, "multiple_results"):
            self._derive_reads()

    def _derive_reads(self) -> None:
        reads = residuals.rule_reads(self.vjps, self.nargs, self.linear)
        object.__setattr__(self, "reads", reads)
        # the tape's mask (keep the output? keep argument i?), read once per recorded op
        keep = residuals.keep_mask(reads, self.multiple_results)
        object.__setattr__(self, "_keep", keep)
        # The reverse tape's short path, for a declared differentiable primitive of one or two
        # arguments, one result and a rule for each argument: ``(its number, keep the output?,
        # keep only the shape of argument 0?, of argument 1?)``; None sends the others down
        # the general path.
        vjps = self.vjps
        keep_out, keep_args = keep
        direct = None
        if self.differentiable and not self.multiple_results and type(vjps) is tuple \
                and self.nargs in (1, 2) and len(vjps) == self.nargs and None not in vjps \
                and self._code is not None:
            direct = (self._code, keep_out,
                      *(keep_args is not None and i < self.nargs and not keep_args[i]
                        for i in range(2)))
        object.__setattr__(self, "_direct", direct)
        # An elementwise primitive's rules are ``ct * deriv(out, *args)`` (`declare.elementwise`
        # marks them with their ``deriv``): the walk multiplies by the local derivative itself,
        # one Python call fewer per entry. None where any rule is another kind.
        derivs = tuple(getattr(rule, "deriv", None) for rule in vjps) \
            if direct is not None else None
        derivs = None if derivs is None or None in derivs else derivs
        object.__setattr__(self, "_derivs", derivs)
        # Rules that only hand back one of their parameters, which the walk then reads
        # without a call: ``_slopes``, for elementwise rules, the position in ``(out, *args)``
        # of each argument's slope (multiply's is the other argument); ``_passes[i]``: the
        # rule of argument i returns the cotangent itself (add's transposes).
        slopes = tuple(residuals.returned_param(d) for d in derivs) if derivs else None
        object.__setattr__(self, "_slopes", None if slopes is None or None in slopes else slopes)
        passes = tuple(rule is not None and not hasattr(rule, "deriv")
                       and residuals.returned_param(rule) == 0
                       for rule in vjps) if type(vjps) is tuple else ()
        object.__setattr__(self, "_passes", passes + (False, False))

    def __new__(cls, name: str, impl: Callable, *, nargs: int = 1, **kwargs):
        if cls is Primitive:  # one- and two-argument primitives get a faster __call__
            cls = _BY_ARITY.get(nargs, Primitive)
        return object.__new__(cls)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    def __call__(self, *args, **params):
        # The hot path: keep it flat. Extra positional arguments are parameters.
        if len(args) > self.nargs >= 0:
            params.update(zip(self.params, args[self.nargs:]))
            args = args[: self.nargs]
        top = None
        wrapped = False
        for a in args:
            if isinstance(a, Array):
                t = a._trace
                if t is None:
                    wrapped = True
                elif top is None or t.level > top.level:
                    top = t
        if top is None:
            if wrapped:
                args = [a._value if type(a) is Array else a for a in args]
            return self.impl(*args, **params)
        if not top.alive:
            raise top.dead()
        return top.process(self, args, params)


#: Every primitive declared, written only by `Primitive.__init__`: `debug_nans` wraps their
#: forwards with a NaN check while it is on anywhere (`checked_forwards`), so that the check
#: costs nothing while it is off.
_PRIMITIVES: "weakref.WeakSet[Primitive]" = weakref.WeakSet()


#: The primitives namespaces declare (`declared`), by number: a tape entry names one by its
#: number, so that the entry holds nothing the cyclic garbage collector tracks (CPython stops
#: tracking a tuple of untracked values at its first collection), and a long recording
#: costs the collector nothing. Appended to at declaration only.
_DECLARED: list = []
_DECLARING = threading.Lock()


def declared(prim: Primitive) -> Primitive:
    """Number `prim` among the declared primitives (for the primitives of a namespace,
    which live as long as the program)."""
    with _DECLARING:
        if prim._code is None:
            object.__setattr__(prim, "_code", len(_DECLARED))
            _DECLARED.append(prim)
            prim._derive_reads()  # (its number goes into the tape's short path)
    return prim


def primitive_of(key: Any) -> Primitive:
    """The primitive a tape entry names: itself, or its number among the declared ones."""
    return _DECLARED[key] if type(key) is int else key


def checked_forwards(check: Callable | None) -> None:
    """Wrap every primitive's forward (``impl``) so that ``check(prim, out)`` sees each
    output (`check` None: unwrap them again). Called by `config` as `debug_nans` is first
    turned on, and after it is turned off everywhere."""
    for prim in list(_PRIMITIVES):
        impl = getattr(prim.impl, "unchecked", prim.impl)
        prim.impl = impl if check is None else _checked(prim, impl, check)


def _checked(prim: Primitive, impl: Callable, check: Callable) -> Callable:
    @functools.wraps(impl)
    def checked_impl(*args, **params):
        out = impl(*args, **params)
        check(prim, out)
        return out
    checked_impl.unchecked = impl  # type: ignore[attr-defined]
    return checked_impl


# Declaring or replacing one of these re-derives `reads`; set only at declaration time.
_RULE_FIELDS = frozenset(("vjps", "nargs", "linear", "multiple_results", "differentiable"))


class _UnaryPrimitive(Primitive):
    """`Primitive.__call__` spelled out for one array argument: the hot path of the tape."""

    __slots__ = ()

    def __call__(self, x, *extra, **params):
        if extra:
            params.update(zip(self.params, extra))
        if isinstance(x, Array):
            t = x._trace
            if t is not None:
                if not t.alive:
                    raise t.dead()
                return t.process1(self, x, params)
            x = x._value
        return self.impl(x, **params) if params else self.impl(x)

    def operator(self, as_array: Callable) -> Callable:
        """The Array method ``x.__op__()``: `self` applied as by ``self(x)``, in one Python
        call per recorded operation; a result that is not an Array goes through
        ``as_array(out)``."""
        prim = self

        def op(x):  # x is the Array whose method this is
            t = x._trace
            if t is None:
                out = prim.impl(x._value)
            else:
                if not t.alive:
                    raise t.dead()
                out = t.process1(prim, x, _NO_PARAMS)
            return out if isinstance(out, Array) else as_array(out)

        return op


class _BinaryPrimitive(Primitive):
    """`Primitive.__call__` spelled out for two array arguments."""

    __slots__ = ()

    def __call__(self, x, y, *extra, **params):
        if extra:
            params.update(zip(self.params, extra))
        tx = x._trace if isinstance(x, Array) else None
        ty = y._trace if isinstance(y, Array) else None
        if tx is None and ty is None:
            if type(x) is Array:
                x = x._value
            if type(y) is Array:
                y = y._value
            return self.impl(x, y, **params) if params else self.impl(x, y)
        top = tx if ty is None or (tx is not None and tx.level >= ty.level) else ty
        if not top.alive:
            raise top.dead()
        return top.process2(self, x, y, params)

    def operator(self, as_array: Callable, reflected: bool = False) -> Callable:
        """The Array method ``x.__op__(other)`` (``other.__op__``'s reflection with
        `reflected`): `self` applied as by ``self(x, other)``, in one Python call per recorded
        operation; a result that is not an Array goes through ``as_array(out, other)``."""
        prim = self

        def op(x, y):  # x is the Array whose method this is
            top = x._trace
            if isinstance(y, Array):
                ty = y._trace
                if ty is not None and (top is None or ty.level > top.level):
                    top = ty
            if top is None:
                out = prim.impl(x._value, y._value if type(y) is Array else y)
            else:
                if not top.alive:
                    raise top.dead()
                out = top.process2(prim, x, y, _NO_PARAMS)
            return out if isinstance(out, Array) else as_array(out, y)

        def reflected_op(y, x):  # `op` with the operands the other way round
            top = y._trace
            if isinstance(x, Array):
                tx = x._trace
                if tx is not None and (top is None or tx.level >= top.level):
                    top = tx
            if top is None:
                out = prim.impl(x._value if type(x) is Array else x, y._value)
            else:
                if not top.alive:
                    raise top.dead()
                out = top.process2(prim, x, y, _NO_PARAMS)
            return out if isinstance(out, Array) else as_array(out, x)

        return reflected_op if reflected else op


_NO_PARAMS: dict = {}  # shared and never written: traces only read params


_BY_ARITY = {1: _UnaryPrimitive, 2: _BinaryPrimitive}


class _EngineOps:
    """The few array operations the engine itself needs (summing away broadcast dimensions,
    zeros, moving batch axes). A namespace registers differentiable versions at import, so
    the core stays free of NumPy functions while its own operations are differentiable too.
    """

    sum_to_shape: Callable
    broadcast_to: Callable
    zeros_like: Callable
    moveaxis: Callable
    expand_dims: Callable
    reshape: Callable
    stack: Callable
    take0: Callable
    astype: Callable
    conj: Callable

    def register(self, **ops: Callable) -> None:
        for name, fn in ops.items():
            setattr(self, name, fn)


engine = _EngineOps()
