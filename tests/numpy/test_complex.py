"""Complex numbers (docs/complex.md). The functional model follows JAX's convention: a VJP is
the plain transpose of the JVP (for a holomorphic f, ``ct * f'(z)``), so the gradient of a
real loss L(z) is dL/dx - i dL/dy, the conjugate of PyTorch's; holomorphic=True gives f'(z).
The mutable model keeps PyTorch's dL/dx + i dL/dy. Oracles: JAX (skipped without it; the
finite differences, closed forms and recorded JAX values below run everywhere) and torch."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

rng = np.random.default_rng(0)
Z = rng.standard_normal(4) + 1j * rng.standard_normal(4)


def finite_difference_gradient(loss, z, h=1e-6):
    """dL/dx - i dL/dy (JAX's gradient), one component at a time."""
    g = np.zeros_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e.flat[k] = 1.0
        dx = (float(loss(z + h * e)) - float(loss(z - h * e))) / (2 * h)
        dy = (float(loss(z + 1j * h * e)) - float(loss(z - 1j * h * e))) / (2 * h)
        g.flat[k] = dx - 1j * dy
    return g


REAL_LOSSES = {
    "abs_squared": lambda z: fnp.sum(fnp.abs(z) ** 2),
    "abs": lambda z: fnp.sum(fnp.abs(z)),
    "real_of_square": lambda z: fnp.sum(fnp.real(z * z)),
    "imag_of_exp": lambda z: fnp.sum(fnp.imag(fnp.exp(z))),
    "angle": lambda z: fnp.sum(fnp.angle(z)),
    "conj_product": lambda z: fnp.sum(fnp.real(z * fnp.conj(z[::-1]))),
    "division": lambda z: fnp.sum(fnp.abs(1.0 / (z + 3.0))),
    "log_abs": lambda z: fnp.sum(fnp.real(fnp.log(z))),
    "sqrt": lambda z: fnp.sum(fnp.abs(fnp.sqrt(z)) ** 3),
    "matmul": lambda z: fnp.sum(fnp.abs(fnp.reshape(z, (2, 2)) @ fnp.array([1.0 - 2j, 0.5j])) ** 2),
    "fft": lambda z: fnp.sum(fnp.abs(fnp.fft.fft(z) * np.arange(4)) ** 2),
    "norm": lambda z: fnp.linalg.norm(z),
    "vdot": lambda z: fnp.real(fnp.vdot(z, z * (1 + 1j))),
    "cumprod": lambda z: fnp.sum(fnp.real(fnp.cumprod(z))),
    "inv": lambda z: fnp.sum(fnp.abs(fnp.linalg.inv(fnp.reshape(z, (2, 2)))) ** 2),
    "det": lambda z: fnp.abs(fnp.linalg.det(fnp.reshape(z, (2, 2)))),
    "solve": lambda z: fnp.sum(fnp.abs(fnp.linalg.solve(fnp.reshape(z, (2, 2)) + 3.0,
                                                         fnp.array([1.0, 1j]))) ** 2),
    "cholesky": lambda z: fnp.sum(fnp.abs(fnp.linalg.cholesky(_hermitian(z))) ** 2 * np.arange(1, 5).reshape(2, 2)),
    "eigvalsh": lambda z: fnp.sum(fnp.linalg.eigvalsh(_hermitian(z)) * np.array([1.0, 3.0])),
    "eigvals": lambda z: fnp.sum(fnp.abs(fnp.linalg.eigvals(fnp.reshape(z, (2, 2)) + np.diag([0.0, 4.0]))) * np.array([1.0, 2.0])),
    "svdvals": lambda z: fnp.sum(fnp.linalg.svd(fnp.reshape(z, (2, 2)), compute_uv=False) * np.array([1.0, 2.0])),
    "einsum": lambda z: fnp.abs(fnp.einsum("i,i->", z, fnp.conj(z) * (1 + 2j))),
    "irfft": lambda z: fnp.sum(fnp.fft.irfft(z, n=6) ** 2 * np.arange(6)),
}


def _hermitian(z):
    a = fnp.reshape(z, (2, 2))
    return a @ fnp.conj(fnp.transpose(a)) + 2.0 * fnp.eye(2)


@pytest.mark.parametrize("name", sorted(REAL_LOSSES))
def test_gradient_of_a_real_loss_is_dx_minus_i_dy(name):
    loss = REAL_LOSSES[name]
    np.testing.assert_allclose(np.asarray(fg.grad(loss)(Z)),
                               finite_difference_gradient(loss, Z), rtol=1e-6, atol=1e-7)


def test_abs_squared_closed_form():
    np.testing.assert_allclose(np.asarray(fg.grad(REAL_LOSSES["abs_squared"])(Z)), 2 * np.conj(Z))


@pytest.mark.parametrize("name", sorted(REAL_LOSSES))
def test_forward_mode_agrees_in_both_directions(name):
    loss = REAL_LOSSES[name]
    g = np.asarray(fg.grad(loss)(Z))
    for direction in (np.ones(4, complex), 1j * np.ones(4), rng.standard_normal(4) * (1 - 2j)):
        _, t = fg.jvp(loss, (Z,), (direction,))
        # dL = Re(sum(g * dz)): the gradient pairs with a tangent without conjugation
        np.testing.assert_allclose(float(t), np.real(np.sum(g * direction)), rtol=1e-9, atol=1e-12)


def test_real_input_through_complex_intermediates():
    def f(x):
        z = fnp.exp(1j * x) * (x + 2j)
        return fnp.real(fnp.fft.ifft(z * fnp.conj(z[::-1])))
    x = rng.standard_normal(5)
    check_grads(f, (x,), order=2, modes=("rev", "fwd"))
    g = fg.grad(lambda x: fnp.sum(f(x)))(x)
    assert g.dtype == np.float64  # a real input gets a real gradient


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_dtype_is_kept(dtype):
    z = Z.astype(dtype)
    g = fg.grad(REAL_LOSSES["abs_squared"])(z)
    assert g.dtype == dtype


HOLOMORPHIC = {
    "cube": (lambda z: z ** 3, lambda z: 3 * z ** 2),
    "sin": (fnp.sin, np.cos),
    "exp_times": (lambda z: fnp.exp(z) * z, lambda z: np.exp(z) * (z + 1)),
    "log": (fnp.log, lambda z: 1 / z),
    "reciprocal": (lambda z: 1.0 / (z + 2.0), lambda z: -1 / (z + 2.0) ** 2),
    "tanh": (fnp.tanh, lambda z: 1 - np.tanh(z) ** 2),
}


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_grad_is_the_complex_derivative(name):
    f, df = HOLOMORPHIC[name]
    for z in Z:
        np.testing.assert_allclose(complex(fg.grad(f, holomorphic=True)(z)), df(z), rtol=1e-12)


def test_holomorphic_second_derivative():
    d2 = fg.grad(fg.grad(fnp.sin, holomorphic=True), holomorphic=True)
    for z in Z:
        np.testing.assert_allclose(complex(d2(z)), -np.sin(z), rtol=1e-12)


def test_holomorphic_forward_mode_is_complex_linear():
    z, dz = Z[0], np.complex128(0.3 - 0.7j)
    _, t = fg.jvp(lambda z: z ** 3, (z,), (dz,))
    np.testing.assert_allclose(complex(t), 3 * z ** 2 * dz)


def test_holomorphic_needs_complex_inputs_and_output():
    with pytest.raises(TypeError, match="needs complex inputs"):
        fg.grad(fnp.sin, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="needs a complex output"):
        fg.grad(fnp.abs, holomorphic=True)(1.0 + 1j)
    with pytest.raises(TypeError, match="holomorphic=True"):
        fg.grad(fnp.sin)(1.0 + 1j)


JAX_LOSSES = sorted(REAL_LOSSES)


@pytest.mark.parametrize("name", JAX_LOSSES)
def test_gradients_match_jax(name):
    jax = pytest.importorskip("jax", reason="the JAX oracle is not installed (CI has none)")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    loss = REAL_LOSSES[name]
    # the same loss written with jax.numpy: the module is swapped under the lambda
    jax_loss = _with_module(loss, jnp)
    expected = np.asarray(jax.grad(jax_loss)(jnp.asarray(Z)))
    np.testing.assert_allclose(np.asarray(fg.grad(loss)(Z)), expected, rtol=1e-9, atol=1e-12)


def _with_module(fn, module):
    import types
    glb = dict(fn.__globals__, fnp=module)
    if fn is not _hermitian:
        glb["_hermitian"] = _with_module(_hermitian, module)
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)


# Values recorded from JAX 0.10.2 (jax_enable_x64), so that CI, which has no JAX, still checks
# funcgrad against JAX's numbers.
Z2 = np.array([0.3 - 0.8j, -1.2 + 0.4j])
RECORDED_JAX = {
    "grad sum(abs(sin(z)))": (
        lambda: fg.grad(lambda z: fnp.sum(fnp.abs(fnp.sin(z))))(Z2),
        [0.3016306878610412 + 1.2690228410839408j, -0.3315855248428525 - 0.43597208063876025j]),
    "grad sum(real(exp(z) * z))": (
        lambda: fg.grad(lambda z: fnp.sum(fnp.real(fnp.exp(z) * z)))(Z2),
        [0.4479288443072251 - 2.011192819037369j, -0.10239986832867776 + 0.0875091859415454j]),
    "vjp of fft of a real input, complex cotangent": (
        lambda: fg.vjp(fnp.fft.fft, np.array([0.5, -1.0, 2.0]))[1](np.array([1 + 2j, -0.5j, 0.25]))[0],
        [1.25, 0.4419872981077807, 1.3080127018922192]),
    "grad abs(det(a))": (
        lambda: fg.grad(lambda a: fnp.abs(fnp.linalg.det(a)))(np.array([[1 + 1j, 2.0], [0.5j, 3 - 1j]])),
        [[2.6678918753996625 - 1.6977493752543307j, -0.12126781251816648 - 0.48507125007266594j],
         [-1.9402850002906638 + 0.48507125007266594j, 1.212678125181665 + 0.7276068751089989j]]),
}


@pytest.mark.parametrize("case", sorted(RECORDED_JAX))
def test_recorded_jax_values(case):
    compute, expected = RECORDED_JAX[case]
    np.testing.assert_allclose(np.asarray(compute()), expected, rtol=1e-12, atol=1e-14)


def test_the_three_convention_cases_in_closed_form():
    """The cases where the conventions differ, against their closed forms: a holomorphic VJP
    multiplies by f'(z) (no conjugate); the gradient of |z|^2 is 2 conj(z); the VJP of fft
    of a real signal takes the real part of fft of the cotangent (the DFT is symmetric)."""
    z, ct = Z[0], np.complex128(0.4 - 1.3j)
    _, vjp_fn = fg.vjp(lambda z: z ** 3, z)
    np.testing.assert_allclose(complex(vjp_fn(ct)[0]), ct * 3 * z ** 2)
    np.testing.assert_allclose(complex(fg.grad(lambda z: fnp.abs(z) ** 2)(z)), 2 * np.conj(z))
    x = rng.standard_normal(6)
    cts = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    _, vjp_fn = fg.vjp(fnp.fft.fft, x)
    np.testing.assert_allclose(np.asarray(vjp_fn(cts)[0]), np.real(np.fft.fft(cts)), atol=1e-12)


def test_functional_gradient_is_the_conjugate_of_pytorchs():
    torch = pytest.importorskip("torch", reason="the PyTorch oracle (torch 2.13.0 CPU) is not installed")
    for name in ("abs_squared", "abs", "real_of_square", "imag_of_exp", "angle", "division",
                 "log_abs", "fft", "inv"):
        loss = REAL_LOSSES[name]
        zt = torch.tensor(Z, requires_grad=True)
        torch_ops = {
            "abs_squared": lambda z: (z.abs() ** 2).sum(), "abs": lambda z: z.abs().sum(),
            "real_of_square": lambda z: (z * z).real.sum(), "imag_of_exp": lambda z: z.exp().imag.sum(),
            "angle": lambda z: z.angle().sum(), "division": lambda z: (1.0 / (z + 3.0)).abs().sum(),
            "log_abs": lambda z: z.log().real.sum(),
            "fft": lambda z: ((torch.fft.fft(z) * torch.arange(4)).abs() ** 2).sum(),
            "inv": lambda z: (torch.linalg.inv(z.reshape(2, 2)).abs() ** 2).sum(),
        }
        torch_ops[name](zt).backward()
        np.testing.assert_allclose(np.asarray(fg.grad(loss)(Z)), np.conj(zt.grad.numpy()),
                                   rtol=1e-9, err_msg=name)


# The mutable model: PyTorch's convention, from the same rules conjugated at its boundary.
W = np.array([1.0 + 2.0j, -0.5j, 2.0, 0.25 - 1j])
MUTABLE_LOSSES = {
    "abs": lambda z, w: z.abs().sum(),
    "abs_squared": lambda z, w: (z.abs() ** 2).sum(),
    "division": lambda z, w: (1.0 / (z + 3.0)).abs().sum(),
    "sin": lambda z, w: z.sin().abs().sum(),
    "exp_times": lambda z, w: (z.exp() * z).abs().sum(),
    "outer_matmul": lambda z, w: (z.reshape(4, 1) @ z.reshape(1, 4)).abs().sum(),
    "sqrt": lambda z, w: z.sqrt().abs().sum(),
    "tanh_squared": lambda z, w: (z.tanh() ** 2).abs().sum(),
    "log": lambda z, w: z.log().abs().sum(),
    "times_constant": lambda z, w: (z * w).abs().sum(),
}


@pytest.mark.parametrize("name", sorted(MUTABLE_LOSSES))
def test_mutable_gradients_are_pytorchs(name):
    import funcgrad.mutable as mt
    loss = MUTABLE_LOSSES[name]
    z = mt.tensor(Z, requires_grad=True)
    loss(z, mt.tensor(W)).backward()
    # PyTorch's gradient is dL/dx + i dL/dy: the conjugate of the finite-difference JAX one
    expected = np.conj(finite_difference_gradient(
        lambda v: np.real(loss(mt.tensor(v), mt.tensor(W)).item()), Z))
    np.testing.assert_allclose(z.grad.numpy(), expected, rtol=1e-6, atol=1e-7)
    torch = pytest.importorskip("torch", reason="the PyTorch oracle (torch 2.13.0 CPU) is not installed")
    zt = torch.tensor(Z, requires_grad=True)
    loss(zt, torch.tensor(W)).backward()
    np.testing.assert_allclose(z.grad.numpy(), zt.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_mutable_second_order_is_pytorchs():
    """create_graph: the conjugation at the boundary is itself differentiated."""
    import funcgrad.mutable as mt
    torch = pytest.importorskip("torch", reason="the PyTorch oracle (torch 2.13.0 CPU) is not installed")
    results = []
    for lib in (mt, torch):
        z = lib.tensor(Z, requires_grad=True)
        (g,) = lib.autograd.grad((z.sin() * z).abs().sum(), z, create_graph=True)
        (gg,) = lib.autograd.grad((g.abs() ** 2).sum(), z)
        results.append((g.detach().numpy(), gg.detach().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
