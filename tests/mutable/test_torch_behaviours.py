"""Behaviours PyTorch's own autograd tests pin down (issue 10, items 1 and 2): each program
runs on funcgrad.mutable and, when installed, on real torch; both give the same outcome."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad.mutable as fm

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None
LIBS = [fm] + ([torch] if torch is not None else [])


def _outcome(fn, lib):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn(lib)
        return ("ok", value, [str(w.message) for w in caught if w.category is not RuntimeWarning])
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def _same_everywhere(fn, expected=None):
    outcomes = [_outcome(fn, lib) for lib in LIBS]
    if expected is not None:
        assert outcomes[0] == expected
    assert all(o == outcomes[0] for o in outcomes), outcomes


def _names(fn):
    return [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


def test_python_number_operands_keep_a_none_edge():
    def program(lib):
        y = lib.ones(2, requires_grad=True)
        return [_names(e.grad_fn) for e in (y * 2, 2 * y + 1, y - 1, y / 2, y ** 2, 1 - y,
                                            lib.where(y > 0, y, 0.0))]
    _same_everywhere(program, ("ok", [["AccumulateGrad", None], ["MulBackward0", None],
                                      ["AccumulateGrad", None], ["AccumulateGrad", None],
                                      ["AccumulateGrad"], ["AccumulateGrad"],
                                      ["AccumulateGrad", None]], []))


def test_numpy_under_no_grad():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            return x.numpy().tolist()
    _same_everywhere(program, ("ok", [1.0, 1.0], []))


def test_zero_base_power_slope():
    def program(lib):
        b = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        (lib.zeros(3) ** b).sum().backward()
        return b.grad.tolist()
    assert _outcome(program, fm)[1] == [-np.inf, 0.0, 0.0]
    if torch is not None:
        assert _outcome(program, torch)[1] == [-np.inf, 0.0, 0.0]


def test_complex_tensors_print_abs_and_refuse_implicit_backward():
    def program(lib):
        z = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        a = z.abs()
        a.sum().backward()
        shown = [repr(z), repr(a), repr(lib.tensor([1.123456 + 2j, -3e-5j])),
                 repr(lib.tensor([1j], dtype=lib.complex128))]
        try:
            (z * z).sum().backward()
        except RuntimeError as exc:
            shown.append(str(exc))
        return shown, a.dtype == lib.float32
    got = _outcome(program, fm)
    assert got[1][0][0] == "tensor([1.+2.j, 3.-1.j], requires_grad=True)"
    assert got[1][0][-1] == ("grad can be implicitly created only for real scalar outputs but "
                             "got torch.complex64")
    if torch is not None:
        want = _outcome(program, torch)
        assert got == want
        assert got[1][1] and want[1][1]
    z = fm.tensor([3 + 4j], requires_grad=True)
    z.abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [0.6 + 0.8j], rtol=1e-6)  # z / |z|


def test_materialized_gradients_with_create_graph_require_grad():
    def program(lib):
        y = lib.ones(2, requires_grad=True)
        g = lib.autograd.grad((y ** 2).sum(), [y, lib.ones(1, requires_grad=True)],
                              allow_unused=True, materialize_grads=True, create_graph=True)
        return [t.requires_grad for t in g], g[1].tolist()
    _same_everywhere(program, ("ok", ([True, True], [0.0]), []))


def test_calling_a_grad_fn():
    def program(lib):
        y = lib.ones(2, requires_grad=True)
        by_two = (y * 2).grad_fn(lib.ones(2))
        through_exp = y.exp().grad_fn(lib.ones(2))
        return repr(by_two), repr(through_exp)
    _same_everywhere(program, ("ok", ("(tensor([2., 2.]), None)",
                                      "tensor([2.7183, 2.7183], grad_fn=<MulBackward0>)"), []))


def test_post_accumulate_grad_hook():
    def program(lib):
        y = lib.ones(2, requires_grad=True)
        seen = []
        y.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
        (y * 3).sum().backward()
        lib.autograd.grad((y * 3).sum(), y)  # autograd.grad does not accumulate: no call
        return seen
    _same_everywhere(program, ("ok", [[3.0, 3.0]], []))


def test_saved_tensors_by_pytorch_names():
    def program(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.tensor([2.0, 3.0], requires_grad=True)
        z = a * b
        return (z.grad_fn._saved_self is a, z.grad_fn._saved_other is b,
                repr(a.exp().grad_fn._saved_result), repr((a * 2).grad_fn._saved_other))
    _same_everywhere(program, ("ok", (True, True, "tensor([2.7183, 2.7183], grad_fn=<ExpBackward0>)",
                                      "tensor(2)"), []))


def test_detect_anomaly_warns():
    def program(lib):
        with lib.autograd.detect_anomaly():
            return lib.is_anomaly_enabled()
    _same_everywhere(program, ("ok", True, [
        "Anomaly Detection has been enabled. This mode will increase the runtime and should only "
        "be enabled for debugging."]))


def test_mark_dirty_on_a_view_keeps_the_other_inputs_gradient():
    def program(lib):
        a = lib.ones(2, requires_grad=True)
        b = a.clone()
        view = b[0:1]

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, other):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2, g.sum() * 3

        other = lib.tensor(5.0, requires_grad=True)
        out = Double.apply(view, other)
        b.sum().backward()
        return (a.grad.tolist(), other.grad.item(), type(out.grad_fn).__name__,
                type(b.grad_fn).__name__)
    _same_everywhere(program, ("ok", ([2.0, 1.0], 3.0, "AsStridedBackward0", "CopySlices"), []))


def test_autograd_grad_skips_hooks_torch_skips():
    def program(lib):
        y = lib.ones(2, requires_grad=True)
        log = []
        y.register_hook(lambda g: log.append("tensor"))
        z = y * 2
        acc = z.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: log.append("acc_pre"))
        acc.register_hook(lambda gi, go: log.append("acc_post"))
        z.grad_fn.register_hook(lambda gi, go: log.append("mul_post"))
        z.grad_fn.register_prehook(lambda go: log.append("mul_pre"))
        lib.autograd.grad(z.sum(), y, retain_graph=True)
        log.append("|")
        lib.autograd.grad(z.sum(), z, retain_graph=True)
        log.append("|")
        z.sum().backward()
        return log
    _same_everywhere(program, ("ok", ["mul_pre", "mul_post", "tensor", "|", "|", "mul_pre",
                                      "mul_post", "tensor", "acc_pre", "acc_post"], []))


def test_view_made_under_no_grad_prints_invalid_after_its_base_is_written():
    def program(lib):
        a = lib.ones(3, requires_grad=True).clone()
        with lib.no_grad():
            v = a[:2]
        a.mul_(2)
        return repr(v), v.requires_grad
    _same_everywhere(program, ("ok", ("tensor([2., 2.], grad_fn=<Invalid>)", True), []))


def test_gradient_edges_as_inputs():
    def program(lib):
        x = lib.ones(2, requires_grad=True).clone()
        edge = lib.autograd.graph.get_gradient_edge(x)
        x *= 2
        old, new = lib.autograd.grad(x.sum(), (edge, x))
        y = lib.ones(2, requires_grad=True).clone()
        single = lib.autograd.grad((y * 3).sum(), lib.autograd.graph.GradientEdge(y.grad_fn, 0))
        return old.tolist(), new.tolist(), single[0].tolist()
    _same_everywhere(program, ("ok", ([2.0, 2.0], [1.0, 1.0], [3.0, 3.0]), []))


def test_materialize_grads_refuses_allow_unused_false_and_post_hooks_must_return_none():
    def program(lib):
        y = lib.ones(1, requires_grad=True)
        errors = []
        try:
            lib.autograd.grad(y * 2, y, allow_unused=False, materialize_grads=True)
        except ValueError as exc:
            errors.append(str(exc))
        y.register_post_accumulate_grad_hook(lambda t: t.grad)
        try:
            (y * 2).sum().backward()
        except RuntimeError as exc:
            errors.append("hooks should return None." in str(exc))
        return errors
    _same_everywhere(program, ("ok", [
        "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
        "allow_unused=False.", True], []))
