"""LSTM and GRU: multi-layer recurrent networks, written with tensor operations.

PyTorch's CPU kernel for float32 records each layer (each direction) as one node,
``MkldnnRnnLayerBackward0``, with edges to the input, the four weights and the initial
states; so does this module (`_LayerNode`), its backward differentiating the same tensor
operations run again. Other dtypes record the operations themselves, as PyTorch's generic
kernel does (the output's grad_fn is then ``StackBackward0``).
"""
from __future__ import annotations

import math

import numpy as np

from ... import _dtypes as D
from ... import _functions as T
from ..._grad_mode import enable_grad, is_grad_enabled
from ..._graph import node_class
from ..._tensor import Tensor
from ...autograd import Function, grad
from ...autograd.function import _FunctionNode
from .. import functional as F
from .. import init
from .module import Module, new_parameter

__all__ = ["LSTM", "GRU"]


def _run_layer(xs: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor,
               b_ih: Tensor | None, b_hh: Tensor | None, reverse: bool):
    """One direction of one layer over time-major `xs` (L, N, H_in): the outputs (L, N, H)
    and the last hidden and cell states."""
    projected = F.linear(xs, w_ih, b_ih)    # every time step's input projection at once
    steps = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
    outs = [None] * xs.shape[0]
    for t in steps:
        gates = F.linear(h, w_hh, b_hh) + projected[t]
        i, f, g, o = gates.chunk(4, 1)
        c = T.sigmoid(f) * c + T.sigmoid(i) * T.tanh(g)
        h = T.sigmoid(o) * T.tanh(c)
        outs[t] = h
    return T.stack(outs, 0), h, c


class _Layer(Function):
    """`_run_layer` as one node. Its backward runs the layer again with gradients on and
    differentiates that (under create_graph from the saved inputs themselves, so the
    gradient is differentiable again). Its arguments are PyTorch's node's edges; the
    direction is the class's (`_ReversedLayer`)."""

    reverse = False

    @classmethod
    def forward(cls, ctx, xs, w_ih, w_hh, b_ih, b_hh, h, c):
        ctx.save_for_backward(xs, w_ih, w_hh, b_ih, b_hh, h, c)
        ctx.reverse = cls.reverse
        return _run_layer(xs, h, c, w_ih, w_hh, b_ih, b_hh, cls.reverse)

    @staticmethod
    def backward(ctx, g_out, g_h, g_c):
        saved = ctx.saved_tensors
        needed = ctx.needs_input_grad
        if not is_grad_enabled():  # a plain backward: a fresh graph of the layer alone
            saved = [None if t is None else t.detach().requires_grad_(need)
                     for t, need in zip(saved, needed)]
        xs, w_ih, w_hh, b_ih, b_hh, h, c = saved
        with enable_grad():
            outs = _run_layer(xs, h, c, w_ih, w_hh, b_ih, b_hh, ctx.reverse)
        pairs = [(o, g) for o, g in zip(outs, (g_out, g_h, g_c)) if g is not None]
        wanted = [t for t, need in zip(saved, needed) if need]
        found = iter(grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                          create_graph=is_grad_enabled(), allow_unused=True))
        return tuple(next(found) if need else None for need in needed)


class _ReversedLayer(_Layer):
    reverse = True


_Layer._backward_cls = _ReversedLayer._backward_cls = node_class("MkldnnRnnLayerBackward0",
                                                                 _FunctionNode)


class _RNNBase(Module):
    """What LSTM and GRU share: the argument checks, the parameters (``weight_ih_l{k}`` ...,
    `_GATES` blocks of rows each, in PyTorch's registration order), their initialisation,
    the per-layer lookup and the printed form."""

    _GATES: int

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, bias: bool,
                 batch_first: bool, dropout: float, bidirectional: bool, dtype) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        directions = 2 if bidirectional else 1
        rows = self._GATES * hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [("weight_ih", (rows, layer_input)), ("weight_hh", (rows, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (rows,)), ("bias_hh", (rows,))]
                for kind, shape in shapes:
                    setattr(self, kind + suffix, new_parameter(shape, dtype))
                    self._flat_weights_names.append(kind + suffix)
        self.reset_parameters()

    @staticmethod
    def _check(dropout: float, hidden_size: int, num_layers: int) -> None:
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def _cell_weights(self, layer: int, direction: int) -> tuple:
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = self._parameters.get
        return (get("weight_ih" + suffix), get("weight_hh" + suffix),
                get("bias_ih" + suffix), get("bias_hh" + suffix))

    def _time_major(self, input: Tensor) -> tuple:
        """`input` as (time, batch, features), whether it came unbatched, and the shape of
        the initial states; PyTorch's errors for a wrong rank or feature size."""
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D instead")
        unbatched = input.dim() == 2
        xs = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first
                                                   else input)
        if xs.shape[2] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {xs.shape[2]}")
        directions = 2 if self.bidirectional else 1
        return xs, unbatched, (self.num_layers * directions, xs.shape[1], self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class LSTM(_RNNBase):
    """PyTorch's LSTM: gates (input, forget, cell, output) in that order, parameters named
    and initialised as PyTorch (uniform on +-1/sqrt(hidden_size), in registration order).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> lstm = nn.LSTM(3, 5, batch_first=True)
    >>> lstm
    LSTM(3, 5, batch_first=True)
    >>> out, (h, c) = lstm(torch.ones(2, 4, 3))
    >>> out.shape, h.shape, c.shape
    (torch.Size([2, 4, 5]), torch.Size([1, 2, 5]), torch.Size([1, 2, 5]))
    """

    _GATES = 4  # input, forget, cell, output

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        self._check(dropout, hidden_size, num_layers)
        if proj_size:
            raise NotImplementedError("LSTM: proj_size is not supported by funcgrad.mutable yet")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype)
        self.proj_size = proj_size

    def _run(self, xs: Tensor, h: Tensor, c: Tensor, weights, reverse: bool):
        """One direction of one layer; one node where PyTorch's float32 kernel records one."""
        w_ih, w_hh, b_ih, b_hh = weights
        if xs.dtype is D.float32 and is_grad_enabled() and any(
                t is not None and t.requires_grad for t in (xs, h, c) + tuple(weights)):
            layer = _ReversedLayer if reverse else _Layer
            return layer.apply(xs, w_ih, w_hh, b_ih, b_hh, h, c)
        return _run_layer(xs, h, c, w_ih, w_hh, b_ih, b_hh, reverse)

    def forward(self, input: Tensor, hx: tuple | None = None):
        xs, unbatched, state_shape = self._time_major(input)
        directions = 2 if self.bidirectional else 1
        if hx is None:
            zeros = np.zeros(state_shape, xs.detach().numpy().dtype)
            h0, c0 = F._const(zeros), F._const(zeros.copy())
        else:
            h0, c0 = hx
            if unbatched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            for name, state in (("hidden", h0), ("cell", c0)):
                if tuple(state.shape) != state_shape:
                    raise RuntimeError(f"Expected {name} size {state_shape}, got "
                                       f"{list(state.shape)}")
        last_h, last_c = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                out, h, c = self._run(xs, h0[k], c0[k], self._cell_weights(layer, direction),
                                      reverse=bool(direction))
                outputs.append(out)
                last_h.append(h)
                last_c.append(c)
            xs = outputs[0] if directions == 1 else T.cat(outputs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                xs = F.dropout(xs, self.dropout, True)
        h_n, c_n = T.stack(last_h, 0), T.stack(last_c, 0)
        if unbatched:
            return xs.squeeze(1), (h_n.squeeze(1), c_n.squeeze(1))
        return (xs.transpose(0, 1) if self.batch_first else xs), (h_n, c_n)



def _gru_layer(xs: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
               b_hh: Tensor | None, reverse: bool):
    """One direction of one GRU layer over time-major `xs`: outputs (L, N, H), last state.
    Gates in PyTorch's order (reset, update, new); h' = (h - n) * z + n, as its CPU cell."""
    projected = F.linear(xs, w_ih, b_ih)
    steps = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
    outs = [None] * xs.shape[0]
    for t in steps:
        x_r, x_z, x_n = projected[t].chunk(3, 1)
        h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
        r = T.sigmoid(h_r + x_r)
        z = T.sigmoid(h_z + x_z)
        n = T.tanh(x_n + h_n * r)
        h = (h - n) * z + n
        outs[t] = h
    return T.stack(outs, 0), h


class GRU(_RNNBase):
    """PyTorch's GRU: gates (reset, update, new) in that order, parameters named and
    initialised as PyTorch (uniform on +-1/sqrt(hidden_size), in registration order); the
    operations are recorded one by one, as PyTorch's CPU kernel does (output grad_fn
    ``StackBackward0``).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> gru = nn.GRU(3, 5, num_layers=2)
    >>> gru
    GRU(3, 5, num_layers=2)
    >>> out, h = gru(torch.ones(4, 2, 3))
    >>> out.shape, h.shape
    (torch.Size([4, 2, 5]), torch.Size([2, 2, 5]))
    """

    _GATES = 3  # reset, update, new

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None) -> None:
        self._check(dropout, hidden_size, num_layers)
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None):
        xs, unbatched, state_shape = self._time_major(input)
        directions = 2 if self.bidirectional else 1
        if hx is None:
            h0 = F._const(np.zeros(state_shape, xs.detach().numpy().dtype))
        else:
            h0 = hx.unsqueeze(1) if unbatched else hx
            if tuple(h0.shape) != state_shape:
                raise RuntimeError(f"Expected hidden size {state_shape}, got "
                                   f"{list(h0.shape)}")
        last = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._cell_weights(layer, direction)
                out, h = _gru_layer(xs, h0[layer * directions + direction], w_ih, w_hh, b_ih,
                                    b_hh, reverse=bool(direction))
                outputs.append(out)
                last.append(h)
            xs = outputs[0] if directions == 1 else T.cat(outputs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                xs = F.dropout(xs, self.dropout, True)
        h_n = T.stack(last, 0)
        if unbatched:
            return xs.squeeze(1), h_n.squeeze(1)
        # (torch's GRU turns its own output batch-first in place: TransposeBackward1)
        return (xs.transpose_(0, 1) if self.batch_first else xs), h_n
