"""funcgrad: automatic differentiation on NumPy, in two models side by side.

* Functional, JAX-style: `funcgrad.numpy` with `grad`, `value_and_grad`, `vjp`, `jvp`, `vmap`.
* Mutable, PyTorch-style: `funcgrad.mutable`.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sum(x ** 2))(fnp.array([1.0, 2.0])).tolist()
[2.0, 4.0]
"""
from __future__ import annotations

from . import numpy, tree_util
from . import flatten_util, lax, random, tree
from ._src.config import config, debug_nans
from ._src.core import Array, FuncgradError, is_traced
from ._src.transforms import (grad, jvp, linear_transpose, stop_gradient, value_and_grad, vjp,
                             vmap)
from ._src.custom import checkpoint, custom_jvp, custom_vjp
from ._src.jacobians import hessian, hvp, jacfwd, jacobian, jacrev, linearize
from ._src.tape_print import make_tape
from ._src.jit import (ConcretizationTypeError, NonConcreteBooleanIndexError,
                       TracerBoolConversionError, jit)
from .compare import compare
from . import nn  # after the transforms: it builds on funcgrad.scipy.special, which uses them

__version__ = "0.1.0"
__all__ = ["Array", "FuncgradError", "grad", "value_and_grad", "vjp", "jvp", "vmap",
           "stop_gradient", "linear_transpose", "numpy", "tree_util", "linearize", "jacfwd", "jacrev", "jacobian",
           "hessian", "hvp", "custom_vjp", "custom_jvp", "checkpoint", "make_tape",
           "is_traced", "config", "debug_nans", "jit", "ConcretizationTypeError",
           "TracerBoolConversionError", "NonConcreteBooleanIndexError", "compare",
           "lax", "nn", "random", "tree", "flatten_util"]
