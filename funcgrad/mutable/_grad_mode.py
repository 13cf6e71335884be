"""Grad mode and inference mode (per thread): no_grad, enable_grad, set_grad_enabled,
inference_mode, as context managers and as decorators (generators included)."""
from __future__ import annotations

import functools
import inspect
import sys
import warnings
from typing import Callable

from ._graph import STATE

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

CLASS_DECORATION = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only "
    "decorate functions or methods. To preserve the current behavior of class decoration, you "
    "can directly decorate the `__init__` method and nothing else.")


def is_grad_enabled() -> bool:
    """Whether operations are being recorded for backward (in this thread).

    >>> import funcgrad.mutable as torch
    >>> torch.is_grad_enabled()
    True
    """
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``torch.inference_mode()``.

    >>> import funcgrad.mutable as torch
    >>> with torch.inference_mode():
    ...     torch.is_inference_mode_enabled()
    True
    """
    return STATE.inference


def _run_generator(make_mode: Callable, gen_fn: Callable) -> Callable:
    """A generator function whose body runs under a fresh mode at every resumption (the
    caller's mode holds between them)."""
    @functools.wraps(gen_fn)
    def wrapper(*args, **kwargs):
        gen = gen_fn(*args, **kwargs)
        try:
            with make_mode():
                value = gen.send(None)
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    with make_mode():
                        gen.close()
                    raise
                except BaseException:
                    with make_mode():
                        value = gen.throw(*sys.exc_info())
                else:
                    with make_mode():
                        value = gen.send(sent)
        except StopIteration as stop:
            return stop.value
    return wrapper


class _Mode:
    """A mode usable as ``with mode:`` and as ``@mode()`` / ``@mode``."""

    def __new__(cls, fn: Callable | None = None, *args, **kwargs):
        self = super().__new__(cls)
        if callable(fn) and cls._bare_decorator:
            self.__init__()
            return self(fn)
        return self

    _bare_decorator = True

    def fresh(self) -> "_Mode":
        return type(self)()

    def __call__(self, fn: Callable) -> Callable:
        if inspect.isclass(fn):
            warnings.warn(CLASS_DECORATION, FutureWarning, stacklevel=2)
            cls = fn
            fn = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731
        if inspect.isgeneratorfunction(fn):
            return _run_generator(self.fresh, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.fresh():
                return fn(*args, **kwargs)
        return wrapper

    def __enter__(self):
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = self.mode

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self.prev


class no_grad(_Mode):
    """Inside, results of operations do not require grad (context manager or decorator).

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    mode = False

    def __init__(self) -> None:
        self.prev = False


class enable_grad(_Mode):
    """Re-enable recording inside a no_grad block.

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(1, requires_grad=True)
    >>> with torch.no_grad(), torch.enable_grad():
    ...     (x * 2).requires_grad
    True
    """

    mode = True

    def __init__(self) -> None:
        self.prev = False


class set_grad_enabled(_Mode):
    """Set grad mode on or off, immediately and (as a context manager) for a block.

    >>> import funcgrad.mutable as torch
    >>> with torch.set_grad_enabled(False):
    ...     torch.is_grad_enabled()
    False
    >>> torch.is_grad_enabled()
    True
    """

    _bare_decorator = False

    def __init__(self, mode: bool) -> None:
        self.prev = STATE.grad_enabled
        self.mode = bool(mode)
        STATE.grad_enabled = self.mode

    def fresh(self) -> "set_grad_enabled":
        return set_grad_enabled(self.mode)

    def __call__(self, fn: Callable) -> Callable:
        STATE.grad_enabled = self.prev  # as a decorator it applies only inside `fn`
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self.prev

    def clone(self) -> "set_grad_enabled":
        return set_grad_enabled(self.mode)


class inference_mode(_Mode):
    """No recording, and tensors made inside are inference tensors (``is_inference()``):
    they can be read outside but not saved for backward nor modified in place there.

    >>> import funcgrad.mutable as torch
    >>> with torch.inference_mode():
    ...     x = torch.ones(2) * 2
    >>> torch.is_grad_enabled(), x.is_inference()
    (True, True)
    """

    def __new__(cls, mode: bool = True):
        if callable(mode):  # ``@inference_mode`` or ``inference_mode(mode=fn)``: decorates fn
            return cls(True)(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.on = bool(mode)

    def fresh(self) -> "inference_mode":
        return inference_mode(self.on)

    def clone(self) -> "inference_mode":
        return inference_mode(self.on)

    def __enter__(self):
        self.prev = (STATE.grad_enabled, STATE.inference)
        if self.on:
            STATE.grad_enabled = False
            STATE.inference = True
        else:
            STATE.inference = False

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled, STATE.inference = self.prev
