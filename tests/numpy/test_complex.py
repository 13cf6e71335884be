"""Complex numbers (docs/complex.md): cotangents are adjoints under Re<a, b>, PyTorch's
convention, so the gradient of a real loss L(z) is dL/dx + i dL/dy; holomorphic=True gives
f'(z)."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

rng = np.random.default_rng(0)
Z = rng.standard_normal(4) + 1j * rng.standard_normal(4)


def finite_difference_gradient(loss, z, h=1e-6):
    """dL/dx + i dL/dy, one component at a time."""
    g = np.zeros_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e.flat[k] = 1.0
        dx = (float(loss(z + h * e)) - float(loss(z - h * e))) / (2 * h)
        dy = (float(loss(z + 1j * h * e)) - float(loss(z - 1j * h * e))) / (2 * h)
        g.flat[k] = dx + 1j * dy
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
def test_gradient_of_a_real_loss_is_dx_plus_i_dy(name):
    loss = REAL_LOSSES[name]
    np.testing.assert_allclose(np.asarray(fg.grad(loss)(Z)),
                               finite_difference_gradient(loss, Z), rtol=1e-6, atol=1e-7)


def test_abs_squared_closed_form():
    np.testing.assert_allclose(np.asarray(fg.grad(REAL_LOSSES["abs_squared"])(Z)), 2 * Z)


@pytest.mark.parametrize("name", sorted(REAL_LOSSES))
def test_forward_mode_agrees_in_both_directions(name):
    loss = REAL_LOSSES[name]
    g = np.asarray(fg.grad(loss)(Z))
    for direction in (np.ones(4, complex), 1j * np.ones(4), rng.standard_normal(4) * (1 - 2j)):
        _, t = fg.jvp(loss, (Z,), (direction,))
        # dL = Re(<g, dz>) under the real inner product
        np.testing.assert_allclose(float(t), np.real(np.vdot(g, direction)), rtol=1e-9, atol=1e-12)


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


def test_matches_pytorch():
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
        np.testing.assert_allclose(np.asarray(fg.grad(loss)(Z)), zt.grad.numpy(), rtol=1e-9,
                                   err_msg=name)
