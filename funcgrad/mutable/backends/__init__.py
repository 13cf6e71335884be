"""``torch.backends``: the accelerators a CPU-only build reports (none), and cudnn's flags
(accepted, without effect here)."""
from __future__ import annotations

import types

__all__ = ["mps", "cudnn", "cuda"]


def _unavailable() -> bool:
    return False


mps = types.SimpleNamespace(is_available=_unavailable, is_built=_unavailable)
cudnn = types.SimpleNamespace(is_available=_unavailable, enabled=True, deterministic=False,
                              benchmark=False)
cuda = types.SimpleNamespace(is_built=_unavailable)
