"""The few pieces of ``torch._C`` that Python code (PyTorch's own tests) reaches for."""
from .._grad_mode import is_grad_enabled
from . import _autograd, _functions

__all__ = ["_autograd", "_functions", "is_grad_enabled", "has_lapack"]

has_lapack = True  # linalg.qr and the other decompositions are NumPy's LAPACK
