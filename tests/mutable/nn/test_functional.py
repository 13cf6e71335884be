"""funcgrad.mutable.nn.functional against real PyTorch: values, gradients, errors."""
import warnings

import numpy as np
import pytest

import funcgrad.mutable as fm
import funcgrad.mutable.nn.functional as F

torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for nn.functional")
TF = torch.nn.functional

RNG = np.random.default_rng(0)


def _both(array, grad=True):
    array = np.asarray(array)
    a = fm.tensor(array.copy())
    b = torch.tensor(array.copy())
    if grad and array.dtype.kind == "f":
        a.requires_grad_()
        b.requires_grad_()
    return a, b


def _np(t):
    return t.detach().numpy()


def check(ours, theirs, *arrays, rtol=1e-5, atol=1e-6, grad=True):
    """Same forward values and (with a random cotangent) the same input gradients."""
    pairs = [_both(a, grad) for a in arrays]
    out_a = ours(*[p[0] for p in pairs])
    out_b = theirs(*[p[1] for p in pairs])
    assert tuple(out_a.shape) == tuple(out_b.shape)
    assert str(out_a.dtype) == str(out_b.dtype)
    np.testing.assert_allclose(_np(out_a), _np(out_b), rtol=rtol, atol=atol)
    if not grad or not out_b.requires_grad:
        return out_a, out_b
    ct = RNG.standard_normal(tuple(out_b.shape)).astype(_np(out_b).dtype)
    out_a.backward(fm.tensor(ct))
    out_b.backward(torch.tensor(ct))
    for (a, b), array in zip(pairs, arrays):
        if b.grad is not None:
            np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=rtol, atol=atol)
    return out_a, out_b


def randn(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "silu", "gelu"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activations(name, dtype):
    check(getattr(F, name), getattr(TF, name), randn(4, 5, dtype=dtype))


def test_gelu_tanh_and_leaky_relu():
    x = randn(3, 4)
    check(lambda a: F.gelu(a, approximate="tanh"), lambda a: TF.gelu(a, approximate="tanh"), x)
    check(lambda a: F.leaky_relu(a, 0.2), lambda a: TF.leaky_relu(a, 0.2), x)
    with pytest.raises(RuntimeError):
        F.gelu(fm.ones(2), approximate="cubic")


def test_relu_inplace():
    a, b = fm.tensor([-1.0, 2.0]), torch.tensor([-1.0, 2.0])
    assert F.relu(a, inplace=True) is a
    TF.relu(b, inplace=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a._version == b._version == 1


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family(fn, dim, dtype):
    x = randn(3, 5, dtype=dtype) * 10
    check(lambda a: getattr(F, fn)(a, dim=dim), lambda a: getattr(TF, fn)(a, dim=dim), x)


def test_softmax_on_extreme_and_infinite_logits():
    x = np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0]], np.float32)
    check(lambda a: F.softmax(a, 1), lambda a: TF.softmax(a, 1), x)
    check(lambda a: F.log_softmax(a, 1), lambda a: TF.log_softmax(a, 1), x[:1])


def test_softmax_without_dim_warns_and_picks_torch_dim():
    x = randn(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        got = F.softmax(fm.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = TF.softmax(torch.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_softmax_dim_out_of_range():
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(fm.ones(2, 3), dim=2)


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5)])
def test_linear(shape):
    w, b = randn(3, 5), randn(3)
    check(F.linear, TF.linear, randn(*shape), w, b)
    check(F.linear, TF.linear, randn(*shape), w)


def test_linear_shape_error_matches_torch():
    with pytest.raises(RuntimeError) as ours:
        F.linear(fm.ones(2, 3), fm.ones(4, 2))
    with pytest.raises(RuntimeError) as theirs:
        TF.linear(torch.ones(2, 3), torch.ones(4, 2))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_and_l1(reduction):
    x, y = randn(3, 4), randn(3, 4)
    check(lambda a, b: F.mse_loss(a, b, reduction=reduction),
          lambda a, b: TF.mse_loss(a, b, reduction=reduction), x, y)
    check(lambda a, b: F.l1_loss(a, b, reduction=reduction),
          lambda a, b: TF.l1_loss(a, b, reduction=reduction), x, y)


def test_unknown_reduction_raises_torchs_value_error():
    for fn in (F.mse_loss, F.l1_loss, F.binary_cross_entropy_with_logits):
        with pytest.raises(ValueError, match="^foo is not a valid value for reduction$"):
            fn(fm.ones(2), fm.ones(2), reduction="foo")
    with pytest.raises(ValueError) as theirs:
        TF.mse_loss(torch.ones(2), torch.ones(2), reduction="foo")
    assert str(theirs.value) == "foo is not a valid value for reduction"
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(fm.ones(2, 3), fm.tensor([0, 1]), reduction="avg")


def test_mse_loss_broadcast_warns_as_torch():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(fm.ones(3, 1), fm.ones(3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_and_cross_entropy(reduction, weighted):
    x = randn(6, 4)
    t = np.array([0, 3, 1, 1, 2, 3])
    weight = np.array([0.5, 1.0, 2.0, 0.25], np.float32) if weighted else None

    def ours(a):
        w = fm.tensor(weight) if weighted else None
        return (F.cross_entropy(a, fm.tensor(t), w, reduction=reduction),
                F.nll_loss(F.log_softmax(a, 1), fm.tensor(t), w, reduction=reduction))

    def theirs(a):
        w = torch.tensor(weight) if weighted else None
        return (TF.cross_entropy(a, torch.tensor(t), w, reduction=reduction),
                TF.nll_loss(TF.log_softmax(a, 1), torch.tensor(t), w, reduction=reduction))

    for k in range(2):
        check(lambda a: ours(a)[k], lambda a: theirs(a)[k], x)


def test_cross_entropy_ignore_index_label_smoothing_and_higher_dims():
    x = randn(2, 4, 3, 2)
    t = np.array([[[0, 1], [3, -100], [2, 2]], [[1, 1], [0, 3], [-100, 0]]])
    for kw in ({}, {"label_smoothing": 0.1}, {"reduction": "sum", "label_smoothing": 0.2},
               {"reduction": "none"}):
        check(lambda a: F.cross_entropy(a, fm.tensor(t), **kw),
              lambda a: TF.cross_entropy(a, torch.tensor(t), **kw), x)
    t1 = np.where(t == -100, 1, t)
    check(lambda a: F.cross_entropy(a, fm.tensor(t1), ignore_index=1),
          lambda a: TF.cross_entropy(a, torch.tensor(t1), ignore_index=1), x)
    w = np.array([1.0, 2.0, 0.5, 1.5], np.float32)
    check(lambda a: F.cross_entropy(a, fm.tensor(t), fm.tensor(w), label_smoothing=0.3),
          lambda a: TF.cross_entropy(a, torch.tensor(t), torch.tensor(w), label_smoothing=0.3),
          x)


def test_cross_entropy_with_probability_targets_and_unbatched():
    x = randn(3, 5)
    p = np.abs(randn(3, 5))
    p /= p.sum(1, keepdims=True)
    for kw in ({}, {"reduction": "sum"}, {"label_smoothing": 0.25}):
        check(lambda a: F.cross_entropy(a, fm.tensor(p), **kw),
              lambda a: TF.cross_entropy(a, torch.tensor(p), **kw), x)
    check(lambda a: F.cross_entropy(a, fm.tensor(2)), lambda a: TF.cross_entropy(a, torch.tensor(2)),
          randn(5))


def test_loss_errors_have_torch_classes():
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(fm.ones(2, 3), fm.tensor([0, 7]))
    with pytest.raises(IndexError):
        TF.cross_entropy(torch.ones(2, 3), torch.tensor([0, 7]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target "
                                         r"batch_size \(3\)"):
        F.cross_entropy(fm.ones(2, 3), fm.tensor([0, 1, 2]))
    with pytest.raises(ValueError):
        TF.cross_entropy(torch.ones(2, 3), torch.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="expected scalar type Long"):
        F.nll_loss(fm.ones(2, 3), fm.tensor([0.0, 1.0]))


def test_binary_cross_entropy_family():
    p = 1 / (1 + np.exp(-randn(4, 3)))
    t = (RNG.random((4, 3)) > 0.5).astype(np.float32)
    w = np.abs(randn(4, 3))
    for kw in ({}, {"reduction": "sum"}, {"reduction": "none"}):
        check(lambda a, b: F.binary_cross_entropy(a, b, **kw),
              lambda a, b: TF.binary_cross_entropy(a, b, **kw), p, t)
        check(lambda a, b: F.binary_cross_entropy_with_logits(a, b, **kw),
              lambda a, b: TF.binary_cross_entropy_with_logits(a, b, **kw), randn(4, 3) * 30, t)
    check(lambda a, b: F.binary_cross_entropy(a, b, fm.tensor(w)),
          lambda a, b: TF.binary_cross_entropy(a, b, torch.tensor(w)), p, t)
    pw = np.array([0.5, 2.0, 3.0], np.float32)
    check(lambda a, b: F.binary_cross_entropy_with_logits(a, b, fm.tensor(w),
                                                          pos_weight=fm.tensor(pw)),
          lambda a, b: TF.binary_cross_entropy_with_logits(a, b, torch.tensor(w),
                                                           pos_weight=torch.tensor(pw)),
          randn(4, 3), t)
    # probabilities at exactly 0 and 1: logs clamped at -100 as PyTorch
    check(F.binary_cross_entropy, TF.binary_cross_entropy,
          np.array([0.0, 1.0, 0.5], np.float32), np.array([1.0, 0.0, 1.0], np.float32),
          grad=False)
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(fm.ones(3, 1) * 0.5, fm.ones(3))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(fm.ones(3, 1), fm.ones(3))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(fm.tensor([1.5]), fm.tensor([1.0]))
    with pytest.raises(RuntimeError, match="^Found dtype Float but expected Double$"):
        F.binary_cross_entropy(fm.tensor([0.5], dtype=fm.float64), fm.tensor([1.0]))


def test_embedding_and_padding_idx():
    w = randn(6, 3)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    check(lambda a: F.embedding(fm.tensor(idx), a), lambda a: TF.embedding(torch.tensor(idx), a), w)
    check(lambda a: F.embedding(fm.tensor(idx), a, padding_idx=2),
          lambda a: TF.embedding(torch.tensor(idx), a, padding_idx=2), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(fm.tensor([6]), fm.ones(6, 3))
    with pytest.raises(RuntimeError, match="indices"):
        F.embedding(fm.tensor([1.0]), fm.ones(6, 3))


def test_one_hot():
    t = np.array([[0, 3], [1, 1]])
    assert F.one_hot(fm.tensor(t)).tolist() == TF.one_hot(torch.tensor(t)).tolist()
    assert F.one_hot(fm.tensor(t), 5).tolist() == TF.one_hot(torch.tensor(t), 5).tolist()
    assert F.one_hot(fm.tensor(t)).dtype == fm.int64
    with pytest.raises(RuntimeError):
        F.one_hot(fm.tensor([3]), 2)


@pytest.mark.parametrize("kw", [{}, {"stride": 2}, {"padding": 1}, {"padding": (2, 0)},
                                {"dilation": 2}, {"stride": (2, 1), "padding": 1, "dilation": (1, 2)},
                                {"padding": "same"}, {"padding": "valid"}])
def test_conv2d(kw):
    x, w, b = randn(2, 3, 7, 6), randn(4, 3, 3, 2), randn(4)
    check(lambda *a: F.conv2d(*a, **kw), lambda *a: TF.conv2d(*a, **kw), x, w, b, rtol=1e-4,
          atol=1e-5)


def test_conv2d_groups_unbatched_float64():
    x, w = randn(4, 5, 5, dtype="float64"), randn(6, 2, 3, 3, dtype="float64")
    check(lambda a, b: F.conv2d(a, b, groups=2, padding=1),
          lambda a, b: TF.conv2d(a, b, groups=2, padding=1), x, w, rtol=1e-10, atol=1e-12)


def test_conv2d_errors():
    with pytest.raises(RuntimeError, match="expected input"):
        F.conv2d(fm.ones(1, 2, 5, 5), fm.ones(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv2d(fm.ones(1, 1, 2, 2), fm.ones(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match="Expected 3D"):
        F.conv2d(fm.ones(5, 5), fm.ones(1, 1, 3, 3))


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2},
                                {"kernel_size": 3, "stride": 2, "padding": 1},
                                {"kernel_size": (2, 3), "stride": 1, "dilation": 2},
                                {"kernel_size": 3, "stride": 2, "ceil_mode": True},
                                {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True}])
def test_max_pool2d(kw):
    x = randn(2, 3, 7, 8)
    check(lambda a: F.max_pool2d(a, **kw), lambda a: TF.max_pool2d(a, **kw), x)
    a, b = _both(x)
    _, ours = F.max_pool2d(a, return_indices=True, **kw)
    _, theirs = TF.max_pool2d(b, return_indices=True, **kw)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_max_pool2d_ties_send_the_gradient_to_the_first_maximum():
    x = np.zeros((1, 1, 4, 4), np.float32)  # all ties, as after a relu
    x[0, 0, 3, 3] = 1
    check(lambda a: F.max_pool2d(F.relu(a), 2), lambda a: TF.max_pool2d(TF.relu(a), 2), x)


def test_avg_pool2d():
    x = randn(2, 3, 6, 7)
    for kw in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1}):
        check(lambda a: F.avg_pool2d(a, **kw), lambda a: TF.avg_pool2d(a, **kw), x)


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5)])
def test_batch_norm_training_and_eval(shape):
    x, w, b = randn(*shape), randn(3), randn(3)
    rm_a, rv_a = fm.zeros(3), fm.ones(3)
    rm_b, rv_b = torch.zeros(3), torch.ones(3)
    check(lambda a, c, d: F.batch_norm(a, rm_a, rv_a, c, d, training=True, momentum=0.3),
          lambda a, c, d: TF.batch_norm(a, rm_b, rv_b, c, d, training=True, momentum=0.3),
          x, w, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rm_a.numpy(), rm_b.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(rv_a.numpy(), rv_b.numpy(), rtol=1e-5)
    assert rm_a._version == rm_b._version
    check(lambda a, c, d: F.batch_norm(a, rm_a, rv_a, c, d, training=False),
          lambda a, c, d: TF.batch_norm(a, rm_b, rv_b, c, d, training=False), x, w, b)


def test_batch_norm_needs_more_than_one_value_per_channel():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(fm.ones(1, 3), fm.zeros(3), fm.ones(3), training=True)


def test_dropout_follows_torchs_stream():
    x = randn(4, 25)
    for p in (0.2, 0.5, 0.9):
        torch.manual_seed(1)
        fm.manual_seed(1)
        check(lambda a: F.dropout(a, p), lambda a: TF.dropout(a, p), x)
    a = fm.tensor(x)
    assert F.dropout(a, 0.5, training=False) is a
    np.testing.assert_array_equal(F.dropout(fm.tensor(x), 1.0).numpy(), np.zeros_like(x))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        F.dropout(a, 1.5)


def test_dropout_inplace_bumps_the_version():
    fm.manual_seed(0)
    torch.manual_seed(0)
    x = randn(20)
    a, b = fm.tensor(x), torch.tensor(x)
    F.dropout(a, 0.5, inplace=True)
    TF.dropout(b, 0.5, inplace=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a._version == b._version


def test_functions_refuse_non_tensors():
    with pytest.raises(TypeError, match="must be Tensor"):
        F.relu([1.0, 2.0])


def _named_cases(lib, Fn):
    t3 = lib.tensor([0, 2, 1])
    p = lib.tensor([[0.2, 0.7], [0.9, 0.4], [0.5, 0.1]], dtype=lib.float64)
    y = lib.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=lib.float64)
    return {
        "linear": lambda x, w: Fn.linear(x, w, w[:, 0] * 0.5),
        "linear_no_bias": lambda x, w: Fn.linear(x, w),
        "cross_entropy": lambda x, w: Fn.cross_entropy(x @ w.t(), t3),
        "nll_loss_sum": lambda x, w: Fn.nll_loss(Fn.log_softmax(x @ w.t(), 1), t3,
                                                 reduction="sum"),
        "mse_loss": lambda x, w: Fn.mse_loss(x @ w.t(), x[:, :3].tanh()),
        "mse_loss_none": lambda x, w: Fn.mse_loss(x, x.sin(), reduction="none"),
        "bce": lambda x, w: Fn.binary_cross_entropy((x @ w.t())[:, :2].sigmoid(), y),
        "bce_logits": lambda x, w: Fn.binary_cross_entropy_with_logits(
            (x @ w.t())[:, :2], p, pos_weight=lib.tensor([2.0, 0.5], dtype=lib.float64)),
        "softmax": lambda x, w: Fn.softmax(x, 1),
        "log_softmax": lambda x, w: Fn.log_softmax(x, 0),
    }


@pytest.mark.parametrize("case", list(_named_cases(torch, TF)))
def test_grad_fn_names_and_second_order_as_torch(case):
    x0 = RNG.standard_normal((3, 4))
    w0 = RNG.standard_normal((3, 4))
    results = []
    for lib, Fn in ((fm, F), (torch, TF)):
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        out = _named_cases(lib, Fn)[case](x, w)
        gx, gw = lib.autograd.grad(out.sum(), (x, w), create_graph=True, allow_unused=True)
        second = lib.autograd.grad((gx * gx).sum() + (0 if gw is None else (gw * gw).sum()),
                                   (x, w), allow_unused=True)
        results.append((type(out.grad_fn).__name__, out.detach().numpy(),
                        [None if g is None else g.detach().numpy() for g in (gx, gw)],
                        [None if g is None else g.detach().numpy() for g in second]))
    ours, theirs = results
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    # second order: PyTorch's hand-written double-backward formulas round differently
    for a, b, rtol in zip(ours[2] + ours[3], theirs[2] + theirs[3], (1e-10,) * 2 + (1e-7,) * 2):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-11)


@pytest.mark.parametrize("loss", [
    "F.cross_entropy(a, lib.tensor([2, 0]))",
    "F.cross_entropy(a, lib.tensor([2, 0]), label_smoothing=0.1)",
    "F.nll_loss(F.log_softmax(a, 1), lib.tensor([1, 1]), reduction='sum')",
    "F.dropout(a, 0.3, training=False).sum()",
])
def test_losses_inside_autograd_functional_as_torch(loss):
    # inside torch.autograd.functional the tensors are traced: the losses read their
    # dtype, never their values, and give torch's Jacobians and Hessians
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    got = {}
    for lib, nnf in ((fm, F), (torch, torch.nn.functional)):
        f = eval(f"lambda a: {loss}", {"F": nnf, "lib": lib})
        functional = lib.autograd.functional
        got[lib] = (functional.jacobian(f, lib.tensor(x)), functional.hessian(f, lib.tensor(x)))
    for a, b in zip(got[fm], got[torch]):
        np.testing.assert_allclose(_np(a), b.numpy(), rtol=1e-5, atol=1e-6)
