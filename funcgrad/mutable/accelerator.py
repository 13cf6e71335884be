"""``torch.accelerator`` on a CPU-only build: no accelerator, so code that picks one falls
back to the CPU (PyTorch's tutorials open with exactly that choice)."""
from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count", "synchronize"]


def is_available() -> bool:
    """False: funcgrad.mutable computes on the CPU.

    >>> import funcgrad.mutable as torch
    >>> torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    'cpu'
    """
    return False


def current_accelerator(check_available: bool = False) -> None:
    """None: there is no accelerator device.

    >>> import funcgrad.mutable as torch
    >>> torch.accelerator.current_accelerator() is None
    True
    """
    return None


def device_count() -> int:
    """0 accelerators.

    >>> import funcgrad.mutable as torch
    >>> torch.accelerator.device_count()
    0
    """
    return 0


def synchronize(device: object = None) -> None:
    """PyTorch's error: there is no accelerator to wait for.

    >>> import funcgrad.mutable as torch
    >>> torch.accelerator.synchronize()
    Traceback (most recent call last):
    RuntimeError: Cannot access accelerator device when none is available.
    """
    raise RuntimeError("Cannot access accelerator device when none is available.")
