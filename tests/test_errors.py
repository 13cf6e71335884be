"""Bad input fails at the boundary, with a message that names the problem and the fix."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src.declare import primitive


def test_non_scalar_output_names_the_fixes():
    with pytest.raises(TypeError) as err:
        fg.grad(fnp.sin)(fnp.ones(3))
    msg = str(err.value)
    assert "scalar" in msg and "(3,)" in msg and ".sum()" in msg and "vjp" in msg and "jacrev" in msg


def test_tuple_output_without_has_aux():
    with pytest.raises(TypeError, match="has_aux=True"):
        fg.grad(lambda x: (x, x))(1.0)


@pytest.mark.parametrize("bad", [3, np.arange(3), True, np.array([True, False])])
def test_integer_and_bool_inputs(bad):
    with pytest.raises(TypeError) as err:
        fg.grad(lambda x: fnp.sum(x * 1.0))(bad)
    msg = str(err.value)
    assert "float" in msg and ("2.0" in msg or "astype" in msg)


def test_integer_output():
    with pytest.raises(TypeError, match="float output"):
        fg.grad(lambda x: fnp.argmax(x))(fnp.ones(3))


def test_non_array_input():
    with pytest.raises(TypeError, match="str, not an array"):
        fg.grad(lambda s: 1.0)("hello")


def test_cotangent_shape_and_dtype_mismatch():
    out, vjp_fn = fg.vjp(fnp.sin, fnp.ones(3))
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(3,\)"):
        vjp_fn(fnp.ones(2))
    with pytest.raises(TypeError, match="float32.*astype"):
        vjp_fn(np.ones(3, dtype=np.float32))
    with pytest.raises(TypeError, match="structure"):
        vjp_fn((fnp.ones(3), fnp.ones(3)))


def test_primitive_without_rule_fails_when_recorded():
    no_rule = primitive("mystery", np.sin, nargs=1)
    partial = primitive("half_rule", np.add, nargs=2, vjps=(lambda ct, out, x, y: ct, None))
    with pytest.raises(fg.FuncgradError, match="mystery.*argument 0"):
        fg.grad(lambda x: no_rule(x))(1.0)
    # The first argument is fine; the second has no rule: named, at record time.
    assert fg.grad(lambda x: partial(x, 2.0))(1.0) == 1.0
    with pytest.raises(fg.FuncgradError, match="half_rule.*argument 1.*stop_gradient"):
        fg.grad(lambda y: partial(2.0, y))(1.0)


def test_leaked_tracer():
    leaked = []
    fg.grad(lambda x: (leaked.append(x), x * 2.0)[1])(1.0)
    with pytest.raises(fg.FuncgradError, match="leaked"):
        fnp.sin(leaked[0])


def test_immutability_names_the_alternatives():
    x = fnp.zeros(3)
    with pytest.raises(TypeError) as err:
        x[0] = 1.0
    assert "x.at[index].set(value)" in str(err.value) and "funcgrad.mutable" in str(err.value)


def test_traced_values_refuse_silent_concretisation():
    with pytest.raises(TypeError, match="drop its derivative"):
        fg.grad(lambda x: fnp.array(np.asarray(x)).sum())(fnp.ones(2))
    with pytest.raises(TypeError, match="float"):
        fg.grad(lambda x: float(x))(1.0)


def test_argnums_checks():
    with pytest.raises(ValueError, match="argnums=2"):
        fg.grad(lambda a, b: a * b, argnums=2)(1.0, 2.0)
    with pytest.raises(TypeError, match="argnums"):
        fg.grad(lambda a: a, argnums="0")(1.0)


def test_unknown_numpy_name_says_how_to_add_it():
    with pytest.raises(AttributeError, match="has no attribute"):
        fnp.some_function_numpy_does_not_have_either  # noqa: B018
    with pytest.raises(AttributeError, match="declared.*_primitives.py"):
        fnp.busday_count  # a real NumPy function with no funcgrad declaration  # noqa: B018


def test_numpy_function_without_rule_on_tracer():
    with pytest.raises(TypeError, match="no funcgrad derivative rule"):
        fg.grad(lambda x: np.busday_count(x, x).sum() * 1.0)(fnp.ones(3))
    # Through a list NumPy cannot see the tracer; converting it then fails just as clearly.
    with pytest.raises(TypeError, match="drop its derivative"):
        fg.grad(lambda x: np.busday_count([x], [x]).sum() * 1.0)(fnp.ones(3))
