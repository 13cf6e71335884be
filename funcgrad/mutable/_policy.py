"""Mutation policies beyond PyTorch: "torch" (check at backward), "strict" (fail at the write),
"copy-on-write" (keep the saved value so the gradient stays correct, and say so)."""
from __future__ import annotations

import contextlib
import warnings
from typing import Iterator

import numpy as np

from ._graph import STATE, Saved, Version, version_error

__all__ = ["mutation_policy", "on_write", "MutationPolicyWarning"]

POLICIES = ("torch", "strict", "copy-on-write")


class MutationPolicyWarning(UserWarning):
    """Issued when the copy-on-write policy kept a copy of a saved tensor.

    >>> import funcgrad.mutable as torch
    >>> issubclass(torch.MutationPolicyWarning, UserWarning)
    True
    """


@contextlib.contextmanager
def mutation_policy(policy: str) -> Iterator[None]:
    """Choose what an in-place write does to a tensor that a graph has saved, in a block.

    * ``"torch"`` (default): nothing at the write; backward fails with PyTorch's error.
    * ``"strict"``: the write itself fails, naming the op that saved the tensor.
    * ``"copy-on-write"``: the saved value is copied before the write, so the gradient is
      the one of the value actually used; a `MutationPolicyWarning` reports it.

    The policy applies to tensors saved while it is active.

    >>> import warnings, funcgrad.mutable as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.mutation_policy("copy-on-write"), warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     y = x * 1
    ...     z = (y * y).sum()
    ...     _ = y.add_(10)
    ...     z.backward()
    >>> x.grad
    tensor([2., 4.])
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown mutation policy {policy!r}; choose one of {POLICIES}")
    previous = STATE.policy
    STATE.policy = policy
    try:
        yield
    finally:
        STATE.policy = previous


def on_write(vc: Version, tensor, op_name: str, where: tuple) -> None:
    """Called just before an in-place write by `op_name` at `where` (file, line) into
    storage whose counter is watched: "strict" refuses it, "copy-on-write" copies first."""
    live = []
    for ref in vc.watchers:
        saved = ref()
        if saved is None or saved.counter is not vc or saved.version != vc.value:
            continue
        node = saved.owner() if saved.owner is not None else None
        if node is None or getattr(node, "_freed", False):
            continue
        live.append((saved, node))
    vc.watchers = [ref for ref in vc.watchers if ref() is not None and ref().counter is vc]
    if not live:
        return
    policy = STATE.policy
    saved, node = live[0]
    saved_at = node._where or ("<unknown>", 0)
    if policy == "strict":
        # the write does not happen: say so, and what backward would have said had it happened
        err = RuntimeError(
            f"strict mutation policy: {op_name} at {where[0]}:{where[1]} would overwrite a "
            f"tensor saved by {node.name()} at {saved_at[0]}:{saved_at[1]} (version "
            f"{saved.version}) for backward. The write was refused: the tensor is unchanged, "
            f"still at version {vc.value}. Clone it before writing, or write before it is used.")
        would_be = version_error(saved, node, now=vc.value + 1)
        err.add_note(f"  had it been written, backward would fail with: {would_be}")
        raise err
    for saved, node in live:
        saved.data = np.array(saved.data, copy=True)
        keep = getattr(saved.packed, "keep_copy", None) if saved.unpack_fn is not None else None
        if keep is not None:  # an allow_mutation_on_saved_tensors block reads its handle's
            keep(saved.data)
        saved.counter = Version()
        saved.version = 0
        w = node._where or ("<unknown>", 0)
        warnings.warn(
            f"copy-on-write: {op_name} modified a tensor saved by {node.name()} at "
            f"{w[0]}:{w[1]}; the saved value was copied first, so the gradient uses the value "
            "before the write", MutationPolicyWarning, stacklevel=4)
