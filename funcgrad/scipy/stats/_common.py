"""What the distributions of funcgrad.scipy.stats share: location-scale standardizing, the
log of a scale, and values restricted to a support without NaN slopes from outside it."""
from __future__ import annotations

import math

import numpy as np

from ... import numpy as fnp
from ..._src.core import Array, wrap
from .._util import require_scipy


def standardize(x, loc, scale):
    """(x - loc) / scale, as SciPy's location-scale families define their variable."""
    return (fnp.asarray(x) - loc) / scale


def log_scale(scale):
    """log(scale); a Python number stays a Python number, so float32 inputs stay float32."""
    return math.log(scale) if isinstance(scale, (int, float)) else fnp.log(scale)


def where(condition, x, y) -> Array:
    return wrap(fnp.where(condition, x, y))


def inside(condition, z, safe: float = 0.5):
    """`z` where `condition` holds, else the harmless `safe`: a formula evaluated on the
    result has finite slopes everywhere, so `where` selecting it passes no NaN back."""
    return where(condition, z, safe)


def scipy_stats(name: str):
    """``scipy.stats.<name>`` for what funcgrad does not compute itself (sampling)."""
    return getattr(require_scipy("stats", f"funcgrad.scipy.stats.{name}.rvs"), name)


def constant(x) -> np.ndarray:
    """A concrete value as a NumPy array (for drawing samples, which carry no derivative)."""
    return np.asarray(x)
