"""F.ctc_loss / nn.CTCLoss on funcgrad.mutable and real torch 2.13: losses against a brute
force sum over every alignment, the three reductions' nodes (MeanBackward0 over
DivBackward0, SumBackward0, CtcLossBackward0), concatenated targets, unbatched input,
impossible alignments (inf, zero_infinity), gradcheck through log_softmax, torch's refusal of
a double backward; and (funcgrad only) the derivative in the log-probabilities themselves,
which torch's kernel does not give (it adds exp(log_probs), cancelled only by a following
log_softmax)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, fm, values


def brute_force(lp, target, blank=0):
    """-log of the summed probability of every path that collapses to `target`."""
    steps, classes = lp.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=steps):
        collapsed = [c for k, c in enumerate(path) if c != blank and (k == 0 or c != path[k - 1])]
        if collapsed == list(target):
            total += math.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total else math.inf


def sample(torch, seed=0):
    rng = np.random.default_rng(seed)
    raw = torch.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)
    return raw, torch.tensor([[1, 2], [2, 0]]), [4, 3], [2, 1]


@both()
def test_losses_against_brute_force_and_nodes(torch):
    raw, tg, il, tl = sample(torch)
    lp = raw.log_softmax(2)
    loss = torch.nn.functional.ctc_loss(lp, tg, il, tl, reduction="none")
    lpv = values(lp)
    expected = [brute_force(lpv[:4, 0], [1, 2]), brute_force(lpv[:3, 1], [2])]
    np.testing.assert_allclose(values(loss), expected, rtol=1e-12)
    assert loss.grad_fn.name() == "CtcLossBackward0"
    F = torch.nn.functional
    mean = F.ctc_loss(raw.log_softmax(2), tg, il, tl)
    assert mean.grad_fn.name() == "MeanBackward0"
    assert mean.grad_fn.next_functions[0][0].name() == "DivBackward0"
    np.testing.assert_allclose(values(mean), (expected[0] / 2 + expected[1]) / 2, rtol=1e-12)
    total = torch.nn.CTCLoss(reduction="sum")(raw.log_softmax(2), tg, il, tl)
    assert total.grad_fn.name() == "SumBackward0"
    np.testing.assert_allclose(values(total), sum(expected), rtol=1e-12)
    flat = F.ctc_loss(raw.log_softmax(2), torch.tensor([1, 2, 2]), il, tl, reduction="none")
    np.testing.assert_allclose(values(flat), expected, rtol=1e-12)
    one = F.ctc_loss(raw.log_softmax(2)[:, 0], torch.tensor([1, 2]), [4], [2], reduction="none")
    assert tuple(one.shape) == () and one.grad_fn.name() == "SqueezeBackward1"


@both()
def test_impossible_alignment_and_zero_infinity(torch):
    raw, tg, il, tl = sample(torch)
    F = torch.nn.functional
    loss = F.ctc_loss(raw.log_softmax(2)[:1], tg, [1, 1], tl, reduction="none")
    assert values(loss)[0] == math.inf  # two labels cannot fit in one step
    loss = F.ctc_loss(raw.log_softmax(2)[:1], tg, [1, 1], tl, reduction="none",
                      zero_infinity=True)
    assert values(loss)[0] == 0.0 and loss.grad_fn.name() == "WhereBackward0"
    (g,) = torch.autograd.grad(loss.sum(), raw)
    assert np.isfinite(values(g)).all() and (values(g)[:, 0] == 0).all()


@both()
def test_gradcheck_through_log_softmax_and_no_double_backward(torch):
    raw, tg, il, tl = sample(torch, 1)

    def fn(r):
        return torch.nn.functional.ctc_loss(r.log_softmax(2), tg, il, tl)
    assert torch.autograd.gradcheck(fn, (raw,))
    (g,) = torch.autograd.grad(fn(raw), raw, create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not "
                                           "implemented"):
        torch.autograd.grad(g.sum(), raw)


def test_gradient_in_the_log_probabilities_themselves():
    raw, tg, il, tl = sample(fm, 2)
    lp = raw.detach().log_softmax(2).requires_grad_()
    assert fm.autograd.gradcheck(
        lambda x: fm.nn.functional.ctc_loss(x, tg, il, tl, reduction="sum"), (lp,))
