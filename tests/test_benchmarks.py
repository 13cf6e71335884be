"""benchmarks/workloads.py: every funcgrad system of every workload passes the harness's
float64 check at the quick sizes, and the check itself rejects a wrong gradient. (The speed
and memory figures live in benchmarks/run.py, never in tests.)"""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _workloads():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("workloads", ROOT / "benchmarks" / "workloads.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["workloads"] = module  # (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


W = _workloads()
CELLS = [(w.key, system) for w in W.WORKLOADS for system in (W.NUMPY, W.FG, W.FG_JIT, W.FM)
         if system in w.systems]


@pytest.mark.parametrize("key,system", CELLS, ids=[f"{k}-{s}" for k, s in CELLS])
def test_system_passes_the_float64_check(key, system):
    workload = W.BY_KEY[key]
    ctx = workload.setup(True)
    if key == "W4":
        ctx["steps"] = 200
    step = workload.systems[system](ctx)
    expected = workload.reference(getattr(step, "ctx", ctx))
    assert W.check(workload, step(), expected) is None
    if system == W.FG_JIT:  # the replay (a torch-like SGD step moves its parameters)
        assert W.check(workload, step(), expected) is None


def test_check_rejects_a_wrong_gradient_and_a_wrong_shape():
    workload = W.BY_KEY["W1"]
    ctx = workload.setup(True)
    value, (g,) = workload.reference(ctx)
    assert W.check(workload, (value, (g,)), (value, (g,))) is None
    assert "differs" in W.check(workload, (value, (g * 1.01 + 1e-6,)), (value, (g,)))
    assert "shape" in W.check(workload, (value, (g[:2],)), (value, (g,)))
