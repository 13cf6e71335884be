"""Structured control flow, as JAX's ``jax.lax``: conditionals and loops that every transform
(grad, jvp, vmap, and jit's tracer) sees through; and ``stop_gradient``.

>>> import funcgrad as fg, funcgrad.numpy as fnp
>>> fg.lax.fori_loop(0, 4, lambda i, x: x * 2.0, 1.0).item()
16.0
>>> fg.grad(lambda x: fg.lax.scan(lambda c, a: (c * a, c), x, fnp.arange(1.0, 4.0))[0])(
...     2.0).item()
6.0
"""
from ._src.lax import (associative_scan, cond, fori_loop, map, scan, select, switch,
                       while_loop)
from ._src.transforms import stop_gradient

__all__ = ["associative_scan", "cond", "fori_loop", "map", "scan", "select", "stop_gradient",
           "switch", "while_loop"]
