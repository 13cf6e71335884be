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
