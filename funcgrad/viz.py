"""Seeing what autodiff recorded: the tape of a functional transform, or the graph of
``grad_fn`` nodes behind a mutable tensor, as text or as Graphviz DOT.

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

from typing import Any

from ._src.tape_print import make_tape

__all__ = ["make_tape", "graph", "to_dot"]


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
        shape = "".join(f"{list(variable.shape)}".split())
        dtype = str(variable.dtype).replace("torch.", "")
        return f"{name}  (leaf: {dtype}{shape})"
    return name


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
