"""torch.autograd.grad_mode: the grad-mode context managers under their module path (PyTorch's
tests write ``torch.autograd.grad_mode.no_grad()``); they live in ``funcgrad.mutable._grad_mode``."""
from __future__ import annotations

from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled"]


class set_multithreading_enabled:
    """Accepted for compatibility: backward here always runs on the calling thread, so there
    is no multithreading to turn on or off (usable as a context manager or a call).

    >>> import funcgrad.mutable as torch
    >>> with torch.autograd.grad_mode.set_multithreading_enabled(False):
    ...     pass
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None

    def clone(self) -> "set_multithreading_enabled":
        return set_multithreading_enabled(self.mode)
