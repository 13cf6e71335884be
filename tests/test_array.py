"""funcgrad.Array: reading, operators, methods, functional updates, NumPy interoperation."""
from __future__ import annotations

import operator
import pickle

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

rng = np.random.default_rng(7)


def test_reading():
    a = fnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert isinstance(a, fg.Array)
    assert a.shape == (2, 3) and a.dtype == np.float64 and a.ndim == 2 and a.size == 6
    assert len(a) == 2 and a.T.shape == (3, 2)
    assert [row.tolist() for row in a] == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert a[1, 2].item() == 6.0 and a.tolist()[0] == [1.0, 2.0, 3.0]
    assert np.asarray(a).shape == (2, 3) and np.asarray(a).dtype == np.float64
    assert repr(fnp.array([1.0, 2.0])) == "Array([1., 2.], dtype=float64)"
    assert float(fnp.array(2.5)) == 2.5 and int(fnp.array(3)) == 3
    assert pickle.loads(pickle.dumps(a)).tolist() == a.tolist()
    with pytest.raises(TypeError, match="0-d"):
        len(fnp.array(1.0))


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.floordiv, operator.mod, operator.pow])
def test_binary_operators_match_numpy(op):
    x = np.abs(rng.standard_normal((3, 4))) + 0.5
    y = np.abs(rng.standard_normal(4)) + 0.5
    for lhs, rhs in [(fnp.array(x), fnp.array(y)), (fnp.array(x), y), (x, fnp.array(y)),
                     (fnp.array(x), 2.0), (2.0, fnp.array(y))]:
        out = op(lhs, rhs)
        assert isinstance(out, fg.Array)
        np.testing.assert_allclose(out, op(np.asarray(lhs), np.asarray(rhs)))


def test_matmul_unary_abs_comparisons():
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    np.testing.assert_allclose(fnp.array(x) @ y, x @ y)
    np.testing.assert_allclose(x @ fnp.array(y), x @ y)
    np.testing.assert_allclose(-fnp.array(x), -x)
    np.testing.assert_allclose(abs(fnp.array(x)), np.abs(x))
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
        out = op(fnp.array(x), 0.0)
        assert out.dtype == bool and out.tolist() == op(x, 0.0).tolist()


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor, operator.lshift,
                                operator.rshift])
def test_bitwise_operators_match_numpy(op):
    x, y = np.array([[1, 2, 6], [7, 0, 5]]), np.array([3, 1, 2])
    for lhs, rhs in [(fnp.array(x), fnp.array(y)), (fnp.array(x), y), (x, fnp.array(y)),
                     (fnp.array(x), 2), (2, fnp.array(y))]:
        out = op(lhs, rhs)
        assert isinstance(out, fg.Array)
        np.testing.assert_array_equal(out, op(np.asarray(lhs), np.asarray(rhs)))
    if op in (operator.and_, operator.or_, operator.xor):  # and logical on masks
        mask = np.array([True, False, True])
        np.testing.assert_array_equal(op(fnp.array(mask), mask[::-1]), op(mask, mask[::-1]))


def test_invert_is_numpys_tilde():
    """~ is bitwise on integers (as NumPy's and JAX's), logical on bools."""
    np.testing.assert_array_equal(~fnp.array([1, -2, 0]), [-2, 1, -1])
    np.testing.assert_array_equal(~fnp.array([True, False]), [False, True])


def test_comparisons_on_tracers_carry_no_derivative():
    g = fg.grad(lambda x: fnp.sum((x > 0) * x))(fnp.array([-1.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0])


def test_methods():
    x = rng.standard_normal((3, 4))
    a = fnp.array(x)
    np.testing.assert_allclose(a.sum(), x.sum())
    np.testing.assert_allclose(a.sum(axis=0), x.sum(axis=0))
    np.testing.assert_allclose(a.mean(1, keepdims=True), x.mean(1, keepdims=True))
    np.testing.assert_allclose(a.max(axis=1), x.max(axis=1))
    np.testing.assert_allclose(a.min(), x.min())
    np.testing.assert_allclose(a.prod(axis=0), x.prod(axis=0))
    np.testing.assert_allclose(a.var(axis=0, ddof=1), x.var(axis=0, ddof=1))
    np.testing.assert_allclose(a.std(), x.std())
    assert a.reshape(4, 3).shape == (4, 3) and a.reshape((2, -1)).shape == (2, 6)
    assert a.transpose().shape == (4, 3) and a.transpose(1, 0).shape == (4, 3)
    assert a.astype(np.float32).dtype == np.float32
    np.testing.assert_allclose(a.dot(x.T), x @ x.T)
    np.testing.assert_allclose(a.clip(-0.5, 0.5), np.clip(x, -0.5, 0.5))
    np.testing.assert_allclose(a.ravel(), x.ravel())
    assert a.argmax() == x.argmax()


def test_method_gradients():
    x = rng.standard_normal((3, 4))
    check_grads(lambda a: a.sum(axis=0) * a.mean(axis=1, keepdims=True), (x,), order=2,
                modes=("rev", "fwd"))
    check_grads(lambda a: a.reshape(4, 3).dot(a[:, :1]).T + a.max(axis=0).sum(), (x,), order=2,
                modes=("rev", "fwd"))
    check_grads(lambda a: a.clip(-0.3, 0.4) * a.var(axis=1, keepdims=True), (x,), order=2,
                modes=("rev", "fwd"))


def test_at_updates_values():
    x = fnp.arange(6.0)
    np.testing.assert_array_equal(x.at[2].set(10.0), [0, 1, 10, 3, 4, 5])
    np.testing.assert_array_equal(x.at[[1, 1, 3]].add(1.0), [0, 3, 2, 4, 4, 5])  # duplicates add
    np.testing.assert_array_equal(x.at[1:3].multiply(2.0), [0, 2, 4, 3, 4, 5])
    np.testing.assert_array_equal(x.at[::2].min(1.0), [0, 1, 1, 3, 1, 5])
    np.testing.assert_array_equal(x.at[-1].max(9.0), [0, 1, 2, 3, 4, 9])
    np.testing.assert_array_equal(x.at[x > 3].get(), [4, 5])
    np.testing.assert_array_equal(x, np.arange(6.0))  # the original is unchanged


def test_at_updates_gradients():
    x = rng.standard_normal(6)
    v = rng.standard_normal(2)
    check_grads(lambda x, v: fnp.sin(x.at[1:3].set(v * 2.0)), (x, v), order=2, modes=("rev", "fwd"))
    check_grads(lambda x, v: x.at[[0, 0, 4]].add(fnp.concatenate([v, v[:1]])) ** 2, (x, v),
                order=2, modes=("rev", "fwd"))
    check_grads(lambda x, v: x.at[[2, 5]].multiply(v), (x, v), order=2, modes=("rev", "fwd"))
    check_grads(lambda x, v: x.at[[2, 5]].min(v) + x.at[:2].max(v), (x, v), order=1,
                modes=("rev", "fwd"))
    with pytest.raises(NotImplementedError, match="more than once"):
        fnp.zeros(3).at[[1, 1]].multiply(2.0)


def test_indexing_forms_and_their_gradients():
    x = rng.standard_normal((4, 5, 3))
    a = fnp.array(x)
    mask = x[..., 0] > 0
    cases = [
        (1,), (-1, 2), (slice(1, None, 2),), (Ellipsis, 1), (None, 0), ([0, 2, 2],),
        (np.array([[0, 1], [3, 3]]), slice(None), 0), (mask,), (1, [0, 4], [2, 1]),
    ]
    for index in cases:
        np.testing.assert_array_equal(a[index], x[index])
        check_grads(lambda t, index=index: t[index] * 2.0, (x,), order=1, modes=("rev", "fwd"))
    # Repeated integer indices scatter-add in the backward pass.
    g = fg.grad(lambda t: fnp.sum(t[[0, 0, 1]]))(fnp.zeros(3))
    np.testing.assert_array_equal(g, [2.0, 1.0, 0.0])


def test_numpy_functions_on_concrete_arrays_compute_in_numpy_as_jax():
    """NumPy's own functions convert a concrete Array and return NumPy results (as JAX's
    arrays); operators with an ndarray keep an Array; under a transform NumPy's functions
    reach funcgrad's rules (as HIPS autograd users write)."""
    a = fnp.array([0.0, 1.0])
    assert type(np.sin(a)) is np.ndarray and type(np.atleast_1d(a)) is np.ndarray
    np.testing.assert_allclose(np.sin(a), np.sin([0.0, 1.0]))
    assert type(np.ones(2) + a) is fg.Array and type(a * np.ones(2)) is fg.Array
    g = fg.grad(lambda x: np.sum(np.sin(x) * x))(a)
    np.testing.assert_allclose(g, np.sin([0.0, 1.0]) + np.array([0.0, 1.0]) * np.cos([0.0, 1.0]))


def test_scipy_optimizer_takes_funcgrad_gradients():
    optimize = pytest.importorskip("scipy.optimize", reason="SciPy is an optional extra")
    target = np.array([1.0, -2.0, 3.0])

    def loss(x):
        return fnp.sum((x - target) ** 2) + 0.5 * fnp.sum(x ** 4)

    result = optimize.minimize(loss, np.zeros(3), jac=fg.grad(loss), method="L-BFGS-B")
    assert result.success
    # the minimum solves 2 (x - t) + 2 x^3 = 0 componentwise
    np.testing.assert_allclose(2 * (result.x - target) + 2 * result.x ** 3, 0.0, atol=1e-4)


def test_constructors():
    assert fnp.zeros((2, 3)).shape == (2, 3) and fnp.ones(2).dtype == np.float64
    np.testing.assert_array_equal(fnp.full(2, 7.0), [7.0, 7.0])
    np.testing.assert_array_equal(fnp.arange(3), [0, 1, 2])
    np.testing.assert_allclose(fnp.linspace(0, 1, 5), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(fnp.eye(2), np.eye(2))
    x = fnp.array(np.ones((2, 2), dtype=np.float32))
    for like in (fnp.zeros_like, fnp.ones_like):
        out = like(x)
        assert out.shape == (2, 2) and out.dtype == np.float32
    assert fnp.full_like(x, 3.0).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert fnp.asarray(x) is x


def test_array_of_traced_entries_is_differentiable():
    g = fg.grad(lambda x: fnp.sum(fnp.array([x, 2.0 * x, x ** 2]) ** 2))(3.0)
    assert np.isclose(g, 2 * 3.0 + 8 * 3.0 + 4 * 27.0)


# --- immutability: no public path writes into an Array --------------------------------------
def test_numpy_views_of_an_array_are_read_only():
    x = fnp.zeros(3)
    view = np.asarray(x)
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        np.array(x, copy=False)[1] = 1.0
    assert x.tolist() == [0.0, 0.0, 0.0]
    own = np.array(x)  # an explicit copy is the caller's, writable
    own[0] = 5.0
    assert x.tolist() == [0.0, 0.0, 0.0] and own[0] == 5.0
    reshaped = x.reshape(3, 1)  # results sharing the buffer are read-only too
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(reshaped)[0, 0] = 1.0


def test_no_copy_on_the_way_to_numpy():
    big = fnp.ones(1000)
    view = np.asarray(big)
    assert np.shares_memory(view, np.asarray(big))  # a view, not a copy


# --- printing as NumPy and JAX do ------------------------------------------------------------
def test_str_prints_as_numpy_and_repr_stays_array():
    assert str(fnp.array(3.0)) == "3.0" == str(np.array(3.0))
    assert str(fnp.array([1.0, 2.0])) == "[1. 2.]"
    assert repr(fnp.array(3.0)) == "Array(3., dtype=float64)"
    assert f"{fnp.array([1.0, 2.0])}" == "[1. 2.]"


def test_format_specs_and_f_strings():
    assert format(fnp.array(3.14159), ".3f") == "3.142"
    assert f"{fnp.array(2.0) * 3:8.2f}" == "    6.00"
    assert f"{fnp.array(7):d}" == "7"
    with pytest.raises(TypeError):  # as NumPy: an n-d array takes no format spec
        format(fnp.array([1.0, 2.0]), ".3f")


def test_tracer_repr_shows_the_primal_and_the_transform():
    seen = []
    fg.grad(lambda a: seen.append((repr(a), f"{a:.2f}")) or a * 2)(0.5)
    assert seen == [("Traced<float64[], grad> with primal 0.5", "0.50")]
    seen.clear()
    fg.jvp(lambda a: seen.append(repr(a)) or a, (fnp.array([1.0, 2.0]),),
           (fnp.array([1.0, 0.0]),))
    assert seen == ["Traced<float64[2], jvp> with primal [1. 2.] and tangent [1. 0.]"]
    seen.clear()
    fg.vmap(lambda a: seen.append(repr(a)) or a)(fnp.arange(3.0))
    assert seen == ["Traced<float64[], vmap> with one value per example along axis 0: [0. 1. 2.]"]


def test_is_traced():
    assert not fg.is_traced(fnp.array(1.0)) and not fg.is_traced(1.0)
    flags = []
    fg.grad(lambda a: flags.append(fg.is_traced(a)) or a)(1.0)
    fg.vmap(lambda a: flags.append(fg.is_traced(a)) or a)(fnp.arange(2.0))
    fg.jvp(lambda a: flags.append(fg.is_traced(a)) or a, (1.0,), (1.0,))
    assert flags == [True, True, True]


def test_python_numbers_from_traced_values_as_jax():
    """int() and operator.index read the concrete value where there is one (jvp, grad): an
    integer carries no derivative, so nothing is lost (JAX: jvp(lambda x: int(x) * x) at
    2.0 is (4.0, 2.0)). float() would drop the derivative and is refused (JAX raises
    ConcretizationTypeError), and so are NumPy conversions to a float dtype (JAX's
    TracerArrayConversionError). A NumPy conversion to an integer or bool dtype
    (np.int64(x)) drops nothing either, so it is allowed as int() is (HIPS autograd allows
    it; JAX refuses every NumPy conversion). Under vmap there is no single value."""
    import operator

    primal, tangent = fg.jvp(lambda x: int(x) * x, (2.0,), (1.0,))
    assert (primal.item(), tangent.item()) == (4.0, 2.0)
    assert fg.grad(lambda x: int(x) * x)(2.7).item() == 2.0
    assert fg.grad(lambda x: x * fnp.arange(5.0)[operator.index(x.astype(int))])(3.0) == 3.0
    # nested: the value two levels down is concrete too
    primal, tangent = fg.jvp(fg.grad(lambda x: int(x) * x ** 2), (2.0,), (1.0,))
    assert (primal.item(), tangent.item()) == (8.0, 4.0)
    with pytest.raises(TypeError, match=r"float\(\) of a traced funcgrad array \(jvp\)"):
        fg.jvp(lambda x: float(x) * x, (2.0,), (1.0,))
    with pytest.raises(TypeError, match="stop_gradient"):
        fg.grad(lambda x: np.float64(x) * x)(2.0)
    assert fg.grad(lambda x: np.int64(x) * x)(2.7).item() == 2.0
    primal, tangent = fg.jvp(fg.grad(lambda x: np.int64(x) * x ** 2), (2.0,), (1.0,))
    assert (primal.item(), tangent.item()) == (8.0, 4.0)
    assert fg.grad(lambda x: x * 3.0 if np.asarray(x, dtype=bool) else x)(1.0).item() == 3.0
    assert fg.grad(lambda x: x * 3.0 if np.asarray(x, dtype=bool) else x)(0.0).item() == 1.0
    with pytest.raises(TypeError, match="batched by vmap"):
        fg.vmap(lambda x: np.int64(x) * x)(np.ones(2))
    with pytest.raises(TypeError, match=r"int\(\) of a value batched by vmap"):
        fg.vmap(lambda x: int(x) * x)(np.ones(2))
    with pytest.raises(TypeError, match="batched by vmap"):
        fg.vmap(lambda i: fnp.arange(3.0)[operator.index(i)])(np.arange(2))


def test_block_until_ready_returns_the_array():
    x = fnp.ones(3)
    assert x.block_until_ready() is x  # JAX's: funcgrad computes eagerly
