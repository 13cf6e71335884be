"""torch.autograd.forward_ad: forward-mode AD with dual tensors. The machinery (how tangents
flow through ops, views and in-place writes) is in ``funcgrad.mutable._forward``; the
derivative rules are the JVP rules of funcgrad's one primitive table.

>>> import funcgrad.mutable as torch
>>> import funcgrad.mutable.autograd.forward_ad as fwAD
>>> x = torch.tensor([0.0, 1.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, torch.ones(2)).exp()
...     fwAD.unpack_dual(y).tangent
tensor([1.0000, 2.7183])
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

from .. import _forward
from .._ops import FORWARD
from .._tensor import Tensor

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


def __getattr__(name: str):
    """``_current_level``: the level in use, -1 outside any (PyTorch's module global)."""
    if name == "_current_level":
        return _forward.LEVEL.current
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def enter_dual_level() -> int:
    """Enter a forward AD level (only one may be open: nesting raises) and return it (0)."""
    return _forward.enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the current level: every dual tensor made in it loses its tangent."""
    _forward.exit_level(_forward.LEVEL.current if level is None else level)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` carrying `tangent` (kept as it is when laid out like `tensor`,
    else copied). Ops on it compute the output's tangent beside its value.

    >>> import funcgrad.mutable as torch
    >>> import funcgrad.mutable.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(torch.tensor([2.0]), torch.tensor([1.0]))
    ...     fwAD.unpack_dual(d * d).tangent
    tensor([4.])
    """
    if level is None:
        level = _forward.LEVEL.current
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    return _forward.make_dual(tensor, tangent, level)


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal and the tangent (None when there is none)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor`: a new view of its value with no tangent, and its
    tangent as it is (None if it has none, or outside any level)."""
    if level is None:
        level = _forward.LEVEL.current
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    primal, tangent = _forward.unpack_dual(tensor, level)
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager (and decorator) entering a forward AD level and leaving it on exit.

    >>> import funcgrad.mutable.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level() as level:
    ...     level
    0
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapped


def _is_fwd_grad_enabled() -> bool:
    return FORWARD.enabled


class _set_fwd_grad_enabled:
    """Turn forward-grad computation on or off (PyTorch's private helper): set at
    construction, restored on leaving the block."""

    def __init__(self, mode: bool) -> None:
        self.prev = FORWARD.enabled
        FORWARD.enabled = bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        FORWARD.enabled = self.prev
