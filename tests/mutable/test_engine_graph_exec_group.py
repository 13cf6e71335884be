"""torch.utils.checkpoint.GraphExecGroup: backward calls made within one group share a single
recomputation of each non-reentrant checkpoint (without it each call recomputes); calls that
need the same saved tensor are refused; groups do not nest. Each case on funcgrad.mutable
and on real torch 2.13 as the oracle, with the same assertions."""
from __future__ import annotations

import contextlib

import pytest

from tests.mutable.pytorch_port import both, values


def two_stage(torch, runs: list):
    def fn(x):
        runs.append(1)
        y = x.sin().cos()
        return y, y.sin().cos()

    return fn


@both()
@pytest.mark.parametrize("grouped", [True, False])
def test_one_recomputation_for_the_calls_of_a_group(torch, grouped):
    runs: list = []
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    y, z = torch.utils.checkpoint.checkpoint(two_stage(torch, runs), x, use_reentrant=False)
    group = torch.utils.checkpoint.GraphExecGroup() if grouped else contextlib.nullcontext()
    with group:
        (gy,) = torch.autograd.grad(z, (y,), (torch.ones(3, dtype=torch.float64),))
        (gx,) = torch.autograd.grad(y, (x,), (gy,))
    assert len(runs) == (2 if grouped else 3)
    # closed form: d/dx cos(sin(cos(sin x)))
    xs = x.detach()
    inner = torch.cos(torch.sin(xs))
    expected = (-torch.sin(torch.sin(inner)) * torch.cos(inner) * -torch.sin(torch.sin(xs))
                * torch.cos(xs))
    assert values(gx) == pytest.approx(values(expected), rel=1e-12)


@both()
def test_overlapping_calls_in_a_group_are_refused(torch):
    x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(lambda t: t.sin().cos(), x, use_reentrant=False)
    with torch.utils.checkpoint.GraphExecGroup():
        out.sum().backward(retain_graph=True)
        with pytest.raises(RuntimeError, match="Performing two backward calls that overlap"):
            out.sum().backward()


@both()
def test_groups_do_not_nest(torch):
    group = torch.utils.checkpoint.GraphExecGroup
    with group() as outer:
        assert group._get_current_group() is outer
        with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
            with group():
                pass
    assert group._get_current_group() is None
