"""funcgrad.compare: one computation run in both models (functional `funcgrad.numpy` under
`value_and_grad`, mutable `funcgrad.mutable` with ``.backward()``), and a report of where
their values and gradients agree, where they part and why; also the explanation of an
in-place (version counter) error that `compare` and ``funcgrad explain`` give.

>>> import numpy as np
>>> def f(xp, x):
...     y = x * 2
...     row = y[0]
...     row += 1          # mutable: writes into y through the view; functional: a new array
...     return (y * y).sum()
>>> report = compare(f, np.array([1.0, 2.0]))
>>> report.agree
False
>>> report.divergence.name, report.divergence.source
('y', 'row += 1          # mutable: writes into y through the view; functional: a new array')
"""
from __future__ import annotations

import inspect
import linecache
import re
import sys
from typing import Any, Callable

import numpy as np

from . import mutable, numpy as fnp
from ._src.core import Array
from ._src.transforms import value_and_grad
from .viz import Graph, last_write, mutable_graph

__all__ = ["compare", "Report", "Divergence", "InplaceExplanation", "functional_rewrite"]


# --- functional rewrites of in-place lines -------------------------------------------------
_OPERATORS = {"+": "+", "-": "-", "*": "*", "/": "/", "@": "@", "**": "**"}
_AT_METHODS = {"+": "add", "*": "multiply", "/": "divide", "**": "power"}
_METHOD_OPS = {"add_": "+", "sub_": "-", "mul_": "*", "div_": "/", "pow_": "**"}
_NAME = r"[A-Za-z_][\w.]*"


def functional_rewrite(line: str) -> str | None:
    """The functional spelling of one in-place source line, where it is obvious; None where
    it is not (or the line writes nothing in place).

    >>> functional_rewrite("x[i] = v")
    'x = x.at[i].set(v)'
    >>> functional_rewrite("    b[0] += 2 * c")
    '    b = b.at[0].add(2 * c)'
    >>> functional_rewrite("x.add_(y)"), functional_rewrite("h.mul_(0.5)")
    ('x = x + y', 'h = h * 0.5')
    >>> functional_rewrite("y += 1"), functional_rewrite("z.exp_()")
    ('y = y + 1', 'z = z.exp()')
    >>> functional_rewrite("w[0].add_(1)"), functional_rewrite("y = x + 1")
    ('w = w.at[0].add(1)', None)
    """
    code, comment = _split_comment(line)
    indent = code[: len(code) - len(code.lstrip())]
    body = code.strip()
    tail = f"  {comment}" if comment else ""
    m = re.fullmatch(rf"({_NAME})\[(.+)\]\s*(\*\*|[-+*/@])?=\s*(.+)", body)
    if m and not m.group(4).startswith("="):
        target, index, op, value = m.groups()
        if op is None:
            return f"{indent}{target} = {target}.at[{index}].set({value}){tail}"
        if op == "-":
            return f"{indent}{target} = {target}.at[{index}].add(-({value})){tail}"
        if op in _AT_METHODS:
            return f"{indent}{target} = {target}.at[{index}].{_AT_METHODS[op]}({value}){tail}"
        return None
    m = re.fullmatch(rf"({_NAME})\s*(\*\*|[-+*/@])=\s*(.+)", body)
    if m:
        target, op, value = m.groups()
        return f"{indent}{target} = {target} {_OPERATORS[op]} {value}{tail}"
    m = re.fullmatch(rf"({_NAME})(\[(.+)\])?\.(\w+_)\((.*)\)", body)
    if m:
        target, _, index, method, args = m.groups()
        if method in ("requires_grad_", "retain_grad_", "share_memory_"):
            return None
        if index is not None:
            if method in _METHOD_OPS and _METHOD_OPS[method] in _AT_METHODS:
                at = _AT_METHODS[_METHOD_OPS[method]]
                return f"{indent}{target} = {target}.at[{index}].{at}({args}){tail}"
            if method == "sub_":
                return f"{indent}{target} = {target}.at[{index}].add(-({args})){tail}"
            if method in ("fill_", "copy_"):
                return f"{indent}{target} = {target}.at[{index}].set({args}){tail}"
            if method == "zero_":
                return f"{indent}{target} = {target}.at[{index}].set(0){tail}"
            return None
        if method in _METHOD_OPS and "," not in args:
            return f"{indent}{target} = {target} {_METHOD_OPS[method]} {args}{tail}"
        if method == "zero_":
            return f"{indent}{target} = xp.zeros_like({target}){tail}"
        if method == "fill_":
            return f"{indent}{target} = xp.full_like({target}, {args}){tail}"
        if method == "copy_":
            return f"{indent}{target} = {args}{tail}"
        return f"{indent}{target} = {target}.{method[:-1]}({args}){tail}"
    return None


def _split_comment(line: str) -> tuple:
    code = line.rstrip("\n")
    quote = None
    for i, ch in enumerate(code):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return code[:i].rstrip(), code[i:]
    return code.rstrip(), ""


def _source(path: str, line: int) -> str:
    return linecache.getline(path, line).strip() if path and line else ""


def _where(path: str, line: int) -> str:
    return f"{path}:{line}"


# --- explaining a version-counter error ----------------------------------------------------
_SAVED_NOTE = re.compile(r"saved by: (\S+)(?: at (.+):(\d+))? \(as version (\d+)\)")
_WRITE_NOTE = re.compile(r"modified by: (\S+) at (.+):(\d+) \(now version (\d+)\)")


def is_version_error(err: BaseException) -> bool:
    """True for PyTorch's 'modified by an inplace operation' error."""
    return isinstance(err, RuntimeError) and "modified by an inplace operation" in str(err)


class InplaceExplanation:
    """Why a backward pass failed on a version check: ``message`` (PyTorch's words), the op
    that saved the tensor (``saved_by``, ``saved_at`` = (file, line)), the in-place op that
    wrote it afterwards (``modified_by``, ``modified_at``), ``saved_version`` and
    ``current_version``, the source lines, the `Graph` with the broken edge, and
    ``rewrites``: (line number, the line, its functional spelling) where one is obvious."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.saved_by = self.modified_by = None
        self.saved_at = self.modified_at = None
        self.saved_version = self.current_version = None
        self.graph: Graph | None = None
        self.rewrites: list = []

    @classmethod
    def from_error(cls, err: BaseException, tensors: dict | None = None) -> "InplaceExplanation":
        """Explain `err` (a version error). `tensors` maps names to the tensors of the program
        that failed: the graph behind those with a ``grad_fn`` is read and drawn."""
        self = cls(str(err).split("\n")[0])
        tensors = {k: v for k, v in (tensors or {}).items() if isinstance(v, mutable.Tensor)}
        roots = [t for t in tensors.values() if t.grad_fn is not None]
        roots = _outermost(roots)
        if roots:
            self.graph = mutable_graph(*roots, names=tensors)
        expected = re.search(r"is at version (\d+); expected version (\d+)", self.message)
        conflicts = self.graph.conflicts() if self.graph is not None else []
        if expected:
            now, then = int(expected.group(1)), int(expected.group(2))
            conflicts.sort(key=lambda c: (c[1].current_version, c[1].saved_version) != (now, then))
        if conflicts:
            node, saved = conflicts[0]
            self.saved_by, self.saved_at = node.name, node.where
            self.saved_version, self.current_version = saved.saved_version, saved.current_version
            if saved.modified_by is not None:
                self.modified_by = saved.modified_by[0]
                self.modified_at = tuple(saved.modified_by[1:])
        # the notes funcgrad.mutable adds to the error say the same for the node that failed
        # (and are all there is when no tensors were given)
        for note in getattr(err, "__notes__", ()):
            m = _SAVED_NOTE.search(note)
            if m:
                self.saved_by = m.group(1)
                if m.group(2):
                    self.saved_at = (m.group(2), int(m.group(3)))
                self.saved_version = int(m.group(4))
            m = _WRITE_NOTE.search(note)
            if m:
                self.modified_by = m.group(1)
                self.modified_at = (m.group(2), int(m.group(3)))
                self.current_version = int(m.group(4))
        if self.modified_at is not None:
            line = linecache.getline(*self.modified_at)
            new = functional_rewrite(line)
            if new is not None:
                self.rewrites.append((self.modified_at[1], line.strip(), new.strip()))
        return self

    @property
    def saved_source(self) -> str:
        return _source(*self.saved_at) if self.saved_at else ""

    @property
    def modified_source(self) -> str:
        return _source(*self.modified_at) if self.modified_at else ""

    def lines(self) -> list[str]:
        out = [f"RuntimeError: {self.message}"]
        if self.saved_by:
            at = f" at {_where(*self.saved_at)}" if self.saved_at else ""
            out.append(f"  saved by:    {self.saved_by}{at} (saved as version "
                       f"{self.saved_version})")
            if self.saved_source:
                out.append(f"               {self.saved_source}")
        if self.modified_by:
            out.append(f"  modified by: {self.modified_by} at {_where(*self.modified_at)} "
                       f"(in place, now version {self.current_version})")
            if self.modified_source:
                out.append(f"               {self.modified_source}")
        out.append("  why: the backward pass needs the tensor as it was when saved; the in-place "
                   "write changed it (its version counter moved on), so the gradient would be "
                   "wrong and PyTorch refuses.")
        out.append("  the functional model cannot fail this way: its arrays are immutable, an "
                   "update (x.at[i].set(v), x + y) makes a new array and the tape keeps the old.")
        for number, old, new in self.rewrites:
            out.append(f"  functional rewrite of line {number}: {old}  ->  {new}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    __repr__ = __str__


def _outermost(roots: list) -> list:
    """Those tensors whose grad_fn is not inside another one's graph (iterative)."""
    inside: set = set()
    for t in roots:
        stack = [c for c, _ in t.grad_fn.next_functions if c is not None]
        while stack:
            node = stack.pop()
            if id(node) in inside:
                continue
            inside.add(id(node))
            stack.extend(c for c, _ in node.next_functions if c is not None)
    out, seen = [], set()
    for t in roots:
        if id(t.grad_fn) not in inside and id(t.grad_fn) not in seen:
            seen.add(id(t.grad_fn))
            out.append(t)
    return out


# --- running a function while watching its lines -------------------------------------------
class _Event:
    __slots__ = ("file", "line", "values", "tensors")

    def __init__(self, file, line, values, tensors) -> None:
        self.file = file
        self.line = line
        self.values = values      # name -> np.ndarray copy
        self.tensors = tensors    # name -> the mutable tensor itself (versions, views)


def _snapshot(value):
    if isinstance(value, mutable.Tensor):
        return value.detach().numpy().copy()
    if isinstance(value, Array):
        return np.array(value)
    if isinstance(value, np.ndarray):
        return value.copy()
    return None


class _Watch:
    """sys.settrace over the frames of the given source files: after each executed line, a
    copy of every array or tensor local, so two runs can be compared line by line."""

    def __init__(self, files: set) -> None:
        self.files = files
        self.events: list[_Event] = []
        self.last: dict = {}

    def _record(self, frame) -> None:
        line = self.last.get(frame)
        if line is None:
            return
        values, tensors = {}, {}
        for name, value in frame.f_locals.items():
            snap = _snapshot(value)
            if snap is not None:
                values[name] = snap
                if isinstance(value, mutable.Tensor):
                    tensors[name] = (value, value._version)
        self.events.append(_Event(frame.f_code.co_filename, line, values, tensors))

    def _local(self, frame, event, arg):
        if event == "line":
            self._record(frame)
            self.last[frame] = frame.f_lineno
        elif event == "return":
            self._record(frame)
            self.last.pop(frame, None)
        return self._local

    def _global(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename in self.files:
            self.last[frame] = None
            return self._local
        return None

    def run(self, fn: Callable, *args):
        previous = sys.gettrace()
        sys.settrace(self._global)
        try:
            return fn(*args)
        finally:
            sys.settrace(previous)


# --- the report ----------------------------------------------------------------------------
class Divergence:
    """The first place the runs part: local ``name`` first holds, in the mutable run, a value
    the functional run never gave it, after line ``line`` of ``file`` (``source``);
    ``write`` = (op, file, line) of the in-place write responsible, if one was;
    ``operation``: the recorded operation that made the differing value (the in-place op,
    else the mutable tensor's ``grad_fn`` name); ``reason`` in words."""

    def __init__(self, name, file, line, reason, write=None, operation=None) -> None:
        self.name = name
        self.file = file
        self.line = line
        self.reason = reason
        self.write = write
        self.operation = operation if operation is not None else (write[0] if write else None)

    @property
    def source(self) -> str:
        return _source(self.file, self.line)

    def __str__(self) -> str:
        text = (f"first divergence: `{self.name}` after {self.file}:{self.line}   "
                f"{self.source}\n  {self.reason}")
        if self.operation is not None:
            text += f"\n  operation: {self.operation}" + (" (in place)" if self.write else "")
        if self.write is not None:
            op, path, line = self.write
            text += f"\n  in-place write: {op} at {path}:{line}"
            rewrite = functional_rewrite(linecache.getline(path, line))
            if rewrite:
                text += f"\n  functional spelling: {rewrite.strip()}"
        return text


class Report:
    """What `compare` found. ``agree``; ``value`` / ``mutable_value`` (outputs as NumPy);
    ``grads`` / ``mutable_grads`` (per input); ``differences``: rows (what, max abs,
    max rel) for the output and each input's gradient; ``divergence`` (`Divergence` or
    None); ``functional_error`` / ``mutable_error`` (the exception a run raised) and
    ``explanation`` (`InplaceExplanation` when the mutable run failed a version check)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.agree = False
        self.value = self.mutable_value = None
        self.grads: list = []
        self.mutable_grads: list = []
        self.differences: list = []
        self.divergence: Divergence | None = None
        self.functional_error: BaseException | None = None
        self.functional_error_at: tuple | None = None
        self.mutable_error_at: tuple | None = None
        self.mutable_error: BaseException | None = None
        self.explanation: InplaceExplanation | None = None

    def __bool__(self) -> bool:
        return self.agree

    def __str__(self) -> str:
        head = "agree" if self.agree else "DISAGREE"
        out = [f"compare({self.name}): the two models {head}"]
        out.append(f"  {'':14}{'functional':>24}  {'mutable':>24}  {'max abs':>9}  {'max rel':>9}")
        rows = [("output", self.value, self.mutable_value)]
        rows += [(f"grad input {i}", g, m) for i, (g, m) in
                 enumerate(_pad(self.grads, self.mutable_grads))]
        diffs = {what: (a, r) for what, a, r in self.differences}
        for what, f, m in rows:
            a, r = diffs.get(what, (None, None))
            out.append(f"  {what:14}{_short(f):>24}  {_short(m):>24}  {_num(a):>9}  {_num(r):>9}")
        if self.functional_error is not None:
            out += _failure("functional", self.functional_error, self.functional_error_at)
        if self.explanation is not None:
            out.append("mutable run failed the version check:")
            out += ["  " + line for line in self.explanation.lines()]
        elif self.mutable_error is not None:
            out += _failure("mutable", self.mutable_error, self.mutable_error_at)
        if self.divergence is not None:
            out.append(str(self.divergence))
        return "\n".join(out)

    __repr__ = __str__


def _failure(model: str, err: BaseException, at: tuple | None) -> list:
    """A failed run's lines: the error, where it was raised, and the line's functional spelling."""
    lines = [f"{model} run failed: {type(err).__name__}: {err}"]
    if at is not None:
        path, line = at
        source = linecache.getline(path, line)
        lines.append(f"  at {path}:{line}   {source.strip()}")
        rewrite = functional_rewrite(source)
        if rewrite is not None:
            lines.append(f"  functional spelling: {rewrite.strip()}")
    return lines


def _pad(a: list, b: list) -> list:
    n = max(len(a), len(b))
    return [(a[i] if i < len(a) else None, b[i] if i < len(b) else None) for i in range(n)]


def _short(v) -> str:
    if v is None:
        return "-"
    v = np.asarray(v)
    text = np.array2string(v, precision=4, separator=",", threshold=4, edgeitems=1,
                           suppress_small=True).replace("\n", "")
    return text if len(text) <= 24 else text[:21] + "..."


def _num(v) -> str:
    return "-" if v is None else f"{v:.3g}"


def _differences(a, b) -> tuple:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf"), float("inf")
    if a.size == 0:
        return 0.0, 0.0
    diff = np.abs(a - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.maximum(np.abs(a), np.abs(b)))
    return float(np.nanmax(diff)), float(np.nanmax(rel))


def _differentiable(x) -> bool:
    if isinstance(x, (bool, int)) or x is None:
        return False
    try:
        return np.issubdtype(np.asarray(x).dtype, np.floating)
    except Exception:
        return False


def _takes_namespace(fn: Callable, count: int) -> bool:
    """Whether `fn` wants the array namespace first: it takes one more argument than given."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return bool(positional) and positional[0].name == "xp"
    return len(positional) == count + 1


def _scalar(out, xp):
    return out if np.ndim(out) == 0 else xp.sum(out)


def compare(fn: Callable, *args: Any, rtol: float = 1e-6, atol: float = 1e-9) -> Report:
    """Run one computation in both models and report where they agree.

    ``compare(fn, *inputs)``: ``fn(xp, *inputs)`` runs with ``xp = funcgrad.numpy`` under
    `value_and_grad` and with ``xp = funcgrad.mutable`` on float64 leaf tensors
    (``requires_grad=True``) with ``.backward()``. ``compare(functional_fn, mutable_fn,
    *inputs)`` runs two spellings (each called with ``xp`` first if it takes one more
    argument than there are inputs). A non-scalar output is summed before differentiating.
    Gradients are taken with respect to the floating-point inputs. Errors in either run,
    including the mutable run's in-place version error, are reported, not raised.

    >>> import numpy as np
    >>> r = compare(lambda xp, x: (xp.sin(x) * x).sum(), np.array([0.5, 1.0]))
    >>> r.agree, [round(g, 6) for g in r.grads[0].tolist()]
    (True, [0.918217, 1.381773])
    """
    if args and callable(args[0]) and not isinstance(args[0], (np.ndarray, Array)):
        functional_fn, mutable_fn, inputs = fn, args[0], args[1:]
        name = f"{getattr(fn, '__name__', 'fn')}, {getattr(mutable_fn, '__name__', 'fn')}"
    else:
        functional_fn = mutable_fn = fn
        inputs = args
        name = getattr(fn, "__name__", "fn")
    report = Report(name)
    wrt = [i for i, x in enumerate(inputs) if _differentiable(x)]
    arrays = [np.array(x, dtype=np.float64) if i in wrt else x for i, x in enumerate(inputs)]
    files = {getattr(getattr(f, "__code__", None), "co_filename", None)
             for f in (functional_fn, mutable_fn)} - {None}

    def bind(f, xp):
        if _takes_namespace(f, len(inputs)):
            return lambda *xs: f(xp, *xs)
        return f

    f_run, m_run = bind(functional_fn, fnp), bind(mutable_fn, mutable)

    # functional: once watched (plain arrays, values per line), once under value_and_grad
    watch_f = _Watch(files)
    try:
        out = watch_f.run(f_run, *[fnp.asarray(x) if i in wrt else x
                                   for i, x in enumerate(arrays)])
        report.value = np.array(out)
        if wrt:
            def scalar_fn(*xs):
                return _scalar(f_run(*xs), fnp)
            _, grads = value_and_grad(scalar_fn, argnums=tuple(wrt))(*arrays)
            report.grads = [np.array(g) for g in grads]
    except Exception as err:  # reported, not raised
        report.functional_error = err
        report.functional_error_at = _user_line(err, files)

    # mutable: leaf tensors, watched, then backward
    leaves = [mutable.tensor(x, requires_grad=True) if i in wrt else x
              for i, x in enumerate(arrays)]
    watch_m = _Watch(files)
    out = None
    try:
        out = watch_m.run(m_run, *leaves)
        report.mutable_value = _snapshot(out) if _snapshot(out) is not None else np.array(out)
        if wrt:
            loss = out if out.ndim == 0 else out.sum()
            loss.backward()
            report.mutable_grads = [np.zeros_like(arrays[i]) if leaves[i].grad is None
                                    else leaves[i].grad.detach().numpy().copy() for i in wrt]
    except Exception as err:  # reported, not raised
        report.mutable_error = err
        report.mutable_error_at = _user_line(err, files)
        if is_version_error(err):
            names = {}
            for event in watch_m.events:
                names.update({k: t for k, (t, _) in event.tensors.items()})
            if isinstance(out, mutable.Tensor):
                names["output"] = out
            report.explanation = InplaceExplanation.from_error(err, names)

    if report.value is not None and report.mutable_value is not None:
        report.differences.append(("output", *_differences(report.value, report.mutable_value)))
    for i, (g, m) in enumerate(_pad(report.grads, report.mutable_grads)):
        if g is not None and m is not None:
            report.differences.append((f"grad input {i}", *_differences(g, m)))
    close = all(_close(report, what, rtol, atol) for what, _, _ in report.differences)
    report.agree = (report.functional_error is None and report.mutable_error is None and close
                    and len(report.grads) == len(report.mutable_grads))
    if not report.agree:
        report.divergence = _first_divergence(watch_f.events, watch_m.events, rtol, atol)
    return report


def _user_line(err: BaseException, files: set) -> tuple | None:
    """(file, line) of the innermost traceback frame in the compared functions' files."""
    found = None
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in files:
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _close(report: Report, what: str, rtol: float, atol: float) -> bool:
    if what == "output":
        a, b = report.value, report.mutable_value
    else:
        i = int(what.rsplit(" ", 1)[1])
        a, b = report.grads[i], report.mutable_grads[i]
    return _allclose(np.asarray(a), np.asarray(b), rtol, atol)


def _allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """np.allclose, with the tolerance widened to single precision when either side is
    float32 or narrower (a tensor made by torch.ones is float32 even beside float64 inputs)."""
    if a.shape != b.shape:
        return False
    if any(x.dtype.kind in "fc" and x.dtype.itemsize <= (4 if x.dtype.kind == "f" else 8)
           for x in (a, b)):
        rtol, atol = max(rtol, 1e-4), max(atol, 1e-6)
    return bool(np.allclose(a.astype(np.complex128 if "c" in a.dtype.kind + b.dtype.kind
                                      else np.float64),
                            b, rtol=rtol, atol=atol, equal_nan=True))


def _first_divergence(functional: list, mutable_events: list, rtol, atol) -> Divergence | None:
    """The first line after which a mutable local holds a value the same-named functional
    local never held, and why."""
    seen: dict = {}
    for event in functional:
        for name, value in event.values.items():
            seen.setdefault(name, []).append(value)

    def known(name, value) -> bool:
        return any(_allclose(v, value, rtol, atol) for v in seen[name])

    previous: dict = {}
    for event in mutable_events:
        for name, value in event.values.items():
            if name in seen and not known(name, value):
                return _why(name, event, previous)
        previous.update(event.tensors)
    return None


def _why(name: str, event: _Event, previous: dict) -> Divergence:
    tensor, version = event.tensors.get(name, (None, 0))
    before = previous.get(name)
    write = last_write_of(tensor)
    source = _source(event.file, event.line)
    if tensor is not None and before is not None and before[0] is tensor and version > before[1]:
        aliases = [other for other, (t, _) in event.tensors.items()
                   if other != name and _shares_storage(t, tensor)]
        op = write[0] if write else "an in-place op"
        if aliases and not re.match(rf"\s*{re.escape(name)}\b", source):
            via = ", ".join(f"`{a}`" for a in aliases)
            reason = (f"in the mutable run an in-place write ({op}) through a view ({via} shares "
                      f"`{name}`'s storage) changed `{name}` (version {before[1]} -> {version}); "
                      f"the functional run kept `{name}`: its arrays are immutable, an update "
                      f"makes a new array and leaves the old one as it was")
        else:
            reason = (f"in the mutable run `{name}` was modified in place ({op}, version "
                      f"{before[1]} -> {version}); the functional run kept `{name}`: its "
                      f"arrays are immutable, an update makes a new array")
        return Divergence(name, event.file, event.line, reason, write)
    reason = (f"`{name}` was computed to a different value on this line in the two runs "
              f"(no in-place write to it was recorded)")
    grad_fn = getattr(tensor, "grad_fn", None)
    operation = grad_fn.name() if grad_fn is not None else None
    return Divergence(name, event.file, event.line, reason, None, operation)


def last_write_of(tensor) -> tuple | None:
    return last_write(tensor) if tensor is not None else None


def _shares_storage(a, b) -> bool:
    base_a = a._base if a._base is not None else a
    base_b = b._base if b._base is not None else b
    return base_a is base_b
