"""torch.autograd.graph.allow_mutation_on_saved_tensors' bookkeeping as PyTorch keeps it (one
handle per saved tensor at one version, alive while a graph holds it; a copy per handle when
that tensor is written; all forgotten on leaving the block) and second derivatives through a
saved tensor written since. Each case on funcgrad.mutable and on real torch 2.13."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, values


def counts(ctx):
    return len(list(ctx.tid_to_weakhandle.items())), len(list(ctx.cloned.items()))


@both()
def test_copies_live_as_long_as_the_graph(torch):
    with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        a = torch.randn(2, 3, requires_grad=True).clone()
        out = (a ** 2).sum()
        assert counts(ctx) == (1, 0)
        out.backward()  # the graph is freed: nothing to keep when `a` is written
        a.sin_()
        assert counts(ctx)[1] == 0
        out = (a ** 2).sum()
        a.sin_()
        assert counts(ctx)[1] == 1
        del out
        assert counts(ctx)[1] == 0


@both()
def test_one_copy_per_tensor_version(torch):
    with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        a = torch.randn(2, 3, requires_grad=True).clone()
        b = a ** 2
        c = a ** 2  # the same tensor at the same version: one handle
        a.sin_()
        assert counts(ctx)[1] == 1
        del b, c
        assert counts(ctx)[1] == 0
        b = a ** 2
        a.sin_()
        c = a ** 2  # a new version: a second handle
        a.sin_()
        assert counts(ctx)[1] == 2
        del b
        assert counts(ctx)[1] == 1
        del c
        assert counts(ctx)[1] == 0


@both()
def test_out_variant_write_and_leaving_the_block(torch):
    with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        a = torch.tensor([1.0], requires_grad=True)
        b = torch.tensor([1.0])
        out = a * b
        assert counts(ctx) == (1, 0)
        torch.sin(torch.tensor([2.0]), out=b)
        assert counts(ctx)[1] == 1
        out.backward()
        assert counts(ctx)[1] == 0
        assert values(a.grad).tolist() == [1.0]  # the value of b when saved
        kept = a * b
        b.add_(1)
    assert counts(ctx) == (0, 0) and kept is not None  # forgotten on leaving the block


@both()
def test_second_derivative_through_a_tensor_written_since(torch):
    with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        a = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()  # b's grad_fn is now SinBackward0; pow saved it as CloneBackward0's output
        (da,) = torch.autograd.grad(out, a, create_graph=True)
        assert values(da).tolist() == [1.0, 2.0, 4.0]
        (d2a,) = torch.autograd.grad(da.sum(), a)
    assert values(d2a).tolist() == [2.0, 2.0, 2.0]
    assert counts(ctx) == (0, 0)


@both()
def test_hook_value_takes_the_place_the_tensor_had_when_saved(torch):
    a = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    b = a * 3
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        out = (b ** 2).sum()
    with torch.no_grad():
        b.add_(0)  # b keeps its grad_fn; the hooks hold the value, so no version error
    (db,) = torch.autograd.grad(out, b, create_graph=True)
    (d2a,) = torch.autograd.grad(db.sum(), a)
    assert values(d2a).tolist() == [6.0, 6.0]  # d/da sum(2 * (3a)) through MulBackward0
    with pytest.raises(RuntimeError, match="nested"):
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            with torch.autograd.graph.allow_mutation_on_saved_tensors():
                pass
