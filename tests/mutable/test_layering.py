"""The mutable layer's structure: imports at module level only, going one way.

Read from the source with `ast` (nothing is imported), so a circle shows even where Python
would tolerate it. The core reads bottom to top: graph nodes and versions (`_graph`), the
Tensor (`_tensor`), the op table and views (`_ops`), the backward engine (`_autograd`).
"""
from __future__ import annotations

import ast
import pathlib

import pytest

import funcgrad.mutable

ROOT = pathlib.Path(funcgrad.mutable.__file__).parent
PACKAGE = "funcgrad.mutable"
CORE_ORDER = ["_graph", "_tensor", "_ops", "_autograd"]


def _modules() -> dict:
    """Dotted module name (relative to funcgrad.mutable; "" for the package) -> path."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _inner_imports(tree: ast.AST) -> list:
    """Import statements inside a function (or method) body."""
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found.append(node)
    return found


def _targets(name: str, path: pathlib.Path, node: ast.AST) -> set:
    """The funcgrad.mutable modules one module-level import statement loads."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = [p for p in package if p]
    out = set()
    if isinstance(node, ast.ImportFrom):
        if node.level == 0:
            if not (node.module or "").startswith(PACKAGE):
                return out
            base = (node.module or "")[len(PACKAGE):].strip(".").split(".")
        else:
            if node.level - 1 > len(package):
                return out  # above funcgrad.mutable: another package
            base = package[:len(package) - (node.level - 1)]
            base = base + (node.module.split(".") if node.module else [])
        base = [p for p in base if p]
        module = ".".join(base)
        for alias in node.names:
            sub = ".".join(base + [alias.name])
            out.add(sub if sub in MODULES else module)
    else:
        for alias in node.names:
            if alias.name.startswith(PACKAGE + "."):
                out.add(alias.name[len(PACKAGE) + 1:])
    return {t for t in out if t in MODULES and t != name}


def import_graph() -> dict:
    """Module -> the funcgrad.mutable modules it imports at module level."""
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        edges = set()
        for node in tree.body:
            stmts = [node]
            if isinstance(node, (ast.If, ast.Try)):  # `if TYPE_CHECKING:` and try/except
                stmts = list(ast.walk(node))
            for stmt in stmts:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    edges |= _targets(name, path, stmt)
        graph[name] = edges
    return graph


def find_cycle(graph: dict, nodes) -> list | None:
    """A cycle among `nodes` (following only edges between them), or None. Iterative."""
    nodes = set(nodes)
    state = {}
    for start in sorted(nodes):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start] & nodes)))]
        state[start] = "open"
        path = [start]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = "done"
            elif state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = "open"
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph[nxt] & nodes))))
    return None


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_inside_a_function(name):
    path = MODULES[name]
    inner = _inner_imports(ast.parse(path.read_text(), str(path)))
    assert not inner, (f"{path}: imports inside functions at lines "
                       f"{[n.lineno for n in inner]}; import at module level, layer over layer")


def test_the_check_sees_an_inner_import():
    tree = ast.parse("def f():\n    from . import _ops\n    return _ops\n")
    assert [n.lineno for n in _inner_imports(tree)] == [2]


def test_core_import_graph_is_acyclic():
    graph = import_graph()
    core = [m for m in MODULES if not m.startswith(("nn", "optim", "utils")) and m]
    cycle = find_cycle(graph, core)
    assert cycle is None, f"import circle: {' -> '.join(cycle)}"


def test_whole_package_import_graph_is_acyclic():
    graph = import_graph()
    cycle = find_cycle(graph, [m for m in MODULES if m])
    assert cycle is None, f"import circle: {' -> '.join(cycle)}"


def test_core_layers_import_downward_only():
    """Each core layer imports only the layers below it."""
    graph = import_graph()
    for k, lower in enumerate(CORE_ORDER):
        above = set(CORE_ORDER[k + 1:])
        assert not graph[lower] & above, f"{lower} imports {graph[lower] & above} from above"
    assert graph["_tensor"] >= {"_graph"} and graph["_ops"] >= {"_graph", "_tensor"}
    assert graph["_autograd"] >= {"_graph", "_tensor", "_ops"}


def test_no_module_attribute_injected():
    """No module, as it loads, assigns a name into another funcgrad.mutable module
    (``_other.X = ...`` at module level: what once tied `_tensor` to `_autograd`). Setting a
    documented setting at run time (``set_default_dtype``) is not loading."""
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        modules = {alias.asname or alias.name for node in tree.body
                   if isinstance(node, ast.ImportFrom) and node.level and node.module is None
                   for alias in node.names}
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                        assert target.value.id not in modules, (
                            f"{path}:{node.lineno} sets {target.value.id}.{target.attr}")


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert find_cycle(graph, graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}, ["a", "b"]) is None
