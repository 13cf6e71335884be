"""The package declares the Python versions CI tests (3.11), and nothing older: the engine and
the mutable layer use 3.11 features such as ``BaseException.add_note``."""
from __future__ import annotations

import pathlib
import sys
import tomllib

PYPROJECT = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_requires_python_is_what_ci_runs():
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    versions = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"]
                if c.startswith("Programming Language :: Python :: 3.")]
    assert versions == ["3.11"]
    assert sys.version_info >= (3, 11)
    assert hasattr(BaseException, "add_note")
