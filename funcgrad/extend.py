"""funcgrad.extend: HIPS autograd's public extension API (``autograd.extend``) on funcgrad's
engine, so code that defines its own primitives the autograd way runs unchanged.

``primitive(f)`` makes `f` a primitive: transforms no longer look inside it, and its
derivatives come from the rules given with ``defvjp`` (reverse mode) and ``defjvp``
(forward mode), in autograd's forms:

* ``defvjp(f, maker_0, maker_1, ...)``: ``maker_i(ans, *args, **kwargs)`` returns the map
  ``g -> `` the cotangent of argument ``i``; ``None`` gives that argument a zero cotangent;
* ``defjvp(f, jvp_0, ...)``: ``jvp_i(g, ans, *args, **kwargs)`` is the output's tangent for
  a tangent ``g`` of argument ``i`` (``None``: zero; ``"same"``: `f` is linear there);
* ``defvjp_argnum`` / ``defvjp_argnums`` / ``defjvp_argnum`` / ``def_linear`` as autograd's.

A missing rule raises NotImplementedError when a derivative needs it, naming the argument.
The rules are funcgrad code, so they are differentiated in turn (higher orders work where
the rules use funcgrad operations or other primitives). Arguments that are not traced
(numbers, strings, constant arrays) are passed through unchanged.

>>> import funcgrad as fg
>>> from funcgrad.extend import primitive, defvjp, defjvp
>>> @primitive
... def cube(x):
...     return x ** 3
>>> defvjp(cube, lambda ans, x: lambda g: g * 3 * x ** 2)
>>> defjvp(cube, lambda g, ans, x: g * 3 * x ** 2)
>>> fg.grad(cube)(2.0).item(), fg.jvp(cube, (2.0,), (1.0,))[1].item()
(12.0, 12.0)
>>> fg.grad(fg.grad(cube))(2.0).item()  # the rule's own operations give the second order
12.0
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Iterator

import numpy as np

from ._src import batching as B
from ._src.core import Array, Primitive, Tracer, wrap
from .numpy import _primitives as P

__all__ = ["primitive", "notrace_primitive", "defvjp", "defvjp_argnum", "defvjp_argnums",
           "defjvp", "defjvp_argnum", "def_linear", "vspace", "VSpace", "Box"]

Box = Tracer  # what autograd calls a traced value


class _Call:
    """One call's arguments: which positions are traced (the primitive's array arguments)
    and everything else, to put the full argument list back together for `f` and its rules.
    """

    __slots__ = ("args", "positions", "kwargs")

    def __init__(self, args: tuple, positions: tuple, kwargs: dict):
        self.args, self.positions, self.kwargs = args, positions, kwargs

    def full(self, values) -> list:
        full = list(self.args)
        for i, v in zip(self.positions, values):
            full[i] = v
        return full


class _Rules:
    """A primitive's rules by argument position, filled by defvjp/defjvp, read per call."""

    def __init__(self, fun: Callable, kind: str):
        self.fun, self.kind = fun, kind
        self.by_argnum: dict[int, Callable] = {}
        self.joint: Callable | None = None  # defvjp_argnum / defjvp_argnum / defvjp_argnums

    def missing(self, argnum: int) -> NotImplementedError:
        name = getattr(self.fun, "__name__", "function")
        mode = "VJP" if self.kind == "vjp" else "JVP"
        define = "defvjp" if self.kind == "vjp" else "defjvp"
        return NotImplementedError(f"{mode} of {name} with respect to argument {argnum} is not "
                                   f"defined: give it with funcgrad.extend.{define}")


class _RuleTable(tuple):
    """``vjps[k]`` / ``jvps[k]`` of the primitive: the rule for its k-th traced argument."""

    def __new__(cls, rules: _Rules):
        table = super().__new__(cls)
        table.rules = rules
        return table

    def __getitem__(self, k):
        rules = self.rules
        if rules.kind == "vjp":
            def vjp(ct, out, *values, call):
                return _vjp(rules, k, ct, out, values, call)
            return vjp

        def jvp(t, out, *values, call):
            return _jvp(rules, k, t, out, values, call)
        return jvp


def _vjp(rules: _Rules, k: int, ct, out, values, call: _Call):
    argnum = call.positions[k]
    full = call.full(values)
    if rules.joint is not None:
        if getattr(rules.joint, "argnums", False):
            return rules.joint(call.positions, out, full, call.kwargs)(ct)[k]
        return rules.joint(argnum, out, full, call.kwargs)(ct)
    maker = rules.by_argnum.get(argnum, _MISSING)
    if maker is _MISSING:
        raise rules.missing(argnum)
    if maker is None:
        return P.zeros_like(values[k])
    return maker(out, *full, **call.kwargs)(ct)


def _jvp(rules: _Rules, k: int, t, out, values, call: _Call):
    argnum = call.positions[k]
    full = call.full(values)
    if rules.joint is not None:
        return rules.joint(argnum, t, out, full, call.kwargs)
    jvp = rules.by_argnum.get(argnum, _MISSING)
    if jvp is _MISSING:
        raise rules.missing(argnum)
    if jvp is None:
        return P.zeros_like(out)
    if jvp == "same":
        full[argnum] = t
        return rules.fun(*full, **call.kwargs)
    return jvp(t, out, *full, **call.kwargs)


_MISSING = object()


def primitive(f: Callable) -> Callable:
    """`f` as a primitive: its derivatives are the rules given with `defvjp` / `defjvp`.

    >>> import funcgrad as fg
    >>> from funcgrad.extend import primitive, defvjp
    >>> @primitive
    ... def twice(x):
    ...     return 2.0 * x
    >>> defvjp(twice, lambda ans, x: lambda g: 2.0 * g)
    >>> fg.grad(twice)(1.0).item()
    2.0
    """
    vjp_rules, jvp_rules = _Rules(f, "vjp"), _Rules(f, "jvp")

    def impl(*values, call):
        return f(*call.full(values), **call.kwargs)

    prim = Primitive(getattr(f, "__name__", "primitive"), impl, nargs=-1,
                     batch=B.batch_by_loop)
    prim.vjps = _RuleTable(vjp_rules)
    prim.jvps = _RuleTable(jvp_rules)

    @functools.wraps(f)
    def f_wrapped(*args, **kwargs):
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tracer))
        if not positions:
            return f(*args, **kwargs)
        return prim(*[args[i] for i in positions], call=_Call(args, positions, kwargs))

    f_wrapped.fun = f
    f_wrapped._rules = (vjp_rules, jvp_rules)
    f_wrapped.primitive = prim
    # autograd's older method forms, still accepted there with a DeprecationWarning
    f_wrapped.defgrad = functools.partial(_deprecated_defgrad, f_wrapped)
    f_wrapped.defvjp = functools.partial(_deprecated_defvjp, f_wrapped)
    f_wrapped.defvjp_is_zero = functools.partial(_deprecated_defvjp_is_zero, f_wrapped)
    return f_wrapped


def _deprecate(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated (as in autograd): use {new}", DeprecationWarning,
                  stacklevel=3)


def _deprecated_defgrad(fun: Callable, maker: Callable, argnum: int = 0) -> None:
    """``fun.defgrad(maker, argnum)``: ``maker(ans, *args)`` returns ``g -> cotangent``."""
    _deprecate("fun.defgrad(maker, argnum)", "defvjp(fun, maker, argnums=[argnum])")
    _rules(fun, 0).joint = None
    _rules(fun, 0).by_argnum[argnum] = maker


def _deprecated_defvjp(fun: Callable, vjpfun: Callable, argnum: int = 0) -> None:
    """``fun.defvjp(vjpfun, argnum)``: ``vjpfun(g, ans, vs, gvs, *args)`` is the cotangent
    (``vs``, ``gvs``: the vector spaces of argument `argnum` and of the output)."""
    _deprecate("fun.defvjp(vjpfun, argnum)", "defvjp(fun, maker, argnums=[argnum])")

    def maker(ans, *args, **kwargs):
        return lambda g: vjpfun(g, ans, vspace(args[argnum]), vspace(ans), *args, **kwargs)
    _rules(fun, 0).joint = None
    _rules(fun, 0).by_argnum[argnum] = maker


def _deprecated_defvjp_is_zero(fun: Callable, argnums: Any = (0,)) -> None:
    """``fun.defvjp_is_zero(argnums)``: those arguments get zero cotangents."""
    _deprecate("fun.defvjp_is_zero(argnums)", "defvjp(fun, None, ...)")
    for argnum in argnums:
        _rules(fun, 0).joint = None
        _rules(fun, 0).by_argnum[argnum] = None


def notrace_primitive(f: Callable) -> Callable:
    """`f` called on the values under any tracing: its result carries no derivative.

    >>> import funcgrad as fg
    >>> from funcgrad.extend import notrace_primitive
    >>> sign = notrace_primitive(lambda x: 1.0 if x > 0 else -1.0)
    >>> fg.grad(lambda x: sign(x) * x)(-3.0).item()
    -1.0
    """
    @functools.wraps(f)
    def f_wrapped(*args, **kwargs):
        return f(*[_value(a) for a in args], **{k: _value(v) for k, v in kwargs.items()})
    return f_wrapped


def _value(x):
    while isinstance(x, Array):
        x = x._value
    return x


def _rules(fun: Callable, kind: int) -> _Rules:
    rules = getattr(fun, "_rules", None)
    if rules is None:
        raise TypeError(f"{getattr(fun, '__name__', fun)!r} is not a funcgrad.extend "
                        "primitive: wrap it with funcgrad.extend.primitive first")
    return rules[kind]


def defvjp(fun: Callable, *vjpmakers: Callable | None, argnums: Any = None) -> None:
    """Reverse-mode rules of primitive `fun`, one maker per argument (autograd's form:
    ``maker(ans, *args, **kwargs)`` returns ``g -> cotangent``; None: zero)."""
    rules = _rules(fun, 0)
    argnums = range(len(vjpmakers)) if argnums is None else argnums
    rules.joint = None
    for argnum, maker in zip(argnums, vjpmakers):
        rules.by_argnum[argnum] = maker


def defvjp_argnum(fun: Callable, vjpmaker: Callable) -> None:
    """One maker for every argument: ``vjpmaker(argnum, ans, args, kwargs)`` returns
    ``g -> cotangent of argument argnum``."""
    _rules(fun, 0).joint = vjpmaker


def defvjp_argnums(fun: Callable, vjpmaker: Callable) -> None:
    """One maker for all arguments at once: ``vjpmaker(argnums, ans, args, kwargs)`` returns
    ``g -> (cotangent of each argument in argnums)``."""
    @functools.wraps(vjpmaker)
    def joint(argnums, ans, args, kwargs):
        return vjpmaker(argnums, ans, args, kwargs)
    joint.argnums = True
    _rules(fun, 0).joint = joint


def defjvp(fun: Callable, *jvpfuns: Callable | str | None, argnums: Any = None) -> None:
    """Forward-mode rules of primitive `fun`, one per argument (autograd's form:
    ``jvp(g, ans, *args, **kwargs)``; None: zero; "same": `fun` is linear there)."""
    rules = _rules(fun, 1)
    argnums = range(len(jvpfuns)) if argnums is None else argnums
    rules.joint = None
    for argnum, jvp in zip(argnums, jvpfuns):
        rules.by_argnum[argnum] = jvp


def defjvp_argnum(fun: Callable, jvpmaker: Callable) -> None:
    """One forward rule for every argument: ``jvpmaker(argnum, g, ans, args, kwargs)``."""
    _rules(fun, 1).joint = jvpmaker


def def_linear(fun: Callable) -> None:
    """Declare `fun` linear in each argument: its JVP is `fun` of the tangent."""
    def jvp(argnum, g, ans, args, kwargs):
        args = list(args)
        args[argnum] = g
        return fun(*args, **kwargs)
    defjvp_argnum(fun, jvp)


# --- vector spaces ----------------------------------------------------------------------------
class VSpace:
    """The vector space a value lives in (autograd's ``vspace``): its zeros, ones, random
    and basis vectors, and its sum, scaling and real inner product, written with funcgrad
    operations (so they differentiate)."""

    iscomplex = False

    def zeros(self):
        raise NotImplementedError

    def ones(self):
        raise NotImplementedError

    def randn(self):
        raise NotImplementedError

    def standard_basis(self) -> Iterator:
        raise NotImplementedError

    def add(self, x, y):
        raise NotImplementedError

    def scalar_mul(self, x, a):
        raise NotImplementedError

    def inner_prod(self, x, y):
        raise NotImplementedError

    def covector(self, x):
        raise NotImplementedError

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash((type(self), repr(self.__dict__)))

    def __repr__(self):
        return f"{type(self).__name__}_{self.__dict__}"


class _ArrayVSpace(VSpace):
    def __init__(self, value):
        self.shape = tuple(np.shape(value)) if not isinstance(value, Array) else tuple(value.shape)
        dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)
        self.dtype = np.dtype(dtype) if np.dtype(dtype).kind in "fc" else np.dtype(np.float64)
        self.iscomplex = self.dtype.kind == "c"

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * (2 if self.iscomplex else 1)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def zeros(self):
        return wrap(np.zeros(self.shape, self.dtype))

    def ones(self):
        return wrap(np.ones(self.shape, self.dtype) * (1 + 1j if self.iscomplex else 1))

    def randn(self):
        out = np.random.randn(*self.shape)
        if self.iscomplex:
            out = out + 1j * np.random.randn(*self.shape)
        return wrap(np.asarray(out, self.dtype))

    def standard_basis(self):
        units = (1.0, 1j) if self.iscomplex else (1.0,)
        for idx in np.ndindex(*self.shape):
            for unit in units:
                v = np.zeros(self.shape, self.dtype)
                v[idx] = unit
                yield wrap(v)

    def add(self, x, y):
        return wrap(P.add(x, y))

    def scalar_mul(self, x, a):
        return wrap(P.multiply(x, a))

    def inner_prod(self, x, y):
        return wrap(P.real(P.sum(P.multiply(P.conj_if_complex(x), y))))

    def covector(self, x):
        return wrap(P.conj_if_complex(x))


class _ContainerVSpace(VSpace):
    def __init__(self, value):
        self.kind = type(value) if not isinstance(value, dict) else dict
        items = value.items() if isinstance(value, dict) else enumerate(value)
        self.spaces = {k: vspace(v) for k, v in items}

    def _build(self, parts: dict):
        if self.kind is dict:
            return dict(parts)
        values = [parts[k] for k in sorted(parts)]
        return tuple(values) if self.kind is tuple else list(values)

    def _parts(self, x) -> dict:
        return dict(x.items()) if self.kind is dict else dict(enumerate(x))

    @property
    def size(self) -> int:
        return sum(s.size for s in self.spaces.values())

    def zeros(self):
        return self._build({k: s.zeros() for k, s in self.spaces.items()})

    def ones(self):
        return self._build({k: s.ones() for k, s in self.spaces.items()})

    def randn(self):
        return self._build({k: s.randn() for k, s in self.spaces.items()})

    def standard_basis(self):
        for key, space in self.spaces.items():
            for unit in space.standard_basis():
                parts = {k: s.zeros() for k, s in self.spaces.items()}
                parts[key] = unit
                yield self._build(parts)

    def _map(self, method, *values, extra=()):
        parts = [self._parts(v) for v in values]
        return self._build({k: getattr(s, method)(*[p[k] for p in parts], *extra)
                            for k, s in self.spaces.items()})

    def add(self, x, y):
        return self._map("add", x, y)

    def scalar_mul(self, x, a):
        return self._map("scalar_mul", x, extra=(a,))

    def inner_prod(self, x, y):
        px, py = self._parts(x), self._parts(y)
        total = None
        for k, s in self.spaces.items():
            term = s.inner_prod(px[k], py[k])
            total = term if total is None else wrap(P.add(total, term))
        return wrap(0.0) if total is None else total

    def covector(self, x):
        return self._map("covector", x)

    def __eq__(self, other):
        return (type(self) is type(other) and self.kind is other.kind
                and self.spaces == other.spaces)

    def __hash__(self):
        return hash((self.kind, tuple(self.spaces.items())))


def vspace(value: Any) -> VSpace:
    """The vector space of `value` (an array, a number, or lists, tuples and dicts of them).

    >>> from funcgrad.extend import vspace
    >>> vs = vspace([1.0, [2.0, 3.0]])
    >>> vs.size, vs.inner_prod(vs.ones(), vs.ones()).item()
    (3, 3.0)
    """
    if isinstance(value, (list, tuple, dict)):
        return _ContainerVSpace(value)
    if isinstance(value, (Array, np.ndarray, np.generic, int, float, complex)):
        return _ArrayVSpace(value)
    raise TypeError(f"vspace: no vector space for a {type(value).__name__}; use arrays, "
                    "numbers, or lists, tuples and dicts of them")
