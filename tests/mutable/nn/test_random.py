"""funcgrad.mutable._random against PyTorch's CPU generator: the same seed, the same draws."""
import numpy as np
import pytest

from funcgrad.mutable import _random

torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for the random "
                                            "streams")

SIZES = (1, 3, 15, 16, 17, 40, 1000, 100003)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-0.7, 0.3), (0.1, 0.37), (-1 / 3, 2 / 7)])
def test_uniform_is_bit_exact(dtype, n, bounds):
    torch.manual_seed(7)
    want = torch.empty(n, dtype=getattr(torch, dtype)).uniform_(*bounds).numpy()
    _random.manual_seed(7)
    got = _random.uniform((n,), dtype, *bounds)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("mean_std", [(0.0, 1.0), (0.3, 2.5), (-1.0, 0.02)])
def test_normal(dtype, n, mean_std):
    for seed in (0, 1, 123):
        torch.manual_seed(seed)
        want = torch.empty(n, dtype=getattr(torch, dtype)).normal_(*mean_std).numpy()
        then = torch.empty(3, dtype=getattr(torch, dtype)).normal_(*mean_std).numpy()
        _random.manual_seed(seed)
        got = _random.normal((n,), dtype, *mean_std)
        got_then = _random.normal((3,), dtype, *mean_std)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_then, then)  # the cached second value too


@pytest.mark.parametrize("low, high", [(0, 10), (-5, 1000), (3, 4), (0, 2 ** 33)])
def test_randint(low, high):
    torch.manual_seed(5)
    want = torch.randint(low, high, (7, 9)).numpy()
    _random.manual_seed(5)
    got = _random.randint(low, high, (7, 9))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_randint_refuses_an_empty_range():
    with pytest.raises(RuntimeError, match="from=3 >= to=3"):
        _random.randint(3, 3, (2,))


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000])
def test_randperm(n):
    torch.manual_seed(11)
    want = [torch.randperm(n).numpy() for _ in range(3)]
    _random.manual_seed(11)
    got = [_random.randperm(n) for _ in range(3)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_bernoulli(dtype, p):
    torch.manual_seed(3)
    want = torch.empty(200, dtype=getattr(torch, dtype)).bernoulli_(p).numpy()
    _random.manual_seed(3)
    np.testing.assert_array_equal(_random.bernoulli((200,), p, dtype), want)


def test_bernoulli_refuses_p_outside_0_1():
    with pytest.raises(RuntimeError, match=r"p to be in \[0, 1\]"):
        _random.bernoulli((2,), 1.5, "float32")


def test_random63_is_int64_random_():
    torch.manual_seed(9)
    want = [int(torch.empty((), dtype=torch.int64).random_()) for _ in range(3)]
    _random.manual_seed(9)
    assert [_random.random63() for _ in range(3)] == want


def test_separate_generators_do_not_touch_the_global_stream():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(42)
    want = (torch.randperm(6, generator=g).numpy(), torch.rand(3).numpy())
    _random.manual_seed(0)
    mine = _random.Generator().manual_seed(42)
    got = (_random.randperm(6, mine), _random.uniform((3,), "float32"))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert mine.initial_seed() == g.initial_seed() == 42


def test_interleaved_draws_follow_one_stream():
    torch.manual_seed(2)
    want = [torch.rand(5).numpy(), torch.randn(3).numpy(), torch.randint(0, 7, (4,)).numpy(),
            torch.randperm(5).numpy(), torch.randn(2, dtype=torch.float64).numpy(),
            torch.empty(4).bernoulli_(0.3).numpy()]
    _random.manual_seed(2)
    got = [_random.uniform((5,), "float32"), _random.normal((3,), "float32"),
           _random.randint(0, 7, (4,)), _random.randperm(5), _random.normal((2,), "float64"),
           _random.bernoulli((4,), 0.3, "float32")]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_fma_rounds_once():
    # 0.1 * 10 - 1 in two roundings is 0; fused it is the representation error of 0.1
    assert float(_random.fma(0.1, 10.0, -1.0)) == 5.551115123125783e-17
    a = np.array([1 + 2 ** -30, 3.0])
    np.testing.assert_array_equal(_random.fma(a, a, -a * a), [2.0 ** -60, 0.0])
