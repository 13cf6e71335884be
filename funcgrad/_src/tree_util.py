"""Pytrees: nested containers whose leaves are arrays. Transforms flatten their inputs and
outputs to lists of leaves and rebuild them afterwards, so flattening is on the hot path.

A `PyTreeDef` is the tree's nodes in pre-order, each node a tuple ``(kind, aux, arity)``:
``kind`` is the container type (None for a leaf), ``aux`` its static data (a dict's keys,
a registered class's metadata). Every walk over a tree is a loop over an explicit stack,
never a recursion, so trees of any depth work.
"""
from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
from typing import Any, Callable, Hashable, Iterable, NamedTuple, TypeVar

__all__ = [
    "PyTreeDef", "register_pytree_node", "register_pytree_node_class",
    "register_pytree_with_keys", "register_pytree_with_keys_class", "register_dataclass",
    "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
    "tree_reduce", "tree_all", "tree_transpose", "tree_flatten_with_path",
    "tree_leaves_with_path", "tree_map_with_path", "keystr", "treedef_is_leaf",
    "treedef_children", "all_leaves", "DictKey", "SequenceKey", "GetAttrKey",
    "FlattenedIndexKey", "Partial", "register_static", "tree_reduce_associative",
    "tree_broadcast", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
    "treedef_tuple", "KeyEntry", "KeyPath",
]

T = TypeVar("T")
_NoneType = type(None)
_LEAF = (None, None, 0)          # the node of every leaf (compared by identity on hot paths)
_NONE = (_NoneType, None, 0)     # None is a node with no children, as in JAX


# --- keys: how a path names a child -----------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DictKey:
    """The child of a dict (or another mapping) under ``key``; prints as ``['a']``."""
    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The child of a tuple or list at position ``idx``; prints as ``[0]``."""
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The child in attribute ``name`` (namedtuples, dataclasses); prints as ``.name``."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The ``key``-th child of a class registered without keys."""
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = TypeVar("KeyEntry", bound=Any)  # one step of a path: DictKey, SequenceKey, ...
KeyPath = tuple[KeyEntry, ...]


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text, as JAX writes it.

    >>> keystr((DictKey("a"), SequenceKey(0), GetAttrKey("w")))
    "['a'][0].w"
    >>> keystr((DictKey("a"), SequenceKey(0)), simple=True, separator="/")
    'a/0'
    """
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(str(_key_value(k)) for k in keys)


def _key_value(k) -> Any:
    for field in ("key", "idx", "name"):
        if hasattr(k, field):
            return getattr(k, field)
    return k


# --- the registry of container types ----------------------------------------------------
class _Node(NamedTuple):
    flatten: Callable[[Any], tuple[Iterable, Hashable]]
    unflatten: Callable[[Hashable, tuple], Any]
    flatten_with_keys: Callable[[Any], tuple[Iterable, Hashable]] | None


_registry: dict[type, _Node] = {}
_leaf_types: set[type] = set()  # types met as leaves, to skip the node tests next time


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Iterable, Hashable]],
                         unflatten_func: Callable[[Hashable, tuple], Any],
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Teach transforms to look inside `nodetype`.

    ``flatten_func(obj) -> (children, aux)`` and ``unflatten_func(aux, children) -> obj``;
    ``aux`` holds whatever is static (hashable and comparable). ``flatten_with_keys_func``,
    optional, returns ``(((key, child), ...), aux)`` to name the children in key paths.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> tree_leaves(Pair(1.0, [2.0, 3.0]))
    [1.0, 2.0, 3.0]
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node needs a class, got {nodetype!r}")
    if not (callable(flatten_func) and callable(unflatten_func)):
        raise TypeError("register_pytree_node needs flatten_func(obj) -> (children, aux) and "
                        "unflatten_func(aux, children) -> obj, both callable")
    if nodetype in _registry or nodetype in (tuple, list, dict, _NoneType):
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}: "
                         f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _Node(flatten_func, unflatten_func, flatten_with_keys_func)
    _leaf_types.discard(nodetype)


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable, flatten_func: Callable | None = None
                              ) -> None:
    """Register `nodetype` with named children: ``flatten_with_keys(obj)`` returns
    ``(((key, child), ...), aux)``, and those keys appear in key paths.

    >>> class Point:
    ...     def __init__(self, x, y): self.x, self.y = x, y
    >>> register_pytree_with_keys(
    ...     Point, lambda p: (((GetAttrKey("x"), p.x), (GetAttrKey("y"), p.y)), None),
    ...     lambda _, c: Point(*c))
    >>> [keystr(path) for path, _ in tree_flatten_with_path(Point(1.0, 2.0))[0]]
    ['.x', '.y']
    """
    if flatten_func is None:
        def flatten_func(obj):
            pairs, aux = flatten_with_keys(obj)
            return [child for _, child in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type[T]) -> type[T]:
    """Class decorator: ``obj.tree_flatten()`` gives ``(children, aux)`` and the classmethod
    ``cls.tree_unflatten(aux, children)`` rebuilds.

    >>> @register_pytree_node_class
    ... class Scaled:
    ...     def __init__(self, x, factor): self.x, self.factor = x, factor
    ...     def tree_flatten(self): return (self.x,), self.factor
    ...     @classmethod
    ...     def tree_unflatten(cls, factor, children): return cls(children[0], factor)
    >>> tree_structure(Scaled(1.0, 3))
    PyTreeDef(CustomNode(Scaled[3], [*]))
    """
    register_pytree_node(cls, lambda obj: obj.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type[T]) -> type[T]:
    """Class decorator like `register_pytree_node_class`, where ``obj.tree_flatten_with_keys()``
    names the children."""
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda obj: obj.tree_flatten_with_keys(), cls.tree_unflatten,
                              None if flatten is None else (lambda obj: obj.tree_flatten()))
    return cls


def register_dataclass(nodetype: type[T] | None = None, data_fields: Iterable[str] | None = None,
                       meta_fields: Iterable[str] | None = None,
                       drop_fields: Iterable[str] = ()) -> Any:
    """Register a dataclass as a pytree: ``data_fields`` are children (traced by transforms),
    ``meta_fields`` are static (a string, a flag, a size), kept in the tree's structure.

    Without field lists, fields declared ``dataclasses.field(metadata=dict(static=True))``
    are static and all others are data, as in JAX. Usable as a bare decorator.

    >>> import dataclasses, funcgrad as fg, funcgrad.numpy as fnp
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: object
    ...     name: str = dataclasses.field(default="dense", metadata=dict(static=True))
    >>> tree_structure(Layer(1.0))
    PyTreeDef(CustomNode(Layer[('dense',)], [*]))
    >>> fg.grad(lambda layer: fnp.sin(layer.w))(Layer(0.0)).w.item()
    1.0
    """
    if nodetype is None:  # used as @register_dataclass(data_fields=..., meta_fields=...)
        return functools.partial(register_dataclass, data_fields=data_fields,
                                 meta_fields=meta_fields, drop_fields=drop_fields)
    if not dataclasses.is_dataclass(nodetype) or not isinstance(nodetype, type):
        raise TypeError(f"register_dataclass needs a dataclass, got {nodetype!r}; decorate it "
                        "with @dataclasses.dataclass first, or pass data_fields and meta_fields")
    init_fields = [f for f in dataclasses.fields(nodetype) if f.init]
    if data_fields is None and meta_fields is None:
        meta = tuple(f.name for f in init_fields if f.metadata.get("static", False))
        data = tuple(f.name for f in init_fields if f.name not in meta
                     and f.name not in tuple(drop_fields))
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither "
                        "(then fields marked metadata=dict(static=True) are the meta fields)")
    else:
        data, meta = tuple(data_fields), tuple(meta_fields)
        listed = set(data) | set(meta) | set(drop_fields)
        expected = {f.name for f in init_fields}
        if listed != expected:
            raise ValueError(
                "data_fields and meta_fields must include all dataclass fields with "
                f"``init=True`` and only them. Missing fields: {expected - listed or set()}, "
                f"unknown fields: {listed - expected or set()}. Add the missing ones to "
                "data_fields (traced), meta_fields (static) or drop_fields")

    def flatten(obj):
        return [getattr(obj, n) for n in data], tuple(getattr(obj, n) for n in meta)

    def flatten_with_keys(obj):
        return [(GetAttrKey(n), getattr(obj, n)) for n in data], \
            tuple(getattr(obj, n) for n in meta)

    def unflatten(aux, children):
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def register_static(cls: type[T]) -> type[T]:
    """Register `cls` as a pytree with no leaves: its instances are static data, kept whole
    in the structure (so they must be hashable). Usable as a decorator.

    >>> @register_static
    ... class Activation:
    ...     def __init__(self, name): self.name = name
    ...     def __hash__(self): return hash(self.name)
    ...     def __eq__(self, other): return type(other) is Activation and other.name == self.name
    >>> tree_leaves([Activation("relu"), 2.0])
    [2.0]
    """
    register_pytree_node(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


class _StaticCallable:
    """A callable kept whole (not flattened) inside a `Partial`'s structure."""

    __slots__ = ("fun",)

    def __init__(self, fun: Callable) -> None:
        self.fun = fun

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def __eq__(self, other) -> bool:
        return isinstance(other, _StaticCallable) and self.fun == other.fun

    def __hash__(self) -> int:
        return hash(self.fun)

    def __repr__(self) -> str:
        return f"_StaticCallable({self.fun!r})"


class Partial(functools.partial):
    """``functools.partial`` as a pytree: the bound arguments are its children (traced by
    transforms), the function is static. Lets a function with array arguments be returned
    from, or passed into, a transformed function.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> scale = Partial(fnp.multiply, 3.0)
    >>> tree_leaves(scale)
    [3.0]
    >>> fg.grad(lambda f, x: f(x))(scale, 2.0).args[0].item()
    2.0
    """

    def __new__(cls, func: Callable, *args: Any, **kwargs: Any) -> Partial:
        if isinstance(func, functools.partial):  # keep it whole: its arguments stay static
            func = _StaticCallable(func)
        return super().__new__(cls, func, *args, **kwargs)


def _ordered_dict_flatten(d):
    return list(d.values()), tuple(d)


def _defaultdict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


register_pytree_node(
    Partial, lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))
register_pytree_with_keys(
    collections.OrderedDict,
    lambda d: ([(DictKey(k), v) for k, v in d.items()], tuple(d)),
    lambda keys, children: collections.OrderedDict(zip(keys, children)),
    _ordered_dict_flatten)
register_pytree_with_keys(
    collections.defaultdict,
    lambda d: ([(DictKey(k), d[k]) for k in _sorted_keys(d)],
               (d.default_factory, _sorted_keys(d))),
    lambda aux, children: collections.defaultdict(aux[0], zip(aux[1], children)),
    _defaultdict_flatten)


def _sorted_keys(d) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as err:
        # JAX's message exactly (programs print it); the reason and the fix as a note
        error = ValueError("Comparator raised exception while sorting pytree dictionary keys.")
        error.add_note(f"Pytrees order a dict's children by sorted key, and keys {list(d)!r} "
                       "cannot be compared with each other; use keys of one type (e.g. all "
                       "str)")
        raise error from err


# --- the structure ----------------------------------------------------------------------
class _Children(tuple):
    """A tuple of child structures that can also be called, as JAX's ``children()``."""

    def __call__(self) -> list:
        return list(self)


class PyTreeDef:
    """The shape of a pytree without its leaves; equal structures compare equal.

    >>> tree_structure((1.0, {"a": 2.0})) == tree_structure((5.0, {"a": 6.0}))
    True
    >>> tree_structure((1.0, {"a": 2.0})).num_leaves
    2
    >>> tree_structure({"a": 1.0, "b": (2.0, 3.0)})
    PyTreeDef({'a': *, 'b': (*, *)})
    """

    __slots__ = ("_nodes", "num_leaves")

    def __init__(self, nodes: tuple, num_leaves: int) -> None:
        self._nodes = nodes
        self.num_leaves = num_leaves

    @property
    def num_nodes(self) -> int:
        return len(self._nodes)

    @property
    def children(self) -> _Children:
        """The structures of the root's children (call it, ``children()``, as in JAX)."""
        nodes = self._nodes
        out = []
        i = 1
        for _ in range(nodes[0][2]):
            end = _subtree_end(nodes, i)
            out.append(_from_nodes(nodes[i:end]))
            i = end
        return _Children(out)

    def node_data(self) -> tuple[type, Any] | None:
        """The root's ``(type, aux data)``, or None for a leaf."""
        kind, aux, _ = self._nodes[0]
        if kind is None:
            return None
        if kind is dict:
            return dict, list(aux)
        return kind, aux

    def unflatten(self, leaves: Iterable) -> Any:
        """Rebuild a tree of this structure from `leaves` (see `tree_unflatten`)."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list:
        """The subtrees of `tree` at this structure's leaves (`tree` must have this structure
        as a prefix)."""
        return _flatten_up_to(self, tree, "tree")

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with every leaf replaced by `inner`."""
        nodes = []
        for node in self._nodes:
            if node is _LEAF:
                nodes.extend(inner._nodes)
            else:
                nodes.append(node)
        return PyTreeDef(tuple(nodes), self.num_leaves * inner.num_leaves)

    def __eq__(self, other) -> bool:
        return isinstance(other, PyTreeDef) and self._nodes == other._nodes

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        try:
            return hash(self._nodes)
        except TypeError:  # an unhashable aux (metadata given as a dict, as JAX allows):
            # hashed by node types and arities alone; equality still compares the aux
            return hash(tuple((kind, n) for kind, _, n in self._nodes))

    def __repr__(self) -> str:
        return f"PyTreeDef({_fold(self._nodes, ['*'] * self.num_leaves, _describe)})"


_LEAF_DEF = PyTreeDef((_LEAF,), 1)


def _subtree_end(nodes: tuple, start: int) -> int:
    """The index just past the subtree whose root is ``nodes[start]``."""
    need = 1
    i = start
    while need:
        need += nodes[i][2] - 1
        i += 1
    return i


def _from_nodes(nodes: tuple) -> PyTreeDef:
    return PyTreeDef(nodes, sum(1 for n in nodes if n[0] is None))


def _describe(kind, aux, children: list) -> str:
    inner = ", ".join(children)
    if kind is tuple:
        return f"({inner},)" if len(children) == 1 else f"({inner})"
    if kind is list:
        return f"[{inner}]"
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(aux, children)) + "}"
    if kind is _NoneType:
        return "None"
    if kind not in _registry:  # a namedtuple
        return f"CustomNode(namedtuple[{kind.__name__}], [{inner}])"
    return f"CustomNode({kind.__name__}[{aux}], [{inner}])"


def _build(kind, aux, children: list) -> Any:
    if kind is tuple:
        return tuple(children)
    if kind is list:
        return children
    if kind is dict:
        return dict(zip(aux, children))
    if kind is _NoneType:
        return None
    node = _registry.get(kind)
    if node is not None:
        return node.unflatten(aux, tuple(children))
    return kind(*children)  # a namedtuple


def _fold(nodes: tuple, leaves: list, build: Callable) -> Any:
    """Combine `leaves` bottom-up along `nodes` with ``build(kind, aux, children)``.

    Walking the pre-order nodes backwards meets every child before its parent; the values
    of a node's children are then the top of the stack, last child deepest."""
    values: list = []
    push = values.append
    j = len(leaves)
    for node in reversed(nodes):
        if node is _LEAF:
            j -= 1
            push(leaves[j])
            continue
        kind, aux, n = node
        if n:
            children = values[-n:]
            del values[-n:]
            children.reverse()
        else:
            children = []
        push(build(kind, aux, children))
    return values[0]


# --- flattening and rebuilding ----------------------------------------------------------
def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """Leaves in a fixed order (dict keys sorted) and the structure to rebuild from.

    ``is_leaf(x)``, if given, is asked of every subtree first; True makes it a leaf.

    >>> leaves, treedef = tree_flatten({"b": 1.0, "a": (2.0, None)})
    >>> leaves
    [2.0, 1.0]
    >>> tree_unflatten(treedef, [20.0, 10.0])
    {'a': (20.0, None), 'b': 10.0}
    >>> tree_flatten([[1, 2], (3, [4])], is_leaf=lambda x: isinstance(x, list))[0]
    [[[1, 2], (3, [4])]]
    """
    if is_leaf is None and type(tree) in _leaf_types:
        return [tree], _LEAF_DEF
    leaves: list = []
    nodes: list = []
    add = nodes.append
    leaf = leaves.append
    registry = _registry
    leaf_types = _leaf_types
    # A stack of iterators over children: a container pushes its children and the loop
    # continues with them, so runs of leaves are read in one tight inner loop.
    stack = [iter((tree,))]
    while stack:
        for x in stack[-1]:
            if is_leaf is not None and is_leaf(x):
                leaf(x)
                add(_LEAF)
                continue
            cls = type(x)
            if cls in leaf_types:
                leaf(x)
                add(_LEAF)
                continue
            if cls is tuple or cls is list:
                add((cls, None, len(x)))
                stack.append(iter(x))
                break
            if cls is dict:
                keys = _sorted_keys(x)
                add((dict, keys, len(keys)))
                stack.append(map(x.__getitem__, keys))
                break
            if x is None:
                add(_NONE)
                continue
            node = registry.get(cls)
            if node is not None:
                children, aux = node.flatten(x)
                children = tuple(children)
                add((cls, aux, len(children)))
                stack.append(iter(children))
                break
            if isinstance(x, tuple) and hasattr(cls, "_fields"):  # a namedtuple
                add((cls, None, len(x)))
                stack.append(iter(x))
                break
            leaf_types.add(cls)
            leaf(x)
            add(_LEAF)
        else:
            stack.pop()
    return leaves, PyTreeDef(tuple(nodes), len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """Rebuild a pytree of structure `treedef` from `leaves` (see `tree_flatten`).

    >>> tree_unflatten(tree_structure((1, [2, 3])), ["a", "b", "c"])
    ('a', ['b', 'c'])
    """
    if type(leaves) is not list:
        leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        expected = treedef.num_leaves
        # JAX's messages exactly; the structure as a note
        error = ValueError(f"Too few leaves for PyTreeDef; expected {expected}, got "
                           f"{len(leaves)}" if len(leaves) < expected else
                           f"Too many leaves for PyTreeDef; expected {expected}.")
        error.add_note(f"The structure is {treedef}")
        raise error
    nodes = treedef._nodes
    kind, aux, n = nodes[0]
    if kind is None:
        return leaves[0]
    if n == len(nodes) - 1 == len(leaves):  # one node over leaves: the common case
        return _build(kind, aux, leaves[:] if kind is list else leaves)
    return _fold(nodes, leaves, _build)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of `tree`, in flattening order.

    >>> tree_leaves({"w": [1.0, 2.0], "b": None})
    [1.0, 2.0]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of `tree`, without its leaves.

    >>> tree_structure({"w": [1.0, 2.0], "b": None})
    PyTreeDef({'b': None, 'w': [*, *]})
    """
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` is a single leaf."""
    return treedef.num_nodes == 1 and treedef.num_leaves == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root's children."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the structures `treedefs`.

    >>> treedef_tuple([tree_structure([1, 2]), tree_structure({"a": 3})])
    PyTreeDef(([*, *], {'a': *}))
    """
    treedefs = list(treedefs)
    for treedef in treedefs:
        if not isinstance(treedef, PyTreeDef):
            raise TypeError(f"treedef_tuple: expected PyTreeDefs (from tree_structure), got "
                            f"{type(treedef).__name__}")
    nodes: tuple = ((tuple, None, len(treedefs)),)
    for treedef in treedefs:
        nodes += treedef._nodes
    return PyTreeDef(nodes, sum(t.num_leaves for t in treedefs))


def is_tree_node(typ: type) -> bool:
    """Whether instances of `typ` are pytree nodes (containers flattening looks inside):
    tuple, list, dict, None's type, namedtuples and registered classes.

    >>> is_tree_node(tuple), is_tree_node(float), is_tree_node(type(None))
    (True, False, True)
    """
    if typ in (tuple, list, dict, _NoneType) or typ in _registry:
        return True
    return isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields")


def _check_node(tree: Any) -> type:
    """The type of `tree`, a pytree node; a leaf gets JAX's error."""
    kind = type(tree)
    if not is_tree_node(kind):
        raise ValueError(f"can't tree-flatten type: {kind}")
    return kind


def flatten_one_level(tree: Any) -> tuple[Iterable, Hashable]:
    """The children of `tree`'s root and its aux data (a dict's sorted keys, a registered
    class's metadata, a namedtuple's class); a leaf raises ValueError.

    >>> flatten_one_level({"b": [1, 2], "a": 3})
    ((3, [1, 2]), ('a', 'b'))
    """
    kind = _check_node(tree)
    if kind is tuple or kind is list:
        return tree, None
    if kind is _NoneType:
        return (), None
    if kind is dict:
        keys = _sorted_keys(tree)
        return tuple(tree[k] for k in keys), keys
    node = _registry.get(kind)
    if node is None:  # a namedtuple
        return list(tree), kind
    return node.flatten(tree)  # the children as the class's flatten gives them, as JAX


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable, Hashable]:
    """As `flatten_one_level`, each child paired with its key.

    >>> flatten_one_level_with_keys([5, 6])
    (((SequenceKey(idx=0), 5), (SequenceKey(idx=1), 6)), None)
    """
    kind = _check_node(tree)
    if kind is _NoneType:
        return (), None
    aux = _node_data(tree, kind) if kind is not tuple and kind is not list else None
    entries = _child_entries(tree, kind, aux)
    if kind is tuple or kind is list or kind is dict:
        return tuple(entries), aux
    return entries, aux if kind in _registry else kind


def all_leaves(iterable: Iterable, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element of `iterable` is a leaf."""
    return all(treedef_is_leaf(tree_structure(x, is_leaf)) for x in iterable)


# --- mapping and reducing ---------------------------------------------------------------
def _child_entries(x, kind, aux):
    """(key, child) pairs of one node, for key paths; None for a leaf."""
    if kind is tuple or kind is list:
        return [(SequenceKey(i), c) for i, c in enumerate(x)]
    if kind is dict:
        return [(DictKey(k), x[k]) for k in aux]
    node = _registry.get(kind)
    if node is None:  # a namedtuple
        return [(GetAttrKey(name), c) for name, c in zip(kind._fields, x)]
    if node.flatten_with_keys is not None:
        return list(node.flatten_with_keys(x)[0])
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(node.flatten(x)[0])]


def _node_data(x, kind) -> Any:
    """The aux data of node `x` of type `kind`."""
    if kind is dict:
        return _sorted_keys(x)
    node = _registry.get(kind)
    return None if node is None else node.flatten(x)[1]


def _flatten_up_to(treedef: PyTreeDef, tree: Any, what: str) -> list:
    """The subtrees of `tree` found at `treedef`'s leaves, or an error naming where the two
    structures part and how to fix it."""
    out = []
    stack = [(tree, ())]
    for node in treedef._nodes:
        x, path = stack.pop()
        kind, aux, n = node
        if kind is None:
            out.append(x)
            continue
        problem = None
        where = f"at key path\n    {what}{keystr(path)}\nAt that key path, the prefix pytree {what}"
        if type(x) is not kind and not (kind is _NoneType and x is None):
            problem = (f"different types {where} has a subtree of type\n    {kind}\nbut at the "
                       "same key path the full pytree has a subtree of different type\n    "
                       f"{type(x)}.")
        elif (got := _node_data(x, kind)) != aux:
            diff = "\n".join("    " + line for line in difflib.ndiff([repr(aux)], [repr(got)]))
            problem = (f"different pytree metadata {where} has a subtree of type\n    {kind}\n"
                       f"with metadata\n    {aux!r}\nbut at the same key path the full pytree "
                       f"has a subtree of the same type but with metadata\n    {got!r}\nso the "
                       f"diff in the metadata at these pytree nodes is\n{diff}")
        elif kind is not _NoneType and len(entries := _child_entries(x, kind, aux)) != n:
            problem = (f"different lengths of {kind.__name__} {where} has a subtree of type "
                       f"{kind.__name__} of length {n}, but the full pytree has a subtree of the "
                       f"same type but of length {len(entries)}.")
        if problem is not None:  # JAX's message exactly; the fix as a note
            error = ValueError(f"pytree structure error: {problem}")
            error.add_note("Every tree passed along with the first must have the first tree's "
                           "structure (or extend it below its leaves): compare "
                           "tree_structure(a) and tree_structure(b) and make the containers "
                           "match.")
            raise error
        if kind is not _NoneType:
            stack.extend((c, path + (k,)) for k, c in reversed(entries))
    return out


def tree_map(f: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply `f` leaf by leaf; `rest` are trees with `tree`'s structure (or with subtrees
    where `tree` has leaves: those are passed to `f` whole).

    >>> tree_map(lambda x, y: x + y, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
    {'a': 11, 'b': (22, 33)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return tree_unflatten(treedef, [f(x) for x in leaves])
    others = [_flatten_up_to(treedef, r, "tree_map tree") for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


_NO_INITIAL = object()


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _NO_INITIAL,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Fold the leaves of `tree` with `function`, left to right (``functools.reduce``).

    >>> tree_reduce(lambda a, b: a + b, {"x": 1, "y": (2, 3)})
    6
    >>> tree_reduce(max, [], 0)
    0
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _NO_INITIAL,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Combine the leaves of `tree` with an associative `operation`, pairing them as a
    balanced tree (halves first) rather than left to right, as JAX does.

    >>> tree_reduce_associative(lambda a, b: f"({a}{b})", list("abcde"))
    '((ab)(c(de)))'
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_INITIAL:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def combine(lo: int, hi: int) -> Any:  # depth log2 of the number of leaves
        if hi - lo == 1:
            return leaves[lo]
        mid = lo + (hi - lo) // 2
        return operation(combine(lo, mid), combine(mid, hi))

    return combine(0, len(leaves))


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`prefix_tree` with each leaf repeated over the subtree of `full_tree` at its place.

    >>> tree_broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}])
    [(1, 1), {'a': [2, 2]}]
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_up_to(treedef, full_tree, "tree_broadcast full tree")
    return tree_unflatten(treedef, [tree_map(lambda _, x=x: x, sub, is_leaf=is_leaf)
                                    for x, sub in zip(leaves, subtrees)])


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy.

    >>> tree_all([True, (1, 0)])
    False
    """
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure ``outer(inner)`` into one of structure ``inner(outer)``.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    leaves, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    expected = outer_treedef.compose(inner_treedef)
    if treedef != expected:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}\ntree_transpose needs a tree "
                        "of the outer structure whose every leaf holds the inner structure")
    n_inner = inner_treedef.num_leaves
    n_outer = outer_treedef.num_leaves
    columns = [tree_unflatten(outer_treedef, leaves[j::n_inner]) if n_outer else
               tree_unflatten(outer_treedef, []) for j in range(n_inner)]
    return tree_unflatten(inner_treedef, columns)


# --- key paths --------------------------------------------------------------------------
def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like `tree_flatten`, each leaf paired with its key path.

    >>> pairs, _ = tree_flatten_with_path({"a": [1.0, 2.0]})
    >>> [(keystr(path), leaf) for path, leaf in pairs]
    [("['a'][0]", 1.0), ("['a'][1]", 2.0)]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    paths = []
    stack = [(tree, ())]
    for kind, aux, _ in treedef._nodes:
        x, path = stack.pop()
        if kind is None:
            paths.append(path)
        elif kind is not _NoneType:
            stack.extend((c, path + (k,)) for k, c in reversed(_child_entries(x, kind, aux)))
    return list(zip(paths, leaves)), treedef


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    """The ``(key path, leaf)`` pairs of `tree`."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Like `tree_map`, with each leaf's key path as `f`'s first argument.

    >>> tree_map_with_path(lambda path, x: f"{keystr(path)}={x}", {"a": [1, 2]})
    {'a': ["['a'][0]=1", "['a'][1]=2"]}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [_flatten_up_to(treedef, r, "tree_map_with_path tree") for r in rest]
    return tree_unflatten(treedef, [f(path, x, *xs)
                                    for (path, x), *xs in zip(pairs, *others)])
