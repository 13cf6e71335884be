"""funcgrad.viz: the mutable graph as text and DOT, and the functional tape."""
from __future__ import annotations

import pytest

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp
from funcgrad.viz import graph, make_tape, to_dot


def seed_loss(module):
    w1 = module.tensor(2.0, requires_grad=True)
    w2 = module.tensor(3.0, requires_grad=True)
    l1 = module.ones(2, 2) * w1
    return ((l1 + w2) * (l1 * 3.0)).mean()


def test_seed_graph_shows_every_node_once():
    text = graph(seed_loss(torch))
    assert text.splitlines()[0] == "MeanBackward0"
    # l1's MulBackward0 is reached twice; the second time it is not expanded again.
    assert text.count("[seen above]") == 1 and text.count("AccumulateGrad") == 2
    dot = to_dot(seed_loss(torch))
    assert dot.startswith("digraph grad_fn {") and dot.count('label="AccumulateGrad') == 2
    assert dot.count("->") == 7


def test_same_drawing_as_real_torch():
    real = pytest.importorskip("torch", reason="the oracle (torch 2.13.0 CPU) is not installed")
    assert graph(seed_loss(torch)) == graph(seed_loss(real))
    assert to_dot(seed_loss(torch)) == to_dot(seed_loss(real))


def test_deep_graph_without_recursion():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    assert len(graph(y).splitlines()) == 5001
    assert to_dot(y).count("->") == 5000


def test_leaf_and_wrong_input_errors():
    with pytest.raises(ValueError, match="no grad_fn"):
        graph(torch.tensor(1.0, requires_grad=True))
    with pytest.raises(TypeError, match="make_tape"):
        graph(object())


def test_make_tape_is_reexported():
    tape = make_tape(fg.grad(lambda x: fnp.sum(fnp.sin(x))))(fnp.ones(2))
    assert "sin" in str(tape) and "backward pass" in str(tape)


# --- the annotated graph, the tape picture, pages, and a real browser ---------------------
import os
import shutil
import subprocess

import numpy as np

from funcgrad.viz import draw_tape, html_page, mutable_graph, side_by_side


def seed_inplace():
    """Seed 002: b is saved by b * b, then written in place."""
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    return a, b, loss


def test_graph_marks_the_saved_versions_and_the_broken_edge():
    a, b, loss = seed_inplace()
    g = mutable_graph(loss, b, names={"a": a, "b": b, "loss": loss})
    names = [n.name for n in g.nodes.values()]
    assert names[:3] == ["MeanBackward0", "MulBackward0", "AddBackward0"]
    (mul,) = [n for n in g.nodes.values() if n.name == "MulBackward0"]
    assert [(s.role, s.saved_version, s.current_version, s.stale) for s in mul.saved] == [
        ("self", 0, 1, True), ("other", 0, 1, True)]
    assert mul.where[1] == seed_inplace.__code__.co_firstlineno + 4  # the line of b * b
    assert mul.saved[0].modified_by[0] == "fill_"
    assert mul.saved[0].modified_by[2] == seed_inplace.__code__.co_firstlineno + 5
    broken = [(g.nodes[p].name, g.nodes[c].name) for p, c, bad in g.edges if bad]
    assert broken == [("MulBackward0", "AddBackward0")] * 2
    (copy,) = [n for n in g.nodes.values() if "CopySlices" in n.name]
    assert copy.kind == "inplace" and copy.tensors == ["b v1"] and copy.inplace[0] == "fill_"
    svg = g.svg()
    assert svg.count('class="edge broken"') == 2 and "✗ version conflict" in svg
    assert "saved self: v0, now v1 ✗" in svg and "✗ written by fill_ at test_viz.py:" in svg
    dot = g.dot()
    assert dot.count("style=dashed") == 2 and "digraph" in dot
    assert "╳── AddBackward0" in g.text()


def test_graph_of_a_clean_run_has_no_conflict_and_names_views():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    row = y[0:2]
    out = (row * row).sum()
    g = mutable_graph(out, names={"x": x, "y": y, "row": row, "out": out})
    assert g.conflicts() == [] and not any(bad for _, _, bad in g.edges)
    (view,) = [n for n in g.nodes.values() if n.kind == "view"]
    assert view.name == "SliceBackward0" and view.tensors == ["row (view of y)"]
    leaf = [n for n in g.nodes.values() if n.kind == "leaf"]
    assert leaf[0].tensors == ["x"] and leaf[0].leaf_type == "float32[3]"


def test_after_backward_the_buffers_show_as_freed():
    x = torch.tensor(3.0, requires_grad=True)
    loss = (x * x).exp()
    loss.backward()
    g = mutable_graph(loss)
    assert all(n.freed for n in g.nodes.values() if n.name in ("MulBackward0", "ExpBackward0"))


def test_svg_layout_keeps_boxes_apart_and_deep_graphs_iterative():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    svg = mutable_graph(y).svg()
    assert svg.count('class="node"') == 3001 and svg.count('class="edge"') == 3000
    a, b, loss = seed_inplace()
    from funcgrad.viz import _Box, _layout
    boxes = {i: _Box([f"box {i}"], "#fff") for i in range(5)}
    edges = [(0, 1, False), (0, 2, False), (1, 3, False), (2, 3, False), (0, 3, False),
             (3, 4, False)]
    _layout(boxes, edges)
    ys = [boxes[i].y for i in range(5)]
    assert ys[0] < ys[1] == ys[2] < ys[3] < ys[4]
    assert boxes[1].x + boxes[1].w <= boxes[2].x or boxes[2].x + boxes[2].w <= boxes[1].x


def test_tape_drawing_has_an_edge_per_read():
    tape = fg.make_tape(lambda x, y: fnp.sum(fnp.sin(x) * y))(np.ones(3), np.ones(3))
    d = draw_tape(tape)
    assert d.dot().count("->") == 4  # sin<-x, mul<-sin, mul<-y, sum<-mul
    svg = d.svg()
    assert all(f"= {p}" in svg for p in ("sin", "multiply", "sum")) and "output" in svg
    back = draw_tape(fg.make_tape(fg.grad(lambda x: fnp.sum(fnp.sin(x))))(np.ones(2))).svg()
    assert "backward pass" in back and "cos" in back
    with pytest.raises(TypeError, match="make_tape"):
        draw_tape("not a tape")


def test_side_by_side_records_one_computation_both_ways():
    both = side_by_side(lambda xp, x: (xp.exp(x) * x).sum(), np.array([0.5, 1.0]))
    assert [n.name for n in both.graph.nodes.values()][:3] == [
        "SumBackward0", "MulBackward0", "ExpBackward0"]
    assert both.tape.primitives() == ["exp", "multiply", "sum"]
    page = both.html()
    assert page.count("<svg") == 2 and "http" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    assert both._repr_html_() == page and "<svg" in both.graph._repr_svg_()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or (
    "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def render(path, tmp_path, *extra) -> str:
    """The DOM chromium builds from the page (a fresh profile each time)."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does this)")
    profile = tmp_path / f"profile{len(list(tmp_path.iterdir()))}"
    result = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra,
                             f"file://{path}"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_explain_report_in_a_real_browser(tmp_path):
    from funcgrad._cli.explain import Explanation, run_script
    script = tmp_path / "inplace.py"
    script.write_text("import torch\n\na = torch.tensor([1.0, 3.0], requires_grad=True)\n"
                      "b = a + 2\nloss = (b * b).mean()\nb[0] = 1000.0\nloss.backward()\n")
    page = tmp_path / "report.html"
    page.write_text(Explanation(run_script(str(script))).html())
    dom = render(page, tmp_path, "--dump-dom")
    assert "<svg" in dom and 'class="edge broken"' in dom
    assert "MulBackward0" in dom and "fill_" in dom
    assert 'class="saved" id="line5"' in dom and 'class="modified" id="line6"' in dom
    shot = tmp_path / "report.png"
    render(page, tmp_path, f"--screenshot={shot}", "--window-size=1100,1000")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_side_by_side_page_in_a_real_browser(tmp_path):
    both = side_by_side(lambda xp, x: (xp.sin(x) * x).sum(), np.array([0.5, 1.0]))
    page = tmp_path / "both.html"
    page.write_text(both.html())
    dom = render(page, tmp_path, "--dump-dom")
    assert dom.count("<svg") == 2 and "MulBackward0" in dom and "= multiply" in dom


def test_html_page_is_self_contained():
    page = html_page("a <title>", "<p>body</p>")
    assert "a &lt;title&gt;" in page and "<script" not in page and "src=" not in page
