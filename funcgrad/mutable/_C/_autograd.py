"""``torch._C._autograd``: the classes of what a node exposes (saved tensors, input metadata)."""
from __future__ import annotations

from .._graph import InputMetadata as _InputMetadata
from .._ops import SavedTensor

__all__ = ["SavedTensor", "_InputMetadata"]
