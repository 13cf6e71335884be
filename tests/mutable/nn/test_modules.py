"""funcgrad.mutable.nn modules against PyTorch: registration, state, printing, and every
layer's initial weights, outputs and gradients after the same seed."""
import copy
import math
from collections import OrderedDict

import numpy as np
import pytest

import funcgrad.mutable as fm
from funcgrad.mutable import nn

torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for torch.nn")

RNG = np.random.default_rng(1)


def _np(t):
    return t.detach().numpy()


def build(expr, seed=0):
    """The same constructor run on both sides after the same seed."""
    torch.manual_seed(seed)
    theirs = eval(expr, {"nn": torch.nn, "torch": torch})
    fm.manual_seed(seed)
    ours = eval(expr, {"nn": nn, "torch": fm})
    return ours, theirs


def same_parameters(ours, theirs, rtol=0.0):
    a, b = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(a) == list(b)
    for name in a:
        assert a[name]._version == b[name]._version, name
        if rtol:
            np.testing.assert_allclose(_np(a[name]), _np(b[name]), rtol=rtol, atol=1e-7)
        else:
            np.testing.assert_array_equal(_np(a[name]), _np(b[name]), err_msg=name)


LAYERS = [
    ("nn.Linear(5, 3)", (4, 5)),
    ("nn.Linear(5, 3, bias=False)", (2, 7, 5)),
    ("nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Tanh(), nn.Sigmoid())", (6, 4)),
    ("nn.Sequential(nn.Flatten(), nn.Linear(12, 2), nn.Softmax(dim=1))", (3, 3, 4)),
    ("nn.LogSoftmax(dim=1)", (3, 4)),
    ("nn.GELU()", (3, 4)),
    ("nn.LeakyReLU(0.1)", (3, 4)),
    ("nn.Conv2d(3, 4, 3)", (2, 3, 8, 7)),
    ("nn.Conv2d(4, 6, (3, 2), stride=2, padding=1, groups=2, bias=False)", (2, 4, 9, 8)),
    ("nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())", (2, 1, 6, 6)),
    ("nn.AvgPool2d(2)", (2, 3, 4, 6)),
    ("nn.BatchNorm1d(3)", (5, 3)),
    ("nn.BatchNorm1d(3, affine=False)", (4, 3, 6)),
    ("nn.BatchNorm2d(2, momentum=0.5)", (3, 2, 4, 4)),
    ("nn.InstanceNorm1d(3)", (2, 3, 5)),
    ("nn.InstanceNorm2d(2, affine=True)", (3, 2, 4, 4)),
    ("nn.InstanceNorm2d(2, track_running_stats=True)", (2, 4, 3)),
    ("nn.InstanceNorm3d(1, affine=True, track_running_stats=True)", (2, 1, 2, 3, 2)),
    ("nn.LSTM(3, 4)", (5, 2, 3)),
    ("nn.LSTM(3, 4, num_layers=2, batch_first=True)", (2, 5, 3)),
    ("nn.LSTM(3, 4, bidirectional=True)", (5, 2, 3)),
    ("nn.LSTM(3, 4, bias=False)", (5, 3)),
]


@pytest.mark.parametrize("expr, shape", LAYERS)
def test_layer_matches_torch(expr, shape):
    ours, theirs = build(expr)
    same_parameters(ours, theirs)
    assert repr(ours) == repr(theirs)
    x = RNG.standard_normal(shape).astype(np.float32)
    a, b = fm.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_a, out_b = ours(a), theirs(b)
    if isinstance(out_b, tuple):  # LSTM: output, (h, c)
        out_a = fm.cat([out_a[0].flatten()] + [s.flatten() for s in out_a[1]])
        out_b = torch.cat([out_b[0].flatten()] + [s.flatten() for s in out_b[1]])
    np.testing.assert_allclose(_np(out_a), _np(out_b), rtol=1e-5, atol=1e-6)
    ct = RNG.standard_normal(tuple(out_b.shape)).astype(np.float32)
    out_a.backward(fm.tensor(ct))
    out_b.backward(torch.tensor(ct))
    np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    for (name, buf), other in zip(ours.named_buffers(), theirs.buffers()):
        np.testing.assert_allclose(_np(buf), _np(other), rtol=1e-5, atol=1e-7, err_msg=name)


def test_embedding_matches_torch():
    ours, theirs = build("nn.Embedding(10, 4, padding_idx=1)")
    same_parameters(ours, theirs)
    assert repr(ours) == repr(theirs)
    idx = np.array([[1, 2, 9], [2, 0, 1]])
    out_a, out_b = ours(fm.tensor(idx)), theirs(torch.tensor(idx))
    np.testing.assert_allclose(_np(out_a), _np(out_b), rtol=1e-6)
    out_a.sum().backward()
    out_b.sum().backward()
    np.testing.assert_array_equal(_np(ours.weight.grad), _np(theirs.weight.grad))


def test_lstm_with_initial_state_and_unbatched():
    ours, theirs = build("nn.LSTM(2, 3, num_layers=2)")
    x = RNG.standard_normal((4, 2)).astype(np.float32)
    h0 = RNG.standard_normal((2, 3)).astype(np.float32)
    c0 = RNG.standard_normal((2, 3)).astype(np.float32)
    out_a, (h_a, c_a) = ours(fm.tensor(x), (fm.tensor(h0), fm.tensor(c0)))
    out_b, (h_b, c_b) = theirs(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
    for a, b in ((out_a, out_b), (h_a, h_b), (c_a, c_b)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        ours(fm.ones(4, 1, 5))


def _graph_text(node, depth=2):
    """A node's name and its edges' names and output numbers, `depth` levels down."""
    if node is None:
        return None
    edges = [] if depth == 0 else [(_graph_text(n, depth - 1), k) for n, k in
                                   node.next_functions]
    return (node.name(), edges)


@pytest.mark.parametrize("expr, shape, dtype", [
    ("nn.LSTM(3, 3)", (5, 1, 3), "float32"),
    ("nn.LSTM(3, 3, batch_first=True)", (1, 5, 3), "float32"),
    ("nn.LSTM(3, 3, num_layers=2)", (5, 2, 3), "float32"),
    ("nn.LSTM(3, 3, bidirectional=True)", (4, 1, 3), "float32"),
    ("nn.LSTM(3, 3, bias=False)", (3, 1, 3), "float32"),
    ("nn.LSTM(3, 3)", (5, 3), "float32"),
    ("nn.LSTM(3, 3)", (5, 1, 3), "float64"),
])
def test_lstm_graph_is_torch_s(expr, shape, dtype):
    # torch's CPU float32 kernel records a layer as one MkldnnRnnLayerBackward0 node (edges:
    # input, four weights, h0, c0; h_n and c_n stack its outputs 1 and 2); float64 runs the
    # generic kernel, whose output is a StackBackward0
    ours, theirs = build(expr)
    if dtype == "float64":
        ours, theirs = ours.double(), theirs.double()
    x = RNG.standard_normal(shape).astype(dtype)
    a, b = fm.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (out_a, (h_a, c_a)), (out_b, (h_b, c_b)) = ours(a), theirs(b)
    for u, v in ((out_a, out_b), (h_a, h_b), (c_a, c_b)):
        assert _graph_text(u.grad_fn) == _graph_text(v.grad_fn)
        np.testing.assert_allclose(_np(u), _np(v), rtol=1e-5, atol=1e-6)
    loss_a = out_a.sum() + (h_a * h_a).sum() + 2 * c_a.sum()
    loss_b = out_b.sum() + (h_b * h_b).sum() + 2 * c_b.sum()
    loss_a.backward()
    loss_b.backward()
    np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss_a.backward()


def test_lstm_layer_node_differentiates_twice():
    # the fused node's backward is itself differentiable (create_graph); float64 finite
    # differences of the first derivative check the second
    fm.manual_seed(0)
    lstm = nn.LSTM(2, 2)
    x = fm.tensor(RNG.standard_normal((3, 1, 2)).astype(np.float32), requires_grad=True)
    out, _ = lstm(x)
    assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"
    (g,) = fm.autograd.grad((out * out).sum(), x, create_graph=True)
    (gg,) = fm.autograd.grad(g.sum(), x)
    lstm64 = copy.deepcopy(lstm).double()
    x64 = x.detach().double()

    def first(v):
        v = v.clone().requires_grad_(True)
        o, _ = lstm64(v)
        return fm.autograd.grad((o * o).sum(), v)[0].sum().item()

    eps = 1e-6
    fd = np.zeros(x64.shape)
    for idx in np.ndindex(*x64.shape):
        step = np.zeros(x64.shape)
        step[idx] = eps
        fd[idx] = (first(x64 + fm.tensor(step)) - first(x64 - fm.tensor(step))) / (2 * eps)
    np.testing.assert_allclose(_np(gg), fd, rtol=2e-3, atol=1e-4)


def test_dropout_module_train_and_eval():
    ours, theirs = build("nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.4))")
    assert repr(ours) == repr(theirs)
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    torch.manual_seed(3)
    fm.manual_seed(3)
    np.testing.assert_allclose(_np(ours(fm.tensor(x))), _np(theirs(torch.tensor(x))), rtol=1e-5,
                               atol=1e-6)
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(_np(ours(fm.tensor(x))), _np(theirs(torch.tensor(x))), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(-0.1)


def test_batchnorm_running_stats_eval_and_counter():
    ours, theirs = build("nn.BatchNorm1d(2)")
    for _ in range(3):
        x = RNG.standard_normal((4, 2)).astype(np.float32)
        ours(fm.tensor(x))
        theirs(torch.tensor(x))
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 3
    assert ours.num_batches_tracked.dtype == fm.int64
    np.testing.assert_allclose(_np(ours.running_var), _np(theirs.running_var), rtol=1e-5)
    ours.eval()
    theirs.eval()
    x = RNG.standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_allclose(_np(ours(fm.tensor(x))), _np(theirs(torch.tensor(x))), rtol=1e-5)
    with pytest.raises(ValueError, match="expected 4D input \\(got 2D input\\)"):
        nn.BatchNorm2d(2)(fm.ones(3, 2))


def test_instance_norm_running_stats_eval_and_errors():
    ours, theirs = build("nn.InstanceNorm1d(2, track_running_stats=True, momentum=0.3)")
    for _ in range(2):
        x = RNG.standard_normal((3, 2, 4)).astype(np.float32)
        ours(fm.tensor(x))
        theirs(torch.tensor(x))
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(_np(getattr(ours, name)), _np(getattr(theirs, name)),
                                   rtol=1e-5)
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 0
    ours.eval()
    theirs.eval()
    x = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    np.testing.assert_allclose(_np(ours(fm.tensor(x))), _np(theirs(torch.tensor(x))), rtol=1e-5)
    for mod in (nn, torch.nn):
        with pytest.raises(ValueError, match="expected 3D or 4D input \\(got 2D input\\)"):
            mod.InstanceNorm2d(2)((fm if mod is nn else torch).ones(3, 2))
        with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
            mod.InstanceNorm2d(1)((fm if mod is nn else torch).ones(2, 1, 1, 1))
        with pytest.raises(ValueError, match="expected input's size at dim=1 to match "
                                             "num_features \\(2\\), but got: 1."):
            mod.InstanceNorm2d(2, affine=True)((fm if mod is nn else torch).ones(1, 1, 1, 2))
        with pytest.warns(UserWarning, match="does not match num_features"):
            mod.InstanceNorm2d(2)((fm if mod is nn else torch).ones(1, 1, 1, 2))


REPRS = ["nn.CrossEntropyLoss()", "nn.MSELoss(reduction='sum')", "nn.NLLLoss()",
         "nn.BCEWithLogitsLoss()", "nn.BCELoss()", "nn.L1Loss()",
         "nn.Conv2d(1, 4, 3, stride=2, padding=1)", "nn.Conv2d(3, 6, (3, 5), bias=False)",
         "nn.Conv2d(2, 4, 3, dilation=2, groups=2)", "nn.Conv2d(2, 4, 3, padding='same')",
         "nn.MaxPool2d(2)", "nn.MaxPool2d(3, stride=1, padding=1)", "nn.AvgPool2d(2)",
         "nn.BatchNorm2d(4)", "nn.BatchNorm1d(3, momentum=None, affine=False)",
         "nn.InstanceNorm2d(3)", "nn.InstanceNorm1d(2, affine=True, track_running_stats=True)",
         "nn.Embedding(10, 3)", "nn.LSTM(3, 5, num_layers=2, dropout=0.5, bidirectional=True)",
         "nn.Dropout()", "nn.Flatten(0)", "nn.ReLU(inplace=True)", "nn.Softmax(dim=-1)",
         "nn.GELU(approximate='tanh')", "nn.Identity()", "nn.SiLU()",
         "nn.ModuleList([nn.Linear(1, 2), nn.ReLU()])",
         "nn.ModuleDict({'a': nn.Linear(1, 2)})"]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_as_torch_prints(expr):
    ours, theirs = build(expr)
    assert repr(ours) == repr(theirs)


class Net:
    """The same user-defined model class on both sides."""

    @staticmethod
    def make(torch_module):
        nn_ = torch_module.nn

        class Net(nn_.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn_.Linear(3, 4)
                self.body = nn_.Sequential(nn_.ReLU(), nn_.Linear(4, 2))
                self.register_buffer("offset", torch_module.ones(2))
                self.register_buffer("scratch", torch_module.zeros(1), persistent=False)
                self.shared = self.fc  # registered twice: listed once

            def forward(self, x):
                return self.body(self.fc(x)) + self.offset

        return Net()


def test_user_module_registration_and_traversal():
    torch.manual_seed(0)
    theirs = Net.make(torch)
    fm.manual_seed(0)
    ours = Net.make(fm)
    for method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        assert [n for n, _ in getattr(ours, method)()] == [n for n, _ in getattr(theirs, method)()]
    assert [n for n, _ in ours.named_parameters(recurse=False)] == []
    assert len(list(ours.parameters())) == len(list(theirs.parameters())) == 4
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(_np(ours(fm.tensor(x))), _np(theirs(torch.tensor(x))), rtol=1e-5,
                               atol=1e-6)
    assert ours.get_submodule("body.1") is ours.body[1]
    assert ours.get_parameter("body.1.bias") is ours.body[1].bias


def test_state_dict_round_trip_and_versions():
    ours, theirs = build("nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))")
    sd_a, sd_b = ours.state_dict(), theirs.state_dict()
    assert isinstance(sd_a, OrderedDict) and list(sd_a) == list(sd_b)
    for k in sd_a:
        assert not sd_a[k].requires_grad
        np.testing.assert_array_equal(_np(sd_a[k]), _np(sd_b[k]))
    assert repr(ours[0].state_dict()) == repr(theirs[0].state_dict())
    target_a, target_b = build("nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))", seed=1)
    result_a = target_a.load_state_dict(sd_a)
    result_b = target_b.load_state_dict(sd_b)
    assert repr(result_a) == repr(result_b) == "<All keys matched successfully>"
    same_parameters(target_a, target_b)
    np.testing.assert_array_equal(_np(target_a[0].weight), _np(ours[0].weight))
    assert target_a[0].weight._version == target_b[0].weight._version == 2


def test_load_state_dict_errors_as_torch():
    ours, theirs = build("nn.Linear(2, 3)")
    for mutate in (lambda d: d.pop("bias"), lambda d: d.update(extra=d["bias"]),
                   lambda d: d.update(weight=d["weight"][:2])):
        sd_a, sd_b = ours.state_dict(), theirs.state_dict()
        mutate(sd_a)
        mutate(sd_b)
        with pytest.raises(RuntimeError) as err_a:
            ours.load_state_dict(sd_a)
        with pytest.raises(RuntimeError) as err_b:
            theirs.load_state_dict(sd_b)
        assert str(err_a.value) == str(err_b.value)
    sd_a, sd_b = ours.state_dict(), theirs.state_dict()
    sd_a.pop("bias")
    sd_b.pop("bias")
    sd_a["x"] = sd_a["weight"]
    sd_b["x"] = sd_b["weight"]
    assert repr(ours.load_state_dict(sd_a, strict=False)) == \
        repr(theirs.load_state_dict(sd_b, strict=False))


def test_train_eval_zero_grad_and_requires_grad():
    ours, theirs = build("nn.Sequential(nn.Linear(2, 2), nn.Dropout())")
    assert ours.training and ours[1].training
    ours.eval()
    assert not ours.training and not ours[1].training
    ours.train()
    assert ours[1].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        ours.train("yes")
    ours[0](fm.ones(1, 2)).sum().backward()
    ours.zero_grad(set_to_none=False)
    assert ours[0].weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    ours.zero_grad()
    assert ours[0].weight.grad is None
    ours.requires_grad_(False)
    assert not any(p.requires_grad for p in ours.parameters())


def test_attribute_rules_as_torch():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter 'weight'"):
        m.weight = fm.ones(2, 2)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        m.nope
    with pytest.raises(KeyError, match="attribute 'in_features' already exists"):
        m.register_buffer("in_features", fm.ones(1))

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(fm.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(fm.ones(1))
    m.bias = None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    del m.weight
    assert list(m.named_parameters()) == []


def test_sequential_and_module_list_indexing():
    seq = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1))
    assert isinstance(seq[0:2], nn.Sequential) and len(seq[0:2]) == 2
    assert seq[-1] is seq[2]
    seq.append(nn.Tanh())
    assert len(seq) == 4 and isinstance(seq[3], nn.Tanh)
    with pytest.raises(IndexError):
        seq[7]
    named = nn.Sequential(OrderedDict([("first", nn.Linear(1, 1)), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_children()] == ["first", "act"]
    layers = nn.ModuleList([nn.Linear(1, 1)])
    layers.append(nn.Linear(1, 1))
    assert len(list(layers.parameters())) == 4


def test_forward_hooks_and_deepcopy():
    m = nn.Linear(2, 2)
    seen = []
    handle = m.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    m(fm.ones(3, 2))
    handle.remove()
    m(fm.ones(3, 2))
    assert seen == [(3, 2)]
    clone = copy.deepcopy(m)
    assert clone.weight is not m.weight
    np.testing.assert_array_equal(_np(clone.weight), _np(m.weight))
    assert isinstance(clone.weight, nn.Parameter)


def test_to_and_double():
    m = nn.Linear(2, 2).double()
    assert m.weight.dtype == fm.float64 and isinstance(m.weight, nn.Parameter)
    assert m.to("cpu") is m and m.cpu() is m
    assert m(fm.ones(1, 2, dtype=fm.float64)).dtype == fm.float64
    with pytest.raises(RuntimeError, match="CPU only"):
        m.to("cuda")
