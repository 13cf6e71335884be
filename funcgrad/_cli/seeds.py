"""The seeds' scenarios (the three blog posts on PyTorch's dynamic graph, leaf tensors, hooks,
retain_graph and in-place version checks), each written for both models, as source text.

They are kept as text and compiled under the file name ``<funcgrad demo>`` because
funcgrad.mutable names the user's line in its version errors and skips frames inside the
funcgrad package: compiled from a file in the package, every line it names would be wrong.
"""
from __future__ import annotations

import linecache

__all__ = ["FILENAME", "SOURCE", "SCENARIOS", "load"]

FILENAME = "<funcgrad demo>"

SOURCE = '''\
import numpy as np
import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.mutable as torch

rng = np.random.default_rng(0)


# 1. seed 002: the graph of l1 = input*w1, l2 = l1 + w2, l3 = l1*w3, loss = mean(l2*l3)
def dynamic_graph(xp, w1, w2, w3):
    input = xp.ones((2, 2), dtype=xp.float64)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    return l4.mean()


# 2. seed 001: the chain rule, x.grad accumulates from y1 and y2
def chain_rule(xp, x):
    y1 = x + 1
    y2 = 2 * x
    return (y1 - y2) ** 2


# 3. seed 001: a linear regression, run at once, line by line
X = rng.standard_normal((10, 2))
Y = rng.standard_normal((10, 1))


def regression_functional(w, b):
    Y_hat = fnp.asarray(X) @ w.T + b
    return fnp.mean(fnp.power(Y_hat - Y, 2))


def regression_mutable(w, b):
    Y_hat = torch.from_numpy(X) @ w.t() + b
    return torch.mean(torch.pow(Y_hat - torch.from_numpy(Y), 2))


# 4. seed 001: MyReLU, an autograd.Function; functionally a custom_vjp
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


@fg.custom_vjp
def relu(x):
    return fnp.maximum(x, 0.0)


relu.defvjp(lambda x: (fnp.maximum(x, 0.0), x), lambda x, g: (fnp.where(x < 0, 0.0, g),))
RELU_X = np.array([[-1.0, -1.0], [1.0, 1.0]])
RELU_Y = np.array([[2.0, 3.0]])


def my_relu_functional(w, b):
    Y_hat = relu(fnp.asarray(RELU_X) @ w.T + b)
    return fnp.mean(fnp.power(Y_hat - RELU_Y, 2))


def my_relu_mutable(w, b):
    Y_hat = MyReLU.apply(torch.from_numpy(RELU_X) @ w.t() + b)
    return torch.mean(torch.pow(Y_hat - torch.from_numpy(RELU_Y), 2))


# 5. seed 002: b is saved by b * b, then written in place: b._version 0 -> 1
def saved_then_written_functional(a):
    b = a + 2
    loss = (b * b).mean()
    b = b.at[0].set(1000.0)
    return loss


def saved_then_written_mutable(a):
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    return loss


# 6. seed 000: user_embeddings[0] is a view (SelectBackward0) that matmul saved
def select_view_functional(embedding, d):
    user_embeddings = embedding
    user_embedding_input = user_embeddings[0]
    a = d @ user_embedding_input
    user_embeddings = user_embeddings.at[0].set(a)
    return a.sum()


def select_view_mutable(embedding, d):
    user_embeddings = embedding.clone()
    user_embedding_input = user_embeddings[0]
    a = torch.matmul(d, user_embedding_input)
    user_embeddings[0] = a
    return a.sum()


# 7. seed 000: user_embeddings[[0], :] indexes (IndexBackward0), a copy: no error
def index_copy_functional(embedding, d):
    user_embeddings = embedding
    user_embedding_input = user_embeddings[[0], :]
    a = user_embedding_input @ d
    user_embeddings = user_embeddings.at[[0], :].set(a)
    return a.sum()


def index_copy_mutable(embedding, d):
    user_embeddings = embedding.clone()
    user_embedding_input = user_embeddings[[0], :]
    a = torch.matmul(user_embedding_input, d)
    user_embeddings[[0], :] = a
    return a.sum()


# 8. seed 000: b[0] = e carries e's history, an unrolled recurrence (d.grad 14, a.grad 12)
def recurrence_functional(a, d):
    b = a
    e = b[[0], :] * d
    b = b.at[0].set(e[0])
    loss = e.sum()
    e = b[[0], :] * d
    b = b.at[0].set(e[0])
    return loss + e.sum()


def recurrence_mutable(a, d):
    b = a.clone()
    e = b[[0], :] * d
    b[0] = e
    loss = e.sum()
    e = b[[0], :] * d
    b[0] = e
    loss += e.sum()
    return loss


# 9. seed 002: writing into a leaf that requires grad
def leaf_write_functional(a):
    a = a.at[:].set(0.0)
    a = a + 10.0
    return (a * a).mean()


def leaf_write_mutable(a):
    a[:] = 0
    a.add_(10.0)
    return (a * a).mean()


# 10. seed 001: a second backward through a graph already freed
def backward_twice_functional(w, b):
    loss = fnp.mean(fnp.power(fnp.asarray(X) @ w.T + b - Y, 2))
    return loss


def backward_twice_mutable(w, b):
    loss = torch.mean(torch.pow(torch.from_numpy(X) @ w.t() + b - torch.from_numpy(Y), 2))
    loss.backward()
    return loss
'''

# an embedding table (2 x 3) and a matrix d (3 x 3)
EMBEDDING = [[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]],
             [[1.0, 2.0, 0.0], [-1.0, 0.5, 1.0], [0.0, 1.0, -2.0]]]

# (title, seed, functional function, mutable function (None: one function for both),
#  inputs as Python lists, whether the mutable run is expected to fail, why the functional
#  model cannot fail that way)
SCENARIOS = [
    ("dynamic graph: loss = mean((l1+w2)*(l1*w3))", "seed 002", "dynamic_graph", None,
     [2.0, 3.0, 3.0], False, ""),
    ("chain rule: loss = (y1 - y2)**2", "seed 001", "chain_rule", None, [3.0], False, ""),
    ("linear regression, X @ w.T + b", "seed 001", "regression_functional",
     "regression_mutable", [[[3.0, 1.0]], [[3.0]]], False, ""),
    ("MyReLU: autograd.Function vs custom_vjp", "seed 001", "my_relu_functional",
     "my_relu_mutable", [[[3.0, 1.0]], [[3.0]]], False, ""),
    ("b saved by b*b, then b[0] = 1000", "seed 002", "saved_then_written_functional",
     "saved_then_written_mutable", [[1.0, 3.0]], True,
     "b.at[0].set(1000.0) makes a new array; the tape still holds the b that b * b read"),
    ("write through a select view matmul saved", "seed 000", "select_view_functional",
     "select_view_mutable", EMBEDDING, True,
     "x[0] is a value, not a window into x: .at[0].set(a) returns a new array"),
    ("index [[0], :] copies: write is harmless", "seed 000", "index_copy_functional",
     "index_copy_mutable", EMBEDDING, False, ""),
    ("b[0] = e carries e's history (recurrence)", "seed 000", "recurrence_functional",
     "recurrence_mutable", [[[2.0]], 3.0], False, ""),
    ("in-place write into a leaf needing grad", "seed 002", "leaf_write_functional",
     "leaf_write_mutable", [[10.0, 5.0, 2.0, 3.0]], True,
     "a leaf is just an input value: a.at[:].set(0.0) names a new array, the input is untouched"),
    ("backward twice without retain_graph", "seed 001", "backward_twice_functional",
     "backward_twice_mutable", [[[3.0, 1.0]], [[3.0]]], True,
     "grad(f) is a function: call it as often as you like, nothing is freed between calls"),
]


def load() -> dict:
    """Compile the scenarios under FILENAME (so their lines show in reports) and run them."""
    linecache.cache[FILENAME] = (len(SOURCE), None, SOURCE.splitlines(True), FILENAME)
    namespace: dict = {"__name__": "funcgrad_demo"}
    exec(compile(SOURCE, FILENAME, "exec"), namespace)
    return namespace
