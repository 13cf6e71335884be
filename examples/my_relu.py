"""A rule of your own, both ways: MyReLU as ``torch.autograd.Function`` and as ``custom_vjp``.

The mutable model's ``Function`` saves tensors on ``ctx`` in ``forward`` and reads them in
``backward``; the functional model's ``custom_vjp`` returns them as *residuals* from the
forward rule and receives them in the backward rule. The two rules below say the same
thing, and the gradients agree, including at second order (the rule is itself
differentiable in both models).

Run: python examples/my_relu.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)


@fg.custom_vjp
def my_relu(x):
    return fnp.maximum(x, 0.0)


def _fwd(x):
    return my_relu(x), x


def _bwd(x, ct):
    return (ct * (x > 0),)


my_relu.defvjp(_fwd, _bwd)

X = np.array([-1.5, -0.2, 0.3, 2.0])


def main() -> None:
    def functional_loss(x):
        return fnp.sum(my_relu(x) ** 3)

    g_functional = np.asarray(fg.grad(functional_loss)(X))
    x = torch.tensor(X, requires_grad=True)
    (MyReLU.apply(x) ** 3).sum().backward()
    print("input:              ", X.tolist())
    print("functional gradient:", g_functional.tolist())
    print("mutable gradient:   ", x.grad.numpy().tolist())
    print("closed form 3 relu(x)^2:", (3 * np.maximum(X, 0) ** 2).tolist())

    # Second order: the diagonal of the Hessian, 6 relu(x), through each custom rule.
    h_functional = np.asarray(fg.grad(lambda x: fnp.sum(fg.grad(functional_loss)(x)))(X))
    x = torch.tensor(X, requires_grad=True)
    (g,) = torch.autograd.grad((MyReLU.apply(x) ** 3).sum(), x, create_graph=True)
    g.sum().backward()
    print("functional second derivative:", h_functional.tolist())
    print("mutable second derivative:   ", x.grad.numpy().tolist())
    print("agree:", np.allclose(g_functional, 3 * np.maximum(X, 0) ** 2)
          and np.allclose(h_functional, x.grad.numpy()))


if __name__ == "__main__":
    main()
