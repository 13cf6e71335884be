"""vmap over every sweep case (composites included): one vectorised call equals a Python loop
over the batch, for every declared differentiable funcgrad.numpy/linalg/fft/special name."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.tree_util import tree_leaves

from .test_sweep import ALL_CASES, NOT_VMAPPED, _need

ALL = [(name, i) for name in sorted(ALL_CASES) if name not in NOT_VMAPPED
       for i in range(len(ALL_CASES[name]))]


@pytest.mark.parametrize("name,i", ALL, ids=[f"{n}[{i}]" for n, i in ALL])
def test_vmap_equals_a_loop(name, i):
    _need(name)
    f, args = ALL_CASES[name][i]
    batched = [np.stack([a * (1 + 0.01 * k) for k in range(3)]) for a in args]
    got = tree_leaves(fg.vmap(f)(*batched))
    loop = [tree_leaves(f(*[b[k] for b in batched])) for k in range(3)]
    assert len(got) == len(loop[0])
    for j, g in enumerate(got):
        expected = np.stack([np.asarray(leaves[j]) for leaves in loop])
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-10, atol=1e-12,
                                   equal_nan=True, err_msg=f"{name}[{i}] output {j}")
