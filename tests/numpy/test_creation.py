"""funcgrad.numpy's creation functions: no aliasing of the caller's buffer, clear errors."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def test_asarray_does_not_alias_a_writable_ndarray() -> None:
    x = np.zeros(3)
    a = fnp.asarray(x)
    x[0] = 5.0                       # the caller writes into its own array afterwards
    assert a.tolist() == [0.0, 0.0, 0.0]
    assert fg.grad(lambda t: fnp.sum(fnp.asarray(x) * t))(2.0).item() == 5.0


def test_asarray_of_a_read_only_array_needs_no_copy() -> None:
    x = np.arange(3.0)
    x.flags.writeable = False
    assert np.shares_memory(np.asarray(fnp.asarray(x)), x)


@pytest.mark.parametrize("ragged", [[[1.0, 2.0], [3.0]], [[[1.0]], [[1.0, 2.0]]]])
def test_ragged_nested_lists_name_the_problem(ragged) -> None:
    with pytest.raises(ValueError, match="ragged nested sequence.*Pad the entries"):
        fnp.array(ragged)


def test_ragged_nested_lists_of_traced_values_name_the_problem() -> None:
    with pytest.raises(ValueError, match=r"ragged nested sequence \(its entries have shapes"):
        fg.grad(lambda t: fnp.sum(fnp.array([[t, t], [t]])))(1.0)
    # a well-formed nested list of traced values differentiates: d/dt sum([[t, t], [t, 2t]]) = 5
    assert fg.grad(lambda t: fnp.sum(fnp.array([[t, t], [t, 2 * t]])))(1.0).item() == 5.0


@pytest.mark.parametrize("name, per_example", [
    ("concatenate", lambda r: fnp.concatenate([r, r], axis=1)),
    ("swapaxes", lambda r: fnp.swapaxes(r, 0, 1)),
    ("moveaxis", lambda r: fnp.moveaxis(r, 1, 0)),
    ("fftn", lambda r: fnp.fft.fftn(r, axes=(1,))),
    ("take_along_axis", lambda r: fnp.take_along_axis(r, np.zeros(1, int), axis=1)),
])
def test_vmap_refuses_an_axis_the_example_does_not_have(name, per_example) -> None:
    """Each example is 1-d: axis 1 is out of range for it, as for the unbatched call; it
    must not wrap onto the batch's shape."""
    rows = np.arange(6.0).reshape(2, 3)
    with pytest.raises(np.exceptions.AxisError):
        per_example(rows[0])
    with pytest.raises(np.exceptions.AxisError):
        fg.vmap(per_example)(rows)


def test_axes_in_range_still_map() -> None:
    rows = np.arange(6.0).reshape(2, 3)
    out = fg.vmap(lambda r: fnp.concatenate([r, r], axis=-1))(rows)
    assert np.array_equal(np.asarray(out), np.concatenate([rows, rows], axis=1))


def test_none_is_refused_as_jax_does():
    for make in (fnp.array, fnp.asarray):
        with pytest.raises(ValueError, match="None is not a valid value"):
            make(None)
