"""The nn functions PyTorch records as one node (convolution, pooling, embedding): the node's
name, the values, first and second derivatives, all against real PyTorch in float64."""
import numpy as np
import pytest

import funcgrad.mutable as fm

torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for nn nodes")


def _run(lib, fn, arrays):
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    weights = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
    # (out * out * weights) is not linear in the inputs: second derivatives exist everywhere
    firsts = lib.autograd.grad((out * out * weights).sum(), inputs, create_graph=True)
    seconds = lib.autograd.grad(sum((g * g).sum() for g in firsts), inputs, allow_unused=True)
    return (type(out.grad_fn).__name__, out.detach().numpy(),
            [g.detach().numpy() for g in firsts],
            [None if g is None else g.numpy() for g in seconds])


def _F(lib):
    return lib.nn.functional


CASES = {
    "conv": (lambda l, x, w, b: _F(l).conv2d(x, w, b), [(2, 3, 7, 6), (4, 3, 3, 2), (4,)]),
    "conv strided padded": (lambda l, x, w, b: _F(l).conv2d(x, w, b, stride=2, padding=1),
                            [(2, 3, 7, 6), (4, 3, 3, 3), (4,)]),
    "conv groups dilation": (lambda l, x, w: _F(l).conv2d(x, w, None, stride=(2, 1),
                                                         padding=(2, 1), dilation=2, groups=3),
                             [(2, 3, 9, 8), (6, 1, 3, 2)]),
    "conv same": (lambda l, x, w: _F(l).conv2d(x, w, padding="same"),
                  [(1, 2, 5, 5), (3, 2, 4, 3)]),
    "conv unbatched": (lambda l, x, w: _F(l).conv2d(x, w), [(3, 6, 7), (2, 3, 2, 2)]),
    "Conv2d module": (lambda l, x: l.nn.Conv2d(3, 2, 3, padding=1).double()(x), [(1, 3, 5, 4)]),
    "max pool": (lambda l, x: _F(l).max_pool2d(x, 2), [(2, 3, 6, 7)]),
    "max pool ceil": (lambda l, x: _F(l).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
                      [(2, 3, 7, 8)]),
    "max pool unbatched": (lambda l, x: _F(l).max_pool2d(x, 2), [(3, 6, 7)]),
    "avg pool": (lambda l, x: _F(l).avg_pool2d(x, 2), [(2, 3, 6, 7)]),
    "avg pool padded": (lambda l, x: _F(l).avg_pool2d(x, 3, stride=2, padding=1),
                        [(2, 3, 7, 8)]),
    "avg pool no pad count": (lambda l, x: _F(l).avg_pool2d(
        x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True), [(2, 3, 7, 8)]),
    "avg pool divisor": (lambda l, x: _F(l).avg_pool2d(x, (3, 2), stride=2, padding=1,
                                                       divisor_override=5), [(2, 3, 7, 8)]),
    "avg pool unbatched": (lambda l, x: l.nn.AvgPool2d(2)(x), [(3, 6, 7)]),
    "adaptive": (lambda l, x: _F(l).adaptive_avg_pool2d(x, (2, 3)), [(2, 3, 7, 8)]),
    "adaptive to 1": (lambda l, x: _F(l).adaptive_avg_pool2d(x, 1), [(2, 3, 7, 8)]),
    "adaptive keep": (lambda l, x: _F(l).adaptive_avg_pool2d(x, (None, 3)), [(2, 3, 7, 8)]),
    "AdaptiveAvgPool2d unbatched": (lambda l, x: l.nn.AdaptiveAvgPool2d((3, 5))(x),
                                    [(3, 7, 8)]),
    "embedding": (lambda l, w: _F(l).embedding(l.tensor([[0, 2, 2], [1, 0, 3]]), w), [(4, 3)]),
    "embedding padding": (lambda l, w: _F(l).embedding(l.tensor([[0, 2, 2], [1, 0, 3]]), w,
                                                      padding_idx=1), [(4, 3)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_node_name_values_and_two_orders_match_torch(case):
    fn, shapes = CASES[case]
    rng = np.random.default_rng(list(CASES).index(case))
    arrays = [rng.standard_normal(s) for s in shapes]
    fm.manual_seed(0)
    mine = _run(fm, fn, arrays)
    torch.manual_seed(0)
    theirs = _run(torch, fn, arrays)
    assert mine[0] == theirs[0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-10, atol=1e-12)
    for order in (2, 3):
        for a, b in zip(mine[order], theirs[order]):
            if b is None or a is None:  # unused: torch gives None, we may give zeros
                assert (a is None or not np.any(a)) and (b is None or not np.any(b))
            else:
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_adaptive_avg_pool2d_module_prints_as_torch():
    for size in (1, (2, 3), (None, 2)):
        assert repr(fm.nn.AdaptiveAvgPool2d(size)) == repr(torch.nn.AdaptiveAvgPool2d(size))


def test_max_pool_returns_torch_indices():
    x = np.random.default_rng(3).standard_normal((2, 2, 5, 6))
    out_a, idx_a = fm.nn.functional.max_pool2d(fm.tensor(x), 2, return_indices=True)
    out_b, idx_b = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(idx_a.numpy(), idx_b.numpy())
    np.testing.assert_array_equal(out_a.numpy(), out_b.numpy())


def test_threshold_as_torch():
    x = np.array([-1.0, 0.05, 0.1, 0.5, 2.0])
    results = []
    for lib in (fm, torch):
        a = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.threshold(a, 0.1, 20.0)
        out.backward(lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
        view_base = a.clone()
        view = view_base[1:]
        lib.nn.functional.threshold(view, 0.1, 20.0, inplace=True)
        (view_base * view_base).sum().backward()
        b = a.detach().clone().requires_grad_(True).clone()
        lib.nn.functional.threshold_(b, 0.1, 20.0)
        results.append((type(out.grad_fn).__name__, out.tolist(), a.grad.tolist(),
                        view_base.tolist(), type(b.grad_fn).__name__,
                        repr(lib.nn.Threshold(0.1, 20)), repr(lib.nn.Threshold(1, 2, True))))
    assert results[0] == results[1]
