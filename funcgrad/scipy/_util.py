"""Helpers shared by funcgrad.scipy's modules: SciPy as an optional import, float dtypes,
and the type aliases of the public signatures."""
from __future__ import annotations

import importlib
from typing import Callable, Sequence, Union

import numpy as np
from typing_extensions import TypeAlias

from .._src.core import Array

__all__ = ["ArrayLike", "Axis", "require_scipy", "float_dtype", "scipy_function"]

# What funcgrad.scipy accepts where SciPy accepts an array (funcgrad.numpy's own alias).
ArrayLike: TypeAlias = Union[Array, np.ndarray, np.generic, bool, int, float, complex,
                             Sequence["ArrayLike"]]
Axis: TypeAlias = Union[int, tuple[int, ...], None]


def require_scipy(module: str, user: str):
    """Imports ``scipy.<module>``, or raises an ImportError naming the optional extra."""
    try:
        return importlib.import_module(f"scipy.{module}")
    except ImportError as error:
        raise ImportError(
            f"{user} needs SciPy, an optional dependency of funcgrad: install it with "
            "pip install 'funcgrad[scipy]' (or pip install scipy)") from error


def float_dtype(*args) -> np.dtype:
    """The floating (or complex) dtype NumPy computes `args` in: float64 for integers."""
    dtype = np.result_type(*args)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def scipy_function(name: str, unary: bool = True) -> Callable:
    """``scipy.special.<name>`` on raw arrays, in the arguments' float dtype; a missing SciPy
    raises an ImportError naming the extra when the function is called, not imported."""
    def call(*args):
        sc = require_scipy("special", f"funcgrad.scipy.special.{name}")
        args = [np.asarray(a) for a in args]
        return np.asarray(getattr(sc, name)(*args)).astype(float_dtype(*args))

    def impl1(x):  # one argument: named x, as the generated signatures name it
        return call(x)
    impl = impl1 if unary else call
    impl.__name__ = name
    impl.needs_scipy = True  # tests skip it, saying why, where SciPy is not installed
    return impl
