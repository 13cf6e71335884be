"""Seed post 2, both ways: the dynamic graph, Functions, backward, leaves and hooks.

Follows "2-3 动态计算图" (../shared/seeds): each PyTorch program runs unchanged in the
mutable model (``import funcgrad.mutable as torch``), then as the functional model writes it.

1. The forward pass runs at once; the graph is freed by ``backward``: a second backward
   fails unless ``retain_graph=True``. A function differentiated with ``funcgrad.grad``
   is traced anew at every call, so there is nothing to free and nothing to retain.
2. A ``torch.autograd.Function`` with its own backward (MyReLU) and the same rule as a
   ``funcgrad.custom_vjp``.
3. The chain rule on ``loss = (y1 - y2)**2`` with ``y1 = x + 1`` and ``y2 = 2x``.
4. Only leaves keep ``.grad``; ``retain_grad`` and ``register_hook`` show the others. The
   functional model asks for an intermediate's gradient by making it an argument.

Run: python examples/seed_dynamic_graph.py
"""
from __future__ import annotations

import warnings

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp


def forward_runs_now_and_graph_is_freed() -> None:
    print("1. the graph is built as the forward pass runs, and freed by backward")
    torch.manual_seed(0)
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    X = torch.randn(10, 2)
    Y = torch.randn(10, 1)
    Y_hat = X @ w.t() + b                     # computed now, not when loss is asked for
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    print("   mutable:    loss =", round(loss.item(), 4))
    loss.backward()
    try:
        loss.backward()
    except RuntimeError as err:
        print("   mutable:    second backward -> RuntimeError:", str(err).split(".")[0])

    def functional_loss(w, b):
        return fnp.mean((X.numpy() @ w.T + b - Y.numpy()) ** 2)

    grad_fn = fg.grad(functional_loss, argnums=(0, 1))
    first = grad_fn(np.array([[3.0, 1.0]], np.float32), np.array([[3.0]], np.float32))
    second = grad_fn(np.array([[3.0, 1.0]], np.float32), np.array([[3.0]], np.float32))
    print("   functional: grad called twice, same result:",
          all(np.array_equal(np.asarray(p), np.asarray(q)) for p, q in zip(first, second)),
          "; agrees with w.grad:", np.allclose(np.asarray(first[0]), w.grad.numpy(), rtol=1e-5))


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
def my_relu(x):
    return fnp.maximum(x, 0.0)


def my_relu_fwd(x):
    return my_relu(x), x                       # the residual: what backward reads


def my_relu_bwd(x, ct):
    return (fnp.where(x < 0, 0.0, ct),)


my_relu.defvjp(my_relu_fwd, my_relu_bwd)


def custom_rules() -> None:
    print("2. MyReLU: torch.autograd.Function and funcgrad.custom_vjp")
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    X = torch.tensor([[-1.0, -1.0], [1.0, 1.0]])
    Y = torch.tensor([[2.0, 3.0]])
    Y_hat = MyReLU.apply(X @ w.t() + b)
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    loss.backward()
    print("   mutable:    w.grad =", w.grad.numpy().tolist(), " b.grad =", b.grad.numpy().tolist())

    def functional_loss(w, b):
        y_hat = my_relu(X.numpy() @ w.T + b)
        return fnp.mean((y_hat - Y.numpy()) ** 2)

    gw, gb = fg.grad(functional_loss, argnums=(0, 1))(np.array([[3.0, 1.0]], np.float32),
                                                        np.array([[3.0]], np.float32))
    print("   functional: w.grad =", np.asarray(gw).tolist(), " b.grad =", np.asarray(gb).tolist())


def chain_rule() -> None:
    print("3. the chain rule: loss = (y1 - y2)**2, y1 = x + 1, y2 = 2x, at x = 3")
    x = torch.tensor(3.0, requires_grad=True)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    loss.backward()
    print("   mutable:    x.grad =", x.grad.item())
    print("   functional: x.grad =", float(fg.grad(lambda x: ((x + 1) - 2 * x) ** 2)(3.0)))


def leaves_and_hooks() -> None:
    print("4. only leaves keep .grad; retain_grad and hooks show the others")
    x = torch.tensor(3.0, requires_grad=True)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    y1.register_hook(lambda grad: print("   mutable:    hook y1 grad:", grad))
    y2.register_hook(lambda grad: print("   mutable:    hook y2 grad:", grad))
    loss.retain_grad()
    loss.backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y1_grad = y1.grad                       # not a leaf: None, and PyTorch warns
    print("   mutable:    loss.grad =", loss.grad, " y1.grad =", y1_grad, " x.grad =", x.grad)
    print("   mutable:    warning:", str(caught[0].message).split(". ")[0])
    g_y1, g_y2 = fg.grad(lambda y1, y2: (y1 - y2) ** 2, argnums=(0, 1))(4.0, 6.0)
    print("   functional: d loss/d y1 =", float(g_y1), " d loss/d y2 =", float(g_y2))


if __name__ == "__main__":
    forward_runs_now_and_graph_is_freed()
    custom_rules()
    chain_rule()
    leaves_and_hooks()
