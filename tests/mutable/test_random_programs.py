"""Random programs of views, in-place writes and ops, run on funcgrad.mutable and on real torch:
same grad_fn names, versions, errors, values and gradients (float32, so values within 1e-4)."""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import funcgrad.mutable as mine

TORCH_REASON = "torch is not installed here: the random-program comparison needs torch 2.13.0 CPU"

UNARY = ["exp", "tanh", "sigmoid", "sin", "cos", "abs", "relu", "neg", "clone", "t", "sum0", "mean1", "sq", "view", "sel", "sl", "unsq", "idx", "clamp", "recip", "pow2", "double_float"]
INPL = ["add_", "mul_", "sub_", "div_", "exp_", "tanh_", "sigmoid_", "clamp_", "zero_", "fill_", "setitem", "setitem_adv", "neg_", "relu_", "abs_"]

def program(torch, seed):
    rng = random.Random(seed)
    log = []
    x = torch.tensor([[0.5, -1.2, 0.3], [0.8, 0.1, -0.4]], requires_grad=True)
    w = torch.tensor([[0.2, 0.7, -0.5], [1.1, -0.3, 0.9]], requires_grad=True)
    pool = [x * 1.0, w + 0.0, x * w]
    for step in range(8):
        a = rng.choice(pool)
        kind = rng.random()
        try:
            if kind < 0.5:
                op = rng.choice(UNARY)
                if op == "exp": r = a.exp() if a.dim() else a.exp()
                elif op == "tanh": r = a.tanh()
                elif op == "sigmoid": r = a.sigmoid()
                elif op == "sin": r = a.sin()
                elif op == "cos": r = torch.cos(a)
                elif op == "abs": r = a.abs()
                elif op == "relu": r = a.relu()
                elif op == "neg": r = -a
                elif op == "clone": r = a.clone()
                elif op == "t": r = a.t() if a.dim() <= 2 else a
                elif op == "sum0": r = a.sum(0) if a.dim() else a.sum()
                elif op == "mean1": r = a.mean(-1, keepdim=True) if a.dim() else a.mean()
                elif op == "sq": r = a * a
                elif op == "view": r = a.reshape(-1)
                elif op == "sel": r = a[0] if a.dim() and a.shape[0] else a
                elif op == "sl": r = a[..., ::2] if a.dim() else a
                elif op == "unsq": r = a.unsqueeze(0)
                elif op == "idx": r = a[[0, 0]] if a.dim() and a.shape[0] else a
                elif op == "clamp": r = a.clamp(-0.5, 0.5)
                elif op == "recip": r = 1 / (a.abs() + 1)
                elif op == "pow2": r = (a.abs() + 0.5) ** 1.5
                elif op == "double_float": r = a.double().float()
                pool.append(r)
                log.append((op, type(r.grad_fn).__name__ if r.grad_fn else None, r._version))
            elif kind < 0.85:
                op = rng.choice(INPL)
                b = rng.choice(pool)
                if op == "add_": a.add_(b if b.shape == a.shape else 0.5)
                elif op == "mul_": a.mul_(b if b.shape == a.shape else 1.5)
                elif op == "sub_": a.sub_(0.25)
                elif op == "div_": a.div_(2.0)
                elif op == "exp_": a.exp_()
                elif op == "tanh_": a.tanh_()
                elif op == "sigmoid_": a.sigmoid_()
                elif op == "clamp_": a.clamp_(min=-0.3)
                elif op == "zero_": a.zero_()
                elif op == "fill_": a.fill_(0.7)
                elif op == "setitem":
                    if a.dim(): a[0] = b.sum() * 0.5
                    else: a.fill_(1.0)
                elif op == "setitem_adv":
                    if a.dim(): a[[0]] = 2.0
                elif op == "neg_": a.neg_()
                elif op == "relu_": a.relu_()
                elif op == "abs_": a.abs_()
                log.append((op, type(a.grad_fn).__name__ if a.grad_fn else None, a._version))
            else:
                b = rng.choice(pool)
                r = a + b if a.shape == b.shape else a.sum() * b
                pool.append(r)
                log.append(("bin", type(r.grad_fn).__name__ if r.grad_fn else None, r._version))
        except RuntimeError as e:
            log.append(("ERR", str(e).split("\n")[0][:150]))
    out = rng.choice(pool)
    try:
        loss = (out * out).sum()
        loss.backward()
        g = [None if t.grad is None else t.grad.tolist() for t in (x, w)]
        log.append(("grad", g))
    except RuntimeError as e:
        log.append(("BERR", str(e).split("\n")[0][:200]))
    log.append(("vals", [p.tolist() for p in pool]))
    return log



def _close(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, rtol=1e-4, atol=1e-5))
    return a == b


@pytest.mark.parametrize("seed", range(0, 400, 5))
def test_random_program_matches_torch(seed):
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = program(real, seed)
        got = program(mine, seed)
    assert _close(expected, got), f"seed {seed}:\n torch: {expected}\n mine:  {got}"
