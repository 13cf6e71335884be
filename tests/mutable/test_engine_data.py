"""``x.data = ...`` between an op and its backward: a saved INPUT is read through its tensor
(PyTorch's SavedVariable keeps the input tensor itself), a saved OUTPUT keeps its value, on
every recording path (one tensor, two tensors, a general op, create_graph). Each case on
funcgrad.mutable and on real torch 2.13 as the oracle; the expected values are closed forms
at the new data (3) or, for a saved output, the old one (1)."""
from __future__ import annotations

import math

import pytest

from tests.mutable.pytorch_port import both, values

# op, d/da, d/dw (None: no gradient) with a = 3 (the new data) and w = 2
CASES = {
    "sin (one tensor)": (lambda torch, a, w: a.sin(), [math.cos(3.0)], None),
    "pow (one tensor, a number)": (lambda torch, a, w: a ** 2, [6.0], None),
    "mul": (lambda torch, a, w: a * w, [2.0], [3.0]),
    "mul by itself": (lambda torch, a, w: a * a, [6.0], None),
    "div": (lambda torch, a, w: w / a, [-2.0 / 9.0], [1.0 / 3.0]),
    "matmul": (lambda torch, a, w: a @ w, [2.0], [3.0]),
    "where": (lambda torch, a, w: torch.where(a > 0, a * a, w), [6.0], [0.0]),
    "exp (saves its output)": (lambda torch, a, w: a.exp(), [math.e], None),
}


def run_case(torch, op, leaf: bool, create_graph: bool = False):
    x = torch.full((3,), 1.0, dtype=torch.float64, requires_grad=True)
    w = torch.full((3,), 2.0, dtype=torch.float64, requires_grad=True)
    a = x if leaf else x * 1
    y = op(torch, a, w)
    a.data = torch.full((3,), 3.0, dtype=torch.float64)
    y.sum().backward(create_graph=create_graph)
    assert a._version == 0  # setting .data is no in-place write
    return x.grad, w.grad


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@both()
@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize("create_graph", [False, True], ids=["", "create_graph"])
@pytest.mark.parametrize("kind", sorted(CASES))
def test_backward_reads_a_saved_input_through_its_tensor(torch, kind, leaf, create_graph):
    op, dx, dw = CASES[kind]
    gx, gw = run_case(torch, op, leaf, create_graph)
    assert values(gx) == pytest.approx(dx * 3, rel=1e-12)
    if dw is None:
        assert gw is None
    elif dw == [0.0]:
        assert gw is None or values(gw).tolist() == [0.0] * 3
    else:
        assert values(gw) == pytest.approx(dw * 3, rel=1e-12)


@both()
def test_data_keeps_the_tensors_version_and_autograd_state(torch):
    x = torch.ones(3, requires_grad=True)
    new = torch.zeros(3)
    new.add_(1)
    x.data = new
    assert (x._version, new._version) == (0, 1)
    assert x.requires_grad and x.is_leaf
    with pytest.raises(RuntimeError, match="data set to a tensor that requires gradients must be "
                                           "floating point or complex dtype"):
        x.data = torch.tensor([1, 2, 3])
    plain = torch.ones(3)
    plain.data = torch.tensor([1, 2, 3])
    assert plain.dtype == torch.int64
