"""torch._C._nn._test_warn_in_autograd: a copy of its input whose backward warns "Warn from
backward" (a UserWarning raised during backward reaches the caller) and passes the gradient
on. On funcgrad.mutable and on real torch 2.13 as the oracle, with the same assertions."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, values


@both()
def test_a_warning_raised_in_backward_reaches_the_caller(torch):
    a = torch.tensor(2.0, requires_grad=True)
    b = torch._C._nn._test_warn_in_autograd(a)
    assert type(b.grad_fn).__name__ == "TestWarnInAutogradBackward0"
    assert b._base is None and values(b).tolist() == 2.0
    with pytest.warns(UserWarning, match="Warn from backward"):
        (b * 3).backward()
    assert values(a.grad).tolist() == 3.0


@both()
def test_no_history_under_no_grad(torch):
    a = torch.tensor(2.0, requires_grad=True)
    with torch.no_grad():
        b = torch._C._nn._test_warn_in_autograd(a)
    assert b.grad_fn is None and not b.requires_grad
