"""``funcgrad tape MODULE:FUNCTION --shapes ...``: the tape funcgrad records for a function on
example inputs of the given shapes (`funcgrad.make_tape`), as text, a picture or DOT."""
from __future__ import annotations

import html
import importlib
import importlib.util
import inspect
import os
import re
import sys

import numpy as np

from .._src.tape_print import make_tape
from .._src.transforms import value_and_grad
from ..viz import draw_tape, html_page
from .common import UsageError

__all__ = ["parse_shape", "load_function", "tape_command"]


def parse_shape(text: str) -> tuple:
    """``"3"`` -> (3,), ``"2,3"`` or ``"2x3"`` -> (2, 3), ``"()"``, ``""`` or ``"scalar"`` -> ().

    >>> parse_shape("2,3"), parse_shape("4"), parse_shape("scalar")
    ((2, 3), (4,), ())
    """
    body = text.strip().strip("()[]").strip()
    if body in ("", "scalar"):
        return ()
    parts = [p.strip() for p in re.split(r"[,x×]", body) if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise UsageError(f"bad shape {text!r}: write sizes separated by commas, e.g. 3 or 2,3 "
                         "(or 'scalar' for a 0-d input)")
    return tuple(int(p) for p in parts)


def load_function(target: str):
    """``module:function`` or ``path/to/file.py:function`` -> the function."""
    module_name, sep, function_name = target.rpartition(":")
    if not sep or not module_name or not function_name:
        raise UsageError(f"expected MODULE:FUNCTION (e.g. mymodel:loss or path/to/file.py:loss), "
                         f"got {target!r}")
    try:
        if module_name.endswith(".py") or os.sep in module_name:
            if not os.path.isfile(module_name):
                raise UsageError(f"no such file: {module_name}")
            spec = importlib.util.spec_from_file_location(
                os.path.splitext(os.path.basename(module_name))[0], module_name)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_name)
    except UsageError:
        raise
    except ModuleNotFoundError as err:
        raise UsageError(f"cannot import {module_name!r}: {err}") from None
    except Exception as err:
        raise UsageError(f"importing {module_name!r} failed: {type(err).__name__}: {err}") from None
    fn = getattr(module, function_name, None)
    if not callable(fn):
        names = sorted(n for n, v in vars(module).items()
                       if callable(v) and not n.startswith("_") and inspect.isfunction(v))
        raise UsageError(f"{module_name!r} has no function {function_name!r}"
                         + (f" (it has: {', '.join(names[:12])})" if names else ""))
    return fn


def tape_command(target: str, shapes: list, grad: bool = False, html_path: str | None = None,
                 dot_path: str | None = None, seed: int = 0, out=None) -> int:
    out = out or sys.stdout
    fn = load_function(target)
    dims = [parse_shape(s) for s in shapes]
    try:
        params = inspect.signature(fn).parameters.values()
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        required = [p for p in positional if p.default is p.empty]
        variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    except (TypeError, ValueError):
        positional = required = []
        variadic = True
    if not variadic and not len(required) <= len(dims) <= len(positional):
        names = ", ".join(p.name for p in positional)
        raise UsageError(f"{fn.__name__}({names}) takes {len(required)}"
                         + (f" to {len(positional)}" if len(positional) != len(required) else "")
                         + f" arguments; --shapes gave {len(dims)}")
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(d) for d in dims]
    recorded = fn
    if grad:
        recorded = value_and_grad(fn, argnums=tuple(range(len(inputs))))
        recorded.__name__ = f"value_and_grad({fn.__name__})"
    try:
        tape = make_tape(recorded)(*inputs)
    except Exception as err:
        kinds = ", ".join(f"float64[{','.join(map(str, d))}]" for d in dims)
        first = str(err).splitlines()[0] if str(err) else ""
        raise UsageError(f"{fn.__name__}({kinds}) failed on inputs of these shapes: "
                         f"{type(err).__name__}: {first}") from None
    print(tape, file=out)
    if html_path:
        body = (f"<h2>Picture</h2>{draw_tape(tape).svg()}"
                f"<h2>Listing</h2><pre>{html.escape(str(tape))}</pre>")
        with open(html_path, "w", encoding="utf-8") as f:
            f.write(html_page(f"funcgrad tape: {target}", body))
        print(f"wrote {html_path}", file=out)
    if dot_path:
        with open(dot_path, "w", encoding="utf-8") as f:
            f.write(draw_tape(tape).dot() + "\n")
        print(f"wrote {dot_path}", file=out)
    return 0
