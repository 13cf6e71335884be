"""torch.autograd.grad_mode: the grad-mode context managers under their module path (PyTorch's
tests write ``torch.autograd.grad_mode.no_grad()``); they live in ``funcgrad.mutable._grad_mode``."""
from __future__ import annotations

from typing import Callable

from .._graph import STATE, set_view_replay
from .._grad_mode import _Mode, enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled", "is_multithreading_enabled",
           "_force_original_view_tracking", "is_view_replay_enabled"]


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


def _set_view_replay_enabled(*args, **kwargs) -> None:
    """``torch._C._set_view_replay_enabled(enabled)``: view replay on or off in this thread,
    with PyTorch's argument errors (a bool, given by position)."""
    if len(args) != 1:
        if len(args) > 1:
            raise TypeError(f"set_view_replay_enabled() takes 1 positional argument but "
                            f"{len(args)} were given")
        raise TypeError('set_view_replay_enabled() missing 1 required positional arguments: '
                        '"enabled"')
    mode = args[0]
    if type(mode) is not bool:
        raise TypeError("set_view_replay_enabled(): argument 'enabled' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    set_view_replay(mode)


def _is_view_replay_enabled(*args) -> bool:
    """``torch._C._is_view_replay_enabled()``: whether views made now in this thread are
    replayed (their own view ops recorded again) after a write into their storage."""
    if args:
        raise TypeError(f"torch._C._is_view_replay_enabled() takes no arguments "
                        f"({len(args)} given)")
    return STATE.view_replay


is_view_replay_enabled = _is_view_replay_enabled  # (one function under both names, as torch)


class _force_original_view_tracking(_Mode):
    """View replay on or off in this thread, at once (a call) or for a block (``with``) or a
    function (a decorator). A view made while it is on, after a write into its storage, gets
    its own view ops recorded again from the written base (``TBackward0`` over
    ``SliceBackward0``...) instead of one ``AsStridedBackward0``, as PyTorch's.

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> with torch.autograd._force_original_view_tracking(True):
    ...     out = x.clone().view(-1)
    ...     _ = out.add_(1)
    ...     type(out.grad_fn).__name__
    'ViewBackward0'
    >>> torch.autograd.is_view_replay_enabled()
    False
    """

    _bare_decorator = False

    def __init__(self, mode: bool) -> None:
        self.prev = STATE.view_replay
        self.mode = mode
        set_view_replay(bool(mode))

    def fresh(self) -> "_force_original_view_tracking":
        return _force_original_view_tracking(self.mode)

    def __call__(self, fn: Callable) -> Callable:
        set_view_replay(self.prev)  # as a decorator it applies only inside `fn`
        return super().__call__(fn)

    def __enter__(self) -> None:
        set_view_replay(bool(self.mode))

    def __exit__(self, *exc) -> None:
        set_view_replay(self.prev)

    def clone(self) -> "_force_original_view_tracking":
        return _force_original_view_tracking(self.mode)
