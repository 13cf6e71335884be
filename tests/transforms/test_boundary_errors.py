"""Misuse at the transforms' boundary gets a clear error naming the problem and the fix, of
JAX's class; vmap never wraps an out-of-range axis silently (it raises what the unbatched
call raises)."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

try:
    from numpy.exceptions import AxisError
except ImportError:  # NumPy < 1.25
    AxisError = np.AxisError

X = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("per_row", [
    lambda r: fnp.sum(r, axis=1),
    lambda r: fnp.max(r, axis=-2),
    lambda r: fnp.cumsum(r, axis=2),
    lambda r: fnp.sum(r, axis=(0, 1)),
    lambda r: fnp.argmax(r, axis=1),
])
def test_vmap_out_of_range_axis_raises_what_the_unbatched_call_raises(per_row):
    with pytest.raises(AxisError) as unbatched:
        per_row(fnp.array(X[0]))
    with pytest.raises(AxisError) as batched:  # was [3, 12]: the batch's axis 1 wrapped in
        fg.vmap(per_row)(X)
    assert str(batched.value) == str(unbatched.value)


def test_vmap_in_range_negative_axes_still_map_correctly():
    np.testing.assert_allclose(fg.vmap(lambda r: fnp.sum(r, axis=-1))(X), X.sum(axis=1))
    np.testing.assert_allclose(fg.vmap(lambda r: fnp.cumsum(r, axis=0))(X), X.cumsum(axis=1))
    np.testing.assert_allclose(fg.vmap(lambda r: r * 2, out_axes=-1)(X), (X * 2).T)


def test_vmap_out_axes_out_of_range():
    with pytest.raises(AxisError, match="out_axes=2"):
        fg.vmap(lambda r: r * 2, out_axes=2)(np.arange(3.0))  # 1-d output: axes 0 and 1 only
    with pytest.raises(AxisError, match="out_axes=3"):
        fg.vmap(lambda r: r * 2.0, out_axes=3)(X)
    with pytest.raises(AxisError, match="out_axes"):  # an output that is not batched too
        fg.vmap(lambda r: fnp.ones(2), out_axes=2)(X)
    np.testing.assert_allclose(fg.vmap(lambda r: r * 2, out_axes=1)(X), (X * 2).T)


@pytest.mark.parametrize("in_axes", [0.5, "0", True, (0, 1.0), [None, "a"], {"x": 1.5}])
def test_vmap_in_axes_of_the_wrong_type_is_a_type_error(in_axes):
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
        fg.vmap(lambda a, b=None: a, in_axes=in_axes)(X, X)


def test_vmap_in_axes_dict_with_missing_or_extra_keys():
    tree = {"a": X, "b": X}
    with pytest.raises(ValueError, match="lacks the key\\(s\\) 'a'.*keys \\('a', 'b'\\)"):
        fg.vmap(lambda d: d["a"], in_axes=({"b": 0},))(tree)
    with pytest.raises(ValueError, match="has key\\(s\\) 'c' the value does not have"):
        fg.vmap(lambda d: d["a"], in_axes=({"a": 0, "b": 0, "c": 0},))(tree)
    out = fg.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))(
        {"a": X, "b": X[0]})
    np.testing.assert_allclose(out, X + X[0])


def test_vmap_in_axes_tuple_of_the_wrong_length():
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        fg.vmap(lambda a, b: a, in_axes=(0,))(X, X)


def test_python_control_flow_on_a_batched_value_names_vmap_and_where():
    def relu_by_if(a):
        return a if a > 0 else 0.0 * a

    with pytest.raises(TypeError, match="vmap.*funcgrad.numpy.where"):
        fg.vmap(relu_by_if)(np.array([1.0, -1.0]))
    with pytest.raises(TypeError, match="vmap"):
        fg.vmap(lambda a: fnp.ones(int(a)))(np.array([1.0, 2.0]))
    # not batched: control flow on values is fine, even under grad inside vmap's reach
    assert fg.grad(relu_by_if)(2.0) == 1.0
    np.testing.assert_allclose(fg.vmap(lambda a: fnp.where(a > 0, a, 0.0))(np.array([1.0, -1.0])),
                               [1.0, 0.0])


def test_argnums_naming_an_argument_twice():
    with pytest.raises(ValueError, match="argnums=\\(0, 0\\) names an argument more than once"):
        fg.grad(lambda a: a * a, argnums=(0, 0))(1.0)
    with pytest.raises(ValueError, match="more than once"):
        fg.grad(lambda a, b: a * b, argnums=(1, -1))(1.0, 2.0)
    with pytest.raises(TypeError, match="argnums must be an int"):
        fg.grad(lambda a: a, argnums=True)(1.0)


def test_errors_of_grad_say_grad_and_of_value_and_grad_say_value_and_grad():
    with pytest.raises(TypeError, match=r"\(2,\)\. grad needs a scalar output"):
        fg.grad(lambda a: a * 2)(np.ones(2))
    with pytest.raises(TypeError, match=r"\(2,\)\. value_and_grad needs a scalar output"):
        fg.value_and_grad(lambda a: a * 2)(np.ones(2))
    with pytest.raises(TypeError, match="^grad: argument 0 has dtype int"):
        fg.grad(lambda a: a * 2)(np.array(3))


def test_grad_of_a_one_element_output_is_that_elements_gradient_as_in_autograd():
    # JAX refuses shape (1,); HIPS autograd's own tests take grad of sum(..., keepdims=True),
    # so funcgrad accepts one element in any shape and differentiates it.
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    for keep in [dict(keepdims=True), dict(axis=(0, 1), keepdims=True)]:
        f = lambda a, keep=keep: fnp.sum(fnp.sin(a), **keep)
        np.testing.assert_allclose(fg.grad(f)(x), np.cos(x), rtol=1e-15)
        value, g = fg.value_and_grad(f)(x)
        assert np.shape(value) == (1, 1)
        np.testing.assert_allclose(value, np.sin(x).sum(keepdims=True))
        # second order, and under jit and vmap
        np.testing.assert_allclose(fg.grad(lambda a: fnp.sum(fg.grad(f)(a)))(x), -np.sin(x),
                                   rtol=1e-15)
        np.testing.assert_allclose(fg.jit(fg.grad(f))(x), np.cos(x), rtol=1e-15)
        np.testing.assert_allclose(fg.vmap(fg.grad(f))(np.stack([x, 2 * x])),
                                   np.cos(np.stack([x, 2 * x])), rtol=1e-15)
    assert fg.grad(lambda a: a * fnp.ones((1, 1, 1)) * 3.0)(1.0) == 3.0
    # two or more elements, or a container, stay refused with JAX's sentence
    with pytest.raises(TypeError, match=r"^Gradient only defined for scalar-output "
                       r"functions\. Output had shape: \(1, 2\)"):
        fg.grad(lambda a: a * fnp.ones((1, 2)))(1.0)
    with pytest.raises(TypeError, match="^Gradient only defined for scalar-output functions"):
        fg.grad(lambda a: (a, a))(1.0)


def test_vmap_axis_size():
    np.testing.assert_allclose(fg.vmap(lambda x: x * 2, in_axes=None, axis_size=3)(1.0),
                               [2.0, 2.0, 2.0])
    np.testing.assert_allclose(fg.vmap(lambda x: x * 2, axis_size=2)(np.ones(2)), [2.0, 2.0])
    with pytest.raises(ValueError, match="axis_size=3, but the mapped axes have size 2"):
        fg.vmap(lambda x: x, axis_size=3)(np.ones(2))
    with pytest.raises(ValueError, match="no argument is mapped.*axis_size"):
        fg.vmap(lambda x: x, in_axes=None)(np.ones(2))
    with pytest.raises(TypeError, match="axis_size must be a non-negative int"):
        fg.vmap(lambda x: x, axis_size=2.0)


def test_python_number_cotangents_take_the_outputs_dtype() -> None:
    z = 0.5 + 0.5j
    _, vjp_fn = fg.vjp(fnp.sin, z)
    for ct in (1.0 + 0j, 1.0):                    # JAX's convention: ct * cos(z), no conjugate
        assert complex(vjp_fn(ct)[0]) == pytest.approx(np.cos(z), rel=1e-15)
    _, vjp_fn = fg.vjp(fnp.sin, 0.5)
    with pytest.raises(TypeError, match="cotangent 0 has dtype complex128.*float64"):
        vjp_fn(1j)                                # never silently made real
    # under an outer transform the output is a tracer: its dtype is read, not converted
    assert fg.grad(lambda x: fg.vjp(fnp.sin, x)[1](1.0)[0])(0.3).item() == pytest.approx(-np.sin(0.3))
    assert fg.jit(lambda x: fg.vjp(fnp.sin, x)[1](1.0)[0])(0.3).item() == pytest.approx(np.cos(0.3))


def test_integer_and_bool_outputs_take_any_cotangent_of_their_shape() -> None:
    # JAX 0.10: jax.vjp(lambda x, y: x == y, .7, 1.8)[1](1.0) == (0., 0.); an int32[3]
    # output takes a float32[3] cotangent (zeros back) and refuses a float32[2] one
    _, vjp_fn = fg.vjp(lambda x, y: x == y, 0.7, 1.8)
    assert [g.item() for g in vjp_fn(1.0)] == [0.0, 0.0]
    _, vjp_fn = fg.vjp(lambda x: (x * 3).astype(int), np.ones(3))
    (g,) = vjp_fn(np.ones(3))
    assert g.shape == (3,) and g.dtype == np.float64 and not np.asarray(g).any()
    with pytest.raises(ValueError, match="cotangent 0 has shape"):
        vjp_fn(np.ones(2))
    # a float output stays strict: an integer cotangent is refused
    _, vjp_fn = fg.vjp(fnp.sin, np.ones(3))
    with pytest.raises(TypeError, match="cotangent 0 has dtype int64"):
        vjp_fn(np.ones(3, dtype=int))


def test_python_number_tangents_take_the_primals_dtype() -> None:
    # JAX 0.10: jvp(lambda z: z * 2, (1.5+0.5j,), (0.7-0.3j,)) == (3+1j, 1.4-0.6j)
    out, t = fg.jvp(lambda z: z * 2, (1.5 + 0.5j,), (0.7 - 0.3j,))
    assert complex(out) == 3 + 1j and complex(t) == pytest.approx(1.4 - 0.6j, rel=1e-15)
    out, t = fg.jvp(fnp.sin, (np.float32(0.5),), (1.0,))   # a float takes float32
    assert t.dtype == np.float32 and t.item() == pytest.approx(np.cos(0.5), rel=1e-6)
    with pytest.raises(TypeError, match="tangent 0 has dtype complex128.*float64"):
        fg.jvp(fnp.sin, (0.5,), (1j,))                     # never silently made real
    _, vjp_fn = fg.vjp(fnp.sin, np.float32(0.5))            # likewise a cotangent
    assert vjp_fn(1.0)[0].dtype == np.float32
