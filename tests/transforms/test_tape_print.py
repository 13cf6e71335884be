"""make_tape: the recorded entries (numbering, primitives, inputs, shapes, dtypes, params),
nested blocks for transforms inside the function, and the listing."""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp


def f(x, w):
    return fnp.sum(fnp.tanh(x @ w) ** 2)


def test_entries_record_primitives_shapes_dtypes_and_params():
    x = fnp.ones((4, 3), dtype=np.float32)
    w = fnp.ones((3, 2), dtype=np.float32)
    tape = fg.make_tape(f)(x, w)
    assert tape.inputs == ["float32[4,3]", "float32[3,2]"]
    assert tape.primitives() == ["matmul", "tanh", "power", "sum"]
    matmul, tanh, power, total = tape.entries
    assert matmul.number == 2 and matmul.inputs == [0, 1]
    assert matmul.input_types == ["float32[4,3]", "float32[3,2]"]
    assert matmul.output_types == ["float32[4,2]"]
    assert tanh.inputs == [2] and power.inputs == [3, None]
    assert total.params == {"axis": None, "keepdims": False}
    assert total.output_types == ["float32[]"]
    assert tape.outputs == [total.number]


def test_listing_is_numbered_and_readable():
    text = str(fg.make_tape(f)(fnp.ones((4, 3)), fnp.ones((3, 2))))
    lines = text.splitlines()
    assert lines[0] == "tape of f"
    assert lines[1].split() == ["in", "%0", ":", "float64[4,3]"]
    assert "%2 = matmul(%0, %1)" in text
    assert "%5 = sum(%4) {axis=None, keepdims=False}" in text
    assert "float64[4,2] -> float64[4,2]" in text  # tanh's types
    assert lines[-1].split() == ["out", "%5"]


def test_grad_inside_shows_forward_and_backward_blocks():
    x = fnp.array([0.5, 1.0])
    tape = fg.make_tape(fg.grad(lambda x: fnp.sum(fnp.sin(x) * x)))(x)
    blocks = [tuple(label for label, _ in e.block) for e in tape.entries]
    assert blocks[:3] == [("grad",)] * 3  # the forward pass, recorded on the outer tape too
    assert set(blocks[3:]) == {("grad", "backward pass")}
    text = str(tape)
    assert text.index("grad {") < text.index("backward pass {") < text.index("cos(%0)")
    assert [line.strip() for line in text.splitlines()].count("}") == 2
    # the recorded backward pass computes the gradient: sin(x) + x cos(x)
    assert sorted(tape.primitives()[3:]) == ["add", "cos", "multiply", "multiply", "multiply"]


def test_vmap_and_jvp_blocks_and_custom_entries():
    x = fnp.array([0.5, 1.0])
    tape = fg.make_tape(lambda x: fg.vmap(fnp.sin)(x) + fg.jvp(fnp.cos, (x,), (x,))[1])(x)
    labels = [e.block[0][0] if e.block else None for e in tape.entries]
    assert labels[0] == "vmap" and "jvp" in labels and labels[-1] is None
    text = str(tape)
    assert "vmap {" in text and "jvp {" in text
    remat = fg.make_tape(lambda x: fg.checkpoint(fnp.exp)(x) * 2)(x)
    assert remat.primitives()[0] == "checkpoint(exp)"


def test_constants_and_outputs_that_do_not_depend_on_inputs():
    tape = fg.make_tape(lambda x: (x * 2.0, fnp.array(3.0)))(fnp.array([1.0]))
    assert tape.outputs == [1, None]
    assert "multiply(%0, 2.0)" in str(tape)
    assert str(tape).splitlines()[-1].split() == ["out", "%1,", "const"]
