"""Every benchmark in one run, printed as one table of figures and ratios.

Run: python benchmarks/run.py  (peers such as PyTorch, HIPS autograd, JAX join when installed)
"""
from __future__ import annotations

import importlib
import os
import platform
import sys

import numpy as np

SECTIONS = ["bench_core", "bench_transforms", "bench_mutable"]


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{os.cpu_count()} cores, {platform.machine()}")
    rows = []
    for name in SECTIONS:
        try:
            module = importlib.import_module(name)
        except ImportError as err:
            rows.append((name, "(not run)", f"cannot import: {err}"))
            continue
        rows.extend(module.run())
    widths = [max(len(str(r[i])) for r in rows + [("workload", "system", "result")]) for i in range(3)]
    header = ("workload", "system", "result")
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(c).ljust(w) for c, w in zip(row, widths)))


if __name__ == "__main__":
    main()
