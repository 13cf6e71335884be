"""One table-driven sweep over every name that funcgrad.numpy, funcgrad.numpy.linalg and
funcgrad.numpy.fft declare, and over the cases given here for some of funcgrad.scipy's
public functions (which of those need cases is tests/scipy's business).

The names come from the namespaces themselves (``ns.exports`` and ``ns.kinds``), so a new
declaration without an entry here fails `test_every_declared_name_has_an_entry` unless it
is listed in NOT_SWEPT with its reason. Each differentiable name is checked at first and
second order, in reverse and forward mode, against central finite differences in float64
(`check_grads`), over scalar, vector, matrix and broadcasting inputs; then once in float32,
where outputs and gradients must stay float32 and match the float64 values within float32
tolerances. Non-differentiable names must pass a traced input through without error and
return NumPy's values, carrying no derivative; constructors must return NumPy's values.
"""
from __future__ import annotations

import io

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src.core import Array, Tracer
from funcgrad.numpy._namespace import ns as numpy_ns
from funcgrad.numpy import fft as fnp_fft
from funcgrad.numpy import linalg as fnp_linalg
from funcgrad.scipy import special as fsp
from funcgrad.scipy.stats import norm as fnorm
from funcgrad.test_util import check_grads
from funcgrad.tree_util import tree_flatten, tree_unflatten

NAMESPACES = {"numpy": numpy_ns, "linalg": fnp_linalg.ns, "fft": fnp_fft.ns}
NUMPY_MODULES = {"numpy": np, "linalg": np.linalg, "fft": np.fft}
# funcgrad.scipy's public modules with cases here, read through their public names only
SCIPY_MODULES = {"special": fsp, "norm": fnorm}


def declared(kind: str) -> list[str]:
    return sorted(f"{label}.{name}" for label, ns in NAMESPACES.items()
                  for name in ns.exports if ns.kinds[name] == kind)


def function(qualname: str):
    label, name = qualname.split(".", 1)
    if label in SCIPY_MODULES:
        return getattr(SCIPY_MODULES[label], name)
    return NAMESPACES[label].exports[name]


rng = np.random.default_rng(0)


def U(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape)


def P(*shape):
    """Positive values, away from 0."""
    return U(*shape, lo=0.5, hi=1.5)


def S(*shape):
    """Values of either sign, away from 0 (kinks such as abs(0) stay out of the way)."""
    return P(*shape) * rng.choice([-1.0, 1.0], shape)


def C(*shape):
    return U(*shape) + 1j * U(*shape)


def with_nan(x):
    x = np.array(x, dtype=float)
    x.flat[1] = np.nan
    return x


ALL_CASES: dict[str, list] = {}


def add(qualname, *cases):
    """Register ``(f, args)`` cases; `f` maps the arrays `args` to an output pytree."""
    assert qualname not in ALL_CASES, qualname
    ALL_CASES[qualname] = list(cases)


def _reference(name):
    """NumPy's (or SciPy's) function of the same name, if there is one."""
    label, short = name.split(".", 1)
    if label == "special":
        special = pytest.importorskip("scipy.special", reason="SciPy is the reference for special functions")
        return getattr(special, short, None)
    if label == "norm":
        stats = pytest.importorskip("scipy.stats", reason="SciPy is the reference for distributions")
        return getattr(stats.norm, short, None)
    return getattr(NUMPY_MODULES[label], short, None)


def call(name, *extra, **kwargs):
    """f(x, ...) = name(x, ..., *extra, **kwargs), resolved at call time; ``f.reference``
    computes the same call with NumPy's function."""
    def f(*arrays):
        return function(name)(*arrays, *extra, **kwargs)

    def reference(*arrays):
        return _reference(name)(*arrays, *extra, **kwargs)
    f.__name__ = name
    f.reference = reference
    return f


# --- elementwise ---------------------------------------------------------------------------
def unary(name, draw=U, complex_too=False):
    cases = [(call(name), (draw(),)), (call(name), (draw(3),)), (call(name), (draw(2, 3),))]
    if complex_too:
        cases.append((call(name), (C(2, 3),)))
    add(name, *cases)


for _n in ("numpy.sin", "numpy.cos", "numpy.tan", "numpy.arctan", "numpy.sinh", "numpy.cosh",
           "numpy.tanh", "numpy.arcsinh", "numpy.exp", "numpy.exp2", "numpy.expm1",
           "numpy.square", "numpy.negative", "numpy.positive", "numpy.deg2rad",
           "numpy.rad2deg", "numpy.degrees", "numpy.radians", "numpy.sinc", "numpy.nan_to_num",
           "numpy.real_if_close", "numpy.copy", "numpy.ravel", "numpy.atleast_1d",
           "numpy.atleast_2d", "numpy.atleast_3d", "numpy.array", "numpy.asarray",
           "special.erf", "special.erfc", "special.expit", "special.log_expit", "special.ndtr",
           "special.log_ndtr", "special.i0", "special.i1", "special.i0e", "special.i1e"):
    unary(_n, U, complex_too=_n in ("numpy.sin", "numpy.exp", "numpy.tanh", "numpy.square"))
for _n in ("numpy.arcsin", "numpy.arccos", "numpy.arctanh", "special.erfinv"):
    unary(_n, lambda *s: U(*s, lo=-0.8, hi=0.8))
for _n in ("numpy.log", "numpy.log2", "numpy.log10", "numpy.log1p", "numpy.sqrt", "numpy.cbrt",
           "numpy.reciprocal", "special.gammaln", "special.gamma", "special.digamma",
           "special.psi", "special.entr"):
    unary(_n, P, complex_too=_n in ("numpy.log", "numpy.sqrt", "numpy.reciprocal"))
for _n in ("numpy.abs", "numpy.absolute", "numpy.fabs"):
    unary(_n, S, complex_too=_n != "numpy.fabs")
unary("numpy.arccosh", lambda *s: U(*s, lo=1.2, hi=2.0))
unary("special.logit", lambda *s: U(*s, lo=0.2, hi=0.8))
unary("special.erfcinv", lambda *s: U(*s, lo=0.2, hi=1.8))
add("numpy.real", (call("numpy.real"), (C(3),)), (call("numpy.real"), (U(2, 3),)))
add("numpy.imag", (call("numpy.imag"), (C(3),)), (call("numpy.imag"), (U(2, 3),)))
add("numpy.conj", (call("numpy.conj"), (C(3),)), (call("numpy.conj"), (U(2, 3),)))
add("numpy.conjugate", (call("numpy.conjugate"), (C(2, 3),)))
add("numpy.angle", (call("numpy.angle"), (C(3),)), (call("numpy.angle", deg=True), (C(2, 3),)))
add("numpy.astype", (call("numpy.astype", np.float64), (U(2, 3),)),
    (lambda x: fnp.astype(x, np.complex128) * (1 + 2j), (U(3),)))
add("special.polygamma", (lambda x: fsp.polygamma(1, x), (P(3),)),
    (lambda x: fsp.polygamma(2, x), (P(2, 3),)))


def binary(name, draw_x=U, draw_y=U, complex_too=False):
    cases = [(call(name), (draw_x(3), draw_y(3))), (call(name), (draw_x(2, 3), draw_y(3))),
             (call(name), (draw_x(), draw_y(2))), (call(name), (draw_x(2, 1), draw_y(1, 3)))]
    if complex_too:
        cases.append((call(name), (C(2, 3), C(3))))
    add(name, *cases)


for _n in ("numpy.add", "numpy.subtract", "numpy.multiply", "numpy.maximum", "numpy.minimum",
           "numpy.fmax", "numpy.fmin", "numpy.hypot", "numpy.arctan2", "numpy.logaddexp",
           "numpy.logaddexp2", "special.xlogy", "special.xlog1py"):
    binary(_n, U, P if _n.startswith("special") else U,
           complex_too=_n in ("numpy.add", "numpy.subtract", "numpy.multiply"))
for _n in ("numpy.divide", "numpy.true_divide"):
    binary(_n, U, S, complex_too=True)
for _n in ("numpy.power", "numpy.pow", "numpy.float_power"):
    binary(_n, P, U, complex_too=_n == "numpy.power")
for _n in ("numpy.remainder", "numpy.mod", "numpy.fmod"):
    binary(_n, lambda *s: U(*s, lo=0.1, hi=0.9) + 2.0, lambda *s: U(*s, lo=1.1, hi=1.3))
binary("numpy.copysign", S, S)
binary("special.beta", P, P)
binary("special.betaln", P, P)
binary("special.rel_entr", P, P)
binary("special.kl_div", P, P)
_mask = np.array([[True, False, True], [False, True, True]])
add("numpy.where", (lambda x, y: fnp.where(_mask, x, y), (U(2, 3), U(3))),
    (lambda x: fnp.where(_mask[0], x, 0.0), (U(3),)))
add("numpy.clip", (lambda x: fnp.clip(x, -0.5, 0.5), (U(2, 3),)),
    (lambda x, lo: fnp.clip(x, lo, 2.0), (U(2, 3), U(3) - 2)))
add("numpy.select", (lambda x, y: fnp.select([_mask, ~_mask], [x, y]), (U(2, 3), U(3))))

# --- reductions ----------------------------------------------------------------------------
def reduction(name, draw=U, **extra):
    add(name, (call(name, **extra), (draw(3),)), (call(name, axis=0, **extra), (draw(2, 3),)),
        (call(name, axis=(0, 2), keepdims=True, **extra), (draw(2, 3, 2),)),
        (call(name, axis=-1, **extra), (draw(2, 3),)))


for _n in ("numpy.sum", "numpy.mean", "numpy.max", "numpy.min", "numpy.amax", "numpy.amin",
           "numpy.var", "numpy.std", "numpy.ptp", "numpy.median", "special.logsumexp"):
    reduction(_n)
reduction("numpy.prod", S)
for _n in ("numpy.nansum", "numpy.nanmean", "numpy.nanmax", "numpy.nanmin", "numpy.nanvar",
           "numpy.nanstd", "numpy.nanmedian"):
    reduction(_n, lambda *s: with_nan(U(*s) if len(s) != 2 else U(3, *s[1:])))
reduction("numpy.nanprod", lambda *s: with_nan(S(*s)))
add("numpy.quantile", (call("numpy.quantile", 0.3), (U(5),)),
    (call("numpy.quantile", [0.1, 0.8], axis=1, keepdims=True), (U(2, 5),)))
add("numpy.percentile", (call("numpy.percentile", 40), (U(5),)),
    (call("numpy.percentile", [25, 75], axis=0), (U(5, 2),)))
add("numpy.nanquantile", (call("numpy.nanquantile", 0.3), (with_nan(U(5)),)),
    (call("numpy.nanquantile", [0.1, 0.8], axis=1), (with_nan(U(2, 5)),)))
add("numpy.nanpercentile", (call("numpy.nanpercentile", [30, 90], axis=0), (with_nan(U(5, 2)),)))
add("numpy.average", (call("numpy.average"), (U(3),)),
    (lambda x, w: fnp.average(x, axis=1, weights=w), (U(2, 3), P(3))),
    (lambda x, w: fnp.average(x, axis=0, weights=w, returned=True), (U(2, 3), P(2, 3))))
add("special.softmax", (call("special.softmax"), (U(3),)), (call("special.softmax", axis=1), (U(2, 3),)))
add("special.log_softmax", (call("special.log_softmax"), (U(3),)),
    (call("special.log_softmax", axis=0), (U(2, 3),)))

# --- cumulative, differences, integrals -------------------------------------------------------
for _n in ("numpy.cumsum", "numpy.cumprod"):
    add(_n, (call(_n), (S(4),)), (call(_n, axis=1), (S(2, 3),)), (call(_n), (S(2, 3),)))
add("numpy.nancumsum", (call("numpy.nancumsum", axis=0), (with_nan(U(3, 2)),)))
add("numpy.nancumprod", (call("numpy.nancumprod"), (with_nan(S(4)),)))
add("numpy.diff", (call("numpy.diff"), (U(4),)), (call("numpy.diff", n=2, axis=0), (U(4, 2),)),
    (lambda x, p: fnp.diff(x, prepend=p), (U(3), U(1))))
add("numpy.ediff1d", (lambda x, b: fnp.ediff1d(x, to_begin=b), (U(2, 2), U(1))))
add("numpy.gradient", (call("numpy.gradient"), (U(4),)), (call("numpy.gradient", 0.5, edge_order=2), (U(3, 4),)))
add("numpy.trapezoid", (call("numpy.trapezoid"), (U(4),)),
    (lambda y, x: fnp.trapezoid(y, x), (U(2, 4), np.array([0.0, 0.4, 1.1, 1.5]) + U(4) * 0.1)))
add("numpy.polyval", (call("numpy.polyval"), (U(3), U(4))))
add("numpy.interp", (lambda x, fp: fnp.interp(x, np.array([-1.0, 0.0, 0.5, 1.0]), fp),
                     (U(3, lo=-0.9, hi=0.9), U(4))))

# --- shape, indexing, rearranging --------------------------------------------------------------
add("numpy.reshape", (call("numpy.reshape", (3, 2)), (U(2, 3),)), (call("numpy.reshape", -1), (U(2, 3),)))
add("numpy.transpose", (call("numpy.transpose"), (U(2, 3),)), (call("numpy.transpose", (2, 0, 1)), (U(2, 3, 2),)))
add("numpy.permute_dims", (call("numpy.permute_dims", (1, 0)), (U(2, 3),)))
add("numpy.matrix_transpose", (call("numpy.matrix_transpose"), (U(2, 2, 3),)))
add("numpy.swapaxes", (call("numpy.swapaxes", 0, 2), (U(2, 3, 2),)))
add("numpy.moveaxis", (call("numpy.moveaxis", 0, -1), (U(2, 3, 2),)))
add("numpy.rollaxis", (call("numpy.rollaxis", 2), (U(2, 3, 2),)))
add("numpy.expand_dims", (call("numpy.expand_dims", 1), (U(2, 3),)))
add("numpy.squeeze", (call("numpy.squeeze"), (U(1, 3),)), (call("numpy.squeeze", axis=0), (U(1, 3, 1),)))
add("numpy.broadcast_to", (call("numpy.broadcast_to", (2, 3)), (U(3),)))
add("numpy.broadcast_arrays", (lambda x, y: fnp.broadcast_arrays(x, y), (U(2, 1), U(3))))
add("numpy.meshgrid", (lambda x, y: fnp.meshgrid(x, y), (U(2), U(3))),
    (lambda x, y: fnp.meshgrid(x, y, indexing="ij", sparse=True), (U(2), U(3))))
for _n in ("numpy.concatenate", "numpy.concat"):
    add(_n, (lambda x, y, _n=_n: function(_n)([x, y], axis=1), (U(2, 3), U(2, 1))))
add("numpy.stack", (lambda x, y: fnp.stack([x, y], axis=1), (U(2, 3), U(2, 3))))
add("numpy.hstack", (lambda x, y: fnp.hstack([x, y]), (U(3), U(2))))
add("numpy.vstack", (lambda x, y: fnp.vstack([x, y]), (U(3), U(2, 3))))
add("numpy.row_stack", (lambda x, y: fnp.row_stack([x, y]), (U(3), U(2, 3))))
add("numpy.linspace", (lambda a, b: fnp.linspace(a, b, 5), (U(), U())),
    (lambda a, b: fnp.linspace(a, b, 4, endpoint=False, axis=-1), (U(3), U(2, 3))))
add("numpy.geomspace", (call("numpy.geomspace", 5), (P(), P())),
    (call("numpy.geomspace", 4, endpoint=False, axis=-1), (-P(3), -P(2, 3))))
add("numpy.dstack", (lambda x, y: fnp.dstack([x, y]), (U(2, 3), U(2, 3))))
add("numpy.column_stack", (lambda x, y: fnp.column_stack([x, y]), (U(3), U(3, 2))))
add("numpy.append", (call("numpy.append"), (U(2, 2), U(3))), (lambda x, y: fnp.append(x, y, axis=0), (U(2, 3), U(1, 3))))
for _n in ("numpy.split", "numpy.array_split", "numpy.hsplit"):
    add(_n, (call(_n, 2 if _n != "numpy.array_split" else 3), (U(2, 4),)))
add("numpy.vsplit", (call("numpy.vsplit", [1]), (U(3, 2),)))
add("numpy.dsplit", (call("numpy.dsplit", 2), (U(2, 1, 4),)))
add("numpy.unstack", (call("numpy.unstack", axis=1), (U(2, 3),)))
add("numpy.flip", (call("numpy.flip"), (U(2, 3),)), (call("numpy.flip", axis=1), (U(2, 3),)))
add("numpy.fliplr", (call("numpy.fliplr"), (U(2, 3),)))
add("numpy.flipud", (call("numpy.flipud"), (U(2, 3),)))
add("numpy.rot90", (call("numpy.rot90"), (U(2, 3),)), (call("numpy.rot90", 3, axes=(1, 2)), (U(2, 3, 2),)))
add("numpy.roll", (call("numpy.roll", 1), (U(2, 3),)), (call("numpy.roll", (1, -1), axis=(0, 1)), (U(2, 3),)))
add("numpy.tile", (call("numpy.tile", (2, 1, 2)), (U(2, 3),)), (call("numpy.tile", 2), (U(3),)))
add("numpy.repeat", (call("numpy.repeat", 2), (U(2, 3),)), (call("numpy.repeat", [1, 0, 2], axis=1), (U(2, 3),)))
add("numpy.pad", (call("numpy.pad", ((1, 0), (2, 1))), (U(2, 3),)),
    (call("numpy.pad", 1, mode="reflect"), (U(2, 3),)), (call("numpy.pad", 2, mode="edge"), (U(3),)),
    (call("numpy.pad", (1, 2), mode="wrap"), (U(3),)), (call("numpy.pad", 1, mode="symmetric"), (U(2, 2),)))
add("numpy.take", (call("numpy.take", [2, 0, 2]), (U(2, 3),)), (call("numpy.take", [1, 0], axis=1), (U(2, 3),)))
add("numpy.take_along_axis", (call("numpy.take_along_axis", np.array([[2, 0], [1, 1]]), 1), (U(2, 3),)))
add("numpy.compress", (lambda x: fnp.compress([True, False, True], x, axis=1), (U(2, 3),)))
add("numpy.extract", (lambda x: fnp.extract(_mask, x), (U(2, 3),)))
add("numpy.delete", (call("numpy.delete", 1, axis=1), (U(2, 3),)))
add("numpy.diag", (call("numpy.diag"), (U(3),)), (call("numpy.diag", 1), (U(3, 3),)), (call("numpy.diag", -1), (U(2),)))
add("numpy.diagflat", (call("numpy.diagflat"), (U(2, 2),)))
add("numpy.diagonal", (call("numpy.diagonal"), (U(3, 3),)), (call("numpy.diagonal", 1, 1, 2), (U(2, 3, 4),)))
add("numpy.trace", (call("numpy.trace"), (U(3, 3),)), (call("numpy.trace", -1), (U(3, 2),)))
add("numpy.tril", (call("numpy.tril"), (U(3, 3),)), (call("numpy.tril", 1), (U(2, 3, 4),)))
add("numpy.triu", (call("numpy.triu"), (U(3, 3),)), (call("numpy.triu", -1), (U(3, 2),)))
add("numpy.sort", (call("numpy.sort"), (U(4),)), (call("numpy.sort", axis=0), (U(3, 2),)),
    (call("numpy.sort", axis=None), (U(2, 3),)))
add("numpy.partition", (call("numpy.partition", 1), (U(4),)), (call("numpy.partition", 2, axis=0), (U(4, 2),)))

# --- products ---------------------------------------------------------------------------------
add("numpy.matmul", (call("numpy.matmul"), (U(2, 3), U(3, 2))), (call("numpy.matmul"), (U(3), U(2, 3, 2))),
    (call("numpy.matmul"), (C(2, 2), C(2))))
add("numpy.dot", (call("numpy.dot"), (U(3), U(3))), (call("numpy.dot"), (U(2, 3), U(3))), (call("numpy.dot"), (U(), U(2))),
    (call("numpy.dot"), (U(2, 3), U(2, 3, 2))))
add("numpy.full", (lambda v: fnp.full((2, 3), v), (U(),)), (lambda v: fnp.full((2, 3), v), (U(3),)))
add("numpy.full_like", (lambda v: fnp.full_like(fnp.zeros((2, 2), dtype=v.dtype), v), (U(),)))
add("numpy.inner", (call("numpy.inner"), (U(3), U(3))), (call("numpy.inner"), (U(2, 3), U(4, 3))))
add("numpy.outer", (call("numpy.outer"), (U(3), U(2))))
add("numpy.vdot", (call("numpy.vdot"), (U(2, 2), U(4))), (call("numpy.vdot"), (C(3), C(3))))
add("numpy.vecdot", (call("numpy.vecdot"), (U(2, 3), U(3))), (call("numpy.vecdot"), (C(3), C(3))))
add("numpy.einsum", (lambda a, b: fnp.einsum("ij,jk->ik", a, b), (U(2, 3), U(3, 2))),
    (lambda a: fnp.einsum("ii", a), (U(3, 3),)), (lambda a: fnp.einsum("ii->i", a), (U(3, 3),)),
    (lambda a, b: fnp.einsum("...j,j", a, b), (U(2, 2, 3), U(3))),
    (lambda a, b, c: fnp.einsum("ij,jk,kl->il", a, b, c), (U(2, 3), U(3, 2), U(2, 2))),
    (lambda a, b: fnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), (U(2, 3), U(3, 2))),
    (lambda a, b: fnp.einsum("iij,j->ij", a, b), (U(2, 2, 3), U(3))),
    (lambda a: fnp.einsum("ij->", a), (U(2, 3),)))
add("numpy.tensordot", (call("numpy.tensordot"), (U(2, 3, 2), U(3, 2, 2))),
    (lambda a, b: fnp.tensordot(a, b, axes=([0], [1])), (U(2, 3), U(3, 2))))
add("numpy.kron", (call("numpy.kron"), (U(2, 2), U(2, 3))), (call("numpy.kron"), (U(2), U(3))))
add("numpy.cross", (call("numpy.cross"), (U(3), U(3))), (call("numpy.cross"), (U(2, 3), U(3))))
add("numpy.convolve", (call("numpy.convolve"), (U(4), U(2))), (call("numpy.convolve", mode="same"), (U(3), U(4))))
add("numpy.correlate", (call("numpy.correlate"), (U(4), U(2))), (call("numpy.correlate", mode="full"), (U(3), U(2))))
add("numpy.cov", (call("numpy.cov"), (U(2, 4),)), (lambda x, y: fnp.cov(x, y), (U(4), U(4))))
add("numpy.corrcoef", (call("numpy.corrcoef"), (U(3, 4),)))


# --- linalg ------------------------------------------------------------------------------------
def spd(a):
    """A symmetric positive definite matrix from any square `a`."""
    return a @ fnp.swapaxes(a, -1, -2) + 2.0 * fnp.eye(a.shape[-1], dtype=a.dtype)


def sign_fixed(v, like=None):
    """Eigen/singular vectors with their arbitrary signs fixed by the first row."""
    s = fnp.sign((v if like is None else like)[..., :1, :])
    return v * s


def _svd_fixed(a, **kw):
    u, s, vh = fnp.linalg.svd(a, **kw)
    flip = fnp.sign(u[..., :1, :])
    return u * flip, s, vh * fnp.swapaxes(flip, -1, -2)


WELL = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.2], [-0.3, 0.4, 1.8]])
add("linalg.inv", (call("linalg.inv"), (WELL,)), (call("linalg.inv"), (WELL + U(2, 3, 3) * 0.1,)))
add("linalg.det", (call("linalg.det"), (U(3, 3),)), (call("linalg.det"), (U(2, 2, 2),)))
add("linalg.slogdet", (lambda a: fnp.linalg.slogdet(a)[1], (U(3, 3),)))
add("linalg.solve", (call("linalg.solve"), (WELL, U(3, 2))), (call("linalg.solve"), (WELL, U(3))),
    (call("linalg.solve"), (WELL + U(2, 3, 3) * 0.1, U(2, 3, 1))))
add("linalg.cholesky", (lambda a: fnp.linalg.cholesky(spd(a)), (U(3, 3),)))
add("linalg.eigh", (lambda a: (lambda w, v: (w, sign_fixed(v)))(*fnp.linalg.eigh(spd(a))), (U(3, 3),)))
add("linalg.eigvalsh", (lambda a: fnp.linalg.eigvalsh(spd(a)), (U(2, 3, 3),)))
_REAL_SPECTRUM = np.triu(np.ones((3, 3))) + np.diag([0.0, 1.0, 2.5])
add("linalg.eig", (lambda a: (lambda w, v: (w, sign_fixed(v)))(*fnp.linalg.eig(_REAL_SPECTRUM.astype(a.dtype) + 0.1 * a)), (U(3, 3),)))
add("linalg.eigvals", (call("linalg.eigvals"), (U(3, 3),)),
    (lambda a: fnp.linalg.eigvals(_REAL_SPECTRUM.astype(a.dtype) + 0.1 * a), (U(3, 3),)))
add("linalg.svd", (_svd_fixed, (U(3, 3),)), (lambda a: _svd_fixed(a, full_matrices=False), (U(4, 2),)),
    (lambda a: _svd_fixed(a, full_matrices=False), (U(2, 4),)), (lambda a: fnp.linalg.svd(a, compute_uv=False), (U(3, 2),)))
add("linalg.svdvals", (call("linalg.svdvals"), (U(2, 3),)))
add("linalg.qr", (call("linalg.qr"), (U(4, 3),)), (call("linalg.qr"), (WELL,)), (call("linalg.qr", mode="r"), (U(3, 2),)))
add("linalg.pinv", (call("linalg.pinv"), (U(4, 3),)), (call("linalg.pinv"), (U(2, 3),)))
add("linalg.lstsq", (lambda a, b: fnp.linalg.lstsq(a, b)[:2], (U(4, 2), U(4))),
    (lambda a, b: fnp.linalg.lstsq(a, b)[0], (U(2, 3), U(2, 2))))
add("linalg.norm", (call("linalg.norm"), (U(3),)), (call("linalg.norm"), (U(2, 3),)),
    *[(call("linalg.norm", o), (U(3, 3),)) for o in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)],
    *[(call("linalg.norm", o, axis=1), (U(2, 3),)) for o in (1, 3, 0.5, np.inf, -np.inf)],
    (call("linalg.norm", axis=(0, 2), keepdims=True), (U(2, 3, 2),)))
add("linalg.vector_norm", (call("linalg.vector_norm"), (U(2, 3),)),
    (call("linalg.vector_norm", axis=(0, 1), ord=np.inf), (U(2, 3),)))
add("linalg.matrix_norm", (call("linalg.matrix_norm"), (U(2, 3, 3),)), (call("linalg.matrix_norm", ord="nuc"), (U(3, 2),)))
add("linalg.cond", (call("linalg.cond"), (WELL,)), (call("linalg.cond", "fro"), (WELL,)))
add("linalg.matrix_power", (call("linalg.matrix_power", 3), (U(3, 3),)), (call("linalg.matrix_power", -2), (WELL,)),
    (call("linalg.matrix_power", 0), (U(2, 2),)))
add("linalg.multi_dot", (lambda a, b, c: fnp.linalg.multi_dot([a, b, c]), (U(3), U(3, 2), U(2, 2))))
add("linalg.tensorsolve", (lambda a, b: fnp.linalg.tensorsolve(a, b), (WELL.reshape(3, 3, 1) + 0.0 * U(3, 3, 1), U(3))))
add("linalg.tensorinv", (call("linalg.tensorinv", ind=1), (WELL,)))
add("linalg.matrix_transpose", (call("linalg.matrix_transpose"), (U(2, 3),)))
add("linalg.trace", (call("linalg.trace"), (U(2, 3, 3),)))
add("linalg.diagonal", (call("linalg.diagonal", offset=1), (U(2, 3, 3),)))
add("linalg.outer", (call("linalg.outer"), (U(3), U(2))))
add("linalg.cross", (call("linalg.cross"), (U(2, 3), U(2, 3))))
add("linalg.matmul", (call("linalg.matmul"), (U(2, 3), U(3))))
add("linalg.vecdot", (call("linalg.vecdot"), (U(2, 3), U(2, 3))))
add("linalg.tensordot", (call("linalg.tensordot", axes=1), (U(2, 3), U(3, 2))))

# --- fft ---------------------------------------------------------------------------------------
for _n in ("fft.fft", "fft.ifft"):
    add(_n, (call(_n), (U(5),)), (call(_n, n=7, norm="ortho"), (C(2, 5),)), (call(_n, n=3, axis=0, norm="forward"), (U(4, 2),)))
for _n in ("fft.fft2", "fft.ifft2", "fft.fftn", "fft.ifftn"):
    add(_n, (call(_n), (U(3, 4),)), (call(_n, s=(2, 5), axes=(0, 1), norm="ortho"), (C(3, 4),)))
add("fft.rfft", (call("fft.rfft"), (U(5),)), (call("fft.rfft", n=6, norm="forward"), (U(2, 5),)),
    (call("fft.rfft", axis=0, norm="ortho"), (U(4, 2),)))
add("fft.irfft", (call("fft.irfft"), (C(4),)), (call("fft.irfft", n=7), (C(2, 4),)),
    (call("fft.irfft", n=4, norm="ortho"), (U(5),)))
for _n in ("fft.rfft2", "fft.rfftn"):
    add(_n, (call(_n), (U(3, 4),)), (call(_n, s=(2, 6), axes=(0, 1), norm="forward"), (U(3, 4),)))
for _n in ("fft.irfft2", "fft.irfftn"):
    add(_n, (call(_n), (C(3, 3),)), (call(_n, s=(4, 5), axes=(0, 1), norm="ortho"), (C(3, 3),)))
add("fft.hfft", (call("fft.hfft"), (C(4),)), (call("fft.hfft", n=5), (U(3),)))
add("fft.ihfft", (call("fft.ihfft"), (U(5),)))
add("fft.fftshift", (call("fft.fftshift"), (U(2, 5),)), (call("fft.fftshift", axes=1), (U(2, 4),)))
add("fft.ifftshift", (call("fft.ifftshift"), (U(5),)))

# --- names jax.numpy has beyond the ones above ---------------------------------------------
for _alias, _of, _draw in (("numpy.asin", "arcsin", lambda *s: U(*s, lo=-0.8, hi=0.8)),
                           ("numpy.acos", "arccos", lambda *s: U(*s, lo=-0.8, hi=0.8)),
                           ("numpy.atan", "arctan", U), ("numpy.asinh", "arcsinh", U),
                           ("numpy.acosh", "arccosh", lambda *s: U(*s, lo=1.2, hi=2.0)),
                           ("numpy.atanh", "arctanh", lambda *s: U(*s, lo=-0.8, hi=0.8))):
    unary(_alias, _draw)
binary("numpy.atan2", U, U)
unary("numpy.i0", U)
for _n in ("numpy.asanyarray", "numpy.ascontiguousarray", "numpy.asfortranarray",
           "numpy.asarray_chkfinite"):
    unary(_n, U)
add("numpy.ldexp", (lambda x: fnp.ldexp(x, np.array([1, -2, 3])), (U(2, 3),)),
    (lambda x: fnp.ldexp(x, 2), (U(3),)))
add("numpy.frexp", (lambda x: fnp.frexp(x)[0], (S(2, 3) * 5,)))
add("numpy.modf", (lambda x: fnp.modf(x)[0], (S(2, 3) * 3,)))
add("numpy.divmod", (lambda x, y: fnp.divmod(x, y)[1], (U(2, 3) + 2.0, U(3, lo=1.1, hi=1.3))))
add("numpy.unwrap", (call("numpy.unwrap"), (np.array([0.0, 3.0, 6.5, -1.0, 4.0]) + U(5) * 0.1,)),
    (call("numpy.unwrap", axis=0), (U(4, 2) * 6,)))
add("numpy.make_diagonal", (call("numpy.make_diagonal"), (U(3),)), (call("numpy.make_diagonal"), (U(2, 3),)))
add("numpy.put", (lambda a, v: fnp.put(a, [0, 4, 0], v, inplace=False), (U(2, 3), U(3))),
    (lambda a, v: fnp.put(a, [1, 2, 3], v, mode="wrap", inplace=False), (U(3), U(2))))
add("numpy.put_along_axis", (lambda a, v: fnp.put_along_axis(a, np.array([[2], [0]]), v, 1, inplace=False),
                             (U(2, 3), U(2, 1))))
add("numpy.place", (lambda a, v: fnp.place(a, _mask, v, inplace=False), (U(2, 3), U(2))))
add("numpy.fill_diagonal", (lambda a, v: fnp.fill_diagonal(a, v, inplace=False), (U(3, 3), U(3))),
    (lambda a, v: fnp.fill_diagonal(a, v, wrap=True, inplace=False), (U(5, 2), U())))
add("numpy.insert", (lambda a, v: fnp.insert(a, 1, v), (U(4), U())),
    (lambda a, v: fnp.insert(a, [0, 2], v, axis=1), (U(2, 3), U(2, 2))))
add("numpy.choose", (lambda x, y: fnp.choose(np.array([[0, 1, 1], [1, 0, 0]]), [x, y]), (U(2, 3), U(3))))
add("numpy.block", (lambda a, b, c: fnp.block([[a, b], [c]]), (U(2, 2), U(2, 1), U(1, 3))),
    (lambda a, b: fnp.block([a, b]), (U(2), U(3))))
add("numpy.resize", (call("numpy.resize", (2, 4)), (U(3),)), (call("numpy.resize", 3), (U(2, 3),)))
add("numpy.cumulative_sum", (call("numpy.cumulative_sum"), (U(4),)),
    (call("numpy.cumulative_sum", axis=1, include_initial=True), (U(2, 3),)))
add("numpy.cumulative_prod", (call("numpy.cumulative_prod"), (S(4),)),
    (call("numpy.cumulative_prod", axis=0, include_initial=True), (S(2, 3),)))
add("numpy.sort_complex", (call("numpy.sort_complex"), (C(4),)), (call("numpy.sort_complex"), (U(2, 3),)))
add("numpy.matvec", (call("numpy.matvec"), (U(2, 3), U(3))), (call("numpy.matvec"), (C(2, 2, 3), C(3))))
add("numpy.vecmat", (call("numpy.vecmat"), (U(3), U(3, 2))), (call("numpy.vecmat"), (C(2, 3), C(3, 2))))
add("numpy.polyadd", (call("numpy.polyadd"), (U(2), U(4))))
add("numpy.polysub", (call("numpy.polysub"), (U(3), U(2))))
add("numpy.polymul", (call("numpy.polymul"), (U(3), U(2))))
add("numpy.polyder", (call("numpy.polyder"), (U(4),)), (call("numpy.polyder", 2), (U(4),)))
add("numpy.polyint", (call("numpy.polyint"), (U(3),)), (lambda p, k: fnp.polyint(p, 2, k), (U(3), U(2))))
add("numpy.polydiv", (call("numpy.polydiv"), (U(4), P(2))), (call("numpy.polydiv"), (U(5), P(3))))
add("numpy.vander", (call("numpy.vander"), (U(3),)), (call("numpy.vander", 4, increasing=True), (U(2),)))
add("numpy.polyfit", (call("numpy.polyfit", deg=2), (np.linspace(0, 1, 6) + U(6) * 0.05, U(6))),
    (lambda x, y, w: fnp.polyfit(x, y, 1, w=w), (np.linspace(0, 1, 5), U(5), P(5))))
add("numpy.roots", (call("numpy.roots"), (np.array([1.0, -6.0, 11.0, -6.0]) + U(4) * 0.1,)),
    (call("numpy.roots"), (np.array([1.0, 0.5, 2.0]) + U(3) * 0.1,)))
add("numpy.poly", (call("numpy.poly"), (U(3),)), (call("numpy.poly"), (C(2),)),
    (call("numpy.poly"), (_REAL_SPECTRUM + 0.1 * U(3, 3),)))
add("numpy.apply_along_axis", (lambda x: fnp.apply_along_axis(lambda r: r * r[0], 1, x), (U(2, 3),)),
    (lambda x: fnp.apply_along_axis(fnp.sum, 0, x), (U(2, 3),)))
add("numpy.apply_over_axes", (lambda x: fnp.apply_over_axes(fnp.sum, x, [0, 2]), (U(2, 3, 2),)))
add("numpy.piecewise", (lambda x: fnp.piecewise(x, [x < 0, x >= 0], [lambda v: v * v, fnp.sin]), (S(2, 3),)),
    (lambda x: fnp.piecewise(x, [x < -0.5], [lambda v: v * 3, 1.0]), (U(4),)))
add("numpy.fromfunction", (lambda s: fnp.fromfunction(lambda i, j: s * i + j * j, (2, 3)), (U(),)))
add("numpy.vectorize", (lambda x, y: fnp.vectorize(lambda a, b: fnp.sin(a) * b)(x, y), (U(2, 3), U(3))),
    (lambda x, y: fnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(x, y), (U(2, 3), U(3))))
add("numpy.frompyfunc", (lambda x: fnp.frompyfunc(lambda a: a * fnp.exp(a), nin=1, nout=1)(x), (U(2, 3),)))

for _n in ("norm.logpdf", "norm.pdf", "norm.cdf", "norm.logcdf", "norm.sf", "norm.logsf"):
    add(_n, (call(_n), (U(3),)), (call(_n), (U(2, 3), U(3), P(3))), (call(_n, 0.5, 2.0), (U(),)))

NOT_SWEPT: dict[str, str] = {
    **{f"numpy.{n}": "reads a file or buffer: tests/numpy/test_more_names.py round-trips it"
       for n in ("load", "frombuffer", "fromfile", "fromiter", "fromstring", "from_dlpack")},
}
NOT_SWEPT["numpy.trim_zeros"] = ("which zeros go is read off the values, so finite differences "
                                 "move the cut: tests/numpy/test_more_names.py checks it")
# Functions that read their input's values to decide their result's form (polynomial degree,
# roots stripped, a finiteness check) or whose rule does (cumprod's exact zeros): jit refuses
# them with its clear error (tests/numpy/test_more_names.py). CASES, which other sweeps (jit,
# memory) read, leaves them out; every test here runs ALL_CASES.
READS_VALUES = {
    "numpy.asarray_chkfinite": "refuses NaN and infinity, read off the values",
    "numpy.cumulative_prod": "cumprod's rule chooses its formula by the values (exact at 0)",
    "numpy.poly": "real coefficients when the roots pair up as conjugates, read off the values",
    "numpy.polydiv": "drops vanishing leading remainder coefficients, read off the values",
    "numpy.polyfit": "lstsq's rank is read off the values",
    "numpy.roots": "strips zero coefficients, read off the values",
}
CASES = {name: cases for name, cases in ALL_CASES.items() if name not in READS_VALUES}
# Cases the vmap sweep leaves out, with the reason.
NOT_VMAPPED: dict[str, str] = {}
# Computed by SciPy (an optional extra): their cases skip, saying so, where it is missing.
NEEDS_SCIPY = {"special.erfinv", "special.erfcinv", "special.i0", "special.i1", "special.i0e",
               "special.i1e"}


def _need(name):
    if name in NEEDS_SCIPY:
        pytest.importorskip("scipy.special", reason=f"{name} needs the optional SciPy extra")

# Values and gradients in float32: how far from the float64 ones they may be, relative to
# the largest magnitude (ill-conditioned functions get more room).
F32_RTOL = 2e-3
F32_RTOL_BY_NAME = {"linalg.cond": 2e-2, "linalg.pinv": 1e-2, "linalg.lstsq": 1e-2,
                    "linalg.eig": 1e-2, "linalg.eigvals": 1e-2, "linalg.svd": 1e-2,
                    "special.gamma": 5e-3, "numpy.cumprod": 5e-3}
# Names whose float32 results are float64 by definition.
F64_BY_DEFINITION = {"numpy.float_power": "computes in float64 (as NumPy's float_power)",
                     "numpy.astype": "its first case casts to float64 on purpose",
                     "numpy.interp": "NumPy's interp returns float64 for any input",
                     "numpy.fromfunction": "its index arrays are float64 (dtype=float)"}


# --- the sweep --------------------------------------------------------------------------------
def _ids(cases):
    return [f"{name}[{i}]" for name, cs in cases for i in range(len(cs))]


SWEPT = [(name, i) for name in sorted(ALL_CASES) for i in range(len(ALL_CASES[name]))]


@pytest.mark.parametrize("name,i", SWEPT, ids=[f"{n}[{i}]" for n, i in SWEPT])
def test_rules_match_finite_differences_to_second_order(name, i):
    _need(name)
    f, args = ALL_CASES[name][i]
    check_grads(f, args, order=2, modes=("rev", "fwd"), rtol=2e-5, atol=2e-6)


# Names whose values legitimately differ from NumPy's for the same call.
VALUES_DIFFER = {
    "numpy.partition": "only the kth elements are fixed; the rest follow argpartition's order",
    "linalg.svd": "singular vectors are unique only up to sign",
    "linalg.qr": "LAPACK and NumPy agree, but signs of Q's columns are a convention",
    "linalg.eig": "funcgrad's eig is always complex (as JAX's)",
    "linalg.lstsq": "rank and singular values are compared separately; x and residuals match",
}
REFERENCED = [(n, i) for n, i in SWEPT if hasattr(ALL_CASES[n][i][0], "reference") and n not in VALUES_DIFFER]


@pytest.mark.parametrize("name,i", REFERENCED, ids=[f"{n}[{i}]" for n, i in REFERENCED])
def test_values_match_numpy(name, i):
    f, args = ALL_CASES[name][i]
    if _reference(name) is None:
        pytest.skip(f"{name} has no NumPy/SciPy counterpart to compare with")
    got = tree_flatten(f(*[Array(a) for a in args]))[0]
    expected = tree_flatten(f.reference(*args))[0]
    assert len(got) == len(expected), name
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-12, err_msg=name)


def _leaves(out):
    return [np.asarray(leaf) for leaf in tree_flatten(out)[0]]


def _cotangents(out, seed=1):
    r = np.random.default_rng(seed)
    leaves, treedef = tree_flatten(out)
    return tree_unflatten(treedef, [Array(r.standard_normal(np.shape(o)).astype(np.asarray(o).dtype))
                                    for o in leaves])


def _close(a, b, rtol):
    scale = max(1.0, float(np.max(np.abs(b))) if np.size(b) else 1.0)
    return np.allclose(a.astype(b.dtype), b, rtol=rtol, atol=rtol * scale, equal_nan=True)


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_float32_stays_float32_forward_and_backward(name):
    _need(name)
    f, args = ALL_CASES[name][0]
    args32 = [np.asarray(a).astype(np.complex64 if np.iscomplexobj(a) else np.float32) for a in args]
    args64 = [np.asarray(a).astype(np.complex128 if np.iscomplexobj(a) else np.float64) for a in args]
    out64, vjp64 = fg.vjp(f, *[Array(a) for a in args64])
    out32, vjp32 = fg.vjp(f, *[Array(a) for a in args32])
    rtol = F32_RTOL_BY_NAME.get(name, F32_RTOL)
    for o32, o64 in zip(_leaves(out32), _leaves(out64)):
        if o64.dtype.kind in "fc" and name not in F64_BY_DEFINITION:
            expected = np.float32 if o64.dtype.kind == "f" else np.complex64
            assert o32.dtype == expected, f"{name}: float32 input gave a {o32.dtype} output"
        assert _close(o32, o64, rtol), f"{name}: float32 output too far from float64"
    ct64 = _cotangents(out64)
    ct32 = tree_unflatten(tree_flatten(out32)[1], [Array(np.asarray(c).astype(np.asarray(o).dtype))
                                                     for c, o in zip(tree_flatten(ct64)[0], tree_flatten(out32)[0])])
    for g32, g64, a32 in zip(_leaves(vjp32(ct32)), _leaves(vjp64(ct64)), args32):
        assert g32.dtype == a32.dtype, f"{name}: gradient of a {a32.dtype} input is {g32.dtype}"
        assert _close(g32, g64, rtol), f"{name}: float32 gradient too far from float64"


# --- non-differentiable names: pass through, carry no derivative ----------------------------
def _sorted3():
    return np.array([-0.5, 0.1, 0.7])


NONDIFF_ARGS = {  # builds the arguments from a float array x of shape (2, 3)
    "numpy.searchsorted": lambda x: (_sorted3(), x), "numpy.digitize": lambda x: (x, _sorted3()),
    "numpy.bincount": lambda x: (np.array([0, 2, 2, 1]),), "numpy.histogram": lambda x: (x,),
    "numpy.isclose": lambda x: (x, x * 1.0), "numpy.allclose": lambda x: (x, x),
    "numpy.array_equal": lambda x: (x, x), "numpy.argpartition": lambda x: (x, 1),
    "numpy.round": lambda x: (x * 10, 1), "numpy.around": lambda x: (x * 10,),
    "numpy.floor_divide": lambda x: (x, 0.3), "numpy.heaviside": lambda x: (x, 0.5),
    "numpy.nextafter": lambda x: (x, 1.0), "numpy.result_type": lambda x: (x, 1.0),
    "numpy.unique": lambda x: (np.round(x * 2),), "linalg.matrix_rank": lambda x: (x,),
    "numpy.array_equiv": lambda x: (x, x[0]), "numpy.isin": lambda x: (x, x[0]),
    **{f"numpy.{n}": lambda x: (x, x[0]) for n in ("intersect1d", "setdiff1d", "setxor1d", "union1d")},
    "numpy.array_repr": lambda x: (np.arange(3.0),), "numpy.array_str": lambda x: (np.arange(3.0),),
    **{f"numpy.{n}": lambda x: ((x * 10).astype(np.int64), (x * 7).astype(np.int64))
       for n in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm")},
    **{f"numpy.{n}": lambda x: ((x * 10).astype(np.int64),)
       for n in ("bitwise_not", "invert", "bitwise_invert", "bitwise_count")},
    **{f"numpy.{n}": lambda x: ((x * 10).astype(np.int64), (abs(x) * 3).astype(np.int64))
       for n in ("left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift")},
    "numpy.broadcast_shapes": lambda x: (x.shape, (3,)),
    "numpy.can_cast": lambda x: (x.dtype, np.float32), "numpy.promote_types": lambda x: (x.dtype, np.float32),
    "numpy.isdtype": lambda x: (x.dtype, "real floating"), "numpy.issubdtype": lambda x: (x.dtype, np.floating),
    "numpy.einsum_path": lambda x: ("ij,kj", x, x), "numpy.histogram2d": lambda x: (x[0], x[1]),
    "numpy.packbits": lambda x: (x > 0,), "numpy.unpackbits": lambda x: ((abs(x) * 100).astype(np.uint8),),
    "numpy.ravel_multi_index": lambda x: ((np.array([1, 0]), np.array([2, 1])), (2, 3)),
    "numpy.unravel_index": lambda x: (np.array([4, 1]), (2, 3)),
    "numpy.save": lambda x: (io.BytesIO(), np.arange(3.0)), "numpy.savez": lambda x: (io.BytesIO(), np.arange(3.0)),
}


def _default_args(name):
    np_fn = getattr(NUMPY_MODULES[name.split(".")[0]], name.split(".", 1)[1])
    if isinstance(np_fn, np.ufunc) and np_fn.nin == 2:
        return lambda x: (x, x[::-1])
    return lambda x: (x,)


@pytest.mark.parametrize("name", declared("non-differentiable"))
def test_non_differentiable_names_pass_through_with_numpys_values(name):
    label, short = name.split(".", 1)
    np_fn = getattr(NUMPY_MODULES[label], short)
    make = NONDIFF_ARGS.get(name, _default_args(name))
    x = U(2, 3)
    expected = np_fn(*make(x))
    seen = []

    def f(x):
        seen.append(function(name)(*make(x)))
        return fnp.sum(x * x)

    g = fg.grad(f)(x)  # a traced input goes through without error ...
    np.testing.assert_allclose(np.asarray(g), 2 * x)  # ... and the rest still differentiates
    got_leaves = tree_flatten(seen[0])[0]
    assert not any(isinstance(leaf, Tracer) for leaf in got_leaves), f"{name} returned a tracer"
    exp_leaves = tree_flatten(expected)[0] if isinstance(expected, (tuple, list)) else [expected]
    for got, exp in zip(got_leaves, exp_leaves):
        got = got if not isinstance(got, Array) else np.asarray(got)
        if isinstance(exp, np.dtype):
            assert got == exp
        else:
            np.testing.assert_array_equal(np.asarray(got), np.asarray(exp), err_msg=name)


CONSTANT_ARGS = {
    "numpy.zeros": ((2, 3),), "numpy.ones": ((2,),), "numpy.empty": ((0,),),
    "numpy.arange": (1, 7, 2),
    "numpy.logspace": (0, 2, 3), "numpy.eye": (3, 4, 1), "numpy.identity": (3,),
    "numpy.tri": (3, 3, -1), "numpy.indices": ((2, 3),), "numpy.zeros_like": (np.ones((2, 3)),),
    "numpy.ones_like": (np.ones(3),),
    "numpy.empty_like": (np.ones((0, 2)),), "numpy.tril_indices": (3,), "numpy.triu_indices": (3, 1),
    "numpy.diag_indices": (3,), "fft.fftfreq": (6, 0.5), "fft.rfftfreq": (7,),
    "numpy.bartlett": (5,), "numpy.blackman": (4,), "numpy.hamming": (3,), "numpy.hanning": (6,),
    "numpy.kaiser": (5, 2.5), "numpy.tril_indices_from": (np.ones((3, 4)), 1),
    "numpy.triu_indices_from": (np.ones((3, 3)),), "numpy.diag_indices_from": (np.ones((2, 2)),),
    "numpy.mask_indices": (3, np.triu), "numpy.ix_": ([0, 1], [2, 0]),
}


@pytest.mark.parametrize("name", [n for n in declared("constant") if n not in NOT_SWEPT])
def test_constructors_return_numpys_values(name):
    label, short = name.split(".", 1)
    args = CONSTANT_ARGS[name]
    expected = getattr(NUMPY_MODULES[label], short)(*args)
    got = function(name)(*args)
    for g, e in zip(tree_flatten(got)[0] if isinstance(got, tuple) else [got],
                    expected if isinstance(expected, tuple) else [expected]):
        np.testing.assert_array_equal(np.asarray(g), e)


def test_every_declared_name_has_an_entry():
    kinds = {"differentiable": ALL_CASES, "non-differentiable": None, "constant": CONSTANT_ARGS}
    missing = []
    for label, ns in NAMESPACES.items():
        assert set(ns.kinds) >= set(ns.exports), f"{label}: exports without a kind"
        for short in ns.exports:
            name = f"{label}.{short}"
            kind = ns.kinds[short]
            assert kind in kinds, f"{name}: unknown kind {kind!r}"
            if name in NOT_SWEPT:
                assert NOT_SWEPT[name].strip(), f"{name}: an opt-out needs its reason"
                continue
            if kind == "differentiable" and name not in ALL_CASES:
                missing.append(name)
            if kind == "constant" and name not in CONSTANT_ARGS:
                missing.append(name)
    assert not missing, (f"declared without a sweep entry (add cases in tests/numpy/test_sweep.py, "
                         f"or an opt-out with its reason in NOT_SWEPT): {missing}")
    stale = {n for n in ALL_CASES if n.split(".")[0] in NAMESPACES} - set(declared("differentiable"))
    stale |= {n for n in ALL_CASES if n.split(".")[0] in SCIPY_MODULES
              and not hasattr(SCIPY_MODULES[n.split(".")[0]], n.split(".", 1)[1])}
    assert not stale, f"sweep entries for names that are not declared differentiable: {stale}"


def test_coverage_is_at_least_200_differentiable_names():
    numeric = [n for n in declared("differentiable") if n.split(".")[0] in ("numpy", "linalg", "fft")]
    assert len(numeric) >= 200, len(numeric)
