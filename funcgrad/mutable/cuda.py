"""``torch.cuda`` on a CPU-only build: nothing is available, seeding is accepted (a no-op)."""
from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


def is_available() -> bool:
    """False: funcgrad.mutable computes on the CPU.

    >>> import funcgrad.mutable as torch
    >>> torch.cuda.is_available()
    False
    """
    return False


def device_count() -> int:
    """0 GPUs.

    >>> import funcgrad.mutable as torch
    >>> torch.cuda.device_count()
    0
    """
    return 0


def manual_seed(seed: int) -> None:
    """Accepted and ignored, as PyTorch does without CUDA."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored, as PyTorch does without CUDA."""
