"""Every example in examples/ runs as a script, and what it prints is checked.

Each example runs the same computation in both models; these tests hold the printed values
to closed forms, to NumPy (least squares), and the two models to each other.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run(name: str, *args: str, cwd: Path | None = None) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True,
                          text=True, env=env, cwd=cwd or ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def loss_table(out: str) -> list[tuple[int, float, float]]:
    return [(int(m[1]), float(m[2]), float(m[3]))
            for m in re.finditer(r"^\s*(\d+)\s+([-\d.e]+)\s+([-\d.e]+)$", out, re.M)]


def after(out: str, label: str) -> str:
    match = re.search(re.escape(label) + r"\s*(.*)$", out, re.M)
    assert match, f"{label!r} not printed:\n{out}"
    return match[1].strip()


def test_at_least_ten_examples_each_tested() -> None:
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert len(scripts) >= 10
    tested = set(re.findall(r'"([a-z_]+\.py)"', Path(__file__).read_text()))
    assert set(scripts) <= tested, f"examples without a test: {set(scripts) - tested}"


def test_seed_views_inplace() -> None:
    out = run("seed_views_inplace.py")
    first = out.split("2.")[0]
    assert "RuntimeError: one of the variables needed for gradient computation has been modified" in first
    assert "repaired mutable program agrees: True" in out
    assert "functional: agrees: True" in out
    # d loss/d d of sum(d @ row) is the row repeated: every row of the gradient sums to sum(row).
    sums = [float(v) for v in re.findall(r"[-\d.]+", after(out, "d loss/d d row sums"))]
    assert len(sums) == 3 and np.allclose(sums, sums[0])
    # the RNN-like program of the post: loss = a d + a d^2 at a = 2, d = 3
    for model in ("mutable:", "functional:"):
        line = [l for l in out.splitlines() if l.strip().startswith(model) and "d.grad =" in l][-1]
        assert "d.grad = 14.0" in line and "a.grad = [[12.0]]" in line


def test_seed_dynamic_graph() -> None:
    out = run("seed_dynamic_graph.py")
    assert "second backward -> RuntimeError: Trying to backward through the graph a second time" in out
    assert "grad called twice, same result: True ; agrees with w.grad: True" in out
    # MyReLU on X = [[-1,-1],[1,1]]: only the second row passes, y_hat = [[0, 7]], Y = [[2, 3]]
    assert out.count("w.grad = [[4.5, 4.5]]  b.grad = [[4.5]]") == 2
    assert "mutable:    x.grad = 4.0" in out and "functional: x.grad = 4.0" in out
    assert "hook y1 grad: tensor(-4.)" in out and "hook y2 grad: tensor(4.)" in out
    assert "loss.grad = tensor(1.)  y1.grad = None  x.grad = tensor(4.)" in out
    assert "d loss/d y1 = -4.0  d loss/d y2 = 4.0" in out


def test_seed_leaf_hooks_versions() -> None:
    out = run("seed_leaf_hooks_versions.py")
    assert "tensor(7.3891, grad_fn=<ExpBackward0>)" in out
    assert "a.grad = 7.3891  functional: 7.3891" in out
    assert "loss = 30.0  w1.grad = 21.0  l4.grad[0,0] = 0.25  l1.grad[0,0] = 5.25" in out
    assert "hooks fired in order: loss -> l4 -> l1" in out
    # d/dw of mean((w1 + w2) * w1 * w3) at (2, 3, 3): (2 w1 + w2) w3, w1 w3, (w1 + w2) w1
    assert "functional: w1.grad = 21.0  w2.grad = 6.0  w3.grad = 10.0" in out
    assert "mutable:    w2.grad = 6.0  w3.grad = 10.0" in out
    assert "b._version 0 -> 1" in out
    assert "is at version 1" in out and "saved by: MulBackward0" in out
    assert "functional: a.grad = [3.0, 5.0]" in out
    assert "a leaf Variable that requires grad is being used in an in-place operation." in out


def test_my_relu() -> None:
    out = run("my_relu.py")
    x = np.array(ast.literal_eval(after(out, "input:")))
    for label in ("functional gradient:", "mutable gradient:"):
        assert np.allclose(ast.literal_eval(after(out, label)), 3 * np.maximum(x, 0) ** 2)
    for label in ("functional second derivative:", "mutable second derivative:"):
        assert np.allclose(ast.literal_eval(after(out, label)), 6 * np.maximum(x, 0))
    assert "agree: True" in out


@pytest.mark.parametrize("name", ["linear_regression.py", "logistic_regression.py",
                                  "mlp_classifier.py", "rnn_unrolled.py"])
def test_training_both_ways_identical(name: str) -> None:
    out = run(name)
    table = loss_table(out)
    assert len(table) >= 5
    for _, functional, mutable in table:
        assert functional == pytest.approx(mutable, rel=1e-12, abs=1e-15)
    assert table[-1][1] < table[0][1] / 2            # it trained
    assert float(after(out, "largest difference over all steps:")) <= 1e-12


def test_nn_and_optim_matches_its_functional_twin() -> None:
    """float32 both ways: the two spell the same sums in different orders."""
    table = loss_table(run("nn_and_optim.py"))
    assert len(table) == 5
    for _, mutable, functional in table:
        assert mutable == pytest.approx(functional, rel=1e-5)
    assert table[-1][1] < table[0][1] / 4


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_nn_and_optim_is_pytorchs_program() -> None:
    """The mutable half, run by real PyTorch, prints the same losses (same seed, same init)."""
    source = (EXAMPLES / "nn_and_optim.py").read_text()
    source = source.replace("import funcgrad.mutable as torch", "import torch")
    source = source.replace("from funcgrad.mutable import nn, optim", "from torch import nn, optim")
    namespace: dict = {"__name__": "not_main"}
    exec(compile(source, "nn_and_optim_torch.py", "exec"), namespace)
    theirs, _ = namespace["train_mutable"]()
    ours = loss_table(run("nn_and_optim.py"))
    for step, mutable, _ in ours:
        assert mutable == pytest.approx(theirs[step], rel=1e-5)


def test_linear_regression_reaches_least_squares() -> None:
    out = run("linear_regression.py")
    solution = ast.literal_eval(after(out, "least squares:"))
    assert np.allclose(ast.literal_eval(after(out, "functional weights:")), solution, atol=1e-5)
    assert np.allclose(ast.literal_eval(after(out, "mutable weights:")), solution, atol=1e-5)


def test_classifiers_classify() -> None:
    for name, least in (("logistic_regression.py", 0.95), ("mlp_classifier.py", 0.9)):
        accuracies = [float(v) for v in re.findall(r"(?:functional|mutable) ([\d.]+)",
                                                   after(run(name), "training accuracy:"))]
        assert len(accuracies) == 2 and accuracies[0] == accuracies[1] >= least


def test_per_example_gradients() -> None:
    out = run("per_example_gradients.py")
    assert "per-example gradients: (128, 10)" in out
    assert "vmap(grad) equals the loop of backward calls: True" in out
    assert "both equal the closed form: True" in out
    assert "their mean equals grad of the mean loss: True" in out


def test_newton_hessian() -> None:
    out = run("newton_hessian.py")
    rows = re.findall(r"^\s*\d+\s+\[\s*([-\d.]+),\s*([-\d.]+)\]\s+\[\s*([-\d.]+),\s*([-\d.]+)\]", out, re.M)
    assert len(rows) == 9
    assert [float(v) for v in rows[-1]] == pytest.approx([1.0] * 4, abs=1e-9)
    assert float(after(out, "largest difference:")) < 1e-9
    # the Rosenbrock Hessian at (1, 1): [[1200 x^2 - 400 y + 2, -400 x], [-400 x, 200]]
    assert ast.literal_eval(after(out, "Hessian at the minimum:")) == [[802.0, -400.0], [-400.0, 200.0]]


def test_loss_curve(tmp_path: Path) -> None:
    out = run("loss_curve.py", str(tmp_path / "curve.png"), cwd=tmp_path)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in out
        return
    assert "300 steps, curves identical: True" in out
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_inplace_vs_functional() -> None:
    out = run("inplace_vs_functional.py")
    assert "same: True" in out
    assert "one of the variables needed for gradient computation has been modified" in out


def test_demo() -> None:
    out = run("demo.py")
    assert "d2/dx2 tanh at 0.3 (grad of grad):" in out
    # tanh'' = -2 tanh sech^2
    value = float(after(out, "d2/dx2 tanh at 0.3 (grad of grad):"))
    assert value == pytest.approx(-2 * np.tanh(0.3) / np.cosh(0.3) ** 2, rel=1e-6)
