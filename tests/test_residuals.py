"""`Primitive.reads`: what each VJP rule reads, found once from bytecode at declaration, robust
to how a Python version spells its opcodes, erring on the side of keeping."""
from __future__ import annotations

import dis

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src import residuals
from funcgrad._src.core import Primitive
from funcgrad._src.residuals import OUT, loaded_names, rule_reads


def test_reads_of_table_primitives():
    assert fnp.sin.primitive.reads == (frozenset({0}),)            # cos(x)
    assert fnp.exp.primitive.reads == (frozenset({OUT}),)          # the output itself
    assert fnp.multiply.primitive.reads == (frozenset({1}), frozenset({0}))
    assert fnp.sum.primitive.reads == (frozenset(),)               # linear: shapes only
    assert fnp.divide.primitive.reads == (frozenset({1}), frozenset({1, OUT}))


def test_loads_are_recognised_by_family_including_later_pythons_spellings():
    # Python 3.13 fuses two loads; 3.14 adds LOAD_FAST_BORROW and its fused pair
    stream = [("LOAD_FAST", "a"), ("LOAD_FAST_LOAD_FAST", ("b", "c")),
              ("LOAD_FAST_BORROW", "d"), ("LOAD_FAST_BORROW_LOAD_FAST_BORROW", ("e", "f")),
              ("LOAD_DEREF", "g"), ("LOAD_CLOSURE", "h"), ("LOAD_FAST_CHECK", "i"),
              ("STORE_FAST", "z"), ("LOAD_GLOBAL", "np"), ("LOAD_ATTR", "cos")]
    assert loaded_names(stream) == set("abcdefghi")


def test_an_instruction_that_hands_out_every_local_keeps_everything():
    assert loaded_names([("LOAD_FAST", "a"), ("LOAD_LOCALS", None)]) is None
    assert loaded_names([("LOAD_FAST_SOMETHING_NEW", 3)]) is None  # an operand we cannot read


def _renamed_loads(monkeypatch, new_name):
    """Make `dis` report every LOAD_FAST under another name, as a later Python would."""
    real = dis.get_instructions

    def renamed(code):
        for ins in real(code):
            yield ins._replace(opname=new_name) if ins.opname == "LOAD_FAST" else ins
    monkeypatch.setattr(residuals.dis, "get_instructions", renamed)


def test_python_3_14s_local_load_opcode_keeps_the_same_reads(monkeypatch):
    def rule(ct, out, x, y):
        return ct * np.cos(x)
    before = rule_reads((rule, None), 2, False)
    _renamed_loads(monkeypatch, "LOAD_FAST_BORROW")
    assert rule_reads((rule, None), 2, False) == before == (frozenset({0}), None)


def test_an_opcode_that_may_read_every_local_errs_on_keeping(monkeypatch):
    def rule(ct, out, x):
        return ct * x
    _renamed_loads(monkeypatch, "LOAD_FAST_AND_LOCALS")
    assert rule_reads((rule,), 1, False) == (frozenset({0, OUT}),)


def test_rules_the_analysis_cannot_see_through_read_everything():
    def star_rule(ct, out, *args):
        return ct
    assert rule_reads((star_rule,), 1, False) == (frozenset({0, OUT}),)
    assert rule_reads((np.negative,), 1, False) == (frozenset({0, OUT}),)  # no bytecode


def test_closures_over_parameters_count_as_reads():
    def rule(ct, out, x, y):
        scale = lambda c: c * y  # noqa: E731
        return scale(ct)
    assert rule_reads((rule, rule), 2, False) == (frozenset({1}),) * 2


def test_linear_rules_read_only_undifferentiated_arguments():
    def transpose(ct, out, x, idx):
        return ct[idx]
    assert rule_reads((transpose, None), 2, True) == (frozenset({1}), None)


def test_reads_are_derived_again_when_rules_are_replaced():
    prim = Primitive("demo", lambda x: x * 2, vjps=(lambda ct, out, x: ct * 2,))
    assert prim.reads == (frozenset(),)
    prim.vjps = (lambda ct, out, x: ct * x,)
    assert prim.reads == (frozenset({0}),)
    assert prim._keep == (False, (True,))


def test_the_tape_keeps_exactly_what_reads_names():
    x = fnp.array(np.linspace(0.1, 1.0, 100))
    tape = []

    def f(x):
        y = fnp.exp(fnp.sin(x))
        tape.append(y._trace.tape)
        return fnp.sum(y)

    assert np.allclose(fg.grad(f)(x), np.exp(np.sin(np.asarray(x))) * np.cos(np.asarray(x)))
    # the walk consumed the tape; record again without running backward
    from funcgrad._src.reverse import ARGS, OUT as OUT_SLOT, ReverseTrace
    trace = ReverseTrace()
    leaf = trace.leaf(np.asarray(x))
    fnp.exp(fnp.sin(leaf))
    sin_entry, exp_entry = trace.tape[1], trace.tape[2]
    assert sin_entry[OUT_SLOT] is None and isinstance(sin_entry[ARGS + 1], np.ndarray)
    assert exp_entry[OUT_SLOT] is not None
    assert isinstance(exp_entry[ARGS + 1], residuals.ShapeOnly)
    trace.alive = False


def test_rules_that_hand_back_a_parameter_are_read_without_a_call():
    """`returned_param`: the walk reads multiply's slope (the other argument) and add's
    cotangent itself instead of calling their rules; anything more is called as written."""
    assert residuals.returned_param(lambda out, x, y: y) == 2
    assert residuals.returned_param(lambda ct, out, x, y: ct) == 0
    for fn in (lambda out, x: -x, lambda out, x, y=1.0: y, lambda *args: args[0], len):
        assert residuals.returned_param(fn) is None
    scale = 2.0
    assert residuals.returned_param(lambda out, x: scale) is None  # a closure's value
    from funcgrad.numpy import _primitives as P
    assert P.multiply._slopes == (2, 1) and P.exp._slopes == (0,) and P.sin._slopes is None
    assert P.add._passes[:2] == (True, True) and P.subtract._passes[:2] == (True, False)
    # the same gradients as the rules give, to second order: d/dx (x*y + x - y*x*x) ...
    f = lambda x, y: fnp.sum(x * y + x - y * fnp.exp(x) * x)  # noqa: E731
    x, y = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    gx, gy = fg.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, y + 1 - y * np.exp(x) * (x + 1), rtol=1e-14)
    np.testing.assert_allclose(gy, x - np.exp(x) * x, rtol=1e-14)
    hxx = fg.grad(lambda x: fg.grad(f)(x, y).sum())(x)
    np.testing.assert_allclose(hxx, -y * np.exp(x) * (x + 2), rtol=1e-14)
