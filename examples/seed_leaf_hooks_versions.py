"""Seed post 3, both ways: grad_fn, leaf tensors, retain_grad, hook order, and versions.

Follows the notebook in ../shared/seeds ("叶子张量", hooks, inplace, ``_version``): each cell
runs in the mutable model as written, and where the functional model has an answer of its
own, that is printed beside it.

1. ``b = a.exp()`` prints ``grad_fn=<ExpBackward0>``; its gradient is ``exp(2)``.
2. ``loss = mean((w1*x + w2) * (w1*x*w3))``: ``w1.grad`` is 21; ``retain_grad`` keeps the
   gradients of ``loss``, ``l4`` and ``l1``; hooks fire from the output back: loss, l4, l1.
3. Versions: ``b[0] = 1000`` after ``b * b`` saved ``b`` fails at ``backward``. PyTorch's
   message comes first; funcgrad names the op that saved ``b`` and the write. The
   functional ``b.at[0].set(1000.0)`` is a new array, so the old ``b`` is still there.
4. A leaf that requires grad cannot be written in place: PyTorch 2.x refuses ``a[:] = 0``
   (the post shows an older PyTorch that allowed it).

Run: python examples/seed_leaf_hooks_versions.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp


def grad_fn_of_exp() -> None:
    print("1. b = a.exp()")
    a = torch.tensor(2.0, requires_grad=True)
    b = a.exp()
    print("   mutable:   ", b)
    b.backward()
    print("   mutable:    a.grad =", round(a.grad.item(), 4),
          " functional:", round(float(fg.grad(fnp.exp)(2.0)), 4))


def leaves_retain_grad_and_hooks() -> None:
    print("2. leaves, retain_grad, hooks")
    inp = torch.ones([2, 2], requires_grad=False)
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    w3 = torch.tensor(3.0, requires_grad=True)
    l1 = inp * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    l1.retain_grad()
    l4.retain_grad()
    loss.retain_grad()
    order = []
    l1.register_hook(lambda grad: order.append("l1"))
    l4.register_hook(lambda grad: order.append("l4"))
    loss.register_hook(lambda grad: order.append("loss"))
    loss.backward()
    print("   mutable:    loss =", loss.item(), " w1.grad =", w1.grad.item(),
          " l4.grad[0,0] =", l4.grad[0, 0].item(), " l1.grad[0,0] =", l1.grad[0, 0].item())
    print("   mutable:    hooks fired in order:", " -> ".join(order))
    print("   mutable:    w1.is_leaf =", w1.is_leaf, " l1.is_leaf =", l1.is_leaf,
          " l1.grad_fn =", type(l1.grad_fn).__name__)

    def functional_loss(w1, w2, w3):
        l1 = np.ones((2, 2)) * w1
        return fnp.mean((l1 + w2) * (l1 * w3))

    gw1, gw2, gw3 = fg.grad(functional_loss, argnums=(0, 1, 2))(2.0, 3.0, 3.0)
    print("   functional: w1.grad =", float(gw1), " w2.grad =", float(gw2),
          " w3.grad =", float(gw3))
    print("   mutable:    w2.grad =", w2.grad.item(), " w3.grad =", w3.grad.item())


def versions() -> None:
    print("3. b[0] = 1000 after b * b saved b")
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    version_before = b._version
    loss = (b * b).mean()
    b[0] = 1000.0
    print("   mutable:    b._version", version_before, "->", b._version)
    try:
        loss.backward()
    except RuntimeError as err:
        print("   mutable:    RuntimeError:", str(err).split(";")[0])
        for note in getattr(err, "__notes__", []):
            print("   mutable:    note:", note.splitlines()[0])

    def functional_loss(a):
        b = a + 2
        loss = fnp.mean(b * b)
        b = b.at[0].set(1000.0)   # a new array: the product above used the old b
        return loss

    print("   functional: a.grad =", np.asarray(fg.grad(functional_loss)(np.array([1.0, 3.0]))).tolist())


def writing_into_a_leaf() -> None:
    print("4. a[:] = 0 on a leaf that requires grad")
    a = torch.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    try:
        a[:] = 0
        print("   mutable:    allowed:", a)
    except RuntimeError as err:
        print("   mutable:    RuntimeError:", err)
    with torch.no_grad():
        a[:] = 0                  # what an optimizer does: outside the graph
    print("   mutable:    under no_grad: a =", a, " is_leaf =", a.is_leaf)
    print("   functional: a.at[:].set(0.0) ->", fnp.asarray(a.detach().numpy()).at[:].set(0.0))


if __name__ == "__main__":
    grad_fn_of_exp()
    leaves_retain_grad_and_hooks()
    versions()
    writing_into_a_leaf()
