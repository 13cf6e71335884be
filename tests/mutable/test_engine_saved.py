"""Saved tensors as PyTorch's private API shows them: torch._C._autograd._make_saved_tensor,
SavedTensor.unpack(), the refusal of SavedTensor() from Python, and what an unpack hook's
value of a saved leaf is. Each case on funcgrad.mutable and on real torch 2.13 as the oracle."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, values


def counting_hooks(torch, counts, unpacked=None):
    """saved_tensors_hooks counting packs and unpacks; unpack gives `unpacked` when given."""
    def pack(t):
        counts[0] += 1
        return t

    def unpack(t):
        counts[1] += 1
        return t if unpacked is None else unpacked

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


@both()
def test_make_saved_tensor_packs_once_unpacks_each_time(torch):
    a = torch.randn(5, requires_grad=True)
    counts = [0, 0]
    with counting_hooks(torch, counts):
        saved = torch._C._autograd._make_saved_tensor(a, is_output=False)
        assert values(saved.unpack()).tolist() == values(a).tolist()
        saved.unpack()
    assert counts == [1, 2]


@both()
def test_make_saved_tensor_gives_back_the_tensor(torch):
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    make = torch._C._autograd._make_saved_tensor
    for t in (x, torch.randn(3), y):
        saved = make(t, False)
        assert saved.unpack() is t and saved.data is t and saved.unpack_hook is None
    # an output: kept for a leaf or a tensor without history, refused for one with a grad_fn
    for t in (x, torch.randn(3)):
        assert make(t, True).unpack() is t
    with pytest.raises(RuntimeError, match=r"^Trying to use a saved tensor that has been "
                                           r"detached in-place"):
        make(y, True).unpack()
    assert make(x, is_output=False, is_inplace_on_view=False).unpack() is x


@both()
def test_make_saved_tensor_checks_the_version(torch):
    x = torch.randn(3, requires_grad=True)
    detached = x.detach()
    saved = torch._C._autograd._make_saved_tensor(detached, False)
    detached.add_(1)
    with pytest.raises(RuntimeError) as raised:
        saved.unpack()
    assert str(raised.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]] is at version 1; expected version 0 instead.")
    y = x * 2
    saved = torch._C._autograd._make_saved_tensor(y, False)
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\], which is output 0 of "
                                           r"Add, is at version 1; expected version 0"):
        saved.unpack()


@both()
def test_make_saved_tensor_argument_errors(torch):
    x = torch.ones(2, requires_grad=True)
    signature = ("_make_saved_tensor(): incompatible function arguments. The following argument "
                 "types are supported:\n    1. (tensor: torch.Tensor, is_output: bool, "
                 "is_inplace_on_view: bool = False) -> torch._C._autograd.SavedTensor\n\n"
                 "Invoked with: ")
    for args, invoked in (((3, False), "3, False"), ((x,), repr(x)), ((None, False), "None, False")):
        with pytest.raises(TypeError) as raised:
            torch._C._autograd._make_saved_tensor(*args)
        assert str(raised.value) == signature + invoked
    with torch.inference_mode():
        inference = torch.ones(2)
    with pytest.raises(RuntimeError, match="^Inference tensors cannot be saved for backward"):
        torch._C._autograd._make_saved_tensor(inference, False)


@both()
def test_make_saved_tensor_hooks(torch):
    x = torch.randn(3, requires_grad=True)
    saved = torch._C._autograd._make_saved_tensor(x, False)
    saved.register_hooks(lambda t: t * 1, lambda t: t)
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor whose "
                                           "hooks have already been set"):
        saved.register_hooks(lambda t: t, lambda t: t)
    counts = [0, 0]
    with counting_hooks(torch, counts, torch.ones(3)):
        saved = torch._C._autograd._make_saved_tensor(x, False)
    got = saved.unpack()
    # the hook's tensor in the saved leaf's place: a leaf requiring grad, no grad_fn
    assert values(got).tolist() == [1, 1, 1] and counts == [1, 1]
    assert got.requires_grad and got.grad_fn is None and got.is_leaf


@both()
def test_saved_tensor_cannot_be_made_from_python(torch):
    with pytest.raises(RuntimeError, match=r"^Trying to create a SavedTensor object from Python "
                                           r"is forbidden\.$"):
        torch.autograd.SavedTensor()
    with pytest.raises(TypeError, match=r"^__init__\(\): incompatible constructor arguments"):
        torch._C._autograd.SavedTensor(1, 2)
    assert torch.autograd.SavedTensor is torch._C._autograd.SavedTensor


@both()
def test_raw_saved_unpack(torch):
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    out = y.sin()
    raw = out.grad_fn._raw_saved_self
    assert type(raw) is torch.autograd.SavedTensor and raw.unpack() is y
    ex = x.exp()
    with pytest.raises(RuntimeError, match="^Trying to use a saved tensor that has been detached"):
        ex.grad_fn._raw_saved_result.unpack()  # an output: torch gives unpack() no grad_fn
    raw = ex.grad_fn._raw_saved_result
    ex.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        raw.unpack()


@both()
def test_unpacked_value_of_a_saved_leaf_is_a_leaf_feeding_its_accumulator(torch):
    x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    replacement = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: "packed", lambda p: replacement):
        out = x.sin()
    got = out.grad_fn._saved_self
    assert got.grad_fn is None and got.requires_grad and got.is_leaf
    (got * 3).sum().backward()  # a gradient through the unpacked value reaches x
    assert values(x.grad).tolist() == [3.0, 3.0, 3.0]
    x.grad = None
    out.sum().backward()  # sin's rule reads the hook's value: cos([1, 2, 3])
    assert values(x.grad).tolist() == values(replacement.cos()).tolist()


@both()
def test_cached_tensor_registry(torch):
    x = torch.rand(4)
    torch._C._set_cached_tensors_enabled(True)
    try:
        assert not torch._C._is_cached_tensor(x)
        torch._C._add_cached_tensor(x)
        torch._C._add_cached_tensor(x)  # a set: once
        assert torch._C._is_cached_tensor(x) and not torch._C._is_cached_tensor(x[1:])
        torch._C._remove_cached_tensor(x)
        assert not torch._C._is_cached_tensor(x)
        torch._C._remove_cached_tensor(x)
        torch._C._add_cached_tensor(x)
    finally:
        torch._C._set_cached_tensors_enabled(False)
    assert not torch._C._is_cached_tensor(x)  # consulted only while enabled
    with pytest.raises(RuntimeError):
        torch._C._add_cached_tensor(x)
