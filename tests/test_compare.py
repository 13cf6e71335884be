"""funcgrad.compare: one computation in both models, and where and why they part."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.compare import InplaceExplanation, compare, functional_rewrite


def first_line_of(fn, text: str) -> int:
    """The line number of the first line of `fn`'s source that contains `text`."""
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_agreeing_program_reports_values_and_closed_form_gradients():
    x = np.array([0.5, 1.0, -2.0])
    r = fg.compare(lambda xp, x: (xp.sin(x) * x).sum(), x)
    assert r.agree and bool(r) and r.divergence is None
    np.testing.assert_allclose(r.value, np.sum(np.sin(x) * x), rtol=1e-12)
    np.testing.assert_allclose(r.grads[0], np.sin(x) + x * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(r.mutable_grads[0], np.sin(x) + x * np.cos(x), rtol=1e-12)
    assert [what for what, _, _ in r.differences] == ["output", "grad input 0"]
    assert all(a < 1e-12 and rel < 1e-12 for _, a, rel in r.differences)
    assert "agree" in str(r)


def aliasing(xp, x):
    y = x * 2
    row = y[0]
    row += 1
    return (y * y).sum()


def test_aliasing_program_names_the_divergence_and_the_write():
    x = np.array([1.0, 2.0])
    r = compare(aliasing, x)
    assert not r.agree
    # closed forms: functional sum((2x)^2) -> grad 8x; mutable y0 = 2 x0 + 1 -> grad 4y
    np.testing.assert_allclose(r.value, 20.0)
    np.testing.assert_allclose(r.mutable_value, 25.0)
    np.testing.assert_allclose(r.grads[0], 8 * x)
    np.testing.assert_allclose(r.mutable_grads[0], [12.0, 16.0])
    diffs = {what: (a, rel) for what, a, rel in r.differences}
    assert diffs["output"] == (5.0, pytest.approx(0.2))
    assert diffs["grad input 0"] == (4.0, pytest.approx(1 / 3))
    line = first_line_of(aliasing, "row += 1")
    d = r.divergence
    assert (d.name, d.line, d.file) == ("y", line, __file__)
    assert d.write[0] == "add_" and d.write[1:] == (__file__, line)
    assert "through a view" in d.reason and "`row`" in d.reason
    text = str(r)
    assert f"{__file__}:{line}" in text and "row += 1" in text and "row = row + 1" in text


def test_aliasing_matches_real_torch():
    torch = pytest.importorskip("torch", reason="the oracle (torch 2.13.0 CPU) is not installed")
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    out = aliasing(torch, x)
    out.backward()
    r = compare(aliasing, np.array([1.0, 2.0]))
    np.testing.assert_allclose(r.mutable_value, out.item())
    np.testing.assert_allclose(r.mutable_grads[0], x.grad.numpy())


def functional_update(a):
    b = a + 2
    loss = (b * b).mean()
    b = b.at[0].set(1000.0)
    return loss


def mutable_update(a):
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    return loss


def test_inplace_error_is_reported_not_raised():
    r = compare(functional_update, mutable_update, np.array([1.0, 3.0]))
    assert not r.agree and r.functional_error is None
    np.testing.assert_allclose(r.grads[0], [3.0, 5.0])  # d mean(b^2)/da = b
    assert isinstance(r.mutable_error, RuntimeError)
    e = r.explanation
    assert isinstance(e, InplaceExplanation)
    assert e.saved_by == "MulBackward0" and e.modified_by == "fill_"
    assert e.saved_at == (__file__, first_line_of(mutable_update, "b * b"))
    assert e.modified_at == (__file__, first_line_of(mutable_update, "b[0] = 1000.0"))
    assert (e.saved_version, e.current_version) == (0, 1)
    assert e.rewrites == [(e.modified_at[1], "b[0] = 1000.0", "b = b.at[0].set(1000.0)")]
    assert e.graph is not None and e.graph.conflicts()
    text = str(r)
    assert "modified by an inplace operation" in text and "saved by:    MulBackward0" in text


def test_two_spellings_that_agree():
    def functional(a):
        b = a + 2
        b = b.at[0].set(1000.0)
        return (b * b).mean()

    def mutable(a):
        b = a + 2
        b[0] = 1000.0
        return (b * b).mean()

    r = compare(functional, mutable, np.array([1.0, 3.0]))
    assert r.agree
    np.testing.assert_allclose(r.grads[0], [0.0, 5.0])


def test_functional_failure_is_reported_with_its_rewrite():
    def f(xp, a):
        b = a + 2
        b[0] = 1000.0
        return b.sum()

    r = compare(f, np.array([1.0, 3.0]))
    assert not r.agree and isinstance(r.functional_error, TypeError)
    assert r.functional_error_at == (__file__, first_line_of(f, "b[0] = 1000.0"))
    assert "b = b.at[0].set(1000.0)" in str(r)


def test_non_scalar_output_is_summed_and_non_float_inputs_are_constants():
    r = compare(lambda xp, x, k: x ** k, np.array([1.0, 2.0]), 3)
    assert r.agree and len(r.grads) == 1
    np.testing.assert_allclose(r.grads[0], 3 * np.array([1.0, 2.0]) ** 2)


@pytest.mark.parametrize("line, expected", [
    ("x[i] = v", "x = x.at[i].set(v)"),
    ("x[1:3] *= 2  # scale", "x = x.at[1:3].multiply(2)  # scale"),
    ("x[0] -= y", "x = x.at[0].add(-(y))"),
    ("h /= n", "h = h / n"),
    ("w.sub_(lr * g)", "w = w - lr * g"),
    ("w.zero_()", "w = xp.zeros_like(w)"),
    ("w.fill_(3)", "w = xp.full_like(w, 3)"),
    ("w.clamp_(min=0)", "w = w.clamp(min=0)"),
    ("w[0].copy_(v)", "w = w.at[0].set(v)"),
    ("x == y", None), ("y = x + 1", None), ("x.requires_grad_()", None),
])
def test_functional_rewrite(line, expected):
    assert functional_rewrite(line) == expected


def functional_rows(x):
    y = x * 2
    row = y[0:2]
    row = row + 1
    return (y * y).sum() + row.sum()


def mutable_rows(x):
    y = x * 2
    row = y[0:2]
    row.add_(1)
    return (y * y).sum() + row.sum()


def test_two_spellings_that_alias_name_the_write_through_the_view():
    x = np.array([1.0, 2.0, 3.0])
    r = compare(functional_rows, mutable_rows, x)
    assert not r.agree and r.mutable_error is None and r.functional_error is None
    # closed forms: functional sum(4x^2) + sum(2x[:2] + 1); mutable y[:2] = 2x[:2] + 1
    np.testing.assert_allclose(r.value, 4 * (1 + 4 + 9) + (3 + 5))
    np.testing.assert_allclose(r.mutable_value, 9 + 25 + 36 + 3 + 5)
    np.testing.assert_allclose(r.grads[0], [8 + 2, 16 + 2, 24])
    np.testing.assert_allclose(r.mutable_grads[0], [4 * 3 + 2, 4 * 5 + 2, 24])
    line = first_line_of(mutable_rows, "row.add_(1)")
    assert (r.divergence.name, r.divergence.line) == ("y", line)
    assert r.divergence.write == ("add_", __file__, line)
    assert f"add_ at {__file__}:{line}" in str(r) and r.divergence.operation == "add_"


def test_divergence_without_a_write_names_the_operation():
    def functional(x):
        y = x * 2
        return (y * y).sum()

    def mutable(x):
        y = x * 3
        return (y * y).sum()

    r = compare(functional, mutable, np.array([1.0, 2.0]))
    line = first_line_of(mutable, "y = x * 3")
    d = r.divergence
    assert (d.name, d.line, d.write, d.operation) == ("y", line, None, "MulBackward0")
    assert "operation: MulBackward0" in str(r) and "no in-place write" in str(r)


def test_single_spelling_with_setitem_through_a_view():
    def f(xp, x):
        y = x * 1.0
        v = y[1:]
        v[0] = 5.0
        return (y * 2).sum()

    r = compare(f, np.array([1.0, 2.0, 3.0]))
    line = first_line_of(f, "v[0] = 5.0")
    assert isinstance(r.functional_error, TypeError) and r.functional_error_at[1] == line
    assert r.divergence is not None and r.divergence.line == line
    assert r.divergence.write[2] == line
    assert "v = v.at[0].set(5.0)" in str(r)


def test_float32_inside_the_program_is_compared_at_single_precision():
    def f(xp, x):
        w = xp.ones(3) * 0.1  # float32 in the mutable model (torch's default), float64 here
        return xp.sin(w * x * 100.0).sum()  # a 0-d x does not promote: float32 throughout

    r = compare(f, 0.7)
    assert r.agree, str(r)
    assert r.mutable_value.dtype == np.float32 and r.value.dtype == np.float64
    np.testing.assert_allclose(r.value, 3 * np.sin(7.0), rtol=1e-12)
    np.testing.assert_allclose(r.grads[0], 3 * 10 * np.cos(7.0), rtol=1e-12)
    diffs = {what: rel for what, _, rel in r.differences}
    assert 0 < diffs["output"] < 1e-4  # a real float32 rounding difference, tolerated
    from funcgrad.compare import _allclose
    one, near = np.array(1.0), np.array(1.00002)
    assert _allclose(near.astype(np.float32), one, 1e-6, 1e-9)
    assert not _allclose(near, one, 1e-6, 1e-9)
