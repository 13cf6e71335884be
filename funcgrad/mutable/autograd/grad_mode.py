"""torch.autograd.grad_mode: the grad-mode context managers under their module path (PyTorch's
tests write ``torch.autograd.grad_mode.no_grad()``); they live in ``funcgrad.mutable._grad_mode``."""
from __future__ import annotations

import functools

from .._graph import STATE
from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled", "is_multithreading_enabled",
           "_force_original_view_tracking"]


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


def is_multithreading_enabled() -> bool:
    """Whether backward passes started in this thread may use worker threads (see
    `set_multithreading_enabled`)."""
    return STATE.multithreading


class _force_original_view_tracking:
    """Whether a view's grad_fn, regenerated after an in-place write into its storage,
    replays the view's own ops (``ViewBackward0``...) rather than one ``AsStridedBackward0``
    (per thread, as in PyTorch). Takes effect when made, as a call or a context manager,
    and restores the previous setting when the block ends; as a decorator it sets the mode
    around each call.

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> with torch.autograd._force_original_view_tracking(True):
    ...     out = x.clone().view(-1)
    ...     _ = out.add_(1)
    ...     out.grad_fn.name()
    'ViewBackward0'
    """

    def __init__(self, mode: bool) -> None:
        self.prev = STATE.view_replay
        self.mode = bool(mode)
        STATE.view_replay = self.mode

    def __enter__(self) -> None:
        STATE.view_replay = self.mode

    def __exit__(self, *exc) -> None:
        STATE.view_replay = self.prev

    def __call__(self, fn):
        STATE.view_replay = self.prev  # (made as a decorator: nothing set until called)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> "_force_original_view_tracking":
        return _force_original_view_tracking(self.mode)


def is_view_replay_enabled() -> bool:
    """Whether regenerated view grad_fns replay the view's ops in this thread."""
    return STATE.view_replay
