"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp): against closed forms,
and against real torch when installed."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm
from funcgrad.mutable.autograd import functional as AF

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None
TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"


def test_closed_forms():
    x = fm.tensor([1.0, 2.0, 3.0])
    np.testing.assert_allclose(AF.jacobian(lambda t: t ** 2, x).numpy(), np.diag([2.0, 4, 6]))
    np.testing.assert_allclose(AF.hessian(lambda t: (t ** 3).sum(), x).numpy(),
                               np.diag([6.0, 12, 18]))
    out, g = AF.vjp(lambda t: (t * t).sum(), x)
    assert float(out) == 14.0 and g.tolist() == [2.0, 4.0, 6.0]
    out, jv = AF.jvp(lambda t: t.exp(), x, fm.tensor([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(jv.numpy(), [np.exp(1.0), 0, 0], rtol=1e-6)
    for fn in (AF.hvp, AF.vhp):
        _, hv = fn(lambda t: (t ** 3).sum(), x, fm.ones(3))
        np.testing.assert_allclose(hv.numpy(), [6.0, 12, 18])
    assert not AF.jacobian(lambda t: t ** 2, fm.tensor([1.0], requires_grad=True)).requires_grad


def _programs(lib):
    F = lib.autograd.functional
    g = np.random.default_rng(0)
    x = lib.tensor(g.standard_normal(3))
    y = lib.tensor(g.standard_normal((2, 3)))
    res = {}
    res["jac_multi"] = F.jacobian(lambda a, b: (a * b, (a.sin() * b).sum(1)), (x, y))
    res["jac_single"] = F.jacobian(lambda a: a.tanh() @ y.t(), x)
    res["hess_pair"] = F.hessian(lambda a, b: (a.exp() * b).sum(), (x, y))
    res["hess"] = F.hessian(lambda a: (a.sin() * a).sum(), x)
    res["vjp"] = F.vjp(lambda a: a.tanh() * 2, x, lib.ones(3))
    res["jvp"] = F.jvp(lambda a, b: a * b, (x, y), (lib.ones(3), lib.ones(2, 3)))
    res["hvp"] = F.hvp(lambda a: (a ** 4).sum(), x, lib.ones(3))
    res["vhp_tuple"] = F.vhp(lambda a, b: (a * b).sum(), (x, y), (lib.ones(3), lib.ones(2, 3)))
    res["unused"] = F.jacobian(lambda a, b: a * 2, (x, y))
    return res


def _numbers(obj):
    if isinstance(obj, (tuple, list)):
        return [_numbers(o) for o in obj]
    return obj.detach().numpy().round(6).tolist()


@pytest.mark.skipif(torch is None, reason=TORCH_REASON)
def test_against_torch():
    want = _programs(torch)
    got = _programs(fm)
    for key in want:
        assert _close(_numbers(got[key]), _numbers(want[key])), key


def _close(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return abs(a - b) <= 1e-5 + 1e-5 * abs(b)


def test_strict_mode_names_the_independent_input():
    for lib in [fm] + ([torch] if torch is not None else []):
        with pytest.raises(RuntimeError, match="independent of input 1"):
            lib.autograd.functional.jacobian(lambda a, b: a * 2, (lib.ones(2), lib.ones(2)),
                                             strict=True)
