"""funcgrad.numpy: a differentiable NumPy namespace. Only declared names exist here.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sum(fnp.sin(x)))(fnp.array([0.0, 0.0])).tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import numpy as _np

from .._src.core import Array as _Array
# The family modules declare the public functions into the namespace as they are imported;
# _methods gives Array its operators and methods.
from . import (_creation, _nondiff, _elementwise, _indexing, _shapes, _reductions,  # noqa: F401
               _cumulative, _statistics, _products, _methods, fft, linalg, _polynomial,
               _functional)
from ._namespace import ns as _ns

globals().update(_ns.exports)
from ._shapes import c_, r_  # noqa: E402  (index-syntax objects, not functions)

__version__ = _np.__version__  # the NumPy this namespace stands in for, as autograd.numpy's

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, bool_ = _np.uint8, _np.bool_
dtype, finfo, iinfo = _np.dtype, _np.finfo, _np.iinfo
# Floating-point error handling is NumPy's own: funcgrad's forward and rules run in NumPy.
seterr, geterr, errstate = _np.seterr, _np.geterr, _np.errstate
ndarray = _Array
euler_gamma = _np.euler_gamma
# NumPy's scalar types and their abstract classes, for dtype= and issubdtype; `bool` and
# `float_`/`complex_` as jax.numpy spells them (NumPy 2 dropped the last two). `bool` stays
# out of __all__: a star import must not shadow the builtin.
bool = _np.bool_
uint, uint16, uint32, uint64 = _np.uint, _np.uint16, _np.uint32, _np.uint64
int_, float_, complex_ = _np.int_, _np.float64, _np.complex128
single, double, csingle, cdouble = _np.single, _np.double, _np.csingle, _np.cdouble
# Extended precision, as autograd programs spell it (platform-dependent and not in jax.numpy,
# so out of __all__ and the stubs); funcgrad computes in it as NumPy does.
longdouble, clongdouble = _np.longdouble, _np.clongdouble
(generic, number, inexact, floating, complexfloating, integer, signedinteger, unsignedinteger,
 character, flexible, object_) = (_np.generic, _np.number, _np.inexact, _np.floating,
                                  _np.complexfloating, _np.integer, _np.signedinteger,
                                  _np.unsignedinteger, _np.character, _np.flexible, _np.object_)
ufunc = _np.ufunc
ComplexWarning = _np.exceptions.ComplexWarning
# Index-building objects (they make index tuples and ranges, no arrays to differentiate).
s_, index_exp, mgrid, ogrid = _np.s_, _np.index_exp, _np.mgrid, _np.ogrid
printoptions, get_printoptions, set_printoptions = (_np.printoptions, _np.get_printoptions,
                                                    _np.set_printoptions)

__all__ = sorted(_ns.exports) + ["r_", "c_", "pi", "e", "inf", "nan", "newaxis", "float16", "float32",
                                 "float64", "complex64", "complex128", "int8", "int16",
                                 "int32", "int64", "uint8", "bool_", "dtype", "finfo", "iinfo",
                                 "seterr", "geterr", "errstate", "__version__", "euler_gamma",
                                 "uint", "uint16", "uint32", "uint64", "int_", "float_",
                                 "complex_", "single", "double", "csingle", "cdouble", "generic",
                                 "number", "inexact", "floating", "complexfloating", "integer",
                                 "signedinteger", "unsignedinteger", "character", "flexible",
                                 "object_", "ufunc", "ComplexWarning", "s_", "index_exp", "mgrid",
                                 "ogrid", "printoptions", "get_printoptions", "set_printoptions"]


def __getattr__(name: str):
    if hasattr(_np, name):
        raise AttributeError(
            f"funcgrad.numpy has no {name!r}: numpy.{name} has not been declared "
            "differentiable yet. Declare it in funcgrad/numpy/_primitives.py with its rule "
            "(one line for elementwise functions) and export it from its family module, or apply it to constants via "
            "numpy.asarray(x) if no derivative is needed"
        )
    raise AttributeError(f"module 'funcgrad.numpy' has no attribute {name!r}")
