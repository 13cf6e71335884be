"""torch.utils for funcgrad.mutable: `data` (datasets, samplers, DataLoader)."""
from . import data

__all__ = ["data"]
