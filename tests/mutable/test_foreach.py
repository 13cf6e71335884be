"""torch._foreach_*: each op applied tensor by tensor, out of place (a tuple) or in place (the
list itself, each tensor's version bumped). Each case on funcgrad.mutable and real torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, close


def pair(torch, requires_grad=False):
    return [torch.tensor([1.0, 0.5], dtype=torch.float64, requires_grad=requires_grad),
            torch.tensor([2.0], dtype=torch.float64, requires_grad=requires_grad)]


CASES = {
    "exp": (lambda t, xs: t._foreach_exp(xs), lambda x: np.exp(x)),
    "add number list": (lambda t, xs: t._foreach_add(xs, [1, 2]), None),
    "add tensors alpha": (lambda t, xs: t._foreach_add(xs, xs, alpha=2), lambda x: 3 * x),
    "sub number": (lambda t, xs: t._foreach_sub(xs, 1.5), lambda x: x - 1.5),
    "mul tensors": (lambda t, xs: t._foreach_mul(xs, xs), lambda x: x * x),
    "pow": (lambda t, xs: t._foreach_pow(xs, 2), lambda x: x ** 2),
    "number to the pow": (lambda t, xs: t._foreach_pow(2.0, xs), lambda x: 2.0 ** x),
    "addcmul": (lambda t, xs: t._foreach_addcmul(xs, xs, xs, value=2), lambda x: x + 2 * x * x),
    "lerp": (lambda t, xs: t._foreach_lerp(xs, [x * 3 for x in xs], 0.5), lambda x: 2 * x),
    "sqrt": (lambda t, xs: t._foreach_sqrt(xs), lambda x: np.sqrt(x)),
    "clamp_min": (lambda t, xs: t._foreach_clamp_min(xs, 1.0), lambda x: np.maximum(x, 1.0)),
    "norm": (lambda t, xs: t._foreach_norm(xs), lambda x: np.linalg.norm(x)),
}


@both()
@pytest.mark.parametrize("case", sorted(CASES))
def test_out_of_place_values_and_gradients(torch, case):
    op, closed = CASES[case]
    xs = pair(torch, requires_grad=True)
    out = op(torch, xs)
    assert type(out) is tuple and len(out) == 2
    if closed is not None:
        for x, y in zip(xs, out):
            np.testing.assert_allclose(np.asarray(y.tolist()), closed(np.asarray(x.tolist())),
                                       rtol=1e-12)
    # each output is differentiable by the per-tensor op: compare against applying it alone
    sum(o.sum() for o in out).backward()
    for k, x in enumerate(xs):
        alone = [t.detach().clone().requires_grad_() for t in pair(torch)]
        op(torch, alone)[k].sum().backward()
        close(x.grad, alone[k].grad)


@both()
def test_in_place_returns_the_list_and_bumps_versions(torch):
    xs = [x.clone() for x in pair(torch, requires_grad=True)]
    before = [x._version for x in xs]
    assert torch._foreach_mul_(xs, [2.0, 3.0]) is xs
    assert [x._version for x in xs] == [v + 1 for v in before]
    close(xs[0], torch.tensor([2.0, 1.0]))
    close(xs[1], torch.tensor([6.0]))
    (xs[0].sum() + xs[1].sum()).backward()
    assert torch._foreach_zero_(xs) is xs and all(float(x.detach().abs().sum()) == 0 for x in xs)


@both()
def test_in_place_on_saved_outputs_allowed_in_the_mutation_block(torch):
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        xs = [torch.tensor(1.0, requires_grad=True), torch.tensor(2.0, requires_grad=True)]
        ys = torch._foreach_exp(xs)
        torch._foreach_add_(ys, 1)
        (ys[0] + ys[1]).backward()
    close(torch.stack([xs[0].grad, xs[1].grad]), torch.stack(list(torch._foreach_exp(xs))))


@both()
def test_errors(torch):
    xs = [x.detach() for x in pair(torch)]
    with pytest.raises(RuntimeError, match="Tensor lists must have the same number of tensors, "
                                           "got 2 and 3"):
        torch._foreach_add(xs, [xs[0]] * 3)
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        torch._foreach_add(xs, [1.0])
    with pytest.raises(RuntimeError, match="at least one tensor"):
        torch._foreach_exp([])
