"""funcgrad.scipy: differentiable stand-ins for parts of SciPy (``special``, ``stats``,
``linalg``, ``signal``, ``integrate``), with SciPy's names and signatures.

Most functions are computed with NumPy alone; those that need SciPy itself say so with an
ImportError naming the optional extra (``pip install 'funcgrad[scipy]'``) when called.
"""
from __future__ import annotations

from . import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
