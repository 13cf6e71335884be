"""Non-reentrant checkpoint: what its early-stopped recomputation leaves alive (nothing once
backward is done, even with the garbage collector off), and its debug mode (``debug=True`` or
``set_checkpoint_debug_enabled``): a recomputation that saves other tensors than the first run
raises CheckpointError (a RuntimeError) saying so, the debug report when debug is on, taken
when checkpoint() is called. Each case on funcgrad.mutable and on real torch 2.13 as the
oracle, with the same assertions."""
from __future__ import annotations

import gc
import weakref

import pytest

from tests.mutable.pytorch_port import both, values

DEBUG_TEXT = "You are seeing this error because you passed `debug=True` to checkpoint"


@both()
def test_early_stopped_recomputation_leaves_nothing_alive(torch):
    refs = []

    class Copy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.clone()
            ctx.save_for_backward(y)  # an output saved: the recomputation stops right here
            refs.append(weakref.ref(y))
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * 3

    x = torch.ones(2, 2, requires_grad=True)

    def fn(inp):
        return Copy.apply(inp)

    def run():
        out = torch.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)
        out.sum().backward()

    run()  # torch's first checkpoint in a process keeps its caller's frame (set-up, once)
    refs.clear()
    x.grad = None
    was = gc.isenabled()
    gc.disable()
    try:
        run()
        assert len(refs) == 2  # the first run and the recomputation
        assert [r() for r in refs] == [None, None]
    finally:
        if was:
            gc.enable()
    assert values(x.grad).tolist() == [[3.0, 3.0], [3.0, 3.0]]


def changing(first, then):
    """A function that runs `first` the first time it is called and `then` afterwards."""
    calls = []

    def fn(x):
        calls.append(1)
        return first(x) if len(calls) == 1 else then(x)

    return fn


def two_saves(x):
    return x.sin().exp()  # saves x, then exp's output (shape [1])


def three_saves(x):
    return x.sin().exp().sin()


def wider_second_save(torch):
    return lambda x: x.sin() * torch.tensor([1.0, 2.0])  # saves x, then a [2] constant


def run(torch, fn, **kwargs):
    a = torch.tensor([0.5], requires_grad=True)
    torch.utils.checkpoint.checkpoint(fn, a, use_reentrant=False, **kwargs).sum().backward()


@both()
@pytest.mark.parametrize("debug", [False, True])
def test_other_metadata_in_the_recomputation(torch, debug):
    error = torch.utils.checkpoint.CheckpointError
    assert issubclass(error, RuntimeError)
    with pytest.raises(error) as info:
        run(torch, changing(two_saves, wider_second_save(torch)), debug=debug)
    assert (DEBUG_TEXT in str(info.value)) == debug
    if not debug:
        assert "Recomputed values for the following tensors have different metadata" in str(
            info.value)


@both()
@pytest.mark.parametrize("debug", [False, True])
def test_fewer_saves_in_the_recomputation(torch, debug):
    with pytest.raises(RuntimeError) as info:
        run(torch, changing(three_saves, two_saves), debug=debug)
    assert (DEBUG_TEXT in str(info.value)) == debug
    if not debug:
        assert "A different number of tensors was saved" in str(info.value)


@both()
@pytest.mark.parametrize("setting,argument,shown", [
    (True, False, True), (False, True, False), (None, True, True), (None, False, False)])
def test_the_context_manager_overrides_the_argument(torch, setting, argument, shown):
    fn = changing(two_saves, wider_second_save(torch))
    a = torch.tensor([0.5], requires_grad=True)
    with torch.utils.checkpoint.set_checkpoint_debug_enabled(setting):
        out = torch.utils.checkpoint.checkpoint(fn, a, use_reentrant=False, debug=argument)
    with pytest.raises(RuntimeError) as info:  # backward outside the block: taken at the call
        out.sum().backward()
    assert (DEBUG_TEXT in str(info.value)) == shown


@both()
def test_debug_changes_nothing_when_the_runs_agree(torch):
    a = torch.tensor([0.5, 1.0], requires_grad=True)
    with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):
        out = torch.utils.checkpoint.checkpoint(three_saves, a, use_reentrant=False)
    out.sum().backward()
    expected = torch.cos(a.detach()) * torch.exp(torch.sin(a.detach())) * torch.cos(
        torch.exp(torch.sin(a.detach())))
    assert values(a.grad) == pytest.approx(values(expected), rel=1e-6)
