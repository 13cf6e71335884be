"""The funcgrad command: demo, explain, tape; --help everywhere; exit statuses; one-line
mistakes."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from funcgrad._cli import main
from funcgrad._cli.explain import TorchAlias

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args, cwd=ROOT):
    """`python -m funcgrad ARGS` in a fresh interpreter, with this checkout importable."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "funcgrad", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


INPLACE = """\
import torch

a = torch.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
print(b._version)
loss = (b * b).mean()
b[0] = 1000.0
print(b._version)
loss.backward()
"""


def test_python_dash_m_explains_an_inplace_script(tmp_path):
    script = tmp_path / "inplace.py"
    script.write_text(INPLACE)
    html, dot = tmp_path / "report.html", tmp_path / "graph.dot"
    result = run("explain", str(script), "--html", str(html), "--dot", str(dot))
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert out.startswith("0\n1\n")  # the script's own prints come first
    assert "modified by an inplace operation: [torch.FloatTensor [2]]" in out
    assert f"saved by:    MulBackward0 at {script}:6 (saved as version 0)" in out
    assert f"modified by: fill_ at {script}:7 (in place, now version 1)" in out
    assert "loss = (b * b).mean()" in out and "b[0] = 1000.0" in out
    assert "functional rewrite of line 7: b[0] = 1000.0  ->  b = b.at[0].set(1000.0)" in out
    assert "╳── AddBackward0" in out and "Traceback" not in result.stderr
    page = html.read_text()
    assert "<svg" in page and "MulBackward0" in page and "fill_" in page
    assert 'class="modified" id="line7"' in page and 'class="saved" id="line6"' in page
    assert "color=red, style=dashed" in dot.read_text()


def test_explain_success_shows_graph_and_leaf_gradients(tmp_path, capsys):
    script = tmp_path / "chain.py"
    script.write_text("import torch\nimport torch.nn as nn\nimport torch.autograd\n"
                      "import torch.nn.functional as F\n"
                      "x = nn.Parameter(torch.tensor(3.0))\ny1 = x + 1\ny2 = 2 * x\n"
                      "loss = (y1 - y2) ** 2 + F.relu(x)\nloss.backward()\n")
    assert main(["explain", str(script)]) == 0
    out = capsys.readouterr().out
    assert "ran without an error" in out and "AddBackward0  [loss" in out
    assert "x.grad = tensor(5.)" in out  # 2 (y1 - y2) (1 - 2) + relu'(x) at x = 3


def test_explain_other_autograd_errors(tmp_path, capsys):
    script = tmp_path / "twice.py"
    script.write_text("import torch\nw = torch.tensor(2.0, requires_grad=True)\n"
                      "loss = (w * w).exp()\nloss.backward()\nloss.backward()\n")
    assert main(["explain", str(script)]) == 1
    out = capsys.readouterr().out
    assert "Trying to backward through the graph a second time" in out
    assert f"at {script}:5" in out and "retain_graph=True" in out
    script.write_text("import torch\na = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                      "a[:] = 0\n")
    assert main(["explain", str(script)]) == 1
    out = capsys.readouterr().out
    assert "a leaf Variable that requires grad" in out and "a = a.at[:].set(0)" in out


def test_torch_alias_is_undone():
    before = sys.modules.get("torch")
    with TorchAlias():
        import torch
        import torch.autograd
        import funcgrad.mutable
        assert torch is funcgrad.mutable and torch.autograd is funcgrad.mutable.autograd
    assert sys.modules.get("torch") is before


def test_demo_runs_every_seed_scenario(capsys):
    assert main(["demo", "--width", "400"]) == 0  # wide: no cell wraps
    out = capsys.readouterr().out
    assert "w1.grad 21; w2.grad 6; w3.grad 10" in out          # seed 002's numbers
    assert "a.grad [[12]]; d.grad 14" in out                  # seed 000's recurrence
    assert out.count("agree: values and gradients equal") == 6
    assert "saved by:    MulBackward0 at line" in out and "b = b.at[0].set(1000.0)" in out
    assert "MvBackward0" in out and "retain_graph" in out
    assert out.rstrip().endswith("every scenario came out as the seeds say.")
    assert main(["demo", "--source"]) == 0
    assert "def saved_then_written_mutable(a):" in capsys.readouterr().out


MODEL = """\
import funcgrad.numpy as fnp


def loss(w, x):
    return fnp.sum(fnp.tanh(x @ w) ** 2)
"""


def test_tape_of_a_module_function(tmp_path, capsys, monkeypatch):
    (tmp_path / "model.py").write_text(MODEL)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    html = tmp_path / "tape.html"
    assert main(["tape", "model:loss", "--shapes", "3", "4,3", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert "tape of loss" in out and "in  %1 : float64[4,3]" in out
    assert [p in out for p in ("matmul", "tanh", "sum")] == [True] * 3
    assert "<svg" in html.read_text() and "= tanh" in html.read_text()
    assert main(["tape", str(tmp_path / "model.py") + ":loss", "--shapes", "3", "4,3",
                 "--grad"]) == 0
    assert "backward pass" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["explain", "no/such/script.py"], "no such file: no/such/script.py"),
    (["tape", "model"], "expected MODULE:FUNCTION"),
    (["tape", "no_such_module_xyz:f", "--shapes", "3"], "cannot import 'no_such_module_xyz'"),
    (["tape", "model:nope", "--shapes", "3"], "'model' has no function 'nope' (it has: loss)"),
    (["tape", "model:loss", "--shapes", "3", "4,a"], "bad shape '4,a'"),
    (["tape", "model:loss", "--shapes", "3"], "loss(w, x) takes 2 arguments; --shapes gave 1"),
    (["tape", "model:loss", "--shapes", "3", "4,2"], "loss(float64[3], float64[4,2]) failed"),
    (["explain"], "the following arguments are required: SCRIPT.py"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_mistakes_are_one_line_with_status_2(tmp_path, args, message):
    (tmp_path / "model.py").write_text(MODEL)
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("command", [[], ["demo"], ["explain"], ["tape"]])
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: funcgrad") and "exit status" in out


def test_console_script_is_declared():
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    assert '[project.scripts]\nfuncgrad = "funcgrad._cli:main"' in text
