"""Unsupported calls of the new functions fail with errors that name the problem and the fix,
never with a silently wrong gradient."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import FuncgradError


def test_svd_vectors_of_a_non_square_full_svd_have_no_gradient():
    f = lambda a: fnp.sum(fnp.linalg.svd(a)[0])  # noqa: E731  (full_matrices=True by default)
    with pytest.raises(FuncgradError, match="full_matrices=False"):
        fg.grad(f)(np.ones((3, 2)) + np.eye(3, 2))
    fg.grad(lambda a: fnp.sum(fnp.linalg.svd(a, full_matrices=False)[1]))(np.eye(3, 2))


def test_qr_of_a_wide_matrix_and_complete_qr_of_a_tall_one_refuse():
    with pytest.raises(FuncgradError, match="wide matrix"):
        fg.grad(lambda a: fnp.sum(fnp.linalg.qr(a)[1]))(np.eye(2, 3))
    with pytest.raises(FuncgradError, match="mode='reduced'"):
        fnp.linalg.qr(np.eye(3, 2), mode="complete")


@pytest.mark.parametrize("call, match", [
    (lambda x: fnp.pad(x, 1, mode="median"), "constant, edge, reflect, symmetric or wrap"),
    (lambda x: fnp.gradient(x, np.arange(3.0)), "scalar spacings"),
    (lambda x: fnp.quantile(x, 1.5), r"\[0, 1\]"),
    (lambda x: fnp.percentile(x, 50, method="nearest"), "method='linear'"),
    (lambda x: fnp.take_along_axis(x, np.array([0]), 0 if False else 1), "dimensions"),
    (lambda x: fnp.einsum("ij,jk->ik", x), "operand subscripts"),
    (lambda x: fnp.cumsum(x, out=x), "out="),
    (lambda x: fnp.sort(x, order="f"), "order="),
    (lambda x: fnp.split(x, 2, axis=1), "equal division"),
])
def test_unsupported_calls_say_so(call, match):
    with pytest.raises((ValueError, TypeError, NotImplementedError), match=match):
        call(fnp.ones((2, 3)))


def test_interp_sample_points_must_be_constants():
    with pytest.raises(TypeError, match="xp must be constants"):
        fg.grad(lambda xp: fnp.interp(0.5, xp, fnp.array([0.0, 1.0])))(np.array([0.0, 1.0]))


def test_quantile_q_is_not_differentiable():
    with pytest.raises(TypeError, match="q must be a constant"):
        fg.grad(lambda q: fnp.quantile(fnp.array([1.0, 2.0]), q))(0.5)


def test_polygamma_order_must_be_a_constant_integer():
    from funcgrad.scipy.special import polygamma
    with pytest.raises(TypeError, match="non-negative integer"):
        polygamma(1.5, 2.0)


@pytest.mark.parametrize("mix", [
    lambda t, a: t + a, lambda t, a: a + t, lambda t, a: a * t, lambda t, a: t - a,
    lambda t, a: a @ t, lambda t, a: a ** t,
], ids=["tensor+array", "array+tensor", "array*tensor", "tensor-array", "matmul", "pow"])
def test_a_mutable_tensor_and_an_array_do_not_mix(mix):
    # an Array holding a Tensor would belong to neither model (no graph of either, torch's
    # dtype on a funcgrad Array): the operator refuses and names both conversions
    import funcgrad.mutable as torch
    with pytest.raises(TypeError, match="do not mix in one operation") as info:
        mix(torch.ones(2), fnp.ones(2))
    assert "torch.from_numpy" in str(info.value) and "fnp" not in str(info.value)
    assert "funcgrad.numpy.asarray(tensor.detach().numpy())" in str(info.value)
    # the conversions it names work and give the plain sums
    assert np.allclose(fnp.asarray(torch.ones(2).detach().numpy()) + fnp.ones(2), 2.0)
    assert torch.equal(torch.from_numpy(np.asarray(fnp.ones(2))) + torch.ones(2),
                       torch.full((2,), 2.0, dtype=torch.float64))


@pytest.mark.parametrize("name", ["concatenate", "stack", "vstack", "hstack", "dstack",
                                  "column_stack", "row_stack"])
def test_joining_refuses_a_list_or_tuple_element_as_jax_does(name):
    join = getattr(fnp, name)
    shown = "vstack" if name == "row_stack" else name
    for element in ((fnp.ones(2),), [1.0, 2.0]):
        with pytest.raises(TypeError, match=rf"{shown} requires ndarray or scalar arguments, "
                                            rf"got <class '{type(element).__name__}'> at position 0"):
            join([element, element])
    # arrays (and the rows of one array) are what it joins
    rows = np.arange(6.0).reshape(2, 3)
    numpy_join = getattr(np, shown)
    np.testing.assert_array_equal(np.asarray(join([fnp.asarray(rows[0]), rows[1]])),
                                  numpy_join([rows[0], rows[1]]))
    np.testing.assert_array_equal(np.asarray(join(fnp.asarray(rows))), numpy_join(rows))


def test_questions_about_arrays_answer_plainly_under_every_transform():
    # JAX's jnp.shape / result_type / ndim answer with ints, tuples and dtypes under grad too
    seen = []

    def f(x):
        seen.append((fnp.shape(x), fnp.ndim(x), fnp.size(x), fnp.result_type(x),
                     fnp.isscalar(x), fnp.iscomplexobj(x)))
        return fnp.sum(x)
    x = np.ones(3)
    fg.grad(f)(x)
    fg.jvp(f, (x,), (x,))
    for answer in seen:
        assert answer == ((3,), 1, 3, np.dtype("float64"), False, False)
        assert type(answer[0]) is tuple and type(answer[0][0]) is int
        assert isinstance(answer[3], np.dtype)
    assert not isinstance(fg.grad(lambda x: (seen.append(fnp.allclose(x, x)), fnp.sum(x))[1])(x), bool)
    assert seen[-1] == True and not isinstance(seen[-1], fnp.ndarray)  # noqa: E712
