"""``funcgrad demo``: the seeds' scenarios run in both models, side by side in one table."""
from __future__ import annotations

import shutil
import sys
import textwrap
import time

import numpy as np

from ..compare import Report, compare
from . import seeds

__all__ = ["run_demo"]


class Progress:
    """A one-line counter on stderr, shown once a run has taken longer than `after` seconds
    (and only on a terminal, where it can be rubbed out again)."""

    def __init__(self, total: int, after: float = 1.0, stream=None) -> None:
        self.total = total
        self.after = after
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.shown = False

    def step(self, i: int, what: str) -> None:
        if time.monotonic() - self.start < self.after or not self.stream.isatty():
            return
        self.stream.write(f"\r\033[K  [{i}/{self.total}] {what}")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _fmt(value) -> str:
    if value is None:
        return "-"
    a = np.round(np.asarray(value, dtype=np.float64), 4) + 0.0
    if a.ndim == 0:
        return f"{a.item():g}"
    return np.array2string(a, separator=" ", formatter={"float_kind": lambda v: f"{v:g}"},
                           max_line_width=1000).replace("\n", "")


def _side(value, grads, names, error) -> str:
    if error is not None and value is None:
        return f"fails: {type(error).__name__}"
    text = f"loss {_fmt(value)};"
    for name, g in zip(names, grads):
        text += f" {name}.grad {_fmt(g)};"
    if error is not None:
        text += f" then fails: {type(error).__name__}"
    return text.rstrip(";")


def _verdict(report: Report, expect_fail: bool, why_not: str) -> tuple[str, bool]:
    """The verdict cell, and whether the scenario came out as the seeds say."""
    if report.agree:
        return "agree: values and gradients equal", not expect_fail
    if report.mutable_error is not None and report.functional_error is None:
        err = report.mutable_error
        if report.explanation is not None:
            e = report.explanation
            what = (f"mutable fails: version check, saved by {e.saved_by} "
                    f"(line {e.saved_at[1] if e.saved_at else '?'}), written by "
                    f"{e.modified_by} (line {e.modified_at[1] if e.modified_at else '?'})")
        else:
            what = f"mutable fails: {_first_sentence(str(err))}"
        return f"{what}. functional cannot: {why_not}", expect_fail
    return "DISAGREE: " + str(report).splitlines()[0], False


def _first_sentence(text: str) -> str:
    first = text.splitlines()[0] if text else ""
    cut = first.find(". ")
    return (first[:cut] if cut > 0 else first).rstrip(".")


def _table(rows: list, widths: list) -> str:
    lines = []
    sep = "  "
    for row in rows:
        cells = [textwrap.wrap(str(c), w) or [""] for c, w in zip(row, widths)]
        for k in range(max(len(c) for c in cells)):
            lines.append(sep.join((c[k] if k < len(c) else "").ljust(w)
                                  for c, w in zip(cells, widths)).rstrip())
        lines.append("")
    return "\n".join(lines)


def run_demo(out=None, width: int | None = None) -> int:
    """Run every scenario, print the table and the explanations; 0 when every scenario came
    out as the seeds say (agreeing, or the mutable run failing where PyTorch fails)."""
    out = out or sys.stdout
    width = width or max(100, min(160, shutil.get_terminal_size((120, 24)).columns))
    namespace = seeds.load()
    progress = Progress(len(seeds.SCENARIOS))
    rows = [("#", "scenario", "functional: funcgrad.numpy, grad",
             "mutable: funcgrad.mutable as torch, .backward()", "verdict")]
    failures = []
    as_expected = True
    for i, (title, seed, f_name, m_name, inputs, expect_fail, why_not) in enumerate(
            seeds.SCENARIOS, 1):
        progress.step(i, title)
        functional = namespace[f_name]
        arrays = [np.asarray(x, dtype=np.float64) for x in inputs]
        if m_name is None:
            report = compare(functional, *arrays)
        else:
            report = compare(functional, namespace[m_name], *arrays)
        code = (m_name and namespace[m_name] or functional).__code__
        names = list(code.co_varnames[1 if m_name is None else 0:code.co_argcount])
        verdict, ok = _verdict(report, expect_fail, why_not)
        as_expected &= ok
        rows.append((str(i), f"{title} ({seed})",
                     _side(report.value, report.grads, names, report.functional_error),
                     _side(report.mutable_value, report.mutable_grads, names,
                           report.mutable_error),
                     verdict))
        if report.mutable_error is not None:
            failures.append((i, title, report, why_not))
    progress.done()
    fixed = 3 + 2 * 4
    rest = width - fixed
    widths = [3, int(rest * 0.2), int(rest * 0.22), int(rest * 0.22)]
    widths.append(rest - sum(widths[1:]))
    print("funcgrad demo: the seeds' scenarios, each run both ways (inputs float64; the "
          "scenarios' code: `funcgrad demo --source`)\n", file=out)
    print(_table(rows, widths), file=out)
    for i, title, report, why_not in failures:
        print(f"-- {i}. {title}: where the mutable run fails, and why the functional one "
              "cannot --", file=out)
        if report.explanation is not None:
            for line in report.explanation.lines():
                print("  " + line.replace(seeds.FILENAME + ":", "line "), file=out)
        else:
            print(f"  {type(report.mutable_error).__name__}: {report.mutable_error}", file=out)
            print(f"  the functional model cannot fail this way: {why_not}", file=out)
        print(file=out)
    summary = ("every scenario came out as the seeds say" if as_expected else
               "SOME SCENARIOS DID NOT COME OUT AS THE SEEDS SAY (see the verdicts above)")
    print(f"funcgrad demo: {summary}.", file=out)
    return 0 if as_expected else 1
