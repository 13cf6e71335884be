"""check_grads must accept correct rules and reject wrong ones, in both modes."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad import stop_gradient
from funcgrad._src.declare import elementwise, primitive
from funcgrad.test_util import check_grads

x = np.random.default_rng(0).standard_normal((3, 2))

right_sin = elementwise("right_sin", np.sin, lambda out, x: fnp.cos(x))
wrong_slope = elementwise("wrong_slope", np.sin, lambda out, x: fnp.cos(x) * 1.001)
# First order right, second order wrong: the rule is not written in differentiable ops.
frozen = primitive("frozen_sin", np.sin,
                   vjps=(lambda ct, out, x: ct * np.cos(np.asarray(x)),),
                   jvps=(lambda t, out, x: t * np.cos(np.asarray(x)),))
# Right slope, but held constant: its own derivative is lost.
constant_slope = elementwise("constant_slope", np.sin, lambda out, x: stop_gradient(fnp.cos(x)))
wrong_fwd = primitive("wrong_fwd", np.sin, vjps=(lambda ct, out, x: ct * fnp.cos(x),),
                      jvps=(lambda t, out, x: t * fnp.sin(x),))


def test_accepts_a_correct_rule():
    check_grads(right_sin, (x,), order=3, modes=("rev", "fwd"))


def test_rejects_a_wrong_reverse_rule():
    with pytest.raises(AssertionError, match=r"\(VJP\) check of wrong_slope failed: .*reverse-mode"):
        check_grads(wrong_slope, (x,), order=1, modes=("rev",))


def test_rejects_a_wrong_forward_rule_that_reverse_would_pass():
    check_grads(wrong_fwd, (x,), order=1, modes=("rev",))
    with pytest.raises(AssertionError, match=r"\(JVP\) check of wrong_fwd failed: .*forward-mode"):
        check_grads(wrong_fwd, (x,), order=1, modes=("fwd",))


def test_rejects_a_rule_wrong_only_at_second_order():
    check_grads(constant_slope, (x,), order=1, modes=("rev", "fwd"))
    with pytest.raises(AssertionError, match=r"\(VJP\) check of vjp_constant_slope failed"):
        check_grads(constant_slope, (x,), order=2, modes=("rev",))
    with pytest.raises(AssertionError, match=r"\(JVP\) check of jvp_constant_slope failed"):
        check_grads(constant_slope, (x,), order=2, modes=("fwd",))
    # A rule that leaves funcgrad for raw NumPy fails loudly at second order, never silently.
    with pytest.raises(TypeError, match="drop its derivative"):
        check_grads(frozen, (x,), order=2, modes=("rev",))


# Right in x at every order, but its VJP goes through `scaled_copy`, whose own rule is wrong:
# only a second-order check that varies the cotangent (as autograd's does) can see it.
scaled_copy = primitive("scaled_copy", lambda g: g,
                        vjps=(lambda ct, out, g: ct * 1.001,), jvps=(lambda t, out, g: t * 1.001,))
doubling = primitive("doubling", lambda x: 2.0 * x,
                     vjps=(lambda ct, out, x: scaled_copy(ct) * 2.0,),
                     jvps=(lambda t, out, x: t * 2.0,))


def test_second_order_varies_the_cotangent_too():
    check_grads(doubling, (x,), order=1, modes=("rev",))
    with pytest.raises(AssertionError, match=r"\(VJP\) check of vjp_doubling failed"):
        check_grads(doubling, (x,), order=2, modes=("rev",))
    check_grads(doubling, (x,), order=2, modes=("fwd",))  # its JVP rule is right


def test_integer_outputs_keep_a_fixed_cotangent_at_second_order():
    def values_and_order(v):
        return fnp.sin(v) * v, fnp.argsort(v, axis=0)
    check_grads(values_and_order, (x,), order=2, modes=("rev", "fwd"))
