"""Table-driven checks of every primitive in funcgrad.numpy's table, found by walking the
table, so a new declaration is covered without being listed here:

* the JVP and VJP rules agree: ``<v, J u> == <J^T v, u>``, and the JVP matches a central
  difference (a differentiable primitive without a rule fails);
* vmap equals a Python loop over the batch, with every argument batched, with only the
  first batched, and with the batch axis last;
* the vmap rule is vectorised (not the per-element loop), except where the output shape
  depends on the data.

Arguments come from SAMPLES for primitives with parameters or structure; other primitives
get arguments by trying a few standard shapes.
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import funcgrad as fg
from funcgrad._src import batching as B
from funcgrad._src.core import Array, Primitive
from funcgrad.numpy import _helpers as H
from funcgrad.numpy import _primitives as P
from funcgrad.test_util import numerical_jvp


TABLES = ["funcgrad.numpy._primitives", "funcgrad.numpy.linalg", "funcgrad.numpy.fft",
          "funcgrad.scipy.special"]


IMPORT_ERRORS: dict = {}


def _table_primitives() -> dict:
    """Every primitive of the tables, by name (a sub-namespace's under ``module.name``)."""
    found = {}
    for module_name in TABLES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:  # a table that does not exist (yet)
            continue
        except Exception as err:  # reported by test_every_table_imports, not a crash here
            IMPORT_ERRORS[module_name] = err
            continue
        prefix = "" if module is P else module_name.rsplit(".", 1)[1] + "."
        seen = set(found.values())
        candidates = [v for v in vars(module).values() if isinstance(v, Primitive)]
        candidates += [getattr(getattr(module, n), "primitive", None)
                       for n in getattr(module, "__all__", ())]
        for prim in candidates:
            if isinstance(prim, Primitive) and prim not in seen:
                found.setdefault(prefix + prim.name, prim)
                seen.add(prim)
    return dict(sorted(found.items()))


PRIMS = _table_primitives()

# Output shape depends on the values, so no single vectorised call exists: vmap loops.
DATA_DEPENDENT = {"argwhere", "flatnonzero", "unique", "bincount", "union1d", "setdiff1d",
                  "setxor1d", "lexsort", "packbits", "unpackbits", "histogram_bin_edges"}
# Several arrays of data-dependent shapes in a plain tuple: vmap refuses, with a clear error.
NOT_BATCHABLE = {"nonzero", "histogram", "unravel_index", "histogram2d", "histogramdd",
                 "intersect1d", "unique_parts"}
# Functions of dtypes, not arrays: nothing to map over.
NO_ARRAYS = {"can_cast", "promote_types"}

rng = np.random.default_rng(0)


def _u(*shape, lo=0.3, hi=0.9):
    return rng.uniform(lo, hi, shape)


def _index_case(x, index):
    template, arrays = H.split_index(index)
    return (x,) + tuple(arrays), {"template": template}


def _update_case(x, index, update):
    template, arrays = H.split_index(index)
    return (x, update) + tuple(arrays), {"template": template}


def _samples() -> dict:
    x23, x234 = _u(2, 3), _u(2, 3, 4)
    idx = np.array([2, 0, 2])
    s = {
        "sum": [((x23,), {"axis": None, "keepdims": False}), ((x234,), {"axis": 1, "keepdims": True}),
                ((x234,), {"axis": (0, 2), "keepdims": False})],
        "reshape": [((x23,), {"shape": (3, 2)}), ((x234,), {"shape": (6, 4)}), ((x23,), {"shape": (6,)})],
        "transpose": [((x234,), {"axes": (2, 0, 1)}), ((x234,), {"axes": None})],
        "broadcast_to": [((_u(3),), {"shape": (2, 3)}), ((_u(2, 1),), {"shape": (4, 2, 3)})],
        "sum_to_shape": [((x234,), {"shape": (3, 4)}), ((x234,), {"shape": (2, 1, 4)}),
                         ((x23,), {"shape": (1, 3)})],
        "moveaxis": [((x234,), {"source": 0, "destination": 2})],
        "swapaxes": [((x234,), {"axis1": 0, "axis2": 2})],
        "concatenate": [((x23, _u(1, 3)), {"axis": 0}), ((x23, _u(2, 2)), {"axis": -1})],
        "astype": [((x23,), {"dtype": np.dtype(np.float32)}), ((x23,), {"dtype": np.dtype(np.float64)})],
        "matmul": [((_u(3, 4), _u(4, 2)), {}), ((_u(4), _u(4, 2)), {}), ((_u(3, 4), _u(4)), {}),
                   ((_u(2, 3, 4), _u(4)), {}), ((_u(4), _u(2, 4, 3)), {}),
                   ((_u(2, 3, 4), _u(2, 4, 5)), {}), ((_u(4), _u(4)), {}),
                   ((_u(2, 3, 4), _u(4, 5)), {})],
        "getitem": [_index_case(_u(4, 5), (1,)), _index_case(_u(4, 5), (slice(1, 3),)),
                    _index_case(_u(4, 5), (idx,)), _index_case(_u(4, 5), (slice(None), idx)),
                    _index_case(_u(4, 5, 3), (idx, slice(None), np.array([1, 0, 2]))),
                    _index_case(_u(4, 5), (None, Ellipsis, 2)),
                    _index_case(_u(4, 5, 3), (1, slice(None), idx))],
        "index_add": [_update_case(_u(4, 5), (idx,), _u(3, 5)),
                      _update_case(_u(4, 5), (slice(None), idx), _u(4, 3)),
                      _update_case(_u(4, 5), (1,), _u(5))],
        "index_set": [_update_case(_u(4, 5), (np.array([2, 0]),), _u(2, 5)),
                      _update_case(_u(4, 5, 3), (1, slice(None), np.array([0, 2])), _u(2, 5)),
                      _update_case(_u(4, 5), (slice(1, 3),), _u(2, 5))],
        "where": [((rng.random((2, 3)) > 0.5, x23, _u(3)), {})],
        "clip": [((x23, np.full((), 0.45), np.full((), 0.75)), {})],
        "arccosh": [((_u(2, 3, lo=1.2, hi=2.0),), {})],
        "remainder": [((x23, _u(3, lo=1.5, hi=2.0)), {})],
        "power": [((x23, _u(3, lo=1.5, hi=2.5)), {})],
        "round": [((x23 * 10,), {"decimals": 1})],
        "around": [((x23 * 10,), {"decimals": 0})],
        "argsort": [((x23,), {"axis": -1}), ((x234,), {"axis": 0})],
        "argpartition": [((_u(2, 5),), {"kth": 2, "axis": -1})],
        "nan_to_num": [((x23,), {"nan": 0.0, "posinf": None, "neginf": None})],
    }
    for name in ("mean", "prod", "max", "min"):
        s[name] = s["sum"]
    for name in ("argmax", "argmin"):
        s[name] = [((x234,), {"axis": None}), ((x234,), {"axis": 1})]
    for name in ("all", "any", "count_nonzero"):
        s[name] = [((x23 > 0.5,), {"axis": None}), ((x234 > 0.5,), {"axis": 1})]
    for name in ("cumsum", "cumprod"):
        s[name] = [((x234,), {"axis": 1}), ((x23,), {"axis": 0})]
    for name in ("nonzero", "argwhere", "flatnonzero"):
        s[name] = [((x23 > 0.5,), {})]
    s["unique"] = [((np.array([3.0, 1.0, 3.0, 2.0]),), {})]
    s["bincount"] = [((np.array([0, 2, 2, 1]),), {})]
    s["histogram"] = [((x23.ravel(),), {})]
    s["searchsorted"] = [((np.array([0.1, 0.4, 0.8]), np.array([0.5, 0.05])), {})]
    s["digitize"] = [((np.array([0.5, 0.05, 0.9]), np.array([0.1, 0.4, 0.8])), {})]
    s["isin"] = [((np.array([1, 2, 3, 4]), np.array([2, 4])), {})]
    s["lexsort"] = [((np.array([1, 0, 1]), np.array([2, 2, 1])), {"axis": -1})]
    s["einsum"] = [((x23, _u(3, 4)), {"spec": (("ij", "jk"), "ik")}), ((x234,), {"spec": (("ijk",), "ki")})]
    s["unravel_index"] = [((np.array([1, 5]),), {"shape": (2, 3)})]
    s["ravel_multi_index"] = [((np.array([0, 1]), np.array([2, 1])), {"shape": (2, 3)})]
    ints = (np.array([[12, 10, 7], [3, 0, 5]]), np.array([6, 3, 1]))
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
        s[name] = [(ints, {})]
    for name in ("bitwise_not", "bitwise_count"):
        s[name] = [(ints[:1], {})]
    for name in ("union1d", "setdiff1d", "setxor1d", "intersect1d"):
        s[name] = [((np.array([1, 2, 3, 4]), np.array([2, 4, 6])), {})]
    s["unique_parts"] = [((np.array([2, 1, 2]),), {"which": "unique_counts"})]
    s["packbits"] = [((x23 > 0.5,), {"axis": None})]
    s["unpackbits"] = [((np.array([[160, 3]], dtype=np.uint8),), {"axis": None})]
    s["histogram_bin_edges"] = [((x23.ravel(),), {"bins": 4})]
    s["histogram2d"] = [((x23[0], x23[1]), {"bins": 2})]
    s["histogramdd"] = [((x23.T,), {"bins": 2})]
    s["einsum"] += [((_u(2, 3, 4), _u(2, 4, 5)), {"spec": (("bij", "bjk"), "bik")}),
                    ((_u(3), _u(3), _u(3, 3)), {"spec": (("i", "j", "ij"), "")})]
    s["ldexp"] = [((x23, np.array([1, -2, 3])), {})]
    for name in ("gcd", "lcm"):
        s[name] = [((np.array([4, 6, 9]), np.array([6, 4, 3])), {})]
    for name in ("iterable", "isfortran", "min_scalar_type", "result_type"):
        s[name] = [((x23,), {})]
    spd = _u(3, 3) @ _u(3, 3).T + 3 * np.eye(3)
    p = _u(3, 3) + np.eye(3)
    real_spectrum = p @ np.diag([1.0, 2.0, 3.5]) @ np.linalg.inv(p)
    s["linalg.cholesky"] = [((spd,), {})]
    s["linalg.eigh"] = [((spd,), {})]
    s["linalg.eig"] = [((real_spectrum,), {})]
    s["linalg.qr"] = [((_u(4, 3),), {}), ((_u(3, 3),), {})]
    # the primitives take resolved sizes and axes (the public functions resolve them)
    for name in ("fft.fftn", "fft.ifftn", "fft.rfftn"):
        s[name] = [((x23,), {"s": (2, 3), "axes": (0, 1), "norm": None}),
                   ((x234,), {"s": (2, 4), "axes": (0, 2), "norm": "ortho"})]
    s["fft.irfftn"] = [((x23,), {"s": (2, 4), "axes": (0, 1), "norm": None}),
                       ((x234,), {"s": (3, 6), "axes": (1, 2), "norm": "forward"})]
    # linalg's and fft's primitives move into numpy/_primitives.py (issue 9): key them both
    # ways, so the sweep finds them before and after the move
    for key in ("cholesky", "eigh", "eig", "qr", "fftn", "ifftn", "rfftn", "irfftn"):
        s[key] = s[("fft." if "fft" in key else "linalg.") + key]
    return s


SAMPLES = _samples()


def _symmetric(a):
    return (a + a.T) / 2


def _sign_free(outs):
    """Eigenvectors are defined up to sign: compare their squares."""
    return (outs[0], outs[1] * outs[1])


# Some functions are differentiable only on a subset (symmetric matrices) or up to a gauge
# (eigenvector signs): the rule check runs on post(prim(pre(x))), which is well defined.
AROUND = {"linalg.cholesky": (_symmetric, None), "linalg.eigh": (_symmetric, _sign_free),
          "linalg.eig": (None, _sign_free)}
AROUND.update({key.split(".", 1)[1]: value for key, value in list(AROUND.items())})
_TRY_SHAPES = {1: [[(2, 3)], [(3,)], [(3, 3)], [()]],
               2: [[(2, 3), (3,)], [(2, 3), (2, 3)], [(3, 3), (3, 3)], [(3,), (3,)], [(3,), ()]],
               3: [[(2, 3), (3,), (2, 3)], [(3,), (3,), (3,)]],
               -1: [[(2, 3), (2, 3)], [(2, 3)]]}


def cases(name: str) -> list:
    """The sample calls of primitive `name`: listed ones, or the first standard shapes
    that the primitive accepts."""
    if getattr(PRIMS[name].impl, "needs_scipy", False):
        pytest.importorskip("scipy.special", reason=f"{name} needs the optional SciPy extra")
    if name in SAMPLES:
        return SAMPLES[name]
    prim = PRIMS[name]
    for shapes in _TRY_SHAPES.get(prim.nargs, []):
        args = tuple(_u(*s) for s in shapes)
        try:
            out = prim(*args)
        except Exception:
            continue
        try:
            finite = all(np.all(np.isfinite(np.asarray(o, dtype=float))) for o in _leaves(out))
        except (TypeError, ValueError):  # not numbers (a dtype, a tuple of shapes...)
            finite = True
        if finite:
            return [(args, {})]
    return []


def _leaves(out):
    return list(out) if isinstance(out, tuple) else [out]


def _is_float_array(a) -> bool:
    return isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)


def _diff_positions(prim, args):
    rules = prim.vjps
    return [i for i, a in enumerate(args) if _is_float_array(a) and rules is not None
            and rules[i] is not None]


DIFFERENTIABLE = [n for n, p in PRIMS.items() if p.differentiable]


def test_every_table_imports():
    assert not IMPORT_ERRORS, f"tables that fail to import: {IMPORT_ERRORS}"


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_jvp_and_vjp_rules_agree_and_match_finite_differences(name):
    prim = PRIMS[name]
    examples = cases(name)
    assert examples, (f"{name}: no sample arguments; add an entry to SAMPLES in "
                      "tests/transforms/test_table_sweep.py")
    assert prim.vjps is not None, f"{name} is differentiable but declares no VJP rule"
    assert prim.linear or prim.jvps is not None, f"{name} declares no JVP rule and is not linear"
    for args, params in examples:
        positions = _diff_positions(prim, args)
        assert positions, f"{name}: its sample has no differentiable float argument"

        pre, post = AROUND.get(name, (None, None))

        def f(*diff, args=args, params=params, positions=positions, pre=pre, post=post):
            full = list(args)
            for i, d in zip(positions, diff):
                full[i] = d if pre is None else pre(d)
            out = prim(*full, **params)
            return out if post is None else post(out)

        primals = tuple(Array(args[i]) for i in positions)
        tangents = tuple(Array(rng.standard_normal(args[i].shape).astype(args[i].dtype))
                         for i in positions)
        out, t_out = fg.jvp(f, primals, tangents)
        numeric = numerical_jvp(f, primals, tangents)
        for t, n in zip(_leaves(t_out), numeric):
            # a float32 output rounds the difference quotient to about 1e-7 / 1e-6
            tol = 1e-5 if np.asarray(t).dtype != np.float32 else 3e-2
            np.testing.assert_allclose(np.asarray(t), n, rtol=tol, atol=tol,
                                       err_msg=f"{name}: JVP disagrees with finite differences")
        out2, vjp_fn = fg.vjp(f, *primals)
        cotangent = tuple(Array(_random_like(o)) for o in _leaves(out2))
        cts = vjp_fn(cotangent if isinstance(out2, tuple) else cotangent[0])
        # a VJP is the transpose of the JVP under Re sum(a * b), with no conjugation for
        # complex values (docs/complex.md): Re sum(v * J u) == Re sum(J^T v * u)
        lhs = sum(np.sum(np.asarray(v) * np.asarray(t)).real
                  for v, t in zip(cotangent, _leaves(t_out)))
        rhs = sum(np.sum(np.asarray(c) * np.asarray(u)).real for c, u in zip(cts, tangents))
        single = any(np.asarray(t).dtype == np.float32 for t in _leaves(t_out))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-5 if single else 1e-9,
                                   atol=1e-5 if single else 1e-9,
                                   err_msg=f"{name}: <v, J u> != <J^T v, u>")


def _random_like(o):
    o = np.asarray(o)
    value = rng.standard_normal(o.shape)
    if np.iscomplexobj(o):
        value = value + 1j * rng.standard_normal(o.shape)
    return value.astype(o.dtype)


def _variants(a, n):
    """`n` different arguments like `a`, for one batch: float values jittered, integer
    index arrays permuted (so they stay in range), masks redrawn."""
    if not isinstance(a, np.ndarray):
        return None
    if a.dtype == bool:
        return np.stack([rng.random(a.shape) > 0.5 for _ in range(n)])
    if np.issubdtype(a.dtype, np.integer):
        return np.stack([rng.permutation(a.ravel()).reshape(a.shape) for _ in range(n)])
    return np.stack([a * rng.uniform(0.95, 1.05, a.shape) for _ in range(n)])


def _loop(prim, batched, axes, params, n):
    outs = []
    for b in range(n):
        args = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(batched, axes)]
        outs.append(prim(*args, **params))
    return outs


@pytest.mark.parametrize("name", [n for n in PRIMS if n not in NO_ARRAYS])
def test_vmap_matches_a_python_loop(name):
    prim = PRIMS[name]
    examples = cases(name)
    assert examples, (f"{name}: no sample arguments; add an entry to SAMPLES in "
                      "tests/transforms/test_table_sweep.py")
    n = 3
    for args, params in examples:
        batchable = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        if name in DATA_DEPENDENT:  # equal examples, so the per-example shapes agree
            stacked = [np.stack([a] * n) if i in batchable else a for i, a in enumerate(args)]
        else:
            stacked = [_variants(a, n) if i in batchable else a for i, a in enumerate(args)]
        first = batchable[0]
        layouts = [[0 if i in batchable else None for i in range(len(args))],
                   [0 if i == first else None for i in range(len(args))],
                   [-1 if i == first else None for i in range(len(args))]]
        for axes in layouts:
            batched = [np.moveaxis(s, 0, -1) if ax == -1 else (s if ax is not None else a)
                       for s, a, ax in zip(stacked, args, axes)]
            expected = _loop(prim, batched, axes, params, n)
            if name in NOT_BATCHABLE:
                with pytest.raises(ValueError, match="cannot be vmapped"):
                    fg.vmap(lambda *a: prim(*a, **params), in_axes=tuple(axes))(
                        *[Array(b) for b in batched])
                continue
            if prim.batch is B.batch_query:  # the answer is per example, and the same
                seen = []

                def probe(*a):
                    seen.append(prim(*a, **params))
                    return a[first]

                fg.vmap(probe, in_axes=tuple(axes))(*[Array(b) for b in batched])
                assert seen[0] == expected[0], f"{name}: {seen[0]!r} != {expected[0]!r}"
                continue
            got = fg.vmap(lambda *a: prim(*a, **params), in_axes=tuple(axes))(
                *[Array(b) for b in batched])
            for k, (g, e) in enumerate(zip(_leaves(got), zip(*[_leaves(o) for o in expected]))):
                e = np.stack([np.asarray(x) for x in e])
                g = np.asarray(g)
                assert g.shape == e.shape, f"{name} axes={axes}: shape {g.shape} != {e.shape}"
                assert g.dtype == e.dtype or g.dtype.kind == e.dtype.kind, (name, g.dtype, e.dtype)
                np.testing.assert_allclose(g.astype(float) if g.dtype != bool else g,
                                           e.astype(float) if e.dtype != bool else e,
                                           rtol=1e-12, atol=1e-12, equal_nan=True,
                                           err_msg=f"{name} axes={axes}")


@pytest.mark.parametrize("name", list(PRIMS))
def test_vmap_rule_is_vectorised(name):
    prim = PRIMS[name]
    if name in DATA_DEPENDENT:
        assert prim.batch is B.batch_by_loop, f"{name}: expected the loop (data-dependent shape)"
        return
    if name in NOT_BATCHABLE:
        assert prim.batch is B.batch_unsupported, f"{name}: expected a clear vmap error"
        return
    if name in NO_ARRAYS:
        assert prim.batch is B.batch_query, f"{name} takes dtypes: expected batch_query"
        return
    assert prim.batch is not None and prim.batch is not B.batch_by_loop, (
        f"{name} has no vectorised vmap rule: give its declaration a batch= rule "
        "(batch_elementwise, batch_axis_param... in funcgrad/_src/batching.py)")


def _rule_function(name, prim, args, params):
    """The primitive as a function of its differentiable arguments (others held fixed)."""
    positions = _diff_positions(prim, args)
    pre, post = AROUND.get(name, (None, None))

    def f(*diff):
        full = list(args)
        for i, d in zip(positions, diff):
            full[i] = d if pre is None else pre(d)
        out = prim(*full, **params)
        return out if post is None else post(out)

    return f, positions


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_rules_under_vmap_match_a_loop(name):
    """Per-example JVPs and VJPs (batched primals, tangents and cotangents) through vmap
    equal a loop: every rule is itself batchable, which jacfwd, jacrev, hessian and
    per-example gradients rely on."""
    prim = PRIMS[name]
    n = 3
    for args, params in cases(name):
        f, positions = _rule_function(name, prim, args, params)
        primals = [_variants(args[i], n) for i in positions]
        tangents = [_random_like(p) for p in primals]
        push = fg.vmap(lambda *pt: fg.jvp(f, pt[:len(positions)], pt[len(positions):])[1])
        got = _leaves(push(*[Array(a) for a in primals + tangents]))
        for b in range(n):
            _, expected = fg.jvp(f, tuple(Array(p[b]) for p in primals),
                                 tuple(Array(t[b]) for t in tangents))
            for g, e in zip(got, _leaves(expected)):
                np.testing.assert_allclose(np.asarray(g)[b], np.asarray(e), rtol=1e-10,
                                           atol=1e-12, err_msg=f"{name}: vmap of its JVP")
        outs = [_leaves(f(*[Array(p[b]) for p in primals])) for b in range(n)]
        cts = [np.stack([_random_like(o) for _ in range(n)]) for o in outs[0]]
        multiple = isinstance(f(*[Array(p[0]) for p in primals]), tuple)

        def pull(*pc):
            _, vjp_fn = fg.vjp(f, *pc[:len(positions)])
            ct = pc[len(positions):]
            return vjp_fn(tuple(ct) if multiple else ct[0])

        pull_batched = fg.vmap(pull)(*[Array(a) for a in primals + cts])
        for b in range(n):
            _, vjp_fn = fg.vjp(f, *[Array(p[b]) for p in primals])
            ct = tuple(Array(c[b]) for c in cts)
            expected = vjp_fn(ct if multiple else ct[0])
            for g, e in zip(pull_batched, expected):
                np.testing.assert_allclose(np.asarray(g)[b], np.asarray(e), rtol=1e-10,
                                           atol=1e-12, err_msg=f"{name}: vmap of its VJP")
