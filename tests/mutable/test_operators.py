"""funcgrad.mutable's Python operators (+x, //, %, **=, - with bools), NumPy scalars, custom
Functions returning views, copy/deepcopy: values, grad_fns and errors as torch 2.13 gives
them (checked live too)."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as torch
from funcgrad.mutable import nn

TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"


def _error(fn) -> tuple:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the class is part of what is compared
        return type(exc).__name__, str(exc)
    return None


# --- unary plus, in-place power -----------------------------------------------------------------
def test_unary_plus_is_the_tensor_itself():
    x = torch.tensor([-1.5, 2.5], requires_grad=True)
    assert +x is x
    assert x.is_leaf and x._version == 0
    assert _error(lambda: +torch.tensor([True])) == (
        "RuntimeError", "The `+` operator, on a bool tensor is not supported.")


def test_inplace_power_operator_writes_into_the_same_tensor():
    z = torch.tensor([2.0])
    w = z
    z **= 3
    assert z is w
    assert z.tolist() == [8.0]
    assert w._version == 1


def test_inplace_power_operator_records_pow_backward():
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    y = x * 1
    y **= 2
    assert type(y.grad_fn).__name__ == "PowBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 6.0])  # d(x**2)/dx = 2x


# --- floor division: no derivative in PyTorch ------------------------------------------------------
def test_floor_division_records_a_node_that_fails_at_backward():
    x = torch.tensor([3.5, -3.5], requires_grad=True)
    y = x // 2
    assert y.tolist() == [1.0, -2.0]
    assert y.requires_grad and not y.is_leaf
    assert type(y.grad_fn).__name__ == "NotImplemented"
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    assert repr(y) == "tensor([ 1., -2.], grad_fn=<NotImplemented>)"
    # only inputs that require grad get an edge
    assert len((x // torch.tensor([2.0, 1.0])).grad_fn.next_functions) == 1
    assert _error(lambda: y.sum().backward()) == (
        "RuntimeError", "derivative for aten::floor_divide is not implemented")
    assert x.grad is None


def test_floor_division_in_no_grad_does_not_require_grad():
    x = torch.tensor([3.5], requires_grad=True)
    with torch.no_grad():
        assert not (x // 2).requires_grad


def test_floor_division_values_and_dtypes():
    a = torch.tensor([-7.0, 7.0, -7.5])
    assert (a // 2).tolist() == [-4.0, 3.0, -4.0]
    assert (torch.tensor([5, -5]) // 2).tolist() == [2, -3]
    assert str((torch.tensor([5, 7]) // 2.5).dtype) == "torch.float32"
    assert (7 // torch.tensor([2, 3])).tolist() == [3, 2]
    assert (torch.tensor([1.0]) // 0).tolist() == [float("inf")]


def test_integer_division_by_zero_raises():
    assert _error(lambda: torch.tensor([1]) // torch.tensor([0])) == ("RuntimeError", "ZeroDivisionError")
    assert _error(lambda: torch.tensor([1]) // 0) == ("RuntimeError", "ZeroDivisionError")
    assert _error(lambda: torch.tensor([1]) % torch.tensor([0])) == ("RuntimeError", "ZeroDivisionError")
    assert _error(lambda: 7 % torch.tensor([0])) == ("RuntimeError", "ZeroDivisionError")
    # true division of integers by zero is float division: inf and nan, no error
    assert str((torch.tensor([1, 0]) / torch.tensor([0, 0])).tolist()) == "[inf, nan]"


def test_inplace_integer_division_by_zero_writes_nothing():
    i = torch.tensor([5, -5])
    assert _error(lambda: i.__ifloordiv__(0)) == ("RuntimeError", "ZeroDivisionError")
    assert i.tolist() == [5, -5] and i._version == 0
    w = i
    i //= 2
    assert i is w and i.tolist() == [2, -3] and i._version == 1
    i %= 2
    assert i.tolist() == [0, 1] and i._version == 2


def test_floor_division_of_bools_is_not_implemented():
    assert _error(lambda: torch.tensor([True]) // torch.tensor([True])) == (
        "NotImplementedError", "\"div_floor_cpu\" not implemented for 'Bool'")


# --- remainder -------------------------------------------------------------------------------------
def test_remainder_has_python_sign_and_slope_one():
    x = torch.tensor([-1.5, 2.5], requires_grad=True)
    y = x % 2
    assert y.tolist() == [0.5, 0.5]
    assert type(y.grad_fn).__name__ == "RemainderBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_remainder_by_a_tensor_differentiates_the_divisor():
    x = torch.tensor([-1.5, 2.5], requires_grad=True)
    w = torch.tensor([2.0, -2.0], requires_grad=True)
    y = x % w
    assert y.tolist() == [0.5, -1.5]
    assert type(y.grad_fn).__name__ == "RemainderBackward1"
    y.sum().backward()
    # x % w = x - w * floor(x / w): d/dw = -floor(x / w) = [1, 2]
    assert x.grad.tolist() == [1.0, 1.0]
    assert w.grad.tolist() == [1.0, 2.0]


def test_remainder_by_a_scalar_saves_nothing():
    x = torch.tensor([3.0], requires_grad=True)
    h = x * 1
    y = h % 2
    h.mul_(5)  # PyTorch saves nothing for `% scalar`: backward still works
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_number_modulo_tensor_has_no_derivative():
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    y = 5.0 % x
    assert y.tolist() == [1.0, 2.0]
    assert type(y.grad_fn).__name__ == "NotImplemented"
    assert _error(lambda: y.sum().backward()) == (
        "RuntimeError", "derivative for aten::remainder is not implemented")


# --- NumPy scalars ------------------------------------------------------------------------------------
def test_tensor_of_numpy_scalar_keeps_its_dtype():
    assert torch.tensor(np.float64(1.5)).dtype is torch.float64
    assert torch.tensor(np.float32(1.5)).dtype is torch.float32
    assert torch.tensor(np.int32(3)).dtype is torch.int32
    assert torch.tensor(np.float64(1.5)).item() == 1.5
    # as an operand it is a Python scalar: the tensor's dtype wins
    assert (torch.tensor([1.0]) * np.float64(1.5)).dtype is torch.float32


def test_tensor_of_list_with_numpy_scalars_promotes():
    assert torch.tensor([np.float64(1.5), 2.0]).dtype is torch.float64
    assert torch.tensor([np.float32(1.0), 2.0]).dtype is torch.float32
    assert torch.tensor([np.int32(1), 2.0]).dtype is torch.float32
    assert torch.tensor([np.int32(1), 2]).dtype is torch.int64
    assert torch.tensor([np.int8(1), np.uint8(2)]).dtype is torch.int16
    assert torch.tensor([[np.float64(1.0)], [2.0]]).tolist() == [[1.0], [2.0]]


# --- custom Functions whose outputs view their inputs ---------------------------------------------
CUSTOM_DETAIL = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function.")


def _view_function(torch_like):
    class View(torch_like.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(2, 1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2) * 3

    return View


def _same_function(torch_like):
    class Same(torch_like.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Same


def test_function_output_viewing_input_may_not_be_modified_in_place():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = _view_function(torch).apply(h)
    assert y._base is h and y._is_view()
    assert type(y.grad_fn).__name__ == "ViewBackward"
    assert _error(lambda: y.mul_(2)) == (
        "RuntimeError", f"Output 0 of View is a view and is being modified inplace. {CUSTOM_DETAIL}")
    assert y._version == 0 and y.tolist() == [[1.0], [2.0]]
    z = y[0]  # a view of such a view inherits the rule
    assert _error(lambda: z.mul_(2)) == (
        "RuntimeError", f"Output 0 of Select is a view and is being modified inplace. {CUSTOM_DETAIL}")
    y.sum().backward()  # the custom backward is what runs
    assert x.grad.tolist() == [3.0, 3.0]


def test_function_returning_its_input_gives_a_view():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = _same_function(torch).apply(x)
    assert y is not x and y._base is x
    assert _error(lambda: y.mul_(2)) == (
        "RuntimeError", f"Output 0 of Same is a view and is being modified inplace. {CUSTOM_DETAIL}")
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_function_view_after_its_base_was_modified():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = _view_function(torch).apply(h)
    h.mul_(2)
    assert _error(lambda: y.grad_fn) == (
        "RuntimeError", "Output 0 of View is a view and its base or another view of its base has "
                        f"been modified inplace. {CUSTOM_DETAIL}")


def test_function_view_made_in_no_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    with torch.no_grad():
        y = _view_function(torch).apply(h)
        y.mul_(1)  # fine inside no_grad
    assert _error(lambda: y.mul_(2)) == (
        "RuntimeError", "A view was created in no_grad mode and is being modified inplace with "
                        f"grad mode enabled. {CUSTOM_DETAIL}")
    d = torch.tensor([1.0, 2.0])
    y = _view_function(torch).apply(d)  # nothing requires grad: an ordinary view
    y.mul_(2)
    assert d.tolist() == [2.0, 4.0]


# --- the same programs on live torch ---------------------------------------------------------------------
def _programs(t):
    x = t.tensor([-1.5, 2.5], requires_grad=True)
    w = t.tensor([2.0, -2.0], requires_grad=True)
    out = {}
    for name, make in (("floordiv", lambda: x // 2), ("mod", lambda: x % 2), ("mod_t", lambda: x % w),
                       ("rmod", lambda: 5.0 % x), ("rfloordiv", lambda: 2 // x)):
        r = make()
        out[name] = (r.tolist(), type(r.grad_fn).__name__, _error(lambda: r.sum().backward()))
    out["grads"] = (x.grad.tolist(), w.grad.tolist())
    out["dtypes"] = [str(t.tensor(v).dtype) for v in (np.float64(1.0), np.int16(2), [np.float64(1), 2.0])]
    h = x * 1
    y = _view_function(t).apply(h)
    out["view"] = (_error(lambda: y.mul_(2)), type(y.grad_fn).__name__)
    return out


def test_operators_match_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _programs(torch) == _programs(real)


# --- subtraction with bools ------------------------------------------------------------------------
BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.")


def test_subtraction_with_bools_is_refused():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    for use in (lambda: x - True, lambda: True - x, lambda: torch.sub(x, True),
                lambda: x - torch.tensor([True, False]), lambda: torch.tensor([True]) - 1,
                lambda: x.detach().sub_(True)):
        assert _error(use) == ("RuntimeError", BOOL_SUB)
    assert _error(lambda: torch.tensor([True]) - torch.tensor([True])) == (
        "RuntimeError", "Subtraction, the `-` operator, with two bool tensors is not supported. "
                        "Use the `^` or `logical_xor()` operator instead.")
    assert (x + True).tolist() == [2.0, 3.0]  # addition of a bool is fine
    assert (x - 1).tolist() == [0.0, 1.0]


# --- copy and deepcopy -----------------------------------------------------------------------------
def test_copy_shares_storage_and_deepcopy_copies_leaves():
    import copy
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    c = copy.copy(x)
    assert c is not x and c.is_leaf and c.requires_grad and c.grad is None
    c.data[0] = 10.0
    assert x.tolist() == [10.0, 2.0]  # same storage
    d = copy.deepcopy(x)
    d.data.add_(1)
    assert x.tolist() == [10.0, 2.0] and d.tolist() == [11.0, 3.0]
    assert d.grad.tolist() == [2.0, 4.0] and d.grad is not x.grad
    p = copy.deepcopy(nn.Parameter(torch.tensor([3.0]), requires_grad=False))
    assert type(p).__name__ == "Parameter" and not p.requires_grad
    shared = copy.deepcopy({"a": x, "b": x})
    assert shared["a"] is shared["b"]
    view = torch.tensor([1.0, 2.0, 3.0])[1:]
    assert not copy.deepcopy(view)._is_view()
    assert _error(lambda: copy.deepcopy(x * 2)) == (
        "RuntimeError", "Only Tensors created explicitly by the user (graph leaves) support the "
                        "deepcopy protocol at the moment.  If you were attempting to deepcopy a "
                        "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                        "https://github.com/pytorch/pytorch/pull/103001")


def _copies(t, tnn):
    import copy
    x = t.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    c = copy.copy(x)
    out = [c.requires_grad, c.is_leaf, c.grad, c._version]
    with t.no_grad():
        x.add_(1)
    out += [c._version, x._version, c.tolist()]
    d = copy.copy(x * 2)
    out += [d.grad_fn, d.requires_grad]
    d = copy.deepcopy(x)
    out += [d.grad.tolist(), d._version, d.grad._version, str(copy.deepcopy(t.tensor([1, 2])).dtype)]
    q = copy.deepcopy(tnn.Parameter(t.tensor([3.0])))
    return out + [type(q).__name__, q.requires_grad]


def test_copies_match_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _copies(torch, nn) == _copies(real, real.nn)


def _logical_and_bitwise_program(L):
    a = L.tensor([0.0, 2.0, -3.0])
    b = L.tensor([1, 0, 4])
    got = [L.logical_and(a, b).tolist(), L.logical_or(a, b).tolist(),
           L.logical_xor(a, b).tolist(), L.logical_not(a).tolist(), a.logical_not().tolist()]
    i, j = L.tensor([5, 3, 12]), L.tensor([3, 6, 10])
    got += [L.bitwise_and(i, j).tolist(), i.bitwise_or(j).tolist(),
            L.bitwise_xor(i, 1).tolist(), L.bitwise_not(i).tolist(),
            L.bitwise_not(L.tensor([True, False])).tolist()]
    try:
        L.bitwise_and(a, a)
    except NotImplementedError as e:
        got.append(str(e))
    x = L.ones(3, requires_grad=True)
    y = x.clone()
    y.logical_and_(L.tensor([1.0, 0.0, 2.0]))  # no derivative: y's history stays
    got += [y.tolist(), type(y.grad_fn).__name__, y._version, str(y.dtype)]
    y.sum().backward()
    got.append(x.grad.tolist())
    k = L.tensor([5, 3])
    k.bitwise_xor_(1)
    k.bitwise_not_()
    leaf = L.ones(2, requires_grad=True)
    leaf.logical_not_()  # allowed on a leaf, as torch
    got += [k.tolist(), k._version, leaf.tolist(), leaf._version]
    return got


def test_logical_and_bitwise_functions_and_in_place_forms_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _logical_and_bitwise_program(torch) == _logical_and_bitwise_program(real)
