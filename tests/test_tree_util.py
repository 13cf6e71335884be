"""Pytrees against JAX's behaviour: flattening order, structures and their printing, key
paths, registration, mapping over several trees, depth, and the errors JAX raises.

Expected values are JAX 0.10's, written out so the tests mean something without JAX; where
JAX is installed the same cases are also compared live."""
from __future__ import annotations

import collections
import dataclasses
import functools
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import tree
from funcgrad.tree_util import (DictKey, FlattenedIndexKey, GetAttrKey, Partial, PyTreeDef,
                                SequenceKey, register_static,
                                keystr, register_dataclass, register_pytree_node,
                                register_pytree_node_class, register_pytree_with_keys, tree_all,
                                tree_flatten, tree_flatten_with_path, tree_leaves, tree_map,
                                tree_map_with_path, tree_reduce, tree_structure, tree_transpose,
                                tree_unflatten)

NT = collections.namedtuple("NT", "a b")


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b) == (other.a, other.b)


register_pytree_node(Pair, lambda p: ((p.a, p.b), "aux"), lambda aux, c: Pair(*c))


@register_pytree_node_class
class Box:
    def __init__(self, x, tag):
        self.x, self.tag = x, tag

    def tree_flatten(self):
        return (self.x,), self.tag

    @classmethod
    def tree_unflatten(cls, tag, children):
        return cls(children[0], tag)


@functools.partial(register_dataclass, data_fields=["w"], meta_fields=["name"])
@dataclasses.dataclass
class Named:
    w: object
    name: str


# --- structures and how they print (JAX 0.10's reprs, num_nodes, num_leaves) -----------
STRUCTURES = [
    ({"a": 1, "b": (2, 3)}, "PyTreeDef({'a': *, 'b': (*, *)})", 5, 3),
    (None, "PyTreeDef(None)", 1, 0),
    (1, "PyTreeDef(*)", 1, 1),
    ((1,), "PyTreeDef((*,))", 2, 1),
    ([], "PyTreeDef([])", 1, 0),
    ((), "PyTreeDef(())", 1, 0),
    ({}, "PyTreeDef({})", 1, 0),
    (NT(1, 2), "PyTreeDef(CustomNode(namedtuple[NT], [*, *]))", 3, 2),
    (Pair(1, 2), "PyTreeDef(CustomNode(Pair[aux], [*, *]))", 3, 2),
    (Named(1.0, "x"), "PyTreeDef(CustomNode(Named[('x',)], [*]))", 2, 1),
    (collections.OrderedDict(b=1, a=2), "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))",
     3, 2),
    (collections.defaultdict(list, b=1, a=2),
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))", 3, 2),
    ([None, (None,)], "PyTreeDef([None, (None,)])", 4, 0),
    (Box(3, "t"), "PyTreeDef(CustomNode(Box[t], [*]))", 2, 1),
]


@pytest.mark.parametrize("tree_, text, nodes, leaves", STRUCTURES)
def test_structure_prints_and_counts_as_in_jax(tree_, text, nodes, leaves):
    treedef = tree_structure(tree_)
    assert repr(treedef) == text
    assert (treedef.num_nodes, treedef.num_leaves) == (nodes, leaves)
    leaves_, treedef2 = tree_flatten(tree_)
    rebuilt = tree_unflatten(treedef2, leaves_)
    assert tree_structure(rebuilt) == treedef
    assert type(rebuilt) is type(tree_)


def test_round_trip_of_nested_containers():
    value = {"z": [1, (2, None, NT(3, 4))], "a": 5}
    leaves, treedef = tree_flatten(value)
    assert leaves == [5, 1, 2, 3, 4]  # dict keys sorted
    assert tree_unflatten(treedef, leaves) == value
    assert treedef.unflatten(leaves) == value
    assert tree_structure(value) == tree_structure(tree_map(lambda x: x * 10, value))
    assert tree_map(lambda x, y: x + y, value, value)["z"][1][2] == NT(6, 8)
    assert tree_structure([1, 2]) != tree_structure((1, 2))
    assert hash(tree_structure({"a": 1})) == hash(tree_structure({"a": "b"}))
    assert tree_structure(1) == tree_structure(np.ones(3))


def test_rebuilt_list_is_new():
    leaves = [1, 2]
    out = tree_unflatten(tree_structure([0, 0]), leaves)
    assert out == leaves and out is not leaves


def test_children_node_data_flatten_up_to():
    treedef = tree_structure({"a": (1, 2), "b": 3})
    assert [repr(c) for c in treedef.children()] == ["PyTreeDef((*, *))", "PyTreeDef(*)"]
    assert treedef.node_data() == (dict, ["a", "b"])
    assert treedef.flatten_up_to({"a": (5, 6), "b": [1]}) == [5, 6, [1]]
    with pytest.raises(ValueError, match="different types"):  # JAX: "Expected tuple, got 5."
        treedef.flatten_up_to({"a": 5, "b": [1]})
    assert tree_structure((1, 2)).flatten_up_to(((1, 2), None)) == [(1, 2), None]
    with pytest.raises(ValueError, match="different types"):
        tree_structure((1, 2)).flatten_up_to([1, 2])


# --- registration -----------------------------------------------------------------------
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
    assert tree_map(lambda x: x * 2, Box(3, "t")).x == 6
    assert tree_map(lambda x: x * 2, Box(3, "t")).tag == "t"


def test_dataclass_with_static_string_field_under_grad():
    # JAX: grad(lambda d: d.w * 2)(D(1.0, "hi")) == D(w=2.0, s='hi')
    out = fg.grad(lambda d: fnp.sin(d.w) * 2)(Named(0.5, "hi"))
    assert type(out) is Named and out.name == "hi"
    assert out.w.item() == pytest.approx(2 * np.cos(0.5))

    @register_dataclass
    @dataclasses.dataclass
    class Marked:
        w: object
        label: str = dataclasses.field(default="q", metadata=dict(static=True))

    assert repr(tree_structure(Marked(1.0))) == "PyTreeDef(CustomNode(Marked[('q',)], [*]))"
    g = fg.grad(lambda m: m.w ** 3)(Marked(2.0, "text"))
    assert g.label == "text" and g.w.item() == 12.0


def test_dataclass_field_lists_must_cover_the_fields():
    @dataclasses.dataclass
    class D:
        w: object
        s: str

    with pytest.raises(ValueError, match=r"Missing fields: \{'s'\}"):
        register_dataclass(D, data_fields=["w"], meta_fields=[])


def test_keys_registration_and_paths():
    class KP:
        def __init__(self, a, b):
            self.a, self.b = a, b

    register_pytree_with_keys(
        KP, lambda k: (((GetAttrKey("a"), k.a), (GetAttrKey("b"), k.b)), None),
        lambda aux, ch: KP(*ch))
    assert [(keystr(p), x) for p, x in tree_flatten_with_path(KP(1, [2]))[0]] == \
        [(".a", 1), (".b[0]", 2)]
    assert tree_leaves(KP(1, [2])) == [1, 2]


def test_flatten_with_path_as_in_jax():
    value = {"a": [1, (2,)], "b": NT(3, 4), "c": Pair(5, 6), "d": Named(7.0, "n")}
    pairs, treedef = tree_flatten_with_path(value)
    assert pairs == [
        ((DictKey("a"), SequenceKey(0)), 1),
        ((DictKey("a"), SequenceKey(1), SequenceKey(0)), 2),
        ((DictKey("b"), GetAttrKey("a")), 3),
        ((DictKey("b"), GetAttrKey("b")), 4),
        ((DictKey("c"), FlattenedIndexKey(0)), 5),
        ((DictKey("c"), FlattenedIndexKey(1)), 6),
        ((DictKey("d"), GetAttrKey("w")), 7.0),
    ]
    assert [keystr(p) for p, _ in pairs] == [
        "['a'][0]", "['a'][1][0]", "['b'].a", "['b'].b", "['c'][<flat index 0>]",
        "['c'][<flat index 1>]", "['d'].w"]
    assert repr(pairs[0][0]) == "(DictKey(key='a'), SequenceKey(idx=0))"
    assert keystr((DictKey("a"), SequenceKey(0)), simple=True, separator="/") == "a/0"
    assert keystr(()) == ""
    assert tree_map_with_path(lambda p, x: (keystr(p), x), {"a": [1, 2], "b": 3}) == \
        {"a": [("['a'][0]", 1), ("['a'][1]", 2)], "b": ("['b']", 3)}
    od = tree_flatten_with_path(collections.OrderedDict(b=1, a=2))[0]
    assert od == [((DictKey("b"),), 1), ((DictKey("a"),), 2)]


# --- is_leaf, reduce, transpose, map over several trees ----------------------------------
def test_is_leaf():
    assert tree_leaves([None, (1, None)], is_leaf=lambda x: x is None) == [None, 1, None]
    assert tree_map(lambda x: x, [None, (1, None)], is_leaf=lambda x: x is None) == \
        [None, (1, None)]
    leaves, treedef = tree_flatten([[1, 2], (3, [4])], is_leaf=lambda x: isinstance(x, list))
    assert leaves == [[[1, 2], (3, [4])]] and repr(treedef) == "PyTreeDef(*)"
    one_long = lambda x: isinstance(x, list) and len(x) == 1  # noqa: E731
    assert tree_leaves([1, [2, [3]]], is_leaf=one_long) == [1, 2, [3]]
    assert repr(tree_structure([1, [2, [3]]], is_leaf=one_long)) == "PyTreeDef([*, [*, *]])"


def test_reduce_all_transpose():
    assert tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tree_reduce(lambda a, b: a + b, [], 10) == 10
    with pytest.raises(TypeError, match="empty"):
        tree_reduce(lambda a, b: a + b, [])
    assert tree_all([1, (True, 0)]) is False and tree_all([]) is True
    assert tree_transpose(tree_structure([0, 0]), tree_structure((0, 0, 0)),
                          [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6])
    assert tree_transpose(tree_structure([0, 0]), None, [{"a": 1}, {"a": 2}]) == {"a": [1, 2]}
    with pytest.raises(TypeError, match="Mismatch"):
        tree_transpose(tree_structure([0, 0]), tree_structure((0, 0, 0)), [(1, 2, 3), (4, 5)])


def test_map_over_several_trees_and_prefixes():
    assert tree_map(lambda x, y: (x, y), [1, 2], [(1, 2), 3]) == [(1, (1, 2)), (2, 3)]
    assert tree_map(lambda x, y: (x, y), (1, 2), (1, None)) == ((1, 1), (2, None))
    assert tree_map(lambda x, y, z: x + y + z, {"a": 1}, {"a": 2}, {"a": 3}) == {"a": 6}


MISMATCHES = [  # (tree, other, the start of JAX's message, the key path JAX names)
    ((1, 2), [1, 2], "pytree structure error: different types at key path", "tree_map tree\n"),
    ((1, 2), (1, 2, 3), "pytree structure error: different lengths of tuple at key path",
     "tree_map tree\n"),
    ({"a": 1}, {"b": 1}, "pytree structure error: different pytree metadata at key path",
     "tree_map tree\n"),
    ({"a": [1, {"b": (1, 2)}]}, {"a": [1, {"b": [2, 3]}]},
     "pytree structure error: different types at key path", "tree_map tree['a'][1]['b']\n"),
    (NT(1, 2), (1, 2), "pytree structure error: different types at key path", "tree_map tree\n"),
    ((1, None), (1, 2), "pytree structure error: different types at key path",
     "tree_map tree[1]\n"),
]


@pytest.mark.parametrize("a, b, start, path", MISMATCHES)
def test_mismatched_structures_name_the_path_and_fix(a, b, start, path):
    with pytest.raises(ValueError) as info:
        tree_map(lambda x, y: x, a, b)
    message = str(info.value)
    assert message.startswith(start)
    assert path in message
    assert "tree_structure" in info.value.__notes__[0]  # the fix: compare the structures


def test_mismatch_messages_are_jax_word_for_word():
    # JAX 0.10.2's messages (programs print them); funcgrad's advice is in a note
    def message(a, b):
        with pytest.raises(ValueError) as info:
            tree_map(lambda x, y: x, a, b)
        return str(info.value)

    assert message([1, {"x": (1, 2)}], [1, {"x": (1,)}]) == (
        "pytree structure error: different lengths of tuple at key path\n    tree_map tree[1]"
        "['x']\nAt that key path, the prefix pytree tree_map tree has a subtree of type tuple "
        "of length 2, but the full pytree has a subtree of the same type but of length 1.")
    assert message((1, 2), [1, 2]) == (
        "pytree structure error: different types at key path\n    tree_map tree\nAt that key "
        "path, the prefix pytree tree_map tree has a subtree of type\n    <class 'tuple'>\nbut "
        "at the same key path the full pytree has a subtree of different type\n    "
        "<class 'list'>.")
    assert message({"a": 1, "b": 2}, {"a": 2, "c": 1}) == (
        "pytree structure error: different pytree metadata at key path\n    tree_map tree\nAt "
        "that key path, the prefix pytree tree_map tree has a subtree of type\n    "
        "<class 'dict'>\nwith metadata\n    ('a', 'b')\nbut at the same key path the full "
        "pytree has a subtree of the same type but with metadata\n    ('a', 'c')\nso the diff "
        "in the metadata at these pytree nodes is\n    - ('a', 'b')\n    ?        ^\n\n    + "
        "('a', 'c')\n    ?        ^\n")
    with pytest.raises(ValueError) as info:
        tree_unflatten(tree_structure([1, 2]), [1, 2, 3])
    assert str(info.value) == "Too many leaves for PyTreeDef; expected 2."
    assert info.value.__notes__ == ["The structure is PyTreeDef([*, *])"]


def test_leaf_counts():
    _, treedef = tree_flatten((1, 2))
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 2, got 1"):
        tree_unflatten(treedef, [1])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 2"):
        tree_unflatten(treedef, [1, 2, 3])


def test_mixed_dict_keys_refused_as_in_jax():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree "
                                         "dictionary keys") as info:
        tree_flatten({1: 1, "a": 2})
    assert isinstance(info.value.__cause__, TypeError)
    # the message is JAX's, word for word (the docs print it); the fix is in a note
    assert str(info.value) == "Comparator raised exception while sorting pytree dictionary keys."
    assert "[1, 'a'] cannot be compared" in info.value.__notes__[0]
    assert tree_leaves({2: "b", 1.5: "a"}) == ["a", "b"]  # comparable keys of two types


# --- depth ------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda x: [x], lambda x: (x, 1.0), lambda x: {"k": x},
                                  lambda x: NT(x, None), lambda x: Pair(x, 2.0)])
def test_trees_nested_far_deeper_than_the_recursion_limit(make):
    depth = max(3 * sys.getrecursionlimit(), 3000)
    value = 1.0
    for _ in range(depth):
        value = make(value)
    leaves, treedef = tree_flatten(value)
    assert leaves[0] == 1.0 and treedef.num_nodes > depth
    rebuilt = tree_unflatten(treedef, [2.0] + leaves[1:])
    assert tree_structure(rebuilt) == treedef
    assert tree_leaves(rebuilt)[0] == 2.0
    assert repr(treedef).startswith("PyTreeDef(")
    assert tree_map(lambda x, y: x + y, value, value) is not None
    assert len(tree_flatten_with_path(value)[0]) == len(leaves)


def test_grad_through_a_thousand_deep_tree():
    value = fnp.array(0.3)
    for _ in range(1000):
        value = [value]

    def f(t):
        while isinstance(t, list):
            t = t[0]
        return fnp.sin(t)

    g = fg.grad(f)(value)
    for _ in range(1000):
        g = g[0]
    assert g.item() == pytest.approx(np.cos(0.3))


def test_partial_and_static_nodes():
    # JAX: tree_leaves(Partial(jnp.add, 1.0)) == [1.0], structure
    # CustomNode(Partial[<add>], [(*,), {}]); grad through a Partial argument
    scale = Partial(fnp.multiply, 3.0)
    assert tree_leaves(scale) == [3.0]
    assert repr(tree_structure(scale)).endswith("], [(*,), {}]))")
    assert repr(tree_structure(Partial(fnp.add, y=3.0))).endswith("], [(), {'y': *}]))")
    doubled = tree_map(lambda x: x * 2, scale)
    assert isinstance(doubled, Partial) and doubled(2.0).item() == 12.0
    g = fg.grad(lambda f, x: f(fnp.sin(x)))(scale, 0.5)
    assert isinstance(g, Partial) and g.args[0].item() == pytest.approx(np.sin(0.5))
    inner = Partial(Partial(fnp.multiply, 2.0), 5.0)  # an inner partial stays whole
    assert tree_leaves(inner) == [5.0] and inner().item() == 10.0

    @register_static
    class Tag:
        def __init__(self, name):
            self.name = name

        def __hash__(self):
            return hash(self.name)

        def __eq__(self, other):
            return type(other) is Tag and other.name == self.name

    value = [Tag("relu"), 2.0]
    assert tree_leaves(value) == [2.0]
    assert tree_structure(value) == tree_structure([Tag("relu"), 5.0])
    assert tree_structure(value) != tree_structure([Tag("tanh"), 5.0])
    assert tree_map(lambda x: x + 1, value)[0] is value[0]


# --- funcgrad.tree ----------------------------------------------------------------------
def test_tree_module_short_names():
    value = {"a": 1, "b": (2, 3)}
    assert tree.map(lambda x: x + 1, value) == {"a": 2, "b": (3, 4)}
    assert tree.leaves(value) == [1, 2, 3]
    assert repr(tree.structure(value)) == "PyTreeDef({'a': *, 'b': (*, *)})"
    leaves, treedef = tree.flatten(value)
    assert tree.unflatten(treedef, leaves) == value
    assert tree.reduce(lambda a, b: a * b, value) == 6
    assert tree.all(value) is True
    assert tree.transpose(tree.structure([0, 0]), tree.structure((0, 0)), [(1, 2), (3, 4)]) == \
        ([1, 3], [2, 4])
    assert tree.map_with_path(lambda p, x: keystr(p), {"a": 1}) == {"a": "['a']"}
    assert [keystr(p) for p, _ in tree.leaves_with_path([1, 2])] == ["[0]", "[1]"]
    assert isinstance(tree.structure(1), PyTreeDef)
    # JAX 0.10: broadcast and reduce_associative
    assert tree.broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]) == [(1, 1), {"a": [2, 2]}]
    assert tree.broadcast(1, {"a": 2, "b": (3,)}) == {"a": 1, "b": (1,)}
    assert tree.reduce_associative(lambda a, b: a + b, [1, 2, 3, 4, 5]) == 15
    assert tree.reduce_associative(lambda a, b: f"({a}{b})", list("abcde")) == "((ab)(c(de)))"
    assert tree.reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity"):
        tree.reduce_associative(lambda a, b: a + b, [])


# --- one level at a time, building tuples of structures, node types --------------------
def test_flatten_one_level_as_in_jax():
    from funcgrad.tree_util import flatten_one_level, flatten_one_level_with_keys
    # JAX 0.10's results, literally
    assert flatten_one_level({"b": (2, 3), "a": 1}) == ((1, (2, 3)), ("a", "b"))
    assert flatten_one_level((1, [2])) == ((1, [2]), None)
    assert flatten_one_level([1, 2]) == ([1, 2], None)
    assert flatten_one_level(None) == ((), None)
    assert flatten_one_level(NT(1, 2)) == ([1, 2], NT)
    assert flatten_one_level(collections.OrderedDict(b=1, a=2)) == ([1, 2], ("b", "a"))
    assert flatten_one_level(collections.defaultdict(list, {"b": 1, "a": 2})) == \
        ([2, 1], (list, ("a", "b")))
    assert flatten_one_level(Pair(1, [2])) == ((1, [2]), "aux")  # as the class flattens
    for leaf in (3, "abc", fnp.ones(2), np.ones(2)):
        with pytest.raises(ValueError, match="can't tree-flatten type: <class"):
            flatten_one_level(leaf)
    assert flatten_one_level_with_keys({"b": 1, "a": 2}) == \
        (((DictKey("a"), 2), (DictKey("b"), 1)), ("a", "b"))
    assert flatten_one_level_with_keys([5, 6]) == \
        (((SequenceKey(0), 5), (SequenceKey(1), 6)), None)
    assert flatten_one_level_with_keys(None) == ((), None)
    assert flatten_one_level_with_keys(Pair(1, 2)) == \
        ([(FlattenedIndexKey(0), 1), (FlattenedIndexKey(1), 2)], "aux")
    assert flatten_one_level_with_keys(NT(1, 2)) == \
        ([(GetAttrKey("a"), 1), (GetAttrKey("b"), 2)], NT)
    with pytest.raises(ValueError, match="can't tree-flatten"):
        flatten_one_level_with_keys(1.0)


def test_treedef_tuple_and_is_tree_node():
    from funcgrad.tree_util import is_tree_node, treedef_children, treedef_tuple
    x, y = [1, 2, 3], {"a": 4, "b": 5}
    both = treedef_tuple([tree_structure(x), tree_structure(y)])
    assert both == tree_structure((x, y))
    assert repr(both) == "PyTreeDef(([*, *, *], {'a': *, 'b': *}))" and both.num_leaves == 5
    assert treedef_children(both) == [tree_structure(x), tree_structure(y)]
    assert repr(treedef_tuple([])) == "PyTreeDef(())"
    assert repr(treedef_tuple(iter([tree_structure([1]), tree_structure(None)]))) == \
        "PyTreeDef(([*], None))"
    assert tree_unflatten(both, range(5)) == ([0, 1, 2], {"a": 3, "b": 4})
    with pytest.raises(TypeError, match="PyTreeDef"):
        treedef_tuple([(1, 2)])
    nodes = [tuple, list, dict, type(None), NT, Pair, collections.OrderedDict,
             collections.defaultdict, Partial]
    assert all(is_tree_node(t) for t in nodes)
    assert not any(is_tree_node(t) for t in (int, float, str, np.ndarray, fg.Array))


# --- live comparison with JAX, where installed -----------------------------------------
def _jax():
    return pytest.importorskip("jax", reason="JAX is an optional oracle; literal values above")


def test_against_live_jax():
    jtu = _jax().tree_util
    for value, text, nodes, leaves in STRUCTURES:
        if isinstance(value, (Pair, Named, Box)):
            continue  # registered with funcgrad only
        jdef = jtu.tree_structure(value)
        assert repr(jdef) == text == repr(tree_structure(value))
        assert (jdef.num_nodes, jdef.num_leaves) == (nodes, leaves)
    value = {"a": [1, (2,)], "b": NT(3, 4), "z": {"y": None, "x": 5}}
    assert [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(value)[0]] == \
        [keystr(p) for p, _ in tree_flatten_with_path(value)[0]]
    assert jtu.tree_leaves(value) == tree_leaves(value)
    for a, b, start, path in MISMATCHES:
        with pytest.raises(ValueError) as info:
            jtu.tree_map(lambda x, y: x, a, b)
        assert str(info.value).startswith(start) and path in str(info.value)
    from funcgrad.tree_util import flatten_one_level, flatten_one_level_with_keys, is_tree_node
    for value in ({"b": (2, 3), "a": 1}, (1, [2]), [1, 2], None, NT(1, 2),
                  collections.OrderedDict(b=1, a=2)):
        assert jtu.flatten_one_level(value) == flatten_one_level(value)
        if type(value) is not NT:  # (JAX 0.10 names both namedtuple children .a)
            assert repr(jtu.flatten_one_level_with_keys(value)) == \
                repr(flatten_one_level_with_keys(value))
    for t in (tuple, list, dict, type(None), NT, int, float, str, np.ndarray):
        assert jtu.is_tree_node(t) == is_tree_node(t)
    assert repr(jtu.treedef_tuple([jtu.tree_structure([1]), jtu.tree_structure({"a": 2})])) \
        == repr(fg.tree_util.treedef_tuple([tree_structure([1]), tree_structure({"a": 2})]))


def test_tree_static_marks_a_dataclass_field_as_metadata():
    import dataclasses

    import funcgrad as fg

    @fg.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: float
        y: float
        kind: str = fg.tree.static(default="add", metadata={"doc": "kept"})

    op = Op(1.0, 2.0)
    assert fg.tree.leaves(op) == [1.0, 2.0]
    assert fg.tree.structure(op) != fg.tree.structure(Op(1.0, 2.0, kind="mul"))
    assert dataclasses.fields(Op)[2].metadata == {"doc": "kept", "static": True}
    assert fg.tree.map(lambda v: v * 2, op) == Op(2.0, 4.0)


def test_structure_with_unhashable_aux_hashes_and_jit_caches_on_it():
    # JAX's gotchas notebook registers a class whose aux data is a dict: its structures
    # still hash (jit's cache) and compare by the dict (JAX 0.10: calc gives 6, then 3)
    class Scaled:
        def __init__(self, x, mul):
            self.x, self.mul = x, mul

    register_pytree_node(Scaled, lambda s: ((s.x,), {"mul": s.mul}),
                         lambda aux, children: Scaled(*children, **aux))
    one, two = tree_structure(Scaled(1.0, True)), tree_structure(Scaled(2.0, True))
    assert one == two and hash(one) == hash(two)
    assert tree_structure(Scaled(1.0, False)) != one
    calc = fg.jit(lambda s, y: s.x * y if s.mul else y)
    scaled = Scaled(fnp.asarray(2.0), True)
    assert float(calc(scaled, 3.0)) == 6.0
    scaled.mul = False  # another structure: traced again
    assert float(calc(scaled, 3.0)) == 3.0
