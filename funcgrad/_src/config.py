"""Process-wide settings (`config`), `debug_nans`, and how NumPy's floating-point errors raised
inside the engine are reported at the user's line.

NumPy reports a NaN made by a ufunc (``log(-1)``, ``0/0``, ``inf - inf``) through its error
state; inside a transform funcgrad routes that report through `_on_numpy_error`, which
points the RuntimeWarning at the first frame outside funcgrad and NumPy (the user's line,
not an engine file) and, with `debug_nans`, raises instead, naming the primitive and the
pass. The backward walk also checks each cotangent it adds when `debug_nans` is on.
"""
from __future__ import annotations

import cmath
import contextlib
import contextvars
import os
import sys
import threading
import warnings
from typing import Any, Iterator

import numpy as np

from . import core

__all__ = ["config", "debug_nans", "numpy_errors", "user_frame", "nan_error", "Recorded"]

_FUNCGRAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))
_INTERNAL = (_FUNCGRAD_DIR + os.sep, _NUMPY_DIR + os.sep, contextlib.__file__)


class Config:
    """funcgrad's settings. ``debug_nans``: stop at the first primitive whose forward or
    backward pass produces a NaN (see `debug_nans`). ``update`` sets a setting for the whole
    process; the `debug_nans` context manager sets it for the running thread (and context)
    only, as JAX's context managers do.

    >>> import funcgrad as fg
    >>> fg.config.update("debug_nans", True)
    >>> fg.config.debug_nans
    True
    >>> fg.config.update("debug_nans", False)
    """

    __slots__ = ("_debug_nans", "_saved_numpy_state", "_nan_checkers", "_lock")

    def __init__(self) -> None:
        self._debug_nans = False
        self._saved_numpy_state = None
        self._nan_checkers = 0  # how many settings turn debug_nans on (process, contexts)
        self._lock = threading.Lock()

    @property
    def debug_nans(self) -> bool:
        local = _LOCAL_DEBUG_NANS.get()
        return self._debug_nans if local is None else local

    def update(self, name: str, value: Any) -> None:
        """Set a setting by name (``"debug_nans"``, also spelled ``"jax_debug_nans"``)."""
        name = name.removeprefix("jax_")
        if name != "debug_nans":
            raise AttributeError(f"funcgrad.config has no setting {name!r}; the settings "
                                 "are: debug_nans")
        value = bool(value)
        if value and not self._debug_nans:  # NumPy reports NaNs it makes to us from now on
            self._saved_numpy_state = (np.geterr(), np.geterrcall())
            np.seterr(invalid="call")
            np.seterrcall(_on_numpy_error)
            self._count_nan_checker(1)
        elif not value and self._debug_nans:
            if self._saved_numpy_state is not None:
                errors, call = self._saved_numpy_state
                np.seterr(**errors)
                np.seterrcall(call)
                self._saved_numpy_state = None
            self._count_nan_checker(-1)
        self._debug_nans = value

    def _count_nan_checker(self, change: int) -> None:
        """Primitives' forwards check their outputs for NaN while anything turns debug_nans
        on (each check then asks this thread's setting), and cost nothing otherwise."""
        with self._lock:
            self._nan_checkers += change
            if self._nan_checkers == 1 and change > 0:
                core.checked_forwards(_check_forward)
            elif self._nan_checkers == 0:
                core.checked_forwards(None)


_LOCAL_DEBUG_NANS: contextvars.ContextVar = contextvars.ContextVar("debug_nans", default=None)
config = Config()


@contextlib.contextmanager
def debug_nans(enabled: bool = True) -> Iterator[None]:
    """Within the block, stop at the first primitive whose forward or backward pass produces
    a NaN: a ``FloatingPointError`` names the primitive, the pass and the user's source
    line. Like ``funcgrad.config.update("debug_nans", True)``, for this block and thread.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> with fg.debug_nans():
    ...     try:
    ...         fg.grad(lambda x: fnp.log(x))(-1.0)
    ...     except FloatingPointError as err:
    ...         print(str(err).splitlines()[0])
    debug_nans: the forward pass of log produced NaN (invalid value)
    """
    token = _LOCAL_DEBUG_NANS.set(bool(enabled))
    if enabled:
        config._count_nan_checker(1)
    try:
        if enabled:
            with np.errstate(invalid="call", call=_on_numpy_error):
                yield
        else:
            yield
    finally:
        _LOCAL_DEBUG_NANS.reset(token)
        if enabled:
            config._count_nan_checker(-1)


def _is_internal(filename: str) -> bool:
    return filename.startswith(_INTERNAL)


def user_frame(frame=None):
    """The innermost frame outside funcgrad and NumPy (the user's line), and how many
    frames up from `frame` it is (1 for `frame` itself)."""
    frame = frame or sys._getframe(1)
    level = 1
    while frame is not None and _is_internal(os.path.abspath(frame.f_code.co_filename)):
        frame = frame.f_back
        level += 1
    return frame, level


def _where(frame) -> str:
    if frame is None:
        return "an unknown line"
    return f'File "{frame.f_code.co_filename}", line {frame.f_lineno}, in {frame.f_code.co_name}'


def nan_error(prim_name: str, pass_name: str, frame, detail: str = "") -> FloatingPointError:
    """The error `debug_nans` raises: the primitive, the pass, the user's line."""
    return FloatingPointError(
        f"debug_nans: the {pass_name} pass of {prim_name} produced NaN"
        + (f" ({detail})" if detail else "")
        + f"\n  at {_where(frame)}\n"
        "Look at that primitive's inputs there (log or sqrt of a negative, 0/0, inf - inf); "
        "turn the check off with funcgrad.config.update('debug_nans', False)")


def _primitive_and_pass(frame):
    """(primitive name, pass, the user's frame or a recorded line) for a floating-point
    error, read off the stack: in the backward walk, the entry whose rule is running and
    the line that recorded it (when the tape noted lines); else the innermost primitive."""
    name = None
    while frame is not None:
        local = frame.f_locals
        if frame.f_code.co_name in ("_walk", "_walk_checked") and "tape" in local and \
                frame.f_code.co_filename.endswith(os.path.join("_src", "reverse.py")):
            prim = local.get("prim")
            where = getattr(local["tape"], "frames", {}).get(local.get("i"))
            return (getattr(prim, "name", name or "a NumPy function"), "backward",
                    Recorded(*where) if where else None)
        if name is None:
            for key in ("prim", "self"):
                candidate = local.get(key)
                if type(candidate).__name__.endswith("Primitive") and \
                        hasattr(candidate, "impl"):
                    name = candidate.name
                    break
        frame = frame.f_back
    return name or "a NumPy function", "forward", None


class Recorded:
    """A recorded (file, line, function), shaped like the frames `nan_error` describes."""

    def __init__(self, filename: str, lineno: int, function: str) -> None:
        self.f_lineno = lineno
        self.f_code = type("code", (), {"co_filename": filename, "co_name": function})


def _has_nan(value) -> bool:
    if type(value) in (tuple, list):
        return any(_has_nan(v) for v in value)
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return dtype.kind in "fc" and bool(np.isnan(value).any())
    return type(value) in (float, complex) and cmath.isnan(value)


def _check_forward(prim, out) -> None:
    """What every primitive's forward runs while `debug_nans` is on anywhere: this thread's
    setting decides; a NaN output raises, naming the primitive and the pass (a NaN made
    inside a derivative rule is blamed on the entry whose rule the backward pass runs)."""
    if config.debug_nans and _has_nan(out):
        caller = sys._getframe(1)
        name, pass_name, recorded = _primitive_and_pass(caller)
        if pass_name == "forward":
            name = prim.name
        raise nan_error(name, pass_name, recorded or user_frame(caller)[0],
                        f"in the output of {prim.name}" if pass_name == "backward"
                        else "in its output")


def _on_numpy_error(kind: str, flag: int) -> None:
    """NumPy's floating-point error callback (see `numpy_errors`)."""
    caller = sys._getframe(1)
    prim_name, pass_name, recorded = _primitive_and_pass(caller)
    frame, level = user_frame(caller)
    if config.debug_nans and kind.startswith("invalid"):
        raise nan_error(prim_name, pass_name, recorded or frame, kind)
    message = f"{kind} encountered in {prim_name}"
    if pass_name == "backward":
        message += " (in its derivative rule, during the backward pass)"
    warnings.warn(message, RuntimeWarning, stacklevel=level + 1)


def numpy_errors() -> contextlib.AbstractContextManager:
    """NumPy's error state for running a transform: every kind of floating-point error that
    would warn is reported through `_on_numpy_error` instead (which warns at the user's
    line); errors the user set to raise or ignore stay so. Inside a transform that already
    set it up, nothing changes (a cheap no-op)."""
    if _extobj_var is None:  # (NumPy 1.x)
        return _errstate_for(_numpy_error_state())
    # The answer depends only on NumPy's present error state, an immutable object that its
    # context variable holds, and on debug_nans: it is worked out once per such pair and
    # kept (a transform's entry paid ~1.7 us for it, three times per value_and_grad call).
    current = _extobj_var.get()
    key = (current, config.debug_nans)  # (holding `current` keeps its id from being reused)
    target = _errstate_cache.get(key, _MISSING)
    if target is _MISSING:
        manager = _errstate_for(_numpy_error_state())
        target = None
        if manager is not _UNCHANGED:
            with manager:
                target = _extobj_var.get()
        if len(_errstate_cache) >= 16:  # each np.errstate block makes a new state object
            _errstate_cache.clear()
        _errstate_cache[key] = target
    return _UNCHANGED if target is None else _ErrorState(target)


def _errstate_for(state: dict) -> contextlib.AbstractContextManager:
    """The errstate that `numpy_errors` enters from NumPy's error state `state`."""
    if state["call"] is _on_numpy_error and state["invalid"] == "call" and "warn" not in (
            state["divide"], state["over"], state["under"]):
        return _UNCHANGED  # an enclosing transform set it up (what follows would find so)
    changes = {kind: "call" for kind in _ERROR_KINDS if state[kind] == "warn"}
    if config.debug_nans and state["invalid"] != "call":
        changes["invalid"] = "call"
    call = state["call"]
    if not changes or (call is not None and call is not _on_numpy_error
                       and any(state[kind] == "call" for kind in _ERROR_KINDS)):
        return _UNCHANGED
    return np.errstate(call=_on_numpy_error, **changes)


class _ErrorState:
    """Enters a NumPy error state worked out before (what ``np.errstate`` sets, without
    building it again)."""

    __slots__ = ("_target", "_token")

    def __init__(self, target) -> None:
        self._target = target

    def __enter__(self) -> None:
        self._token = _extobj_var.set(self._target)

    def __exit__(self, *exc_info) -> None:
        _extobj_var.reset(self._token)


_MISSING = object()
_errstate_cache: dict = {}  # (NumPy's error state object, debug_nans) -> the one to set, or None


_UNCHANGED = contextlib.nullcontext()  # (reentrant and stateless: one serves every call)


_ERROR_KINDS = ("divide", "over", "under", "invalid")

try:  # one C call for the four modes and the callback (np.geterr and np.geterrcall are two)
    from numpy._core._multiarray_umath import _get_extobj_dict as _numpy_error_state
except ImportError:  # NumPy 1.x
    def _numpy_error_state() -> dict:
        return {**np.geterr(), "call": np.geterrcall()}

try:  # the context variable holding NumPy's error state (NumPy 2)
    from numpy._core._ufunc_config import _extobj_contextvar as _extobj_var
except ImportError:  # NumPy 1.x keeps it per thread: `numpy_errors` asks each time
    _extobj_var = None
