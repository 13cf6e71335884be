"""Tensors holding a functional tracer (`_ops.traced_tensor`): a torch-style function run
under funcgrad's transforms (grad, jacrev, jacfwd, hessian, vmap) computes through the
functional dispatch, against real torch (autograd) and closed forms; what needs a concrete
value, and writes that cannot be functionalized, are refused with errors naming the fix."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.mutable as fm
from funcgrad.mutable import _ops as O

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None
TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"

X = np.array([0.5, -1.0, 2.0])


def as_arrays(f, dtype=fm.float64):
    """`f` over mutable tensors as a function of arrays: tracers wrapped in tensors."""
    def g(*arrays):
        out = f(*[O.traced_tensor(a, dtype) for a in arrays])
        return out._data
    return g


def _torch_jacobian(f, x):
    return torch.autograd.functional.jacobian(f, torch.tensor(x)).numpy()


PROGRAMS = {
    "chain": lambda lib, a: a.sin() * a ** 2 + a.exp() / 3,
    "matmul constant": lambda lib, a: a.tanh() @ lib.ones(3, 2, dtype=lib.float64),
    "index and scalar": lambda lib, a: a[1:] * a[0] - 1 / a[2],
    "reductions": lambda lib, a: lib.stack([a.sum(), a.mean(), (a * a).sum().sqrt()]),
    "where and clamp": lambda lib, a: lib.where(a > 0, a.clamp(max=1.0), a * 3),
    "softmax": lambda lib, a: a.softmax(0),
    "cat and unsqueeze": lambda lib, a: lib.cat([a, a.unsqueeze(0).sum(0) * 2]),
    "expand": lambda lib, a: (a.unsqueeze(0).expand(2, 3) * lib.arange(2.0, dtype=lib.float64)
                              .unsqueeze(1)).sum(0),
    "advanced index": lambda lib, a: a[lib.tensor([2, 0, 2])] * a[0],
    "pow of a scalar base": lambda lib, a: 2 ** a + a.abs(),
    "float32 constant promotes": lambda lib, a: (a * lib.ones(3, dtype=lib.float32)),
    "reshape, view, flatten": lambda lib, a: (a.reshape(3, 1) * a.view(1, 3)).flatten(),
    "detach is a constant": lambda lib, a: a.detach() * a + a.clone() ** 2,
    "outer and einsum": lambda lib, a: lib.einsum("ij,j->i", lib.outer(a, a), a),
    "contiguous": lambda lib, a: a.unsqueeze(1).t().contiguous().sum(0),
}


@pytest.mark.skipif(torch is None, reason=TORCH_REASON)
@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("transform", [fg.jacrev, fg.jacfwd])
def test_jacobian_as_torch(name, transform):
    f = PROGRAMS[name]
    got = np.asarray(transform(as_arrays(lambda a: f(fm, a)))(X))
    want = _torch_jacobian(lambda a: f(torch, a), X)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_closed_forms():
    cube = as_arrays(lambda a: (a ** 3).sum())
    np.testing.assert_allclose(np.asarray(fg.grad(cube)(X)), 3 * X ** 2)
    np.testing.assert_allclose(np.asarray(fg.hessian(cube)(X)), np.diag(6 * X))
    batched = fg.vmap(as_arrays(lambda m: m.t() * 2 + m.sum()))(np.arange(12.0).reshape(2, 2, 3))
    want = np.stack([m.T * 2 + m.sum() for m in np.arange(12.0).reshape(2, 2, 3)])
    np.testing.assert_allclose(np.asarray(batched), want)


def test_result_dtype_follows_torch():
    seen = {}

    def f(a):
        seen["half"] = (a.to(fm.float32) * 2).dtype
        seen["int promotes"] = (a * fm.tensor([1, 2, 3])).dtype
        seen["bool"] = (a > 0).dtype
        return a

    fg.jacrev(as_arrays(f))(X)
    assert seen == {"half": fm.float32, "int promotes": fm.float64, "bool": fm.bool}


def test_inplace_is_functionalized_and_views_read_again():
    def f(a):
        y = a * 2
        v = y[0:2]          # a view of y: it sees the writes below
        y.add_(1)
        y[2] = a[0] * 10    # through an indexing view: scattered into y
        y.mul_(a)
        return v + y.sum()

    got = np.asarray(fg.jacrev(as_arrays(f))(X))
    if torch is not None:
        np.testing.assert_allclose(got, _torch_jacobian(f, X), rtol=1e-12)
    # closed form: y = [(2a0+1)a0, (2a1+1)a1, 10 a0 a2], out = y[:2] + sum(y)
    s = np.array([4 * X[0] + 1 + 10 * X[2], 4 * X[1] + 1, 10 * X[0]])
    np.testing.assert_allclose(got, np.diag([4 * X[0] + 1, 4 * X[1] + 1, 0])[:2] + s)


def test_traced_detach_is_a_constant():
    got = np.asarray(fg.jacrev(as_arrays(lambda a: O.traced_detach(a) * a))(X))
    np.testing.assert_allclose(got, np.diag(X))  # d(c * a)/da = c


def test_data_reads_the_value_as_a_constant():
    got = np.asarray(fg.jacrev(as_arrays(lambda a: a.data * a))(X))
    np.testing.assert_allclose(got, np.diag(X))  # as detach(): d(c * a)/da = c


def test_control_flow_on_values():
    f = as_arrays(lambda a: a * 2 if a.sum() > 0 else a * int(a[0] * 4))
    np.testing.assert_allclose(np.asarray(fg.jacrev(f)(X)), 2 * np.eye(3))


@pytest.mark.parametrize("what, fn", [
    ("numpy()", lambda a: a.numpy()),
    ("item()", lambda a: a.sum().item()),
    ("tolist()", lambda a: a.tolist()),
    ("float()", lambda a: float(a[0])),
])
def test_concrete_values_are_refused(what, fn):
    with pytest.raises(RuntimeError, match="called on a traced tensor") as info:
        fg.jacrev(as_arrays(fn))(X)
    assert str(info.value).startswith(what) and ".detach()" in str(info.value)


def test_writes_that_cannot_be_functionalized_are_refused():
    def into_constant(a):
        return fm.zeros(3, dtype=fm.float64).add_(a)

    with pytest.raises(RuntimeError, match=r"\(add_\) writes a traced value into a tensor "
                                           "that is not traced"):
        fg.jacrev(as_arrays(into_constant))(X)
    with pytest.raises(RuntimeError, match=r"\(mul_\) writes through a view of a traced tensor "
                                           "made by permute"):
        fg.jacrev(as_arrays(lambda a: (a * 1).t().mul_(2)))(X)


def test_nothing_is_recorded_on_the_mutable_graph():
    seen = []

    def f(a):
        y = a.exp() * a
        seen.append((y.grad_fn, y.requires_grad, y.is_leaf))
        return y

    fg.jacrev(as_arrays(f))(X)
    assert seen == [(None, False, True)]


def test_ordinary_tensors_are_untouched():
    x = fm.tensor(X, requires_grad=True)
    y = (x.sin() * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.sin(X) + X * np.cos(X))
    assert type(y.grad_fn).__name__ == "SumBackward0"


def test_untraced_operands_requiring_grad_are_reported_while_watched():
    w = fm.tensor(X, requires_grad=True)
    O.TRACED.constants = []
    try:
        got = fg.jacrev(as_arrays(lambda a: a * w + a.exp()))(X)
        seen = O.TRACED.constants
    finally:
        O.TRACED.constants = None
    assert len(seen) == 1 and seen[0] is w
    np.testing.assert_allclose(np.asarray(got), np.diag(X + np.exp(X)))
