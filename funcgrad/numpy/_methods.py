"""Array's operators and methods, forwarded to funcgrad.numpy's functions."""
from __future__ import annotations

import numpy as np

from .._src.core import Array
from . import _primitives as P
from ._indexing import At
from ._namespace import ns

E = ns.exports


MIXED_MODELS = (
    "a funcgrad.mutable Tensor and a funcgrad.numpy Array do not mix in one operation: convert "
    "one of them explicitly, torch.from_numpy(numpy.asarray(array)) for a Tensor, or "
    "funcgrad.numpy.asarray(tensor.detach().numpy()) for an Array")


def _wrap(out, other):
    # a mutable Tensor operand would make an Array of neither model (NumPy even hands the
    # Tensor its own __array_ufunc__, whose answer is a Tensor): refused, naming conversions.
    # (The usual operands are let through first: a class attribute a type lacks costs ~3K
    # instructions, CPython formatting the AttributeError that getattr then drops.)
    if type(other) not in _PLAIN_OPERANDS and getattr(type(other), "__funcgrad_mutable__", False):
        raise TypeError(MIXED_MODELS)
    array = _new_object(Array)  # (Array(out) without its __init__ frame)
    array._value = out
    return array


_PLAIN_OPERANDS = frozenset((Array, np.ndarray, float, int, complex, bool, np.float64,
                             np.float32, np.int64))
_new_object = object.__new__


_OPERATORS = {
    "add": P.add, "sub": P.subtract, "mul": P.multiply, "truediv": P.divide,
    "floordiv": P.floor_divide, "mod": P.remainder, "pow": P.power, "matmul": P.matmul,
    "and": P.bitwise_and, "or": P.bitwise_or, "xor": P.bitwise_xor,
    "lshift": P.left_shift, "rshift": P.right_shift,
}
for _name, _prim in _OPERATORS.items():
    setattr(Array, f"__{_name}__", _prim.operator(_wrap))
    setattr(Array, f"__r{_name}__", _prim.operator(_wrap, reflected=True))
for _name, _prim in {"eq": P.equal, "ne": P.not_equal, "lt": P.less, "le": P.less_equal,
                     "gt": P.greater, "ge": P.greater_equal}.items():
    setattr(Array, f"__{_name}__", _prim.operator(_wrap))
Array.__neg__ = P.negative.operator(Array)
Array.__pos__ = P.positive.operator(Array)
Array.__abs__ = P.absolute.operator(Array)
Array.__invert__ = P.bitwise_not.operator(Array)  # (NumPy's ~: logical on bools, bitwise on ints)


def _getitem(self, index):
    out = P.subscript(self, index)
    return out if isinstance(out, Array) else Array(out)


Array.__getitem__ = _getitem
Array.at = property(At, doc="Functional updates: ``x.at[idx].set(v)``, ``.add``, "
                               "``.multiply``, ``.min``, ``.max``, ``.get``; each returns a "
                               "new array and is differentiable.")


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _name in ("sum", "mean", "prod", "max", "min", "var", "std", "clip", "dot", "ravel",
              "squeeze", "swapaxes", "argmax", "argmin", "all", "any", "round", "nonzero",
              "argsort"):
    setattr(Array, _name, _method(E[_name]))


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    return E["reshape"](self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    return E["transpose"](self, axes or None)


def _astype(self, dtype, copy=True):
    return E["astype"](self, dtype)


Array.reshape = _reshape
Array.transpose = _transpose
Array.astype = _astype
Array.flatten = lambda self, order="C": E["ravel"](self)
Array.copy = lambda self: self
Array.T = property(lambda self: E["transpose"](self))
Array.mT = property(lambda self: E["swapaxes"](self, -1, -2))

# Methods NumPy arrays have for the functions of issue 5 (complex parts, cumulative ops...).
for _name in ("cumsum", "cumprod", "conj", "conjugate", "trace", "diagonal", "repeat", "take",
              "argpartition", "searchsorted", "nonzero"):
    setattr(Array, _name, _method(E[_name]))


def _sort(self, axis=-1, kind=None, order=None):
    """A sorted copy (arrays are immutable, so unlike NumPy's in-place sort it returns)."""
    return E["sort"](self, axis=axis, kind=kind, order=order)


Array.sort = _sort
Array.real = property(lambda self: E["real"](self))
Array.imag = property(lambda self: E["imag"](self))
