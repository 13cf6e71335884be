"""funcgrad.extend: autograd's extension API on funcgrad's engine. Rules given the autograd
way drive grad, jvp, higher orders and vmap; missing rules raise NotImplementedError; the
vector spaces obey the axioms. HIPS autograd is the oracle where installed (skipped, saying
so, where not); closed forms and finite differences run everywhere."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.extend import (def_linear, defjvp, defjvp_argnum, defvjp, defvjp_argnum,
                             defvjp_argnums, notrace_primitive, primitive, vspace)
from funcgrad.test_util import check_grads


def _logsumexp():
    @primitive
    def logsumexp(x):
        m = fnp.max(x)
        return m + fnp.log(fnp.sum(fnp.exp(x - m)))

    defvjp(logsumexp, lambda ans, x: lambda g: g * fnp.exp(x - ans))
    defjvp(logsumexp, lambda g, ans, x: fnp.sum(g * fnp.exp(x - ans)))
    return logsumexp


def test_rules_drive_grad_jvp_and_second_order():
    logsumexp = _logsumexp()
    x = np.array([0.3, -1.2, 2.0])
    softmax = np.exp(x) / np.exp(x).sum()
    np.testing.assert_allclose(np.asarray(fg.grad(logsumexp)(x)), softmax, rtol=1e-12)
    check_grads(logsumexp, (x,), order=2, modes=("rev", "fwd"))


def test_the_primitive_is_opaque_transforms_use_its_rule():
    @primitive
    def f(x):
        return x * 2.0

    defvjp(f, lambda ans, x: lambda g: g * 5.0)  # deliberately not f's derivative
    assert fg.grad(f)(1.0).item() == 5.0


def test_missing_rules_raise_not_implemented_naming_the_argument():
    f = primitive(lambda x: 2.0 * x)
    with pytest.raises(NotImplementedError, match="argument 0"):
        fg.grad(f)(1.0)
    with pytest.raises(NotImplementedError, match="defjvp"):
        fg.jvp(f, (1.0,), (1.0,))


def test_static_arguments_and_keywords_pass_through():
    seen = []

    @primitive
    def scaled(x, label, power=2):
        seen.append(label)
        return x ** power

    defvjp(scaled, lambda ans, x, label, power=2: lambda g: g * power * x ** (power - 1))
    assert fg.grad(lambda x: scaled(x, "x", power=3))(2.0).item() == 12.0
    assert seen == ["x"]


def test_none_gives_a_zero_cotangent_and_same_declares_linear():
    @primitive
    def f(x, y):
        return x * 3.0 + fnp.sin(y)

    defvjp(f, lambda ans, x, y: lambda g: g * 3.0, None)
    assert fg.grad(f, argnums=1)(1.0, 2.0).item() == 0.0

    @primitive
    def double(x):
        return 2.0 * x

    defjvp(double, "same")
    assert fg.jvp(double, (1.0,), (0.5,))[1].item() == 1.0


def test_argnum_forms():
    @primitive
    def mul(x, y):
        return x * y

    defvjp_argnum(mul, lambda argnum, ans, args, kwargs: lambda g: g * args[1 - argnum])
    assert [g.item() for g in fg.grad(mul, argnums=(0, 1))(2.0, 3.0)] == [3.0, 2.0]

    @primitive
    def mul2(x, y):
        return x * y

    defvjp_argnums(mul2, lambda argnums, ans, args, kwargs: lambda g: tuple(
        g * args[1 - a] for a in argnums))
    assert [g.item() for g in fg.grad(mul2, argnums=(0, 1))(2.0, 3.0)] == [3.0, 2.0]
    defjvp_argnum(mul2, lambda argnum, g, ans, args, kwargs: g * args[1 - argnum])
    assert fg.jvp(lambda x: mul2(x, 3.0), (2.0,), (1.0,))[1].item() == 3.0


def test_def_linear():
    @primitive
    def scale(x, a):
        return a * x

    def_linear(scale)
    assert fg.jvp(lambda x: scale(x, 4.0), (1.0,), (0.5,))[1].item() == 2.0


def test_a_rule_calling_another_primitive_differentiates_at_second_order():
    @primitive
    def foo(x):
        return x ** 3

    @primitive
    def bar(x):
        return 3.0 * x ** 2

    defvjp(foo, lambda ans, x: lambda g: g * bar(x))
    defvjp(bar, lambda ans, x: lambda g: g * 6.0 * x)
    assert fg.grad(fg.grad(foo))(2.0).item() == 12.0


def test_vmap_of_a_primitive_equals_a_loop():
    logsumexp = _logsumexp()
    xs = np.random.default_rng(0).standard_normal((4, 3))
    got = fg.vmap(fg.grad(logsumexp))(xs)
    expected = np.stack([np.asarray(fg.grad(logsumexp)(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)


def test_notrace_primitive_carries_no_derivative():
    sign = notrace_primitive(np.sign)
    assert fg.grad(lambda x: sign(x) * x)(-3.0).item() == -1.0


def test_defvjp_refuses_a_plain_function():
    with pytest.raises(TypeError, match="primitive"):
        defvjp(lambda x: x, lambda ans, x: lambda g: g)


@pytest.mark.parametrize("value", [np.zeros((3, 2)), 0.0, 1j * np.zeros((2, 1)),
                                   [1.0, np.zeros((2, 1))], (1.0, np.zeros(2)),
                                   {"a": 1.0, "b": np.zeros((2, 1))}],
                         ids=["array", "scalar", "complex", "list", "tuple", "dict"])
def test_vspace_axioms(value):
    vs = vspace(value)
    rng = np.random.default_rng(1)
    np.random.seed(1)
    x, y, z = vs.randn(), vs.randn(), vs.randn()
    a, b = float(rng.standard_normal()), float(rng.standard_normal())

    def close(u, v):
        return np.isclose(float(vs.inner_prod(z, u)), float(vs.inner_prod(z, v)))
    assert close(vs.add(x, vs.add(y, z)), vs.add(vs.add(x, y), z))
    assert close(vs.add(vs.zeros(), x), x)
    assert close(vs.zeros(), vs.add(x, vs.scalar_mul(x, -1.0)))
    assert close(vs.scalar_mul(x, a * b), vs.scalar_mul(vs.scalar_mul(x, a), b))
    assert close(vs.scalar_mul(vs.add(x, y), a), vs.add(vs.scalar_mul(x, a), vs.scalar_mul(y, a)))
    basis = list(vs.standard_basis())
    assert len(basis) == vs.size
    assert all(vspace(e) == vs for e in basis)
    assert vspace(vs.ones()) == vs and vspace(vs.zeros()) == vs
    # the inner product recovers coordinates in the standard basis
    total = sum(float(vs.inner_prod(e, x)) ** 2 for e in basis)
    np.testing.assert_allclose(total, float(vs.inner_prod(x, x)), rtol=1e-12)


def test_matches_autograd_extend():
    ag = pytest.importorskip("autograd", reason="HIPS autograd is the oracle for its own API")
    from autograd.extend import defvjp as ag_defvjp, primitive as ag_primitive
    import autograd.numpy as anp

    @ag_primitive
    def ag_f(x, y):
        return anp.sin(x) * y

    ag_defvjp(ag_f, lambda ans, x, y: lambda g: g * anp.cos(x) * y,
              lambda ans, x, y: lambda g: g * anp.sin(x))

    @primitive
    def f(x, y):
        return fnp.sin(x) * y

    defvjp(f, lambda ans, x, y: lambda g: g * fnp.cos(x) * y,
           lambda ans, x, y: lambda g: g * fnp.sin(x))
    x, y = np.array([0.3, 1.1]), np.array([2.0, -0.5])
    loss = lambda f_, np_: lambda x, y: np_.sum(f_(x, y) ** 2)  # noqa: E731
    for argnum in (0, 1):
        expected = ag.grad(loss(ag_f, anp), argnum)(x, y)
        got = fg.grad(loss(f, fnp), argnums=argnum)(x, y)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)


def test_autograds_deprecated_method_forms_still_work_with_a_warning():
    a = np.random.default_rng(5).standard_normal((2, 2))
    b = np.random.default_rng(6).standard_normal((2, 2))
    for form in ("defgrad", "defvjp", "defvjp_is_zero"):
        @primitive
        def mul(x, y):
            return x * y
        with pytest.warns(DeprecationWarning, match="deprecated"):
            if form == "defgrad":
                mul.defgrad(lambda ans, x, y: lambda g: y * g)
                mul.defgrad(lambda ans, x, y: lambda g: x * g, argnum=1)
            elif form == "defvjp":
                mul.defvjp(lambda g, ans, vs, gvs, x, y: y * g)
                mul.defvjp(lambda g, ans, vs, gvs, x, y: x * g, argnum=1)
            else:
                mul.defvjp_is_zero([0, 1])
        ga, gb = fg.grad(lambda x, y: fnp.sum(mul(x, y) ** 2), argnums=(0, 1))(a, b)
        if form == "defvjp_is_zero":
            np.testing.assert_array_equal(np.asarray(ga), 0)
            np.testing.assert_array_equal(np.asarray(gb), 0)
        else:
            np.testing.assert_allclose(np.asarray(ga), 2 * a * b * b)
            np.testing.assert_allclose(np.asarray(gb), 2 * a * b * a)
            check_grads(lambda x, y: mul(x, y), (a, b), order=1)
