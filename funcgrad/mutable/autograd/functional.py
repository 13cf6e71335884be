"""torch.autograd.functional: Jacobians, Hessians and products (filled in below)."""
from __future__ import annotations

__all__: list = []
