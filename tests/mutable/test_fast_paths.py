"""funcgrad.mutable's per-op fast paths (`apply1`, `apply2`, `inplace1`, the view record and
the heap-free backward walk) give what the general path gives: values, dtypes, grad_fns,
gradients (closed forms), saved-tensor checks, freeing, policies and hook order."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import funcgrad.mutable as torch
from funcgrad.mutable import _ops as O

TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"


def _error(fn) -> tuple:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the class is part of what is compared
        return type(exc).__name__, str(exc).split(" Hint:")[0]
    return None


def _leaves():
    a = torch.tensor([[0.5, -1.5, 2.0], [1.0, 3.0, -0.5]], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([1.5, 2.0, -0.5], dtype=torch.float64, requires_grad=True)
    return a, b


BINARY = [("add", O.ADD, lambda a, b: a + b), ("sub", O.SUB, lambda a, b: a - b),
          ("mul", O.MUL, lambda a, b: a * b), ("div", O.DIV, lambda a, b: a / b),
          ("maximum", O.MAXIMUM, torch.maximum), ("minimum", O.MINIMUM, torch.minimum)]


@pytest.mark.parametrize("name,op,fast", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("mask", [(True, True), (True, False), (False, True)])
def test_binary_fast_path_equals_general_path(name, op, fast, mask):
    results = []
    for run in (fast, lambda a, b: O.apply(op, (a, b))):
        a, b = _leaves()
        a.requires_grad_(mask[0])
        b.requires_grad_(mask[1])
        y = run(a, b)  # b broadcasts over a's rows: the engine sums its gradient back
        (y * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)).sum().backward()
        results.append((y.tolist(), y.dtype, type(y.grad_fn).__name__,
                        None if a.grad is None else a.grad.tolist(),
                        None if b.grad is None else b.grad.tolist()))
    assert results[0] == results[1]


def test_binary_gradients_closed_form():
    a, b = _leaves()
    (a * b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(b.detach().numpy(), (2, 3)))
    np.testing.assert_allclose(b.grad.numpy(), a.detach().numpy().sum(0))
    a, b = _leaves()
    (a / b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), (-a.detach().numpy() / b.detach().numpy() ** 2).sum(0))


def test_python_int_constants_keep_the_tensor_dtype():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    for y in (x * 2, x + 2, x - 2, x / 2, 2 * x, x ** 2, -x):
        assert y.dtype is torch.float32
    half = torch.ones(2, dtype=torch.float16)
    assert (half * 3).dtype is torch.float16
    assert (torch.tensor([1, 2]) * 2).dtype is torch.int64  # integer tensors: general path
    assert (torch.tensor([1, 2]) / 2).dtype is torch.float32
    y = (x ** 3).sum()
    y.backward()
    assert x.grad.tolist() == [3.0, 12.0]  # 3 x^2
    assert type((x ** 3).grad_fn).__name__ == "PowBackward0"


def test_saved_tensor_version_check_on_fast_paths():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    w = x * 1
    y = h * w
    h.add_(1)
    assert _error(lambda: y.sum().backward()) == (
        "RuntimeError", "one of the variables needed for gradient computation has been modified "
                        "by an inplace operation: [torch.FloatTensor [2]], which is output 0 of "
                        "Add, is at version 1; expected version 0 instead.")
    s = x * 1
    z = s.sin()
    s.mul_(2)
    assert _error(lambda: z.sum().backward())[1].endswith("is at version 1; expected version 0 instead.")


def test_nodes_that_saved_nothing_run_twice_and_others_are_freed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 2.0).sum()  # AddBackward0 saves nothing
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]
    y = (x * 2).sum()  # PyTorch saves the wrapped scalar: freed after backward
    y.backward()
    assert _error(lambda: y.backward())[1].startswith("Trying to backward through the graph a second time")
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()


def test_fast_paths_respect_no_grad_views_rebased():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    with torch.no_grad():
        v = y[:2]
    y.mul_(2)
    message = ("A view was created in no_grad mode and its base or another view of its base has "
               "been modified inplace with grad mode enabled.")
    for use in (lambda: v.sum(), lambda: v.exp(), lambda: v * v, lambda: v * 2.0):
        kind, text = _error(use)
        assert kind == "RuntimeError" and text.startswith(message)


def test_strict_policy_sees_tensors_saved_by_fast_paths():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.mutation_policy("strict"):
        h = x * 1
        y = h * x
        with pytest.raises(RuntimeError, match="strict mutation policy: add_ at .* would overwrite "
                                               "a tensor saved by MulBackward0"):
            h.add_(1)
        t = x.tanh()
        with pytest.raises(RuntimeError, match="would overwrite a tensor saved by TanhBackward0"):
            t.mul_(2)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_inplace_fast_path_chain_gradient():
    x = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
    y = x.clone()
    y.mul_(2.0)
    y.add_(1.0)
    y.tanh_()
    y.sum().backward()
    expected = 2.0 * (1.0 - np.tanh(2.0 * x.detach().numpy() + 1.0) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), expected)
    assert type(y.grad_fn).__name__ == "TanhBackward0" and y._version == 3


def test_backward_order_with_branches_matches_creation_order():
    # several nodes ready at once go through the heap (latest created first); a chain does not
    calls = []
    x = torch.tensor(1.0, requires_grad=True)
    a = x * 2
    b = x * 3
    c = a * b
    d = c.sin()
    for name, t in (("a", a), ("b", b), ("c", c), ("d", d), ("x", x)):
        t.register_hook(lambda g, name=name: calls.append(name))
    d.backward()
    assert calls == ["d", "c", "b", "a", "x"]
    assert x.grad.item() == pytest.approx(np.cos(6.0) * 12.0)  # d/dx sin(6 x^2) = 12 x cos(6 x^2)


def test_version_error_matches_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)

    def program(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        y = h * (x * 1)
        h.add_(1)
        return _error(lambda: y.sum().backward())

    assert program(torch) == program(real)


def test_hook_order_matches_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)

    def program(t):
        calls = []
        x = t.tensor([1.0, 2.0], requires_grad=True)
        w = t.tensor([0.5, 0.5], requires_grad=True)
        h = x * w
        k = h.exp() + x * 2.0
        m = (k * h).sum() + (w * 3).sum()
        for name, v in (("h", h), ("k", k), ("x", x), ("w", w)):
            v.register_hook(lambda g, name=name: calls.append(name))
        m.backward()
        return calls, [round(v, 5) for v in x.grad.tolist() + w.grad.tolist()]

    assert program(torch) == program(real)


def test_grad_fn_alias_reads_writes_and_refuses_deletion():
    """``_grad_fn`` is the `_grad_node` slot under PyTorch's attribute name: reads and writes
    go through to the slot, and deleting it raises PyTorch's error, leaving it in place."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    assert y._grad_fn is y._grad_node and type(y._grad_fn).__name__ == "MulBackward0"
    assert x._grad_fn is None
    for t in (x, y):
        before = t._grad_node
        with pytest.raises(RuntimeError, match=r"^Deletion of _grad_fn not allowed\. Detach "
                                               r"tensor instead!$"):
            del t._grad_fn
        assert t._grad_node is before
    node = y._grad_fn
    z = torch.tensor([3.0, 4.0])
    z._grad_fn = node
    assert z._grad_node is node
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_grad_fn_deletion_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    ours, theirs = torch.ones(2, requires_grad=True) * 2, real.ones(2, requires_grad=True) * 2

    def delete(t):
        del t._grad_fn
    assert _error(lambda: delete(ours)) == _error(lambda: delete(theirs))


def test_python_number_operand_gives_a_none_grad_input_as_torch():
    """A node of a tensor and a Python number (the `apply1` path) hands its hooks one
    gradient per edge, None for the number's, and `grad_fn(...)` returns them both."""
    seen = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    z = y + 1.0
    y.grad_fn.register_hook(lambda gi, go: seen.append(("mul", [g is None for g in gi])))
    z.grad_fn.register_hook(lambda gi, go: seen.append(("add", [g is None for g in gi])))
    assert [None if f is None else type(f).__name__ for f, _ in y.grad_fn.next_functions] \
        == ["AccumulateGrad", None]
    gx, gnum = y.grad_fn(torch.ones(2, dtype=torch.float32))
    np.testing.assert_allclose(gx.numpy(), [3.0, 3.0])
    assert gnum is None
    z.sum().backward()
    assert seen == [("add", [False, True]), ("mul", [False, True])]
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_python_number_operand_hooks_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    found = []
    for T in (torch, real):
        seen = []
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2.0
        z = y - 0.5
        for t in (y, z):
            t.grad_fn.register_hook(lambda gi, go: seen.append((len(gi), [g is None for g in gi],
                                                                len(go))))
        z.sum().backward()
        found.append(seen)
    assert found[0] == found[1]


def _inference_views(T):
    """What PyTorch reports of views around inference mode (requires_grad, _is_view,
    is_leaf, is_inference), its decorator forms, and the rebase error's text."""
    found = []
    with T.inference_mode():
        c = T.ones(1, 2, 3, requires_grad=True)
        views = [c.view(-1), c[0]]
    views += [c.view(-1), c[0], c.transpose(0, 1)]
    x = T.ones(3, requires_grad=True)
    with T.inference_mode():
        views.append(x.view(-1))  # a view of a normal tensor stays a normal view
    for v in views:
        found.append((v.requires_grad, v._is_view(), v.is_leaf, v.is_inference()))
    square = T.inference_mode(lambda t: t * t)
    square_kw = T.inference_mode(mode=lambda t: t * t)
    found.append((square(T.ones(1)).is_inference(), square_kw(T.ones(1)).is_inference()))
    a = T.ones(1, 2, 3, requires_grad=True).clone()
    with T.inference_mode():
        v = a.view(-1)
    a.add_(2)
    found.append(_error(lambda: v.grad_fn))
    return found


def test_views_and_inference_mode():
    found = _inference_views(torch)
    assert found[:6] == [(False, False, True, True)] * 5 + [(True, True, True, False)]
    assert found[6] == (True, True)
    assert found[7][0] == "RuntimeError" and found[7][1].startswith(
        "A view was created in inference mode and its base")


def test_views_and_inference_mode_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _inference_views(torch) == _inference_views(real)


@pytest.mark.parametrize("name", ["sin", "cos", "tanh", "sigmoid", "exp", "sqrt"])
def test_integer_input_of_a_float_function_is_computed_in_float32(name):
    """As torch, an int64 tensor is promoted to float32 before a floating function runs:
    the result equals the float32 input's bit for bit (NumPy alone computes in float64)."""
    ints = torch.tensor(list(range(0, 30)))
    floats = ints.to(torch.float32)
    fn = getattr(torch, name)
    out = fn(ints)
    assert out.dtype is torch.float32
    assert np.array_equal(out.numpy(), fn(floats).numpy())
    # and within float32 rounding of the exact value (float64 reference)
    exact = getattr(torch, name)(ints.to(torch.float64)).numpy()
    np.testing.assert_allclose(out.numpy(), exact, rtol=3e-7)


def _inplace_writes(t) -> list:
    """In-place writes that compute straight into the storage (`Op.ufunc`), and the ones
    that must not (other dtypes, shapes that do not fit, aliases): values, dtype, version,
    layout, errors."""
    found = []
    base = [[0.5, -1.5, 2.0], [1.0, 3.0, -0.5]]
    for name, other in (("sub_", [1.5, 2.0, -0.5]), ("mul_", 2.5), ("div_", [[2.0], [4.0]]),
                        ("add_", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])):
        x = t.tensor(base, dtype=t.float32)
        arg = t.tensor(other, dtype=t.float32) if isinstance(other, list) else other
        with t.no_grad():
            r = getattr(x, name)(arg)
        found.append((name, r is x, x.tolist(), str(x.dtype), x._version))
    x = t.tensor(base, dtype=t.float32)
    x.mul_(x)  # an exact alias of self is fine
    found.append(x.tolist())
    x = t.tensor(base, dtype=t.float32)
    x.add_(t.tensor([1.0, 2.0, 3.0], dtype=t.float64))  # computed in float64, then cast
    found.append((x.tolist(), str(x.dtype)))
    y = t.tensor(base, dtype=t.float32).t()  # a transposed (Fortran-ordered) self
    y.sub_(t.tensor([1.0, 2.0], dtype=t.float32))
    found.append((y.tolist(), y.stride()))
    z = t.zeros(2, 3)
    z[1].add_(t.tensor([1.0, 2.0, 3.0]))  # through a view into the base
    found.append(z.tolist())
    found.append(_error(lambda: t.zeros(3).add_(t.ones(2, 3))))
    found.append(_error(lambda: t.zeros(2, 3).add_(t.ones(2))))
    leaf = t.tensor([1.0, 2.0], requires_grad=True)
    found.append(_error(lambda: leaf.sub_(t.ones(2))))
    found.append(leaf.tolist())  # refused before writing
    return found


def test_inplace_ufunc_writes():
    found = _inplace_writes(torch)
    assert found[0] == ("sub_", True, [[-1.0, -3.5, 2.5], [-0.5, 1.0, 0.0]], "torch.float32", 1)
    assert found[2][2] == [[0.25, -0.75, 1.0], [0.25, 0.75, -0.125]]
    assert found[4] == [[0.25, 2.25, 4.0], [1.0, 9.0, 0.25]]
    assert found[6] == ([[-0.5, -1.0], [-2.5, 1.0], [1.0, -2.5]], (1, 3))
    assert found[7] == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
    assert found[8][0] == found[9][0] == found[10][0] == "RuntimeError"
    assert found[11] == [1.0, 2.0]


def test_inplace_ufunc_writes_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _inplace_writes(torch) == _inplace_writes(real)


def test_inplace_ufunc_write_records_and_checks_versions():
    """A write into the storage keeps the graph: its gradient, and the version check of a
    node that saved the overwritten tensor."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0])
    h = x * 2
    h.mul_(w)
    h.add_(w)
    assert type(h.grad_fn).__name__ == "AddBackward0"
    h.sum().backward()
    assert x.grad.tolist() == [1.0, -2.0, 4.0]
    y = x.exp()  # saves its output
    y.sub_(torch.ones(3))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_clone_keeps_layout_and_copies():
    a = torch.arange(6.0).reshape(2, 3).t()
    c = a.clone()
    assert c.stride() == a.stride() and c.tolist() == a.tolist()
    c.add_(1)
    assert a.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert torch.tensor(2.0).clone().item() == 2.0
    assert torch.tensor([True, False]).clone().tolist() == [True, False]


def test_unpacked_saved_tensor_that_needs_no_grad_is_the_hooks_own():
    b = torch.tensor(1.0)
    a = torch.tensor(1.0, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        p = b * a
    assert p.grad_fn._saved_self is b  # as torch's SavedVariable::unpack
    p.backward()
    assert a.grad.item() == 1.0


def test_size_slices_are_sizes():
    s = torch.zeros(5, 2, 3).shape
    assert type(s[1:]) is torch.Size and repr(s[1:]) == "torch.Size([2, 3])"
    assert s[0] == 5 and type(s[0]) is int


def test_saving_nodes_name_the_users_line():
    """The line a saving node names (found lazily from the code and instruction offset,
    `_graph.user_site`) is the line of the user's call, in one- and multi-line statements."""
    import inspect
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    first = inspect.currentframe().f_lineno + 1
    y = h.sin()
    z = (h
         + 1).tanh()
    assert y.grad_fn._where == (__file__, first)
    assert z.grad_fn._where == (__file__, first + 2)
    assert (h * 2).grad_fn._where is None  # saves nothing: records no site
    h.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert f"  saved by: SinBackward0 at {__file__}:{first} (as version 0)" in info.value.__notes__


def test_numpy_floating_point_warnings_stay_silent_as_in_torch():
    """torch.sqrt(torch.tensor([-1.0])) gives nan without a warning; the user's own NumPy
    call in the same process still warns. Run with Python's default filters (the suite's
    configuration ignores RuntimeWarning)."""
    program = (
        "import warnings, numpy as np\n"
        "import funcgrad.mutable as torch\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)\n"
        "    y = torch.sqrt(x) + torch.log(x) + torch.tensor([1.0, 2.0, 3.0]) / torch.zeros(3)\n"
        "    z = x.detach().clone(); z.div_(torch.zeros(3)); z.sqrt_()\n"
        "    mine = len(caught)\n"
        "    np.sqrt(np.array([-1.0]))\n"
        "print(mine, len(caught), y.tolist(), z.tolist())\n")
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-W", "default", "-c", program], capture_output=True,
                          text=True, timeout=120, cwd=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["0", "1"]
    values = done.stdout.split(" ", 2)[2]
    assert values.strip() == "[nan, nan, inf] [nan, nan, inf]"  # torch 2.13's values


def _edge_names(T) -> list:
    """next_functions of nodes the fast paths make (one input, a Python number operand on
    either side, in-place on a non-leaf, two tensors, a view), as names."""
    x = T.tensor([0.5, 1.5], dtype=T.float64, requires_grad=True)
    w = T.tensor([2.0, 3.0], dtype=T.float64)
    h = x.sin()
    made = [h, x * 2.0, 2.0 * x, x / 2, x - 1, 1 - x, h.exp(), h[0], x * w, w + h]
    for write in (lambda t: t.add_(1.0), lambda t: t.mul_(2), lambda t: t.sin_()):
        g = h * 1.0
        made.append(write(g))
    return [[type(f).__name__ if f is not None else None for f, _ in t.grad_fn.next_functions]
            for t in made] + [[nr for _, nr in t.grad_fn.next_functions] for t in made]


def test_edges_of_fast_path_nodes_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _edge_names(torch) == _edge_names(real)


def test_scalar_loop_keeps_few_objects_for_the_cyclic_gc():
    """Each step of ``y = y * 0.999 + 0.001 * sin(y)`` keeps at most 7 objects the cyclic
    garbage collector tracks (4 nodes, add's pair of edges, the tensor sin saved and its
    version counter): each full collection rescans all of a graph's, which on a long loop
    cost as much as the ops themselves. Guards the compact forms (`_graph.Node`,
    `_ops.OpNode`): a one-input node's lone edge, a number operand's edge kept by the node's
    class, a lone saved tensor kept as itself, without a `Saved` record or a tuple."""
    import gc

    def build(steps):
        x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        y = x
        for _ in range(steps):
            y = y * 0.999 + 0.001 * torch.sin(y)
        return y

    build(5)
    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        gc.collect()
        before = len(gc.get_objects())
        y = build(200)
        gc.collect()
        gc.collect()  # (a tuple of atomic values is untracked by the collection after its
        kept = len(gc.get_objects()) - before  # contents are)
    finally:
        if enabled:
            gc.enable()
    assert kept <= 7 * 200 + 20
    y.backward()  # the graph still runs: d/dx of the loop
    assert y.grad_fn is not None


def _saved_as_itself(T) -> list:
    """A one-argument node saves its input as the tensor itself (PyTorch's SavedVariable):
    backward reads the data the tensor has then (``.data = ...`` after the op counts), the
    raw saved value takes hooks, a later write is a version error."""
    found = []
    x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    h = x * 1
    y = h.sin()
    h.data = T.tensor([0.0, 0.5], dtype=T.float64)
    y.sum().backward()
    found.append(x.grad.tolist())
    x.grad = None
    h = x * 1
    y = h.cos()
    assert y.grad_fn._saved_self is h
    seen = []
    y.grad_fn._raw_saved_self.register_hooks(lambda t: seen.append("pack") or t * 1,
                                             lambda t: seen.append("unpack") or t)
    y.sum().backward()
    found.append((x.grad.tolist(), seen))
    y = (x * 1).tan()
    z = y.sinh()
    y.mul_(2)
    found.append(_error(lambda: z.sum().backward()))
    return found


def test_tensor_saved_as_itself_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _saved_as_itself(torch) == _saved_as_itself(real)


def _no_grad_updates(t) -> list:
    """The SGD update's short path in `inplace` (a tensor written from one tensor of its
    dtype, nothing to record): values, versions seen through a view, a saved tensor's check
    afterwards, and the writes it leaves to the general path (broadcasting that does not
    fit, grad mode on with a leaf that requires grad, a view of the written tensor)."""
    found = []
    p = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    head = p[:2]
    y = (p * p).sum()  # MulBackward0 saves p
    with t.no_grad():
        r = p.sub_(0.5 * t.ones(3))
        p.add_(p)  # an exact alias of self
    found.append((r is p, p.tolist(), p._version, head._version, head.tolist(),
                  p.requires_grad, p.grad_fn is None))
    found.append(_error(lambda: y.backward()))
    q = t.zeros(2, 3)
    q.add_(t.tensor([1.0, 2.0, 3.0]))  # grad mode on, nothing requires grad: broadcast
    found.append((q.tolist(), q._version))
    found.append(_error(lambda: q.add_(t.ones(2))))
    found.append(_error(lambda: p.mul_(t.ones(3))))  # a leaf that requires grad, grad mode on
    found.append((p.tolist(), p._version))
    with t.no_grad():
        p.mul_(p[...])  # a view of self as the operand: the general path
    found.append((p.tolist(), p._version))
    return found


def test_no_grad_update_short_path():
    found = _no_grad_updates(torch)
    assert found[0] == (True, [1.0, 3.0, 5.0], 2, 2, [1.0, 3.0], True, True)
    assert found[1][0] == "RuntimeError" and "modified by an inplace operation" in found[1][1]
    assert found[2] == ([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], 1)
    assert found[3][0] == found[4][0] == "RuntimeError"
    assert found[5] == ([1.0, 3.0, 5.0], 2)
    assert found[6] == ([1.0, 9.0, 25.0], 3)
    # the write is remembered for version errors, with the user's line
    p = torch.tensor([1.0, 2.0])
    with torch.no_grad():
        p.sub_(torch.ones(2))
    (op, path, line, version), = torch.autograd.graph.writes(p)
    assert (op, Path(path).name, version) == ("sub_", "test_fast_paths.py", 1)


def test_no_grad_update_short_path_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _no_grad_updates(torch) == _no_grad_updates(real)


def _saved_outputs(t) -> list:
    """Nodes of one argument that save only their output (tanh, exp, sigmoid) keep its array
    and its counter in the node (`_ops._record1`): what the saved result reads as, its
    version checks (a write into the output, or into a tensor sharing its counter), hooks on
    it, and the gradient."""
    found = []
    for name in ("tanh", "exp", "sigmoid"):
        x = t.tensor([0.5, -1.0, 2.0], dtype=t.float64, requires_grad=True)
        y = getattr(x, name)()
        r = y.grad_fn._saved_result
        found.append((name, r.tolist() == y.tolist(), r._version, r.requires_grad,
                      type(r.grad_fn).__name__))
        y.sum().backward(retain_graph=True)
        found.append([round(v, 12) for v in x.grad.tolist()])
        y.detach().mul_(2)  # shares y's counter
        found.append(_error(lambda: y.sum().backward()))
    x = t.tensor([0.5, -1.0], requires_grad=True)
    y = x.exp()
    seen = []
    y.grad_fn._raw_saved_result.register_hooks(lambda v: (seen.append("pack"), v)[1],
                                               lambda v: (seen.append("unpack"), v)[1])
    y.sum().backward()
    found.append((seen, x.grad.tolist() == y.tolist()))
    found.append(_error(lambda: y.grad_fn._saved_result))
    return found


def test_saved_output_kept_as_array():
    found = _saved_outputs(torch)
    assert found[0] == ("tanh", True, 0, True, "TanhBackward0")
    assert found[2][0] == "RuntimeError" and "is at version 1; expected version 0" in found[2][1]
    assert found[-2] == (["pack", "unpack"], True)
    assert found[-1][0] == "RuntimeError"


def test_saved_output_kept_as_array_as_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _saved_outputs(torch) == _saved_outputs(real)
