"""``torch.device`` and the device checks: funcgrad.mutable computes on the CPU only, so a
CUDA or MPS device is refused as a CPU-only PyTorch build refuses it."""
from __future__ import annotations

__all__ = ["device", "check_device", "cpu"]

_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
          "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
NO_CUDA = "Torch not compiled with CUDA enabled"


class device:
    """``torch.device("cpu")``, ``torch.device("cuda", 0)``: a device type and index.

    >>> import funcgrad.mutable as torch
    >>> torch.device("cpu"), str(torch.device("cpu", 0)), torch.ones(1).device
    (device(type='cpu'), 'cpu:0', device(type='cpu'))
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type  # torch.device(0) is the first GPU
        else:
            name, _, number = str(type).partition(":")
            if name not in _TYPES:
                raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                                   f"device string: {type}")
            type = name
            if number:
                if index is not None:
                    raise RuntimeError("type (string) must not include an index because index "
                                       f"was passed explicitly: {name}:{number}")
                index = int(number)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


cpu = device("cpu")


def check_device(spec) -> None:
    """Accept a CPU device (None, "cpu", "cpu:0", torch.device("cpu")); refuse the others as a
    CPU-only PyTorch does."""
    if spec is None or spec == "cpu" or (type(spec) is device and spec.type == "cpu"):
        return
    d = device(spec)
    if d.type == "cpu":
        return
    if d.type == "cuda":
        raise AssertionError(NO_CUDA)
    raise RuntimeError(f"funcgrad.mutable runs on the CPU only: device {str(d)!r} is not "
                       "available; use device='cpu'")
