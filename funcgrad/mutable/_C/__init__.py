"""The few pieces of ``torch._C`` that Python code (PyTorch's own tests) reaches for."""
from . import _autograd, _functions

__all__ = ["_autograd", "_functions"]
