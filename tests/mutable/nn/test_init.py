"""funcgrad.mutable.nn.init against PyTorch: after the same seed, the same weights."""
import math

import numpy as np
import pytest

import funcgrad.mutable as fm
from funcgrad.mutable import nn

torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for nn.init")

CASES = [("uniform_", (), {}), ("uniform_", (-2.0, 0.5), {}), ("normal_", (), {}),
         ("normal_", (0.5, 0.01), {}), ("constant_", (0.3,), {}), ("ones_", (), {}),
         ("zeros_", (), {}), ("eye_", (), {}), ("xavier_uniform_", (), {}),
         ("xavier_uniform_", (2.0,), {}), ("xavier_normal_", (), {}),
         ("kaiming_uniform_", (), {}), ("kaiming_uniform_", (), {"a": math.sqrt(5)}),
         ("kaiming_uniform_", (), {"mode": "fan_out", "nonlinearity": "relu"}),
         ("kaiming_normal_", (), {}), ("kaiming_normal_", (), {"nonlinearity": "tanh"})]


@pytest.mark.parametrize("name, args, kwargs", CASES)
@pytest.mark.parametrize("shape", [(3, 5), (20, 30), (4, 2, 3, 3)])
def test_same_seed_same_values(name, args, kwargs, shape):
    if name == "eye_" and len(shape) != 2:
        return
    torch.manual_seed(4)
    want = getattr(torch.nn.init, name)(torch.empty(shape), *args, **kwargs)
    fm.manual_seed(4)
    t = fm.empty(*shape)
    got = getattr(nn.init, name)(t, *args, **kwargs)
    assert got is t and got._version == want._version == 1
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_init_works_on_parameters_without_recording():
    p = nn.Parameter(fm.empty(3, 4))
    nn.init.xavier_uniform_(p)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_calculate_gain():
    for args in [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("selu",),
                 ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 1)]:
        assert nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)
    with pytest.raises(ValueError, match="Unsupported nonlinearity softsign"):
        nn.init.calculate_gain("softsign")


def test_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(fm.empty(3))
    with pytest.raises(ValueError, match="Mode fan_mid not supported"):
        nn.init.kaiming_uniform_(fm.empty(3, 3), mode="fan_mid")
    with pytest.warns(UserWarning, match="zero-element"):
        nn.init.kaiming_uniform_(fm.empty(0, 3))
