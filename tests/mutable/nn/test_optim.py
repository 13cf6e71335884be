"""funcgrad.mutable.optim against PyTorch: parameters after every step, version counters,
state, printing and errors."""
import numpy as np
import pytest

import funcgrad.mutable as fm
from funcgrad.mutable import nn

torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for torch.optim")

RNG = np.random.default_rng(2)

CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 1e-3}),
    ("SGD", {"lr": 0.05, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.001, "momentum": 0.9, "centered": True, "weight_decay": 0.01}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1,
                 "weight_decay": 0.05}),
]


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kwargs", CONFIGS)
def test_steps_match_torch(name, kwargs, dtype):
    w0 = RNG.standard_normal((4, 3)).astype(dtype)
    b0 = RNG.standard_normal(3).astype(dtype)
    # a 0-d parameter, as the tutorials' a, b, c, d (its own stream: the others' values stay)
    s0 = np.random.default_rng(7).standard_normal(()).astype(dtype)
    pa = [nn.Parameter(fm.tensor(w0)), nn.Parameter(fm.tensor(b0)), nn.Parameter(fm.tensor(s0))]
    pb = [torch.nn.Parameter(torch.tensor(w0)), torch.nn.Parameter(torch.tensor(b0)),
          torch.nn.Parameter(torch.tensor(s0))]
    opt_a = getattr(fm.optim, name)(pa, **kwargs)
    opt_b = getattr(torch.optim, name)(pb, **kwargs)
    assert repr(opt_a) == repr(opt_b)
    x = RNG.standard_normal((5, 4)).astype(dtype)
    for step in range(6):
        for params, lib in ((pa, fm), (pb, torch)):
            out = (lib.tensor(x) @ params[0] + params[1]).tanh()
            ((out * out).sum() + params[2] * params[2].cos()).backward()
        opt_a.step()
        opt_b.step()
        for p, q in zip(pa, pb):
            np.testing.assert_allclose(_np(p), _np(q), rtol=2e-6 if dtype == "float32" else 1e-13,
                                       atol=1e-7 if dtype == "float32" else 1e-15,
                                       err_msg=f"step {step}")
            assert p._version == q._version, f"step {step}"
            # state tensors count the in-place ops torch's update runs on them
            versions_a = {k: v._version for k, v in opt_a.state[p].items()}
            versions_b = {k: v._version for k, v in opt_b.state[q].items()}
            assert versions_a == versions_b, f"step {step}"
        opt_a.zero_grad()
        opt_b.zero_grad()
        assert pa[0].grad is None
    state_a, state_b = opt_a.state_dict(), opt_b.state_dict()
    assert state_a["param_groups"] == state_b["param_groups"]
    for i, entry in state_b["state"].items():
        assert sorted(state_a["state"][i]) == sorted(entry)
        for key, value in entry.items():
            # moments are sums of gradients (cancellation): compared on the gradients' scale
            np.testing.assert_allclose(_np(state_a["state"][i][key]), _np(value), rtol=1e-5,
                                       atol=1e-5)


def test_zero_grad_set_to_none_false_zeroes_in_place():
    w = nn.Parameter(fm.ones(2))
    opt = fm.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    g = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is g and g.tolist() == [0.0, 0.0]


def test_params_without_grad_are_skipped_and_groups_have_their_own_lr():
    a, b = nn.Parameter(fm.ones(1)), nn.Parameter(fm.ones(1))
    c = nn.Parameter(fm.ones(1))
    opt = fm.optim.SGD([{"params": [a]}, {"params": [b, c], "lr": 1.0}], lr=0.1)
    (a + b).sum().backward()
    opt.step()
    assert a.tolist() == [0.8999999761581421] and b.tolist() == [0.0] and c.tolist() == [1.0]
    assert c._version == 0


def test_load_state_dict_restores_momentum():
    w = nn.Parameter(fm.tensor([1.0, 2.0]))
    opt = fm.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    opt.step()
    saved = opt.state_dict()
    other = fm.optim.SGD([w], lr=0.5, momentum=0.9)
    other.load_state_dict(saved)
    assert other.param_groups[0]["lr"] == 0.1
    np.testing.assert_array_equal(_np(other.state[w]["momentum_buffer"]), [2.0, 4.0])


def test_errors_as_torch():
    w = nn.Parameter(fm.ones(1))
    cases = [(lambda: fm.optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
             (lambda: fm.optim.SGD([w], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
             (lambda: fm.optim.SGD([w], lr=0.1, nesterov=True), ValueError,
              "Nesterov momentum requires a momentum and zero dampening"),
             (lambda: fm.optim.Adam([w], betas=(1.0, 0.9)), ValueError,
              "Invalid beta parameter at index 0: 1.0"),
             (lambda: fm.optim.SGD(w, lr=0.1), TypeError,
              "params argument given to the optimizer should be an iterable of Tensors or "
              "dicts, but got torch.FloatTensor"),
             (lambda: fm.optim.SGD([w * 2], lr=0.1), ValueError,
              "can't optimize a non-leaf Tensor"),
             (lambda: fm.optim.SGD([w, w], lr=0.1) and fm.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1),
              ValueError, "some parameters appear in more than one parameter group")]
    for make, cls, message in cases:
        with pytest.raises(cls) as err:
            make()
        assert str(err.value) == message


@pytest.mark.parametrize("gamma, step_size", [(0.1, 2), (0.5, 3)])
def test_step_lr(gamma, step_size):
    opt_a = fm.optim.SGD([nn.Parameter(fm.ones(1))], lr=0.2)
    opt_b = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.2)
    sched_a = fm.optim.lr_scheduler.StepLR(opt_a, step_size, gamma)
    sched_b = torch.optim.lr_scheduler.StepLR(opt_b, step_size, gamma)
    for _ in range(8):
        opt_a.step()
        opt_b.step()
        sched_a.step()
        sched_b.step()
        assert sched_a.get_last_lr() == sched_b.get_last_lr()
        assert opt_a.param_groups[0]["lr"] == opt_b.param_groups[0]["lr"]
    assert sched_a.last_epoch == sched_b.last_epoch
    assert opt_a.param_groups[0]["initial_lr"] == 0.2
    with pytest.raises(TypeError):
        fm.optim.lr_scheduler.StepLR("not an optimizer", 2)
