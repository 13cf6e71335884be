"""The package's top level: a bare ``import funcgrad`` reaches every public submodule and name."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp


def test_every_name_in_all_is_there():
    missing = [name for name in funcgrad.__all__ if not hasattr(funcgrad, name)]
    assert missing == []


def test_submodules_reachable_from_a_bare_import():
    # a fresh interpreter, so no earlier `import funcgrad.nn` elsewhere in the suite helps
    code = ("import funcgrad as fg\n"
            "print(fg.nn.relu(fg.numpy.array([-1.0, 2.0])).tolist(), fg.lax.__name__, "
            "fg.tree.__name__, fg.flatten_util.__name__, fg.random.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(Path(funcgrad.__file__).parents[1]))
    assert out.stdout.split() == ["[0.0,", "2.0]", "funcgrad.lax", "funcgrad.tree",
                                  "funcgrad.flatten_util", "funcgrad.random"]


def test_jit_errors_are_exported_and_catchable_as_in_jax():
    # JAX: jax.errors.NonConcreteBooleanIndexError is an IndexError; TracerBoolConversionError
    # a ConcretizationTypeError (itself a TypeError)
    with pytest.raises(IndexError) as info:
        funcgrad.jit(lambda x: x[~fnp.isnan(x)])(np.ones(5))
    assert type(info.value) is funcgrad.NonConcreteBooleanIndexError
    assert isinstance(info.value, funcgrad.FuncgradError)
    with pytest.raises(funcgrad.ConcretizationTypeError) as info:
        funcgrad.jit(lambda x: x if x > 0 else -x)(1.0)
    assert type(info.value) is funcgrad.TracerBoolConversionError
    assert isinstance(info.value, TypeError)
