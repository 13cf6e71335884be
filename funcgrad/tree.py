"""Pytree utilities under JAX's short names (``jax.tree``): ``tree.map``, ``tree.leaves``...

>>> import funcgrad as fg
>>> fg.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (4, 6)}
>>> fg.tree.structure({"a": 1, "b": (2, 3)})
PyTreeDef({'a': *, 'b': (*, *)})
"""
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
           "map_with_path", "reduce", "reduce_associative", "structure", "transpose", "unflatten"]
