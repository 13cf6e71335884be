"""The transform docs run: every example in docs/what_grad_does.md and docs/transforms.md
is executed and its printed output compared."""
from __future__ import annotations

import doctest
import pathlib

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("page", ["what_grad_does.md", "transforms.md", "concepts.md"])
def test_doc_examples_run(page):
    result = doctest.testfile(str(DOCS / page), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} example(s) in docs/{page} fail; run it with doctest"
