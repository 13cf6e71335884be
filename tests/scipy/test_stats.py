"""funcgrad.scipy.stats: values against SciPy (with SciPy's broadcasting), derivatives in
every differentiable argument against float64 finite differences (first and second order,
both modes), and vmap against a loop."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import stats as fst
from funcgrad.test_util import check_grads

st = pytest.importorskip("scipy.stats", reason="SciPy is the reference (an optional extra)")

rng = np.random.default_rng(1)


def pos(*shape, lo=1.2, hi=3.0):
    return rng.uniform(lo, hi, shape)


X43, L13, S41 = rng.normal(size=(4, 3)), rng.normal(size=(1, 3)), pos(4, 1)
UNIT = rng.uniform(0.1, 0.9, (4, 3))
SPD = (lambda a: a @ a.T + np.eye(3))(rng.normal(size=(3, 3)))

# (distribution, method, arguments, positions differentiated): arguments broadcast as SciPy's
CONTINUOUS = [
    ("t", (X43, pos(1, 3), L13, S41), (0, 1, 2, 3), (0, 2, 3)),
    ("gamma", (pos(4, 3), pos(1, 3), L13 - 2.0, S41), (0, 1, 2, 3), (0, 2, 3)),
    ("chi2", (pos(4, 3), pos(1, 3), L13 - 2.0, S41), (0, 1, 2, 3), (0, 2, 3)),
    ("beta", (UNIT, pos(1, 3), pos(4, 1), -0.2, 1.5), (0, 1, 2, 4), (0, 4)),
    ("norm", (X43, L13, S41), (0, 1, 2), (0, 1, 2)),
]
CASES = []
for _name, _args, _density_args, _cdf_args in CONTINUOUS:
    for _method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        CASES.append((_name, _method, _args, _density_args if "pdf" in _method else _cdf_args))
_k = np.round(pos(4, 3, lo=0.0, hi=6.0))
for _method in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
    CASES.append(("poisson", _method, (_k, pos(4, 1)), (1,)))
CASES += [
    ("t", "entropy", (pos(3, lo=2.5), 0.3, pos(3)), (0, 2)),
    ("gamma", "entropy", (pos(3), 0.3, pos(3)), (0, 2)),
    ("chi2", "entropy", (pos(3), 0.3, pos(3)), (0, 2)),
    ("beta", "entropy", (pos(3), pos(3), 0.3, pos(3)), (0, 1, 3)),
    ("norm", "entropy", (0.3, pos(3)), (1,)),
    ("dirichlet", "logpdf", (np.array([0.2, 0.3, 0.5]), pos(3)), (1,)),
    ("dirichlet", "pdf", (np.array([[0.2, 0.6], [0.3, 0.1], [0.5, 0.3]]), pos(3)), (1,)),
    ("dirichlet", "entropy", (pos(3),), (0,)),
    ("dirichlet", "mean", (pos(3),), (0,)),
    ("dirichlet", "var", (pos(3),), (0,)),
    ("multivariate_normal", "logpdf", (rng.normal(size=(5, 3)), rng.normal(size=3), SPD), (0, 1, 2)),
    ("multivariate_normal", "pdf", (rng.normal(size=3), rng.normal(size=3), SPD), (0, 1, 2)),
    ("multivariate_normal", "logpdf", (rng.normal(size=(2, 3)), rng.normal(size=3), pos(3)), (0, 1, 2)),
    ("multivariate_normal", "entropy", (rng.normal(size=3), SPD), (1,)),
]
IDS = [f"{d}.{m}[{i}]" for i, (d, m, _, _) in enumerate(CASES)]


def _call(dist, method, args, diff, module):
    """f(*differentiable args) = module.dist.method(all args); covariances symmetrized."""
    def f(*d):
        full = list(args)
        for i, v in zip(diff, d):
            full[i] = v
        if dist == "multivariate_normal" and method != "entropy" and np.ndim(full[2]) == 2:
            full[2] = 0.5 * (full[2] + fnp.transpose(full[2]))
        if dist == "multivariate_normal" and method == "entropy":
            full[1] = 0.5 * (full[1] + fnp.transpose(full[1]))
        return getattr(getattr(module, dist), method)(*full)
    return f


@pytest.mark.parametrize("dist, method, args, diff", CASES, ids=IDS)
def test_values_match_scipy(dist, method, args, diff):
    ours = np.asarray(getattr(getattr(fst, dist), method)(*args))
    theirs = getattr(getattr(st, dist), method)(*args)
    assert ours.shape == np.shape(theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("dist, method, args, diff", CASES, ids=IDS)
def test_derivatives_match_finite_differences(dist, method, args, diff):
    f = _call(dist, method, args, diff, fst)
    check_grads(f, tuple(np.asarray(args[i], dtype=float) for i in diff), order=2,
                modes=("rev", "fwd"))


@pytest.mark.parametrize("dist, method", [("t", "logpdf"), ("gamma", "cdf"), ("beta", "logpdf"),
                                          ("poisson", "logpmf"), ("norm", "logcdf")])
def test_vmap_over_x_equals_a_loop(dist, method):
    case = next(c for c in CASES if c[:2] == (dist, method))
    args = [np.broadcast_to(a, (4, 3))[:, 0] if np.ndim(a) else a for a in case[2]]
    x_pos = 1 if dist == "poisson" else 0

    def f(x, *rest):
        full = list(rest)
        full.insert(x_pos, x)
        return getattr(getattr(fst, dist), method)(*full)

    g = fg.grad(f, argnums=x_pos if dist != "poisson" else 0)
    rest = [a for i, a in enumerate(args) if i != x_pos]
    xs = np.asarray(args[x_pos])
    if dist == "poisson":  # differentiate in mu: the counts are data
        g = fg.grad(lambda mu, k: fst.poisson.logpmf(k, mu))
        batched = fg.vmap(g)(xs, np.asarray(args[0]))
        looped = [g(m, k) for m, k in zip(xs, args[0])]
    else:
        in_axes = (0,) + tuple(0 if np.ndim(a) else None for a in rest)
        batched = fg.vmap(g, in_axes=in_axes)(xs, *rest)
        looped = [g(xs[i], *[a[i] if np.ndim(a) else a for a in rest]) for i in range(len(xs))]
    np.testing.assert_allclose(np.asarray(batched), np.asarray(looped), rtol=1e-12)


@pytest.mark.parametrize("dist", ["gamma", "chi2"])
@pytest.mark.parametrize("method", ["cdf", "logcdf", "sf", "logsf"])
def test_gamma_distribution_functions_are_differentiable_in_the_shape_to_second_order(dist, method):
    x, shape = pos(4, 3, lo=0.3, hi=6.0), pos(1, 3, lo=0.5, hi=4.0)
    f = getattr(getattr(fst, dist), method)
    check_grads(lambda s: f(x, s), (shape,), order=2, modes=("rev", "fwd"))
    third = lambda s: fnp.sum(fg.grad(lambda s: fnp.sum(fg.grad(lambda s: fnp.sum(f(x, s)))(s)))(s))
    with pytest.raises(fg.FuncgradError, match="argument 0"):  # the third order is not there
        fg.grad(third)(shape)


@pytest.mark.parametrize("dist, args, shape_at", [("beta", (pos(4, 3, lo=0.05, hi=0.95), pos(3), pos(3)), (1, 2)),
                                                   ("t", (np.array([-2.0, -0.3, 0.4, 3.0]), pos(4, lo=0.8)), (1,))])
@pytest.mark.parametrize("method", ["cdf", "logcdf", "sf", "logsf"])
def test_beta_and_t_distribution_functions_are_differentiable_in_the_shapes_to_first_order(
        dist, args, shape_at, method):
    f = _call(dist, method, args, shape_at, fst)
    check_grads(f, tuple(np.asarray(args[i]) for i in shape_at), order=1, modes=("rev", "fwd"))
    h = 1e-6  # and against SciPy's own values
    for i in shape_at:
        up, down = list(args), list(args)
        up[i], down[i] = args[i] + h, args[i] - h
        numeric = (getattr(getattr(st, dist), method)(*up) - getattr(getattr(st, dist), method)(*down)) / (2 * h)
        ours = fg.vjp(lambda s: getattr(getattr(fst, dist), method)(*args[:i], s, *args[i + 1:]), args[i])[1](
            np.ones(np.broadcast(*args).shape))[0]
        np.testing.assert_allclose(np.asarray(ours), np.sum(numeric, axis=tuple(range(np.ndim(numeric) - np.ndim(args[i])))),
                                   rtol=1e-6, atol=1e-9)


def test_singular_covariance_uses_the_pseudo_inverse():
    cov = np.diag([1.0, 2.0, 0.0])
    mean = np.array([0.1, -0.2, 0.4])
    x = np.array([0.5, 0.3, 0.4])
    ours = fst.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)
    np.testing.assert_allclose(ours, st.multivariate_normal.logpdf(x, mean, cov, allow_singular=True))
    check_grads(lambda x, m: fst.multivariate_normal.logpdf(
        fnp.concatenate([x[:2], m[2:]]), m, cov, allow_singular=True), (x, mean), order=2,
        modes=("rev", "fwd"))


def test_closed_forms():
    # the exponential distribution: gamma with a = 1; chi2 with 2 degrees of freedom
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(fst.gamma.cdf(x, 1.0), 1 - np.exp(-x), rtol=1e-14)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(fst.chi2.cdf(x, 2.0)))(x),
                               0.5 * np.exp(-x / 2), rtol=1e-14)
    # Cauchy = t with one degree of freedom: cdf 1/2 + arctan(x) / pi
    np.testing.assert_allclose(fst.t.cdf(x, 1.0), 0.5 + np.arctan(x) / np.pi, rtol=1e-14)
    # d/dmu log pmf = k / mu - 1
    np.testing.assert_allclose(fg.grad(lambda mu: fnp.sum(fst.poisson.logpmf(x * 2, mu)))(1.5),
                               np.sum(x * 2 / 1.5 - 1), rtol=1e-14)


def test_bad_inputs_name_the_fix():
    with pytest.raises(ValueError, match="sum to 1"):
        fst.dirichlet.logpdf(np.array([0.2, 0.2, 0.2]), np.ones(3))
    with pytest.raises(ValueError, match=r"pass x with 4 \(or 3\) entries on axis 0"):
        fst.dirichlet.logpdf(np.array([0.5, 0.5]), np.ones(4))
    with pytest.raises(ValueError, match="last axis"):
        fst.multivariate_normal.logpdf(np.zeros(4), np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match=r"must be \(3, 3\)"):
        fst.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(2))
    # in a and b: second order (checked against differences of the first), not third
    d1 = fg.grad(lambda a: fst.beta.cdf(0.5, a, 2.0))
    np.testing.assert_allclose(fg.grad(d1)(2.0), (d1(2.0 + 1e-5) - d1(2.0 - 1e-5)) / 2e-5,
                               rtol=1e-6)
    with pytest.raises(fg.FuncgradError, match="argument 0"):
        fg.grad(fg.grad(d1))(2.0)


def test_samples_come_from_scipy():
    alpha = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(fst.dirichlet.rvs(alpha, size=2, random_state=3),
                                  st.dirichlet.rvs(alpha, size=2, random_state=3))


# --- multivariate_normal.cdf ----------------------------------------------------------------
COV2 = np.array([[2.0, 0.6], [0.6, 1.5]])
MEAN2 = np.array([0.1, -0.3])
X2 = np.array([[0.5, 0.2], [-1.0, 1.0], [3.0, -2.0]])


@pytest.mark.parametrize("method", ["cdf", "logcdf"])
@pytest.mark.parametrize("kwargs", [{}, {"lower_limit": np.array([-1.5, -2.5])}])
def test_mvn_cdf_values_match_scipy(method, kwargs):
    for x, mean, cov in [(X2, MEAN2, COV2), (X2[0], MEAN2, np.array([[1.0, -0.95], [-0.95, 1.0]])),
                         (np.array([0.3, -0.1]), 0.2, 2.0), (X2, np.zeros(2), np.array([0.5, 2.0]))]:
        kw = kwargs if np.size(mean) != 1 else {}
        ours = getattr(fst.multivariate_normal, method)(x, mean, cov, **kw)
        theirs = getattr(st.multivariate_normal, method)(x, mean, cov, **kw)
        assert np.shape(ours) == np.shape(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


def test_mvn_cdf_is_differentiable_in_every_argument_in_one_and_two_dimensions():
    sym = lambda c: 0.5 * (c + fnp.transpose(c))
    check_grads(lambda x, m, c: fst.multivariate_normal.cdf(x, m, sym(c)), (X2, MEAN2, COV2),
                order=2, modes=("rev", "fwd"))
    check_grads(lambda x, m, c, lo: fst.multivariate_normal.logcdf(x, m, sym(c), lower_limit=lo),
                (X2[:2], MEAN2, COV2, np.array([-1.5, -2.0])), order=2, modes=("rev", "fwd"))
    check_grads(lambda x, m, v: fst.multivariate_normal.cdf(x, m, v), (np.array([[0.3], [1.2]]),
                np.array([0.2]), np.array([[2.0]])), order=2, modes=("rev", "fwd"))


def test_mvn_cdf_closed_forms():
    x = np.array([0.4, -0.7])
    phi = lambda z: np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
    # independent components: Phi(x0) Phi(x1), so d/dx0 = phi(x0) Phi(x1), d/dcov01 = phi(x0) phi(x1)
    g = fg.grad(fst.multivariate_normal.cdf)(x, np.zeros(2), np.eye(2))
    np.testing.assert_allclose(g, [phi(x[0]) * st.norm.cdf(x[1]), phi(x[1]) * st.norm.cdf(x[0])],
                               rtol=1e-14)
    g_cov = fg.grad(fst.multivariate_normal.cdf, argnums=2)(x, np.zeros(2), np.eye(2))
    np.testing.assert_allclose(g_cov[0, 1] + g_cov[1, 0], phi(x[0]) * phi(x[1]), rtol=1e-14)
    np.testing.assert_allclose(g_cov[0, 1], g_cov[1, 0])  # the symmetric part of cov is read
    # at the origin with correlation r: 1/4 + asin(r) / (2 pi)
    r = 0.3
    np.testing.assert_allclose(fst.multivariate_normal.cdf(np.zeros(2), cov=[[1.0, r], [r, 1.0]]),
                               0.25 + np.arcsin(r) / (2 * np.pi), rtol=1e-14)


def test_mvn_cdf_under_vmap_equals_a_loop():
    g = fg.grad(lambda x, c: fst.multivariate_normal.cdf(x, MEAN2, c))
    covs = np.stack([COV2, np.array([[1.0, -0.2], [-0.2, 0.7]]), np.eye(2)])
    batched = fg.vmap(g)(X2, covs)
    np.testing.assert_allclose(batched, [g(x, c) for x, c in zip(X2, covs)], rtol=1e-13)


COV3 = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.3], [0.2, 0.3, 1.0]])
MEAN3 = np.array([0.2, -0.1, 0.3])


def _cdf3_by_quadrature(x, mean, cov):
    """P(X <= x) in three dimensions to about 1e-12: the first component's density times the
    exact two-dimensional conditional probability, integrated by adaptive quadrature."""
    from scipy import integrate
    s00, others = cov[0, 0], [1, 2]
    across = cov[others, 0]
    conditional = cov[np.ix_(others, others)] - np.outer(across, across) / s00

    def integrand(t):
        shifted = mean[others] + across / s00 * (t - mean[0])
        return (st.norm.pdf(t, mean[0], np.sqrt(s00))
                * st.multivariate_normal.cdf(x[others], shifted, conditional))
    return integrate.quad(integrand, -np.inf, x[0], epsabs=1e-13, epsrel=1e-12)[0]


def test_mvn_cdf_above_two_dimensions_is_scipys_estimate():
    x = np.array([0.1, 0.2, 0.3])
    ours = fst.multivariate_normal.cdf(x, np.zeros(3), COV3, rng=np.random.default_rng(5))
    theirs = st.multivariate_normal.cdf(x, np.zeros(3), COV3, rng=np.random.default_rng(5))
    np.testing.assert_allclose(ours, theirs, rtol=1e-15)


def test_mvn_cdf_in_three_dimensions_is_differentiable_in_x_mean_and_lower_limit():
    """The slope in x_i is the density of X_i times the conditional box probability, exact in
    three dimensions (a two-dimensional conditional): against central differences of a
    quadrature of the cdf, at first and second order, in both modes."""
    x = np.array([0.5, 0.1, 0.9])
    grad_x = np.asarray(fg.grad(lambda x: fst.multivariate_normal.cdf(x, MEAN3, COV3))(x))
    h = 1e-4
    numeric = np.array([(_cdf3_by_quadrature(x + h * e, MEAN3, COV3)
                         - _cdf3_by_quadrature(x - h * e, MEAN3, COV3)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(grad_x, numeric, rtol=1e-6, atol=1e-9)
    grad_mean = fg.grad(lambda m: fst.multivariate_normal.cdf(x, m, COV3))(MEAN3)
    np.testing.assert_allclose(grad_mean, -grad_x, rtol=1e-13)
    tangent = fg.jvp(lambda x: fst.multivariate_normal.cdf(x, MEAN3, COV3), (x,),
                     (np.array([1.0, 2.0, 3.0]),))[1]
    np.testing.assert_allclose(tangent, grad_x @ [1.0, 2.0, 3.0], rtol=1e-13)
    # second order: the faces are two-dimensional cdfs (exact), differentiable again; the
    # slopes' own finite differences check them (the value above two dimensions is an estimate)
    check_grads(lambda x, m: fg.grad(fst.multivariate_normal.cdf, argnums=(0, 1))(x, m, COV3),
                (x, MEAN3), order=1, modes=("rev", "fwd"))
    hessian = np.asarray(fg.hessian(lambda x: fst.multivariate_normal.cdf(x, MEAN3, COV3))(x))
    np.testing.assert_allclose(hessian, hessian.T, atol=1e-15)
    # a box with lower limits (one infinite), a batch of points weighted differently: its
    # slopes equal those of the box written as orthant probabilities by inclusion-exclusion
    lower = np.array([-1.0, -np.inf, -0.5])
    points = np.stack([x, x - 0.3])
    weights = np.array([1.0, 2.0])

    def box(x, m, lo):
        return fnp.sum(fst.multivariate_normal.cdf(x, m, COV3, lower_limit=lo) * weights)

    def corners(x, m, lo):
        orthant = lambda p: fst.multivariate_normal.cdf(p, m, COV3)  # noqa: E731
        at = lambda i, v: fnp.concatenate([x[..., :i], v[..., None], x[..., i + 1:]], axis=-1)  # noqa: E731
        lo0, lo2 = fnp.broadcast_to(lo[0], x.shape[:-1]), fnp.broadcast_to(lo[2], x.shape[:-1])
        both = fnp.stack([lo0, x[..., 1], lo2], axis=-1)
        total = orthant(x) - orthant(at(0, lo0)) - orthant(at(2, lo2)) + orthant(both)
        return fnp.sum(total * weights)

    for argnums in (0, 1):
        np.testing.assert_allclose(fg.grad(box, argnums)(points, MEAN3, lower),
                                   fg.grad(corners, argnums)(points, MEAN3, lower),
                                   rtol=1e-10, atol=1e-13)
    g_lower = np.asarray(fg.grad(box, 2)(points, MEAN3, lower))
    want = np.asarray(fg.grad(corners, 2)(points, MEAN3, fnp.asarray(lower)))
    np.testing.assert_allclose(g_lower, want, rtol=1e-10, atol=1e-13)
    assert g_lower[1] == 0.0 and np.all(g_lower[[0, 2]] < 0)
    tangent = fg.jvp(lambda lo: box(points, MEAN3, lo), (lower,), (np.array([1.0, 0.0, 2.0]),))[1]
    np.testing.assert_allclose(tangent, g_lower @ [1.0, 0.0, 2.0], rtol=1e-12)


def test_mvn_cdf_above_three_dimensions_has_scipys_accuracy_in_its_slopes():
    # independent components: P = prod Phi((x_i - m_i) / s_i), dP/dx_i in closed form; the
    # faces are three-dimensional cdfs, SciPy's estimates (default abseps 1e-5)
    s = np.array([1.0, 2.0, 0.5, 1.5])
    x = np.array([0.3, -0.2, 0.1, 1.0])
    got = fg.grad(lambda x: fst.multivariate_normal.cdf(x, np.zeros(4), np.diag(s ** 2),
                                                        rng=np.random.default_rng(2)))(x)
    big, small = st.norm.cdf(x / s), st.norm.pdf(x / s) / s
    want = [small[i] * np.prod(np.delete(big, i)) for i in range(4)]
    np.testing.assert_allclose(got, want, atol=2e-5)


def test_mvn_cdf_above_two_dimensions_refuses_a_derivative_in_cov():
    x = np.array([0.1, 0.2, 0.3])
    with pytest.raises(fg.FuncgradError, match="not differentiable in cov above two dimensions"):
        fg.grad(fst.multivariate_normal.cdf, argnums=2)(x, np.zeros(3), COV3)
    with pytest.raises(fg.FuncgradError, match="not differentiable in cov"):
        fg.jvp(lambda c: fst.multivariate_normal.cdf(x, np.zeros(3), c), (COV3,), (COV3,))


def test_mvn_cdf_refuses_a_covariance_scipy_refuses():
    with pytest.raises(ValueError):
        fst.multivariate_normal.cdf(np.zeros(2), cov=np.array([[1.0, 2.0], [2.0, 1.0]]))
