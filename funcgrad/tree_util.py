"""Pytrees: how transforms see inside tuples, lists, dicts, namedtuples and your classes."""
from ._src.tree_util import (PyTreeDef, register_dataclass, register_pytree_node, tree_flatten,
                             tree_leaves, tree_map, tree_structure, tree_unflatten)

__all__ = ["PyTreeDef", "register_dataclass", "register_pytree_node", "tree_flatten",
           "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]
