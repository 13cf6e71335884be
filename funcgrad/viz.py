"""Seeing what autodiff recorded: the tape of a functional transform, or the graph of
``grad_fn`` nodes behind a mutable tensor, as text, as Graphviz DOT, or as SVG laid out and
drawn here (no Graphviz needed), alone or side by side on one self-contained HTML page.

>>> import funcgrad.mutable as torch
>>> x = torch.tensor(3.0, requires_grad=True)
>>> print(graph((x + 1) * (2 * x)))
MulBackward0
├── AddBackward0
│   └── AccumulateGrad  (leaf: float32[])
└── MulBackward0
    └── AccumulateGrad  (leaf: float32[])  [seen above]
"""
from __future__ import annotations

import html
import linecache
import os
from typing import Any, Callable, Iterable

import numpy as np

from . import mutable, numpy as fnp
from ._src.tape_print import Tape, make_tape
from .mutable import Tensor
from .mutable.autograd.graph import Node, SavedTensorInfo, saved_tensors, writes

__all__ = ["make_tape", "graph", "to_dot", "mutable_graph", "Graph", "GraphNode", "SavedTensor",
           "draw_tape", "TapeDrawing", "side_by_side", "html_page"]


def _root(tensor_or_node: Any):
    node = getattr(tensor_or_node, "grad_fn", tensor_or_node)
    if node is None:
        raise ValueError("this tensor has no grad_fn: it is a leaf, or was made without "
                         "requires_grad (or under no_grad); there is no graph to show")
    if not hasattr(node, "next_functions"):
        raise TypeError(f"graph() takes a funcgrad.mutable tensor or grad_fn node, got "
                        f"{type(tensor_or_node).__name__}; for the functional model use make_tape")
    return node


def _label(node) -> str:
    name = type(node).__name__
    variable = getattr(node, "variable", None)
    if variable is not None:
        return f"{name}  (leaf: {_tensor_type(variable)})"
    return name


def _tensor_type(tensor) -> str:
    shape = "".join(f"{list(tensor.shape)}".split())
    return str(tensor.dtype).replace("torch.", "") + shape


def _children(node) -> list:
    return [child for child, _ in node.next_functions if child is not None]


def graph(tensor_or_node: Any) -> str:
    """The ``grad_fn`` graph behind a `funcgrad.mutable` tensor, drawn as a tree from the
    output down to the leaves' ``AccumulateGrad`` nodes. A node reached a second time is
    marked ``[seen above]`` and not expanded again. Iterative: deep graphs are fine.

    >>> import funcgrad.mutable as torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> print(graph((w * 2).sum()))
    SumBackward0
    └── MulBackward0
        └── AccumulateGrad  (leaf: float32[2])
    """
    root = _root(tensor_or_node)
    lines = [_label(root)]
    seen = {id(root)}
    # Each stack item: (node, the prefix for its line, the prefix for its children's lines).
    stack = [(child, "", last) for child, last in reversed(list(_with_last(_children(root))))]
    while stack:
        node, prefix, last = stack.pop()
        branch = "└── " if last else "├── "
        repeated = id(node) in seen
        lines.append(prefix + branch + _label(node) + ("  [seen above]" if repeated else ""))
        if repeated:
            continue
        seen.add(id(node))
        child_prefix = prefix + ("    " if last else "│   ")
        for child, child_last in reversed(list(_with_last(_children(node)))):
            stack.append((child, child_prefix, child_last))
    return "\n".join(lines)


def _with_last(items: list):
    for i, item in enumerate(items):
        yield item, i == len(items) - 1


def to_dot(tensor_or_node: Any) -> str:
    """The same graph in Graphviz DOT (render with ``dot -Tpng``); edges point from each
    node to the node that receives its gradient, as the backward pass runs.
    (`mutable_graph` gives the annotated picture: saved tensors, versions, broken edges.)

    >>> import funcgrad.mutable as torch
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> print(to_dot(x.exp()).splitlines()[1])
      n0 [label="ExpBackward0"];
    """
    root = _root(tensor_or_node)
    ids: dict[int, str] = {}
    lines = ["digraph grad_fn {"]
    edges = []
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in ids:
            continue
        ids[id(node)] = f"n{len(ids)}"
        label = _label(node).replace('"', "'")
        lines.append(f'  {ids[id(node)]} [label="{label}"];')
        for child in _children(node):
            edges.append((node, child))
            stack.append(child)
    lines += [f"  {ids[id(a)]} -> {ids[id(b)]};" for a, b in edges]
    lines.append("}")
    return "\n".join(lines)


# --- the mutable graph with what each node saved -------------------------------------------
# funcgrad.mutable tells, per node, the tensors it saved (each with the version it had when
# saved, the version now and the in-place writes since) through its public, read-only
# `autograd.graph.saved_tensors` and `writes`; this section is the one place that reads them.

class SavedTensor:
    """A tensor a node saved for its backward: ``role`` (``self``, ``other``, ``arg2``,
    ``result``), ``type`` (``float32[2]``), the version it had when saved and the version
    its storage has now, and ``modified_by`` = (op, file, line) of the last in-place write
    to that storage, or None."""

    __slots__ = ("role", "type", "saved_version", "current_version", "modified_by")

    def __init__(self, role, type_, saved_version, current_version, modified_by) -> None:
        self.role = role
        self.type = type_
        self.saved_version = saved_version
        self.current_version = current_version
        self.modified_by = modified_by

    @property
    def stale(self) -> bool:
        """True when the tensor was written in place after it was saved: backward fails."""
        return self.saved_version != self.current_version

    def __repr__(self) -> str:
        text = f"saved {self.role} {self.type} v{self.saved_version}"
        if self.stale:
            text += f", now v{self.current_version}"
        return text


class GraphNode:
    """One ``grad_fn`` node: ``name`` as PyTorch prints it, ``where`` = (file, line) of the
    operation that made it (known for nodes that saved tensors), ``saved`` tensors, the
    ``tensors`` (names) that currently have it as ``grad_fn``, ``inplace`` = (op, file, line)
    when a named tensor's last write made it, ``freed`` after a backward without
    ``retain_graph``."""

    __slots__ = ("key", "name", "kind", "where", "saved", "tensors", "inplace", "freed",
                 "leaf_type")

    def __init__(self, key: int, name: str, kind: str) -> None:
        self.key = key
        self.name = name
        self.kind = kind            # "leaf", "view", "inplace" or "op"
        self.where = None
        self.saved: list[SavedTensor] = []
        self.tensors: list[str] = []
        self.inplace = None
        self.freed = False
        self.leaf_type = None

    @property
    def conflict(self) -> bool:
        return any(s.stale for s in self.saved)

    def lines(self) -> list[str]:
        """The text drawn inside the node's box, title first."""
        out = [self.name]
        if self.leaf_type:
            out.append(f"leaf {self.leaf_type}")
        if self.tensors:
            out.append(", ".join(self.tensors))
        if self.where is not None:
            out.append(f"made at {_short_where(self.where)}")
        if self.inplace is not None:
            out.append(f"in-place {self.inplace[0]} at {_short_where(self.inplace[1:])}")
        for s in self.saved:
            text = f"saved {s.role}: v{s.saved_version}"
            text += f", now v{s.current_version} ✗" if s.stale else " ✓"
            out.append(text)
            if s.stale and s.modified_by is not None:
                out.append(f"  ✗ written by {s.modified_by[0]} at "
                           f"{_short_where(s.modified_by[1:])}")
        if self.freed:
            out.append("buffers freed")
        return out


_VIEW_NAMES = ("Select", "Slice", "AsStrided", "View", "Transpose", "Permute", "Expand",
               "Unsqueeze", "Squeeze", "Diagonal", "Unbind", "Split", "Narrow", "Alias",
               "Unfold", "TBackward", "Reshape")


def _kind(node) -> str:
    name = node.name() if callable(getattr(node, "name", None)) else type(node).__name__
    if hasattr(node, "variable"):
        return "leaf"
    if "CopySlices" in name:
        return "inplace"
    if any(name.startswith(v) for v in _VIEW_NAMES):
        return "view"
    return "op"


def _short_where(where) -> str:
    path, line = where[0], where[1]
    return f"{os.path.basename(str(path))}:{line}"


def _saved_of(node) -> list:
    """(role, argument position, SavedTensor, where the op ran) for each tensor `node`
    saved, read through funcgrad.mutable's public `autograd.graph.saved_tensors`; empty for
    nodes that keep none or were freed, and for a real torch node (nothing saved shows)."""
    if not isinstance(node, Node):
        return []
    return [(s.name, s.argument, _saved_info(s), s.saved_at) for s in saved_tensors(node)]


def _saved_info(saved: SavedTensorInfo) -> SavedTensor:
    type_ = f"{str(saved.dtype).replace('torch.', '')}[{','.join(str(s) for s in saved.shape)}]"
    last = saved.writes[-1][:3] if saved.writes else None
    return SavedTensor(saved.name, type_, saved.saved_version, saved.version, last)


def last_write(tensor) -> tuple | None:
    """(op, file, line) of the last in-place write to `tensor`'s storage (shared with its
    views), or None when it was never written in place or it is not a funcgrad.mutable
    tensor."""
    if not isinstance(tensor, Tensor):
        return None
    history = writes(tensor)
    return tuple(history[-1][:3]) if history else None


class Graph:
    """The ``grad_fn`` graph behind some `funcgrad.mutable` tensors, read once: ``nodes``
    (`GraphNode`, keyed in discovery order), ``edges`` as (parent key, child key, broken),
    where an edge is broken when its parent saved a tensor that was written in place
    afterwards, so the backward pass cannot go through it. Draw with ``.svg()``, ``.dot()``;
    notebooks show it by itself.

    >>> import funcgrad.mutable as torch
    >>> a = torch.tensor([1.0, 3.0], requires_grad=True)
    >>> b = a + 2
    >>> loss = (b * b).mean()
    >>> b[0] = 1000.0
    >>> g = mutable_graph(loss, names={"a": a, "b": b, "loss": loss})
    >>> [(n.name, s.role, s.saved_version, s.current_version) for n, s in g.conflicts()]
    [('MulBackward0', 'self', 0, 1), ('MulBackward0', 'other', 0, 1)]
    >>> sum(broken for _, _, broken in g.edges)
    2
    >>> "<svg" in g.svg() and "MulBackward0" in g.svg()
    True
    """

    def __init__(self, nodes: dict, edges: list, roots: list) -> None:
        self.nodes = nodes
        self.edges = edges
        self.roots = roots

    def conflicts(self) -> list:
        """(node, saved tensor) for every saved tensor written in place after it was saved."""
        return [(n, s) for n in self.nodes.values() for s in n.saved if s.stale]

    def __len__(self) -> int:
        return len(self.nodes)

    def text(self) -> str:
        """The graph as a tree (output on top), each node with where it was made and what it
        saved; an edge a version conflict breaks is drawn ``╳──``. Iterative."""
        children: dict = {k: [] for k in self.nodes}
        for parent, child, broken in self.edges:
            children[parent].append((child, broken))
        lines: list = []
        seen: set = set()
        stack = [(root, "", "", False) for root in reversed(self.roots)]
        while stack:
            key, prefix, branch, broken = stack.pop()
            node = self.nodes[key]
            mark = "╳── " if broken and branch else branch
            summary = "; ".join(line.strip() for line in node.lines()[1:])
            repeated = key in seen
            lines.append(prefix + mark + node.name + (f"  [{summary}]" if summary else "")
                         + ("  [seen above]" if repeated else "")
                         + ("  <-- version conflict" if broken else ""))
            if repeated:
                continue
            seen.add(key)
            kids = children[key]
            child_prefix = prefix + ("" if not branch else ("    " if branch == "└── " else "│   "))
            for i in range(len(kids) - 1, -1, -1):
                child, child_broken = kids[i]
                stack.append((child, child_prefix, "└── " if i == len(kids) - 1 else "├── ",
                              child_broken))
        return "\n".join(lines)

    def dot(self) -> str:
        """Graphviz DOT with the saved versions, broken edges in red and dashed."""
        lines = ["digraph grad_fn {", "  node [shape=box, fontname=monospace];"]
        for node in self.nodes.values():
            label = "\\n".join(line.replace('"', "'") for line in node.lines())
            style = ', color=red, penwidth=2' if node.conflict else ""
            lines.append(f'  n{node.key} [label="{label}"{style}];')
        for parent, child, broken in self.edges:
            style = ' [color=red, style=dashed, label="version conflict"]' if broken else ""
            lines.append(f"  n{parent} -> n{child}{style};")
        lines.append("}")
        return "\n".join(lines)

    def svg(self, title: str = "") -> str:
        """An SVG picture: the output on top, leaves at the bottom, edges as backward runs."""
        boxes = {k: _Box(n.lines(), _FILL[n.kind], n.conflict) for k, n in self.nodes.items()}
        return _draw(boxes, [(p, c, b) for p, c, b in self.edges], title=title,
                     legend=_GRAPH_LEGEND)

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_html_(self) -> str:
        return self.svg()


def mutable_graph(*tensors: Any, names: dict | None = None) -> Graph:
    """Read the ``grad_fn`` graph behind `tensors` (funcgrad.mutable tensors or nodes), with
    each node's saved tensors and their versions. `names` maps variable names to tensors
    (e.g. a script's globals): each node then lists the tensors whose ``grad_fn`` it is,
    their versions and which tensor each view was taken from. Iterative on graph depth.

    >>> import funcgrad.mutable as torch
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> g = mutable_graph((x * x).exp(), names={"x": x})
    >>> [n.name for n in g.nodes.values()]
    ['ExpBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
    >>> g.nodes[2].tensors, [str(s) for s in g.nodes[1].saved]
    (['x'], ['saved self float32[] v0', 'saved other float32[] v0'])
    """
    names = names or {}
    roots = []
    for t in tensors:
        root = _root(t)
        if root not in roots:
            roots.append(root)
    keys: dict[int, int] = {}
    nodes: dict[int, GraphNode] = {}
    edges: list = []
    stack = list(reversed(roots))
    order = []
    while stack:
        node = stack.pop()
        if id(node) in keys:
            continue
        keys[id(node)] = len(keys)
        order.append(node)
        stack.extend(reversed(_children(node)))
    for node in order:
        key = keys[id(node)]
        name = node.name() if callable(getattr(node, "name", None)) else type(node).__name__
        info = GraphNode(key, name, _kind(node))
        info.freed = bool(getattr(node, "_freed", False))
        variable = getattr(node, "variable", None)
        if variable is not None:
            info.leaf_type = _tensor_type(variable)
        broken_args = set()
        for role, index, s, saved_at in _saved_of(node):
            info.saved.append(s)
            info.where = info.where or saved_at
            if s.stale:
                broken_args.add(index)
        nodes[key] = info
        nexts = node.next_functions
        for i, (child, _) in enumerate(nexts):
            if child is None:
                continue
            # a saved argument breaks its own edge; a saved result (or a Function's tensors,
            # argument None) breaks every edge of the node
            broken = i in broken_args or None in broken_args
            edges.append((key, keys[id(child)], broken))
    by_id = {id(n): keys[id(n)] for n in order}
    tensor_names = {id(t): n for n, t in names.items()}
    for name, t in names.items():
        grad_fn = getattr(t, "grad_fn", None)
        key = by_id.get(id(grad_fn)) if grad_fn is not None else None
        if key is None:
            for node in order:  # a leaf: its AccumulateGrad node holds it
                if getattr(node, "variable", None) is t:
                    key = keys[id(node)]
                    break
        if key is None:
            continue
        label = name
        version = getattr(t, "_version", 0)
        if version:
            label += f" v{version}"
        base = getattr(t, "_base", None)
        if base is not None:
            label += f" (view of {tensor_names.get(id(base), 'a tensor')})"
        nodes[key].tensors.append(label)
        write = last_write(t)
        if version and write is not None and grad_fn is not None and nodes[key].kind != "view":
            nodes[key].inplace = write
            if nodes[key].kind == "op":
                nodes[key].kind = "inplace"
    return Graph(nodes, edges, [keys[id(r)] for r in roots])


# --- the functional tape as a picture ------------------------------------------------------
class TapeDrawing:
    """A `Tape` drawn: inputs on top, each recorded primitive a box, edges from the entries
    it reads; entries of a backward pass shaded apart. ``.svg()``, ``.dot()``; notebooks
    show it by itself.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> d = draw_tape(fg.make_tape(lambda x: fnp.sum(fnp.sin(x)))(fnp.ones(2)))
    >>> "sin" in d.svg() and d.dot().count("->")
    2
    """

    def __init__(self, tape: Tape) -> None:
        self.tape = tape
        self.boxes: dict[int, _Box] = {}
        self.edges: list = []
        owner: dict[int, int] = {}
        for i, kind in enumerate(tape.inputs):
            self.boxes[i] = _Box([f"%{i} input", kind], _FILL["leaf"])
            owner[i] = i
        for e in tape.entries:
            for k in range(len(e.output_types)):
                owner[e.number + k] = e.number
            outs = ", ".join(f"%{e.number + k}" for k in range(len(e.output_types)))
            lines = [f"{outs} = {e.primitive}", " ".join(e.output_types)]
            if e.block:
                lines.append(" › ".join(label for label, _ in e.block))
            backward = any("backward" in label for label, _ in e.block)
            self.boxes[e.number] = _Box(lines, _FILL["backward" if backward else "op"])
            for src in e.inputs:
                if src is not None and src in owner:
                    self.edges.append((owner[src], e.number, False))
        self.outputs = [owner[o] for o in tape.outputs if o is not None and o in owner]
        for key in self.outputs:
            self.boxes[key].lines.append("output")

    def svg(self, title: str = "") -> str:
        return _draw(self.boxes, self.edges, title=title, legend=_TAPE_LEGEND)

    def dot(self) -> str:
        lines = ["digraph tape {", "  node [shape=box, fontname=monospace];"]
        for key, box in self.boxes.items():
            label = "\\n".join(line.replace('"', "'") for line in box.lines)
            lines.append(f'  e{key} [label="{label}"];')
        lines += [f"  e{a} -> e{b};" for a, b, _ in self.edges]
        lines.append("}")
        return "\n".join(lines)

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_html_(self) -> str:
        return self.svg()


def draw_tape(tape: Tape) -> TapeDrawing:
    """Draw a tape made by `make_tape` (see `TapeDrawing`)."""
    if not isinstance(tape, Tape):
        raise TypeError(f"draw_tape() takes a Tape from funcgrad.make_tape(f)(*args), got "
                        f"{type(tape).__name__}")
    return TapeDrawing(tape)


# --- one computation, both models, one page ------------------------------------------------
class SideBySide:
    """``fn(xp, *inputs)`` recorded by both models: ``graph`` (the mutable ``grad_fn``
    graph) and ``tape`` (the functional tape), drawn next to each other by ``html()``."""

    def __init__(self, name: str, graph: Graph, tape: Tape) -> None:
        self.name = name
        self.graph = graph
        self.tape = tape

    def html(self) -> str:
        body = ('<div class="pair"><section><h2>mutable: grad_fn graph</h2>'
                f'{self.graph.svg()}</section><section><h2>functional: tape</h2>'
                f'{draw_tape(self.tape).svg()}</section></div>')
        return html_page(f"{self.name}: both models", body)

    def _repr_html_(self) -> str:
        return self.html()


def side_by_side(fn: Callable, *inputs: Any) -> SideBySide:
    """Record ``fn(xp, *inputs)`` with ``xp = funcgrad.mutable`` (inputs as float64 leaf
    tensors requiring grad) and with ``xp = funcgrad.numpy`` (`make_tape`), for one page.

    >>> import numpy as np
    >>> both = side_by_side(lambda xp, x: (xp.sin(x) * x).sum(), np.array([1.0, 2.0]))
    >>> [n.name for n in both.graph.nodes.values()][:2], both.tape.primitives()
    (['SumBackward0', 'MulBackward0'], ['sin', 'multiply', 'sum'])
    >>> "<svg" in both.html()
    True
    """
    leaves = [mutable.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
              for x in inputs]
    out = fn(mutable, *leaves)
    names = {f"input {i}": t for i, t in enumerate(leaves)}
    names["output"] = out
    g = mutable_graph(out, names=names)
    tape = make_tape(lambda *xs: fn(fnp, *xs))(*[np.asarray(x, dtype=np.float64) for x in inputs])
    tape.name = getattr(fn, "__name__", "fn")
    return SideBySide(getattr(fn, "__name__", "fn"), g, tape)


# --- layout and SVG ------------------------------------------------------------------------
_FILL = {"leaf": "#e3f4e1", "op": "#e8eefb", "view": "#fff4d6", "inplace": "#fde2e2",
         "backward": "#efe6fa"}
_GRAPH_LEGEND = [("leaf", "leaf (AccumulateGrad)"), ("op", "operation"), ("view", "view"),
                 ("inplace", "in-place write")]
_TAPE_LEGEND = [("leaf", "input"), ("op", "forward entry"), ("backward", "backward pass entry")]
_CHAR_W = 7.3     # px per character of 12px monospace
_LINE_H = 16
_PAD = 8
_GAP_X = 24
_GAP_Y = 46


class _Box:
    __slots__ = ("lines", "fill", "alert", "w", "h", "x", "y")

    def __init__(self, lines: list, fill: str, alert: bool = False) -> None:
        self.lines = list(lines)
        self.fill = fill
        self.alert = alert
        self.x = self.y = 0.0

    def measure(self) -> None:
        self.w = max(len(line) for line in self.lines) * _CHAR_W + 2 * _PAD
        self.h = len(self.lines) * _LINE_H + _PAD


def _layers(keys: Iterable, edges: list) -> dict:
    """Longest-path layering (Kahn's order, no recursion): a node one row below its lowest
    parent."""
    keys = list(keys)
    indegree = {k: 0 for k in keys}
    children: dict = {k: [] for k in keys}
    for a, b, _ in edges:
        if a == b:
            continue
        children[a].append(b)
        indegree[b] += 1
    layer = {k: 0 for k in keys}
    ready = [k for k in keys if indegree[k] == 0]
    while ready:
        k = ready.pop()
        for c in children[k]:
            layer[c] = max(layer[c], layer[k] + 1)
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    return layer


def _layout(boxes: dict, edges: list) -> tuple:
    """Place the boxes in rows (longest-path layers) and return (width, height, routes):
    for each edge the points it passes through. An edge that skips rows gets a thin
    stand-in box in each row it crosses, so it is routed between boxes, not under them."""
    layer = _layers(boxes, edges)
    for box in boxes.values():
        box.measure()
    routes = []
    items = dict(boxes)
    layer_of = dict(layer)
    links = []  # (upper key, lower key) after splitting long edges
    for n, (a, b, _) in enumerate(edges):
        chain = [a]
        for r in range(layer[a] + 1, layer[b]):
            dummy = ("edge", n, r)
            stand_in = _Box([""], "none")
            stand_in.w, stand_in.h = 4.0, 0.0
            items[dummy] = stand_in
            layer_of[dummy] = r
            chain.append(dummy)
        chain.append(b)
        links += list(zip(chain, chain[1:]))
        routes.append(chain)
    rows: dict[int, list] = {}
    for k in items:
        rows.setdefault(layer_of[k], []).append(k)
    parents: dict = {k: [] for k in items}
    for a, b in links:
        parents[b].append(a)
    # order each row by the mean position of its parents (one barycentre sweep down)
    position: dict = {}
    for r in sorted(rows):
        row = rows[r]
        if r > 0:
            row.sort(key=lambda k: (sum(position.get(p, 0) for p in parents[k])
                                    / max(1, len(parents[k]))))
        for i, k in enumerate(row):
            position[k] = i
    widths = {r: sum(items[k].w for k in row) + _GAP_X * (len(row) - 1)
              for r, row in rows.items()}
    width = max(widths.values(), default=0) + 2 * _GAP_X
    y = 40.0
    for r in sorted(rows):
        x = (width - widths[r]) / 2
        height = max(items[k].h for k in rows[r])
        for k in rows[r]:
            items[k].x, items[k].y = x, y
            if items[k].fill == "none":  # a stand-in spans its row's height
                items[k].h = height
            x += items[k].w + _GAP_X
        y += height + _GAP_Y
    points = [[(items[k].x + items[k].w / 2, items[k].y, items[k].y + items[k].h)
               for k in chain] for chain in routes]
    return width, y, points


def _route_path(route: list) -> tuple:
    """SVG path data through (x, top, bottom) points, leaving each box at its bottom and
    entering the next at its top; and where to put a label (mid-route)."""
    (x, _, bottom) = route[0]
    d = [f"M{x:.1f},{bottom:.1f}"]
    prev_x, prev_y = x, bottom
    for i, (x, top, bottom) in enumerate(route[1:], 1):
        if top <= prev_y:  # an edge within a row or upwards: enter from below
            top = bottom
        mid = (prev_y + top) / 2
        d.append(f"C{prev_x:.1f},{mid:.1f} {x:.1f},{mid:.1f} {x:.1f},{top:.1f}")
        if i < len(route) - 1:
            d.append(f"L{x:.1f},{bottom:.1f}")
        prev_x, prev_y = x, bottom
    first, second = route[0], route[1]
    label = ((first[0] + second[0]) / 2, (first[2] + second[1]) / 2)
    return " ".join(d), label


def _draw(boxes: dict, edges: list, title: str = "", legend: list = ()) -> str:
    width, height, routes = _layout(boxes, edges)
    legend_width = sum(18 + len(text) * _CHAR_W + 16 for _, text in legend) + 16
    width = max(width, 360, legend_width)
    height += 30
    esc = html.escape
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
             'fill="#555"/></marker><marker id="arrow-red" viewBox="0 0 10 10" refX="9" refY="5" '
             'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path '
             'd="M0,0 L10,5 L0,10 z" fill="#c62828"/></marker></defs>']
    if title:
        parts.append(f'<text x="8" y="18" font-size="14" font-weight="bold">{esc(title)}</text>')
    for (a, b, broken), route in zip(edges, routes):
        path, label_at = _route_path(route)
        if broken:
            parts.append(f'<path class="edge broken" d="{path}" fill="none" stroke="#c62828" '
                         'stroke-width="2.5" stroke-dasharray="6,4" marker-end="url(#arrow-red)">'
                         '<title>broken: a saved tensor was modified in place</title></path>')
            parts.append(f'<text x="{label_at[0] + 6:.1f}" y="{label_at[1]:.1f}" fill="#c62828" '
                         'font-weight="bold">✗ version conflict</text>')
        else:
            parts.append(f'<path class="edge" d="{path}" fill="none" stroke="#555" '
                         'stroke-width="1.3" marker-end="url(#arrow)"/>')
    for key, box in boxes.items():
        stroke = ' stroke="#c62828" stroke-width="3"' if box.alert else ' stroke="#445"'
        parts.append(f'<g class="node" id="node{key}"><rect x="{box.x:.1f}" y="{box.y:.1f}" '
                     f'width="{box.w:.1f}" height="{box.h:.1f}" rx="6" fill="{box.fill}"{stroke}/>')
        for i, line in enumerate(box.lines):
            weight = ' font-weight="bold"' if i == 0 else ""
            colour = ' fill="#c62828"' if "✗" in line else ""
            parts.append(f'<text x="{box.x + _PAD:.1f}" y="{box.y + _PAD + 9 + i * _LINE_H:.1f}"'
                         f'{weight}{colour}>{esc(line)}</text>')
        parts.append("</g>")
    x = 8.0
    for kind, text in legend:
        parts.append(f'<rect x="{x:.0f}" y="{height - 22:.0f}" width="14" height="14" '
                     f'fill="{_FILL[kind]}" stroke="#445"/><text x="{x + 18:.0f}" '
                     f'y="{height - 11:.0f}">{esc(text)}</text>')
        x += 18 + len(text) * _CHAR_W + 16
    parts.append("</svg>")
    return "\n".join(parts)


# --- pages ---------------------------------------------------------------------------------
_CSS = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 20px; }
pre, code { font-family: monospace; font-size: 13px; }
pre { white-space: pre-wrap; }
.pair { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
.pair section { border: 1px solid #ccd; border-radius: 6px; padding: 8px; overflow: auto; }
.source { border: 1px solid #ccd; border-radius: 6px; padding: 6px 0; }
.source div { white-space: pre; font-family: monospace; font-size: 13px; padding: 0 8px; }
.source .no { color: #888; display: inline-block; width: 3em; }
.source .saved { background: #fff1c2; } .source .modified { background: #ffd6d6; }
.source .tag { color: #a00; font-weight: bold; }
.error { color: #b00; font-weight: bold; } .ok { color: #176b17; font-weight: bold; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccd; padding: 3px 8px; }
"""


def html_page(title: str, body: str) -> str:
    """A self-contained HTML page (inline CSS and SVG; nothing fetched from a network).

    >>> "<title>t</title>" in html_page("t", "<p>x</p>")
    True
    """
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n"
            f"<body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


def source_listing(path: str, marks: dict) -> str:
    """HTML of a source file with line numbers; `marks` maps a line number to
    (css class, tag text), e.g. ``{5: ("saved", "saved here")}``."""
    out = ['<div class="source">']
    lines = linecache.getlines(path)
    for number, text in enumerate(lines, 1):
        cls, tag = marks.get(number, ("", ""))
        tag_html = f'  <span class="tag">◀ {html.escape(tag)}</span>' if tag else ""
        out.append(f'<div class="{cls}" id="line{number}"><span class="no">{number}</span>'
                   f"{html.escape(text.rstrip())}{tag_html}</div>")
    out.append("</div>")
    return "".join(out)
