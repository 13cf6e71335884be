"""How a namespace declares its functions: one call per function, rules beside the forward.

A `Namespace` collects what a public module exports, so the module's names, the NumPy
functions they stand in for (for ``np.sin(traced)`` dispatch) and the generated docs page
all come from the same declarations.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from .batching import batch_elementwise
from .core import (_NO_PARAMS, Array, Primitive, Tracer, declared, function_handlers,
                   ufunc_handlers, wrap)

__all__ = ["Namespace", "elementwise", "linear", "primitive", "nondiff"]


class Namespace:
    """The public names of one module (``funcgrad.numpy``, ``funcgrad.numpy.linalg``...)."""

    def __init__(self, module: str, examples: dict[str, str] | None = None) -> None:
        self.module = module
        self.exports: dict[str, Callable] = {}
        self.kinds: dict[str, str] = {}
        # Doctest examples for functions whose docstring has none, by public name, written
        # by tools/gen_stubs.py from real runs (pytest's doctest run checks them).
        self.examples = examples or {}

    def export(self, fn: Callable | None = None, *, name: str | None = None,
               numpy: Any = None, kind: str = "differentiable", wraps: bool = True):
        """Make `fn` a public name; `numpy` is the NumPy function (or ufunc) it stands in for.

        The public function returns `Array`s (results of `fn` that are raw values, or
        tuples and lists of them, are wrapped), so `fn` may return what primitives return.
        ``wraps=False`` exports `fn` as it is: for questions answered with Python values
        (``shape``, ``allclose``), or for a function that wraps its results itself."""
        def register(fn):
            public_name = name or fn.__name__
            public_fn = _returning_arrays(fn) if wraps else fn
            self.exports[public_name] = public_fn
            self.kinds[public_name] = kind
            public_fn.__module__ = self.module
            self._add_example(public_fn, public_name)
            if numpy is not None:
                for np_fn in (numpy if isinstance(numpy, (tuple, list)) else (numpy,)):
                    table = ufunc_handlers if type(np_fn).__name__ == "ufunc" else function_handlers
                    table[np_fn] = public_fn
            return public_fn
        return register(fn) if fn is not None else register

    def _add_example(self, fn: Callable, public_name: str) -> None:
        doc = fn.__doc__ or ""
        # "reshape_public" is renamed "reshape" once exported: its example is under the new name
        example = self.examples.get(public_name.removesuffix("_public"))
        if example and ">>>" not in doc:
            fn.__doc__ = doc.rstrip() + "\n\n" + example

    def public(self, prim: Primitive, *, name: str | None = None, numpy: Any = None,
               doc: str = "") -> Callable:
        """Export `prim` itself: the public function returns `Array`s, never raw values."""
        if prim.nargs == 1 and not prim.params:
            def public_fn(*args, **params):
                if len(args) != 1 or params:
                    out = prim(*args, **params)
                elif isinstance(x := args[0], Tracer):  # (`prim(x)` spelled out: once per op)
                    trace = x._trace
                    if not trace.alive:
                        raise trace.dead()
                    out = trace.process1(prim, x, _NO_PARAMS)
                else:
                    out = prim.impl(x._value if isinstance(x, Array) else x)
                return out if isinstance(out, Array) else wrap(out)
        else:
            def public_fn(*args, **params):
                out = prim(*args, **params)
                return out if isinstance(out, Array) else wrap(out)
        public_fn.__name__ = public_fn.__qualname__ = name or prim.name
        public_fn.__doc__ = doc or prim.doc or f"Differentiable ``numpy.{prim.name}``."
        public_fn.primitive = prim  # type: ignore[attr-defined]
        kind = "differentiable" if prim.differentiable else "non-differentiable"
        return self.export(public_fn, name=name or prim.name, numpy=numpy, kind=kind,
                           wraps=False)


def _as_arrays(out):
    if isinstance(out, Array):
        return out
    if type(out) is tuple or type(out) is list:
        return type(out)(_as_arrays(o) for o in out)
    return Array(out)


def _returning_arrays(fn: Callable) -> Callable:
    """`fn` with its results wrapped as `Array`s: what every exported function returns."""
    @functools.wraps(fn)
    def public_fn(*args, **kwargs):
        return _as_arrays(fn(*args, **kwargs))
    return public_fn


def primitive(name: str, impl: Callable, **kwargs) -> Primitive:
    """A primitive with hand-written rules (see `Primitive` for every keyword)."""
    return declared(Primitive(name, impl, **kwargs))


def _times(deriv: Callable, nargs: int) -> Callable:
    """``ct * deriv`` (or ``t * deriv``), with the common arities spelled out for speed."""
    if nargs == 1:
        def rule1(g, out, x):
            return g * deriv(out, x)
        rule1.deriv = deriv  # what the rule reads is what deriv reads (see residuals.py)
        return rule1
    if nargs == 2:
        def rule2(g, out, x, y):
            return g * deriv(out, x, y)
        rule2.deriv = deriv
        return rule2

    def rule(g, out, *args, **params):
        return g * deriv(out, *args, **params)
    rule.deriv = deriv
    return rule


def elementwise(name: str, impl: Callable, *derivs: Callable | None,
                batch: Callable = batch_elementwise, **kwargs) -> Primitive:
    """A broadcasting elementwise function from its local derivatives, one per argument:
    ``deriv(out, *args) -> d out / d arg``. Both rules follow: VJP ``ct * d``, JVP ``t * d``
    (the same product: a VJP is the plain transpose, also for complex values, as in JAX; see
    docs/complex.md). A ``None`` derivative marks an argument that carries no derivative."""
    rules = tuple(None if d is None else _times(d, len(derivs)) for d in derivs)
    return declared(Primitive(name, impl, nargs=len(derivs), vjps=rules, jvps=rules,
                              batch=batch, **kwargs))


def linear(name: str, impl: Callable, *transposes: Callable | None, nargs: int | None = None,
           batch: Callable | None = None, **kwargs) -> Primitive:
    """A function linear in its array arguments jointly. Its JVP is itself; each
    ``transposes[i](ct, out, *args, **params)`` gives the VJP for argument ``i``."""
    return declared(Primitive(name, impl, nargs=len(transposes) if nargs is None else nargs,
                              vjps=transposes, linear=True, batch=batch, **kwargs))


def nondiff(name: str, impl: Callable, *, nargs: int = 1, batch: Callable = batch_elementwise,
            **kwargs) -> Primitive:
    """A function whose result never carries a derivative (comparisons, argmax, floor)."""
    return declared(Primitive(name, impl, nargs=nargs, differentiable=False, batch=batch,
                              **kwargs))
