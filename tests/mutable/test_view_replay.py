"""View replay (torch.autograd._force_original_view_tracking): after an in-place write into a
view, its regenerated grad_fn replays the view's own ops instead of one AsStridedBackward0;
gradients are the same either way. Each case on funcgrad.mutable and on real torch 2.13."""
from __future__ import annotations

import threading

import pytest

from tests.mutable.pytorch_port import both, close, graph

VIEWS = {
    "view": (lambda b: b.view(-1), "ViewBackward0"),
    "slice": (lambda b: b[1:], "SliceBackward0"),
    "select": (lambda b: b[1], "SelectBackward0"),
    "transpose": (lambda b: b.transpose(0, 1), "TransposeBackward0"),
    "permute": (lambda b: b.permute(1, 0), "PermuteBackward0"),
    "narrow": (lambda b: b.narrow(1, 1, 2), "SliceBackward0"),
    "view of a slice": (lambda b: b[1:].view(-1), "ViewBackward0"),
}


@both()
@pytest.mark.parametrize("kind", sorted(VIEWS))
def test_replayed_grad_fn_names_the_view_ops_and_gives_the_same_gradient(torch, kind):
    make, name = VIEWS[kind]
    torch.manual_seed(0)
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    grads = {}
    for replay in (False, True):
        with torch.autograd._force_original_view_tracking(replay):
            base = x.clone()
            v = make(base)
            v.mul_(3)
            fn = v.grad_fn
            out = (base * base).sum() + v.exp().sum()
            grads[replay] = torch.autograd.grad(out, x)[0]
        if replay:
            assert type(fn).__name__ == name
            # the replayed chain ends at the base's in-place node
            assert "CopySlices" in graph(fn)
        else:
            assert type(fn).__name__ == "AsStridedBackward0"
    close(grads[True], grads[False])
    # closed form: d/dx [sum(x^2 with the view's part scaled by 3) + sum(exp(3 * view))]
    viewed = torch.zeros(3, 4, dtype=torch.float64)
    make(viewed).fill_(1.0)  # 1 where the view looks, else 0
    base = x.detach() * (1 + 2 * viewed)
    expected = 2 * base * (1 + 2 * viewed) + viewed * 3 * base.exp()
    close(grads[True], expected)


@both()
def test_switch_as_call_block_decorator_and_per_thread(torch):
    assert not torch.autograd.is_view_replay_enabled()
    with torch.autograd._force_original_view_tracking(True):
        assert torch.autograd.is_view_replay_enabled()
        torch._C._set_view_replay_enabled(False)
        assert not torch.autograd.is_view_replay_enabled()
    assert not torch.autograd.is_view_replay_enabled()
    torch.autograd._force_original_view_tracking(True)  # a call sets it at once
    try:
        assert torch.autograd.is_view_replay_enabled()
        seen = []
        other = threading.Thread(target=lambda: seen.append(torch.autograd.is_view_replay_enabled()))
        other.start()
        other.join()
        assert seen == [False]
    finally:
        torch.autograd._force_original_view_tracking(False)
    assert not torch.autograd.is_view_replay_enabled()

    @torch.autograd._force_original_view_tracking(True)
    def replaying():
        return torch.autograd.is_view_replay_enabled()

    assert not torch.autograd.is_view_replay_enabled()
    assert replaying() and not torch.autograd.is_view_replay_enabled()
