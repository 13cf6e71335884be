"""The few pieces of ``torch._C`` that Python code (PyTorch's own tests) reaches for."""
import weakref

from .._autograd import current_autograd_node as _current_autograd_node
from .._autograd import current_graph_task_execution_order as _current_graph_task_execution_order
from .._autograd import current_graph_task_id as _current_graph_task_id
from .._autograd import will_engine_execute_node as _will_engine_execute_node
from .._graph import STATE
from .._grad_mode import is_grad_enabled
from .._ops import FORWARD
from ..autograd.grad_mode import _is_view_replay_enabled, _set_view_replay_enabled
from . import _autograd, _functions, _nn

__all__ = ["_autograd", "_functions", "_nn", "is_grad_enabled", "has_lapack", "_WeakTensorRef",
           "_is_fwd_grad_enabled", "_set_fwd_grad_enabled", "_current_graph_task_id",
           "_current_autograd_node", "_current_graph_task_execution_order",
           "_will_engine_execute_node", "_is_multithreading_enabled",
           "_set_multithreading_enabled", "_is_view_replay_enabled", "_set_view_replay_enabled",
           "_set_cached_tensors_enabled", "_add_cached_tensor", "_remove_cached_tensor",
           "_is_cached_tensor"]

has_lapack = True  # linalg.qr and the other decompositions are NumPy's LAPACK


def _is_fwd_grad_enabled() -> bool:
    """Whether forward-mode AD computes tangents (torch.autograd.forward_ad)."""
    return FORWARD.enabled


def _set_fwd_grad_enabled(mode: bool) -> None:
    FORWARD.enabled = bool(mode)


def _is_multithreading_enabled() -> bool:
    """Whether backward passes started in this thread may use worker threads (per thread)."""
    return STATE.multithreading


def _set_multithreading_enabled(mode: bool) -> None:
    STATE.multithreading = bool(mode)


# torch's cached-tensor registry (what CUDA graph trees mark): process-wide, by tensor,
# consulted only while enabled
_CACHED: dict = {}  # id(tensor) -> weak reference to it
_CACHED_ENABLED = [False]
_CACHED_OFF = ("cached tensors are not enabled: call torch._C._set_cached_tensors_enabled(True) "
               "first")


def _set_cached_tensors_enabled(enabled: bool) -> None:
    _CACHED_ENABLED[0] = bool(enabled)


def _add_cached_tensor(t) -> None:
    """Mark `t` (not its views) as cached; adding twice is adding once."""
    if not _CACHED_ENABLED[0]:
        raise RuntimeError(_CACHED_OFF)
    key = id(t)
    _CACHED[key] = weakref.ref(t, lambda _, key=key: _CACHED.pop(key, None))


def _remove_cached_tensor(t) -> None:
    if not _CACHED_ENABLED[0]:
        raise RuntimeError(_CACHED_OFF)
    ref = _CACHED.get(id(t))
    if ref is not None and ref() is t:
        del _CACHED[id(t)]


def _is_cached_tensor(t) -> bool:
    if not _CACHED_ENABLED[0]:
        return False
    ref = _CACHED.get(id(t))
    return ref is not None and ref() is t


class _WeakTensorRef:
    """A weak reference to a tensor that reports whether the tensor is gone."""

    __slots__ = ("_ref",)

    def __init__(self, tensor) -> None:
        self._ref = weakref.ref(tensor)

    def expired(self) -> bool:
        return self._ref() is None
