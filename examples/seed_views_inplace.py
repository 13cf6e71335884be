"""Seed post 1, both ways: in-place writes through views, and a little RNN made of writes.

The post (../shared/seeds, "深入理解pytorch中计算图的inplace操作") asks, for three programs,
"does backward fail?". This example runs each program in the mutable model exactly as the
post writes it (``import funcgrad.mutable as torch``) and then in the functional model,
where an update is ``x.at[i].set(v)``: a new array, never a write into one that an earlier
operation still needs.

1. Read a row with ``x[0]`` (a *select view*, sharing memory), use it in a product, then
   write the product back into ``x[0]``. The product saved the row for the backward pass;
   the write changed it. PyTorch fails at ``backward``; the functional program cannot fail.
2. Read the row with ``x[[0], :]`` (*advanced indexing*, a copy). Nothing the product saved
   is overwritten: both models succeed and agree.
3. Two writes that carry history, like an unrolled RNN: ``d.grad`` is 14 and ``a.grad`` 12.

Run: python examples/seed_views_inplace.py
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.mutable as torch
import funcgrad.numpy as fnp
from funcgrad.mutable import nn


def select_view_then_write() -> None:
    print("1. x[0] is a view; writing a product back into it")
    torch.manual_seed(0)
    embedding = nn.Parameter(torch.rand(2, 3))
    d = nn.Parameter(torch.rand(3, 3))
    user_embeddings = embedding.clone()
    row = user_embeddings[0]              # SelectBackward0: a view of user_embeddings
    a = torch.matmul(d, row)              # saves `row`, needed for d's gradient
    user_embeddings[0] = a                # writes through the view: row is now version 1
    try:
        a.sum().backward()
        print("   mutable:    no error")
    except RuntimeError as err:
        print("   mutable:    RuntimeError:", str(err).split(":")[0])

    # The same program, functionally. `.at[0].set` returns a new array; `row` keeps the
    # values the product used, so the gradient is defined (and is what PyTorch gives for
    # the repaired program `row = user_embeddings[0].clone()`).
    def loss(embedding, d):
        user_embeddings = embedding
        row = user_embeddings[0]
        a = d @ row
        user_embeddings = user_embeddings.at[0].set(a)  # a new array; nothing is overwritten
        return fnp.sum(a)

    e0, d0 = embedding.detach().numpy(), d.detach().numpy()
    g_embedding, g_d = fg.grad(loss, argnums=(0, 1))(e0, d0)

    embedding.grad = None
    d.grad = None
    user_embeddings = embedding.clone()
    row = user_embeddings[0].clone()      # the repair: a copy nobody writes into
    a = torch.matmul(d, row)
    user_embeddings[0] = a
    a.sum().backward()
    print("   functional: d loss/d d row sums", np.round(np.asarray(g_d).sum(axis=1), 4))
    print("   repaired mutable program agrees:",
          np.allclose(np.asarray(g_d), d.grad.numpy(), rtol=1e-6)
          and np.allclose(np.asarray(g_embedding), embedding.grad.numpy(), rtol=1e-6))


def advanced_index_then_write() -> None:
    print("2. x[[0], :] is a copy; writing back is harmless")
    torch.manual_seed(0)
    embedding = nn.Parameter(torch.rand(2, 3))
    d = nn.Parameter(torch.rand(3, 3))
    user_embeddings = embedding.clone()
    row = user_embeddings[[0], :]         # IndexBackward0: a new tensor
    a = torch.matmul(row, d)
    user_embeddings[[0], :] = a
    a.sum().backward()
    print("   mutable:    no error; d.grad row sums", np.round(d.grad.numpy().sum(axis=1), 4))

    def loss(embedding, d):
        row = embedding[np.array([0]), :]
        return fnp.sum(row @ d)

    g_embedding, g_d = fg.grad(loss, argnums=(0, 1))(embedding.detach().numpy(),
                                                      d.detach().numpy())
    print("   functional: agrees:", np.allclose(np.asarray(g_d), d.grad.numpy(), rtol=1e-6)
          and np.allclose(np.asarray(g_embedding), embedding.grad.numpy(), rtol=1e-6))


def writes_that_carry_history() -> None:
    print("3. b[0] = e carries e's history (an unrolled RNN)")
    a = nn.Parameter(torch.tensor([[2.0]]))
    d = nn.Parameter(torch.tensor(3.0))
    b = a.clone()
    e = b[[0], :] * d
    b[0] = e
    loss = e.sum()
    e = b[[0], :] * d
    b[0] = e
    loss += e.sum()
    loss.backward()
    print("   mutable:    d.grad =", d.grad.item(), " a.grad =", a.grad.numpy().tolist())

    def functional_loss(a, d):
        b = a
        e = b[np.array([0]), :] * d
        b = b.at[0].set(e[0])
        loss = fnp.sum(e)
        e = b[np.array([0]), :] * d
        b = b.at[0].set(e[0])
        return loss + fnp.sum(e)

    g_a, g_d = fg.grad(functional_loss, argnums=(0, 1))(np.array([[2.0]]), 3.0)
    print("   functional: d.grad =", float(g_d), " a.grad =", np.asarray(g_a).tolist())


if __name__ == "__main__":
    select_view_then_write()
    advanced_index_then_write()
    writes_that_carry_history()
