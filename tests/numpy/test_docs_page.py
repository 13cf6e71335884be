"""docs/numpy_functions.md is generated from the declarations and must be current."""
from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_committed_function_list_equals_the_generated_one():
    spec = importlib.util.spec_from_file_location("gen_function_list", ROOT / "docs" / "gen_function_list.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = (ROOT / "docs" / "numpy_functions.md").read_text()
    assert committed == gen.render(), (
        "docs/numpy_functions.md is out of date: run python docs/gen_function_list.py")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_function_list", ROOT / "docs" / "gen_function_list.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def test_names_listed_as_not_covered_are_indeed_absent():
    import funcgrad.numpy as fnp
    listed = [n for names in _generator().NOT_COVERED.values() for n in names]
    assert len(listed) == len(set(listed)), "a name is listed under two reasons"
    present = [n for n in listed if hasattr(fnp, n) or hasattr(fnp.linalg, n) or hasattr(fnp.fft, n)]
    assert not present, f"listed as not covered but funcgrad.numpy has them: {present}"


def test_every_name_of_numpy_is_covered_or_listed_with_a_reason():
    import numpy as np

    import funcgrad.numpy as fnp
    listed = {n for names in _generator().NOT_COVERED.values() for n in names} | {"test"}
    unexplained = []
    for mod, ours in ((np, fnp), (np.linalg, fnp.linalg), (np.fft, fnp.fft)):
        for name in dir(mod):
            if not name.startswith("_") and not hasattr(ours, name) and name not in listed:
                unexplained.append(f"{mod.__name__}.{name}")
    # a NumPy newer than the one the list was written against may add names: they must be
    # covered or listed (with a reason) in docs/gen_function_list.py's NOT_COVERED
    assert not unexplained, f"neither covered nor listed as not covered: {unexplained}"
