"""The device API of a CPU-only PyTorch: torch.device, cuda/mps availability, .to(device),
.cpu(), device= arguments, set_default_device, and torch.Tensor(...) construction."""
from __future__ import annotations

import pytest

import funcgrad.mutable as fm

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None
LIBS = [fm] + ([torch] if torch is not None else [])


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_cpu_device(lib):
    d = lib.device("cpu")
    assert repr(d) == "device(type='cpu')" and str(d) == "cpu"
    assert str(lib.device("cpu", 0)) == "cpu:0" and lib.device("cuda:1").index == 1
    assert lib.device("cpu") == lib.ones(1).device and lib.ones(1).device.type == "cpu"
    assert not lib.cuda.is_available() and lib.cuda.device_count() == 0
    assert not lib.backends.mps.is_available()
    lib.set_default_device("cpu")
    assert lib.get_default_device() == d
    x = lib.ones(2, device=d, requires_grad=True)
    y = x.to(d).to("cpu").cpu() * 2
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0] and x.is_cpu
    assert x.to(d, lib.float64).dtype == lib.float64
    assert lib.zeros(2, device="cpu").tolist() == [0.0, 0.0]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_cuda_is_refused_as_a_cpu_only_build_refuses_it(lib):
    for attempt in (lambda: lib.ones(2, device="cuda"), lambda: lib.ones(2).to("cuda"),
                    lambda: lib.ones(2).cuda()):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            attempt()
    with pytest.raises(RuntimeError, match="device type at start of device string: gpu"):
        lib.device("gpu")


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_tensor_constructor_and_default_dtype(lib):
    assert repr(lib.Tensor([1, 2])) == "tensor([1., 2.])"
    assert tuple(lib.Tensor(2, 3).shape) == (2, 3) and repr(lib.Tensor()) == "tensor([])"
    lib.set_default_dtype(lib.float64)
    try:
        assert lib.tensor([1.0]).dtype == lib.float64 and lib.ones(1).dtype == lib.float64
        assert lib.tensor([1]).dtype == lib.int64
    finally:
        lib.set_default_dtype(lib.float32)
    with pytest.raises(TypeError, match="only floating-point types"):
        lib.set_default_dtype(lib.int64)
    assert lib.inf == float("inf") and lib.nan != lib.nan
