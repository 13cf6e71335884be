"""funcgrad.numpy against JAX, case by case over the declaration sweep (test_sweep.py):
values, VJPs with random cotangents (complex where the output is complex), JVPs with random
tangents, and vmap over a batch of two, all in float64.

Every recorded case is compared with JAX's answers in ``jax_recorded.pkl.gz`` (JAX 0.10.2,
x64) on the recorded inputs, so CI, which has no JAX, checks them; re-record with
``python tests/numpy/test_jax_differential.py`` (needs JAX) after changing a case. Where
JAX is installed, a sample (every 3rd complex case, every 50th other) also runs live.
A sweep case runs under JAX by re-binding the names its code reads (``fnp``, ``fsp``,
``function``...) to JAX's; lists of numbers, which funcgrad takes as NumPy and autograd do
and JAX refuses, become arrays on JAX's side. Where funcgrad differs from JAX on purpose,
CONVENTIONS says why.
"""
from __future__ import annotations

import gzip
import pathlib
import pickle
import sys
import types
import zlib

import numpy as np
import pytest

import funcgrad as fg
from funcgrad._src.core import Array
from funcgrad.tree_util import tree_flatten, tree_unflatten

try:
    from . import test_sweep as sweep  # the cases live there
except ImportError:  # run as a script, to record
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    import test_sweep as sweep

try:
    import jax
    import jax.numpy as jnp
    import jax.scipy.special as jsp_special
    import jax.scipy.stats.norm as jsp_norm
    jax.config.update("jax_enable_x64", True)
except ImportError:  # CI: the recorded answers stand in
    jax = None

RECORDED = pathlib.Path(__file__).with_name("jax_recorded.pkl.gz")
KINDS = ("value", "vjp", "jvp", "vmap")
RTOL = 1e-7

# Where funcgrad differs from JAX on purpose: (case, kind) -> why. A kind of "*" is every kind.
CONVENTIONS = {
    ("numpy.partition[0]", "*"): "only the kth element is fixed; the others follow NumPy's "
                                 "argpartition order, not JAX's",
    ("numpy.polydiv[0]", "*"): "the remainder is NumPy's, with its vanishing leading "
                               "coefficients stripped; JAX keeps them",
    ("numpy.polydiv[1]", "*"): "as polydiv[0]",
    ("numpy.poly[2]", "*"): "the coefficients of a matrix's characteristic polynomial are real "
                            "when its eigenvalues pair up, as NumPy's; JAX's are complex",
    ("numpy.polyfit[1]", "vjp"): "JAX's gradient in x is NaN at x = 0 (its Vandermonde "
                                 "matrix differentiates x**0 as 0 * x**-1); funcgrad's is the "
                                 "derivative, checked by finite differences in test_sweep",
    ("numpy.polyfit[1]", "jvp"): "as its VJP: JAX's tangent is NaN",
    ("linalg.eig[0]", "vjp"): "JAX refuses eigenvector derivatives of a non-symmetric matrix; "
                              "funcgrad gives them (finite differences in test_sweep)",
    ("linalg.eig[0]", "jvp"): "as the VJP",
    ("numpy.roots[0]", "vmap"): "JAX cannot batch roots (it strips zeros by value); funcgrad "
                                "loops over the batch",
    ("numpy.roots[1]", "vmap"): "as roots[0]",
    ("numpy.fill_diagonal[1]", "*"): "JAX has no wrap=True",
    ("numpy.gradient[1]", "*"): "JAX has no edge_order",
}


def _jax_modules():
    return {"numpy": jnp, "linalg": jnp.linalg, "fft": jnp.fft, "special": jsp_special,
            "norm": jsp_norm}


def _numbers(x):
    return isinstance(x, list) and x and all(isinstance(v, (bool, int, float)) for v in x)


def _lists_as_arrays(fn):
    def call(*args, **kwargs):
        return fn(*[jnp.asarray(a) if _numbers(a) else a for a in args], **kwargs)
    return call


class _ListTaking:
    """A JAX module whose functions take lists of numbers, as funcgrad's and NumPy's do."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if callable(attr) and not isinstance(attr, type) and name != "einsum":  # its sublists
            return _lists_as_arrays(attr)
        return attr


def _jax_globals():
    modules = _jax_modules()
    names = dict(vars(sweep))
    names.update(fnp=_ListTaking(jnp), fsp=jsp_special, fnorm=jsp_norm,
                 function=lambda q: _lists_as_arrays(getattr(modules[q.split(".")[0]], q.split(".", 1)[1])))
    for key, value in vars(sweep).items():  # the sweep's helpers (spd, sign_fixed...) too
        if isinstance(value, types.FunctionType) and value.__globals__ is vars(sweep) \
                and key not in ("function",):
            names[key] = types.FunctionType(value.__code__, names, value.__name__,
                                            value.__defaults__, value.__closure__)
    return names


def as_jax(f, names):
    """The sweep case `f` with every name it reads bound to JAX's."""
    return types.FunctionType(f.__code__, names, f.__name__, f.__defaults__, f.__closure__)


def in_jax(name):
    label, short = name.split(".", 1)
    return hasattr(_jax_modules()[label], short)


CASES = [(f"{name}[{i}]", name, i) for name in sorted(sweep.ALL_CASES)
         for i in range(len(sweep.ALL_CASES[name]))]


def draw(args, seed):
    """The recorded inputs of a case: its arguments, a cotangent maker, tangents, a batch."""
    rng = np.random.default_rng(seed)
    args = [np.asarray(a) for a in args]
    tangents = [rng.standard_normal(a.shape) + (1j * rng.standard_normal(a.shape) if a.dtype.kind == "c" else 0)
                for a in args]
    batch = [np.stack([a, a * 0.9 + 0.01]) for a in args]
    return {"args": args, "tangents": tangents, "batch": batch, "seed": seed}


def cotangents_for(leaves, seed):
    rng = np.random.default_rng(seed + 1)
    out = []
    for o in leaves:
        o = np.asarray(o)
        if o.dtype.kind == "c":
            out.append(rng.standard_normal(o.shape) + 1j * rng.standard_normal(o.shape))
        elif o.dtype.kind == "f":
            out.append(rng.standard_normal(o.shape).astype(o.dtype))
        else:
            out.append(np.zeros(o.shape, o.dtype))
    return out


def run_funcgrad(f, inputs, kinds=KINDS):
    args = [Array(a) for a in inputs["args"]]
    answers = {}
    if "value" in kinds:
        answers["value"] = [np.asarray(leaf) for leaf in tree_flatten(f(*args))[0]]
    if "vjp" in kinds:
        out, vjp_fn = fg.vjp(f, *args)
        leaves, treedef = tree_flatten(out)
        cts = cotangents_for(leaves, inputs["seed"])
        answers["vjp"] = [np.asarray(g) for g in tree_flatten(vjp_fn(tree_unflatten(treedef, [Array(c) for c in cts])))[0]]
    if "jvp" in kinds:
        _, t_out = fg.jvp(f, tuple(args), tuple(Array(t) for t in inputs["tangents"]))
        answers["jvp"] = [np.asarray(t) for t in tree_flatten(t_out)[0]]
    if "vmap" in kinds:
        answers["vmap"] = [np.asarray(leaf) for leaf in tree_flatten(fg.vmap(f)(*[Array(b) for b in inputs["batch"]]))[0]]
    return answers


def run_jax(f, inputs, kinds=KINDS):
    args = [jnp.asarray(a) for a in inputs["args"]]
    answers = {}
    if "value" in kinds:
        answers["value"] = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(f(*args))]
    if "vjp" in kinds:
        out, vjp_fn = jax.vjp(f, *args)
        leaves, treedef = jax.tree_util.tree_flatten(out)
        cts = cotangents_for(leaves, inputs["seed"])
        answers["vjp"] = [np.asarray(g) for g in jax.tree_util.tree_leaves(
            vjp_fn(jax.tree_util.tree_unflatten(treedef, [jnp.asarray(c) for c in cts])))]
    if "jvp" in kinds:
        _, t_out = jax.jvp(f, tuple(args), tuple(jnp.asarray(t) for t in inputs["tangents"]))
        answers["jvp"] = [np.asarray(t) for t in jax.tree_util.tree_leaves(t_out)]
    if "vmap" in kinds:
        answers["vmap"] = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(
            jax.vmap(f)(*[jnp.asarray(b) for b in inputs["batch"]]))]
    return answers


def agree(got, want, rtol=RTOL):
    if len(got) != len(want):
        return f"{len(got)} leaves, JAX {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"leaf {k}: shape {g.shape}, JAX {w.shape}"
        scale = max(1.0, float(np.nanmax(np.abs(w)))) if w.size and np.isfinite(w).any() else 1.0
        if not np.allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True):
            return f"leaf {k}:\n  funcgrad {g}\n  JAX      {w}"
    return None


def kinds_checked(key):
    if (key, "*") in CONVENTIONS:
        return ()
    return tuple(k for k in KINDS if (key, k) not in CONVENTIONS)


def _load_recorded():
    if not RECORDED.exists():
        return {"cases": {}, "not_in_jax": []}
    with gzip.open(RECORDED, "rb") as fh:
        return pickle.load(fh)


_recorded = None


def recorded():
    global _recorded
    if _recorded is None:
        _recorded = _load_recorded()
    return _recorded


def _complex_case(args):
    return any(np.iscomplexobj(a) for a in args)


# Live runs through JAX cost seconds a case (it compiles each operation), so the live ones
# are a sample, every 3rd complex case and every 50th other; the recording holds them all.
_COMPLEX = [c for c in CASES if _complex_case(sweep.ALL_CASES[c[1]][c[2]][1])]
LIVE = sorted(set(_COMPLEX[::3]) | set(CASES[::50]))


@pytest.mark.parametrize("key,name,i", CASES, ids=[c[0] for c in CASES])
def test_funcgrad_agrees_with_recorded_jax(key, name, i):
    kinds = kinds_checked(key)
    if not kinds:
        pytest.skip(f"{key}: {[v for (k, _), v in CONVENTIONS.items() if k == key][0]}")
    if name in recorded()["not_in_jax"]:
        pytest.skip(f"{name} is not in JAX 0.10.2")
    sweep._need(name)
    entry = recorded()["cases"].get(key)
    if entry is None:
        pytest.skip(f"no JAX answer recorded for {key}: record with "
                    "python tests/numpy/test_jax_differential.py (needs JAX)")
    f = sweep.ALL_CASES[name][i][0]
    kinds = tuple(k for k in kinds if k in entry["answers"])
    got = run_funcgrad(f, entry["inputs"], kinds)
    for kind in kinds:
        problem = agree(got[kind], entry["answers"][kind])
        assert problem is None, f"{key} ({kind}) disagrees with JAX's recorded answer: {problem}"


@pytest.mark.parametrize("key,name,i", LIVE, ids=[c[0] for c in LIVE])
def test_funcgrad_agrees_with_live_jax(key, name, i):
    if jax is None:
        pytest.skip("JAX is not installed (CI): test_funcgrad_agrees_with_recorded_jax holds its answers")
    kinds = kinds_checked(key)
    if not kinds or not in_jax(name):
        pytest.skip(f"{key}: a documented convention, or not in JAX")
    sweep._need(name)
    f, args = sweep.ALL_CASES[name][i]
    inputs = draw(args, seed=zlib.crc32(key.encode()))
    want = run_jax(as_jax(f, _jax_globals()), inputs, kinds)
    got = run_funcgrad(f, inputs, kinds)
    for kind in kinds:
        problem = agree(got[kind], want[kind])
        assert problem is None, f"{key} ({kind}) disagrees with JAX: {problem}"


# The recording holds every case JAX has, less the conventions: 720 of the sweep's 753.
MIN_RECORDED = 700


def test_the_recording_covers_the_sweep():
    """The recorded answers are there, and say which of the sweep's names JAX lacks."""
    assert RECORDED.exists(), f"{RECORDED.name} is missing"
    entries = recorded()["cases"]
    assert len(entries) >= MIN_RECORDED, len(entries)
    if jax is not None:
        assert sorted(recorded()["not_in_jax"]) == sorted({n for _, n, _ in CASES if not in_jax(n)})


def record():  # pragma: no cover - run by hand where JAX is installed
    names = _jax_globals()
    entries, not_in_jax = {}, sorted({name for _, name, _ in CASES if not in_jax(name)})
    for key, name, i in CASES:
        kinds = kinds_checked(key)
        if not kinds or name in not_in_jax:
            continue
        f, args = sweep.ALL_CASES[name][i]
        inputs = draw(args, seed=zlib.crc32(key.encode()))
        try:
            answers = run_jax(as_jax(f, names), inputs, kinds)
        except Exception as exc:  # noqa: BLE001 - reported, left out
            print(f"{key}: JAX raised {type(exc).__name__}: {exc}"[:200])
            continue
        entries[key] = {"inputs": inputs, "answers": answers}
    with gzip.open(RECORDED, "wb", compresslevel=9) as fh:
        pickle.dump({"cases": entries, "not_in_jax": not_in_jax}, fh, protocol=4)
    print(f"recorded {len(entries)} cases in {RECORDED}")


if __name__ == "__main__":  # pragma: no cover
    if jax is None:
        raise SystemExit("recording needs JAX")
    record()
