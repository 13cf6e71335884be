"""funcgrad.mutable's API surface: grad modes, autograd.grad options, anomaly mode, the example
and the benchmark; each program also runs on real torch when it is installed."""
from __future__ import annotations

import importlib.util
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import funcgrad.mutable as fm

TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"
ROOT = Path(__file__).resolve().parents[2]


def _modules():
    mods = [fm]
    try:
        import torch
        mods.append(torch)
    except ImportError:
        pass
    return mods


def grad_modes(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 2

    @torch.no_grad()
    def decorated(t):
        return t * 3
    c = decorated(x)
    torch.set_grad_enabled(False)
    d = x * 4
    torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        e = x * 5
    return [a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad,
            e.requires_grad, torch.is_grad_enabled()]


def grad_options(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    unused = torch.tensor(1.0, requires_grad=True)
    y = x * w
    gx, gu = torch.autograd.grad(y, (x, unused), grad_outputs=torch.tensor([1.0, 10.0]),
                                 retain_graph=True, allow_unused=True)
    (gw,) = torch.autograd.grad(y.sum(), w, retain_graph=True)
    y.sum().backward(inputs=[w])
    return [gx.tolist(), gu, gw.item(), w.grad.item(), x.grad]


def multi_output_and_leaf_backward(torch):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a, b = x.unbind(0)
    (a * b).sum().backward()
    leaf = torch.tensor(2.0, requires_grad=True)
    leaf.backward()
    return [x.grad.tolist(), leaf.grad.item(), type(a.grad_fn).__name__]


@pytest.mark.parametrize("program", [grad_modes, grad_options, multi_output_and_leaf_backward])
def test_program_matches_torch_and_closed_form(program):
    expected = {
        "grad_modes": [False, True, False, False, False, True],
        "grad_options": [[3.0, 30.0], None, 3.0, 3.0, None],
        "multi_output_and_leaf_backward": [[[3.0, 4.0], [1.0, 2.0]], 1.0, "UnbindBackward0"],
    }[program.__name__]
    for module in _modules():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert program(module) == expected, module.__name__


def test_anomaly_mode_reports_forward_trace_and_nan():
    x = fm.tensor([1.0, 2.0], requires_grad=True)
    with fm.autograd.detect_anomaly():
        y = x.exp()
        z = (y * 1.0).sum()
        y.add_(1)
        with pytest.warns(UserWarning, match="Error detected in ExpBackward0. Traceback of forward call"):
            with pytest.raises(RuntimeError, match="the backtrace further above"):
                z.backward()
    with fm.autograd.set_detect_anomaly(True):
        t = fm.tensor([0.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            (t.sqrt() * 0.0).sum().backward()
    assert not fm.is_anomaly_enabled()


def test_second_derivative_matches_closed_form_via_backward_create_graph():
    x = fm.tensor(0.7, dtype=fm.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x.tanh() * x).backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.backward()
    t = math.tanh(0.7)
    # d2/dx2 [x tanh x] = 2 sech^2 x - 2 x tanh x sech^2 x
    assert math.isclose(x.grad.item(), 2 * (1 - t * t) - 2 * 0.7 * t * (1 - t * t), rel_tol=1e-12)


def test_custom_function_needs_input_grad_and_ctx_attributes():
    class Scale(fm.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor, y):
            ctx.factor = factor
            ctx.flags = ctx.needs_input_grad
            return x * factor + y

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor, None, None

    x = fm.tensor([1.0, 2.0], requires_grad=True)
    y = fm.tensor([5.0, 5.0])
    out = Scale.apply(x, 3.0, y)
    out.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert out.grad_fn.ctx.flags == (True, False, False)
    assert type(out.grad_fn).__name__ == "ScaleBackward"


def test_example_runs_and_shows_both_models(capsys):
    spec = importlib.util.spec_from_file_location("example", ROOT / "examples" / "inplace_vs_functional.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.agree()
    example.mutation_breaks_backward()
    example.policies()
    out = capsys.readouterr().out
    assert "same: True" in out and "correct: True" in out
    assert "saved by: MulBackward0 at" in out and "modified by: fill_ at" in out


def test_benchmark_rows_are_measured():
    spec = importlib.util.spec_from_file_location("bench_mutable", ROOT / "benchmarks" / "bench_mutable.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.N_BLOCKS = 5
    rows = bench.run()
    ours = [r for r in rows if r[1] == "funcgrad.mutable"]
    assert len(ours) == len(bench.WORKLOADS)
    for _, _, result in ours:
        assert float(result.split()[0]) > 0


# --- engine-level API checked on funcgrad.mutable and on torch ---------------------------------
@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_queue_callback_runs_after_the_pass(torch):
    log = []

    class Mark(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            engine = torch.autograd.Variable._execution_engine
            engine.queue_callback(lambda: (log.append("first"),
                                           engine.queue_callback(lambda: log.append("second"))))
            log.append("backward")
            return g * 2

    x = torch.ones(2, requires_grad=True)
    Mark.apply(x).sum().backward()
    assert log == ["backward", "first", "second"] and x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                                           "backward pass."):
        torch.autograd.Variable._execution_engine.queue_callback(lambda: None)


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_function_node_class_saved_tensors_and_instances(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torch.tensor([3.0], requires_grad=True)
    y = Square.apply(x)
    assert type(y.grad_fn) is Square._backward_cls
    assert y.grad_fn.saved_tensors[0] is x
    y.backward()
    assert x.grad.tolist() == [6.0]
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn.saved_tensors
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Square()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        f(x)


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_function_vjp_alone_or_both(torch):
    class ByVjp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def vjp(ctx, g):
            return g * 3

    class Both(ByVjp):
        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.ones(1, requires_grad=True)
    ByVjp.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0]
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(x).sum().backward()


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_a_saved_tensor_detached_in_place(torch):
    a = torch.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="saved tensor that has been detached in-place"):
        b.backward()
    a = torch.tensor(1.0, requires_grad=True)
    c = a.clone()
    d = c.exp()  # saves its output, not c
    c.detach_()
    d.backward()
    assert a.grad.item() == pytest.approx(math.e)


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_pieces_made_under_no_grad_refuse_in_place_with_grad(torch):
    inp = torch.rand(2, requires_grad=True).clone()
    with torch.no_grad():
        pieces = inp.unbind()
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being "
                                           "modified inplace"):
        pieces[0].add_(1)


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_increment_version_and_grad_mode_module(torch):
    t = torch.zeros(2)
    torch.autograd.graph.increment_version(t)
    torch.autograd.graph.increment_version([t, t])
    assert t._version == 3
    with torch.autograd.grad_mode.no_grad():
        assert not torch.is_grad_enabled()
    with torch.autograd.grad_mode.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_grad_buffers_taken_unless_shared(torch):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            g = g * 1.0  # a fresh buffer, handed to both leaves
            return g, g

    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    Twice.apply(a, b).sum().backward()
    # one accumulator takes the buffer, the other (which saw it shared) copies it
    assert a.grad.data_ptr() != b.grad.data_ptr()
    a.grad.add_(1)
    assert b.grad.tolist() == [1.0, 1.0, 1.0] and a.grad.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_multi_grad_hook_and_own_grad(torch):
    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    seen, first = [], []
    handle = torch.autograd.graph.register_multi_grad_hook(
        (a, b), lambda gs: seen.append([None if g is None else g.tolist() for g in gs]))
    (a * 2).sum().backward()
    (a * b * 3).sum().backward()
    assert seen == [[[2.0, 2.0], None], [[3.0, 3.0], [3.0, 3.0]]]
    handle.remove()
    (a * 2).sum().backward()
    assert len(seen) == 2
    torch.autograd.graph.register_multi_grad_hook((a, b), first.append, mode="any")
    (a * 3 + b).sum().backward()
    assert len(first) == 1
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        torch.autograd.graph.register_multi_grad_hook((a, b), print, mode="foo")
    x = torch.zeros(3, 3)
    with pytest.raises(RuntimeError, match="can't assign Variable as its own grad"):
        x.grad = x


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_index_nodes_save_their_indices_and_are_freed(torch):
    b = torch.tensor([0.5, -1.0, 2.0], requires_grad=True, dtype=torch.double)
    c = torch.zeros(3, dtype=torch.double)
    c[[1, 2]] = b[[1, 1]]
    c.backward(torch.ones(3, dtype=torch.double))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        c.backward(torch.ones(3, dtype=torch.double))
    y = b[1:]  # a basic slice saves nothing: it can run again
    y.sum().backward()
    y.sum().backward()
    assert b.grad.tolist() == [0.0, 4.0, 2.0]


@pytest.mark.parametrize("torch", _modules(), ids=lambda m: m.__name__)
def test_saved_non_tensor_attributes(torch):
    a = torch.ones(2, 2, requires_grad=True)
    assert torch.stack([a, a], dim=0).grad_fn._saved_dim == 0
    s = a.sum(1)
    assert (s.grad_fn._saved_dim, s.grad_fn._saved_keepdim) == ((1,), False)
    m = a.mean()
    m.backward()
    assert tuple(m.grad_fn._saved_self_sym_sizes) == (2, 2)  # sizes outlive backward


def test_layout_is_strided_as_torch():
    torch = pytest.importorskip("torch", reason="real torch (CPU) is the oracle here")
    import funcgrad.mutable as fm
    import pickle
    for lib in (fm, torch):
        t = lib.ones(2, 3)
        assert t.layout is lib.strided and repr(t.layout) == "torch.strided"
        assert t.t().layout is lib.strided and isinstance(lib.strided, lib.layout)
        assert pickle.loads(pickle.dumps(lib.strided)) is lib.strided
