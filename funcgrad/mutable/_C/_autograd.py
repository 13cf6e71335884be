"""``torch._C._autograd``: the classes of what a node exposes (saved tensors, input metadata),
and the few state helpers PyTorch's tests read."""
from __future__ import annotations

from .._graph import STATE
from .._graph import InputMetadata as _InputMetadata
from .._ops import SavedTensor

__all__ = ["SavedTensor", "_InputMetadata", "_saved_tensors_hooks_is_enabled",
           "_unsafe_set_version_counter"]


def _saved_tensors_hooks_is_enabled() -> bool:
    """False inside ``torch.autograd.graph.disable_saved_tensors_hooks``."""
    return STATE.hooks_disabled is None


def _unsafe_set_version_counter(tensors, versions) -> None:
    """Set each tensor's version (shared with its views) to the given number."""
    for t, v in zip(tensors, versions):
        if v < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {v}")
        t._vc.value = int(v)
