"""Complex inputs through decompositions and products at higher order: finite differences in
float64 everywhere, JAX as the oracle where it is installed (skipped, saying so, where not).

A complex SVD is defined only up to a phase per singular pair, so its derivative is checked on
functions that do not depend on that choice (U diag(w) V^H, |U|^2): LAPACK's phase moves with
the input, and the rule must carry that term (JAX's ``dUdV_diag``)."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

rng = np.random.default_rng(3)


def _c(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _jax():
    jax = pytest.importorskip("jax", reason="JAX is the oracle for the functional model")
    jax.config.update("jax_enable_x64", True)
    return jax


SVD_SHAPES = [(3, 3), (4, 2), (2, 4), (2, 3, 3)]


def _svd_loss(np_, weights, w):
    """Invariant under the phase of each singular pair: U diag(w) V^H and |U|^2, |V|^2."""
    def loss(a):
        u, s, vh = np_.linalg.svd(a, full_matrices=False)
        k = s.shape[-1]
        recon = (u * w[:k]) @ vh
        return (np_.sum(np_.real(weights * recon)) + np_.sum(np_.abs(u) ** 2 * np.arange(1, k + 1))
                + np_.sum(np_.abs(vh) ** 2 * np.arange(1, k + 1)[:, None]) + np_.sum(s * w[:k]))
    return loss


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
def test_complex_svd_gauge_invariant_loss_matches_finite_differences(shape):
    a, weights, w = _c(*shape), _c(*shape), rng.standard_normal(4)
    check_grads(_svd_loss(fnp, weights, w), (a,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4)], ids=str)  # JAX runs op by op: slow
def test_complex_svd_gradient_matches_jax(shape):
    jax = _jax()
    a, weights, w = _c(*shape), _c(*shape), rng.standard_normal(4)
    got = fg.grad(_svd_loss(fnp, weights, w))(a)
    expected = jax.grad(_svd_loss(jax.numpy, weights, w))(jax.numpy.asarray(a))
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-9, atol=1e-11)


def test_complex_nuclear_norm_gradient_is_u_vh():
    # d ||A||_* = Re tr((U V^H)^H dA): JAX's gradient (dx - i dy) is conj(U V^H)
    a = _c(3, 3)
    u, _, vh = np.linalg.svd(a)
    got = fg.grad(lambda x: fnp.linalg.norm(x, "nuc"))(a)
    np.testing.assert_allclose(np.asarray(got), np.conj(u @ vh), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ord", [1, 3, 4, 0.5])
def test_complex_vector_norms_to_second_order(ord):
    # x / |x| varies with a complex x: a rule treating it as a constant sign is wrong at order 2
    x = _c(6)
    check_grads(lambda v: fnp.linalg.norm(v, ord=ord), (x,), order=2, modes=("rev", "fwd"))
    check_grads(lambda v: fnp.linalg.norm(v, ord=ord, axis=1), (x.reshape(2, 3),), order=2,
                modes=("rev", "fwd"))


# --- products of complex arrays at second and third order -----------------------------------
W2 = _c(2, 2)


def _products(np_):
    """Real losses through each product, nonlinear so that higher derivatives are not 0."""
    def real_loss(z):
        return np_.sum(np_.real(z * np_.conj(z) * W2[0, 0] + z ** 3))

    return {
        "einsum": lambda a, b: real_loss(np_.einsum("ij,jk->ik", a, b)),
        "einsum_trace": lambda a, b: real_loss(np_.einsum("ij,ji,kk->", a, b, a)),
        "kron": lambda a, b: real_loss(np_.kron(a, b)),
        "tensordot": lambda a, b: real_loss(np_.tensordot(a, b, axes=([1], [0]))),
        "dot": lambda a, b: real_loss(np_.dot(a, b)),
        "outer": lambda a, b: real_loss(np_.outer(a, b)),
    }


PRODUCT_NAMES = sorted(_products(np))


@pytest.mark.parametrize("name", PRODUCT_NAMES)
def test_complex_products_at_third_order_match_finite_differences(name):
    f = _products(fnp)[name]
    a, b = _c(2, 2), _c(2, 2)
    check_grads(f, (a, b), order=3, modes=("rev", "fwd"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", PRODUCT_NAMES)
def test_complex_products_second_and_third_derivatives_match_jax(name):
    jax = _jax()
    jnp = jax.numpy
    a, b = _c(2, 2), _c(2, 2)
    v = _c(2, 2)
    f, jf = _products(fnp)[name], _products(jnp)[name]

    def hvp(grad, mod, f, a, b):
        # the derivative of Re <grad f, v> in a: one Hessian-vector product
        return grad(lambda x: mod.real(mod.sum(grad(f)(x, b) * v)))(a)

    got2 = hvp(fg.grad, fnp, f, a, b)
    exp2 = hvp(jax.grad, jnp, jf, jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(got2), np.asarray(exp2), rtol=1e-9, atol=1e-10)
    got3 = fg.grad(lambda x: fnp.real(fnp.sum(hvp(fg.grad, fnp, f, x, b) * v)))(a)
    exp3 = jax.grad(lambda x: jnp.real(jnp.sum(hvp(jax.grad, jnp, jf, x, jnp.asarray(b)) * v)))(
        jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(got3), np.asarray(exp3), rtol=1e-9, atol=1e-10)
