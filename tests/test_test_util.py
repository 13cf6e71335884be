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
