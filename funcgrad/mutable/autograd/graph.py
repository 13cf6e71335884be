"""torch.autograd.graph: the node type of the mutable graph (``y.grad_fn``) and gradient
edges (a node and one of its outputs), usable as inputs of grad and backward."""
from __future__ import annotations

from typing import NamedTuple

from .._graph import Node
from .._tensor import Tensor

__all__ = ["Node", "GradientEdge", "get_gradient_edge"]


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: ``(node, output_nr)``."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge of `tensor` now: gradients taken with respect to it later reach this tensor's
    value of this moment, even after in-place writes.

    >>> import funcgrad.mutable as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> torch.autograd.graph.get_gradient_edge(x).node.name()
    'torch::autograd::AccumulateGrad'
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    edge = tensor._edge()
    return GradientEdge(edge[0], edge[1])
