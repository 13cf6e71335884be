"""torch.autograd.graph: the node type of the mutable graph (``y.grad_fn``)."""
from __future__ import annotations

from .._autograd import Node

__all__ = ["Node"]
