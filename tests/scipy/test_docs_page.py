"""docs/scipy.md runs: its examples are executed and their printed output compared."""
from __future__ import annotations

import doctest
import pathlib

import pytest

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "scipy.md"


def test_page_examples_run():
    pytest.importorskip("scipy", reason="the page's examples call SciPy (an optional extra)")
    result = doctest.testfile(str(PAGE), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} example(s) in docs/scipy.md fail; run it with doctest"
