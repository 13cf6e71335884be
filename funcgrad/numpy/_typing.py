"""Type aliases of funcgrad's public signatures: what counts as an array argument, an axis, a dtype.

>>> from funcgrad.numpy._typing import ArrayLike
>>> import funcgrad.numpy as fnp
>>> def total(x: ArrayLike) -> fnp.ndarray:
...     return fnp.sum(fnp.asarray(x))
>>> total([[1.0, 2.0], [3.0, 4.0]])
Array(10., dtype=float64)
"""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np
import numpy.typing as npt
from typing_extensions import TypeAlias

from .._src.core import Array

__all__ = ["ArrayLike", "Axis", "DTypeLike", "Shape"]

# Anything funcgrad.numpy accepts where NumPy accepts an array: Arrays (and tracers, which
# are Arrays), NumPy arrays and scalars, Python numbers, and nested sequences of them.
ArrayLike: TypeAlias = Union[Array, np.ndarray, np.generic, bool, int, float, complex,
                             Sequence["ArrayLike"]]
Axis: TypeAlias = Union[int, tuple[int, ...], None]
Shape: TypeAlias = Union[int, Sequence[int]]
DTypeLike: TypeAlias = npt.DTypeLike
