"""Pytree utilities under JAX's short names (``jax.tree``): ``tree.map``, ``tree.leaves``...

>>> import funcgrad as fg
>>> fg.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (4, 6)}
>>> fg.tree.structure({"a": 1, "b": (2, 3)})
PyTreeDef({'a': *, 'b': (*, *)})
"""
import dataclasses as _dataclasses  # (private names: the module lists JAX's names only)
from typing import Any as _Any

from ._src.tree_util import tree_all as all
from ._src.tree_util import tree_broadcast as broadcast
from ._src.tree_util import tree_flatten as flatten
from ._src.tree_util import tree_flatten_with_path as flatten_with_path
from ._src.tree_util import tree_leaves as leaves
from ._src.tree_util import tree_leaves_with_path as leaves_with_path
from ._src.tree_util import tree_map as map
from ._src.tree_util import tree_map_with_path as map_with_path
from ._src.tree_util import tree_reduce as reduce
from ._src.tree_util import tree_reduce_associative as reduce_associative
from ._src.tree_util import tree_structure as structure
from ._src.tree_util import tree_transpose as transpose
from ._src.tree_util import tree_unflatten as unflatten

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
           "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose",
           "unflatten"]


def static(**field_options: _Any) -> _Any:
    """A dataclass field that `register_dataclass` keeps in the tree's structure (metadata,
    not a leaf), as ``jax.tree.static``: `field_options` are those of
    ``dataclasses.field``.

    >>> import dataclasses, funcgrad as fg
    >>> @fg.tree_util.register_dataclass
    ... @dataclasses.dataclass
    ... class Op:
    ...     x: float
    ...     kind: str = static(default="add")
    >>> fg.tree.leaves(Op(1.0)), fg.tree.structure(Op(1.0))
    ([1.0], PyTreeDef(CustomNode(Op[('add',)], [*])))
    """
    metadata = dict(field_options.pop("metadata", None) or {}, static=True)
    return _dataclasses.field(metadata=metadata, **field_options)
