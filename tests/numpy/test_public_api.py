"""Every public function of funcgrad.numpy, .linalg, .fft and funcgrad.scipy's modules carries a
docstring with a runnable example, which pytest's doctest run collects and checks."""
from __future__ import annotations

import doctest
import importlib
import importlib.util
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "tools" / "gen_stubs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


# funcgrad.numpy's namespaces and every public module of funcgrad.scipy (found by walking
# it): each module's declared functions, as the stub generator reads them
DECLARED = {module: exports for module, exports, _ in _generator().namespaces()}
NAMESPACES = sorted(DECLARED)


def _declared(module):
    return importlib.import_module(module), DECLARED[module]


@pytest.mark.parametrize("module", NAMESPACES)
def test_every_exported_function_has_an_example(module):
    mod, ns = _declared(module)
    names = set(ns.exports) | {n for n in mod.__all__ if callable(getattr(mod, n))
                               and getattr(getattr(mod, n), "__module__", None) == module}
    missing = sorted(n for n in names if ">>>" not in (getattr(mod, n).__doc__ or ""))
    assert not missing, (
        f"{module}: {missing} have no doctest example; write one in the docstring, or add a "
        "call to EXAMPLE_CALLS in tools/gen_stubs.py and run python tools/gen_stubs.py")


@pytest.mark.parametrize("module", NAMESPACES)
def test_doctest_collects_every_example(module):
    """doctest only finds a function whose __module__ is the module it is an attribute of."""
    mod, ns = _declared(module)
    # a function is collected once, under one of its names (amax is max)
    found = {t.docstring for t in doctest.DocTestFinder().find(mod) if t.examples}
    for name, fn in ns.exports.items():
        assert fn.__module__ == module, f"{module}.{name}.__module__ is {fn.__module__!r}"
        assert getattr(mod, name) is fn, f"{module}.{name} is not the declared function"
        assert fn.__doc__ in found, f"doctest does not collect the example of {module}.{name}"


def test_a_generated_example_holds_a_derivative():
    import funcgrad.numpy as fnp
    assert "fg.grad(fnp.sin)(0.5)" in fnp.sin.__doc__
    assert "Array(0.87758256, dtype=float64)" in fnp.sin.__doc__


def test_an_example_is_appended_only_where_the_docstring_has_none():
    from funcgrad._src.declare import Namespace
    ns = Namespace("funcgrad.numpy", {"own": ">>> 1 + 1\n2", "bare": ">>> 2 + 2\n4"})

    def own():
        """Has its own.

        >>> 0
        0
        """

    def bare():
        """Has none."""
    own = ns.export(own)
    bare = ns.export(bare)
    assert ">>> 1 + 1" not in own.__doc__
    assert bare.__doc__ == "Has none.\n\n>>> 2 + 2\n4"
    assert sys.modules["funcgrad.numpy"]  # the namespace object touched no module


def test_export_wraps_what_a_function_returns():
    """A family function may return what primitives return (raw NumPy values); the public
    name always hands back Arrays, inside tuples and lists too."""
    import numpy as np

    from funcgrad._src.core import Array
    from funcgrad._src.declare import Namespace
    ns = Namespace("funcgrad.numpy")

    def pair(x: float) -> tuple:
        return np.float64(x), [np.ones(2), Array(np.zeros(1))]
    public = ns.export(pair)
    first, (second, third) = public(2.0)
    assert all(type(v) is Array for v in (first, second, third))
    assert first.item() == 2.0 and public.__wrapped__ is pair


def test_where_returns_an_array_and_no_private_name_is_public():
    import funcgrad.numpy as fnp
    from funcgrad._src.core import Array
    out = fnp.where(fnp.array([True, False]), 1.0, 2.0)
    assert type(out) is Array and out.tolist() == [1.0, 2.0]
    assert all(type(i) is Array for i in fnp.where(fnp.array([0.0, 3.0])))
    assert not [n for n in fnp.__all__ if n.startswith("_") and not n.startswith("__")]
