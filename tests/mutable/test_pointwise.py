"""torch's pointwise functions beyond basic arithmetic, and scatter/scatter_add: values, node
names, gradients, versions and errors, each run on funcgrad.mutable and on real torch (the
oracle), with closed forms where they are short."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import funcgrad.mutable as fm

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="real torch is the oracle here")
MODULES = [pytest.param(fm, id="funcgrad"), pytest.param(torch, id="torch", marks=needs_torch)]

UNARY = ["floor", "ceil", "round", "trunc", "frac", "fix", "asin", "acos", "atan", "sinh",
         "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
         "arctanh", "erfc", "erfinv", "log2", "log10", "exp2", "rsqrt", "deg2rad", "rad2deg",
         "sinc", "i0", "lgamma", "digamma", "logit", "sign", "absolute", "negative",
         "nan_to_num", "erf"]
# torch records the in-place forms of these but cannot differentiate them
NO_INPLACE_DERIVATIVE = {"asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh"}
WEIGHTS = [1.0, 2.0, 3.0]


def _input(T, name):
    values = [1.3, 2.6, 1.45] if name in ("acosh", "arccosh") else [0.3, 0.6, 0.45]
    return T.tensor(values, dtype=T.float64, requires_grad=True)


def _unary_run(T, name, in_place):
    x = _input(T, name)
    y = x * 1.0
    if in_place:
        assert getattr(y, name + "_")() is y
        out = y
        assert y._version == 1
    else:
        out = getattr(T, name)(y)
        assert np.array_equal(getattr(y, name)().detach().numpy(), out.detach().numpy())
    (out * T.tensor(WEIGHTS, dtype=T.float64)).sum().backward()
    return out.detach().numpy(), x.grad.numpy(), type(out.grad_fn).__name__


@pytest.mark.parametrize("in_place", [False, True], ids=["out_of_place", "in_place"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_gradients_and_node_names_match_torch(name, in_place):
    if torch is None:
        pytest.skip("real torch is the oracle here")
    if in_place and name in NO_INPLACE_DERIVATIVE:
        pytest.skip("covered by test_in_place_inverse_hyperbolics_have_no_derivative")
    ours, theirs = _unary_run(fm, name, in_place), _unary_run(torch, name, in_place)
    assert np.allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-14)
    assert np.allclose(ours[1], theirs[1], rtol=1e-8, atol=1e-14)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("name", ["asin", "sinh", "erfc", "log2", "rsqrt", "lgamma", "digamma",
                                  "sinc", "i0", "logit"])
def test_unary_slopes_against_finite_differences(name):
    # central differences in float64: an oracle that needs no torch
    x = _input(fm, name)
    getattr(fm, name)(x).sum().backward()
    v = x.detach().numpy()
    h = 1e-6
    up = getattr(fm, name)(fm.tensor(v + h, dtype=fm.float64)).numpy()
    down = getattr(fm, name)(fm.tensor(v - h, dtype=fm.float64)).numpy()
    assert np.allclose(x.grad.numpy(), (up - down) / (2 * h), rtol=1e-6)


@pytest.mark.parametrize("T", MODULES)
@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh"])
def test_in_place_inverse_hyperbolics_have_no_derivative(T, name):
    y = _input(T, name) * 1.0
    getattr(y, name + "_")()
    assert type(y.grad_fn).__name__ == name.capitalize() + "Backward1"
    with pytest.raises(RuntimeError, match=f"the derivative for 'inplace version of {name}' "
                                           "is not implemented."):
        y.sum().backward()


@pytest.mark.parametrize("T", MODULES)
def test_rounding_of_integers_keeps_the_dtype_and_float_functions_refuse_in_place(T):
    a = T.tensor([1, -2, 3])
    for name in ("floor", "ceil", "round", "trunc"):
        out = getattr(T, name)(a)
        assert out.dtype == T.int64 and out.tolist() == [1, -2, 3]
    assert T.asin(T.tensor([0, 1])).dtype == T.float32
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        T.tensor([0, 1]).asin_()


@pytest.mark.parametrize("T", MODULES)
def test_round_half_to_even_and_decimals(T):
    x = T.tensor([0.5, 1.5, 2.5, -0.5, 2.567], requires_grad=True)
    assert T.round(x).tolist() == [0.0, 2.0, 2.0, -0.0, 3.0]
    r = T.round(x, decimals=2)
    assert type(r.grad_fn).__name__ == "RoundBackward1"
    assert np.allclose(r.detach().numpy()[-1], 2.57)
    r.sum().backward()
    assert x.grad.tolist() == [0.0] * 5


@pytest.mark.parametrize("T", MODULES)
def test_module_level_in_place_functions(T):
    for name in ("floor_", "ceil_", "trunc_", "frac_", "round_", "asin_", "atan_", "sinh_",
                 "cosh_", "erf_", "erfc_", "log2_", "rsqrt_", "clamp_min_", "negative_",
                 "fix_", "arcsin_"):
        x = T.tensor([0.25, 0.5])
        args = (0.3,) if name == "clamp_min_" else ()
        out = getattr(T, name)(x, *args)
        assert out is x and x._version == 1
    for name in ("lgamma_", "digamma_", "erfinv_", "scatter_", "lerp_", "logaddexp_", "hypot_",
                 "fmod_", "copysign_"):
        assert not hasattr(T, name)  # torch offers these only as methods (or not at all)


BINARY = [
    "T.hypot(x, w)", "T.fmod(x, w)", "T.fmod(x, 0.25)", "(x * 1).fmod_(0.25)",
    "(x * 1).fmod_(w)", "T.copysign(x, -w)", "T.copysign(x, -1.0)", "(x * 1).copysign_(-w)",
    "T.logaddexp(x, w)", "T.logaddexp2(x, w)", "T.lerp(x, w, 0.3)", "T.lerp(x, w, 0.7)",
    "T.lerp(x, w, w)", "(x * 1).lerp_(w, 0.3)", "(x * 1).lerp_(w, w * 0.5)",
    "T.clamp_min(x, 0.4)", "T.clamp_max(x, 0.4)", "T.clamp_min(x, w * 0 + 0.4)",
    "T.clamp_max(x, w)", "(x * 1).clamp_min_(0.4)", "(x * 1).clamp_max_(w)",
    "T.float_power(x, 2)", "T.float_power(x, w)", "(x * 1).float_power_(2)",
    "T.atan2(x, w)", "(x * 1).atan2_(w)", "(x * 1).arctan2_(w)", "T.arctan2(x, w)",
    "T.divide(x, w)", "T.true_divide(x, w)", "T.multiply(x, w)", "T.subtract(x, w)",
    "(x * 1).true_divide_(w)", "(x * 1).divide_(w)", "(x * 1).subtract_(w)",
    "(x * 1).multiply_(w)", "(x * 1).negative_()", "(x * 1).absolute_()", "(x * 1).sign_()",
    "(x * 1).erf_()", "(x * 1).round_(decimals=1)", "T.logit(x, eps=0.35)", "(x * 1).logit_()",
    "T.nan_to_num(x)", "(x * 1).nan_to_num_()",
    "T.scatter(x, 0, T.tensor([2, 0]), w[:2])", "T.scatter(x, 0, T.tensor([2, 0]), value=3.0)",
    "T.scatter(x, 0, T.tensor([2, 0]), 3.0)", "(x * 1).scatter_(0, T.tensor([2, 0]), w[:2])",
    "(x * 1).scatter_(0, T.tensor([1]), value=2.0)",
    "T.scatter_add(x, 0, T.tensor([2, 0, 2]), w)", "(x * 1).scatter_add_(0, T.tensor([2, 0, 2]), w)",
    "T.scatter(x.view(3, 1).expand(3, 2) * 1, 1, T.tensor([[1], [0], [1]]), w.view(3, 1))",
    "T.zeros(10, dtype=T.float).scatter_(0, T.tensor(3), value=1)",
]


def _assert_runs_agree(ours, theirs, atol=1e-14):
    """The same program's findings (arrays, node names, dtypes) from funcgrad and torch."""
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, np.ndarray):
            assert np.allclose(a, b, rtol=1e-12, atol=atol), (a, b)
        else:
            assert a == b


def _binary_run(T, expr):
    x = T.tensor([0.3, 0.6, 0.45], dtype=T.float64, requires_grad=True)
    w = T.tensor([0.5, 2.0, 0.1], dtype=T.float64, requires_grad=True)
    out = eval(expr, {"T": T, "x": x, "w": w})
    found = [out.detach().numpy().copy(), type(out.grad_fn).__name__ if out.grad_fn else None,
             str(out.dtype)]
    if out.requires_grad:
        scale = T.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
        (out * scale).sum().backward()
        found += [None if x.grad is None else x.grad.numpy(),
                  None if w.grad is None else w.grad.numpy()]
    return found


@pytest.mark.parametrize("expr", BINARY)
def test_binary_and_scatter_match_torch(expr):
    if torch is None:
        pytest.skip("real torch is the oracle here")
    ours, theirs = _binary_run(fm, expr), _binary_run(torch, expr)
    _assert_runs_agree(ours, theirs)


def test_sgn_of_reals_is_recorded_with_a_zero_gradient():
    # (torch's own backward hands back a ZeroTensor here, which .numpy() refuses)
    x = fm.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    y = x * 1
    y.sgn_()
    assert type(y.grad_fn).__name__ == "SgnBackward0" and y.tolist() == [-1.0, 0.0, 1.0]
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert type(fm.sgn(x).grad_fn).__name__ == "SgnBackward0"


@pytest.mark.parametrize("T", MODULES)
def test_the_transforms_tutorial_one_hot(T):
    # torchvision's Lambda target transform in PyTorch's "Transforms" tutorial
    y = 3
    one_hot = T.zeros(10, dtype=T.float).scatter_(0, T.tensor(y), value=1)
    assert one_hot.tolist() == [0.0, 0.0, 0.0, 1.0] + [0.0] * 6


@pytest.mark.parametrize("T", MODULES)
def test_scatter_gradients_by_hand(T):
    x = T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    src = T.tensor([[10.0, 20.0], [30.0, 40.0]], requires_grad=True)
    idx = T.tensor([[2, 0], [0, 1]])
    out = x.scatter(0, idx, src)
    assert out.tolist() == [[30.0, 20.0], [3.0, 40.0], [10.0, 6.0]]
    (out * T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    # overwritten places give x nothing; each src element gets the weight where it landed
    assert x.grad.tolist() == [[0.0, 0.0], [3.0, 0.0], [0.0, 6.0]]
    assert src.grad.tolist() == [[5.0, 2.0], [1.0, 4.0]]


@pytest.mark.parametrize("T", MODULES)
def test_scatter_add_sums_repeated_indices(T):
    x = T.zeros(3, requires_grad=True)
    src = T.tensor([1.0, 2.0, 4.0], requires_grad=True)
    out = x.scatter_add(0, T.tensor([0, 0, 2]), src)
    assert out.tolist() == [3.0, 0.0, 4.0]
    assert type(out.grad_fn).__name__ == "ScatterAddBackward0"
    (out * T.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0] and src.grad.tolist() == [1.0, 1.0, 3.0]


@pytest.mark.parametrize("T", MODULES)
def test_scatter_with_reduce(T):
    x = T.zeros(3, 2)
    assert x.scatter_(1, T.tensor([[1], [0]]), 5.0, reduce="add").tolist() == [
        [0.0, 5.0], [5.0, 0.0], [0.0, 0.0]]
    ones = T.ones(3, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ones.scatter_(1, T.tensor([[1], [0]]), T.full((2, 1), 3.0), reduce="multiply")
    assert ones.tolist() == [[1.0, 3.0], [3.0, 1.0], [1.0, 1.0]]
    assert any("reduce argument of torch.scatter with Tensor src is deprecated" in str(w.message)
               for w in caught)
    a = T.ones(3, requires_grad=True)
    out = a.scatter(0, T.tensor([0, 0]), 2.0, reduce="add")
    assert out.tolist() == [5.0, 1.0, 1.0]
    assert type(out.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        out.sum().backward()
    b = a * 1
    b.scatter_(0, T.tensor([1]), 2.0, reduce="multiply")
    with pytest.raises(RuntimeError, match=r"derivative for aten::scatter_ is not implemented"):
        b.sum().backward()


@pytest.mark.parametrize("T", MODULES)
def test_scatter_errors(T):
    z = T.zeros(3)
    cases = [
        (lambda: z.scatter_(0, T.tensor([1]), value=1, reduce="bad"),
         "reduce argument must be either add or multiply."),
        (lambda: z.scatter_(0, T.tensor([1.0]), value=1),
         r"scatter\(\): Expected dtype int32/int64 for index"),
        (lambda: z.scatter_(0, T.tensor([5]), value=1),
         "index 5 is out of bounds for dimension 0 with size 3"),
        (lambda: z.scatter_(0, T.tensor([1]), T.ones(1, dtype=T.float64)),
         r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
        (lambda: z.scatter_(0, T.tensor([[1]]), T.ones(1)),
         "Index tensor must have the same number of dimensions as self tensor"),
        (lambda: T.zeros(3, 2).scatter_(0, T.tensor([[1, 1, 1]]), T.ones(1, 3)),
         r"Expected index \[1, 3\] to be no larger than self \[3, 2\] apart from dimension 0 "
         r"and to be no larger size than src \[1, 3\]"),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError, match=message):
            call()
    assert z._version == 0


@pytest.mark.parametrize("T", MODULES)
def test_scatter_in_place_on_a_leaf_and_saved_value_checks(T):
    leaf = T.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.scatter_(0, T.tensor([0]), value=1.0)
    # scatter_add saves only the index: writing its inputs later is no error
    x = T.zeros(3, requires_grad=True)
    src = T.ones(2, requires_grad=True)
    s = src * 1
    out = x.scatter_add(0, T.tensor([0, 2]), s)
    s.mul_(2)
    out.sum().backward()
    assert src.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("T", MODULES)
def test_lerp_is_exact_at_both_ends_and_clamp_bounds_take_the_rest(T):
    a, b = T.tensor([1e8, -3.0]), T.tensor([1.0, 7.0])
    assert T.lerp(a, b, 1.0).tolist() == [1.0, 7.0]
    assert T.lerp(a, b, 0.0).tolist() == a.tolist()
    x = T.tensor([0.0, 1.0, 2.0], requires_grad=True)
    lo = T.tensor([1.0, 1.0, 1.0], requires_grad=True)
    T.clamp_min(x, lo).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0] and lo.grad.tolist() == [1.0, 0.0, 0.0]
    assert math.isclose(T.float_power(T.tensor([2]), 3).item(), 8.0)
    assert T.float_power(T.tensor([2]), 3).dtype == T.float64
    with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float but "
                                           "the operation's result requires dtype Double"):
        T.tensor([2.0]).float_power_(2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_is_torch_bit_for_bit(dtype):
    # the autograd tutorial's grid: torch's kernel rounds each value once, from both ends
    a = fm.linspace(0.0, 2 * math.pi, 25, dtype=getattr(fm, dtype))
    if dtype == "float32":
        assert a.numpy()[19] == np.float32(4.9741883)
        assert (2 * fm.sin(a) + 1)[14].item() == -3.5762786865234375e-07
    if torch is None:
        pytest.skip("real torch is the oracle for the random cases")
    rng = np.random.default_rng(0)
    for _ in range(60):
        start, end = rng.uniform(-10, 10, 2)
        steps = int(rng.integers(2, 3000))
        ours = fm.linspace(start, end, steps, dtype=getattr(fm, dtype)).numpy()
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        assert np.array_equal(ours, theirs)


ALONG_DIM = ['x.clone().eq_(3.)','x.clone().eq_(x)','x.clone().lt_(3.)','x.clone().ge_(x*0+3)','x.clone().greater_(2.)','x.clone().ne_(x)','x.clone().le_(4.)','x.clone().gt_(x*0+2)','x.clone().less_equal_(4.)',
 'torch.tril(x)','x.tril(-1)','x.clone().triu_(1)','torch.triu(x, 1)','x.clone().tril_()',
 'torch.cumprod(x,0)','x.clone().cumprod_(1)','x.clone().cumsum_(0)','torch.cumprod(x*torch.tensor([[1.,0.],[1.,1.],[1.,1.]]),0)',
 'torch.flip(x,[0])','x.flip(0,1)','torch.roll(x,1,0)','torch.roll(x,1)','x.roll((1,1),(0,1))','x.roll(-1, 1)',
 'torch.amax(x,0)','x.amax((0,1))','x.amin(1, keepdim=True)','torch.amax(x)','x.amax()','torch.amin(x*0+1, 0)',
 'torch.xlogy(x,x)','x.clone().xlogy_(2.)','torch.xlogy(x*torch.tensor([[0.,1.],[1.,1.],[1.,1.]]), x+1)','torch.xlogy(2., x)',
 'x.index_add(0,torch.tensor([0,0]),x[:2]*10)','x.clone().index_add_(1,torch.tensor([1]),x[:,:1],alpha=2)','x.index_copy(0,torch.tensor([2]),x[:1]*5)','x.clone().index_copy_(1,torch.tensor([0]),x[:,1:]*3)',
 'x.clone().index_fill_(1,torch.tensor([0]),-1.)','x.index_fill(0,torch.tensor([1]),7.)','torch.index_add(x,0,torch.tensor([2]),x[:1])',
]


def _along_dim_run(T, expr):
    x0 = T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=T.float64, requires_grad=True)
    out = eval(expr, {"torch": T, "x": x0 * 1})
    found = [out.detach().numpy().copy(), type(out.grad_fn).__name__ if out.grad_fn else None,
             str(out.dtype)]
    if out.requires_grad:
        scale = T.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
        (out * scale).sum().backward()
        found.append(x0.grad.numpy())
    return found


@pytest.mark.parametrize("expr", ALONG_DIM)
def test_comparisons_in_place_writes_along_a_dim_and_more_match_torch(expr):
    if torch is None:
        pytest.skip("real torch is the oracle here")
    ours, theirs = _along_dim_run(fm, expr), _along_dim_run(torch, expr)
    _assert_runs_agree(ours, theirs)


ALONG_DIM_ERRORS = ['x.index_add(0,torch.tensor([5]),torch.ones(1,2))','x.index_copy(0,torch.tensor([5]),torch.ones(1,2))','x.index_fill(0,torch.tensor([5]),1.)','x.index_add(0,torch.tensor([1.]),torch.ones(1,2))','x.index_add(0,torch.tensor([1]),torch.ones(1,2,dtype=torch.float64))','torch.tril(torch.ones(3))','torch.roll(x,(1,1))','torch.amax(torch.ones(0))','x.index_fill(0,torch.tensor([1]),torch.ones(2))']


@pytest.mark.parametrize("expr", ALONG_DIM_ERRORS)
def test_errors_along_a_dim_match_torch(expr):
    if torch is None:
        pytest.skip("real torch is the oracle here")
    found = []
    for T in (fm, torch):
        with pytest.raises(Exception) as caught:
            eval(expr, {"torch": T, "x": T.zeros(3, 2)})
        found.append((type(caught.value).__name__, str(caught.value)))
    assert found[0] == found[1]


def test_index_add_and_cumprod_by_hand():
    x = fm.zeros(3, requires_grad=True)
    src = fm.tensor([1.0, 2.0, 4.0], requires_grad=True)
    out = x.index_add(0, fm.tensor([0, 0, 2]), src, alpha=2)
    assert out.tolist() == [6.0, 0.0, 8.0]
    (out * fm.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0] and src.grad.tolist() == [2.0, 2.0, 6.0]
    a = fm.tensor([2.0, 0.0, 3.0], requires_grad=True)
    fm.cumprod(a, 0).sum().backward()
    # d/da of a0 + a0 a1 + a0 a1 a2 at (2, 0, 3): (1 + a1 + a1 a2, a0 + a0 a2, a0 a1)
    assert a.grad.tolist() == [1.0, 8.0, 0.0]


PRODUCTS = ["torch.addmm(a, m1, m2)", "torch.addmm(a, m1, m2, beta=0.5, alpha=2)", "a.addmm(m1, m2, beta=0)",
 "a.clone().addmm_(m1, m2)", "torch.mv(m1, v)", "m1.mv(v)", "torch.addmv(c, m1, v, alpha=3)", "c.clone().addmv_(m1, v)",
 "torch.addr(a, c, d)", "a.clone().addr_(c, d, beta=2)", "torch.baddbmm(bb, b1, b2)", "torch.addbmm(a, b1, b2, alpha=0.5)",
 "a.clone().baddbmm_(b1[:1], b2[:1])" if False else "bb.clone().baddbmm_(b1, b2)", "torch.addmm(a[0], m1, m2)"]


def _product_run(T, expr):
    rng = np.random.default_rng(1)
    leaves = {k: T.tensor(rng.standard_normal(s), dtype=T.float64, requires_grad=True)
              for k, s in (("a", (2, 3)), ("m1", (2, 4)), ("m2", (4, 3)), ("v", (4,)),
                           ("c", (2,)), ("d", (3,)), ("bb", (5, 2, 3)), ("b1", (5, 2, 4)),
                           ("b2", (5, 4, 3)))}
    env = {k: t * 1 for k, t in leaves.items()}
    env["torch"] = T
    out = eval(expr, env)
    found = [out.detach().numpy().copy(), type(out.grad_fn).__name__]
    (out * T.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)).sum().backward()
    return found + [None if t.grad is None else t.grad.numpy() for t in leaves.values()]


@pytest.mark.parametrize("expr", PRODUCTS)
def test_matrix_products_with_an_added_input_match_torch(expr):
    if torch is None:
        pytest.skip("real torch is the oracle here")
    _assert_runs_agree(_product_run(fm, expr), _product_run(torch, expr), atol=1e-12)


def test_addmm_by_hand():
    a = fm.ones(2, 2, requires_grad=True)
    m1 = fm.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = fm.addmm(a, m1, fm.eye(2), beta=0.5, alpha=2)
    assert out.tolist() == [[2.5, 4.5], [6.5, 8.5]]
    out.sum().backward()
    assert a.grad.tolist() == [[0.5, 0.5], [0.5, 0.5]] and m1.grad.tolist() == [[2.0, 2.0],
                                                                                 [2.0, 2.0]]


@pytest.mark.parametrize("T", MODULES)
@pytest.mark.parametrize("make", ["scatter", "scatter_add", "index_add", "index_fill", "roll"])
def test_nodes_that_save_an_index_are_freed_by_backward(T, make):
    x = T.zeros(3, requires_grad=True)
    src = T.ones(2, requires_grad=True)
    idx = T.tensor([0, 2])
    out = {"scatter": lambda: x.scatter(0, idx, src),
           "scatter_add": lambda: x.scatter_add(0, idx, src),
           "index_add": lambda: x.index_add(0, idx, src),
           "index_fill": lambda: x.index_fill(0, idx, 1.0),
           "roll": lambda: x.roll(1)}[make]().sum()
    out.backward()
    if make == "roll":  # saves nothing: runs again, as in torch
        out.backward()
        return
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.backward()


@pytest.mark.parametrize("inplace", [False, True])
def test_index_fill_with_a_value_tensor_that_requires_grad_as_torch(inplace):
    torch = pytest.importorskip("torch", reason="real torch (CPU) is the oracle here")
    got = []
    for lib in (fm, torch):
        x = lib.tensor([[0.5, 1.0, -2.0], [3.0, 0.25, 4.0]], dtype=lib.float64,
                       requires_grad=True)
        v = lib.tensor(2.5, dtype=lib.float64, requires_grad=True)
        index = lib.tensor([0, 2, 2])  # a repeated index fills its place once
        if inplace:
            y = x * 1
            y.index_fill_(1, index, v)
        else:
            y = x.index_fill(1, index, v)
        (y * lib.arange(6.0, dtype=lib.float64).view(2, 3)).sum().backward()
        got.append((type(y.grad_fn).__name__, y.tolist(), x.grad.tolist(), v.grad.item()))
        assert lib.autograd.gradcheck(lambda a, b: a.index_fill(1, index, b), (x, v))
    assert got[0] == got[1]
    assert got[0][0] == "IndexFillBackward1" and got[0][3] == 10.0


@pytest.mark.parametrize("T", MODULES)
def test_nextafter_steps_and_differentiates_as_torch_2_13(T):
    x = T.tensor([1.0, 2.0, -3.0], dtype=T.float64, requires_grad=True)
    y = T.tensor([2.0, 0.0, -3.0], dtype=T.float64, requires_grad=True)
    z = T.nextafter(x, y)
    assert z.tolist() == [float(np.nextafter(1.0, 2.0)), float(np.nextafter(2.0, 0.0)), -3.0]
    assert type(z.grad_fn).__name__ == "NextafterBackward0"
    z.sum().backward()
    # the identity in `input` where it moves, zero where it equals `other`; none for `other`
    assert x.grad.tolist() == [1.0, 1.0, 0.0] and y.grad.tolist() == [0.0, 0.0, 0.0]
    a = T.tensor([1.0])
    a.nextafter_(T.tensor([0.0]))
    assert a.tolist() == [float(np.nextafter(np.float32(1.0), np.float32(0.0)))] and a._version == 1
    with pytest.raises(NotImplementedError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        T.nextafter(T.tensor([1, 2]), T.tensor([3, 4]))
