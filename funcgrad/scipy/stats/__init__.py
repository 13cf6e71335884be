"""funcgrad.scipy.stats: differentiable distribution functions (``norm`` so far)."""
from __future__ import annotations

from . import norm

__all__ = ["norm"]
