"""``torch._C._autograd``: the classes of what a node exposes (saved tensors, input metadata),
and the few state helpers PyTorch's tests read."""
from __future__ import annotations

from .._autograd import current_graph_task_keep_graph as _get_current_graph_task_keep_graph
from .._graph import STATE, Saved
from .._graph import InputMetadata as _InputMetadata
from .._ops import SavedTensor
from .._tensor import Tensor

__all__ = ["SavedTensor", "_InputMetadata", "_saved_tensors_hooks_is_enabled",
           "_unsafe_set_version_counter", "_make_saved_tensor", "_get_current_graph_task_keep_graph"]

_MAKE_SAVED_SIGNATURE = (
    "_make_saved_tensor(): incompatible function arguments. The following argument types are "
    "supported:\n    1. (tensor: torch.Tensor, is_output: bool, is_inplace_on_view: bool = "
    "False) -> torch._C._autograd.SavedTensor\n\nInvoked with: ")


def _make_saved_tensor(*args, **kwargs) -> SavedTensor:
    """``torch._C._autograd._make_saved_tensor(tensor, is_output, is_inplace_on_view=False)``:
    `tensor` saved as a node would save it (its version kept, the innermost
    saved_tensors_hooks' pack hook run now), outside any node; ``.unpack()`` reads it back.
    An output (`is_output`) that has a grad_fn cannot be read back: torch keeps no grad_fn
    for it."""
    names = ("tensor", "is_output", "is_inplace_on_view")
    bound = dict(zip(names, args))
    ok = len(args) <= 3 and set(kwargs) <= set(names) and not set(kwargs) & set(bound)
    bound.update(kwargs)
    # (the flags are taken as truth values, as torch's binding converts them)
    ok = ok and isinstance(bound.get("tensor"), Tensor) and "is_output" in bound
    if not ok:
        invoked = ", ".join(repr(a) for a in args)
        if kwargs:
            invoked += "; kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        raise TypeError(_MAKE_SAVED_SIGNATURE + invoked)
    t = bound["tensor"]
    keeps_tensor = not (bound["is_output"] and t.grad_fn is not None)
    return SavedTensor._of(Saved(t._data, t._vc, t if keeps_tensor else None), None)


def _saved_tensors_hooks_is_enabled() -> bool:
    """False inside ``torch.autograd.graph.disable_saved_tensors_hooks``."""
    return STATE.hooks_disabled is None


def _unsafe_set_version_counter(tensors, versions) -> None:
    """Set each tensor's version (shared with its views) to the given number."""
    for t, v in zip(tensors, versions):
        if v < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {v}")
        t._vc.value = int(v)
