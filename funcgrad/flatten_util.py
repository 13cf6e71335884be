"""`ravel_pytree`: a pytree of arrays as one flat vector and back (JAX's
``jax.flatten_util``), for optimizers and solvers that work on vectors."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import numpy as fnp
from ._src.core import Array
from ._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Array, Callable[[Any], Any]]:
    """Ravel every leaf of `pytree` and concatenate them into one 1-d array, of the leaves'
    common dtype; ``unravel(flat)`` rebuilds the tree, each leaf with its shape and dtype.
    Both directions are differentiable.

    >>> import numpy as np
    >>> flat, unravel = ravel_pytree({"w": np.ones((2, 2)), "b": np.float64(3.0)})
    >>> flat.tolist()
    [3.0, 1.0, 1.0, 1.0, 1.0]
    >>> unravel(flat * 2)["w"].tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        flat = fnp.zeros(0, dtype=np.float32)
        return flat, lambda flat_value: _check_size(flat_value, 0) or tree_unflatten(treedef, [])
    shapes = [tuple(np.shape(leaf)) if not isinstance(leaf, Array) else tuple(leaf.shape)
              for leaf in leaves]
    dtypes = [fnp.result_type(leaf) for leaf in leaves]
    dtype = np.result_type(*dtypes)
    flat = fnp.concatenate([fnp.ravel(fnp.asarray(leaf)).astype(dtype) for leaf in leaves])
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    total = sum(sizes)
    ends = np.cumsum(sizes).tolist()

    def unravel(flat_value: Any) -> Any:
        _check_size(flat_value, total)
        flat_value = fnp.asarray(flat_value)
        pieces = []
        start = 0
        for end, shape, leaf_dtype in zip(ends, shapes, dtypes):
            piece = fnp.reshape(flat_value[start:end], shape)
            pieces.append(piece if piece.dtype == leaf_dtype else piece.astype(leaf_dtype))
            start = end
        return tree_unflatten(treedef, pieces)

    return flat, unravel


def _check_size(flat_value: Any, size: int) -> None:
    shape = tuple(flat_value.shape) if hasattr(flat_value, "shape") else np.shape(flat_value)
    if shape != (size,):
        raise ValueError(f"The unravel function expected an array of shape {(size,)}, got "
                         f"shape {shape}. Pass a flat vector like the one ravel_pytree "
                         "returned for this tree")
