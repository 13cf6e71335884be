"""scatter_reduce / index_reduce with reduce='prod' and zero factors: the first derivative is
computed (as torch 2.13 does; funcgrad used to refuse it), exactly, also with zeros in self
and in src; the second derivative too, except where two zero factors of src meet in one slot:
there src's gradient carries torch's ``Error`` node and a second backward raises torch's
message. Each case runs on funcgrad.mutable and on real torch 2.13; values are checked
against products written out by hand."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, values


def others_product(x, src, index, include_self):
    """d out / d member for a 1-d scatter, each member's slope the product of the others."""
    gx = np.ones_like(x)
    gs = np.zeros_like(src)
    for p in range(len(x)):
        members = [("s", e) for e in range(len(src)) if index[e] == p]
        if not members:
            continue
        group = ([("x", p)] if include_self else []) + members
        for who in group:
            prod = 1.0
            for other in group:
                if other != who:
                    prod *= x[other[1]] if other[0] == "x" else src[other[1]]
            if who[0] == "x":
                gx[p] = prod
            else:
                gs[who[1]] = prod
        if not include_self:
            gx[p] = 0.0
    return gx, gs


CASES = [([0.0, 2.0, 3.0], [0.0, 3.0, 0.5, 2.0], [0, 0, 1, 2]),
         ([1.5, 0.0, 3.0], [0.0, 3.0, 0.5, 0.0], [0, 1, 1, 2]),
         ([1.5, -2.0, 3.0], [0.0, 3.0, 0.0, 2.0], [1, 1, 1, 0]),
         ([1.5, 2.0, 3.0], [0.7, 3.0, 0.5, 2.0], [0, 1, 0, 0])]


@pytest.mark.parametrize("case,include_self", list(itertools.product(CASES, (True, False))))
@both()
def test_prod_gradient_with_zero_factors(torch, case, include_self):
    xv, sv, iv = (np.array(v, dtype=float) for v in case)
    x = torch.tensor(xv, requires_grad=True)
    s = torch.tensor(sv, requires_grad=True)
    out = torch.scatter_reduce(x, 0, torch.tensor(iv.astype(np.int64)), s, "prod",
                               include_self=include_self)
    gx, gs = torch.autograd.grad(out.sum(), (x, s))
    want_x, want_s = others_product(xv, sv, iv.astype(int), include_self)
    np.testing.assert_allclose(values(gx), want_x, atol=1e-15)
    np.testing.assert_allclose(values(gs), want_s, atol=1e-15)

    def fn(x, s):
        return torch.scatter_reduce(x, 0, torch.tensor(iv.astype(np.int64)), s, "prod",
                                    include_self=include_self)
    assert torch.autograd.gradcheck(fn, (x, s))
    two_zeros = any(sum(1 for e in range(len(sv)) if iv[e] == p and sv[e] == 0) > 1
                    for p in range(len(xv)))
    if two_zeros:
        with pytest.raises(RuntimeError, match="scatter_reduce\\(\\): Double backward is "
                                               "unsupported for src when >1 zeros in src are "
                                               "scattered to the same position in self"):
            torch.autograd.gradgradcheck(fn, (x, s))
    else:
        assert torch.autograd.gradgradcheck(fn, (x, s))


@both()
def test_error_node_and_index_reduce_message(torch):
    x = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    s = torch.tensor([0.0, 0.0], dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([0, 0])
    for fn, message in ((torch.scatter_reduce, "scatter_reduce(): Double backward is "
                         "unsupported for src when >1 zeros in src are scattered to the same "
                         "position in self"),
                        (torch.index_reduce, "index_reduce(): Double backward is unsupported "
                         "for source when >1 zeros in source are scattered to the same "
                         "position in self")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # index_reduce is in beta
            out = fn(x, 0, idx, s, "prod")
        gx, gs = torch.autograd.grad(out.sum(), (x, s), create_graph=True)
        assert values(gx).tolist() == [0.0] and values(gs).tolist() == [0.0, 0.0]
        assert gs.grad_fn.name() == "torch::autograd::Error"
        assert type(gs.grad_fn).__name__ == "Error"
        with pytest.raises(RuntimeError) as caught:
            torch.autograd.grad(gs.sum(), (x, s))
        assert str(caught.value) == message
        # x's gradient is differentiable: the product of src, linear in each factor
        (g2,) = torch.autograd.grad(gx.sum(), s, allow_unused=True)
        assert g2 is None or values(g2).tolist() == [0.0, 0.0]


@both()
def test_index_reduce_prod_gradcheck_2d(torch):
    x = torch.tensor([[1.0, 0.0], [2.0, 3.0], [0.5, -1.0]], dtype=torch.float64,
                     requires_grad=True)
    src = torch.tensor([[0.0, 2.0], [4.0, 0.0], [1.5, 2.5]], dtype=torch.float64,
                       requires_grad=True)
    idx = torch.tensor([0, 2, 0])

    def fn(x, src):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.index_reduce(x, 0, idx, src, "prod")
    assert torch.autograd.gradcheck(fn, (x, src))
    assert torch.autograd.gradgradcheck(fn, (x, src))
