"""Node post hooks registered while the node runs (from a saved-tensor unpack hook), and a
real leaf's gradient from a complex computation. Each case on funcgrad.mutable and on real
torch 2.13 as the oracle."""
from __future__ import annotations

import warnings

import pytest

from tests.mutable.pytorch_port import both, values


@both()
def test_post_hook_registered_during_unpack_gets_no_output_gradients(torch):
    seen = []

    def unpack(t):
        node = torch._C._current_autograd_node()

        def hook(grad_inputs, grad_outputs):
            seen.append(len(grad_outputs))
            return tuple(None if g is None else g / 2 for g in grad_inputs)

        node.register_hook(hook)
        return t

    a = torch.tensor([[1.0, 2.0], [4.0, 8.0]], dtype=torch.float64, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        out = (a * a).sum()
    out.backward()
    # a * a unpacks `a` twice: two hooks, each halving 2a
    assert values(a.grad).tolist() == [[0.5, 1.0], [2.0, 4.0]]
    assert seen == [0, 0]
    # a hook present before the node ran sees its output gradients
    seen.clear()
    b = a * a
    b.grad_fn.register_hook(lambda gi, go: seen.append(len(go)))
    b.sum().backward()
    assert seen == [1]


@both()
def test_real_leaf_takes_the_real_part_silently(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * (1 + 2j)).abs().sum().backward()
        (x * 1j).real.sum().backward()
    assert values(x.grad) == pytest.approx([5 ** 0.5] * 2, rel=1e-6)
