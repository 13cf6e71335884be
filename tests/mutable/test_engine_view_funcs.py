"""A view's ``_view_func`` (the view made again from a new base) and
``_rev_view_func_unsafe`` (a base-shaped view made from a tensor laid out as the view and
sharing its storage): sizes, strides, storage offset, dtype (view_as_real / view_as_complex
change it) and values, with view replay on. Each case on funcgrad.mutable and on real torch
2.13 as the oracle, with the same assertions."""
from __future__ import annotations

import pytest

import funcgrad.mutable as fm
from tests.mutable.pytorch_port import both, values


def layout(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.dtype


VIEWS = {
    "narrow": (lambda t: t.narrow(0, 1, 1), lambda torch: torch.arange(6.0).reshape(2, 3)),
    "transpose": (lambda t: t.transpose(0, 1), lambda torch: torch.arange(6.0).reshape(2, 3)),
    "diagonal": (lambda t: t.diagonal(), lambda torch: torch.arange(9.0).reshape(3, 3)),
    "select then unsqueeze": (lambda t: t.select(1, 2).unsqueeze(0),
                              lambda torch: torch.arange(12.0).reshape(3, 4)),
    "as_strided": (lambda t: t.as_strided((2,), (3,), 1),
                   lambda torch: torch.arange(6.0).reshape(2, 3)),
    "view_as_real": (None, lambda torch: torch.tensor([[1 + 2j, 3 - 1j], [0.5j, -2.0]])),
    "view_as_complex": (None, lambda torch: torch.arange(8.0).reshape(2, 2, 2)),
}


def make(torch, kind):
    fn, base = VIEWS[kind]
    inp = base(torch).clone()  # (arange(...).reshape is itself a view)
    if kind == "view_as_real":
        return inp, torch.view_as_real(inp)
    if kind == "view_as_complex":
        return inp, torch.view_as_complex(inp)
    return inp, fn(inp)


@both()
@pytest.mark.parametrize("kind", sorted(VIEWS))
def test_view_func_makes_the_view_again_from_a_new_base(torch, kind):
    with torch.autograd._force_original_view_tracking(True):
        inp, out = make(torch, kind)
        assert out._base is inp
        new_base = inp.clone() * 2
        again = out._view_func(new_base)
        assert layout(again) == layout(out)
        assert again._base is new_base
        expected = torch.view_as_real(again) if again.dtype.is_complex else again
        got = torch.view_as_real(out) if out.dtype.is_complex else out
        assert values(expected).tolist() == (2 * values(got)).tolist()


@both()
@pytest.mark.parametrize("kind", sorted(VIEWS))
def test_rev_view_func_gives_the_base_back_from_an_alias(torch, kind):
    with torch.autograd._force_original_view_tracking(True):
        inp, out = make(torch, kind)
        alias = out.detach()
        back = out._rev_view_func_unsafe(alias)
        assert layout(back) == layout(inp)
        assert back._is_view() and back._base is alias
        as_real = torch.view_as_real if inp.dtype.is_complex else (lambda t: t)
        assert values(as_real(back)).tolist() == values(as_real(inp)).tolist()


def test_rev_view_func_refuses_a_tensor_of_another_storage():
    # funcgrad only, on purpose: torch inverts some view ops one by one for such a tensor
    # (a transpose) and reads the other storage with the base's geometry for the rest; a
    # single as_strided cannot do the first, so funcgrad refuses instead of guessing values
    inp = fm.arange(6.0).reshape(2, 3).clone()
    out = inp.transpose(0, 1)
    with pytest.raises(NotImplementedError, match="sharing this view's storage"):
        out._rev_view_func_unsafe(out.clone())
