"""The torch-level tensor ops (softmax family, norms, moments, sorting and selecting along a
dim, einsum, bmm, gather, addcmul...): values, grad_fn names, first and second derivatives,
against real torch when installed and against finite differences always."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None
TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"

CASES = {
    "softmax": lambda t, x, v: t.softmax(x, 1),
    "log_softmax": lambda t, x, v: t.log_softmax(x, 0),
    "method_softmax": lambda t, x, v: x.softmax(-1),
    "logsumexp": lambda t, x, v: t.logsumexp(x, 1),
    "logsumexp_keepdim": lambda t, x, v: t.logsumexp(x, (0, 1), keepdim=True),
    "norm": lambda t, x, v: x.norm(),
    "norm_dim": lambda t, x, v: x.norm(dim=1),
    "norm_p3": lambda t, x, v: x.norm(p=3, dim=0, keepdim=True),
    "std": lambda t, x, v: x.std(),
    "std_dim": lambda t, x, v: x.std(1, keepdim=True),
    "var_biased": lambda t, x, v: x.var(0, unbiased=False),
    "var_correction": lambda t, x, v: t.var(x, dim=1, correction=2),
    "var_mean": lambda t, x, v: t.var_mean(x, 1)[0] + t.var_mean(x, 1)[1],
    "cumsum": lambda t, x, v: x.cumsum(1),
    "sort": lambda t, x, v: x.sort(1).values,
    "sort_descending": lambda t, x, v: t.sort(x, 0, descending=True)[0],
    "topk": lambda t, x, v: x.topk(2).values,
    "topk_smallest": lambda t, x, v: t.topk(x, 2, dim=0, largest=False)[0],
    "einsum_matvec": lambda t, x, v: t.einsum("ij,j->i", x, v),
    "einsum_outer": lambda t, x, v: t.einsum("ij,k->ijk", x, v),
    "einsum_diagonal": lambda t, x, v: t.einsum("ii->i", x[:, :3]),
    "einsum_implicit": lambda t, x, v: t.einsum("ij,ij", x, x),
    "einsum_ellipsis": lambda t, x, v: t.einsum("...j,j->...", x, v),
    "bmm": lambda t, x, v: t.bmm(x[None], x.t()[None]),
    "gather": lambda t, x, v: x.gather(1, t.tensor([[0, 0], [1, 3], [2, 2]])),
    "index_select": lambda t, x, v: x.index_select(1, t.tensor([0, 2, 2])),
    "outer": lambda t, x, v: t.outer(v, v),
    "dot": lambda t, x, v: t.dot(v, v),
    "addcmul": lambda t, x, v: t.addcmul(x, x, v, value=0.5),
    "addcdiv": lambda t, x, v: t.addcdiv(x, x, v + 3, value=0.5),
    "addcmul_": lambda t, x, v: (x * 1).addcmul_(x, v, value=2),
    "max_dim": lambda t, x, v: x.max(1).values,
    "max_keepdim": lambda t, x, v: t.max(x, 0, keepdim=True)[0],
    "min_numpy_aliases": lambda t, x, v: x.min(axis=1, keepdims=True)[0],
    "median": lambda t, x, v: x.median(),
    "median_dim": lambda t, x, v: x.median(1).values,
    "kthvalue": lambda t, x, v: x.kthvalue(2, 0).values,
    "repeat": lambda t, x, v: x.repeat(2, 1),
    "repeat_new_dims": lambda t, x, v: v.repeat(2, 1, 2),
    "masked_fill": lambda t, x, v: x.masked_fill(x > 0.2, 0.5),
    "atan2": lambda t, x, v: t.atan2(x, v * 2 + 3),
    "trace": lambda t, x, v: x[:, :3].trace(),
    "view_as": lambda t, x, v: x.view_as(t.ones(4, 3)),
    "split_with_sizes": lambda t, x, v: x.split_with_sizes([1, 2])[1],
}
# einsum is composed of permutes, products and sums here; torch names other nodes
NAMES_DIFFER = {"einsum_matvec", "einsum_outer", "einsum_diagonal", "einsum_implicit",
                "einsum_ellipsis"}


def _run(lib, fn):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    v = lib.tensor(rng.standard_normal(4), requires_grad=True)
    out = fn(lib, x, v)
    w = lib.tensor(rng.standard_normal(tuple(out.shape)))
    grads = lib.autograd.grad((out * w).sum(), [x, v], create_graph=True, allow_unused=True)
    second = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
    seconds = None
    if not isinstance(second, int):
        seconds = [None if g is None else g.numpy().copy()
                   for g in lib.autograd.grad(second, [x, v], allow_unused=True)]
    firsts = [None if g is None else g.detach().numpy().copy() for g in grads]
    return out.detach().numpy().copy(), type(out.grad_fn).__name__, firsts, seconds


def _same(a, b, tol):
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.skipif(torch is None, reason=TORCH_REASON)
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    want = _run(torch, CASES[name])
    got = _run(fm, CASES[name])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-7, atol=1e-9)
    if name not in NAMES_DIFFER:
        assert got[1] == want[1]
    for a, b in zip(got[2], want[2]):
        _same(a, b, 1e-7)
    if want[3] is not None:
        for a, b in zip(got[3], want[3]):
            _same(a, b, 1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((3, 4))
    v0 = rng.standard_normal(4)

    def value(xa, va):
        out = CASES[name](fm, fm.tensor(xa), fm.tensor(va))
        return float((out * fm.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum())

    x = fm.tensor(x0, requires_grad=True)
    v = fm.tensor(v0, requires_grad=True)
    out = CASES[name](fm, x, v)
    (out * fm.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum().backward()
    eps = 1e-6
    for leaf, base, other in ((x, x0, v0), (v, v0, x0)):
        numeric = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            up, down = base.copy(), base.copy()
            up[i] += eps
            down[i] -= eps
            args_up = (up, other) if leaf is x else (other, up)
            args_down = (down, other) if leaf is x else (other, down)
            numeric[i] = (value(*args_up) - value(*args_down)) / (2 * eps)
        got = np.zeros_like(base) if leaf.grad is None else leaf.grad.numpy()
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6)


def test_closed_forms():
    x = fm.tensor([1.0, 2.0, 3.0, 4.0])
    assert fm.allclose(fm.softmax(x, 0), fm.exp(x) / fm.exp(x).sum())
    assert float(fm.logsumexp(x, 0)) == pytest.approx(np.log(np.exp([1, 2, 3, 4]).sum()))
    assert float(x.norm()) == pytest.approx(30 ** 0.5)
    assert float(x.var()) == pytest.approx(5 / 3)
    assert float(x.std(unbiased=False)) == pytest.approx(1.25 ** 0.5)
    assert x.cumsum(0).tolist() == [1.0, 3.0, 6.0, 10.0]
    assert fm.topk(x, 2).indices.tolist() == [3, 2]
    assert float(fm.median(x)) == 2.0  # the lower of the two middle values


def test_max_along_dim_gives_the_gradient_to_the_returned_index():
    x = fm.tensor([[2.0, 2.0, 1.0]], requires_grad=True)
    out = x.max(1)
    assert repr(out).startswith("torch.return_types.max(\nvalues=tensor([2.], grad_fn=<MaxBackward0>)")
    assert out.indices.tolist() == [0]
    out.values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0]]
    x.grad = None
    x.max().backward()  # the full reduction shares the slope between ties (MaxBackward1)
    assert x.grad.tolist() == [[0.5, 0.5, 0.0]]


def test_random_fills_bump_the_version_and_refuse_leaves_that_require_grad():
    fm.manual_seed(0)
    t = fm.empty(5).normal_()
    assert t._version == 1
    if torch is not None:
        torch.manual_seed(0)
        np.testing.assert_array_equal(t.numpy(), torch.empty(5).normal_().numpy())
    leaf = fm.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.uniform_()
    with fm.no_grad():
        leaf.uniform_(-1.0, 1.0)
    assert ((leaf >= -1) & (leaf < 1)).all()


def test_errors_name_the_problem():
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        fm.bmm(fm.ones(2, 2), fm.ones(1, 2, 2))
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        fm.dot(fm.ones(2, 2), fm.ones(2))
    with pytest.raises(RuntimeError, match="out of bounds"):
        fm.ones(2, 2).gather(1, fm.tensor([[2], [0]]))


@pytest.mark.skipif(torch is None, reason=TORCH_REASON)
def test_random_fills_and_integers_follow_torchs_stream():
    def draw(lib):
        lib.manual_seed(3)
        return (lib.empty(20).normal_(1.0, 2.0).tolist(),
                lib.empty(5, dtype=lib.float64).uniform_(-1, 2).tolist(),
                lib.randint(0, 10, (6,)).tolist(), lib.randperm(7).tolist(),
                lib.randint(5, (3,)).tolist())
    assert draw(fm) == draw(torch)
