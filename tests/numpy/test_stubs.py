"""The typing stubs of funcgrad.numpy, .linalg, .fft and every module of funcgrad.scipy:
current, complete, and accepted by mypy (when mypy is installed; it is not a test
dependency)."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from funcgrad._src.core import Array
from funcgrad.numpy._typing import ArrayLike, Axis

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "tools" / "gen_stubs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def test_committed_stubs_equal_the_generated_ones():
    for path, text in _generator().render_stubs().items():
        assert path.exists(), f"{path.relative_to(ROOT)} is missing: run python tools/gen_stubs.py"
        assert path.read_text() == text, (
            f"{path.relative_to(ROOT)} is out of date: run python tools/gen_stubs.py --stubs")


def _stub_names(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.asname)
    return names


# funcgrad.numpy's namespaces and every public module of funcgrad.scipy, as the generator
# finds them (nothing here names a module's internals)
MODULES = [module for module, _, _ in _generator().namespaces()]


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_has_a_stub(module):
    mod = importlib.import_module(module)
    stub = pathlib.Path(mod.__file__).with_suffix(".pyi")
    missing = sorted(set(mod.__all__) - _stub_names(stub))
    assert not missing, f"{stub.name} lacks {missing}: run python tools/gen_stubs.py --stubs"


def test_generated_signatures_read_the_declarations():
    """A few signatures, spelled out: arrays positional as NumPy's ufuncs name them,
    parameters from the primitive's declaration, return types of the query functions."""
    gen = _generator()
    import funcgrad.numpy as fnp
    from funcgrad.numpy import linalg
    from funcgrad.numpy._namespace import ns
    exports = ns.exports
    assert gen.stub_of("funcgrad.numpy", "sin", fnp.sin) == (
        "def sin(x: ArrayLike, /) -> Array: ...\n")
    assert gen.stub_of("funcgrad.numpy", "add", exports["add"]) == (
        "def add(x1: ArrayLike, x2: ArrayLike, /) -> Array: ...\n")
    assert gen.stub_of("funcgrad.numpy", "round", exports["round"]) == (
        "def round(x: ArrayLike, /, decimals: int = ...) -> Array: ...\n")
    assert gen.stub_of("funcgrad.numpy", "ndim", exports["ndim"]) == (
        "def ndim(a: ArrayLike, /) -> int: ...\n")
    assert gen.stub_of("funcgrad.numpy.linalg", "slogdet", linalg.ns.exports["slogdet"]) == (
        "def slogdet(a: ArrayLike) -> tuple[Array, Array]: ...\n")


def test_an_unannotated_function_fails_the_generator():
    gen = _generator()

    def annotated(a: ArrayLike, axis: Axis = None) -> Array:
        return a

    def bare(a, axis=None):
        return a
    gen._UNKNOWN.clear()
    assert gen.stub_of("funcgrad.numpy", "annotated", annotated) == (
        "def annotated(a: ArrayLike, axis: Axis = ...) -> Array: ...\n")
    assert gen._UNKNOWN == []
    gen.stub_of("funcgrad.numpy", "bare", bare)
    assert gen._UNKNOWN == ["funcgrad.numpy.bare(a): annotate it in the source",
                            "funcgrad.numpy.bare(axis): annotate it in the source",
                            "funcgrad.numpy.bare: annotate its return type in the source"]
    gen._UNKNOWN.clear()


def test_a_primitive_parameter_of_unknown_name_fails_the_generator():
    from funcgrad._src.declare import Namespace, nondiff
    gen = _generator()

    def impl(x, wibble=1):
        return x
    fn = Namespace("funcgrad.numpy").public(nondiff("novel", impl, params=("wibble",)))
    gen._UNKNOWN.clear()
    assert gen.stub_of("funcgrad.numpy", "novel", fn) == (
        "def novel(x: ArrayLike, /, wibble: Any = ...) -> Array: ...\n")
    assert gen._UNKNOWN == ["funcgrad.numpy.novel(wibble): add 'wibble' to PARAM_TYPES"]
    gen._UNKNOWN.clear()


# Array's operators and methods are attached at run time (funcgrad/numpy/_methods.py), so a
# type checker does not see them yet; this file sticks to functions.
TYPED_USAGE = '''
import funcgrad.numpy as fnp
import funcgrad.scipy.special as fss
from funcgrad.scipy.stats import norm

x = fnp.array([1.0, 2.0])
y: fnp.ndarray = fnp.add(fnp.sin(x), fnp.sum(x, axis=0, keepdims=True))
m = fnp.linalg.inv(fnp.eye(2))
w, v = fnp.linalg.eigh(m)
q = fnp.fft.rfft([1.0, 2.0, 3.0], n=4, norm="ortho")
shape: tuple[int, ...] = fnp.shape(x)
same: bool = fnp.allclose(x, [1.0, 2.0])
parts: list[fnp.ndarray] = fnp.split(x, 2)
e = fss.logsumexp(x, axis=0)
p = norm.pdf(0.0, loc=1.0)
c = fnp.concatenate([x, [3.0]], axis=0)
ops: fnp.ndarray = (x + 1.0) * 2.0 - abs(-x) / x.mean() ** 2 + x[0] @ x.T
reveal_type(x.reshape(2, 1).astype("float32").T)
reveal_type(fnp.where(fnp.greater(x, 0), x, 0.0))
reveal_type(fnp.where(x))
reveal_type(fnp.linalg.svd(m))
reveal_type(fnp.linalg.svd(m, compute_uv=False))
fnp.sin(x, axis=0)
fnp.sum(x, axis="rows")
n: int = fnp.shape(x)
x.sum(axis="rows")
'''


def test_mypy_accepts_typed_usage_and_rejects_wrong_calls(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (it is not a test dependency)")
    usage = tmp_path / "usage.py"
    usage.write_text(textwrap.dedent(TYPED_USAGE))
    env = dict(os.environ, MYPYPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), "--python-version", "3.10", str(usage)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    lines = [line.split(":", 1)[1] for line in result.stdout.splitlines()
             if line.startswith(("usage.py:", f"{usage}:"))]
    source = textwrap.dedent(TYPED_USAGE).splitlines()
    line_of = {text: i + 1 for i, text in enumerate(source)}
    reveals = {int(line.split(":")[0]): line.split('Revealed type is ')[1]
               for line in lines if "Revealed type" in line}
    errors = sorted({int(line.split(":")[0]) for line in lines if ": error:" in line})
    array = '"funcgrad._src.core.Array"'
    three = f'"tuple[{array[1:-1]}, {array[1:-1]}, {array[1:-1]}]"'
    assert reveals == {
        line_of['reveal_type(x.reshape(2, 1).astype("float32").T)']: array,
        line_of["reveal_type(fnp.where(fnp.greater(x, 0), x, 0.0))"]: array,
        line_of["reveal_type(fnp.where(x))"]: '"tuple[funcgrad._src.core.Array, ...]"',
        line_of["reveal_type(fnp.linalg.svd(m))"]: three,
        line_of["reveal_type(fnp.linalg.svd(m, compute_uv=False))"]: array,
    }, result.stdout
    assert errors == [line_of["fnp.sin(x, axis=0)"], line_of['fnp.sum(x, axis="rows")'],
                      line_of["n: int = fnp.shape(x)"], line_of['x.sum(axis="rows")']], result.stdout
