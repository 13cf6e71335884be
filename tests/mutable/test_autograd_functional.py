"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp): against closed forms,
and against real torch when installed."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.mutable as fm
from funcgrad.mutable.autograd import functional as AF

try:
    import torch
except ImportError:  # pragma: no cover - CI installs torch
    torch = None
TORCH_REASON = "torch is not installed here: the live comparison needs torch 2.13.0 CPU"


def test_closed_forms():
    x = fm.tensor([1.0, 2.0, 3.0])
    np.testing.assert_allclose(AF.jacobian(lambda t: t ** 2, x).numpy(), np.diag([2.0, 4, 6]))
    np.testing.assert_allclose(AF.hessian(lambda t: (t ** 3).sum(), x).numpy(),
                               np.diag([6.0, 12, 18]))
    out, g = AF.vjp(lambda t: (t * t).sum(), x)
    assert float(out) == 14.0 and g.tolist() == [2.0, 4.0, 6.0]
    out, jv = AF.jvp(lambda t: t.exp(), x, fm.tensor([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(jv.numpy(), [np.exp(1.0), 0, 0], rtol=1e-6)
    for fn in (AF.hvp, AF.vhp):
        _, hv = fn(lambda t: (t ** 3).sum(), x, fm.ones(3))
        np.testing.assert_allclose(hv.numpy(), [6.0, 12, 18])
    assert not AF.jacobian(lambda t: t ** 2, fm.tensor([1.0], requires_grad=True)).requires_grad


def _programs(lib):
    F = lib.autograd.functional
    g = np.random.default_rng(0)
    x = lib.tensor(g.standard_normal(3))
    y = lib.tensor(g.standard_normal((2, 3)))
    res = {}
    res["jac_multi"] = F.jacobian(lambda a, b: (a * b, (a.sin() * b).sum(1)), (x, y))
    res["jac_single"] = F.jacobian(lambda a: a.tanh() @ y.t(), x)
    res["hess_pair"] = F.hessian(lambda a, b: (a.exp() * b).sum(), (x, y))
    res["hess"] = F.hessian(lambda a: (a.sin() * a).sum(), x)
    res["vjp"] = F.vjp(lambda a: a.tanh() * 2, x, lib.ones(3))
    res["jvp"] = F.jvp(lambda a, b: a * b, (x, y), (lib.ones(3), lib.ones(2, 3)))
    res["hvp"] = F.hvp(lambda a: (a ** 4).sum(), x, lib.ones(3))
    res["vhp_tuple"] = F.vhp(lambda a, b: (a * b).sum(), (x, y), (lib.ones(3), lib.ones(2, 3)))
    res["unused"] = F.jacobian(lambda a, b: a * 2, (x, y))
    return res


def _numbers(obj):
    if isinstance(obj, (tuple, list)):
        return [_numbers(o) for o in obj]
    return obj.detach().numpy().round(6).tolist()


@pytest.mark.skipif(torch is None, reason=TORCH_REASON)
def test_against_torch():
    want = _programs(torch)
    got = _programs(fm)
    for key in want:
        assert _close(_numbers(got[key]), _numbers(want[key])), key


def _close(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return abs(a - b) <= 1e-5 + 1e-5 * abs(b)


def test_strict_mode_names_the_independent_input():
    for lib in [fm] + ([torch] if torch is not None else []):
        with pytest.raises(RuntimeError, match="independent of input 1"):
            lib.autograd.functional.jacobian(lambda a, b: a * 2, (lib.ones(2), lib.ones(2)),
                                             strict=True)


# --- the whole contract, case by case, against torch ---------------------------------------
# Each case is a program over a library (torch or funcgrad.mutable); it must return what
# torch returns (values, tuple/list nesting, dtype, requires_grad, whether a grad_fn is
# attached) or fail as torch fails (class and message).
def _cases(lib):
    F = lib.autograd.functional
    f64 = lib.float64

    def vec(*v):
        return lib.tensor(list(v), dtype=f64)

    x = lambda: vec(0.5, -1.0, 2.0)  # noqa: E731
    w = lambda: vec(1.5, 0.25, -0.5)  # noqa: E731
    two_in = lambda a, b: a * b + b.sin()  # noqa: E731
    cube = lambda a: (a ** 3).sum()  # noqa: E731
    mixed = lambda a, b: (a * b).sum() + (a ** 2).sum() * b.sum()  # noqa: E731
    first_only = lambda a, b: a * 2  # noqa: E731
    ones2 = lambda: lib.ones(2, dtype=f64)  # noqa: E731
    c = {
        "vjp": lambda: F.vjp(lambda a: a ** 2, x(), w()),
        "vjp v=None scalar out": lambda: F.vjp(cube, x()),
        "vjp v=None vector out": lambda: F.vjp(lambda a: a ** 2, x()),
        "vjp tuple in": lambda: F.vjp(two_in, (x(), w()), w()),
        "vjp tuple out": lambda: F.vjp(lambda a: (a.exp(), a.sum()), x(), (w(), vec(2.0)[0])),
        "vjp list in": lambda: F.vjp(two_in, [x(), w()], w()),
        "vjp v wrong size": lambda: F.vjp(lambda a: a ** 2, x(), ones2()),
        "vjp v too many": lambda: F.vjp(lambda a: a ** 2, x(), (w(), w())),
        "vjp v a list": lambda: F.vjp(lambda a: a ** 2, x(), [1.0, 2.0, 3.0]),
        "vjp input a float": lambda: F.vjp(lambda a: a ** 2, 3.0, w()),
        "vjp output a float": lambda: F.vjp(lambda a: 3.0, x(), w()),
        "vjp strict detached": lambda: F.vjp(lambda a: a.detach() * 2, x(), w(), strict=True),
        "vjp strict unused": lambda: F.vjp(lambda a, b: a * 2, (x(), w()), w(), strict=True),
        "vjp linear strict": lambda: F.vjp(lambda a: a * 3.0, x(), w(), strict=True),
        "vjp create_graph": lambda: F.vjp(lambda a: a ** 2, x(), w(), create_graph=True),
        "jvp": lambda: F.jvp(lambda a: a ** 2, x(), w()),
        "jvp v=None one element": lambda: F.jvp(lambda a: a * 2, vec(0.7)[0]),
        "jvp v=None vector": lambda: F.jvp(lambda a: a ** 2, x()),
        "jvp tuple in": lambda: F.jvp(two_in, (x(), w()), (w(), x())),
        "jvp tuple out": lambda: F.jvp(lambda a: (a.exp(), a.sum()), x(), w()),
        "jvp v too many": lambda: F.jvp(lambda a: a ** 2, x(), (w(), w())),
        "jvp strict unused": lambda: F.jvp(first_only, (x(), w()), (w(), x()), strict=True),
        "jvp strict constant": lambda: F.jvp(lambda a: lib.ones(2, dtype=f64), x(), w(),
                                             strict=True),
        "jvp constant": lambda: F.jvp(lambda a: lib.ones(2, dtype=f64), x(), w()),
        "jvp create_graph": lambda: F.jvp(lambda a: a ** 2, x(), w(), create_graph=True),
        "hvp": lambda: F.hvp(cube, x(), w()),
        "vhp tuple": lambda: F.vhp(mixed, (x(), w()), (w(), x())),
        "hvp tuple": lambda: F.hvp(mixed, (x(), w()), (w(), x())),
        "hvp not scalar": lambda: F.hvp(lambda a: a ** 2, x(), w()),
        "vhp tuple out": lambda: F.vhp(lambda a: (a.sum(),), x(), w()),
        "hvp linear strict": lambda: F.hvp(lambda a: a.sum() * 2, x(), w(), strict=True),
        "vhp unused strict": lambda: F.vhp(lambda a, b: (a ** 3).sum(), (x(), w()), (w(), x()),
                                           strict=True),
        "hvp v wrong size": lambda: F.hvp(cube, x(), ones2()),
        "vhp create_graph": lambda: F.vhp(cube, x(), w(), create_graph=True),
        "jacobian bad strategy": lambda: F.jacobian(cube, x(), strategy="bogus"),
        "hessian bad strategy": lambda: F.hessian(cube, x(), outer_jacobian_strategy="bogus"),
        "jacobian strict vectorize": lambda: F.jacobian(lambda a: a ** 2, x(), strict=True,
                                                        vectorize=True),
        "jacobian list in": lambda: F.jacobian(two_in, [x(), w()]),
        "jacobian strict unused": lambda: F.jacobian(first_only, (x(), w()), strict=True),
        "hessian strict linear": lambda: F.hessian(lambda a: a.sum(), x(), strict=True),
        "hessian not scalar": lambda: F.hessian(lambda a: a ** 2, x()),
        "jacobian int input": lambda: F.jacobian(lambda a: a ** 2, lib.tensor([1, 2])),
        # strict with create_graph: a result must depend on an input that requires grad
        "vjp strict create_graph linear": lambda: F.vjp(lambda a: a * 3, x(), w(), strict=True,
                                                        create_graph=True),
        "jvp strict create_graph linear": lambda: F.jvp(lambda a: a * 3, x(), w(), strict=True,
                                                        create_graph=True),
        "jacobian strict create_graph mixed": lambda: F.jacobian(
            lambda a, b: (a ** 2, b * 2), (x(), w()), strict=True, create_graph=True),
        "hessian strict create_graph": lambda: F.hessian(cube, x(), strict=True,
                                                         create_graph=True),
        "hessian strict unused": lambda: F.hessian(lambda a, b: (a ** 3).sum(), (x(), w()),
                                                   strict=True),
        "hvp strict create_graph": lambda: F.hvp(cube, x(), w(), strict=True, create_graph=True),
        "vhp strict create_graph quadratic": lambda: F.vhp(lambda a: (a ** 2).sum(), x(), w(),
                                                           strict=True, create_graph=True),
        "vjp create_graph, v requires grad": lambda: F.vjp(lambda a: a * 3, x(),
                                                           w().requires_grad_(),
                                                           create_graph=True),
        "hvp v=None one element": lambda: F.hvp(cube, vec(2.0)),
        "hessian returns a tuple": lambda: F.hessian(lambda a: ((a ** 3).sum(),), x()),
        "jacobian output in a list": lambda: F.jacobian(lambda a: [a], x()),
    }
    for vectorize in (False, True):
        for strategy in ("reverse-mode", "forward-mode"):
            kw = dict(vectorize=vectorize, strategy=strategy)
            hkw = dict(vectorize=vectorize, outer_jacobian_strategy=strategy)
            tag = f" [{strategy}{', vectorized' if vectorize else ''}]"
            c.update({
                "jacobian" + tag: lambda kw=kw: F.jacobian(lambda a: a ** 2, x(), **kw),
                "jacobian tuple in" + tag: lambda kw=kw: F.jacobian(two_in, (x(), w()), **kw),
                "jacobian tuple out" + tag: lambda kw=kw: F.jacobian(
                    lambda a: (a.exp(), a.sum()), x(), **kw),
                "jacobian tuples" + tag: lambda kw=kw: F.jacobian(
                    lambda a, b: (a * b, (a + b).sum()), (x(), w()), **kw),
                "jacobian matrix" + tag: lambda kw=kw: F.jacobian(
                    lambda m: m @ m, lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=f64), **kw),
                "jacobian unused" + tag: lambda kw=kw: F.jacobian(first_only, (x(), w()), **kw),
                "jacobian create_graph" + tag: lambda kw=kw: F.jacobian(
                    lambda a: a ** 2, x(), create_graph=True, **kw),
                "jacobian of an input on the graph" + tag: lambda kw=kw: F.jacobian(
                    lambda a: a ** 3, x().requires_grad_(), **kw),
                "hessian" + tag: lambda hkw=hkw: F.hessian(cube, x(), **hkw),
                "hessian tuple" + tag: lambda hkw=hkw: F.hessian(mixed, (x(), w()), **hkw),
                "hessian linear" + tag: lambda hkw=hkw: F.hessian(lambda a: a.sum(), x(), **hkw),
                "hessian create_graph" + tag: lambda hkw=hkw: F.hessian(
                    cube, x(), create_graph=True, **hkw),
            })
    for name, fn in [("jacobian", F.jacobian), ("hessian", F.hessian),
                     ("vjp", lambda f, a, **k: F.vjp(f, a, vec(1.0, 1.0, 1.0), **k)[1]),
                     ("jvp", lambda f, a, **k: F.jvp(f, a, vec(1.0, 1.0, 1.0), **k)[1]),
                     ("hvp", lambda f, a, **k: F.hvp(f, a, vec(1.0, 2.0, 3.0), **k)[1])]:
        def through(fn=fn, name=name):
            # create_graph=True keeps the result on the caller's graph: backward reaches x
            a = x().requires_grad_()
            f = cube if name in ("hessian", "hvp") else (lambda t: t ** 3)
            fn(f, a, create_graph=True).sum().backward()
            return a.grad
        c[f"{name} create_graph then backward"] = through
    return c


def _describe(value):
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [_describe(v) for v in value])
    if hasattr(value, "grad_fn"):
        numbers = np.asarray(value.detach().numpy(), dtype=float).round(10) + 0.0
        return ("tensor", tuple(value.shape), str(value.dtype), value.requires_grad,
                value.grad_fn is not None, numbers.tolist())
    return ("python", value)


def _outcome(case):
    try:
        return ("returns", _describe(case()))
    except Exception as e:  # noqa: BLE001 - the failure is the result compared
        return ("raises", type(e).__name__, str(e))


_CASE_NAMES = list(_cases(fm))


@pytest.mark.skipif(torch is None, reason=TORCH_REASON)
@pytest.mark.parametrize("name", _CASE_NAMES)
def test_case_as_torch(name):
    assert _outcome(_cases(fm)[name]) == _outcome(_cases(torch)[name])


def test_recorded_torch_contract():
    # torch 2.13's answers, written out so the contract holds without torch installed
    cases = _cases(fm)
    kind, desc = _outcome(cases["jacobian tuples [forward-mode, vectorized]"])
    assert kind == "returns" and desc[0] == "list" and desc[1][0][0] == "list"
    kind, desc = _outcome(cases["jacobian tuple out [forward-mode, vectorized]"])
    assert desc[0] == "tuple"  # one input: PyTorch unpacks into a tuple
    kind, desc = _outcome(cases["hessian [forward-mode, vectorized]"])
    assert desc[3] is True and desc[4] is True  # PyTorch leaves it on a graph
    assert desc[5] == [[3.0, 0.0, 0.0], [0.0, -6.0, 0.0], [0.0, 0.0, 12.0]]
    assert _outcome(cases["jacobian [forward-mode]"]) == (
        "raises", "NotImplementedError", "Computing Jacobian using forward-AD or "
        "forward-over-reverse Hessian isonly implemented for `vectorize=True`.")
    assert _outcome(cases["jacobian list in"])[1:] == (
        "TypeError", "The inputs given to jacobian must be either a Tensor or a tuple of "
        "Tensors but the given inputs has type <class 'list'>.")
    assert _outcome(cases["vjp v wrong size"])[1:] == (
        "RuntimeError", "v has invalid size: should be torch.Size([3]) but got "
        "torch.Size([2]).")
    assert _outcome(cases["hvp linear strict"])[2].startswith(
        "While computing the hessian, found that the jacobian of the user-provided function "
        "with respect to input 0 is independent of the input.")
    assert _outcome(cases["jacobian bad strategy"])[1] == "AssertionError"
    assert _outcome(cases["vjp linear strict"])[0] == "returns"
    # d/dx sum(d^2/dx^2 sum x^3) = 6 per element, through create_graph
    assert _outcome(cases["hessian create_graph then backward"])[1][5] == [6.0, 6.0, 6.0]
    # d/dx sum(3 x^2 * 1) = 6 x
    assert _outcome(cases["jvp create_graph then backward"])[1][5] == [3.0, -6.0, 12.0]


# --- computed on the functional transforms ------------------------------------------------------
def _higher_order(lib):
    F = lib.autograd.functional
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    hess = F.hessian(lambda a: (a.sin() * a ** 2).sum(), x, create_graph=True)
    g1, = lib.autograd.grad(hess.sum(), x, create_graph=True)   # third derivatives
    g2, = lib.autograd.grad(g1.sum(), x)                         # fourth
    _, product = F.vjp(lambda a: a ** 3, x.detach(), v, create_graph=True)
    product.sum().backward()                                     # reaches v
    _, hv = F.hvp(lambda a: (a ** 4).sum(), x, v, create_graph=True)
    gv, = lib.autograd.grad(hv.sum(), v)
    return [hess, g1, g2, v.grad, gv]


@pytest.mark.skipif(torch is None, reason=TORCH_REASON)
def test_create_graph_differentiates_to_any_order_as_torch():
    for got, want in zip(_higher_order(fm), _higher_order(torch)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
        assert got.requires_grad == want.requires_grad


def test_create_graph_closed_forms():
    hess, g1, g2, v_grad, gv = _higher_order(fm)
    x = np.array([0.5, -1.0, 2.0])
    # f = sum x^2 sin x: f'' = 2 sin x + 4 x cos x - x^2 sin x (diagonal)
    np.testing.assert_allclose(np.diag(hess.detach().numpy()),
                               2 * np.sin(x) + 4 * x * np.cos(x) - x ** 2 * np.sin(x))
    np.testing.assert_allclose(v_grad.numpy(), 3 * x ** 2)          # d/dv sum(v * 3x^2)
    np.testing.assert_allclose(gv.numpy(), 12 * x ** 2)             # d/dv sum(12 x^2 v)


def test_the_function_runs_on_traced_tensors():
    seen = []

    def f(a):
        seen.append((fm._tensor.is_traced(a), a.requires_grad, a.grad_fn))
        return a * 2

    AF.jacobian(f, fm.ones(2))
    assert seen == [(True, True, None)]  # a leaf requiring grad, as torch hands it over


def test_refusals_name_the_problem_and_the_fix():
    x = fm.ones(3, dtype=fm.float64)
    with pytest.raises(RuntimeError, match=r"item\(\) was called on a traced tensor"):
        AF.jacobian(lambda a: a * a.sum().item(), x)
    w = fm.ones(3, dtype=fm.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="uses a tensor that requires grad but is not one "
                                           "of its inputs"):
        AF.jacobian(lambda a: a * w, x, create_graph=True)
    # without create_graph a closed-over tensor is a constant, as in torch
    np.testing.assert_allclose(AF.jacobian(lambda a: a * w, x).numpy(), np.eye(3))


def test_an_op_computing_with_numpy_is_named():
    class Opaque(fm.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return fm.tensor(np.sin(a._data))  # NumPy on the data: cannot follow a tracer

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="is not yet supported inside "
                                           "torch.autograd.functional"):
        AF.jacobian(lambda a: Opaque.apply(a), fm.ones(2))


def _doubling(T):
    """PyTorch's autograd tutorial: `.data` read for control flow inside the function."""
    def do_some_doubling(x):
        y = x * 2
        while y.data.norm() < 1000:
            y = y * 2
        return y
    x = T.tensor([0.3, -1.2, 0.7], dtype=T.float64)
    v = T.tensor([0.1, 1.0, 0.0001], dtype=T.float64)
    out, vjp = T.autograd.functional.vjp(do_some_doubling, x, v=v)
    jac = T.autograd.functional.jacobian(lambda a: a * a.data.sum(), x)
    return out.numpy(), vjp.numpy(), jac.numpy()


def test_data_is_read_as_a_constant_inside_the_function():
    out, vjp, jac = _doubling(fm)
    x = np.array([0.3, -1.2, 0.7])
    k = 2.0 ** np.ceil(np.log2(1000 / np.linalg.norm(x)))   # doubled until the norm passes 1000
    np.testing.assert_allclose(out, k * x)
    np.testing.assert_allclose(vjp, k * np.array([0.1, 1.0, 0.0001]))
    np.testing.assert_allclose(jac, np.eye(3) * x.sum())    # .data's factor is a constant
    if torch is not None:
        for mine, theirs in zip((out, vjp, jac), _doubling(torch)):
            np.testing.assert_allclose(mine, theirs)
