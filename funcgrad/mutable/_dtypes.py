"""PyTorch's dtypes as NumPy dtypes, and PyTorch's type-promotion rules for the common cases."""
from __future__ import annotations

import numpy as np

try:  # NumPy's bfloat16 comes from ml_dtypes (installed with JAX); without it, no torch.bfloat16
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

__all__ = ["dtype", "from_numpy_dtype", "to_dtype", "promote", "result_type_of"]


class dtype:
    """A PyTorch dtype (``torch.float32`` ...) standing for one NumPy dtype.

    >>> import funcgrad.mutable as torch
    >>> torch.float32, torch.tensor([1, 2]).dtype
    (torch.float32, torch.int64)
    """

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize",
                 "tensor_type", "category")

    def __init__(self, name: str, np_dtype, tensor_type: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        kind = "f" if name == "bfloat16" else self.np.kind  # (ml_dtypes' bfloat16 is kind "V")
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind in "fic"
        self.itemsize = self.np.itemsize
        self.tensor_type = tensor_type
        self.category = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[kind]

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return (to_dtype, (self.name,))


float32 = dtype("float32", np.float32, "FloatTensor")
float64 = dtype("float64", np.float64, "DoubleTensor")
float16 = dtype("float16", np.float16, "HalfTensor")
bfloat16 = None if ml_dtypes is None else dtype("bfloat16", ml_dtypes.bfloat16, "BFloat16Tensor")
int64 = dtype("int64", np.int64, "LongTensor")
int32 = dtype("int32", np.int32, "IntTensor")
int16 = dtype("int16", np.int16, "ShortTensor")
int8 = dtype("int8", np.int8, "CharTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
bool_ = dtype("bool", np.bool_, "BoolTensor")
complex64 = dtype("complex64", np.complex64, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, "ComplexDoubleTensor")

ALL = (float32, float64, float16, int64, int32, int16, int8, uint8, bool_, complex64, complex128)
EXTRA = () if bfloat16 is None else (bfloat16,)  # dtypes that need an optional package
ALL = ALL + EXTRA
ALIASES = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
           "short": int16, "cfloat": complex64, "cdouble": complex128}
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update(ALIASES)
_BY_PY = {float: float64, int: int64, bool: bool_, complex: complex128}

DEFAULT_FLOAT = float32


def to_dtype(spec) -> dtype:
    """A `dtype` from a torch dtype, a NumPy dtype, a Python type or a name."""
    if type(spec) is dtype:
        return spec
    if isinstance(spec, str):
        found = _BY_NAME.get(spec.replace("torch.", ""))
        if found is not None:
            return found
    if spec in _BY_PY:
        return DEFAULT_FLOAT if spec is float else _BY_PY[spec]
    try:
        return _BY_NP[np.dtype(spec)]
    except (TypeError, KeyError):
        raise TypeError(f"{spec!r} is not a dtype funcgrad.mutable supports; use one of "
                        + ", ".join(repr(d) for d in ALL)) from None


def from_numpy_dtype(np_dtype) -> dtype:
    return _BY_NP[np_dtype]


def promote(a: dtype, b: dtype) -> dtype:
    """``torch.promote_types``: across categories the higher one wins as it is."""
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.is_complex and lo is float64:
            return complex128
        return hi
    if a is bfloat16 or b is bfloat16:  # half with bfloat16 is float; a wider float wins
        other = b if a is bfloat16 else a
        return float32 if other is float16 else other
    return _BY_NP[np.promote_types(a.np, b.np)]


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """PyTorch's combine_categories: a lower-priority operand only matters across categories."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return complex128 if higher is float64 else (complex64 if higher.is_floating_point else lower)
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.category > higher.category:
        return promote(higher, lower)
    return higher


_WRAPPED = {bool: bool_, int: int64, float: None, complex: complex64}


def result_type_of(operands) -> dtype:
    """The dtype PyTorch gives a binary/n-ary op on tensors and Python numbers.

    Tensors with dimensions outrank 0-d tensors, which outrank Python numbers; a lower
    rank only decides the dtype when it brings a higher category (int -> float).

    >>> import funcgrad.mutable as torch
    >>> (torch.tensor([1, 2]) * 1.5).dtype, (torch.ones(2) * torch.tensor(2.0, dtype=torch.float64)).dtype
    (torch.float32, torch.float32)
    """
    dim = zero = wrapped = None
    for op in operands:
        if op is None:
            continue
        d = getattr(op, "_dtype", None)
        if d is not None:
            if op._data.ndim:
                dim = d if dim is None else promote(dim, d)
            else:
                zero = d if zero is None else promote(zero, d)
        else:
            kind = type(op)
            if kind not in _WRAPPED:
                if isinstance(op, np.generic) or isinstance(op, np.ndarray):
                    d = from_numpy_dtype(np.asarray(op).dtype)
                    d = {2: DEFAULT_FLOAT, 1: int64, 0: bool_, 3: complex64}[d.category]
                elif isinstance(op, (bool, np.bool_)):
                    d = bool_
                elif isinstance(op, int):
                    d = int64
                elif isinstance(op, float):
                    d = DEFAULT_FLOAT
                else:
                    raise TypeError(f"unsupported operand of type {kind.__name__}")
            else:
                d = _WRAPPED[kind] or DEFAULT_FLOAT
            wrapped = d if wrapped is None else promote(wrapped, d)
    return _combine(dim, _combine(zero, wrapped))
