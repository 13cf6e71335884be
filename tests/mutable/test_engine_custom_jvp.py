"""Forward mode through a custom autograd.Function: the checks PyTorch makes on what its jvp
returns (an output that is a view of an input, or the input handed back, needs a view of that
input's tangent; an input the forward wrote in place needs its tangent written in place and
returned as-is), made only against inputs that carry a tangent; and what such a Function
returns for an input handed back unmodified (never the input object itself). Each case runs on
funcgrad.mutable and on real torch 2.13 as the oracle, with the same assertions."""
from __future__ import annotations

import pytest

from tests.mutable.pytorch_port import both, values

NOT_A_VIEW = "jvp is not returning a view\\.$"
NOT_OF_INPUT = "jvp is not returning a view of the given grad input"
NOT_OF_BASE = "jvp is not returning a view of the same base as the given grad input"
NOT_INPLACE = "must modify the corresponding gradient inplace"
NOT_AS_IS = "not returning the forward mode gradients as-is"


def first_rows(torch, answer: str):
    """forward: the first two rows of `x` (a view); jvp: as `answer` says."""
    class FirstRows(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, other):
            return x.narrow(0, 0, 2)

        @staticmethod
        def backward(ctx, g):
            return None, None

        @staticmethod
        def jvp(ctx, tx, tother):
            if answer == "view":
                return tx.narrow(0, 0, 2)
            if answer == "copy":
                return tx.narrow(0, 0, 2).clone()
            if answer == "view of a copy":
                return tx.narrow(0, 0, 2).clone().view_as(tx.narrow(0, 0, 2))
            return tother.narrow(0, 0, 2)  # "view of the other tangent"

    return FirstRows


@both()
@pytest.mark.parametrize("answer,error", [
    ("view", None), ("copy", NOT_A_VIEW), ("view of a copy", NOT_OF_INPUT),
    ("view of the other tangent", NOT_OF_INPUT)])
def test_a_view_output_needs_a_view_of_its_input_tangent(torch, answer, error):
    fwAD = torch.autograd.forward_ad
    fn = first_rows(torch, answer)
    x = torch.arange(12.0, dtype=torch.float64).reshape(4, 3)
    with fwAD.dual_level():
        tx = torch.full((4, 3), 2.0, dtype=torch.float64)
        other = fwAD.make_dual(torch.zeros(4, 3, dtype=torch.float64),
                               torch.ones(4, 3, dtype=torch.float64))
        dual = fwAD.make_dual(x, tx)
        if error is not None:
            with pytest.raises(RuntimeError, match=error):
                fn.apply(dual, other)
            return
        out = fn.apply(dual, other)
        tangent = fwAD.unpack_dual(out).tangent
        assert tangent._base is tx
        assert values(tangent).tolist() == [[2.0] * 3] * 2
        assert values(out).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@both()
@pytest.mark.parametrize("answer,error", [
    ("view", None), ("copy", NOT_A_VIEW), ("view of a copy", NOT_OF_BASE)])
def test_a_view_input_needs_a_view_of_its_tangents_base(torch, answer, error):
    fwAD = torch.autograd.forward_ad
    fn = first_rows(torch, answer)
    with fwAD.dual_level():
        tx = torch.full((4, 3), 2.0, dtype=torch.float64)
        dual = fwAD.make_dual(torch.ones(4, 3, dtype=torch.float64), tx)
        view = dual.view_as(dual)  # its tangent is a view of tx
        if error is not None:
            with pytest.raises(RuntimeError, match=error):
                fn.apply(view, torch.zeros(4, 3, dtype=torch.float64))
            return
        out = fn.apply(view, torch.zeros(4, 3, dtype=torch.float64))
        assert fwAD.unpack_dual(out).tangent._base is tx


@both()
@pytest.mark.parametrize("answer", ["view", "copy", "view of a copy"])
def test_no_view_check_against_an_input_without_tangent(torch, answer):
    # x has no tangent (jvp gets zeros for it): whatever jvp returns for its view is taken
    fwAD = torch.autograd.forward_ad
    fn = first_rows(torch, answer)
    with fwAD.dual_level():
        other = fwAD.make_dual(torch.zeros(4, 3, dtype=torch.float64),
                               torch.ones(4, 3, dtype=torch.float64))
        out = fn.apply(torch.ones(4, 3, dtype=torch.float64), other)
        assert values(fwAD.unpack_dual(out).tangent).tolist() == [[0.0] * 3] * 2


def doubling_in_place(torch, answer: str):
    """forward: x *= 2, marked dirty; jvp: as `answer` says."""
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

        @staticmethod
        def jvp(ctx, t):
            if answer == "in place":
                return t.mul_(2)
            if answer == "as given":
                return t
            if answer == "a new tensor":
                return t * 2
            return t.clone().mul_(2)  # "another tensor written in place"

    return Double


@both()
@pytest.mark.parametrize("answer,error", [
    ("in place", None), ("as given", NOT_INPLACE), ("a new tensor", NOT_INPLACE),
    ("another tensor written in place", NOT_AS_IS)])
def test_a_dirty_input_needs_its_tangent_written_in_place(torch, answer, error):
    fwAD = torch.autograd.forward_ad
    fn = doubling_in_place(torch, answer)
    with fwAD.dual_level():
        tangent = torch.ones(2, dtype=torch.float64)
        dual = fwAD.make_dual(torch.full((2,), 3.0, dtype=torch.float64), tangent)
        if error is not None:
            with pytest.raises(RuntimeError, match=error):
                fn.apply(dual)
            return
        out = fn.apply(dual)
        assert out is dual
        assert fwAD.unpack_dual(out).tangent is tangent
        assert values(tangent).tolist() == [2.0, 2.0]
        assert values(out).tolist() == [6.0, 6.0]


@both()
@pytest.mark.parametrize("answer", ["in place", "as given", "a new tensor"])
def test_a_dirty_input_without_tangent_takes_any_answer(torch, answer):
    # x has no tangent of its own (another input is dual): no in-place check
    fwAD = torch.autograd.forward_ad

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, s):
            x.mul_(s)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, None

        @staticmethod
        def jvp(ctx, tx, ts):
            if answer == "in place":
                return tx.add_(ts)
            return tx if answer == "as given" else tx + ts

    x = torch.ones(2, dtype=torch.float64)
    with fwAD.dual_level():
        s = fwAD.make_dual(torch.full((2,), 3.0, dtype=torch.float64),
                           torch.ones(2, dtype=torch.float64))
        out = Scale.apply(x, s)
        assert out is x
        expected = 0.0 if answer == "as given" else 1.0
        assert values(fwAD.unpack_dual(out).tangent).tolist() == [expected] * 2


def identity(torch):
    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    return Identity


@both()
def test_an_input_handed_back_is_a_view_of_it(torch):
    x = torch.ones(2)
    out = identity(torch).apply(x)
    assert out is not x and out._base is x and not out.requires_grad


@both()
def test_an_input_handed_back_under_no_grad_is_detached(torch):
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        out = identity(torch).apply(x)
    assert out is not x and out._base is None and not out.requires_grad
    assert values(out).tolist() == [1.0, 1.0]
