"""LSTM: a multi-layer long short-term memory network, written with tensor operations."""
from __future__ import annotations

import math

import numpy as np

from ... import _functions as T
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module, new_parameter

__all__ = ["LSTM"]


class LSTM(Module):
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

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size:
            raise NotImplementedError("LSTM: proj_size is not supported by funcgrad.mutable yet")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [("weight_ih", (4 * hidden_size, layer_input)),
                          ("weight_hh", (4 * hidden_size, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (4 * hidden_size,)), ("bias_hh", (4 * hidden_size,))]
                for kind, shape in shapes:
                    setattr(self, kind + suffix, new_parameter(shape, dtype))
                    self._flat_weights_names.append(kind + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def _cell_weights(self, layer: int, direction: int) -> tuple:
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = self._parameters.get
        return (get("weight_ih" + suffix), get("weight_hh" + suffix),
                get("bias_ih" + suffix), get("bias_hh" + suffix))

    def _run(self, xs: Tensor, h: Tensor, c: Tensor, weights, reverse: bool):
        """One direction of one layer over time-major `xs` (L, N, H_in)."""
        w_ih, w_hh, b_ih, b_hh = weights
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

    def forward(self, input: Tensor, hx: tuple | None = None):
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        unbatched = input.dim() == 2
        xs = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first
                                                   else input)
        if xs.shape[2] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {xs.shape[2]}")
        directions = 2 if self.bidirectional else 1
        batch = xs.shape[1]
        state_shape = (self.num_layers * directions, batch, self.hidden_size)
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
