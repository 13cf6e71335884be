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


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
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
