"""funcgrad.lax against JAX's lax: values, errors, derivatives in both modes (closed forms and
float64 finite differences), vmap (batched predicates become selects; a batched while_loop
runs until every example is done), and the per-step structure a compiling trace hooks into.

Expected values are JAX 0.10's (x64), written out so the tests mean something without JAX;
where JAX is installed the same programs are also compared live."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad._src.batching import BatchTrace, BatchTracer
from funcgrad._src.lax import run_scan
from funcgrad.test_util import check_grads


def fd(f, x, eps=1e-6):
    """Central finite difference of a scalar function of a scalar, in float64."""
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def values(x):
    return np.asarray(x).tolist()


# --- cond, switch, select ---------------------------------------------------------------
def test_cond_takes_one_branch_and_differentiates_it():
    assert lax.cond(True, lambda x: x + 1, lambda x: x - 1, 1.0).item() == 2.0
    assert lax.cond(0, lambda x: x + 1, lambda x: x - 1, 1.0).item() == 0.0
    assert lax.cond(True, lambda: 1.0, lambda: 2.0).item() == 1.0
    # JAX: grad(lambda x: cond(x > 1., sin, cos, x))(0.5) == -sin(0.5)
    assert fg.grad(lambda x: lax.cond(x > 1.0, fnp.sin, fnp.cos, x))(0.5).item() == \
        pytest.approx(-np.sin(0.5), abs=1e-15)
    assert fg.jvp(lambda x: lax.cond(x > 1.0, fnp.sin, fnp.cos, x), (2.0,), (1.0,))[1].item() \
        == pytest.approx(np.cos(2.0))
    # JAX traces both branches (true_fun first) whatever the predicate: both are called
    ran = []
    assert lax.cond(False, lambda: ran.append("t") or 1.0, lambda: ran.append("f") or 2.0) \
        .item() == 2.0
    assert ran == ["t", "f"]
    assert lax.cond(True, lambda x: x * 2, lambda x: x, operand=3.0).item() == 6.0


def test_cond_batched_predicate_becomes_select():
    xs = fnp.array([-1.0, 0.5, 2.0])
    f = lambda x: lax.cond(x > 0, fnp.sin, fnp.cos, x)  # noqa: E731
    # JAX: vmap(grad(f))(xs)
    assert values(fg.vmap(fg.grad(f))(xs)) == \
        pytest.approx([0.8414709848078965, 0.8775825618903728, -0.4161468365471424])
    assert values(fg.vmap(f)(xs)) == pytest.approx([np.cos(-1.0), np.sin(0.5), np.sin(2.0)])
    assert values(fg.vmap(lambda x: lax.cond(x > 0, lambda v: v * 2, lambda v: -v, x))(
        fnp.array([-1.0, 2.0]))) == [1.0, 4.0]
    assert values(fg.vmap(lambda p: lax.cond(p, lambda: fnp.ones(2), lambda: fnp.zeros(2)))(
        fnp.array([True, False]))) == [[1.0, 1.0], [0.0, 0.0]]
    # a batch of one must not be read as a concrete predicate
    assert values(fg.vmap(f)(fnp.array([-1.0]))) == pytest.approx([np.cos(-1.0)])
    # reverse mode through the select, per example
    g = fg.grad(lambda v: fnp.sum(fg.vmap(f)(v)))(xs)
    assert values(g) == pytest.approx([np.sin(1.0), np.cos(0.5), np.cos(2.0)])


def test_cond_errors_as_jax():
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        lax.cond(fnp.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="Pred type must be either boolean or number"):
        lax.cond(1.5, lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="same pytree structure"):
        fg.vmap(lambda x: lax.cond(x > 0, lambda: x, lambda: (x, x)))(fnp.ones(2))
    with pytest.raises(TypeError, match="shapes do not match"):
        fg.vmap(lambda x: lax.cond(x > 0, lambda: fnp.ones(2), lambda: fnp.ones(3)))(fnp.ones(2))


def test_cond_checks_both_branches_under_a_concrete_predicate():
    # JAX traces both branches whatever the predicate, so a mismatch is a TypeError naming
    # both functions even when only one branch is taken (messages as JAX 0.10's)
    def one(x):
        return x

    def pair(x):
        return (x, x)

    with pytest.raises(TypeError, match=r"(?s)cond branch outputs must have the same pytree "
                       r"structure.*true_fun is one at .*false_fun is pair at .*true_fun "
                       r"output is a pytree leaf but false_fun output is a <class 'tuple'>"):
        lax.cond(True, one, pair, 1.0)
    with pytest.raises(TypeError, match=r"(?s)cond branches must have equal output types.*"
                       r"has type float64\[\] but the corresponding output of false_fun has "
                       r"type float64\[3\], so the shapes do not match"):
        lax.cond(True, one, lambda x: fnp.zeros(3), fnp.array(1.0))
    with pytest.raises(TypeError, match=r"(?s)has type float32\[\] but .* has type "
                       r"float16\[\], so the dtypes do not match"):
        lax.cond(False, lambda: fnp.float32(1), lambda: fnp.float16(1))
    # a Python int is weakly typed but still an integer: JAX refuses it against a float
    with pytest.raises(TypeError, match="dtypes do not match"):
        lax.cond(False, lambda x: x, lambda x: 1, fnp.array(1.0))
    # a Python float against a float array of another width is accepted (weak type)
    assert lax.cond(False, lambda: fnp.ones((), "float32"), lambda: 2.0).item() == 2.0
    assert lax.cond(True, lambda: 2, lambda: fnp.array(1, "int32")).item() == 2
    with pytest.raises(TypeError, match=r"(?s)switch branch outputs must have the same pytree "
                       r"structure.*branch 0 is .*branch 2 is"):
        lax.switch(0, [lambda x: x, lambda x: x * 2, lambda x: [x]], 1.0)
    # x[5] clamps, as in JAX, so that branch's output is a scalar: JAX's mismatch
    xs = fnp.array([1.0, 2.0])
    with pytest.raises(TypeError, match=r"(?s)has type float64\[2\] but .* has type float64\[\]"):
        lax.cond(True, lambda x: x * 3, lambda x: x[5], xs)
    # a branch not taken that fails on these values (an index promised in bounds that is
    # not, a singular matrix: JAX traces them abstractly) is not checked; the branch taken
    # runs and is differentiated as before
    assert values(lax.cond(True, lambda x: x * 3, lambda x: x.at[5].get(mode="promise_in_bounds"),
                           xs)) == [3.0, 6.0]
    assert values(lax.cond(True, lambda x: x * 3,
                           lambda x: fnp.linalg.inv(fnp.zeros((2, 2))) @ x, xs)) == [3.0, 6.0]
    assert fg.grad(lambda x: lax.cond(x > 0, lambda v: v ** 2, lambda v: -v, x))(3.0).item() \
        == 6.0


def test_switch():
    branches = [lambda x: x, lambda x: x * 2, lambda x: x * 3]
    assert lax.switch(1, branches, 5.0).item() == 10.0
    assert lax.switch(5, branches, 1.0).item() == 3.0  # clamped, as JAX
    assert lax.switch(-5, branches, 1.0).item() == 1.0
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(1.0, branches, 1.0)
    # JAX: vmap over batched indices, out of range clamped
    out = fg.vmap(lambda i, x: lax.switch(i, [fnp.sin, fnp.cos, lambda v: v * 3], x))(
        fnp.array([0, 1, 2, 9, -1]), fnp.arange(5.0))
    assert values(out) == pytest.approx([0.0, 0.5403023058681398, 6.0, 9.0,
                                         -0.7568024953079282])
    assert fg.grad(lambda x: lax.switch(1, [fnp.sin, fnp.cos], x))(0.3).item() == \
        pytest.approx(-np.sin(0.3))


def test_select():
    assert values(lax.select(fnp.array([True, False]), fnp.ones(2), fnp.zeros(2))) == [1.0, 0.0]
    assert values(lax.select(True, fnp.ones(2), fnp.zeros(2))) == [1.0, 1.0]
    with pytest.raises(TypeError, match="lax.select requires arguments to have the same dtypes"):
        lax.select(fnp.array([True, False]), fnp.ones(2), fnp.zeros(2, dtype=np.float32))
    with pytest.raises(TypeError, match="same shapes"):
        lax.select(True, fnp.ones(2), fnp.ones(3))
    pred = np.array([True, False, True])
    g = fg.grad(lambda a, b: fnp.sum(lax.select(pred, a, b) ** 2), argnums=(0, 1))(
        fnp.array([1.0, 2.0, 3.0]), fnp.array([4.0, 5.0, 6.0]))
    assert values(g[0]) == [2.0, 0.0, 6.0] and values(g[1]) == [0.0, 10.0, 0.0]
    check_grads(lambda a, b: lax.select(pred, fnp.sin(a), b * a), (np.array([0.1, 0.2, 0.3]),
                                                                   np.array([1.0, 2.0, 3.0])),
                order=2)


# --- while_loop and fori_loop ------------------------------------------------------------
def while_body(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]


def test_while_loop_forward_mode_only():
    assert lax.while_loop(lambda c: c < 10, lambda c: c * 2, 1).item() == 16
    assert lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0).item() == 3.0
    out, tangent = fg.jvp(while_body, (2.0,), (1.0,))
    assert (out.item(), tangent.item()) == (8.0, 12.0)  # x^3 and 3x^2, as JAX
    # jacfwd through a data-dependent trip count (JAX: 0.3612508200936214)
    f = lambda x: lax.while_loop(  # noqa: E731
        lambda c: c[1] < 5, lambda c: (fnp.sin(c[0]) * 2, c[1] + 1), (x, 0))[0]
    assert fg.jacfwd(f)(0.4).item() == pytest.approx(0.3612508200936214, rel=1e-13)
    assert fg.jacfwd(f)(0.4).item() == pytest.approx(fd(lambda v: f(v).item(), 0.4), rel=1e-6)


def test_while_loop_refuses_reverse_mode_with_jax_error():
    message = "Reverse-mode differentiation does not work for lax.while_loop"
    with pytest.raises(ValueError, match=message) as info:
        fg.grad(while_body)(2.0)
    assert "fori_loop with static start/stop" in str(info.value)
    with pytest.raises(ValueError, match=message):  # the carry is traced from the start
        fg.grad(lambda x: lax.while_loop(lambda c: c < 10, lambda c: c * 2, x))(1.0)
    with pytest.raises(ValueError, match=message):  # reverse over forward, as JAX
        fg.grad(lambda x: fg.jvp(while_body, (x,), (1.0,))[1])(2.0)


def test_while_loop_batched_predicate_runs_until_all_done():
    # JAX: each example stops at its own count
    counts, powers = fg.vmap(lambda x: lax.while_loop(
        lambda c: c[0] < x, lambda c: (c[0] + 1.0, c[1] * 2.0), (0.0, 1.0)))(
        fnp.array([1.0, 3.5, 0.0]))
    assert values(counts) == [1.0, 4.0, 0.0] and values(powers) == [2.0, 16.0, 1.0]
    assert values(fg.vmap(lambda x: lax.while_loop(lambda c: c < x, lambda c: c + 1.5, 0.0))(
        fnp.array([1.0, 4.0]))) == [1.5, 4.5]
    # a batch of one is still batched (no silent bool() of a one-element array)
    assert values(fg.vmap(lambda x: lax.while_loop(lambda c: c < x, lambda c: c + 1.0, 0.0))(
        fnp.array([2.5]))) == [3.0]


def test_while_loop_batched_predicate_under_jit_is_one_loop():
    # jit(vmap(f)) with a predicate batched by vmap: JAX runs one loop over the whole batch
    # while any example's predicate holds; jit cannot read the predicate's values, so the
    # loop goes below the vmap and jit records it once (JAX's custom-derivatives notebook)
    def newton_sqrt(a):
        return lax.while_loop(lambda x: fnp.abs(x * x - a) > 1e-12,
                              lambda x: 0.5 * (x + a / x), a)

    xs = fnp.array([1.0, 2.0, 3.0, 4.0])
    assert values(fg.jit(fg.vmap(newton_sqrt))(xs)) == pytest.approx(np.sqrt([1, 2, 3, 4]))
    assert fg.jit(fg.vmap(newton_sqrt)).lower(xs).as_text().count("while_loop") == 1

    # the carry starts unbatched (Python numbers); only the closure is batched; each
    # example keeps its own trip count (2 ** ceil(a))
    def doublings(a):
        return lax.while_loop(lambda c: c[0] < a, lambda c: (c[0] + 1, c[1] * 2.0),
                              (0.0, 1.0))

    count, power = fg.jit(fg.vmap(doublings))(fnp.array([1.0, 2.5, 4.0]))
    assert values(count) == [1.0, 3.0, 4.0] and values(power) == [2.0, 8.0, 16.0]
    eager = fg.vmap(doublings)(fnp.array([1.0, 2.5, 4.0]))
    assert values(eager[1]) == values(power)
    grid = fnp.array([[1.0, 2.0], [3.0, 0.5]])
    assert values(fg.jit(fg.vmap(fg.vmap(doublings)))(grid)[1]) == [[2.0, 4.0], [8.0, 2.0]]


def _newton(a):
    # JAX's fixed-point example: iterate until two iterates agree; at a = 1 the first guess
    # is already the root, so the loop body never runs there
    return lax.while_loop(lambda c: fnp.abs(c[0] - c[1]) > 1e-9,
                          lambda c: (c[1], 0.5 * (c[1] + a / c[1])), (a, 0.5 * (a + 1.0)))[1]


def _newton_closed_forms(a):
    """sqrt(a) and its first two derivatives, as JAX 0.10 gives them through the loop: the
    closed forms, except at a = 1 (0.5 and 0: there the first guess's own derivatives)."""
    root, slope, curve = np.sqrt(a), 0.5 / np.sqrt(a), -0.25 * a ** -1.5
    slope[a == 1.0], curve[a == 1.0] = 0.5, 0.0
    return root, slope, curve


JIT_WHILE_CASES = {
    "vmap-jvp": (lambda: fg.jit(fg.vmap(lambda x: fg.jvp(_newton, (x,), (1.0,)))),
                 lambda r, s, c: [r, s]),
    "vmap-jacfwd": (lambda: fg.jit(fg.vmap(fg.jacfwd(_newton))), lambda r, s, c: [s]),
    "jacfwd-vmap": (lambda: fg.jit(fg.jacfwd(fg.vmap(_newton))), lambda r, s, c: [np.diag(s)]),
    "vmap-jacfwd2": (lambda: fg.jit(fg.vmap(fg.jacfwd(fg.jacfwd(_newton)))),
                     lambda r, s, c: [c]),
}


@pytest.mark.parametrize("name", sorted(JIT_WHILE_CASES))
def test_while_loop_under_jit_below_forward_mode_and_vmaps(name):
    # jit(vmap(jvp(while_loop))) and its relatives: jit cannot read the predicate, so the
    # traces above it are peeled off one by one (tangents carried beside primals, batch axes
    # carried along) and jit records one loop
    make, pick = JIT_WHILE_CASES[name]
    f = make()
    for a in (np.array([1.0, 2.0, 3.0]), np.array([1.0, 18.0, 27.0])):  # the second call
        got = f(fnp.asarray(a))                                     # reuses the compiled loop
        got = got if isinstance(got, tuple) else (got,)
        for g, e in zip(got, pick(*_newton_closed_forms(a)), strict=True):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-9, atol=1e-12)
    assert f.lower(fnp.array([1.0, 2.0, 3.0])).as_text().count("while_loop") == 1


def test_while_loop_under_jit_of_nested_vmaps():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 9.0, 0.25]])
    np.testing.assert_allclose(np.asarray(fg.jit(fg.vmap(fg.vmap(_newton)))(fnp.asarray(a))),
                               np.sqrt(a), rtol=1e-9)


def test_while_loop_under_jit_with_traced_values_only_in_the_closure():
    # the carry starts as constants; what is traced above the batching vmap (a jvp's or an
    # inner vmap's value) reaches the loop through the body's closure (JAX 0.10's values)
    def power_and_slope(x):  # y ** n with n = ceil(x) steps, and d/dy = n y ** (n - 1)
        def inner(y):
            return lax.while_loop(lambda c: c[0] < x, lambda c: (c[0] + 1.0, c[1] * y),
                                  (0.0, 1.0))[1]
        return fg.jvp(inner, (x,), (1.0,))

    xs = fnp.array([1.0, 2.0, 3.0])
    power, slope = fg.jit(fg.vmap(power_and_slope))(xs)
    assert values(power) == [1.0, 4.0, 27.0] and values(slope) == [1.0, 4.0, 27.0]

    def counted(x):  # the first multiple of y at or above x, for y = 1 and 2
        return fg.vmap(lambda y: lax.while_loop(lambda c: c < x, lambda c: c + y, 0.0))(
            fnp.array([1.0, 2.0]))

    assert values(fg.jit(fg.vmap(counted))(xs)) == [[1.0, 2.0], [2.0, 2.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        fg.jit(fg.vmap(fg.grad(lambda x: lax.while_loop(
            lambda c: c[0] < 3.0, lambda c: (c[0] + 1.0, c[1] * x), (0.0, 1.0))[1])))(xs)


def test_while_loop_under_jit_and_grad_is_refused_as_jax():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                       "lax.while_loop"):
        fg.jit(fg.vmap(fg.grad(_newton)))(fnp.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        fg.jit(fg.grad(_newton))(2.0)


def test_carry_errors_name_the_component_as_jax():
    # JAX 0.10 names the body's carry parameter and the key path of the component
    with pytest.raises(TypeError, match=r"(?s)must have equal types, but they differ:\n\nThe "
                       r"input carry c has type float32\[\] but the corresponding output carry "
                       r"component has type int32\[\], so the dtypes do not match"):
        lax.scan(lambda c, x: (c.astype("int32"), x), fnp.float32(0.0), fnp.arange(3.0))
    with pytest.raises(TypeError, match=r"The input carry component carry\['b'\] has type "
                       r"float32\[\] but the corresponding output carry component has type "
                       r"float32\[2\], so the shapes do not match"):
        lax.scan(lambda carry, x: ({"a": carry["a"], "b": carry["b"] * fnp.ones(2, "float32")},
                                   x),
                 {"a": fnp.float32(0), "b": fnp.float32(1)}, fnp.arange(3.0))
    with pytest.raises(TypeError, match=r"(?s)while_loop body function carry input and carry "
                       r"output must have the same pytree structure.*The input carry c is an "
                       r"array but the corresponding component of the carry output is a "
                       r"<class 'tuple'>"):
        lax.while_loop(lambda c: c < 3, lambda c: (c, c), 0)
    with pytest.raises(ValueError, match=r"^scan got value with no leading axis to scan over: "
                       r"1.0.$"):
        lax.scan(lambda c, x: (c, x), 0.0, 1.0)
    # a Python int carry that the body makes a float is promoted, as in JAX
    assert lax.while_loop(lambda c: c < 3, lambda c: c + 0.5, 0).item() == 3.0


def test_while_loop_errors():
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: fnp.array([True]), lambda c: c, 0)
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.while_loop(lambda c: c < 1, lambda c: (c + 1, c), 0)


def test_fori_loop():
    assert lax.fori_loop(0, 5, lambda i, c: c + i, 0).item() == 10
    assert lax.fori_loop(5, 0, lambda i, c: c + i, 0).item() == 0
    assert lax.fori_loop(0, 5, lambda i, c: c + 1.5, 0).item() == 7.5
    # static bounds make it a scan: reverse mode works (JAX: 18.5 = d/dx of x^4 + x^2 + 2x + 3)
    f = lambda x: lax.fori_loop(0, 4, lambda i, c: c * x + i, 1.0)  # noqa: E731
    assert fg.grad(f)(1.5).item() == pytest.approx(4 * 1.5 ** 3 + 2 * 1.5 + 2)
    assert fg.grad(fg.grad(f))(1.5).item() == pytest.approx(12 * 1.5 ** 2 + 2)
    assert fg.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0).item() == 12.0
    # batched bounds become a while_loop, as JAX
    assert values(fg.vmap(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0.0))(
        fnp.array([0, 3, 5]))) == [0.0, 3.0, 10.0]
    with pytest.raises(TypeError, match="bounds must be integer"):
        lax.fori_loop(0.0, 3, lambda i, c: c, 0.0)


def test_fori_loop_with_bounds_traced_by_jit_is_one_while_loop():
    # JAX: jit(lambda x, n: fori_loop(0, n, lambda i, c: c * 2.0, x))(ones(2), 3) -> [8. 8.]
    traces = []

    def f(x, n):
        traces.append(n)
        return lax.fori_loop(0, n, lambda i, c: c * 2.0, x)
    jitted = fg.jit(f)
    for n in (3, 4, 0):
        assert values(jitted(np.ones(2), np.int64(n))) == [2.0 ** n] * 2
    assert len(traces) == 1  # one program for every trip count
    # forward mode through it, as JAX: d/dx x^3 = 12 at 2
    g = fg.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, 1.0))
    assert fg.jvp(lambda x: g(x, np.int64(3)), (2.0,), (1.0,))[1].item() == 12.0


# --- scan --------------------------------------------------------------------------------
XS = np.array([0.3, -0.2, 0.5, 0.1])


def rnn(w, xs):
    def step(h, x):
        h = fnp.tanh(w * h + x)
        return h, h ** 2
    h, ys = lax.scan(step, 0.1, xs)
    return h + fnp.sum(ys)


def rnn_by_hand(w, xs):
    h, total = 0.1, 0.0
    for x in xs:
        h = np.tanh(w * h + x)
        total += h ** 2
    return h + total


def test_scan_values_and_options():
    carry, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, fnp.arange(4.0))
    assert carry.item() == 6.0 and values(ys) == [0.0, 0.0, 2.0, 9.0]
    carry, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, fnp.arange(4.0), reverse=True)
    assert carry.item() == 6.0 and values(ys) == [0.0, 5.0, 6.0, 0.0]
    carry, ys = lax.scan(lambda c, _: (c + 1, c), 0.0, None, length=3)
    assert carry.item() == 3.0 and values(ys) == [0.0, 1.0, 2.0]
    carry, ys = lax.scan(lambda c, x: (c + x["a"] * x["b"][0], {"p": c, "q": (x["a"],)}), 0.0,
                         {"a": fnp.arange(3.0), "b": [fnp.ones(3) * 2]})
    assert carry.item() == 6.0 and values(ys["p"]) == [0.0, 0.0, 2.0]
    assert values(ys["q"][0]) == [0.0, 1.0, 2.0]
    assert lax.scan(lambda c, x: (c, None), 0.0, fnp.arange(4.0))[1] is None
    for unroll in (1, 2, True):
        assert lax.scan(lambda c, x: (c + x, None), 0.0, fnp.arange(4.0),
                        unroll=unroll)[0].item() == 6.0
    # zero steps: the ys still have their shape
    carry, ys = lax.scan(lambda c, x: (c + x, fnp.stack([x, x])), 1.0, fnp.zeros((0,)))
    assert carry.item() == 1.0 and ys.shape == (0, 2)


def test_scan_errors_as_jax():
    with pytest.raises(ValueError, match="scan got no values to scan over and `length` not "
                                         "provided"):
        lax.scan(lambda c, x: (c + 1, c), 0.0, None)
    with pytest.raises(ValueError, match="disagrees with leading axis sizes"):
        lax.scan(lambda c, x: (c + 1, c), 0.0, fnp.arange(4.0), length=3)
    with pytest.raises(ValueError, match="scan got values with different leading axis sizes: "
                                         "4, 3"):
        lax.scan(lambda c, x: (c + 1, c), 0.0, (fnp.arange(4.0), fnp.arange(3.0)))
    with pytest.raises(TypeError, match="carry input and carry output must have the same "
                                        "pytree structure"):
        lax.scan(lambda c, x: ((c, c), c), 0.0, fnp.arange(4.0))
    with pytest.raises(TypeError, match="dtypes do not match"):
        lax.scan(lambda c, x: (c + x, None), np.float32(0.0), fnp.arange(2.0))


def test_grad_of_scan_against_closed_form_finite_differences_and_jax():
    # JAX: rnn(0.7, xs) = 0.9529026528887352, grad = 1.3647213532331428,
    # hessian = 2.6111327363390417
    assert rnn(0.7, XS).item() == pytest.approx(rnn_by_hand(0.7, XS), rel=1e-15)
    assert rnn(0.7, XS).item() == pytest.approx(0.9529026528887352, rel=1e-14)
    g = fg.grad(rnn)(0.7, XS).item()
    assert g == pytest.approx(1.3647213532331428, rel=1e-13)
    assert g == pytest.approx(fd(lambda w: rnn_by_hand(w, XS), 0.7), rel=1e-8)
    assert values(fg.grad(rnn, 1)(0.7, XS)) == pytest.approx(
        [1.341036852454185, 1.1788193264031743, 1.5514263671496413, 1.514824041166072],
        rel=1e-13)
    assert fg.hessian(rnn)(0.7, XS).item() == pytest.approx(2.6111327363390417, rel=1e-12)
    check_grads(rnn, (0.7, XS), order=2)


def test_derivatives_with_respect_to_the_scanned_inputs():
    def weighted(xs):
        return lax.scan(lambda c, x: (c * 0.5 + x[0] * x[1], None), 0.0, xs)[0]

    xs = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    # closed form: sum_i 0.5^(n-1-i) x_i0 x_i1
    weights = np.array([0.25, 0.5, 1.0])
    g = fg.grad(weighted)(xs)
    np.testing.assert_allclose(np.asarray(g), np.stack([weights * xs[:, 1],
                                                        weights * xs[:, 0]], axis=1))
    tangent = np.arange(6.0).reshape(3, 2)
    _, t_out = fg.jvp(weighted, (xs,), (tangent,))
    assert t_out.item() == pytest.approx(float(np.sum(np.asarray(g) * tangent)))
    check_grads(weighted, (xs,), order=2)
    # vmap of grad over a batch of input sequences
    batch = np.stack([xs, 2 * xs])
    per_example = fg.vmap(fg.grad(weighted))(batch)
    np.testing.assert_allclose(np.asarray(per_example[1]), 2 * np.asarray(g))


def test_jvp_of_reverse_scan():
    # JAX: jvp(lambda w: scan(lambda c, x: (c * w + x, c), 1.0, xs, reverse=True), (0.7,), (1.0,))
    (carry, ys), (t_carry, t_ys) = fg.jvp(
        lambda w: lax.scan(lambda c, x: (c * w + x, c), 1.0, XS, reverse=True), (0.7,), (1.0,))
    assert carry.item() == pytest.approx(0.6794) and t_carry.item() == pytest.approx(2.019)
    assert values(ys) == pytest.approx([0.542, 1.06, 0.8, 1.0])
    assert values(t_ys) == pytest.approx([2.11, 1.5, 1.0, 0.0])


def test_scan_under_vmap():
    # JAX: vmap over the closed-over weight, over the scanned inputs, and of grad
    assert values(fg.vmap(lambda w: rnn(w, XS))(fnp.array([0.1, 0.7]))) == \
        pytest.approx([0.484571567560906, 0.9529026528887352], rel=1e-14)
    assert values(fg.vmap(rnn, in_axes=(None, 0))(0.7, np.stack([XS, XS * 2]))) == \
        pytest.approx([0.9529026528887352, 1.9447649477824869], rel=1e-14)
    assert values(fg.vmap(fg.grad(rnn), in_axes=(0, None))(fnp.array([0.1, 0.7]), XS)) == \
        pytest.approx([0.40632122838851154, 1.3647213532331428], rel=1e-13)
    # scanned axis batched by an outer vmap along another axis
    batch = np.stack([XS, -XS], axis=1)  # (4, 2): vmap over axis 1
    assert values(fg.vmap(lambda xs: rnn(0.7, xs), in_axes=1)(batch)) == \
        pytest.approx([rnn_by_hand(0.7, XS), rnn_by_hand(0.7, -XS)], rel=1e-14)


def test_scan_calls_the_body_once_per_step():
    calls = []

    def body(c, x):
        calls.append(x)
        return c + x, c

    lax.scan(body, 0.0, fnp.arange(5.0))
    assert len(calls) == 5


def test_a_compiling_trace_can_take_the_whole_loop():
    """The innermost trace's ``process_scan``, where it has one, receives the loop whole:
    how jit can record the step once instead of once per iteration."""
    seen = []

    class Recording(BatchTrace):
        def process_scan(self, f, init, xs, length, reverse):
            seen.append((length, reverse))
            return run_scan(f, init, xs, length, reverse)

    trace = Recording(3)
    xs = BatchTracer(trace, np.arange(12.0).reshape(4, 3), 1)
    try:
        carry, _ = lax.scan(lambda c, x: (c + x, None), 0.0, xs)
        total = fg.lax.fori_loop(0, 2, lambda i, c: c + xs[i], 0.0)
    finally:
        trace.alive = False
    assert seen == [(4, False), (2, False)]
    assert carry._value.tolist() == [18.0, 22.0, 26.0]
    assert total._value.tolist() == [3.0, 5.0, 7.0]


# --- map, associative_scan --------------------------------------------------------------
def test_map():
    assert values(lax.map(lambda x: x ** 2, fnp.arange(4.0))) == [0.0, 1.0, 4.0, 9.0]
    assert values(lax.map(lambda x: x ** 2, fnp.arange(5.0), batch_size=2)) == \
        [0.0, 1.0, 4.0, 9.0, 16.0]
    out = lax.map(lambda p: {"s": p[0] + p[1]}, (fnp.arange(3.0), fnp.ones(3)))
    assert values(out["s"]) == [1.0, 2.0, 3.0]
    g = fg.grad(lambda x: fnp.sum(lax.map(fnp.sin, x)))(fnp.array([0.1, 0.2]))
    assert values(g) == pytest.approx(np.cos([0.1, 0.2]).tolist())


MATRICES = np.array([[[1., 2.], [0., 1.]], [[2., 0.], [1., 1.]], [[1., 1.], [1., 0.]],
                     [[0., 1.], [3., 1.]]])


def test_associative_scan():
    assert values(lax.associative_scan(fnp.add, fnp.arange(1.0, 8.0))) == \
        [1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0]
    assert values(lax.associative_scan(fnp.add, fnp.arange(1.0, 8.0), reverse=True)) == \
        [28.0, 27.0, 25.0, 22.0, 18.0, 13.0, 7.0]
    assert values(lax.associative_scan(fnp.multiply, fnp.arange(1.0, 7.0).reshape(2, 3),
                                       axis=1)) == [[1.0, 2.0, 6.0], [4.0, 20.0, 120.0]]
    # non-commutative: JAX's order, forwards and reversed
    assert values(lax.associative_scan(fnp.matmul, MATRICES)) == \
        [[[1.0, 2.0], [0.0, 1.0]], [[4.0, 2.0], [1.0, 1.0]], [[6.0, 4.0], [2.0, 1.0]],
         [[12.0, 10.0], [3.0, 3.0]]]
    assert values(lax.associative_scan(fnp.matmul, MATRICES, reverse=True)) == \
        [[[2.0, 4.0], [11.0, 25.0]], [[2.0, 0.0], [11.0, 3.0]], [[1.0, 0.0], [4.0, 3.0]],
         [[0.0, 1.0], [3.0, 1.0]]]
    # pytrees: a linear recurrence as JAX's docs write it
    a, b = lax.associative_scan(lambda x, y: (x[0] * y[0], x[1] * y[0] + y[1]),
                                (fnp.array([1.0, 2, 3, 4, 5]), fnp.ones(5)), reverse=True)
    assert values(a) == [120.0, 120.0, 60.0, 20.0, 5.0]
    assert values(b) == [34.0, 33.0, 16.0, 5.0, 1.0]
    g = fg.grad(lambda x: fnp.sum(lax.associative_scan(fnp.multiply, x)))(
        fnp.array([1.0, 2.0, 3.0]))
    assert values(g) == [1.0 + 2.0 + 6.0, 1.0 + 3.0, 2.0]  # d/dx of x0 + x0x1 + x0x1x2


def test_stop_gradient_from_lax_cuts_the_derivative():
    # the temporal-difference loss of JAX's cookbook: the target is held constant, so
    # d/dtheta -0.5 (target - v(theta))^2 = (target - v) * s_prev, target's own path cut
    def td_loss(theta, s_prev, r, s):
        target = r + fnp.dot(theta, s)
        return -0.5 * (lax.stop_gradient(target) - fnp.dot(theta, s_prev)) ** 2

    theta, s_prev, s = fnp.array([0.1, -0.1, 0.0]), fnp.array([1.0, 2.0, -1.0]), \
        fnp.array([2.0, 1.0, 0.0])
    got = fg.grad(td_loss)(theta, s_prev, 1.0, s)
    np.testing.assert_allclose(np.asarray(got), [1.2, 2.4, -1.2], rtol=1e-12)  # JAX's output
    assert lax.stop_gradient is fg.stop_gradient
    assert fg.grad(lambda x: lax.stop_gradient({"a": x * x})["a"] + x)(3.0).item() == 1.0


# --- live JAX ----------------------------------------------------------------------------
def test_against_live_jax():
    jax = pytest.importorskip("jax", reason="JAX is an optional oracle; literal values above")
    jnp = jax.numpy
    jlax = jax.lax
    xs = jnp.asarray(XS, dtype=jnp.float32)

    def jrnn(w, xs):
        def step(h, x):
            h = jnp.tanh(w * h + x)
            return h, h ** 2
        h, ys = jlax.scan(step, 0.1, xs)
        return h + jnp.sum(ys)

    # float32 unless x64 is enabled: compare at float32 precision
    assert float(jax.grad(jrnn)(0.7, xs)) == pytest.approx(fg.grad(rnn)(0.7, XS).item(), rel=1e-5)
    f = lambda x: jlax.cond(x > 0, jnp.sin, jnp.cos, x)  # noqa: E731
    got = fg.vmap(fg.grad(lambda x: lax.cond(x > 0, fnp.sin, fnp.cos, x)))(fnp.array([-1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.vmap(jax.grad(f))(
        jnp.array([-1.0, 2.0]))), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(lax.associative_scan(fnp.matmul, MATRICES, reverse=True)),
        np.asarray(jlax.associative_scan(jnp.matmul, jnp.asarray(MATRICES), reverse=True)))
    with pytest.raises(ValueError) as jax_error:
        jax.grad(lambda x: jlax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x),
                                           (0, 1.0))[1])(2.0)
    with pytest.raises(ValueError) as ours:
        fg.grad(while_body)(2.0)
    assert str(ours.value).startswith(str(jax_error.value).rstrip("."))
