"""The funcgrad.numpy namespace: the one record of its public names, which the family
modules (`_elementwise`, `_reductions`...) fill as they declare their functions."""
from __future__ import annotations

from .._src.declare import Namespace
from ._examples import EXAMPLES

ns = Namespace("funcgrad.numpy", EXAMPLES.get("funcgrad.numpy"))
