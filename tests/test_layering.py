"""Imports go one way: the engine (`funcgrad._src`) sits below every namespace and knows no
NumPy function, so importing all of it loads nothing of `funcgrad.numpy`."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import funcgrad

PACKAGE_DIR = pathlib.Path(funcgrad.__file__).parent
ENGINE_MODULES = sorted(p.stem for p in (PACKAGE_DIR / "_src").glob("*.py")
                        if p.stem != "__init__")

# The parent package's __init__ imports the namespaces for users; a bare package object in
# its place lets the engine be imported alone.
PROBE = """
import importlib, sys, types
package = types.ModuleType("funcgrad")
package.__path__ = [{path!r}]
sys.modules["funcgrad"] = package
for name in {modules!r}:
    importlib.import_module("funcgrad._src." + name)
print(sorted(m for m in sys.modules if m.startswith("funcgrad")))
"""


def test_importing_the_engine_loads_nothing_of_funcgrad_numpy():
    assert {"core", "reverse", "custom", "transforms", "batching"} <= set(ENGINE_MODULES)
    code = PROBE.format(path=str(PACKAGE_DIR), modules=ENGINE_MODULES)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    loaded = eval(done.stdout)
    assert not [m for m in loaded if m.startswith("funcgrad.numpy")], loaded
    assert all(m == "funcgrad" or m.startswith("funcgrad._src") for m in loaded), loaded


def test_engine_modules_import_nothing_inside_functions():
    """No circles held together by imports inside functions."""
    import ast
    offenders = []
    for name in ENGINE_MODULES:
        tree = ast.parse((PACKAGE_DIR / "_src" / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)) and \
                            (isinstance(inner, ast.ImportFrom) and inner.level > 0):
                        offenders.append(f"{name}.{node.name}")
    assert not offenders, offenders
