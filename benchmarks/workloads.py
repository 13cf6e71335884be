"""The six workloads of benchmarks/run.py (W1-W6), each written once per system.

A workload is a `Workload`: `setup(quick)` makes its inputs, `reference(ctx)` gives the
float64 value and gradients by hand, and `systems` maps a system's name to a builder
``make(ctx) -> step`` where ``step()`` returns ``(value, grads)`` as NumPy values (a tuple
of arrays), the thing that is checked and then timed. The builders import their system
when called, so a missing peer only costs its own cells.

PyTorch and funcgrad.mutable run the same source (`_torch_like` functions take the module),
which is the point of funcgrad.mutable.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass
class Workload:
    key: str
    title: str
    setup: Callable[[bool], dict]
    reference: Callable[[dict], tuple]
    systems: dict = field(default_factory=dict)
    unit: str = "ratio"          # how the table shows it: a ratio to NumPy, or per step
    rtol: float = 1e-9
    atol: float = 1e-12


def _np(x) -> np.ndarray:
    """A system's output as a NumPy array (torch tensors, JAX arrays, funcgrad arrays)."""
    if hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        try:
            return np.asarray(x.numpy())
        except TypeError:
            pass
    return np.asarray(x)


def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jax, jnp


def _torch():
    import torch
    torch.set_num_threads(1)
    return torch


def _mutable():
    import funcgrad.mutable as fm
    return fm


# =========================================================================================
# W1: 300 small ops (sin, *1.01, +0.1, tanh) on float64[3], value and gradient
N_BLOCKS = 75


def w1_setup(quick):
    return {"x": np.random.default_rng(0).standard_normal(3), "n_ops": 4 * N_BLOCKS}


def w1_by_hand(x):
    saved = []
    for _ in range(N_BLOCKS):
        t = np.tanh(np.sin(x) * 1.01 + 0.1)
        saved.append((x, t))
        x = t
    value = np.sum(x)
    g = np.ones_like(x)
    for x_in, t in reversed(saved):
        g = g * (1 - t * t) * 1.01 * np.cos(x_in)
    return value, (g,)


def w1_numpy(ctx):
    x = ctx["x"]
    return lambda: w1_by_hand(x)


def _w1_fn(np_like):
    def f(x):
        for _ in range(N_BLOCKS):
            x = np_like.tanh(np_like.sin(x) * 1.01 + 0.1)
        return np_like.sum(x)
    return f


def w1_funcgrad(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    vg = fg.value_and_grad(_w1_fn(fnp))
    x = ctx["x"]

    def step():
        v, g = vg(x)
        return v, (g,)
    return step


def w1_funcgrad_jit(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    vg = fg.jit(fg.value_and_grad(_w1_fn(fnp)))
    x = ctx["x"]

    def step():
        v, g = vg(x)
        return v, (g,)
    return step


def _w1_torch_like(T, x0):
    def step():
        x = T.tensor(x0, requires_grad=True)
        y = x
        for _ in range(N_BLOCKS):
            y = (y.sin() * 1.01 + 0.1).tanh()
        s = y.sum()
        s.backward()
        return s.detach(), (x.grad,)
    return step


def w1_torch(ctx):
    return _w1_torch_like(_torch(), ctx["x"])


def w1_mutable(ctx):
    return _w1_torch_like(_mutable(), ctx["x"])


def w1_autograd(ctx):
    import autograd
    import autograd.numpy as anp
    vg = autograd.value_and_grad(_w1_fn(anp))
    x = ctx["x"]

    def step():
        v, g = vg(x)
        return v, (g,)
    return step


def _w1_jax(ctx, jit):
    jax, jnp = _jax()
    vg = jax.value_and_grad(_w1_fn(jnp))
    if jit:
        vg = jax.jit(vg)
    x = jnp.asarray(ctx["x"])

    def step():
        v, g = vg(x)
        g.block_until_ready()
        return v, (g,)
    return step


# =========================================================================================
# W2: one SGD step of an MLP 784-256-256-10 (ReLU, softmax cross-entropy), batch 64, float32
SIZES = (784, 256, 256, 10)
BATCH = 64
LR = 0.01


def w2_setup(quick):
    rng = np.random.default_rng(2)
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32))
        params.append((rng.standard_normal(n_out) * 0.1).astype(np.float32))
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], BATCH)
    y = np.eye(SIZES[-1], dtype=np.float32)[labels]
    return {"params": params, "x": x, "y": y}


def w2_by_hand(params, x, y, lr=LR):
    """Forward, backward and the SGD update in NumPy: the floor any library pays."""
    w1, b1, w2, b2, w3, b3 = params
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    z3 = h2 @ w3 + b3
    m = z3.max(axis=1, keepdims=True)
    e = np.exp(z3 - m)
    s = e.sum(axis=1, keepdims=True)
    loss = np.mean(m[:, 0] + np.log(s[:, 0]) - np.sum(z3 * y, axis=1))
    dz3 = (e / s - y) / x.shape[0]
    gw3 = h2.T @ dz3
    gb3 = dz3.sum(0)
    dz2 = (dz3 @ w3.T) * (z2 > 0)
    gw2 = h1.T @ dz2
    gb2 = dz2.sum(0)
    dz1 = (dz2 @ w2.T) * (z1 > 0)
    gw1 = x.T @ dz1
    gb1 = dz1.sum(0)
    grads = (gw1, gb1, gw2, gb2, gw3, gb3)
    return loss, grads, [p - lr * g for p, g in zip(params, grads)]


def w2_reference(ctx):
    params64 = [p.astype(np.float64) for p in ctx["params"]]
    loss, grads, _ = w2_by_hand(params64, ctx["x"].astype(np.float64), ctx["y"].astype(np.float64))
    return loss, grads


def w2_numpy(ctx):
    params, x, y = ctx["params"], ctx["x"], ctx["y"]

    def step():
        loss, grads, new = w2_by_hand(params, x, y)
        return loss, grads
    return step


def _w2_loss(np_like):
    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h1 = np_like.maximum(x @ w1 + b1, 0.0)
        h2 = np_like.maximum(h1 @ w2 + b2, 0.0)
        z3 = h2 @ w3 + b3
        m = np_like.max(z3, axis=1, keepdims=True)
        lse = m[:, 0] + np_like.log(np_like.sum(np_like.exp(z3 - m), axis=1))
        return np_like.mean(lse - np_like.sum(z3 * y, axis=1))
    return loss


def _w2_sgd(vg):
    def sgd_step(params, x, y):
        loss, grads = vg(params, x, y)
        return loss, grads, [p - LR * g for p, g in zip(params, grads)]
    return sgd_step


def _w2_functional(ctx, value_and_grad, jit=None, np_like=None, convert=lambda a: a):
    sgd_step = _w2_sgd(value_and_grad(_w2_loss(np_like)))
    if jit is not None:
        sgd_step = jit(sgd_step)
    params = [convert(p) for p in ctx["params"]]
    x, y = convert(ctx["x"]), convert(ctx["y"])

    def step():
        loss, grads, new = sgd_step(params, x, y)
        for p in new:
            if hasattr(p, "block_until_ready"):
                p.block_until_ready()
        return loss, tuple(grads)
    return step


def w2_funcgrad(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    return _w2_functional(ctx, fg.value_and_grad, np_like=fnp)


def w2_funcgrad_jit(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    return _w2_functional(ctx, fg.value_and_grad, jit=fg.jit, np_like=fnp)


def w2_autograd(ctx):
    import autograd
    import autograd.numpy as anp
    return _w2_functional(ctx, autograd.value_and_grad, np_like=anp)


def _w2_jax(ctx, jit):
    jax, jnp = _jax()
    return _w2_functional(ctx, jax.value_and_grad, jit=jax.jit if jit else None, np_like=jnp,
                          convert=jnp.asarray)


def _w2_torch_like(T, ctx):
    params = [T.tensor(p, requires_grad=True) for p in ctx["params"]]
    x, y = T.tensor(ctx["x"]), T.tensor(ctx["y"])

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h1 = (x @ w1 + b1).relu()
        h2 = (h1 @ w2 + b2).relu()
        z3 = h2 @ w3 + b3
        m = z3.max(dim=1, keepdim=True)[0]
        lse = m[:, 0] + (z3 - m).exp().sum(dim=1).log()
        loss = (lse - (z3 * y).sum(dim=1)).mean()
        loss.backward()
        grads = []
        with T.no_grad():
            for p in params:
                grads.append(p.grad.clone())
                p.sub_(LR * p.grad)   # the SGD update, as optimizer.step() does
                p.grad = None
        return loss.detach(), tuple(grads)
    return step


def w2_torch(ctx):
    return _w2_torch_like(_torch(), ctx)


def w2_mutable(ctx):
    return _w2_torch_like(_mutable(), ctx)


# =========================================================================================
# W3: sum(tanh(A @ B) @ C), square float32 matrices, gradients for A, B and C
def w3_setup(quick):
    n = 256 if quick else 1024
    rng = np.random.default_rng(3)
    return {k: (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32) for k in "ABC"}


def w3_by_hand(a, b, c):
    t = np.tanh(a @ b)
    o = t @ c
    value = o.sum()
    d_o = np.ones_like(o)
    gc = t.T @ d_o
    dz = (d_o @ c.T) * (1 - t * t)
    return value, (dz @ b.T, a.T @ dz, gc)


def w3_reference(ctx):
    return w3_by_hand(*(ctx[k].astype(np.float64) for k in "ABC"))


def w3_numpy(ctx):
    a, b, c = ctx["A"], ctx["B"], ctx["C"]
    return lambda: w3_by_hand(a, b, c)


def _w3_fn(np_like):
    return lambda a, b, c: np_like.sum(np_like.tanh(a @ b) @ c)


def _w3_functional(ctx, value_and_grad, np_like, jit=None, convert=lambda a: a):
    vg = value_and_grad(_w3_fn(np_like), argnums=(0, 1, 2))
    if jit is not None:
        vg = jit(vg)
    a, b, c = (convert(ctx[k]) for k in "ABC")

    def step():
        v, gs = vg(a, b, c)
        for g in gs:
            if hasattr(g, "block_until_ready"):
                g.block_until_ready()
        return v, tuple(gs)
    return step


def w3_funcgrad(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    return _w3_functional(ctx, fg.value_and_grad, fnp)


def w3_funcgrad_jit(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    return _w3_functional(ctx, fg.value_and_grad, fnp, jit=fg.jit)


def w3_autograd(ctx):
    import autograd
    import autograd.numpy as anp
    f = _w3_fn(anp)  # autograd's value_and_grad takes one argnum: differentiate a tuple
    vg = autograd.value_and_grad(lambda abc: f(*abc))
    abc = tuple(ctx[k] for k in "ABC")
    return lambda: vg(abc)


def _w3_jax(ctx, jit):
    jax, jnp = _jax()
    return _w3_functional(ctx, jax.value_and_grad, jnp, jit=jax.jit if jit else None,
                          convert=jnp.asarray)


def _w3_torch_like(T, ctx):
    a, b, c = (T.tensor(ctx[k], requires_grad=True) for k in "ABC")

    def step():
        s = ((a @ b).tanh() @ c).sum()
        s.backward()
        grads = (a.grad, b.grad, c.grad)
        a.grad = b.grad = c.grad = None
        return s.detach(), grads
    return step


def w3_torch(ctx):
    return _w3_torch_like(_torch(), ctx)


def w3_mutable(ctx):
    return _w3_torch_like(_mutable(), ctx)


# =========================================================================================
# W4: a long scalar loop x = x*0.999 + 0.001*sin(x), 4 recorded ops per step
def w4_setup(quick):
    return {"x0": 0.5, "steps": 3_000 if quick else 100_000}


def w4_reference(ctx):
    x, d = ctx["x0"], 1.0
    for _ in range(ctx["steps"]):
        d *= 0.999 + 0.001 * np.cos(x)
        x = x * 0.999 + 0.001 * np.sin(x)
    return x, (np.float64(d),)


def w4_numpy(ctx):
    steps, x0 = ctx["steps"], ctx["x0"]

    def step():
        x, xs = x0, []
        for _ in range(steps):
            xs.append(x)
            x = x * 0.999 + 0.001 * np.sin(x)
        d = 1.0
        for xi in reversed(xs):
            d = d * (0.999 + 0.001 * np.cos(xi))
        return x, (d,)
    return step


def _w4_fn(np_like, steps):
    def f(x):
        for _ in range(steps):
            x = x * 0.999 + 0.001 * np_like.sin(x)
        return x
    return f


def w4_funcgrad(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    vg = fg.value_and_grad(_w4_fn(fnp, ctx["steps"]))
    x0 = ctx["x0"]

    def step():
        v, g = vg(x0)
        return v, (g,)
    return step


def w4_autograd(ctx):
    import autograd
    import autograd.numpy as anp
    vg = autograd.value_and_grad(_w4_fn(anp, ctx["steps"]))
    x0 = ctx["x0"]

    def step():
        v, g = vg(x0)
        return v, (g,)
    return step


def w4_jax(ctx):
    """JAX dispatches each op eagerly at about 1.5 ms: it runs a shorter loop (per step)."""
    jax, jnp = _jax()
    ctx = dict(ctx, steps=min(ctx["steps"], 300))
    vg = jax.value_and_grad(_w4_fn(jnp, ctx["steps"]))
    x0 = jnp.asarray(ctx["x0"])

    def step():
        v, g = vg(x0)
        return v, (g,)
    step.ctx = ctx
    return step


def _w4_torch_like(T, ctx):
    steps, x0 = ctx["steps"], ctx["x0"]

    def step():
        x = T.tensor(x0, dtype=T.float64, requires_grad=True)
        y = x
        for _ in range(steps):
            y = y * 0.999 + 0.001 * T.sin(y)
        y.backward()
        return y.detach(), (x.grad,)
    return step


def w4_torch(ctx):
    return _w4_torch_like(_torch(), ctx)


def w4_mutable(ctx):
    return _w4_torch_like(_mutable(), ctx)


# =========================================================================================
# W5: the full Hessian of sum(tanh(x)**2 * x), x in R^100 (ratios are to PyTorch's time)
def w5_setup(quick):
    return {"x": np.random.default_rng(5).standard_normal(100)}


def w5_reference(ctx):
    x = ctx["x"]
    t = np.tanh(x)
    s = 1 - t * t
    return np.sum(t * t * x), (np.diag(2 * s * s * x - 4 * t * t * s * x + 4 * t * s),)


def _w5_fn(np_like):
    return lambda x: np_like.sum(np_like.tanh(x) ** 2 * x)


def w5_numpy(ctx):
    return lambda: w5_reference(ctx)


def w5_funcgrad(ctx, jit=False):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    f = _w5_fn(fnp)
    h = fg.hessian(f)
    if jit:
        h = fg.jit(h)
    x = ctx["x"]
    return lambda: (f(x), (h(x),))


def w5_autograd(ctx):
    import autograd
    import autograd.numpy as anp
    f = _w5_fn(anp)
    h = autograd.hessian(f)
    x = ctx["x"]
    return lambda: (f(x), (h(x),))


def _w5_jax(ctx, jit):
    jax, jnp = _jax()
    f = _w5_fn(jnp)
    h = jax.hessian(f)
    if jit:
        h = jax.jit(h)
    x = jnp.asarray(ctx["x"])
    return lambda: (f(x), (h(x).block_until_ready(),))


def w5_torch(ctx):
    torch = _torch()
    from torch.autograd.functional import hessian
    f = lambda v: (torch.tanh(v) ** 2 * v).sum()  # noqa: E731
    x = torch.tensor(ctx["x"])
    return lambda: (f(x), (hessian(f, x),))


# =========================================================================================
# W6: sum(exp(sin(x)) * x), x float64[4M]: big arrays, where memory decides
def w6_setup(quick):
    return {"x": np.random.default_rng(6).standard_normal(1_000_000 if quick else 4_000_000)}


def w6_by_hand(x):
    """The careful NumPy a person would write: two arrays alive at the peak."""
    e = np.sin(x)
    np.exp(e, out=e)
    value = e @ x
    g = np.cos(x)
    g *= x
    g += 1.0
    g *= e
    return value, (g,)


def w6_reference(ctx):
    x = ctx["x"]
    e = np.exp(np.sin(x))
    return np.sum(e * x), (e * np.cos(x) * x + e,)


def w6_numpy(ctx):
    x = ctx["x"]
    return lambda: w6_by_hand(x)


def _w6_fn(np_like):
    return lambda x: np_like.sum(np_like.exp(np_like.sin(x)) * x)


def _w6_functional(ctx, value_and_grad, np_like, jit=None, convert=lambda a: a):
    vg = value_and_grad(_w6_fn(np_like))
    if jit is not None:
        vg = jit(vg)
    x = convert(ctx["x"])

    def step():
        v, g = vg(x)
        if hasattr(g, "block_until_ready"):
            g.block_until_ready()
        return v, (g,)
    return step


def w6_funcgrad(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    return _w6_functional(ctx, fg.value_and_grad, fnp)


def w6_funcgrad_jit(ctx):
    import funcgrad as fg
    import funcgrad.numpy as fnp
    return _w6_functional(ctx, fg.value_and_grad, fnp, jit=fg.jit)


def w6_autograd(ctx):
    import autograd
    import autograd.numpy as anp
    return _w6_functional(ctx, autograd.value_and_grad, anp)


def _w6_jax(ctx, jit):
    jax, jnp = _jax()
    return _w6_functional(ctx, jax.value_and_grad, jnp, jit=jax.jit if jit else None,
                          convert=jnp.asarray)


def _w6_torch_like(T, ctx):
    x = T.tensor(ctx["x"], requires_grad=True)

    def step():
        s = ((x.sin().exp()) * x).sum()
        s.backward()
        g = x.grad
        x.grad = None
        return s.detach(), (g,)
    return step


def w6_torch(ctx):
    return _w6_torch_like(_torch(), ctx)


def w6_mutable(ctx):
    return _w6_torch_like(_mutable(), ctx)


# =========================================================================================
NUMPY = "NumPy by hand"
FG = "funcgrad"
FG_JIT = "funcgrad jit"
FM = "funcgrad.mutable"
TORCH = "PyTorch"
AUTOGRAD = "HIPS autograd"
JAX = "JAX eager"
JAX_JIT = "JAX jit"
SYSTEMS = [NUMPY, FG, FG_JIT, FM, TORCH, AUTOGRAD, JAX, JAX_JIT]


def _w1_ref(ctx):
    return w1_by_hand(ctx["x"])


def _w6_any(ctx):
    return w6_reference(ctx)


WORKLOADS = [
    Workload("W1", "300 small ops on float64[3], value+grad, per op", w1_setup, _w1_ref, {
        NUMPY: w1_numpy, FG: w1_funcgrad, FG_JIT: w1_funcgrad_jit, FM: w1_mutable,
        TORCH: w1_torch, AUTOGRAD: w1_autograd, JAX: lambda c: _w1_jax(c, False),
        JAX_JIT: lambda c: _w1_jax(c, True)}),
    Workload("W2", "MLP SGD step 784-256-256-10, batch 64, float32", w2_setup, w2_reference, {
        NUMPY: w2_numpy, FG: w2_funcgrad, FG_JIT: w2_funcgrad_jit, FM: w2_mutable,
        TORCH: w2_torch, AUTOGRAD: w2_autograd, JAX: lambda c: _w2_jax(c, False),
        JAX_JIT: lambda c: _w2_jax(c, True)}, rtol=2e-3, atol=2e-5),
    Workload("W3", "sum(tanh(A@B)@C), square float32 matrices", w3_setup, w3_reference, {
        NUMPY: w3_numpy, FG: w3_funcgrad, FG_JIT: w3_funcgrad_jit, FM: w3_mutable,
        TORCH: w3_torch, AUTOGRAD: w3_autograd, JAX: lambda c: _w3_jax(c, False),
        JAX_JIT: lambda c: _w3_jax(c, True)}, rtol=2e-3, atol=2e-3),
    Workload("W4", "long scalar loop x*0.999 + 0.001*sin(x), per step", w4_setup,
             w4_reference, {
                 NUMPY: w4_numpy, FG: w4_funcgrad, FM: w4_mutable, TORCH: w4_torch,
                 AUTOGRAD: w4_autograd, JAX: w4_jax}, unit="per step"),
    Workload("W5", "Hessian of sum(tanh(x)**2*x), x in R^100", w5_setup, w5_reference, {
        NUMPY: w5_numpy, FG: w5_funcgrad, FG_JIT: lambda c: w5_funcgrad(c, jit=True),
        TORCH: w5_torch, AUTOGRAD: w5_autograd, JAX: lambda c: _w5_jax(c, False),
        JAX_JIT: lambda c: _w5_jax(c, True)}, unit="ms"),
    Workload("W6", "sum(exp(sin(x))*x), x float64[4M]", w6_setup, _w6_any, {
        NUMPY: w6_numpy, FG: w6_funcgrad, FG_JIT: w6_funcgrad_jit, FM: w6_mutable,
        TORCH: w6_torch, AUTOGRAD: w6_autograd, JAX: lambda c: _w6_jax(c, False),
        JAX_JIT: lambda c: _w6_jax(c, True)}),
]
BY_KEY = {w.key: w for w in WORKLOADS}


def check(workload: Workload, got: tuple, expected: tuple) -> str | None:
    """None when `got` (value, grads) matches the float64 reference, else what differs."""
    value, grads = got
    ref_value, ref_grads = expected
    if len(grads) != len(ref_grads):
        return f"{len(grads)} gradients, expected {len(ref_grads)}"
    pairs = [("value", value, ref_value)] + [(f"gradient {i}", g, r)
                                            for i, (g, r) in enumerate(zip(grads, ref_grads))]
    for what, a, b in pairs:
        a = _np(a).astype(np.float64)
        b = np.asarray(b, dtype=np.float64)
        if a.shape != b.shape:
            return f"{what} has shape {a.shape}, expected {b.shape}"
        if not np.allclose(a, b, rtol=workload.rtol, atol=workload.atol):
            err = float(np.max(np.abs(a - b)))
            return f"{what} differs from the float64 reference by up to {err:.3g}"
    return None
