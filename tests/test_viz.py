"""funcgrad.viz: the mutable graph as text and DOT, and the functional tape."""
from __future__ import annotations

import pytest

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp
from funcgrad.viz import graph, make_tape, to_dot


def seed_loss(module):
    w1 = module.tensor(2.0, requires_grad=True)
    w2 = module.tensor(3.0, requires_grad=True)
    l1 = module.ones(2, 2) * w1
    return ((l1 + w2) * (l1 * 3.0)).mean()


def test_seed_graph_shows_every_node_once():
    text = graph(seed_loss(torch))
    assert text.splitlines()[0] == "MeanBackward0"
    # l1's MulBackward0 is reached twice; the second time it is not expanded again.
    assert text.count("[seen above]") == 1 and text.count("AccumulateGrad") == 2
    dot = to_dot(seed_loss(torch))
    assert dot.startswith("digraph grad_fn {") and dot.count('label="AccumulateGrad') == 2
    assert dot.count("->") == 7


def test_same_drawing_as_real_torch():
    real = pytest.importorskip("torch", reason="the oracle (torch 2.13.0 CPU) is not installed")
    assert graph(seed_loss(torch)) == graph(seed_loss(real))
    assert to_dot(seed_loss(torch)) == to_dot(seed_loss(real))


def test_deep_graph_without_recursion():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    assert len(graph(y).splitlines()) == 5001
    assert to_dot(y).count("->") == 5000


def test_leaf_and_wrong_input_errors():
    with pytest.raises(ValueError, match="no grad_fn"):
        graph(torch.tensor(1.0, requires_grad=True))
    with pytest.raises(TypeError, match="make_tape"):
        graph(object())


def test_make_tape_is_reexported():
    tape = make_tape(fg.grad(lambda x: fnp.sum(fnp.sin(x))))(fnp.ones(2))
    assert "sin" in str(tape) and "backward pass" in str(tape)
