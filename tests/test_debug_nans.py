"""funcgrad.debug_nans and config: stop at the first primitive whose forward or backward pass
makes a NaN, naming the primitive, the pass and the user's line; NumPy's RuntimeWarnings
raised inside the engine's rules point at the user's line, not at engine files."""
from __future__ import annotations

import inspect
import threading
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_forward_nan_names_the_primitive_the_pass_and_the_line():
    def f(x):
        y = fnp.sin(x)
        return fnp.log(y - 2.0)  # the NaN is made here

    with fg.debug_nans():
        with pytest.raises(FloatingPointError) as err:
            fg.grad(f)(0.5)
    message = str(err.value)
    assert "the forward pass of log produced NaN" in message
    assert f"{__file__}\", line {_line_of(f, 'fnp.log(y')}" in message


def test_backward_nan_names_the_primitive_whose_rule_made_it_and_where_it_was_recorded():
    def f(x):
        root = fnp.sqrt(x)  # at 0 the rule divides by zero: 0 * inf = NaN
        return root * 0.0

    with fg.debug_nans():
        with pytest.raises(FloatingPointError) as err:
            fg.grad(f)(0.0)
    message = str(err.value)
    assert "the backward pass of sqrt produced NaN" in message
    assert f"line {_line_of(f, 'fnp.sqrt(x)')}" in message


def test_eager_calls_are_checked_too_and_the_flag_is_scoped():
    with fg.debug_nans():
        with pytest.raises(FloatingPointError, match="forward pass of log"):
            fnp.log(fnp.array(-1.0))
        assert fg.config.debug_nans
    assert not fg.config.debug_nans
    with np.errstate(invalid="ignore"):
        assert np.isnan(fnp.log(fnp.array(-1.0)))
    # no NaN: nothing changes
    with fg.debug_nans():
        assert np.isclose(fg.grad(fnp.log)(2.0), 0.5)


def test_config_flag_as_jax_spells_it():
    assert fg.config.debug_nans is False
    fg.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="forward pass of sqrt"):
            fg.grad(fnp.sqrt)(-1.0)
    finally:
        fg.config.update("debug_nans", False)
    with np.errstate(invalid="ignore"):
        assert np.isnan(fg.grad(fnp.sqrt)(-1.0))
    with pytest.raises(AttributeError, match="no setting"):
        fg.config.update("debug_infs_and_more", True)


def test_runtime_warnings_in_rules_point_at_the_users_line():
    def f(x):
        return fnp.sqrt(x)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call_line = inspect.currentframe().f_lineno + 1
        g = fg.grad(f)(0.0)
    assert g == np.inf
    [w] = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert w.filename == __file__ and w.lineno == call_line
    assert "divide by zero encountered in sqrt" in str(w.message)
    assert "backward pass" in str(w.message)


def test_forward_warnings_under_a_transform_point_at_the_users_line():
    def f(x):
        return fnp.log(x - 3.0) * 0.0

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fg.grad(f)(1.0)
    lines = {(w.filename, w.lineno) for w in caught if issubclass(w.category, RuntimeWarning)}
    assert (__file__, _line_of(f, "fnp.log")) in lines
    assert not [w for w in caught if "funcgrad" in w.filename.replace(__file__, "")]


def test_the_users_numpy_error_settings_are_respected():
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            fg.grad(fnp.sqrt)(0.0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fg.grad(fnp.sqrt)(0.0) == np.inf


def test_debug_nans_in_one_thread_does_not_leak_numpy_state_into_another():
    seen = {}

    def other():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seen["nan"] = float(fnp.log(fnp.array(-1.0)))

    with fg.debug_nans():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert np.isnan(seen["nan"])


def test_the_context_manager_is_per_thread_as_jaxs():
    errors = {}
    inside = threading.Event()
    done = threading.Event()

    def other():
        inside.wait()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                errors["other"] = float(fg.grad(fnp.sqrt)(-1.0))
            except FloatingPointError as err:  # would mean the flag leaked across threads
                errors["other"] = err
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with fg.debug_nans():
        inside.set()
        done.wait()
        with pytest.raises(FloatingPointError):
            fg.grad(fnp.sqrt)(-1.0)
    t.join()
    assert np.isnan(errors["other"])


def test_a_nan_made_without_an_invalid_operation_is_caught_at_its_primitive():
    # NaN * x raises no floating-point flag: only a check of the output finds it (as JAX's)
    def f(x):
        y = fnp.sin(x)
        return fnp.sum(y * np.nan)  # the NaN enters here

    with fg.debug_nans():
        with pytest.raises(FloatingPointError) as err:
            fg.grad(f)(0.5)
    message = str(err.value)
    assert "the forward pass of multiply produced NaN" in message
    assert f"line {_line_of(f, 'y * np.nan')}" in message
    with np.errstate(invalid="ignore"):
        assert np.isnan(fg.grad(f)(0.5))  # off again: the NaN gradient comes back


def test_eager_calls_and_jvp_are_checked_on_their_outputs():
    with fg.debug_nans():
        with pytest.raises(FloatingPointError, match="forward pass of sin"):
            fnp.sin(np.array([0.0, np.nan]))
        with pytest.raises(FloatingPointError, match="forward pass of add"):
            fg.jvp(lambda x: x + np.nan, (1.0,), (1.0,))
        assert fnp.sin(fnp.array([0.0, 1.0])).shape == (2,)  # no NaN: nothing happens
        assert fnp.isnan(fnp.array([np.nan])).tolist() == [True]  # booleans are not checked
    assert np.isnan(fnp.sin(np.nan))


def test_a_nan_cotangent_from_a_rule_names_the_entry_and_where_it_was_recorded():
    @fg.custom_vjp
    def scaled(x):
        return x * 2.0

    scaled.defvjp(lambda x: (scaled(x), None), lambda res, g: (g * np.nan,))

    def f(x):
        return scaled(x) + 1.0  # recorded here

    with fg.debug_nans():
        with pytest.raises(FloatingPointError) as err:
            fg.grad(f)(1.0)
    message = str(err.value)
    assert "the backward pass of" in message and "scaled" in message
    assert f"line {_line_of(f, 'scaled(x) + 1.0')}" in message


def test_the_check_costs_nothing_when_off():
    sin = fnp.sin.primitive
    assert sin.impl is np.sin
    with fg.debug_nans():
        assert sin.impl is not np.sin  # wrapped while on
        with fg.debug_nans():
            pass
        assert sin.impl is not np.sin
    assert sin.impl is np.sin  # and unwrapped once nothing turns it on
    fg.config.update("debug_nans", True)
    try:
        with fg.debug_nans(False):
            assert np.isnan(fnp.sin(np.nan))  # a thread or block may turn it off
    finally:
        fg.config.update("debug_nans", False)
    assert sin.impl is np.sin
