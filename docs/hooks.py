"""MkDocs hooks: the parts of pages that are generated from the code when the site is built.

A page asks for a generated part with an HTML comment on a line of its own:
``<!-- generated: mutable-api -->`` lists what `funcgrad.mutable` covers of PyTorch's API;
``explain-graph`` and ``side-by-side`` are pictures drawn by `funcgrad.viz`.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])

MARK = "<!-- generated: {} -->"

# (title, module, attribute within it or "" for the module itself)
MUTABLE_SURFACES = [
    ("torch", "funcgrad.mutable", ""),
    ("torch.Tensor", "funcgrad.mutable", "Tensor"),
    ("torch.autograd", "funcgrad.mutable.autograd", ""),
    ("torch.autograd.functional", "funcgrad.mutable.autograd.functional", ""),
    ("torch.nn", "funcgrad.mutable.nn", ""),
    ("torch.nn.functional", "funcgrad.mutable.nn.functional", ""),
    ("torch.nn.init", "funcgrad.mutable.nn.init", ""),
    ("torch.optim", "funcgrad.mutable.optim", ""),
    ("torch.optim.lr_scheduler", "funcgrad.mutable.optim.lr_scheduler", ""),
    ("torch.utils.data", "funcgrad.mutable.utils.data", ""),
]


def _public_names(obj: object) -> list[str]:
    """Names a user of PyTorch would reach for: no imports of helpers, no typing names."""
    if isinstance(obj, type):
        return sorted(n for n in dir(obj) if not n.startswith("_") or n in ("__getitem__",))
    declared = getattr(obj, "__all__", None)
    if declared is not None:
        return sorted(declared)
    names = []
    for name in dir(obj):
        if name.startswith("_"):
            continue
        value = getattr(obj, name)
        module = getattr(value, "__module__", None) or ""
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith("funcgrad.mutable"):
                names.append(name)
        elif module.startswith("funcgrad") or not (callable(value) or inspect.isclass(value)):
            if not (module.startswith("typing") or name == "annotations"):
                names.append(name)
    return sorted(names)


def _module_or_none(name: str) -> types.ModuleType | None:
    """The module, or None where it is not built yet; a module that fails to import fails."""
    parent, _, _ = name.rpartition(".")
    if parent and not hasattr(_module_or_none(parent), "__path__"):
        return None
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


def mutable_api() -> str:
    if ROOT not in sys.path:      # build from this checkout even where funcgrad is not installed
        sys.path.insert(0, ROOT)
    rows = ["| namespace | names | count |", "|---|---|---|"]
    for title, module_name, attribute in MUTABLE_SURFACES:
        obj = _module_or_none(module_name)
        if obj is None:
            continue
        if attribute:
            obj = getattr(obj, attribute)
        names = _public_names(obj)
        rows.append(f"| `{title}` | " + ", ".join(f"`{n}`" for n in names) + f" | {len(names)} |")
    return "\n".join(rows)


def _figure(svg: str) -> str:
    # Markdown ends a raw HTML block at a blank line: keep the picture one block.
    return '<div class="fg-figure">' + "\n".join(l for l in svg.splitlines() if l.strip()) + "</div>"


def explain_graph() -> str:
    """The third seed post's version conflict, drawn by funcgrad.viz."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    import funcgrad.mutable as torch
    from funcgrad import viz

    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    return _figure(viz.mutable_graph(loss, names={"a": a, "b": b, "loss": loss}).svg())


def side_by_side() -> str:
    """One computation recorded by both models: grad_fn graph and tape."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    import numpy as np

    from funcgrad import viz

    both = viz.side_by_side(lambda xp, x: (xp.tanh(x) * x).sum(), np.array([0.5, -1.0]))
    return (_figure(both.graph.svg(title="mutable: grad_fn graph")) + "\n\n"
            + _figure(viz.draw_tape(both.tape).svg()))


GENERATORS = {"mutable-api": mutable_api, "explain-graph": explain_graph,
              "side-by-side": side_by_side}


def on_page_markdown(markdown: str, page, config, files) -> str:
    for key, generate in GENERATORS.items():
        if MARK.format(key) in markdown:
            markdown = markdown.replace(MARK.format(key), generate())
    return markdown
