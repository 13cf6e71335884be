"""torch.autograd.grad_mode: the grad-mode context managers under their module path (PyTorch's
tests write ``torch.autograd.grad_mode.no_grad()``); they live in ``funcgrad.mutable._grad_mode``."""
from __future__ import annotations

from .._graph import STATE
from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled"]


class set_multithreading_enabled:
    """Whether backward passes started in this thread may use the engine's worker threads
    (per thread, as in PyTorch; usable as a context manager or a call). Backward here always
    runs on the calling thread; the switch is kept because some engine introspection
    (``torch._C._current_graph_task_execution_order``) asks for it off, as PyTorch's does.

    >>> import funcgrad.mutable as torch
    >>> with torch.autograd.grad_mode.set_multithreading_enabled(False):
    ...     torch._C._is_multithreading_enabled()
    False
    >>> torch._C._is_multithreading_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self.prev = STATE.multithreading
        STATE.multithreading = bool(mode)
        self.mode = bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        STATE.multithreading = self.prev

    def clone(self) -> "set_multithreading_enabled":
        return set_multithreading_enabled(self.mode)
