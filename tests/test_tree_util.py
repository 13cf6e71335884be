"""Pytree flattening, rebuilding and mapping."""
from __future__ import annotations

import collections
import dataclasses

import pytest

from funcgrad.tree_util import (register_dataclass, register_pytree_node, tree_flatten,
                                tree_leaves, tree_map, tree_structure, tree_unflatten)

NT = collections.namedtuple("NT", "a b")


def test_round_trip_of_nested_containers():
    tree = {"z": [1, (2, None, NT(3, 4))], "a": 5}
    leaves, treedef = tree_flatten(tree)
    assert leaves == [5, 1, 2, 3, 4]  # dict keys sorted
    assert tree_unflatten(treedef, leaves) == tree
    assert tree_structure(tree) == tree_structure(tree_map(lambda x: x * 10, tree))
    assert tree_map(lambda x, y: x + y, tree, tree)["z"][1][2] == NT(6, 8)


def test_registered_classes():
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object

    register_dataclass(Layer)
    assert tree_leaves([Layer(1, 2), Layer(3, (4, 5))]) == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="already registered"):
        register_pytree_node(Layer, lambda x: ((), None), lambda a, c: None)
    with pytest.raises(TypeError, match="dataclass"):
        register_dataclass(int)


def test_mismatched_structures_and_leaf_counts():
    with pytest.raises(ValueError, match="structures differ"):
        tree_map(lambda a, b: a, (1, 2), [1, 2])
    _, treedef = tree_flatten((1, 2))
    with pytest.raises(ValueError, match="too few"):
        tree_unflatten(treedef, [1])
    with pytest.raises(ValueError, match="too many"):
        tree_unflatten(treedef, [1, 2, 3])
