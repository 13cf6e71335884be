"""The oracle corpus: loading its snippets, turning their results into plain data, diffing them.

Each module beside this file holds snippets: public functions ``snippet(torch, nn)`` that use
only the torch-like module they are given and return plain data (dicts, lists, str, int,
float, bool, None). The same snippet runs on real PyTorch and on ``funcgrad.mutable``;
``record_expectations.py`` stores PyTorch's results in ``expected.json`` and
``test_oracle.py`` compares. Helpers inside a corpus module start with an underscore.

Conventions: errors are caught inside the snippet and returned as ``[type name, message]``;
results never depend on random values (the two libraries' streams differ) or on memory
addresses. To add a snippet, write the function, run ``record_expectations.py`` with the
oracle interpreter, and commit the snippet and ``expected.json`` together.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

CORPUS_DIR = Path(__file__).resolve().parent

# Floats mostly come from float32 tensors: allow for a different summation order
# (about 1e-5 relative), no more.
REL_TOL = 1e-5
ABS_TOL = 1e-6


def _load_module(path: Path) -> ModuleType:
    # Loaded by path under a private name: pytest's importlib mode puts no test folder
    # on sys.path, and these modules must never shadow anything importable.
    spec = importlib.util.spec_from_file_location(f"_mutable_oracle_corpus_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_snippets() -> dict[str, Callable[..., Any]]:
    """Every snippet of the corpus, keyed ``"module.function"``, in file and source order.

    >>> snippets = load_snippets()
    >>> len(snippets) >= 150 and "seeds.rnn_like_select_assignment" in snippets
    True
    """
    snippets: dict[str, Callable[..., Any]] = {}
    for path in sorted(CORPUS_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = _load_module(path)
        for name, obj in vars(module).items():
            if (callable(obj) and not name.startswith("_")
                    and getattr(obj, "__module__", None) == module.__name__
                    and isinstance(obj, type(load_snippets))):
                snippets[f"{path.stem}.{name}"] = obj
    return snippets


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data; anything not plain becomes a marker string that never matches.

    Exact types on purpose: ``.item()`` must give a Python float, not a NumPy scalar.

    >>> plain({"shape": (2, 3), "grad": [1.5, None], "leaf": True})
    {'shape': [2, 3], 'grad': [1.5, None], 'leaf': True}
    >>> plain(range(2))
    '<not plain data: range range(0, 2)>'
    """
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if type(value) is dict:
        return {str(key): plain(item) for key, item in value.items()}
    return f"<not plain data: {type(value).__qualname__} {value!r}>"


def restore_global_modes(torch_like: Any) -> list[str]:
    """Switch grad mode back on and anomaly mode off; name the modes a snippet left changed.

    A snippet that leaks a global mode would change every snippet after it, so the leak is
    repaired at once and reported as that snippet's failure.
    """
    leaked = []
    if not torch_like.is_grad_enabled():
        torch_like.set_grad_enabled(True)
        leaked.append("grad mode left disabled")
    if torch_like.is_anomaly_enabled():
        torch_like.autograd.set_detect_anomaly(False)
        leaked.append("anomaly detection left enabled")
    return leaked


def _floats_match(expected: float, actual: float) -> bool:
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    return math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def differences(expected: Any, actual: Any, where: str = "result") -> list[str]:
    """Where ``actual`` departs from ``expected`` (both plain data), one line per place.

    >>> differences({"grad": [1.0, 2.0]}, {"grad": [1.0, 2.5]})
    ["result['grad'][1]: expected 2.0, got 2.5"]
    >>> differences([1.0], [1])
    ['result[0]: expected float 1.0, got int 1']
    """
    if type(expected) is not type(actual):
        return [f"{where}: expected {type(expected).__name__} {expected!r}, "
                f"got {type(actual).__name__} {actual!r}"]
    if isinstance(expected, float):
        return [] if _floats_match(expected, actual) else [f"{where}: expected {expected!r}, got {actual!r}"]
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return [f"{where}: expected {len(expected)} items {expected!r}, got {len(actual)} items {actual!r}"]
        found = []
        for index, (want, got) in enumerate(zip(expected, actual)):
            found += differences(want, got, f"{where}[{index}]")
        return found
    if isinstance(expected, dict):
        if expected.keys() != actual.keys():
            return [f"{where}: expected keys {sorted(expected)}, got keys {sorted(actual)}"]
        found = []
        for key in expected:
            found += differences(expected[key], actual[key], f"{where}[{key!r}]")
        return found
    if expected == actual:
        return []
    if isinstance(expected, str) and max(len(expected), len(actual)) > 80:
        return [f"{where}: {_first_string_difference(expected, actual)}"]
    return [f"{where}: expected {expected!r}, got {actual!r}"]


def _first_string_difference(expected: str, actual: str) -> str:
    """Long messages differ in a few characters: show where, then both in full.

    >>> message = "x" * 60 + " [torch.FloatTensor [2, 3]] is at version 1"
    >>> print(_first_string_difference(message, message.replace("[2, 3]", "[3]")).splitlines()[0])
    strings differ from character 81: expected '...atTensor [2, 3]] is at version 1', got '...atTensor [3]] is at version 1'
    """
    at = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b), min(len(expected), len(actual)))
    start = max(0, at - 10)
    prefix = "..." if start else ""
    return (f"strings differ from character {at}: expected {prefix + expected[start:at + 40]!r}, "
            f"got {prefix + actual[start:at + 40]!r}\n"
            f"  expected in full: {expected!r}\n  got in full:      {actual!r}")


def describe(differences_found: list[str], limit: int = 12) -> str:
    """The lines of a failure message, capped at ``limit``.

    >>> describe(["a", "b", "c"], limit=2)
    '3 difference(s):\\n  a\\n  b\\n  ... and 1 more'
    """
    lines = [f"{len(differences_found)} difference(s):"]
    lines += ["  " + line for line in differences_found[:limit]]
    if len(differences_found) > limit:
        lines.append(f"  ... and {len(differences_found) - limit} more")
    return "\n".join(lines)
