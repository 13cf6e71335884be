"""Grad mode per thread, inference mode, grad-mode decorators, custom Function features
(setup_context, once_differentiable, non-differentiable outputs), autograd.Variable: each
program runs on funcgrad.mutable and, when installed, on real torch, and both must agree."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import funcgrad.mutable as fm

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None
TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"
LIBS = [fm] + ([torch] if torch is not None else [])


def _outcome(fn, lib):
    try:
        return ("ok", fn(lib))
    except Exception as exc:  # the error class and message are part of the behaviour
        return (type(exc).__name__, str(exc))


def _check(fn, expected):
    """`fn` gives `expected` on funcgrad.mutable and (when installed) on torch."""
    for lib in LIBS:
        assert _outcome(fn, lib) == expected, lib.__name__


def test_no_grad_in_one_thread_leaves_the_others_recording():
    seen = []

    def other():
        x = fm.ones(1, requires_grad=True)
        seen.append((fm.is_grad_enabled(), (x * 2).requires_grad))

    with fm.no_grad():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert not fm.is_grad_enabled()
    assert seen == [(True, True)]
    assert fm.is_grad_enabled()


def test_eight_concurrent_backward_passes_give_the_single_threaded_results():
    def work(seed, out):
        g = np.random.default_rng(seed)
        x = fm.tensor(g.standard_normal((20, 20)), requires_grad=True)
        y = x
        for _ in range(60):
            y = fm.tanh(y @ x * 0.01 + y)
        y.sum().backward()
        out[seed] = x.grad.numpy().copy()

    single: dict = {}
    for s in range(8):
        work(s, single)
    multi: dict = {}
    threads = [threading.Thread(target=work, args=(s, multi)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in range(8):
        np.testing.assert_array_equal(multi[s], single[s])
    assert fm.is_grad_enabled()


def test_overlapping_backward_passes_leave_grad_mode_on_everywhere():
    """Backward turns grad mode off in its own thread only (create_graph=False), and puts it
    back however the passes interleave; the main thread records throughout."""
    inside = threading.Barrier(5)   # four backward passes and the main thread, all mid-pass
    leave = threading.Barrier(5)
    modes = []

    class Meet(fm.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            modes.append(fm.is_grad_enabled())  # off inside this thread's backward
            inside.wait(timeout=30)
            leave.wait(timeout=30)
            return g * 3

    results = {}

    def work(k):
        x = fm.tensor([float(k + 1)], requires_grad=True)
        (Meet.apply(x * x) * 2).sum().backward()
        results[k] = (x.grad.item(), fm.is_grad_enabled())

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    inside.wait(timeout=30)
    assert fm.is_grad_enabled() and (fm.ones(1, requires_grad=True) * 2).requires_grad
    leave.wait(timeout=30)
    for t in threads:
        t.join()
    assert modes == [False] * 4
    assert results == {k: (12.0 * (k + 1), True) for k in range(4)}  # d(2*3*x^2)/dx
    assert fm.is_grad_enabled()


def _generator_modes(lib):
    @lib.no_grad()
    def gen():
        yield lib.is_grad_enabled()
        yield lib.is_grad_enabled()

    it = gen()
    first = next(it)
    between = lib.is_grad_enabled()
    return first, between, next(it)


def test_no_grad_over_a_generator():
    _check(_generator_modes, ("ok", (False, True, False)))


def _bare_decorator(lib):
    @lib.no_grad
    def f(x):
        return (x * 2).requires_grad
    return f(lib.ones(1, requires_grad=True))


def test_no_grad_without_parentheses():
    _check(_bare_decorator, ("ok", False))


def test_decorating_a_class_warns_and_applies_to_construction():
    for lib in LIBS:
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
            @lib.no_grad()
            class Foo:
                def __init__(self):
                    self.mode = lib.is_grad_enabled()
        assert Foo().mode is False


def _inference(lib):
    with lib.inference_mode():
        y = lib.ones(2) * 2
        inside = (lib.is_inference_mode_enabled(), lib.is_grad_enabled(), y.is_inference())
    x = lib.ones(2, requires_grad=True)
    value = (y + x).sum().item()  # read outside: fine
    errors = []
    for attempt in (lambda: y._version, lambda: y.requires_grad_(), lambda: y.add_(1),
                    lambda: (x * y).sum().backward()):
        try:
            attempt()
            errors.append(None)
        except RuntimeError as exc:
            errors.append(str(exc))
    return inside, lib.is_inference_mode_enabled(), y.view(2).is_inference(), errors, value


def test_inference_tensors_rules():
    expected = _outcome(_inference, fm)
    assert expected[0] == "ok"
    inside, after, view_inference, errors, value = expected[1]
    assert inside == (True, False, True) and not after and view_inference
    assert errors[0] == "Inference tensors do not track version counter."
    assert errors[2].startswith("Inplace update to inference tensor outside InferenceMode")
    assert errors[3].startswith("Inference tensors cannot be saved for backward.")
    assert value == 6.0
    if torch is not None:
        assert _outcome(_inference, torch) == expected


def _setup_context(lib):
    class MySquare(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    x = lib.tensor(3.0, requires_grad=True)
    return lib.autograd.grad(MySquare.apply(x), x)[0].item()


def test_function_setup_context():
    _check(_setup_context, ("ok", 6.0))


def _graph_desc(fn):
    if fn is None:
        return "None"
    inner = ", ".join(_graph_desc(f) for f, _ in fn.next_functions)
    return f"{type(fn).__name__}({inner})"


def _once_differentiable(lib):
    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    x = lib.ones(2, requires_grad=True)
    y = lib.ones(2, requires_grad=True)
    Mul.apply(x, y).sum().backward(lib.ones((), requires_grad=True), create_graph=True)
    desc = _graph_desc(x.grad.grad_fn)
    try:
        x.grad.sum().backward()
        error = None
    except RuntimeError as exc:
        error = str(exc)
    return desc, error


def test_once_differentiable_refuses_a_second_derivative():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # backward(create_graph=True)'s warning
        _check(_once_differentiable, ("ok", (
            "CopyBackwards(None, Error(AccumulateGrad(), AccumulateGrad()))",
            "trying to differentiate twice a function that was marked with @once_differentiable")))


def _non_diff_unmaterialized(lib):
    seen = []

    class Func(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out0, out1 = x.clone(), x.clone()
            ctx.mark_non_differentiable(out1)
            ctx._materialize_non_diff_grads = False
            return out0, out1

        @staticmethod
        def backward(ctx, g0, g1):
            seen.append(g1)
            return g0

    a = lib.tensor(1.0, requires_grad=True)
    Func.apply(a)[0].backward()
    return seen


def test_non_differentiable_outputs_get_none_when_asked():
    _check(_non_diff_unmaterialized, ("ok", [None]))


def _variable(lib):
    v = lib.autograd.Variable(lib.ones(2), requires_grad=True)
    return v.requires_grad, isinstance(v, lib.autograd.Variable), isinstance(lib.ones(1), lib.autograd.Variable)


def test_variable():
    _check(_variable, ("ok", (True, True, True)))


def _data_of_another_dtype(lib):
    x = lib.ones(2, requires_grad=True)
    x.data = lib.tensor([1, 2])
    return x


def test_data_assignment_refuses_an_integer_tensor_on_a_leaf_that_requires_grad():
    _check(_data_of_another_dtype, ("RuntimeError", "data set to a tensor that requires "
                                    "gradients must be floating point or complex dtype"))


def test_traced_tensors_pass_detach_view_reshape_clone_and_refuse_custom_functions():
    # torch.autograd.functional runs mutable code on tensors holding funcgrad tracers
    import funcgrad as fg
    from funcgrad.mutable import _ops as O

    jac = fg.jacrev(lambda a: O.traced_tensor(a).detach()._data)(np.ones(2))
    assert np.array_equal(np.asarray(jac), np.zeros((2, 2)))
    jac = fg.jacrev(lambda a: O.traced_tensor(a).reshape(2, 1).clone().contiguous().view(2)._data
                    * 2)(np.ones(2))
    assert np.array_equal(np.asarray(jac), 2 * np.eye(2))

    class RoundThrough(fm.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.round()

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="RoundThrough: a custom autograd.Function is not yet "
                                           "supported inside torch.autograd.functional"):
        fg.jacrev(lambda a: RoundThrough.apply(O.traced_tensor(a))._data)(np.ones(2))


MODE_VIEW_WRITES = {
    "inference_view_of_a_recording_base": (
        lambda T: T.zeros(2, requires_grad=True).clone(), "inference_mode", None, False),
    "inference_view_set_to_require_grad": (lambda T: T.zeros(2), "inference_mode", None, True),
    "no_grad_view_written_with_a_recording_operand": (
        lambda T: T.zeros(2), "no_grad", "operand", False),
    "no_grad_piece_written_with_a_recording_operand": (
        lambda T: T.zeros(1, 2), "no_grad", "piece", False),
}


@pytest.mark.parametrize("case", sorted(MODE_VIEW_WRITES))
def test_writes_into_views_made_in_no_grad_or_inference_mode_fail_as_torch(case):
    if torch is None:
        pytest.skip("real torch is the oracle here")
    make, mode, how, set_rg = MODE_VIEW_WRITES[case]
    messages = []
    for T in (fm, torch):
        x = make(T)
        with getattr(T, mode)():
            y = x.unbind()[0] if how == "piece" else x.view(-1)
        if set_rg:
            y.requires_grad_(True)
        with pytest.raises(RuntimeError) as caught:
            if how is None:
                y.mul_(2)
            else:
                y.mul_(T.ones(y.shape, requires_grad=True))
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("T", [pytest.param(fm, id="funcgrad"),
                               pytest.param(torch, id="torch", marks=pytest.mark.skipif(
                                   torch is None, reason="real torch is the oracle here"))])
def test_saved_tensor_hooks_see_what_a_custom_function_saves(T):
    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y)  # an input and an output
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return 2 * x * g + y * 0

    a = T.tensor([1.0, 2.0], requires_grad=True)
    calls = []

    def pack(t):
        calls.append("pack")
        return t * 2

    def unpack(t):
        calls.append("unpack")
        return t

    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = Square.apply(a)
    out.sum().backward()
    # the unpacked input is twice the input: the hooks decide what backward reads
    assert a.grad.tolist() == [4.0, 8.0] and calls == ["pack", "pack", "unpack", "unpack"]


def test_double_backward_through_split_pieces_matches_torch():
    def run(T):
        x = T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64, requires_grad=True)
        a, b = x.split(2)
        y = (a ** 3).sum() + (b ** 2).sum() * a.sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g.tolist(), x.grad.tolist()
    ours = run(fm)
    # by hand: g = (3a^2 + |b|^2, 2b sum(a)); x.grad = d/dx sum(g)
    assert ours == ([28.0, 37.0, 18.0, 24.0], [20.0, 26.0, 18.0, 22.0])
    if torch is not None:
        assert ours == run(torch)
