"""How tensors print: PyTorch's layout rules (precision 4, line width 80, summaries >1000)."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["tensor_repr", "data_str"]

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


class _Formatter:
    __slots__ = ("floating", "int_mode", "sci_mode", "max_width")

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind in "fc"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        absolute = np.abs(finite)
        lo, hi = absolute.min(), absolute.max()
        vals = finite.tolist()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                self.max_width = max(len(f"{v:.{PRECISION}e}") for v in vals)
            else:
                self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
        elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
            self.sci_mode = True
            self.max_width = max(len(f"{v:.{PRECISION}e}") for v in vals)
        else:
            self.max_width = max(len(f"{v:.{PRECISION}f}") for v in vals)

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRECISION}f}"
        else:
            text = str(value)
        return (self.max_width - len(text)) * " " + text


class _ComplexFormatter:
    """PyTorch's complex layout: real and imaginary parts each formatted over all elements,
    joined with their sign and a ``j``."""

    __slots__ = ("real", "imag", "max_width")

    def __init__(self, values: np.ndarray) -> None:
        self.real = _Formatter(values.real)
        self.imag = _Formatter(values.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value) -> str:
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarized(values: np.ndarray) -> np.ndarray:
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGEITEMS:
        parts = [values[:EDGEITEMS], values[-EDGEITEMS:]]
    else:
        parts = [values]
    return np.concatenate([np.stack([_summarized(x) for x in p]) if values.ndim > 1 else p
                           for p in parts])


def _vector(values, indent, summarize, fmt) -> str:
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / (fmt.max_width + 2))))
    if summarize and values.shape[0] > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in values[:EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in values[-EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, indent, summarize, fmt) -> str:
    ndim = values.ndim
    if ndim == 0:
        return fmt.format(values.item())
    if ndim == 1:
        return _vector(values, indent, summarize, fmt)
    n = values.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        rows = ([_nested(values[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."]
                + [_nested(values[i], indent + 1, summarize, fmt) for i in range(n - EDGEITEMS, n)])
    else:
        rows = [_nested(values[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def data_str(values: np.ndarray, indent: int) -> str:
    """The bracketed body of a tensor's repr."""
    if values.size == 0:
        return "[]"
    if values.dtype == np.float16 or values.dtype.kind == "V":  # (half and bfloat16)
        values = values.astype(np.float32)
    summarize = values.size > THRESHOLD
    shown = _summarized(values) if summarize else values
    fmt = _ComplexFormatter(shown) if values.dtype.kind == "c" else _Formatter(shown)
    return _nested(values, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(values: np.ndarray, dtype, default_dtype, grad_fn_name: str | None,
                requires_grad: bool, tangent: str | None = None) -> str:
    """``tensor([1., 2.], requires_grad=True)``, as PyTorch prints it (a dual tensor's
    ``tangent=`` last)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    default_complex = "complex128" if default_dtype.name == "float64" else "complex64"
    shows_dtype = dtype.name not in (default_dtype.name, default_complex, "int64", "bool")
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append("size=" + str(tuple(values.shape)))
        shows_dtype = dtype.name != default_dtype.name
        body = "[]"
    else:
        body = data_str(values, indent)
    if shows_dtype:
        suffixes.append(f"dtype={dtype!r}")
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append("tangent=" + tangent)
    return _add_suffixes(prefix + body, suffixes, indent)
