"""funcgrad.mutable's semantics: closed forms, finite differences, and (where installed) torch."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import funcgrad.mutable as torch
from funcgrad.mutable import nn

TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"


def numerical_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar f at float64 x."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


def autograd_grad(build, x: np.ndarray) -> np.ndarray:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    build(t).backward()
    return t.grad.numpy()


def value(build, x: np.ndarray) -> float:
    return build(torch.tensor(x, dtype=torch.float64)).item()


# --- the seeds' acceptance examples -------------------------------------------------------
def test_seed_rnn_like_select_assignment():
    a = nn.Parameter(torch.tensor([[2.0]]))
    b = a.clone()
    d = nn.Parameter(torch.tensor(3.0))
    e = b[[0], :] * d
    b[0] = e
    loss1 = e.sum()
    e = b[[0], :] * d
    b[0] = e
    loss1 += e.sum()
    loss1.backward()
    # loss = 2d + 2d^2 (a=2): d/dd = 2 + 4d = 14 ; d/da = d + d^2 = 12
    assert d.grad.item() == 14.0
    assert a.grad.tolist() == [[12.0]]
    assert type(b.grad_fn).__name__ == "CopySlices"


def test_seed_mean_example_and_hook_order(capsys):
    inp = torch.ones([2, 2])
    w1, w2, w3 = (torch.tensor(v, requires_grad=True) for v in (2.0, 3.0, 3.0))
    l1 = inp * w1
    l4 = (l1 + w2) * (l1 * w3)
    loss = l4.mean()
    l1.register_hook(lambda g: print("l1", g.tolist()))
    l4.register_hook(lambda g: print("l4", g.tolist()))
    loss.register_hook(lambda g: print("loss", g.tolist()))
    loss.backward()
    # l4 = (2w1+... ) closed form: d mean / d w1 = mean(w3*(2*l1 + w2)) = 3*(4+3) = 21
    assert w1.grad.item() == 21.0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["loss", "l4", "l1"]
    assert lines[2] == "l1 [[5.25, 5.25], [5.25, 5.25]]"


def test_seed_select_view_then_assignment_fails_with_torch_message():
    emb = nn.Parameter(torch.rand(2, 3))
    d = nn.Parameter(torch.rand(3, 3))
    users = emb.clone()
    row = users[0]
    a = torch.matmul(d, row)
    assert type(a.grad_fn).__name__ == "MvBackward0"
    users[0] = a
    with pytest.raises(RuntimeError) as info:
        a.sum().backward()
    assert str(info.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of AsStrided, is at version 1; "
        "expected version 0 instead. Hint:")


def test_seed_advanced_index_copies_so_no_error():
    emb = nn.Parameter(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    d = nn.Parameter(torch.eye(3) * 2)
    users = emb.clone()
    row = users[[0], :]
    a = torch.matmul(row, d)
    users[[0], :] = a
    a.sum().backward()
    assert emb.grad.tolist() == [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]
    assert d.grad.tolist() == [[1.0] * 3, [2.0] * 3, [3.0] * 3]


# --- derivatives come from the shared table: check them by finite differences -------------
UNARY = {
    "exp": lambda t: t.exp(), "log": lambda t: t.log(), "sqrt": lambda t: t.sqrt(),
    "sin": lambda t: t.sin(), "cos": lambda t: t.cos(), "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(), "relu": lambda t: t.relu(), "abs": lambda t: t.abs(),
    "pow": lambda t: t ** 3, "rpow": lambda t: 2 ** t, "neg": lambda t: -t,
    "clamp": lambda t: t.clamp(0.6, 1.4), "reciprocal": lambda t: 1 / t,
    "mean_dim": lambda t: t.mean(0), "sum_dim": lambda t: t.sum(1, keepdim=True),
    "t": lambda t: t.t() * torch.arange(6.0, dtype=torch.float64).view(3, 2),
    "select_slice": lambda t: t[1, ::2] * 3, "index": lambda t: t[[0, 1, 1]] ** 2,
    "mask": lambda t: t[t > 1.0] * 5, "view": lambda t: t.view(6) * torch.arange(6.0, dtype=torch.float64),
    "unbind": lambda t: t.unbind(1)[2] * 7, "split": lambda t: t.split(1, 1)[0] ** 2,
    "diagonal": lambda t: t.diagonal() ** 2, "expand": lambda t: t[:, :1].expand(2, 4) ** 2,
    "max": lambda t: t.max(), "prod": lambda t: t.prod(),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_gradients_match_finite_differences(name):
    fn = UNARY[name]
    x = np.array([[0.3, 1.7, 0.9], [1.2, 0.5, 1.45]])

    def build(t):
        return (fn(t) * 1.0).sum()
    np.testing.assert_allclose(autograd_grad(build, x), numerical_grad(lambda v: value(build, v), x),
                               rtol=1e-6, atol=1e-7)


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a ** b, "matmul": lambda a, b: a @ b.t(),
    "maximum": lambda a, b: torch.maximum(a, b), "broadcast": lambda a, b: a * b[0],
}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_gradients_match_finite_differences(name):
    fn = BINARY[name]
    a0 = np.array([[0.3, 1.7, 0.9], [1.2, 0.5, 1.45]])
    b0 = np.array([[1.1, 0.4, 0.8], [0.7, 1.3, 0.6]])
    for which in (0, 1):
        def build(t, which=which):
            other = torch.tensor(b0 if which == 0 else a0, dtype=torch.float64)
            return (fn(t, other) if which == 0 else fn(other, t)).sum()
        x = a0 if which == 0 else b0
        np.testing.assert_allclose(autograd_grad(build, x),
                                   numerical_grad(lambda v: value(build, v), x), rtol=1e-6, atol=1e-7)


def test_gradient_through_inplace_ops_on_non_leaf_matches_finite_differences():
    def build(t):
        y = t * 1
        y.mul_(t)          # x^2
        y[0, 1:] += 3      # CopySlices
        y.div_(t + 2)
        y.exp_()
        return y.sum()
    x = np.array([[0.3, 0.7, 0.2], [0.5, 0.1, 0.4]])
    np.testing.assert_allclose(autograd_grad(build, x), numerical_grad(lambda v: value(build, v), x),
                               rtol=1e-6)


# --- higher order -------------------------------------------------------------------------------
def test_second_and_third_derivatives_through_create_graph():
    x = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    y = x.sin() * x ** 3
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g, x, create_graph=True)
    (k,) = torch.autograd.grad(h, x)
    v = 1.3
    s, c = np.sin(v), np.cos(v)
    assert np.isclose(g.item(), c * v**3 + 3 * v**2 * s)
    assert np.isclose(h.item(), -s * v**3 + 6 * v**2 * c + 6 * v * s)
    assert np.isclose(k.item(), -c * v**3 - 9 * v**2 * s + 18 * v * c + 6 * s)


def test_hessian_vector_product_of_matrix_expression():
    a = np.array([[1.0, 2.0], [0.5, -1.0]])
    x = torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)
    A = torch.tensor(a, dtype=torch.float64)
    f = ((A @ x).tanh() ** 2).sum()
    (g,) = torch.autograd.grad(f, x, create_graph=True)
    v = torch.tensor([1.0, 2.0], dtype=torch.float64)
    (hv,) = torch.autograd.grad((g * v).sum(), x)

    def grad_at(xv):
        t = torch.tensor(xv, dtype=torch.float64, requires_grad=True)
        ((A @ t).tanh() ** 2).sum().backward()
        return t.grad.numpy()
    eps = 1e-6
    fd = (grad_at(np.array([0.3, -0.7]) + eps * np.array([1.0, 2.0]))
          - grad_at(np.array([0.3, -0.7]) - eps * np.array([1.0, 2.0]))) / (2 * eps)
    np.testing.assert_allclose(hv.numpy(), fd, rtol=1e-6)


# --- views, versions, graph lifetime --------------------------------------------------------------
def test_views_share_storage_and_version_advanced_indexing_copies():
    base = torch.arange(6.0).view(2, 3)
    views = [base[0], base[:, 1], base.t(), base.view(6), base.unsqueeze(0), base.narrow(1, 1, 2),
             base.diagonal(), base.unbind(0)[1], base.split(1, 1)[2], base[None, ..., 1]]
    copy = base[[0, 1]]
    base.add_(1)
    assert all(v._version == 1 for v in views)
    assert copy._version == 0
    assert views[0].tolist() == [1.0, 2.0, 3.0]
    assert copy.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    views[3][0] = 100
    assert base[0, 0].item() == 100.0 and base._version == 2


def test_data_shares_storage_but_not_version_detach_shares_both():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    x.data.mul_(10)  # unseen by autograd, as in PyTorch: the gradient uses the new values
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 40.0]
    z = x * x
    x.detach().mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        z.sum().backward()


def test_graph_freed_only_where_tensors_were_saved():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()  # AddBackward0 / SumBackward0 save nothing
    assert x.grad.tolist() == [2.0, 2.0]
    z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        z.backward()


def test_backward_is_iterative_on_deep_graphs():
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    y = x
    for _ in range(sys.getrecursionlimit() * 3):
        y = y * 1.0001
    y.backward()
    assert np.isclose(x.grad.item(), 1.0001 ** (sys.getrecursionlimit() * 3))


def test_implicit_gradient_only_for_single_element_outputs():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        (x * 2).backward()
    (x * 2).backward(torch.tensor([1.0, 3.0]))
    assert x.grad.tolist() == [2.0, 6.0]


def test_leaf_and_view_of_leaf_inplace_errors_and_no_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        x[0].mul_(2)
    with torch.no_grad():
        x.mul_(3)
    assert x.is_leaf and x._version == 1 and x.tolist() == [3.0, 6.0]


def test_non_leaf_grad_warns_and_retain_grad_keeps_it():
    x = torch.tensor(2.0, requires_grad=True)
    y = x * 3
    z = y * y
    y.retain_grad()
    z.backward()
    assert y.grad.item() == 12.0  # dz/dy = 2y
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert z.grad is None


def test_hook_replaces_gradient_and_handle_removes_it():
    x = torch.tensor(1.0, requires_grad=True)
    y = x * 2
    handle = y.register_hook(lambda g: g * 10)
    y.backward(retain_graph=True)
    handle.remove()
    y.backward()
    assert x.grad.item() == 22.0


def test_custom_function_mark_dirty_and_non_differentiable():
    class SortWithIndex(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = torch.tensor(np.argsort(x.detach().numpy()))
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return x[idx], idx

        @staticmethod
        def backward(ctx, g, _):
            (idx,) = ctx.saved_tensors
            out = torch.zeros(g.shape)
            out[idx] = g
            return out

    x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, idx = SortWithIndex.apply(x)
    assert not idx.requires_grad and values.requires_grad
    (values * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]


# --- beyond PyTorch: named ops in version errors, mutation policies ----------------------------------
def test_version_error_names_saving_and_modifying_ops_with_lines():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    line_saved = sys._getframe().f_lineno + 1
    z = (y * y).sum()
    line_modified = sys._getframe().f_lineno + 1
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        z.backward()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert str(info.value).startswith("one of the variables needed for gradient computation")
    assert f"saved by: MulBackward0 at {__file__}:{line_saved} (as version 0)" in notes
    assert f"modified by: add_ at {__file__}:{line_modified} (now version 1)" in notes


def test_strict_policy_fails_at_the_write():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.mutation_policy("strict"):
        y = x.exp()
        with pytest.raises(RuntimeError, match="strict mutation policy: add_ at .* would overwrite "
                                               "a tensor saved by ExpBackward0"):
            y.add_(1)
    assert y._version == 0  # nothing was written


def test_copy_on_write_policy_keeps_the_gradient_correct_and_reports():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.mutation_policy("copy-on-write"):
        y = x * 1
        z = (y * y).sum()
        with pytest.warns(torch.MutationPolicyWarning, match="copy-on-write: add_ modified"):
            y.add_(5)
        z.backward()
    assert x.grad.tolist() == [2.0, 4.0]  # d/dx sum(x^2), the value that was used
    assert y.tolist() == [6.0, 7.0]


def test_unknown_policy_is_rejected():
    with pytest.raises(ValueError, match="unknown mutation policy"):
        with torch.mutation_policy("lenient"):
            pass


# --- printing, dtypes, RNG against recorded torch values -----------------------------------------
def test_repr_matches_torch_layout():
    assert repr(torch.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)) == \
        "tensor([10.,  5.,  2.,  3.], requires_grad=True)"
    assert repr(torch.tensor(2.0, requires_grad=True).exp()) == "tensor(7.3891, grad_fn=<ExpBackward0>)"
    assert repr(torch.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(torch.tensor([1, 2], dtype=torch.int32)) == "tensor([1, 2], dtype=torch.int32)"
    assert repr(torch.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(torch.ones(2, 2) * 0.25) == "tensor([[0.2500, 0.2500],\n        [0.2500, 0.2500]])"


def test_random_streams_match_recorded_torch_values():
    torch.manual_seed(0)
    assert np.allclose(torch.rand(5).numpy(), [0.4962566, 0.7682218, 0.08847743, 0.13203049, 0.30742282])
    torch.manual_seed(0)
    assert np.allclose(torch.randn(5).numpy(), [1.5409961, -0.2934289, -2.1787894, 0.56843126, -1.0845224])


@pytest.mark.parametrize("seed", [0, 1, 123])
def test_random_streams_match_live_torch(seed):
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    for shape in [(3,), (4, 5), (17,), (40,)]:
        real.manual_seed(seed)
        torch.manual_seed(seed)
        np.testing.assert_allclose(torch.rand(*shape).numpy(), real.rand(*shape).numpy(), rtol=0)
        np.testing.assert_allclose(torch.randn(*shape).numpy(), real.randn(*shape).numpy(), rtol=2e-7, atol=3e-7)


def test_type_promotion_common_cases():
    i = torch.tensor([1, 2])
    f = torch.tensor([1.0, 2.0])
    assert (i * 1.5).dtype is torch.float32
    assert (i / 2).dtype is torch.float32
    assert (f * torch.tensor(2.0, dtype=torch.float64)).dtype is torch.float32
    assert (i * torch.tensor(2.0, dtype=torch.float64)).dtype is torch.float64
    assert (torch.tensor([1, 2], dtype=torch.int32) * 3).dtype is torch.int32
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.mul_(1.5)


def test_random_programs_match_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)

    def program(t):
        x = t.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
        y = x * 2
        v = y[:, 1:]
        v.mul_(x[:, :2].sigmoid())
        y[0] = y[1].tanh()
        loss = (y ** 2).mean() + y.t().exp().sum() / 10
        loss.backward()
        return [loss.item(), x.grad.tolist(), type(y.grad_fn).__name__, y._version, repr(v)]
    ours, theirs = program(torch), program(real)
    assert ours[2:] == theirs[2:]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)


def _inplace_program(x):
    y = x * 2
    y[1:] = x[1:].sin() * x[:2]          # CopySlices of a copy_
    z = (y ** 3).sum() + y[0:2].exp().sum()
    y2 = x.clone()
    y2.mul_(x)                           # in-place that saves the overwritten value
    y2[0].add_(1)                        # in-place on a view
    w = y2.unbind(0)
    return z + w[0] * w[2] + y2.split(2)[1].sum() * 3


def test_create_graph_through_inplace_and_views_matches_finite_differences():
    x0 = np.array([0.5, -0.3, 0.8])

    def grad_sum(xv):
        t = torch.tensor(xv, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(_inplace_program(t), t)
        return g.sum().item()
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(_inplace_program(x), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), numerical_grad(grad_sum, x0), rtol=1e-6)


def test_create_graph_through_inplace_and_views_matches_live_torch():
    real = pytest.importorskip("torch", reason=TORCH_REASON)
    results = []
    for module in (torch, real):
        x = module.tensor([0.5, -0.3, 0.8], dtype=module.float64, requires_grad=True)
        (g,) = module.autograd.grad(_inplace_program(x), x, create_graph=True)
        (h,) = module.autograd.grad(g.sum(), x)
        results.append((g.tolist(), h.tolist()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_strict_policy_catches_item_assignment_into_a_saved_view():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.mutation_policy("strict"):
        y = x * 1
        row = y[:2]
        z = (row * row).sum()
        with pytest.raises(RuntimeError, match="strict mutation policy: .* saved by MulBackward0"):
            y[0] = 5.0
    z.backward()  # nothing was written, so the graph is intact
    assert x.grad.tolist() == [2.0, 4.0, 0.0]


def test_copy_on_write_protects_saved_outputs_of_inplace_ops():
    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    with torch.mutation_policy("copy-on-write"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = x * 1
        y.exp_()               # ExpBackward0 saves its output: y itself
        s = y.sum()
        y.mul_(0)              # would invalidate it under the "torch" policy
        s.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]))


def test_strict_policy_says_the_refused_write_did_not_happen():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.mutation_policy("strict"):
        y = x.exp()
        with pytest.raises(RuntimeError) as info:
            y.add_(1)
    message = str(info.value)
    assert "The write was refused: the tensor is unchanged, still at version 0" in message
    assert "is at version 1" not in message  # no write happened: the counter never moved
    assert y._version == 0 and torch.autograd.graph.writes(y) == ()
    assert y.tolist() == pytest.approx(np.exp([1.0, 2.0]).tolist())
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx(np.exp([1.0, 2.0]).tolist())


def test_version_error_notes_every_write_since_the_save():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y
    line = sys._getframe().f_lineno
    y.add_(1)
    y.mul_(2)
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    notes = "\n".join(info.value.__notes__)
    assert f"modified by: add_ at {__file__}:{line + 1} (now version 1)" in notes
    assert f"modified by: mul_ at {__file__}:{line + 2} (now version 2)" in notes
    (s, o) = torch.autograd.graph.saved_tensors(z.grad_fn)
    assert (s.name, s.saved_version, s.version, s.stale) == ("self", 0, 2, True)
    assert [w[0] for w in s.writes] == ["add_", "mul_"] and s.tensor is y
    assert s.saved_by == "MulBackward0" and s.saved_at == (__file__, line - 1)
