"""torch.save and torch.load: pickle with tensors stored as NumPy arrays beside the pickle.

A file holds one pickle whose tensors are persistent ids: each distinct tensor is written
once (as its array, dtype, ``requires_grad`` and whether it is an ``nn.Parameter``), so a
tensor reached twice loads as one object. ``torch.load`` defaults to ``weights_only=True``
as PyTorch 2.6+ does: only containers, numbers, strings, tensors, dtypes and ``Size`` load;
anything else (a pickled Module) needs ``weights_only=False``.

>>> import io
>>> import funcgrad.mutable as torch
>>> buffer = io.BytesIO()
>>> torch.save({"w": torch.ones(2), "step": 3}, buffer)
>>> _ = buffer.seek(0)
>>> torch.load(buffer)
{'w': tensor([1., 1.]), 'step': 3}
"""
from __future__ import annotations

import builtins
import io
import os
import pickle
from typing import Any, BinaryIO

import numpy as np

from . import _dtypes
from ._functions import from_numpy
from ._tensor import Size, Tensor
from .nn.parameter import Parameter

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals"]

_MAGIC = b"funcgrad.mutable.save/1\n"
_SAFE = {("collections", "OrderedDict"), ("builtins", "set"), ("builtins", "frozenset"),
         ("builtins", "complex"), ("builtins", "slice"), ("builtins", "range")}
_user_safe: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes or functions in ``torch.load(..., weights_only=True)``."""
    _user_safe.extend(safe_globals)


def get_safe_globals() -> list:
    """The globals added with `add_safe_globals`."""
    return list(_user_safe)


class _Pickler(pickle.Pickler):
    def __init__(self, file, protocol) -> None:
        super().__init__(file, protocol)
        self.arrays: list = []
        self._index: dict = {}

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor):
            return None
        key = id(obj)
        if key not in self._index:
            self._index[key] = len(self.arrays)
            self.arrays.append(np.array(obj.detach().numpy(), order="C"))
        is_parameter = isinstance(obj, Parameter)
        return ("tensor", self._index[key], obj.dtype.name, bool(obj.requires_grad),
                is_parameter)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, arrays: list, weights_only: bool) -> None:
        super().__init__(file)
        self.arrays = arrays
        self.weights_only = weights_only
        self._loaded: dict = {}

    def persistent_load(self, pid):
        _, index, _, requires_grad, is_parameter = pid
        key = (index, requires_grad, is_parameter)
        if key not in self._loaded:
            t = from_numpy(self.arrays[index].copy())
            if is_parameter:
                t = Parameter(t, requires_grad=requires_grad)
            elif requires_grad:
                t.requires_grad_(True)
            self._loaded[key] = t
        return self._loaded[key]

    def find_class(self, module: str, name: str):
        found = super().find_class(module, name)
        if not self.weights_only:
            return found
        allowed = ((module, name) in _SAFE or found in _user_safe
                   or found is _dtypes.to_dtype or found is Size)
        if not allowed:
            raise pickle.UnpicklingError(
                "Weights only load failed. This file can still be loaded, to do so you have "
                "two options, do those steps only if you trust the source of the checkpoint. "
                "\n\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` "
                "argument in `torch.load` from `False` to `True`. Re-running `torch.load` with "
                "`weights_only` set to `False` will likely succeed, but it can result in "
                "arbitrary code execution. Do it only if you got the file from a trusted "
                "source.\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler "
                f"error: Unsupported global: GLOBAL {module}.{name} was not an allowed global "
                "by default. Please use `torch.serialization.add_safe_globals"
                f"([{module}.{name}])` or the `torch.serialization.safe_globals([{module}."
                f"{name}])` context manager to allowlist this global if you trust this "
                "class/function.")
        return found


def _open(f, mode: str):
    if isinstance(f, (str, os.PathLike)):
        return builtins.open(f, mode), True
    return f, False


def save(obj: Any, f: str | os.PathLike | BinaryIO, pickle_module: Any = pickle,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True) -> None:
    """Write `obj` (a state_dict, a tensor, a Module, any picklable value) to a path or a
    binary file."""
    body = io.BytesIO()
    pickler = _Pickler(body, max(pickle_protocol, 2))
    pickler.dump(obj)
    arrays = io.BytesIO()
    np.savez(arrays, *pickler.arrays)
    stream, owned = _open(f, "wb")
    try:
        for chunk in (body.getvalue(), arrays.getvalue()):
            stream.write(len(chunk).to_bytes(8, "little"))
            stream.write(chunk)
        stream.write(_MAGIC)
    finally:
        if owned:
            stream.close()


def load(f: str | os.PathLike | BinaryIO, map_location: Any = None, pickle_module: Any = None,
         *, weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args):
    """Read what `save` wrote. ``weights_only`` (default True) refuses pickled classes
    other than containers, tensors, dtypes and ``Size``; ``map_location`` is accepted (every
    tensor is on the CPU)."""
    if weights_only is None:
        weights_only = True
    stream, owned = _open(f, "rb")
    try:
        chunks = []
        for _ in range(2):
            n = int.from_bytes(stream.read(8), "little")
            chunks.append(stream.read(n))
        if stream.read(len(_MAGIC)) != _MAGIC:
            raise RuntimeError("Invalid magic number; corrupt file? (not written by "
                               "funcgrad.mutable's torch.save)")
    finally:
        if owned:
            stream.close()
    with np.load(io.BytesIO(chunks[1])) as npz:
        arrays = [npz[f"arr_{i}"] for i in range(len(npz.files))]
    return _Unpickler(io.BytesIO(chunks[0]), arrays, weights_only).load()
