"""Pytrees: nested containers whose leaves are arrays. Transforms flatten their inputs and
outputs to lists of leaves and rebuild them afterwards."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Hashable, Iterable, TypeVar

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
           "register_pytree_node", "register_dataclass", "PyTreeDef"]

T = TypeVar("T")

_registry: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten: Callable[[Any], tuple[Iterable, Hashable]],
                         unflatten: Callable[[Hashable, list], Any]) -> None:
    """Teach transforms to look inside `cls`.

    ``flatten(obj) -> (children, aux)`` and ``unflatten(aux, children) -> obj``; ``aux``
    holds whatever is static (it must be hashable and comparable).

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> tree_leaves(Pair(1.0, [2.0, 3.0]))
    [1.0, 2.0, 3.0]
    """
    if cls in _registry:
        raise ValueError(f"{cls.__name__} is already registered as a pytree node")
    _registry[cls] = (flatten, unflatten)


def register_dataclass(cls: type[T]) -> type[T]:
    """Register a dataclass as a pytree whose fields are all children. Usable as a decorator.

    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: float
    ...     b: float
    >>> tree_leaves(Params(1.0, 2.0))
    [1.0, 2.0]
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"register_dataclass needs a dataclass, got {cls!r}; "
                        "decorate it with @dataclasses.dataclass first")
    names = tuple(f.name for f in dataclasses.fields(cls))
    register_pytree_node(
        cls,
        lambda obj: ([getattr(obj, n) for n in names], None),
        lambda _, children: cls(**dict(zip(names, children))),
    )
    return cls


class PyTreeDef:
    """The shape of a pytree without its leaves; equal structures compare equal.

    >>> tree_structure((1.0, {"a": 2.0})) == tree_structure((5.0, {"a": 6.0}))
    True
    >>> tree_structure((1.0, {"a": 2.0})).num_leaves
    2
    """

    __slots__ = ("kind", "aux", "children", "num_leaves")

    def __init__(self, kind, aux, children: tuple) -> None:
        self.kind = kind
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def _key(self):
        return (self.kind, self.aux, tuple(c._key() for c in self.children))

    def __eq__(self, other) -> bool:
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"PyTreeDef({_describe(self)})"


def _describe(t: PyTreeDef) -> str:
    if t.kind is None:
        return "*"
    inner = ", ".join(_describe(c) for c in t.children)
    if t.kind is tuple:
        return f"({inner}{',' if len(t.children) == 1 else ''})"
    if t.kind is list:
        return f"[{inner}]"
    if t.kind is dict:
        return "{" + ", ".join(f"{k!r}: {_describe(c)}" for k, c in zip(t.aux, t.children)) + "}"
    if t.kind is type(None):
        return "None"
    return f"{t.kind.__name__}({inner})"


_LEAF = PyTreeDef(None, None, ())


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree: Any) -> tuple[list, PyTreeDef]:
    """Leaves in a fixed order (dict keys sorted) and the structure to rebuild from.

    >>> leaves, treedef = tree_flatten({"b": 1.0, "a": (2.0, None)})
    >>> leaves
    [2.0, 1.0]
    >>> tree_unflatten(treedef, [20.0, 10.0])
    {'a': (20.0, None), 'b': 10.0}
    """
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(x, leaves: list) -> PyTreeDef:
    cls = type(x)
    if cls is tuple or cls is list:
        return PyTreeDef(cls, None, tuple(_flatten(c, leaves) for c in x))
    if cls is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            keys = tuple(x)
        return PyTreeDef(dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if x is None:
        return PyTreeDef(type(None), None, ())
    if cls in _registry:
        children, aux = _registry[cls][0](x)
        return PyTreeDef(cls, aux, tuple(_flatten(c, leaves) for c in children))
    if _is_namedtuple(x):
        return PyTreeDef(cls, None, tuple(_flatten(c, leaves) for c in x))
    leaves.append(x)
    return _LEAF


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """Rebuild a pytree of structure `treedef` from `leaves` (see `tree_flatten`).

    >>> tree_unflatten(tree_structure((1, [2, 3])), ["a", "b", "c"])
    ('a', ['b', 'c'])
    """
    it = iter(leaves)
    out = _unflatten(treedef, it)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for {treedef}")
    return out


_SENTINEL = object()


def _unflatten(t: PyTreeDef, it) -> Any:
    if t.kind is None:
        leaf = next(it, _SENTINEL)
        if leaf is _SENTINEL:
            raise ValueError("too few leaves for the tree structure")
        return leaf
    children = [_unflatten(c, it) for c in t.children]
    if t.kind is tuple or t.kind is list:
        return t.kind(children)
    if t.kind is dict:
        return dict(zip(t.aux, children))
    if t.kind is type(None):
        return None
    if t.kind in _registry:
        return _registry[t.kind][1](t.aux, children)
    return t.kind(*children)  # namedtuple


def tree_leaves(tree: Any) -> list:
    """The leaves of `tree`, in flattening order.

    >>> tree_leaves({"w": [1.0, 2.0], "b": None})
    [1.0, 2.0]
    """
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> PyTreeDef:
    """The structure of `tree`, without its leaves.

    >>> tree_structure({"w": [1.0, 2.0], "b": None})
    PyTreeDef({'b': None, 'w': [*, *]})
    """
    return tree_flatten(tree)[1]


def tree_map(f: Callable, tree: Any, *rest: Any) -> Any:
    """Apply `f` leaf by leaf; `rest` are trees of the same structure.

    >>> tree_map(lambda x, y: x + y, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
    {'a': 11, 'b': (22, 33)}
    """
    leaves, treedef = tree_flatten(tree)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r)
        if r_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} and {r_def}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])
