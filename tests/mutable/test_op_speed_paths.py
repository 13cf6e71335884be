"""The fast paths of single ops on the MLP step's way (W2): picks along a dim through
funcgrad.numpy's take_along_axis primitive (max/min/sort/topk/gather...), relu against a row
of zeros. Values, gradients (first and second order), grad_fn names and saved attributes,
against real torch."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.mutable as fm
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)
# ties (a row with its maximum twice), a NaN, infinities and signed zeros
BASE = rng.standard_normal((4, 6))
BASE[1, 2] = BASE[1, 4] = 9.0
BASE[2, 1] = np.nan
BASE[3, 0], BASE[3, 5] = np.inf, -np.inf
BASE[0, 3], BASE[0, 4] = -0.0, 0.0

PICKS = {
    "max_keepdim": lambda t, x: x.max(dim=1, keepdim=True)[0],
    "max": lambda t, x: t.max(x, 1).values,
    "max_dim0": lambda t, x: x.max(0)[0],
    "min_keepdim": lambda t, x: x.min(dim=-1, keepdim=True).values,
    "min": lambda t, x: t.min(x, 0)[0],
    "sort": lambda t, x: x.sort(1).values,
    "topk": lambda t, x: x.topk(2, dim=1).values,
    "kthvalue": lambda t, x: t.kthvalue(x, 2, 1, keepdim=True).values,
    "median": lambda t, x: t.median(x, 1).values,
    "median_dim0": lambda t, x: x.median(0, keepdim=True)[0],
    "gather": lambda t, x: t.gather(x, 1, t.tensor([[0, 0, 5], [4, 2, 2], [1, 3, 0]])),
}
NAMES = {"max_keepdim": "MaxBackward0", "max": "MaxBackward0", "max_dim0": "MaxBackward0",
         "min_keepdim": "MinBackward0", "min": "MinBackward0", "sort": "SortBackward0",
         "topk": "TopkBackward0", "kthvalue": "KthvalueBackward0", "gather": "GatherBackward0",
         "median": "MedianBackward1", "median_dim0": "MedianBackward1"}


def _run(t, case, data, dtype):
    x = t.tensor(data, dtype=dtype, requires_grad=True)
    out = PICKS[case](t, x)
    weights = t.arange(1.0, out.numel() + 1.0, dtype=dtype).reshape(out.shape)
    (out * weights).sum().backward()
    return out, x.grad


@pytest.mark.parametrize("case", sorted(PICKS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_picks_match_torch(case, dtype):
    data = BASE if case not in ("sort", "topk", "kthvalue") else np.nan_to_num(BASE)
    got, got_grad = _run(fm, case, data, getattr(fm, dtype))
    want, want_grad = _run(torch, case, data, getattr(torch, dtype))
    assert got.grad_fn.name() == want.grad_fn.name() == NAMES[case]
    assert got.dtype == getattr(fm, dtype) and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(got_grad.numpy(), want_grad.numpy())


@pytest.mark.parametrize("keepdim", [True, False])
def test_max_saved_attributes_and_freeing(keepdim):
    for t in (fm, torch):
        x = t.tensor(BASE, requires_grad=True)
        res = x.max(dim=1, keepdim=keepdim)
        assert type(res).__name__ == "max" and type(res).__module__ == "torch.return_types"
        node = res.values.grad_fn
        assert node._saved_dim == 1 and node._saved_keepdim is keepdim
        assert node._saved_self_sym_sizes == (4, 6)
        assert node._saved_indices.dtype == t.int64
        assert node._saved_indices.tolist() == res.indices.tolist()
        res.values.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            node._saved_indices
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            res.values.sum().backward()


def test_gather_saved_index():
    index = [[0, 1], [0, 0]]
    got = fm.gather(fm.tensor(BASE, requires_grad=True), 0, fm.tensor(index)).grad_fn
    want = torch.gather(torch.tensor(BASE, requires_grad=True), 0, torch.tensor(index)).grad_fn
    assert got._saved_dim == want._saved_dim == 0
    assert got._saved_index.tolist() == want._saved_index.tolist() == index


@pytest.mark.parametrize("case", ["max", "max_keepdim", "min", "topk", "gather"])
def test_picks_second_order_match_torch(case):
    data = np.nan_to_num(BASE[:3], posinf=3.0, neginf=-3.0)
    grads = []
    for t in (fm, torch):
        x = t.tensor(data, dtype=t.float64, requires_grad=True)
        out = PICKS[case](t, x)
        g, = t.autograd.grad((out ** 3).sum(), x, create_graph=True)
        gg, = t.autograd.grad((g * g).sum(), x)
        grads.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


def test_zero_dim_max_still_picks():
    got = fm.tensor(3.0, requires_grad=True).max(0)
    assert got.values.grad_fn.name() == "MaxBackward0" and got.indices.item() == 0


# --- relu ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(64, 256), (5, 3), (40,), ()])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_relu_matches_torch(shape, dtype):
    data = np.resize(np.array([-0.0, 0.0, np.nan, -1.0, 2.0, -np.inf, np.inf, 0.5]),
                     int(np.prod(shape))).reshape(shape)
    out = {}
    for t in (fm, torch):
        x = t.tensor(data, dtype=getattr(t, dtype), requires_grad=True)
        y = x.relu()
        y.backward(t.full_like(y, 3.0))
        out[t] = (y, x.grad)
    (y, g), (ty, tg) = out[fm], out[torch]
    assert y.grad_fn.name() == ty.grad_fn.name() == "ReluBackward0"
    assert y.dtype == getattr(fm, dtype) and g.dtype == getattr(fm, dtype)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(g.numpy(), tg.numpy())  # (a NaN passes the gradient)


def test_relu_int_and_functional_second_order():
    assert fm.tensor([-2, 3]).relu().tolist() == [0, 3]
    from funcgrad.numpy import _primitives as P
    x = np.linspace(-2.0, 2.0, 40).reshape(1, 40) + 0.01
    check_grads(lambda a: fnp.sum(P.relu(a) ** 2 * a), (x,), order=2, modes=("rev", "fwd"))


# --- the functional take_along_axis over the same primitive -----------------------------
def test_take_along_axis_broadcasts_and_batches():
    x = rng.standard_normal((3, 4))
    for idx, axis in [(np.array([[1], [0], [3]]), 1), (np.array([[0, 1, 2, 0]]), 0),
                      (np.array([[0, 3, 3], [1, 1, 0], [2, 0, 1]]), 1)]:
        np.testing.assert_array_equal(fnp.take_along_axis(x, idx, axis),
                                      np.take_along_axis(x, idx, axis))
        check_grads(lambda a: fnp.sum(fnp.take_along_axis(a, idx, axis) ** 2), (x,), order=2,
                    modes=("rev", "fwd"))
    one = rng.standard_normal((1, 4))
    np.testing.assert_array_equal(fnp.take_along_axis(one, np.array([[0], [3]]), 1),
                                  np.take_along_axis(one, np.array([[0], [3]]), 1))
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    batched = fg.vmap(lambda a, i: fnp.take_along_axis(a, i, 0))(x, idx)
    np.testing.assert_array_equal(batched, np.stack([x[k][idx[k]] for k in range(3)]))
    check_grads(lambda a: fnp.sum(fg.vmap(lambda b, i: fnp.take_along_axis(b, i, 0))(a, idx)
                                  ** 2), (x,), order=2, modes=("rev", "fwd"))
    f = lambda a: fnp.sum(fnp.take_along_axis(a, idx, 1) ** 2)
    np.testing.assert_allclose(fg.jit(f)(x), f(x))


def test_take_along_axis_gradient_under_vmap():
    x = rng.standard_normal((5, 3, 4))
    idx = rng.integers(0, 4, (5, 3, 2))
    per = lambda b, i: fg.grad(lambda a: fnp.sum(fnp.take_along_axis(a, i, 1) ** 3))(b)
    np.testing.assert_allclose(fg.vmap(per)(x, idx),
                               np.stack([per(x[k], idx[k]) for k in range(5)]))
