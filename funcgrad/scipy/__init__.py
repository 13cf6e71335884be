"""funcgrad.scipy: differentiable stand-ins for parts of SciPy (``special``, ``stats.norm``).

Most functions are computed with NumPy alone; the few that need SciPy itself say so with an
ImportError naming the optional extra (``pip install 'funcgrad[scipy]'``).
"""
from __future__ import annotations

from . import special, stats

__all__ = ["special", "stats"]
