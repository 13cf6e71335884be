"""View replay (torch.autograd._force_original_view_tracking, is_view_replay_enabled,
torch._C._is/_set_view_replay_enabled) and Tensor._view_func, each case on funcgrad.mutable
and on real torch 2.13 as the oracle."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from tests.mutable.pytorch_port import both, graph, values


@pytest.fixture(autouse=True)
def replay_off():
    """Each test starts and ends with view replay off in this thread (both libraries)."""
    yield
    for lib in ("funcgrad.mutable", "torch"):
        module = __import__(lib, fromlist=["autograd"])
        module.autograd._force_original_view_tracking(False)


def written_view(torch, x, make_view):
    """A view of a clone of `x`, multiplied by 3 in place."""
    view = make_view(x.clone())
    view.mul_(3)
    return view


# (one index per view op: funcgrad records x[1:, :2] as one node where torch records two)
WRITTEN = "CopySlices(CloneBackward0(AccumulateGrad()), None)"
# the view, its history after the write, and the elements of the base it shows
VIEWS = {
    "view": (lambda b: b.view(-1), f"ViewBackward0({WRITTEN})", np.s_[:, :]),
    "slice_t": (lambda b: b[1:].t(), f"TBackward0(SliceBackward0({WRITTEN}))", np.s_[1:, :]),
    "select_unsqueeze": (lambda b: b.unsqueeze(0)[0][1],
                         f"SelectBackward0(SelectBackward0(UnsqueezeBackward0({WRITTEN})))",
                         np.s_[1, :]),
    "transpose": (lambda b: b.transpose(0, 1)[:, 1:3],
                  f"SliceBackward0(TransposeBackward0({WRITTEN}))", np.s_[1:3, :]),
}


@both()
@pytest.mark.parametrize("kind", sorted(VIEWS))
def test_replayed_view_history_and_gradient(torch, kind):
    make_view, expected, region = VIEWS[kind]
    x = torch.arange(12.0, dtype=torch.float64).reshape(3, 4).requires_grad_()
    with torch.autograd._force_original_view_tracking(True):
        view = written_view(torch, x, make_view)
        assert torch.autograd.is_view_replay_enabled()
    assert graph(view.grad_fn) == expected
    # d/dx of view.sum() + base.sum(): 3 + 3 on the viewed elements, 1 elsewhere
    base = view._base
    (view.sum() + base.sum()).backward()
    mask = np.zeros((3, 4))
    mask[region] = 1
    np.testing.assert_array_equal(values(x.grad), 1 + 5 * mask)
    np.testing.assert_array_equal(values(view), 3 * values(make_view(x.detach())))


@both()
def test_without_replay_one_as_strided_node(torch):
    x = torch.ones(2, 2, requires_grad=True)
    view = written_view(torch, x, lambda b: b[1:, :1].t())
    assert graph(view.grad_fn) == f"AsStridedBackward0({WRITTEN})"


@both()
def test_the_mode_when_the_view_was_made_decides(torch):
    x = torch.ones(2, 2, requires_grad=True)
    base = x.clone()
    view = base[1:, :1].t()  # made with replay off
    with torch.autograd._force_original_view_tracking(True):
        view.mul_(2)
        assert type(view.grad_fn).__name__ == "AsStridedBackward0"
        base = x.clone()
        view = base[1:, :1].t()  # made with replay on, written with it off
    view.mul_(2)
    assert type(view.grad_fn).__name__ == "TBackward0"
    # a sibling view made with replay off keeps AsStrided after a write through another one
    base = x.clone()
    sibling = base[0]
    with torch.autograd._force_original_view_tracking(True):
        written = base[1]
    written.mul_(2)
    assert type(sibling.grad_fn).__name__ == "AsStridedBackward0"
    assert type(written.grad_fn).__name__ == "SelectBackward0"


@both()
def test_switch_as_call_context_and_decorator(torch):
    replay = torch._C._is_view_replay_enabled
    assert replay() is False and torch.autograd.is_view_replay_enabled() is False
    switch = torch.autograd._force_original_view_tracking(True)  # a call sets it at once
    assert replay() is True and switch.prev is False
    with switch:
        assert replay() is True
    assert replay() is False  # leaving the block restores what was there when it was made
    torch.autograd._force_original_view_tracking(False)

    @torch.autograd._force_original_view_tracking(True)
    def inside():
        return replay()

    assert replay() is False  # decorating does not leave it on
    assert inside() is True and replay() is False

    def gen():
        yield replay()
        yield replay()

    assert list(torch.autograd._force_original_view_tracking(True)(gen)()) == [True, True]
    assert replay() is False
    clone = torch.autograd._force_original_view_tracking(True).clone()
    assert clone.mode is True and replay() is True


@both()
def test_switch_is_per_thread(torch):
    torch.autograd._force_original_view_tracking(True)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(torch.autograd.is_view_replay_enabled()))
    thread.start()
    thread.join()
    assert seen == [False] and torch.autograd.is_view_replay_enabled() is True


@both()
def test_switch_argument_errors(torch):
    cases = [
        (lambda: torch._C._set_view_replay_enabled(),
         'set_view_replay_enabled() missing 1 required positional arguments: "enabled"'),
        (lambda: torch._C._set_view_replay_enabled(True, True),
         "set_view_replay_enabled() takes 1 positional argument but 2 were given"),
        (lambda: torch._C._set_view_replay_enabled(1),
         "set_view_replay_enabled(): argument 'enabled' (position 1) must be bool, not int"),
        (lambda: torch._C._is_view_replay_enabled(1),
         "torch._C._is_view_replay_enabled() takes no arguments (1 given)"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError) as raised:
            call()
        assert str(raised.value) == message
    assert torch._C._set_view_replay_enabled(True) is None and torch._C._is_view_replay_enabled()


@both()
@pytest.mark.parametrize("replay", [False, True])
def test_view_func_makes_the_view_again(torch, replay):
    torch.autograd._force_original_view_tracking(replay)
    base = torch.arange(12.0, dtype=torch.float64).reshape(3, 4).clone()
    view = base[1:].t()
    new_base = torch.arange(12.0, 24.0, dtype=torch.float64).reshape(3, 4).clone().requires_grad_()
    again = view._view_func(new_base)
    assert again._base is new_base
    assert (again.shape, again.stride(), again.storage_offset()) == ((4, 2), (1, 4), 4)
    np.testing.assert_array_equal(values(again), np.arange(12.0, 24.0).reshape(3, 4)[1:].T)
    assert graph(again.grad_fn) == ("TBackward0(SliceBackward0(AccumulateGrad()))" if replay
                                    else "AsStridedBackward0(AccumulateGrad())")
    assert view._view_func_unsafe(new_base)._base is new_base
    # a base of other sizes or strides, or a tensor that is no view: None
    assert view._view_func(torch.zeros(5, 6)) is None
    assert view._view_func(torch.zeros(4, 3).t()) is None
    assert base._view_func(new_base) is None
    offset = torch.arange(12.0)[2:]._view_func(torch.zeros(12))
    assert offset.storage_offset() == 2 and offset.shape == (10,)
    with pytest.raises(TypeError, match=r"^_view_func\(\): argument 'new_base' \(position 1\) "
                                        r"must be Tensor, not int$"):
        view._view_func(3)


@both()
def test_view_func_across_dtypes(torch):
    real = torch.view_as_real(torch.zeros(3, dtype=torch.complex128))
    again = real._view_func(torch.tensor([1 + 2j, 3 + 4j, 5 + 6j]))
    np.testing.assert_array_equal(values(again), [[1, 2], [3, 4], [5, 6]])
