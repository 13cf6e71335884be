"""funcgrad.mutable: which tensor hooks fire (and with what), shape-op argument errors, and
argument-parser messages, as torch 2.13 gives them (checked live too where torch is here)."""
from __future__ import annotations

import pytest

import funcgrad.mutable as torch

TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"


def _error(fn) -> tuple:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the class is part of what is compared
        return type(exc).__name__, str(exc)
    return None


# --- hooks ----------------------------------------------------------------------------------------
def test_hook_of_unused_split_output_is_called_with_none():
    calls = []
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = (x * 1).split(2)
    a.register_hook(lambda g: calls.append(("a", g.tolist())))
    b.register_hook(lambda g: calls.append(("b", g)))
    (a * 3).sum().backward()
    assert calls == [("a", [3.0, 3.0]), ("b", None)]
    assert x.grad.tolist() == [3.0, 3.0, 0.0, 0.0]


def test_hook_may_not_replace_a_none_gradient():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = (x * 1).split(2)
    b.register_hook(lambda g: torch.ones(2))
    assert _error(lambda: (a * 3).sum().backward()) == (
        "RuntimeError", "can't replace a None gradient with a non-None value")


def _none_for_first(torch_like):
    class F(torch_like.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return None, g

    return F


def test_nodes_reached_without_gradient_call_their_hooks_with_none():
    calls = []
    x = torch.tensor([1.0], requires_grad=True)
    h = x * 2
    w = torch.tensor([1.0], requires_grad=True)
    w.register_hook(lambda g: calls.append(("w", g)))
    q = w * 1
    q.retain_grad()
    q.register_hook(lambda g: calls.append(("q", g)))
    _none_for_first(torch).apply(q, h).sum().backward()
    assert calls == [("q", None), ("w", None)]
    assert x.grad.tolist() == [2.0]
    assert w.grad is None and q.grad is None


def test_autograd_grad_fires_hooks_only_on_the_paths_to_its_inputs():
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    w = torch.tensor(2.0, requires_grad=True)
    a = x * w
    b = a * 3
    a.register_hook(lambda g: calls.append("a"))
    b.register_hook(lambda g: calls.append("b"))
    x.register_hook(lambda g: calls.append("x"))
    w.register_hook(lambda g: calls.append("w"))
    (gx,) = torch.autograd.grad(b, [x])
    assert gx.item() == 6.0  # d(3 x w)/dx = 3 w
    assert calls == ["b", "a", "x"]
    assert x.grad is None and w.grad is None


# --- shape ops ---------------------------------------------------------------------------------------
def test_split_and_chunk_sizes():
    x = torch.arange(4.0)
    assert [p.tolist() for p in x.split(10)] == [[0.0, 1.0, 2.0, 3.0]]
    assert _error(lambda: x.split(0)) == (
        "RuntimeError", "split_size can only be 0 if dimension size is 0, but got dimension size of 4")
    assert _error(lambda: x.split(-1)) == (
        "RuntimeError", "split expects split_size be non-negative, but got split_size=-1")
    assert [p.shape for p in torch.zeros(0).split(0)] == [torch.Size([0])]
    assert _error(lambda: x.chunk(0)) == (
        "RuntimeError", "chunk expects `chunks` to be greater than 0, got: 0")


def test_unbind_and_diagonal_dimensions():
    assert _error(lambda: torch.tensor(1.0).unbind()) == (
        "IndexError", "Dimension specified as 0 but tensor has no dimensions")
    assert _error(lambda: torch.tensor(1.0).unbind(1)) == (
        "IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    assert _error(lambda: torch.arange(3.0).diagonal()) == (
        "IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    assert _error(lambda: torch.zeros(2, 3).diagonal(0, 0, 0)) == (
        "RuntimeError", "diagonal dimensions cannot be identical 0, 0")
    assert torch.tensor([[1, 2], [3, 4]]).diagonal(0, 1, 0).tolist() == [1, 4]


def test_missing_arguments_read_as_pytorch_parser_messages():
    x = torch.zeros(2, 3)
    assert _error(lambda: x.unsqueeze()) == (
        "TypeError", 'unsqueeze() missing 1 required positional arguments: "dim"')
    assert _error(lambda: x.transpose(0)) == (
        "TypeError", 'transpose() missing 1 required positional arguments: "dim1"')
    assert _error(lambda: x.transpose()) == (
        "TypeError", 'transpose() missing 2 required positional argument: "dim0", "dim1"')
    assert _error(lambda: x.narrow(0, 1)) == (
        "TypeError", "narrow() received an invalid combination of arguments - got (int, int), but "
                     "expected one of:\n * (int dim, Tensor start, int length)\n"
                     " * (int dim, int start, int length)\n")
    # the wrapped methods still work, and errors from inside them pass through untouched
    assert x.transpose(0, 1).shape == torch.Size([3, 2])
    assert x.narrow(1, 1, 2).shape == torch.Size([2, 2])
    assert _error(lambda: x.transpose(0, 5))[0] == "IndexError"


def _programs(t):
    x = t.zeros(2, 3)
    out = [_error(lambda: x.unsqueeze()), _error(lambda: x.select(0)), _error(lambda: x.chunk()),
           _error(lambda: x.mul()), _error(lambda: x.pow()), _error(lambda: x.narrow())]
    calls = []
    w = t.tensor([1.0], requires_grad=True)
    q = w * 1
    q.register_hook(lambda g: calls.append(g))
    h = t.tensor([1.0], requires_grad=True) * 2
    _none_for_first(t).apply(q, h).sum().backward()
    return out + [calls]


def test_matches_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _programs(torch) == _programs(real)


# --- indexing ------------------------------------------------------------------------------------------
def test_long_index_after_ellipsis_applies_to_the_last_dimension():
    x = torch.arange(1.0, 25.0).reshape(2, 3, 4).requires_grad_()
    y = x[..., torch.tensor([3, 1])]
    assert list(y.shape) == [2, 3, 2]
    assert type(y.grad_fn).__name__ == "IndexBackward0"
    assert y[0].tolist() == [[4.0, 2.0], [8.0, 6.0], [12.0, 10.0]]
    (y * y).sum().backward()
    assert x.grad[1].tolist() == [[0.0, 28.0, 0.0, 32.0], [0.0, 36.0, 0.0, 40.0],
                                  [0.0, 44.0, 0.0, 48.0]]  # 2 y at the picked columns
    # PyTorch's message numbers the index arrays (0 = the first), the size is the dimension's
    assert _error(lambda: x[..., torch.tensor([4])]) == (
        "IndexError", "index 4 is out of bounds for dimension 0 with size 4")
    assert _error(lambda: x[..., torch.tensor([3]), 0]) == (
        "IndexError", "index 3 is out of bounds for dimension 0 with size 3")
    assert _error(lambda: x[:, torch.tensor([0]), torch.tensor([5])]) == (
        "IndexError", "index 5 is out of bounds for dimension 1 with size 4")
    assert x[..., torch.tensor([2]), 0].tolist() == [[9.0], [21.0]]


def test_index_bounds_messages_match_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)

    def program(t):
        x = t.arange(1.0, 25.0).reshape(2, 3, 4)
        cases = [(t.tensor([0]), t.tensor([5])), (slice(None), t.tensor([5]), t.tensor([0])),
                 ([0], [5]), (slice(None), [3]), (t.tensor([5]), slice(None), t.tensor([0])),
                 (Ellipsis, t.tensor([4])), (0, t.tensor([3])), (Ellipsis, t.tensor([3]), 0)]
        return [_error(lambda: x[idx]) for idx in cases]

    assert program(torch) == program(real)


def test_assignment_with_ints_and_lists_writes_through_a_select_view():
    x = torch.arange(1.0, 25.0).reshape(2, 3, 4).requires_grad_()
    w = torch.tensor(-2.0, requires_grad=True)
    y = x * 1
    y[0, [1, 2], 1:] = w * 3
    assert type(y.grad_fn).__name__ == "CopySlices" and y._version == 1
    assert y[0].tolist() == [[1.0, 2.0, 3.0, 4.0], [5.0, -6.0, -6.0, -6.0], [9.0, -6.0, -6.0, -6.0]]
    (y * y).sum().backward()
    assert w.grad.item() == 6 * 3 * 2 * -6.0  # six written elements, each d(v^2)/dw = 2 v * 3
    assert x.grad[0, 1].tolist() == [10.0, 0.0, 0.0, 0.0]
    leaf = torch.zeros(2, 3, requires_grad=True)

    def write():
        leaf[[0, 1], 1] = 5.0

    assert _error(write) == ("RuntimeError", "a view of a leaf Variable that requires grad is "
                                             "being used in an in-place operation.")


def test_basic_index_errors():
    x = torch.zeros(2, 3)
    too_many = ("IndexError", "too many indices for tensor of dimension 2")
    assert _error(lambda: x[:, :, :]) == too_many
    assert _error(lambda: x[0, :, None, 1]) == too_many
    assert _error(lambda: x[0, 0, 0]) == too_many
    assert _error(lambda: x[5]) == ("IndexError", "index 5 is out of bounds for dimension 0 with size 2")
    assert _error(lambda: x[0, -4]) == ("IndexError", "index -4 is out of bounds for dimension 1 with size 3")
    assert _error(lambda: x[::-1]) == ("ValueError", "step must be greater than zero")
    assert x[1, -1].shape == torch.Size([]) and type(x[1, -1].grad_fn) is type(None)
    assert x[1:, ::2].shape == torch.Size([1, 2])


def test_basic_index_errors_match_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)

    def program(t):
        x = t.zeros(2, 3)
        cases = [(slice(None),) * 3, (0, slice(None), None, 1), (Ellipsis, 0, 0, 0), 5, (0, -4), (1, 3)]
        return [_error(lambda: x[idx]) for idx in cases]

    assert program(torch) == program(real)
