"""torch.save / torch.load as the tutorials use them (a state_dict to a path, a whole model,
an optimizer's state), each step beside real PyTorch."""
import io
import pickle

import numpy as np
import pytest

import funcgrad.mutable as fm

torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for save/load")


def _net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3),
                         nn.BatchNorm1d(3))


@pytest.mark.parametrize("lib", [fm, torch], ids=["funcgrad", "torch"])
def test_state_dict_round_trip_through_a_path(lib, tmp_path):
    lib.manual_seed(0)
    model = _net(lib)
    model(lib.randn(4, 1, 4, 4))  # batch norm's running statistics move
    path = tmp_path / "model.pth"
    lib.save(model.state_dict(), path)
    lib.manual_seed(1)
    other = _net(lib)
    result = other.load_state_dict(lib.load(path))
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    loaded = lib.load(str(path), weights_only=True)
    assert type(loaded).__name__ == "OrderedDict"
    for (k, v), (k2, v2) in zip(model.state_dict().items(), other.state_dict().items()):
        assert k == k2 and v.dtype == v2.dtype and not v2.requires_grad
        np.testing.assert_array_equal(v.numpy(), v2.numpy())
    assert isinstance(lib.load(path)["4.num_batches_tracked"].item(), int)


def test_same_numbers_as_torch_after_loading(tmp_path):
    fm.manual_seed(0)
    torch.manual_seed(0)
    a, b = _net(fm), _net(torch)
    fm.save(a.state_dict(), tmp_path / "a.pth")
    torch.save(b.state_dict(), tmp_path / "b.pth")
    fm.manual_seed(5)
    torch.manual_seed(5)
    a2, b2 = _net(fm).eval(), _net(torch).eval()
    a2.load_state_dict(fm.load(tmp_path / "a.pth"))
    b2.load_state_dict(torch.load(tmp_path / "b.pth"))
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(a2(fm.tensor(x)).detach().numpy(),
                               b2(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lib", [fm, torch], ids=["funcgrad", "torch"])
def test_a_whole_model_needs_weights_only_false(lib, tmp_path):
    lib.manual_seed(0)
    model = _net(lib)
    lib.save(model, tmp_path / "m.pth")
    with pytest.raises(pickle.UnpicklingError) as err:
        lib.load(tmp_path / "m.pth")
    assert str(err.value).startswith("Weights only load failed.")
    assert "weights_only" in str(err.value) and "Sequential" in str(err.value)
    loaded = lib.load(tmp_path / "m.pth", weights_only=False)
    assert type(loaded) is type(model)
    weight = loaded[3].weight
    assert type(weight) is lib.nn.Parameter and weight.requires_grad and weight.is_leaf
    np.testing.assert_array_equal(weight.detach().numpy(), model[3].weight.detach().numpy())


@pytest.mark.parametrize("lib", [fm, torch], ids=["funcgrad", "torch"])
def test_file_objects_containers_and_shared_tensors(lib):
    t = lib.arange(3.0)
    obj = {"a": 1, "b": [t, t], "c": (3.5, "x"), "d": lib.float64, "e": lib.Size([2]),
           "f": lib.tensor([1, 2])}
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    back = lib.load(buffer)
    assert back["a"] == 1 and back["c"] == (3.5, "x") and back["d"] is lib.float64
    assert back["e"] == lib.Size([2]) and back["f"].dtype == lib.int64
    assert back["b"][0] is back["b"][1]  # one tensor reached twice stays one tensor
    assert back["b"][0].tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("lib", [fm, torch], ids=["funcgrad", "torch"])
def test_optimizer_state_round_trip(lib, tmp_path):
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    opt = lib.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    lib.save(opt.state_dict(), tmp_path / "opt.pth")
    other = lib.optim.Adam([w], lr=0.5)
    other.load_state_dict(lib.load(tmp_path / "opt.pth"))
    assert other.param_groups[0]["lr"] == 0.1
    np.testing.assert_allclose(other.state[w]["exp_avg"].numpy(), [0.2, -0.4], rtol=1e-6)
    assert float(other.state[w]["step"]) == 1.0
