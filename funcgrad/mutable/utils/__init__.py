"""torch.utils for funcgrad.mutable: `data` (datasets, samplers, DataLoader) and `checkpoint`
(recompute a function's intermediate values during backward)."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
